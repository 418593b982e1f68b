//! A time limit on every call into a plugin.
//!
//! A plugin runs in-process, so a call that never returns cannot be stopped. Instead the
//! call runs on a helper thread while the caller waits at most the limit. On time-out
//! the caller gets [`TimedOut`], the helper thread — still inside the plugin — is
//! abandoned (leaked, never joined; the process exits without waiting for it), and the
//! plugin is marked hung: every later call to it fails at once, because whatever hung
//! it (a loop, a lock) would most likely hang the next call too, and a run of thousands
//! of calls must not wait the limit for each.
//!
//! Each calling thread keeps one helper thread for all its calls, so a call costs two
//! channel hand-offs, not a thread spawn. With no limit set, calls run on the caller's
//! thread as before.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The limit when none is set: long enough for any sane render of any recorded session
/// (renders take micro- to milliseconds), short enough that a hung plugin is noticed.
pub const DEFAULT_CALL_TIME_LIMIT: Duration = Duration::from_secs(30);

/// The environment variable that overrides the default limit (seconds, fractions
/// allowed; `0` or `none` for no limit). Commands with a `--plugin-timeout` flag call
/// [`set_call_time_limit`] instead.
pub const TIME_LIMIT_ENV: &str = "RECAP_PLUGIN_TIMEOUT";

/// Milliseconds; `u64::MAX` = not set yet (use the environment or the default), 0 = no limit.
static LIMIT_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets the per-call limit for every plugin call of this process; `None` disables it.
pub fn set_call_time_limit(limit: Option<Duration>) {
    let ms = limit.map_or(0, |d| {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1).max(1)
    });
    LIMIT_MS.store(ms, Ordering::Relaxed);
}

/// The per-call limit in force: set by [`set_call_time_limit`], else from
/// [`TIME_LIMIT_ENV`], else [`DEFAULT_CALL_TIME_LIMIT`].
pub fn call_time_limit() -> Option<Duration> {
    let mut ms = LIMIT_MS.load(Ordering::Relaxed);
    if ms == u64::MAX {
        ms = std::env::var(TIME_LIMIT_ENV)
            .ok()
            .and_then(|v| parse_limit(&v).ok())
            .map_or(DEFAULT_CALL_TIME_LIMIT.as_millis() as u64, |l| {
                l.map_or(0, |d| (d.as_millis() as u64).max(1))
            });
        LIMIT_MS.store(ms, Ordering::Relaxed);
    }
    (ms != 0).then(|| Duration::from_millis(ms))
}

/// Parses a limit in seconds (`2`, `0.5`); `0` and `none` mean no limit.
pub fn parse_limit(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let secs: f64 = text
        .strip_suffix('s')
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("expected a number of seconds or `none`, got {text:?}"))?;
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!(
            "expected a number of seconds between 0 and 1e9, got {text:?}"
        ));
    }
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

/// A call that did not return within the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut {
    pub limit: Duration,
    /// The call was not made: an earlier call to the same plugin timed out.
    pub earlier: bool,
}

/// Plugins (by the address of their render function) with a call that timed out.
static HUNG: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());
/// Fast path: no plugin has hung yet.
static ANY_HUNG: AtomicBool = AtomicBool::new(false);

fn is_hung(plugin: usize) -> bool {
    ANY_HUNG.load(Ordering::Acquire)
        && HUNG
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&plugin)
}

fn mark_hung(plugin: usize) {
    HUNG.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(plugin);
    ANY_HUNG.store(true, Ordering::Release);
}

type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// This thread's helper: the sending end of its job queue.
    static HELPER: RefCell<Option<mpsc::Sender<Job>>> = const { RefCell::new(None) };
}

fn spawn_helper() -> std::io::Result<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("recap-plugin-call".into())
        .spawn(move || {
            // Ends when the caller's thread ends (or abandons this helper) and the
            // queue is closed.
            for job in rx {
                job();
            }
        })?;
    Ok(tx)
}

/// Runs `job` (one call into `plugin`, identified by any address unique to it) within
/// the time limit. A panic inside `job` is re-raised on the caller's thread.
pub(crate) fn run<R: Send + 'static>(
    plugin: usize,
    job: impl FnOnce() -> R + Send + 'static,
) -> Result<R, TimedOut> {
    let Some(limit) = call_time_limit() else {
        return Ok(job());
    };
    if is_hung(plugin) {
        return Err(TimedOut {
            limit,
            earlier: true,
        });
    }
    let (done_tx, done_rx) = mpsc::sync_channel::<Result<R, Box<dyn Any + Send>>>(1);
    let mut job: Option<Job> = Some(Box::new(move || {
        // The receiver may be gone (timed out): nobody wants the result then.
        let _ = done_tx.send(catch_unwind(AssertUnwindSafe(job)));
    }));
    HELPER.with(|helper| {
        let mut helper = helper.borrow_mut();
        // Two tries: a helper whose thread died is replaced once.
        for _ in 0..2 {
            let tx = match helper.as_ref() {
                Some(tx) => tx,
                None => match spawn_helper() {
                    Ok(tx) => helper.insert(tx),
                    Err(_) => break,
                },
            };
            match tx.send(job.take().expect("the job is sent once")) {
                Ok(()) => return,
                Err(mpsc::SendError(back)) => {
                    job = Some(back);
                    *helper = None;
                }
            }
        }
    });
    if let Some(job) = job {
        // No helper thread could be started: call without a limit rather than not at all.
        job();
    }
    match done_rx.recv_timeout(limit) {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(panic)) => resume_unwind(panic),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            mark_hung(plugin);
            // Abandon the helper stuck in the plugin; the next call gets a fresh one.
            HELPER.with(|helper| helper.borrow_mut().take());
            Err(TimedOut {
                limit,
                earlier: false,
            })
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            unreachable!("the job always sends its result or its panic before the sender drops")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn parses_limits() {
        assert_eq!(parse_limit("2"), Ok(Some(Duration::from_secs(2))));
        assert_eq!(parse_limit("0.5s"), Ok(Some(Duration::from_millis(500))));
        assert_eq!(parse_limit("0"), Ok(None));
        assert_eq!(parse_limit("none"), Ok(None));
        for bad in ["", "-1", "abc", "NaN", "inf"] {
            assert!(parse_limit(bad).is_err(), "{bad:?}");
        }
    }

    // One test touches the process-wide limit, so the cases run in order.
    #[test]
    fn a_call_past_the_limit_times_out_and_its_plugin_stays_failed() {
        // Generous while a panic prints its backtrace, short for the hang.
        set_call_time_limit(Some(Duration::from_secs(20)));
        assert_eq!(run(1, || 7), Ok(7));
        let r = catch_unwind(|| run(1, || -> u8 { panic!("inside the job") }));
        assert!(r.is_err(), "a panic in the job reaches the caller");
        assert_eq!(run(1, || 8), Ok(8), "the helper survives a panicking job");

        set_call_time_limit(Some(Duration::from_millis(200)));

        let start = Instant::now();
        let hung = run(2, || std::thread::sleep(Duration::from_secs(3600)));
        assert_eq!(
            hung,
            Err(TimedOut {
                limit: Duration::from_millis(200),
                earlier: false
            })
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        let start = Instant::now();
        assert_eq!(
            run(2, || ()),
            Err(TimedOut {
                limit: Duration::from_millis(200),
                earlier: true
            }),
            "a hung plugin fails at once afterwards"
        );
        assert!(start.elapsed() < Duration::from_millis(100));
        assert_eq!(run(1, || 9), Ok(9), "other plugins are unaffected");
    }
}
