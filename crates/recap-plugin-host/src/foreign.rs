//! The per-call time limit for in-process code that is not a plugin but that recap can no
//! more stop than one (a strategy written in Python, run by crates/recap-py): the same
//! limit, the same [`crate::watchdog`] and the same thread rescue
//! ([`recap_core::rescue`]) as an in-process plugin call, so a run has one time limit.
//!
//! As for a plugin, a call past the limit gives up the thread it runs on (the run hands
//! the session to another worker, which replays it) and disables the strategy: its later
//! calls fail at once, since whatever held the call most likely holds the next one too.

use crate::backend::Hung;
use crate::time_limit::{TimedOut, call_time_limit, limit_for_message};
use crate::watchdog::Watch;
use recap_core::rescue;
use std::sync::Arc;

/// What the calls of one strategy share under the limit: whether one of them overran.
#[derive(Debug, Default, Clone)]
pub struct ForeignLimit {
    hung: Arc<Hung>,
}

impl ForeignLimit {
    /// A new strategy's limit: no call has overran.
    pub fn new() -> Self {
        Self::default()
    }

    /// The watch over one replay's calls, all made on one thread.
    pub fn calls(&self) -> ForeignCalls {
        ForeignCalls {
            hung: Arc::clone(&self.hung),
            watch: None,
            overran: false,
        }
    }

    /// Whether a call of this strategy overran (and the strategy is disabled).
    pub fn overran(&self) -> bool {
        self.hung.is_set()
    }
}

/// One replay's calls under the limit ([`ForeignLimit::calls`]).
pub struct ForeignCalls {
    hung: Arc<Hung>,
    /// The watch of the thread the calls are made on, once one was made there.
    watch: Option<Arc<Watch>>,
    /// A call of this replay overran.
    overran: bool,
}

impl ForeignCalls {
    /// Makes call `k` (`call`) under the limit, on this thread. The limit is enforced
    /// where the thread may be given up (a `recap run` worker); elsewhere the call is
    /// made unwatched. `Err` when the call overran (and returned after all, too late:
    /// its thread was given up meanwhile), or is refused because an earlier one did.
    pub fn call<R>(&mut self, k: usize, call: impl FnOnce() -> R) -> Result<R, TimedOut> {
        let timed_out = |earlier| TimedOut {
            limit: limit_for_message(),
            earlier,
        };
        if call_time_limit().is_none() {
            return Ok(call());
        }
        match rescue::replay_overran_at() {
            // The replay of the session in which call `at` overran on a thread that was
            // given up: that call is the time-out, the later ones are refused, the
            // earlier ones are made again.
            Some(at) if k >= at => return Err(timed_out(k > at)),
            Some(_) => {}
            None if self.overran || self.hung.is_set() => return Err(timed_out(true)),
            None => {}
        }
        if self.watch.is_none() {
            self.watch = rescue::thread_rescue().map(|rescue| {
                let hung = Arc::clone(&self.hung);
                Watch::new(move || {
                    hung.set();
                    rescue();
                })
            });
        }
        let Some(watch) = &self.watch else {
            return Ok(call());
        };
        watch.arm();
        let result = call();
        if watch.disarm() {
            rescue::note_abandoned();
            self.overran = true;
            return Err(timed_out(false));
        }
        Ok(result)
    }
}
