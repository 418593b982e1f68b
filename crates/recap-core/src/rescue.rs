//! Threads that may be given up while they wait in a call that never returns.
//!
//! A strategy may run code recap does not control (an in-process plugin), and a call
//! into it may never return. Such a call cannot be stopped, only waited for elsewhere:
//! either the call runs on a helper thread that is abandoned when it overruns, or the
//! calling thread itself is the one abandoned. The second costs nothing per call, but
//! only a thread whose work can be taken over may do it: a `recap run` worker, whose
//! session the run hands to a new worker. Such a thread installs a [`Rescue`]; whoever
//! watches the call (the plugin host's watchdog) invokes it when the call overruns,
//! from the watching thread. A thread without one keeps such calls off itself.
//!
//! The session handed over is replayed from the start on another thread, with the
//! strategy whose call overran told so ([`with_replay`]): its calls before that one are
//! made again (to a plugin otherwise disabled by the time-out), that call fails as the
//! time-out, and the later ones as after any time-out. So the report reads as if the
//! thread had not been given up.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

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
}
