//! Lanes: helper threads that make in-process plugin calls under the time limit.
//!
//! A call that never returns cannot be stopped in-process, so it must not run on a
//! thread the rest of the run depends on: every in-process call (with a limit set)
//! runs on a lane, and the caller waits for its result. The [`crate::watchdog`] holds
//! the deadline of the lane's current call; past it, the lane is abandoned (leaked,
//! still inside the plugin; the process exits without waiting for it), the plugin is
//! marked hung — every later call to it fails at once, since whatever hung it (a loop,
//! a lock) would most likely hang the next call too — and the waiting caller gets a
//! time-out.
//!
//! A lane takes calls in order, and a caller may queue several before it waits: an
//! incremental session queues the calls it will make next
//! ([`crate::strategy`]), so the lane renders them while the caller uses the previous
//! answer, and a thread hand-off (waking a sleeping thread costs more than most
//! renders) happens once per batch instead of twice per call. Each plugin keeps a pool
//! of idle lanes; the sessions a caller thread opens share one, from the first open to
//! the last close ([`Lanes`]).

use crate::watchdog::Watch;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::thread::{Thread, ThreadId};
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// How long a caller waiting for a result spins before it sleeps: longer than most
/// renders.
const CALLER_SPIN: Duration = Duration::from_micros(10);
/// How long an idle lane spins for its next call before it sleeps: enough for calls
/// made back to back.
const LANE_SPIN: Duration = Duration::from_micros(5);
/// Spin rounds between two looks at the clock (and yields of the CPU).
const ROUNDS: u32 = 64;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Spins until `ready` or `budget` has passed; whether `ready`. Every [`ROUNDS`]
/// rounds it yields the CPU, so that on a busy machine a spinning thread gives way to
/// the thread it waits for.
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

/// Whether a plugin had a call that overran: then it is disabled.
#[derive(Debug, Default)]
pub(crate) struct Hung(AtomicBool);

impl Hung {
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Where a call's outcome waits for its caller.
pub(crate) struct Slot<R> {
    /// The lane began the call: when the lane is abandoned, this call is the one that
    /// overran (the lane runs one call at a time), the others were never made.
    started: AtomicBool,
    done: AtomicBool,
    outcome: Mutex<Option<std::thread::Result<R>>>,
}

impl<R> Slot<R> {
    /// A slot that already holds its outcome (a call refused without being made).
    pub(crate) fn ready(value: R) -> Arc<Self> {
        Arc::new(Self {
            started: AtomicBool::new(false),
            done: AtomicBool::new(true),
            outcome: Mutex::new(Some(Ok(value))),
        })
    }

    /// Whether the lane began this call.
    pub(crate) fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }
}

/// The lane a call was queued on was abandoned before the call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Abandoned;

/// One helper thread and its queue of calls.
pub(crate) struct Lane {
    jobs: Mutex<VecDeque<Job>>,
    has_jobs: AtomicBool,
    /// The pool is gone: end once the queue is empty.
    closed: AtomicBool,
    /// A call overran: the lane is stuck in the plugin and takes nothing more.
    abandoned: AtomicBool,
    /// The threads that have waited for this lane's results: its caller, and any
    /// thread a session holding it was moved to.
    waiters: Mutex<Vec<Thread>>,
    watch: Arc<Watch>,
    thread: OnceLock<Thread>,
}

impl Lane {
    fn spawn(hung: &Arc<Hung>) -> std::io::Result<Arc<Self>> {
        let hung = Arc::clone(hung);
        let lane = Arc::new_cyclic(|me: &Weak<Lane>| {
            let me = me.clone();
            Lane {
                jobs: Mutex::new(VecDeque::new()),
                has_jobs: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                abandoned: AtomicBool::new(false),
                waiters: Mutex::new(Vec::new()),
                watch: Watch::new(move || {
                    hung.set();
                    if let Some(lane) = me.upgrade() {
                        lane.abandoned.store(true, Ordering::Release);
                        lane.wake_waiters();
                    }
                }),
                thread: OnceLock::new(),
            }
        });
        let serving = Arc::clone(&lane);
        let handle = std::thread::Builder::new()
            .name("recap-plugin-call".into())
            .spawn(move || serving.serve())?;
        let _ = lane.thread.set(handle.thread().clone());
        Ok(lane)
    }

    pub(crate) fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
    }

    fn wake_waiters(&self) {
        for waiter in lock(&self.waiters).iter() {
            waiter.unpark();
        }
    }

    fn wake_lane(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }

    /// Queues `call` after the lane's other calls; its outcome (or its panic) arrives
    /// in the returned slot.
    pub(crate) fn submit<R: Send + 'static>(
        &self,
        call: impl FnOnce() -> R + Send + 'static,
    ) -> Arc<Slot<R>> {
        let slot = Arc::new(Slot {
            started: AtomicBool::new(false),
            done: AtomicBool::new(false),
            outcome: Mutex::new(None),
        });
        let theirs = Arc::clone(&slot);
        self.post(Box::new(move || {
            theirs.started.store(true, Ordering::Release);
            let outcome = catch_unwind(AssertUnwindSafe(call));
            *lock(&theirs.outcome) = Some(outcome);
            theirs.done.store(true, Ordering::Release);
        }));
        slot
    }

    /// Queues work whose end nobody waits for (closing a session).
    pub(crate) fn post(&self, job: Job) {
        lock(&self.jobs).push_back(job);
        self.has_jobs.store(true, Ordering::Release);
        // Cheap when the lane is spinning or busy: no system call unless it sleeps.
        self.wake_lane();
    }

    /// Waits for a call queued on this lane; a panic inside it is re-raised here.
    pub(crate) fn wait<R>(&self, slot: &Slot<R>) -> Result<R, Abandoned> {
        let done = || slot.done.load(Ordering::Acquire);
        if !spin_until(CALLER_SPIN, done) {
            // Registered before the last look at `abandoned`, so that the monitor,
            // which sets `abandoned` and then wakes the waiter, cannot miss it.
            let me = std::thread::current();
            let mut waiters = lock(&self.waiters);
            if !waiters.iter().any(|w| w.id() == me.id()) {
                waiters.push(me);
            }
            drop(waiters);
            while !done() {
                if self.is_abandoned() {
                    return Err(Abandoned);
                }
                std::thread::park();
            }
        }
        match lock(&slot.outcome).take() {
            Some(Ok(result)) => Ok(result),
            Some(Err(panic)) => resume_unwind(panic),
            // `done` is set only after the outcome is stored, and taken once.
            None => Err(Abandoned),
        }
    }

    fn next_job(&self) -> Option<Job> {
        loop {
            if self.has_jobs.load(Ordering::Acquire) {
                let mut jobs = lock(&self.jobs);
                let job = jobs.pop_front();
                if jobs.is_empty() {
                    self.has_jobs.store(false, Ordering::Release);
                }
                if job.is_some() {
                    return job;
                }
            }
            if self.closed.load(Ordering::Acquire) {
                return None;
            }
            let ready =
                || self.has_jobs.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire);
            if !spin_until(LANE_SPIN, ready) {
                while !ready() {
                    // Woken by `post` and `close`; spurious wake-ups just loop.
                    std::thread::park();
                }
            }
        }
    }

    /// The lane thread: runs calls in order until the pool closes it or a call
    /// overruns.
    fn serve(&self) {
        while let Some(job) = self.next_job() {
            self.watch.arm();
            // Jobs catch their own panics (see `submit`).
            job();
            let overran = self.watch.disarm();
            self.wake_waiters();
            if overran {
                // Given up on by the monitor: its later calls already failed.
                return;
            }
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake_lane();
    }
}

/// A plugin's lanes: the idle ones, and the one each caller thread is using.
///
/// A caller's sessions share its lane. `recap run` renders every call twice, through
/// two sessions (the determinism check), and a lane each made three threads busy on
/// two cores: the caller and both lanes preempted one another at every turn, which
/// cost more CPU than the calls. One lane per caller renders both sessions' queued
/// calls in turn, as fast, with one helper thread per caller.
pub(crate) struct Lanes {
    idle: Mutex<Vec<Arc<Lane>>>,
    /// Lanes in use: the caller thread that checked each out, and how many of its
    /// channels hold it.
    busy: Mutex<Vec<(ThreadId, Arc<Lane>, usize)>>,
    hung: Arc<Hung>,
}

impl Lanes {
    pub(crate) fn new(hung: Arc<Hung>) -> Self {
        Self {
            idle: Mutex::new(Vec::new()),
            busy: Mutex::new(Vec::new()),
            hung,
        }
    }

    /// This thread's lane: the one its other sessions hold, an idle one, or a new one;
    /// `None` when no thread can be started.
    pub(crate) fn checkout(&self) -> Option<Arc<Lane>> {
        let me = std::thread::current().id();
        {
            let mut busy = lock(&self.busy);
            // An abandoned lane's channels do not give it back (its call may still run).
            busy.retain(|(_, lane, _)| !lane.is_abandoned());
            if let Some((_, lane, holders)) = busy.iter_mut().find(|(id, _, _)| *id == me) {
                *holders += 1;
                return Some(Arc::clone(lane));
            }
        }
        // Not under the lock of the lanes in use: starting a thread takes long, and only
        // this thread adds an entry for itself, so none can appear meanwhile.
        let reused = {
            let mut idle = lock(&self.idle);
            idle.retain(|l| !l.is_abandoned());
            idle.pop()
        };
        let lane = reused.or_else(|| Lane::spawn(&self.hung).ok())?;
        lock(&self.busy).push((me, Arc::clone(&lane), 1));
        Some(lane)
    }

    /// Gives a lane back; the last holder returns it to the idle pool (an abandoned one
    /// is dropped).
    pub(crate) fn give_back(&self, lane: Arc<Lane>) {
        let mut busy = lock(&self.busy);
        if let Some(i) = busy.iter().position(|(_, l, _)| Arc::ptr_eq(l, &lane)) {
            busy[i].2 -= 1;
            if busy[i].2 > 0 {
                return;
            }
            busy.swap_remove(i);
        }
        drop(busy);
        // Its next user registers itself when it waits.
        lock(&lane.waiters).clear();
        if !lane.is_abandoned() {
            lock(&self.idle).push(lane);
        }
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        for lane in lock(&self.idle).drain(..) {
            lane.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_limit::set_call_time_limit;

    #[test]
    fn calls_run_in_order_and_a_lane_that_overruns_is_abandoned() {
        set_call_time_limit(Some(Duration::from_millis(300)));
        let hung = Arc::new(Hung::default());
        let lanes = Lanes::new(Arc::clone(&hung));
        let lane = lanes.checkout().expect("a lane");
        let slots: Vec<_> = (0..5).map(|i| lane.submit(move || i * 10)).collect();
        let got: Vec<i32> = slots.iter().map(|s| lane.wait(s).unwrap()).collect();
        assert_eq!(got, [0, 10, 20, 30, 40]);

        let panicked = catch_unwind(AssertUnwindSafe(|| {
            let slot = lane.submit(|| -> u8 { panic!("inside the call") });
            lane.wait(&slot)
        }));
        assert!(panicked.is_err(), "a panic in the call reaches the caller");
        let after = lane.submit(|| 7);
        assert_eq!(
            lane.wait(&after),
            Ok(7),
            "the lane survives a panicking call"
        );
        lanes.give_back(lane);

        let lane = lanes.checkout().expect("the same lane again");
        let start = Instant::now();
        let stuck = lane.submit(|| std::thread::sleep(Duration::from_secs(3600)));
        let queued = lane.submit(|| 1);
        assert_eq!(lane.wait(&stuck), Err(Abandoned));
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(
            lane.wait(&queued),
            Err(Abandoned),
            "calls queued behind it too"
        );
        assert!(hung.is_set(), "the plugin is marked hung");
        lanes.give_back(lane);
        let fresh = lanes.checkout().expect("a new lane");
        assert!(!fresh.is_abandoned());
    }

    #[test]
    fn a_callers_sessions_share_its_lane_and_only_the_call_that_overran_started() {
        set_call_time_limit(Some(Duration::from_millis(300)));
        let lanes = Lanes::new(Arc::new(Hung::default()));
        let first = lanes.checkout().expect("a lane");
        let second = lanes.checkout().expect("the same lane");
        assert!(Arc::ptr_eq(&first, &second), "one lane per caller thread");
        let elsewhere = std::thread::scope(|s| {
            s.spawn(|| {
                let lane = lanes.checkout().expect("a lane");
                let theirs = Arc::clone(&lane);
                lanes.give_back(lane);
                theirs
            })
            .join()
            .expect("the other caller")
        });
        assert!(
            !Arc::ptr_eq(&first, &elsewhere),
            "another caller, another lane"
        );

        // Both sessions' calls run in the order queued, on the one lane.
        let a = first.submit(|| 'a');
        let b = second.submit(|| 'b');
        assert_eq!((second.wait(&b), first.wait(&a)), (Ok('b'), Ok('a')));
        lanes.give_back(second);
        let still = lanes.checkout().expect("still the held lane");
        assert!(
            Arc::ptr_eq(&first, &still),
            "held until its last holder gives it back"
        );
        lanes.give_back(still);
        lanes.give_back(first);
        let idle = lanes.checkout().expect("an idle lane");
        lanes.give_back(idle);

        // One session's call hangs: the other session's queued call was never made.
        let lane = lanes.checkout().expect("a lane");
        let stuck = lane.submit(|| std::thread::sleep(Duration::from_secs(3600)));
        let behind = lane.submit(|| 1);
        assert_eq!(lane.wait(&stuck), Err(Abandoned));
        assert!(stuck.started(), "the call that overran had started");
        assert_eq!(lane.wait(&behind), Err(Abandoned));
        assert!(!behind.started(), "the call behind it never ran");
        let next = lanes.checkout().expect("a lane");
        assert!(
            !Arc::ptr_eq(&lane, &next),
            "an abandoned lane is not shared again"
        );
    }
}
