//! Threads that may be given up while they wait in a call that never returns: recap's
//! one way of keeping a call it cannot stop (into an in-process plugin) from holding
//! a run.
//!
//! Such a call cannot be stopped, only waited for elsewhere: the thread that makes it is
//! the one given up when it overruns. A thread whose work can be taken over — a `recap
//! run` worker, whose session the run hands to a new worker — installs a [`Rescue`] and
//! makes such calls itself, at no cost per call; whoever watches the call (the plugin
//! host's watchdog) invokes the rescue when the call overruns, from the watching thread.
//! Any other caller makes the call on a spare thread ([`on_spare_thread`]) whose rescue
//! tells the caller, which stops waiting.
//!
//! The session handed over is replayed from the start on another thread, with the
//! strategy whose call overran told so ([`with_replay`]): its calls before that one are
//! made again (to a plugin otherwise disabled by the time-out), that call fails as the
//! time-out, and the later ones as after any time-out. So the report reads as if the
//! thread had not been given up.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, mpsc};

/// What a thread asks to be done when it is stuck in a call: hand its work to another.
pub type Rescue = Arc<dyn Fn() + Send + Sync>;

thread_local! {
    static RESCUE: RefCell<Option<Rescue>> = const { RefCell::new(None) };
    static ABANDONED: Cell<bool> = const { Cell::new(false) };
    static REPLAY: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Installs (or, with `None`, removes) this thread's rescue.
pub fn set_thread_rescue(rescue: Option<Rescue>) {
    RESCUE.with(|r| *r.borrow_mut() = rescue);
}

/// This thread's rescue, if it may be given up.
pub fn thread_rescue() -> Option<Rescue> {
    RESCUE.with(|r| r.borrow().clone())
}

/// Called on the stuck thread when its call returns after all, too late: its rescue
/// ran, so its work is being done elsewhere and whatever it computes now is discarded.
pub fn note_abandoned() {
    ABANDONED.with(|a| a.set(true));
}

/// Whether this thread was given up since the last look (and forgets it).
pub fn take_abandoned() -> bool {
    ABANDONED.with(|a| a.replace(false))
}

/// Whether this thread was given up (and has not looked yet): what it does now is
/// discarded, and it must not change what its rescuer reads about the call that overran.
pub fn is_abandoned() -> bool {
    ABANDONED.with(Cell::get)
}

/// While `f` runs on this thread, the strategy being replayed overran at call `call`
/// when it was first rendered ([`replay_overran_at`]).
pub fn with_replay<R>(call: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            REPLAY.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(REPLAY.with(|r| r.replace(Some(call))));
    f()
}

/// In a replay ([`with_replay`]): the call that overran the first time.
pub fn replay_overran_at() -> Option<usize> {
    REPLAY.with(Cell::get)
}

/// The thread running a call for [`on_spare_thread`] was given up before the call
/// returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GivenUp;

/// What a spare thread tells its caller.
enum Spare<R> {
    Done(std::thread::Result<R>),
    GivenUp,
}

/// Runs `call` on a thread that may be given up, and waits for it: on this thread when
/// it may be given up itself (it has a [`Rescue`]), else on a new thread whose rescue
/// ends the wait with [`GivenUp`] (the call, stuck, is left there). A panic in `call`
/// reaches the caller. When no thread can be started, the call runs here, unwatched.
pub fn on_spare_thread<R: Send + 'static>(
    call: impl FnOnce() -> R + Send + 'static,
) -> Result<R, GivenUp> {
    if thread_rescue().is_some() {
        return Ok(call());
    }
    let (tx, rx) = mpsc::channel::<Spare<R>>();
    let given_up = tx.clone();
    // Where the call waits for the thread that runs it; taken back if none starts.
    let slot = Arc::new(std::sync::Mutex::new(Some(call)));
    let theirs = Arc::clone(&slot);
    let take = |slot: &std::sync::Mutex<Option<_>>| {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    let spawned = std::thread::Builder::new()
        .name("recap-spare".into())
        .spawn(move || {
            set_thread_rescue(Some(Arc::new(move || {
                // The caller may have stopped listening (the run is over).
                let _ = given_up.send(Spare::GivenUp);
            })));
            let Some(call) = take(&theirs) else { return };
            let outcome = catch_unwind(AssertUnwindSafe(call));
            if !take_abandoned() {
                let _ = tx.send(Spare::Done(outcome));
            }
        });
    if spawned.is_err() {
        // No thread could be started: the call runs here, unwatched, rather than not at
        // all.
        return take(&slot).map(|call| call()).ok_or(GivenUp);
    }
    match rx.recv() {
        Ok(Spare::Done(Ok(value))) => Ok(value),
        Ok(Spare::Done(Err(panic))) => resume_unwind(panic),
        // Given up, or the thread ended without a word (it cannot: it sends or is given
        // up), which is the same to the caller.
        Ok(Spare::GivenUp) | Err(_) => Err(GivenUp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_rescue_is_per_thread() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        set_thread_rescue(Some(Arc::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
        })));
        let rescue = thread_rescue().expect("installed on this thread");
        assert!(
            std::thread::spawn(|| thread_rescue().is_none())
                .join()
                .expect("thread"),
            "another thread has none"
        );
        rescue();
        assert_eq!(count.load(Ordering::SeqCst), 1);
        set_thread_rescue(None);
        assert!(thread_rescue().is_none());
    }

    #[test]
    fn abandonment_is_read_once() {
        assert!(!take_abandoned());
        note_abandoned();
        assert!(is_abandoned());
        assert!(take_abandoned());
        assert!(!is_abandoned());
        assert!(!take_abandoned());
    }

    #[test]
    fn a_replay_lasts_while_its_closure_runs_even_if_it_panics() {
        assert_eq!(replay_overran_at(), None);
        let inner = with_replay(3, || {
            assert_eq!(replay_overran_at(), Some(3));
            with_replay(1, replay_overran_at)
        });
        assert_eq!(inner, Some(1));
        assert_eq!(replay_overran_at(), None);
        let panicked = std::panic::catch_unwind(|| with_replay(2, || panic!("inside")));
        assert!(panicked.is_err());
        assert_eq!(replay_overran_at(), None, "restored on unwind");
    }

    #[test]
    fn a_call_runs_on_a_spare_thread_unless_this_one_may_be_given_up() {
        let here = std::thread::current().id();
        let there = on_spare_thread(|| std::thread::current().id()).expect("returns");
        assert_ne!(there, here, "no rescue here: a spare thread");
        let panicked = catch_unwind(|| on_spare_thread(|| panic!("inside the call")));
        assert!(panicked.is_err(), "a panic in the call reaches the caller");

        std::thread::spawn(|| {
            set_thread_rescue(Some(Arc::new(|| {})));
            let me = std::thread::current().id();
            assert_eq!(on_spare_thread(move || std::thread::current().id()), Ok(me));
            set_thread_rescue(None);
        })
        .join()
        .expect("test thread");
    }

    #[test]
    fn a_spare_thread_given_up_ends_the_wait_and_its_late_answer_is_dropped() {
        let (release, released) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel::<bool>();
        let outcome = on_spare_thread(move || {
            // What the watchdog does when the call overruns, then the call goes on.
            thread_rescue().expect("a spare thread may be given up")();
            let _ = released.recv();
            note_abandoned();
            let _ = done.send(is_abandoned());
            7
        });
        assert_eq!(outcome, Err(GivenUp));
        release.send(()).expect("the call still waits");
        assert_eq!(finished.recv(), Ok(true), "the call returned, too late");
    }
}
