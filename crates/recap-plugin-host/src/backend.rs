//! How calls reach a plugin, wherever it runs: [`Backend`] makes one-off calls
//! (`describe`, a full render), a [`Channel`] carries the calls of one session — to the
//! plugin-side session, or as full requests — one after another.
//!
//! The per-call time limit: the [`crate::watchdog`] holds the deadline of every call in
//! flight. An in-process call runs on a thread that may be given up
//! ([`recap_core::rescue`]): a `recap run` worker makes it itself, any other caller on a
//! spare thread. Past the deadline that thread is given up and the plugin marked hung —
//! every later call to it fails at once, since whatever hung it (a loop, a lock) would
//! most likely hang the next call too. A worker process past its deadline is killed
//! ([`crate::isolated`]).

use crate::call::{
    CallError, Then, WorkerEvent, WorkerFailure, no_handle, read_describe, read_open, read_render,
    read_session_render, read_session_render_once,
};
use crate::inprocess::{self, Fns, SessionFns, SessionPtr};
use crate::isolated::{Isolated, Op, WorkerDown, plugin_answer};
use crate::time_limit::{TimedOut, call_time_limit, limit_for_message};
use crate::watchdog::Watch;
use recap_abi::wire::{Description, Reuse};
use recap_core::Message;
use recap_core::rescue::{self, GivenUp};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A call's answer: how many messages of the previous response it keeps, its new
/// messages, and where it reuses earlier ones; a full request keeps none.
pub(crate) type Reply = (usize, Vec<Message>, Vec<Reuse>);

/// Where a plugin's calls go.
pub(crate) enum Backend {
    InProcess(InProcess),
    Isolated(Arc<Isolated>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::InProcess(_) => "InProcess",
            Backend::Isolated(_) => "Isolated",
        })
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

/// A plugin loaded into this process.
pub(crate) struct InProcess {
    pub(crate) fns: Fns,
    hung: Arc<Hung>,
}

pub(crate) fn disabled() -> CallError {
    CallError::TimedOut(TimedOut {
        limit: limit_for_message(),
        earlier: true,
    })
}

pub(crate) fn overran() -> CallError {
    CallError::TimedOut(TimedOut {
        limit: limit_for_message(),
        earlier: false,
    })
}

/// Whether calls to a plugin that overran are refused: always, except in the replay of
/// the session in which it overran, whose calls before that one are made again
/// ([`recap_core::rescue`]).
fn refused(hung: &Hung) -> bool {
    hung.is_set() && rescue::replay_overran_at().is_none()
}

/// A watch over calls made on this thread, when the thread may be given up: an overrun
/// marks the plugin hung and hands the thread's work to another thread, so the limit
/// costs two atomic stores per call.
fn thread_watch(hung: &Arc<Hung>) -> Option<Arc<Watch>> {
    let rescue = rescue::thread_rescue()?;
    let hung = Arc::clone(hung);
    Some(Watch::new(move || {
        hung.set();
        rescue();
    }))
}

/// Makes `call` on this thread under `watch`. A call that overran and returned after all
/// was given up meanwhile (its thread's work is done elsewhere): it is the time-out, and
/// `overran` is set.
fn watched<R>(
    watch: &Watch,
    overran_flag: &mut bool,
    call: impl FnOnce() -> Result<R, CallError>,
) -> Result<R, CallError> {
    watch.arm();
    let result = call();
    if watch.disarm() {
        rescue::note_abandoned();
        *overran_flag = true;
        return Err(overran());
    }
    result
}

/// Makes `call` under the time limit: on this thread when `watch` (this thread's) is
/// given, else on a thread that may be given up ([`rescue::on_spare_thread`]). `overran`
/// is set when the call overran, and then refuses the calls after it.
fn limited<R: Send + 'static>(
    hung: &Arc<Hung>,
    watch: Option<&Watch>,
    overran_flag: &mut bool,
    call: impl FnOnce() -> Result<R, CallError> + Send + 'static,
) -> Result<R, CallError> {
    if call_time_limit().is_none() {
        return call();
    }
    if *overran_flag || refused(hung) {
        return Err(disabled());
    }
    if let Some(watch) = watch {
        return watched(watch, overran_flag, call);
    }
    let theirs = Arc::clone(hung);
    let spare = rescue::on_spare_thread(move || match thread_watch(&theirs) {
        Some(watch) => watched(&watch, &mut false, call),
        // Not reached: a spare thread has a rescue.
        None => call(),
    });
    match spare {
        Ok(result) => result,
        Err(GivenUp) => {
            *overran_flag = true;
            Err(overran())
        }
    }
}

impl InProcess {
    pub(crate) fn new(fns: Fns) -> Self {
        Self {
            fns,
            hung: Arc::new(Hung::default()),
        }
    }

    /// Makes `call` under the time limit.
    fn one_shot<R: Send + 'static>(
        &self,
        call: impl FnOnce() -> Result<R, CallError> + Send + 'static,
    ) -> Result<R, CallError> {
        let watch = call_time_limit()
            .is_some()
            .then(|| thread_watch(&self.hung))
            .flatten();
        limited(&self.hung, watch.as_deref(), &mut false, call)
    }
}

/// `session_open` in this process: the handle, or why there is none.
fn open_now(fns: &Fns, sessions: SessionFns, request: &[u8]) -> Result<SessionPtr, CallError> {
    let (status, handle, out) = inprocess::open(fns, sessions, request);
    out.read(status, read_open)?;
    NonNull::new(handle).map(SessionPtr).ok_or_else(no_handle)
}

/// One call in this process: to the session when there is one, else a full request.
fn call_now(
    fns: &Fns,
    session: Option<(SessionFns, SessionPtr)>,
    request: &[u8],
) -> Result<Reply, CallError> {
    match session {
        Some((sessions, ptr)) => {
            // SAFETY: the channel owns the handle until it closes it after its last
            // call, and makes its calls one after another (on its owner's thread, or on
            // a spare thread it waits for).
            let (status, out) = unsafe { inprocess::session_render(fns, sessions, ptr, request) };
            out.read(status, read_session_render_once)
        }
        None => {
            let (status, out) = inprocess::render(fns, request);
            out.read(status, read_render).map(|m| (0, m, Vec::new()))
        }
    }
}

impl Backend {
    pub(crate) fn has_describe(&self) -> bool {
        match self {
            Backend::InProcess(p) => p.fns.describe.is_some(),
            Backend::Isolated(i) => i.info.describe,
        }
    }

    pub(crate) fn has_sessions(&self) -> bool {
        match self {
            Backend::InProcess(p) => p.fns.sessions.is_some(),
            Backend::Isolated(i) => i.info.sessions,
        }
    }

    /// `describe` with the given request; `Ok(None)` when the plugin has no `describe`.
    pub(crate) fn describe(&self, request: Vec<u8>) -> Result<Option<Description>, CallError> {
        match self {
            Backend::InProcess(p) => {
                let Some(describe) = p.fns.describe else {
                    return Ok(None);
                };
                let fns = p.fns;
                p.one_shot(move || {
                    let (status, out) = inprocess::describe(&fns, describe, &request);
                    out.read(status, read_describe)
                })
                .map(Some)
            }
            Backend::Isolated(i) => {
                if !i.info.describe {
                    return Ok(None);
                }
                i.one_shot(Op::Describe, &request, read_describe).map(Some)
            }
        }
    }

    /// A full render request.
    pub(crate) fn render(&self, request: Vec<u8>) -> Result<Vec<Message>, CallError> {
        match self {
            Backend::InProcess(p) => {
                let fns = p.fns;
                p.one_shot(move || {
                    let (status, out) = inprocess::render(&fns, &request);
                    out.read(status, read_render)
                })
            }
            Backend::Isolated(i) => i.one_shot(Op::Render, &request, read_render),
        }
    }

    /// A channel for one session's calls: a plugin-side session opened with `open` (the
    /// plugin must have the session functions), or full requests without it.
    pub(crate) fn channel(&self, open: Option<Vec<u8>>) -> Result<Channel, CallError> {
        match self {
            Backend::InProcess(p) => InProcessChannel::open(p, open).map(Channel::InProcess),
            Backend::Isolated(i) => WorkerChannel::open(i, open).map(Channel::Worker),
        }
    }
}

/// The calls of one session, made one after another.
pub(crate) enum Channel {
    InProcess(InProcessChannel),
    Worker(WorkerChannel),
}

impl Channel {
    /// One call with this request.
    pub(crate) fn call(&mut self, request: &[u8]) -> Result<Reply, CallError> {
        match self {
            Channel::InProcess(c) => c.call(request),
            Channel::Worker(c) => c.call(request),
        }
    }
}

/// A session's calls to a plugin in this process, on the caller's thread when it may be
/// given up, else each on a spare thread.
pub(crate) struct InProcessChannel {
    fns: Fns,
    session: Option<(SessionFns, SessionPtr)>,
    hung: Arc<Hung>,
    /// Under the limit, on a thread that may be given up: the watch over its calls.
    watch: Option<Arc<Watch>>,
    /// A call overran: its thread and the session handle are abandoned.
    overran: bool,
}

impl InProcessChannel {
    fn open(p: &InProcess, open: Option<Vec<u8>>) -> Result<Self, CallError> {
        let limit = call_time_limit().is_some();
        if limit && refused(&p.hung) {
            return Err(disabled());
        }
        let mut channel = Self {
            fns: p.fns,
            session: None,
            hung: Arc::clone(&p.hung),
            watch: if limit { thread_watch(&p.hung) } else { None },
            overran: false,
        };
        let (Some(request), Some(sessions)) = (open, p.fns.sessions) else {
            return Ok(channel);
        };
        let fns = p.fns;
        // A session opened by a call that overran is never seen (nor closed).
        let opened = limited(
            &channel.hung,
            channel.watch.as_deref(),
            &mut channel.overran,
            move || open_now(&fns, sessions, &request),
        )?;
        channel.session = Some((sessions, opened));
        Ok(channel)
    }

    fn call(&mut self, request: &[u8]) -> Result<Reply, CallError> {
        let (fns, session) = (self.fns, self.session);
        if call_time_limit().is_none() {
            return call_now(&fns, session, request);
        }
        match &self.watch {
            // The hot path: on this thread, the request borrowed.
            Some(watch) if !self.overran && !refused(&self.hung) => {
                watched(watch, &mut self.overran, || {
                    call_now(&fns, session, request)
                })
            }
            _ => {
                let request = request.to_vec();
                limited(&self.hung, None, &mut self.overran, move || {
                    call_now(&fns, session, &request)
                })
            }
        }
    }
}

impl Drop for InProcessChannel {
    fn drop(&mut self) {
        if self.overran {
            // A call that overran may still be using the session: it is left as it is.
            return;
        }
        let Some((sessions, ptr)) = self.session.take() else {
            return;
        };
        // Closing runs plugin code like any call, under the limit: a close that hangs
        // marks the plugin hung instead of hanging its caller.
        let _ = limited(
            &self.hung,
            self.watch.as_deref(),
            &mut self.overran,
            move || {
                // SAFETY: the handle came from this plugin's `session_open`, no call is
                // using it (the channel's calls are over: each returned, none overran),
                // and it is closed exactly once, here.
                unsafe { inprocess::close(sessions, ptr) };
                Ok(())
            },
        );
    }
}

/// A session's calls to an isolated plugin: one worker process held from open to close.
pub(crate) struct WorkerChannel {
    isolated: Arc<Isolated>,
    worker: Option<crate::isolated::WorkerProcess>,
    /// The worker-side session handle; 0 for full requests.
    handle: u64,
}

impl WorkerChannel {
    fn open(isolated: &Arc<Isolated>, open: Option<Vec<u8>>) -> Result<Self, CallError> {
        let mut worker = isolated.checkout()?;
        let mut handle = 0;
        if let Some(request) = open {
            let opened = isolated.call(&mut worker, Op::Open, 0, &request, |r| {
                plugin_answer(r, read_open)?;
                Ok(r.value)
            });
            handle = match opened {
                Ok(Ok(0)) => {
                    isolated.give_back(worker);
                    return Err(no_handle());
                }
                Ok(Ok(handle)) => handle,
                Ok(Err(e)) => {
                    isolated.give_back(worker);
                    return Err(e);
                }
                Err(WorkerDown(e)) => return Err(e),
            };
        }
        Ok(Self {
            isolated: Arc::clone(isolated),
            worker: Some(worker),
            handle,
        })
    }

    fn call(&mut self, request: &[u8]) -> Result<Reply, CallError> {
        let Some(worker) = self.worker.as_mut() else {
            return Err(CallError::Worker(Box::new(WorkerFailure {
                event: WorkerEvent::Unavailable {
                    detail: "this session's worker process failed at an earlier call".into(),
                },
                at: None,
                then: Then::Nothing,
            })));
        };
        let result = if self.handle == 0 {
            self.isolated.call(worker, Op::Render, 0, request, |r| {
                plugin_answer(r, read_render).map(|m| (0, m, Vec::new()))
            })
        } else {
            self.isolated
                .call(worker, Op::SessionRender, self.handle, request, |r| {
                    plugin_answer(r, read_session_render)
                })
        };
        result.unwrap_or_else(|WorkerDown(e)| {
            self.worker = None;
            Err(e)
        })
    }
}

impl Drop for WorkerChannel {
    fn drop(&mut self) {
        let Some(mut worker) = self.worker.take() else {
            return;
        };
        if self.handle != 0 {
            let closed = self
                .isolated
                .call(&mut worker, Op::Close, self.handle, &[], |_| Ok(()));
            if closed.is_err() {
                // The worker failed while closing: it is gone (and counted).
                return;
            }
        }
        self.isolated.give_back(worker);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_limit::set_call_time_limit;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// On a thread that may be given up, a call runs on that thread itself; one that
    /// overruns marks the plugin hung and calls the thread's rescue (from the watchdog,
    /// while the call still runs), and when it returns after all it is the time-out and
    /// the thread learns it was given up. The plugin is then refused, except in the
    /// replay of the session in which it overran.
    #[test]
    fn a_call_that_overruns_on_a_thread_that_may_be_given_up_hands_its_work_on() {
        // The limit is process-wide; the other unit tests that set it use the same.
        set_call_time_limit(Some(Duration::from_millis(300)));
        let rescued = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&rescued);
        let watched_count = Arc::clone(&rescued);
        std::thread::spawn(move || {
            assert!(
                thread_watch(&Arc::new(Hung::default())).is_none(),
                "no rescue installed: calls go to a spare thread"
            );
            rescue::set_thread_rescue(Some(Arc::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
            })));
            let hung = Arc::new(Hung::default());
            let watch = thread_watch(&hung).expect("this thread may be given up");
            let mut overran = false;

            let me = std::thread::current().id();
            let on = limited(&hung, Some(&watch), &mut overran, move || {
                Ok(std::thread::current().id())
            });
            assert_eq!(on.ok(), Some(me), "the call ran on the caller's thread");
            assert!(!overran && !hung.is_set() && !rescue::take_abandoned());

            let rescued_meanwhile = watched_count;
            let late = limited(&hung, Some(&watch), &mut overran, move || {
                let start = std::time::Instant::now();
                while rescued_meanwhile.load(Ordering::SeqCst) == 0
                    && start.elapsed() < Duration::from_secs(20)
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(())
            });
            assert!(
                matches!(
                    late,
                    Err(CallError::TimedOut(TimedOut { earlier: false, .. }))
                ),
                "{late:?}"
            );
            assert!(overran && hung.is_set());
            assert!(
                rescue::take_abandoned(),
                "the thread learns it was given up"
            );
            assert!(refused(&hung));
            rescue::with_replay(3, || assert!(!refused(&hung), "a replay may call it"));
        })
        .join()
        .expect("test thread");
        assert_eq!(rescued.load(Ordering::SeqCst), 1, "rescued once");
    }

    /// Elsewhere, a call runs on a spare thread, which the caller stops waiting for when
    /// the call overruns: the call that overran is the time-out, and every later call to
    /// the plugin is refused at once.
    #[test]
    fn a_call_that_overruns_on_a_spare_thread_is_left_there() {
        set_call_time_limit(Some(Duration::from_millis(300)));
        let hung = Arc::new(Hung::default());
        let me = std::thread::current().id();
        let mut overran = false;
        let there = limited(&hung, None, &mut overran, move || {
            Ok(std::thread::current().id())
        });
        assert_ne!(there.ok(), Some(me), "a spare thread");
        let start = std::time::Instant::now();
        let stuck = limited(&hung, None, &mut overran, || {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(())
        });
        assert!(
            matches!(
                stuck,
                Err(CallError::TimedOut(TimedOut { earlier: false, .. }))
            ),
            "{stuck:?}"
        );
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(overran && hung.is_set());
        let next = limited(&hung, None, &mut false, || Ok(()));
        assert!(
            matches!(
                next,
                Err(CallError::TimedOut(TimedOut { earlier: true, .. }))
            ),
            "{next:?}"
        );
    }
}
