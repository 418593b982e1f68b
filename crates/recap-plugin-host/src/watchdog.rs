//! The deadline of every plugin call in flight, checked by one monitor thread.
//!
//! Whoever makes a call ([`crate::backend`] in-process, [`crate::isolated`] for a
//! worker process) owns a [`Watch`]: it stores the call's deadline before the call and
//! clears it after — two atomic stores, no system call, no thread hand-off. The monitor
//! wakes a few times per limit (at most every [`MAX_TICK`]), and for a call past its
//! deadline it claims the watch and runs the owner's `on_overrun`: the thread of an
//! in-process call is given up, a worker process is killed. A call is therefore noticed
//! at most one tick after its deadline.

use crate::time_limit::call_time_limit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// No call in flight.
const IDLE: u64 = 0;
/// The monitor claimed the watch: the call overran.
const FIRED: u64 = u64::MAX;

/// The longest the monitor sleeps between two looks.
const MAX_TICK: Duration = Duration::from_millis(100);
/// The shortest: a limit of a few milliseconds is only for tests.
const MIN_TICK: Duration = Duration::from_millis(2);

type OnOverrun = Box<dyn Fn() + Send + Sync>;

/// The deadline of one caller's call in flight.
pub(crate) struct Watch {
    /// Nanoseconds since [`epoch`] + 1, [`IDLE`] or [`FIRED`].
    deadline: AtomicU64,
    on_overrun: OnOverrun,
}

impl Watch {
    /// A watch the monitor checks for as long as it lives.
    pub(crate) fn new(on_overrun: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        let watch = Arc::new(Self {
            deadline: AtomicU64::new(IDLE),
            on_overrun: Box::new(on_overrun),
        });
        register(Arc::downgrade(&watch));
        watch
    }

    /// A call starts now: it must end within the current limit (none: no deadline).
    pub(crate) fn arm(&self) {
        if let Some(limit) = call_time_limit() {
            let limit = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX / 2);
            let deadline = now().saturating_add(limit).min(FIRED - 1);
            self.deadline.store(deadline, Ordering::Release);
        }
    }

    /// The call ended; whether the monitor had already declared it overrun (and ran
    /// `on_overrun`, or is about to).
    pub(crate) fn disarm(&self) -> bool {
        self.deadline.swap(IDLE, Ordering::AcqRel) == FIRED
    }

    /// Claims an overrun call for the monitor; false if it ended in the meantime.
    fn claim(&self, now: u64) -> bool {
        let deadline = self.deadline.load(Ordering::Acquire);
        deadline != IDLE
            && deadline != FIRED
            && now >= deadline
            && self
                .deadline
                .compare_exchange(deadline, FIRED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds since [`epoch`], never [`IDLE`].
fn now() -> u64 {
    u64::try_from(epoch().elapsed().as_nanos())
        .unwrap_or(FIRED - 1)
        .saturating_add(1)
}

static WATCHES: Mutex<Vec<Weak<Watch>>> = Mutex::new(Vec::new());

fn register(watch: Weak<Watch>) {
    epoch();
    WATCHES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(watch);
    static MONITOR: OnceLock<()> = OnceLock::new();
    MONITOR.get_or_init(|| {
        // Without a monitor no deadline is enforced; there is no one to tell, and the
        // calls themselves still work.
        let _ = std::thread::Builder::new()
            .name("recap-plugin-watchdog".into())
            .spawn(monitor);
    });
}

fn tick() -> Duration {
    call_time_limit().map_or(MAX_TICK, |l| (l / 16).clamp(MIN_TICK, MAX_TICK))
}

fn monitor() {
    loop {
        std::thread::park_timeout(tick());
        let live: Vec<Arc<Watch>> = {
            let mut watches = WATCHES
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            watches.retain(|w| w.strong_count() > 0);
            watches.iter().filter_map(Weak::upgrade).collect()
        };
        let now = now();
        for watch in live {
            if watch.claim(now) {
                (watch.on_overrun)();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn an_overrun_fires_once_and_a_call_in_time_never() {
        // The limit is process-wide; the other unit test that sets it uses the same.
        crate::time_limit::set_call_time_limit(Some(Duration::from_millis(300)));
        let fired = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&fired);
        let watch = Watch::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        watch.arm();
        assert!(!watch.disarm(), "a call that ended at once did not overrun");

        watch.arm();
        let start = Instant::now();
        while fired.load(Ordering::SeqCst) == 0 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert!(watch.disarm(), "the owner learns that its call overran");
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(fired.load(Ordering::SeqCst), 1, "fired once");
    }
}
