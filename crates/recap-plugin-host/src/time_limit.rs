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
//! Each calling thread keeps one helper thread for all its calls. Renders take
//! microseconds, about as long as waking a sleeping thread, so both sides spin briefly
//! before they sleep: the caller waiting for the result, the helper waiting for the
//! next call. A hand-off then costs two cache-line transfers instead of two wake-ups
//! through the kernel. With no limit set, calls run on the caller's thread.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

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

/// How long a caller waiting for its call's result spins before it sleeps: longer than
/// most renders.
const CALLER_SPIN: Duration = Duration::from_micros(50);
/// How long an idle helper spins for its caller's next call before it sleeps: enough
/// for calls made back to back, short enough not to steal much CPU from a caller that
/// does other work between calls.
const HELPER_SPIN: Duration = Duration::from_micros(20);
/// Spin rounds between two looks at the clock (and yields of the CPU).
const ROUNDS: u32 = 64;

/// Spins until `ready` or `budget` has passed; whether `ready`. Every [`ROUNDS`]
/// rounds it yields the CPU, so that on a busy machine a spinning thread gives way to
/// the thread it waits for, or to any other.
fn spin_until(budget: Duration, ready: impl Fn() -> bool) -> bool {
    static MULTI_CORE: OnceLock<bool> = OnceLock::new();
    if !*MULTI_CORE.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
    {
        // The other side cannot run while this one spins.
        return ready();
    }
    let start = Instant::now();
    let mut round = 0u32;
    loop {
        if ready() {
            return true;
        }
        round += 1;
        if round.is_multiple_of(ROUNDS) {
            if start.elapsed() > budget {
                return false;
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// A helper thread's mailbox: at most one job at a time (its caller waits for each).
struct Mailbox {
    job: Mutex<Option<Job>>,
    /// A job is in `job` (checked without the lock while spinning).
    pending: AtomicBool,
    /// The caller's thread has ended: the helper ends too.
    closed: AtomicBool,
}

/// The caller's handle on its helper; dropping it (when the caller's thread ends)
/// lets the helper end.
struct Helper {
    mailbox: Arc<Mailbox>,
    thread: Thread,
}

impl Helper {
    fn spawn() -> std::io::Result<Self> {
        let mailbox = Arc::new(Mailbox {
            job: Mutex::new(None),
            pending: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        });
        let inbox = Arc::clone(&mailbox);
        let handle = std::thread::Builder::new()
            .name("recap-plugin-call".into())
            .spawn(move || serve(&inbox))?;
        Ok(Self {
            mailbox,
            thread: handle.thread().clone(),
        })
    }

    fn post(&self, job: Job) {
        *lock(&self.mailbox.job) = Some(job);
        self.mailbox.pending.store(true, Ordering::Release);
        // Cheap when the helper is spinning: no system call unless it sleeps.
        self.thread.unpark();
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.mailbox.closed.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The helper thread: runs jobs as they come until its caller is gone.
fn serve(mailbox: &Mailbox) {
    loop {
        let ready =
            || mailbox.pending.load(Ordering::Acquire) || mailbox.closed.load(Ordering::Acquire);
        if !spin_until(HELPER_SPIN, ready) {
            while !ready() {
                // Unparked by `post` or `drop`; spurious wake-ups just loop.
                std::thread::park();
            }
        }
        if mailbox.pending.swap(false, Ordering::AcqRel) {
            let job = lock(&mailbox.job).take();
            if let Some(job) = job {
                // Jobs catch their own panics (see `run`).
                job();
            }
        } else if mailbox.closed.load(Ordering::Acquire) {
            return;
        }
    }
}

/// Where a job leaves its outcome for the waiting caller.
struct Slot<R> {
    done: AtomicBool,
    outcome: Mutex<Option<std::thread::Result<R>>>,
    caller: Thread,
}

thread_local! {
    /// This thread's helper.
    static HELPER: RefCell<Option<Helper>> = const { RefCell::new(None) };
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
    let deadline = Instant::now() + limit;
    let slot = Arc::new(Slot {
        done: AtomicBool::new(false),
        outcome: Mutex::new(None),
        caller: std::thread::current(),
    });
    let theirs = Arc::clone(&slot);
    let job: Job = Box::new(move || {
        let outcome = catch_unwind(AssertUnwindSafe(job));
        *lock(&theirs.outcome) = Some(outcome);
        theirs.done.store(true, Ordering::Release);
        // The caller may be gone (timed out): then nobody wants the outcome.
        theirs.caller.unpark();
    });
    let posted = HELPER.with(|helper| {
        let mut helper = helper.borrow_mut();
        if helper.is_none() {
            *helper = Helper::spawn().ok();
        }
        match helper.as_ref() {
            Some(h) => {
                h.post(job);
                None
            }
            None => Some(job),
        }
    });
    if let Some(job) = posted {
        // No helper thread could be started: call without a limit rather than not at all.
        job();
    }
    let done = || slot.done.load(Ordering::Acquire);
    if !spin_until(CALLER_SPIN, done) {
        while !done() {
            let now = Instant::now();
            if now >= deadline {
                mark_hung(plugin);
                // Abandon the helper stuck in the plugin; the next call gets a fresh one.
                // Dropping it only asks it to end once its job returns, if ever.
                HELPER.with(|helper| helper.borrow_mut().take());
                return Err(TimedOut {
                    limit,
                    earlier: false,
                });
            }
            std::thread::park_timeout(deadline - now);
        }
    }
    match lock(&slot.outcome).take() {
        Some(Ok(result)) => Ok(result),
        Some(Err(panic)) => resume_unwind(panic),
        None => unreachable!("`done` is set only after the outcome is stored"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
