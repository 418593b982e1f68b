//! How calls reach a plugin, wherever it runs: [`Backend`] makes one-off calls
//! (`describe`, a full render), a [`Channel`] carries the calls of one session — to the
//! plugin-side session, or as full requests — in order, and lets the caller queue the
//! next ones before it waits when the plugin runs on a lane.

use crate::call::{
    CallError, Then, WorkerEvent, WorkerFailure, no_handle, read_describe, read_open, read_render,
    read_session_render, read_session_render_once,
};
use crate::inprocess::{self, Fns, SessionFns, SessionPtr};
use crate::isolated::{Isolated, Op, WorkerDown, plugin_answer};
use crate::lanes::{Abandoned, Hung, Lane, Lanes, Slot};
use crate::time_limit::{TimedOut, call_time_limit, limit_for_message};
use crate::watchdog::Watch;
use recap_abi::wire::{Description, Reuse};
use recap_core::Message;
use recap_core::rescue;
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A call's answer: `(messages_kept, new messages)`; a full request keeps none.
/// A session call's answer: how many messages of the previous response it keeps, its
/// new messages, and where it reuses earlier ones.
pub(crate) type Reply = (usize, Vec<Message>, Vec<Reuse>);
/// A call's outcome and its request buffer, back for reuse.
pub(crate) type Outcome = (Result<Reply, CallError>, Vec<u8>);

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

/// A plugin loaded into this process.
pub(crate) struct InProcess {
    pub(crate) fns: Fns,
    lanes: Arc<Lanes>,
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

/// The error of a call whose lane was abandoned: the call that overran, or one queued
/// behind it (this session's or, on a lane shared by a caller's sessions, another's),
/// which was never made.
fn abandoned_call<R>(slot: &Slot<R>) -> CallError {
    if slot.started() {
        overran()
    } else {
        disabled()
    }
}

/// Whether calls to a plugin that overran are refused: always, except in the replay of
/// the session in which it overran, whose calls before that one are made again
/// ([`recap_core::rescue`]).
fn refused(hung: &Hung) -> bool {
    hung.is_set() && rescue::replay_overran_at().is_none()
}

/// A watch over calls made on this thread itself, when the thread may be given up
/// ([`recap_core::rescue`]): an overrun marks the plugin hung and hands the thread's work
/// to another thread, so the limit costs two atomic stores per call instead of a
/// hand-off to a lane.
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

/// Gives a lane back to its pool however the wait ends (a host-side panic included).
struct Borrowed<'a> {
    lanes: &'a Lanes,
    lane: Option<Arc<Lane>>,
}

impl Drop for Borrowed<'_> {
    fn drop(&mut self) {
        if let Some(lane) = self.lane.take() {
            self.lanes.give_back(lane);
        }
    }
}

impl InProcess {
    pub(crate) fn new(fns: Fns) -> Self {
        let hung = Arc::new(Hung::default());
        Self {
            fns,
            lanes: Arc::new(Lanes::new(Arc::clone(&hung))),
            hung,
        }
    }

    /// Makes `call` on a lane under the time limit (on this thread without a limit).
    fn one_shot<R: Send + 'static>(
        &self,
        call: impl FnOnce() -> Result<R, CallError> + Send + 'static,
    ) -> Result<R, CallError> {
        if call_time_limit().is_none() {
            return call();
        }
        if refused(&self.hung) {
            return Err(disabled());
        }
        if let Some(watch) = thread_watch(&self.hung) {
            return watched(&watch, &mut false, call);
        }
        let Some(lane) = self.lanes.checkout() else {
            // No thread could be started: call without a limit rather than not at all.
            return call();
        };
        let borrowed = Borrowed {
            lanes: &self.lanes,
            lane: Some(lane),
        };
        let Some(lane) = borrowed.lane.as_ref() else {
            return call();
        };
        let slot = lane.submit(call);
        lane.wait(&slot)
            .unwrap_or_else(|Abandoned| Err(abandoned_call(&slot)))
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
            // call, and makes its calls one after another (on its lane, or on its
            // owner's thread).
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

/// The calls of one session, answered in the order they were submitted.
pub(crate) enum Channel {
    InProcess(InProcessChannel),
    Worker(WorkerChannel),
}

impl Channel {
    /// Whether submitted calls run ahead of [`Channel::receive`] (then queueing the
    /// next calls early saves waiting; otherwise each runs when received).
    pub(crate) fn pipelines(&self) -> bool {
        matches!(self, Channel::InProcess(c) if c.lane.is_some())
    }

    /// Queues a call with this request.
    pub(crate) fn submit(&mut self, request: Vec<u8>) {
        match self {
            Channel::InProcess(c) => c.submit(request),
            Channel::Worker(c) => c.queue.push_back(request),
        }
    }

    /// The outcome of the oldest call not received yet (callers receive only what they
    /// submitted).
    pub(crate) fn receive(&mut self) -> Outcome {
        match self {
            Channel::InProcess(c) => c.receive(),
            Channel::Worker(c) => c.receive(),
        }
    }
}

/// A session's calls to a plugin in this process: on a lane of its own (with a time
/// limit), or on the caller's thread.
pub(crate) struct InProcessChannel {
    fns: Fns,
    session: Option<(SessionFns, SessionPtr)>,
    hung: Arc<Hung>,
    lanes: Arc<Lanes>,
    lane: Option<Arc<Lane>>,
    /// Calls made on the lane, oldest first.
    slots: VecDeque<Arc<Slot<Outcome>>>,
    /// Requests of calls made on the caller's thread when received.
    queue: VecDeque<Vec<u8>>,
    /// Tells calls still queued on the lane that nobody wants them any more.
    cancelled: Arc<AtomicBool>,
    /// Without a lane, under the limit: the watch over calls on the caller's thread.
    watch: Option<Arc<Watch>>,
    /// A call overran: the lane (or the caller's thread) and the session handle are
    /// abandoned.
    overran: bool,
}

impl InProcessChannel {
    fn open(p: &InProcess, open: Option<Vec<u8>>) -> Result<Self, CallError> {
        let limited = call_time_limit().is_some();
        if limited && refused(&p.hung) {
            return Err(disabled());
        }
        let watch = if limited { thread_watch(&p.hung) } else { None };
        let lane = if limited && watch.is_none() {
            p.lanes.checkout()
        } else {
            None
        };
        let mut channel = Self {
            fns: p.fns,
            session: None,
            hung: Arc::clone(&p.hung),
            lanes: Arc::clone(&p.lanes),
            lane,
            slots: VecDeque::new(),
            queue: VecDeque::new(),
            cancelled: Arc::new(AtomicBool::new(false)),
            watch,
            overran: false,
        };
        let (Some(request), Some(sessions)) = (open, p.fns.sessions) else {
            return Ok(channel);
        };
        let fns = p.fns;
        let opened = match &channel.lane {
            Some(lane) => {
                let slot = lane.submit(move || open_now(&fns, sessions, &request));
                lane.wait(&slot).unwrap_or_else(|Abandoned| {
                    // A session opened by a call that overran is never seen (nor closed).
                    channel.overran = true;
                    Err(abandoned_call(&slot))
                })
            }
            None => match channel.watch.clone() {
                Some(watch) => watched(&watch, &mut channel.overran, || {
                    open_now(&fns, sessions, &request)
                }),
                None => open_now(&fns, sessions, &request),
            },
        };
        channel.session = Some((sessions, opened?));
        Ok(channel)
    }

    fn submit(&mut self, request: Vec<u8>) {
        let Some(lane) = &self.lane else {
            self.queue.push_back(request);
            return;
        };
        if self.overran || refused(&self.hung) {
            self.slots
                .push_back(Slot::ready((Err(disabled()), request)));
            return;
        }
        let (fns, session, cancelled) = (self.fns, self.session, Arc::clone(&self.cancelled));
        self.slots.push_back(lane.submit(move || {
            if cancelled.load(Ordering::Acquire) {
                return (Err(disabled()), request);
            }
            let result = call_now(&fns, session, &request);
            (result, request)
        }));
    }

    fn receive(&mut self) -> Outcome {
        let Some(lane) = &self.lane else {
            let Some(request) = self.queue.pop_front() else {
                return (Err(nothing_submitted()), Vec::new());
            };
            if self.overran || refused(&self.hung) {
                return (Err(disabled()), request);
            }
            let (fns, session) = (self.fns, self.session);
            let result = match &self.watch {
                Some(watch) => watched(watch, &mut self.overran, || {
                    call_now(&fns, session, &request)
                }),
                None => call_now(&fns, session, &request),
            };
            return (result, request);
        };
        let Some(slot) = self.slots.pop_front() else {
            return (Err(nothing_submitted()), Vec::new());
        };
        match lane.wait(&slot) {
            Ok(outcome) => outcome,
            Err(Abandoned) => {
                self.overran = true;
                (Err(abandoned_call(&slot)), Vec::new())
            }
        }
    }
}

fn nothing_submitted() -> CallError {
    CallError::invalid(0, "the host received a call it had not made (a recap bug)")
}

impl Drop for InProcessChannel {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::Release);
        let Some(lane) = self.lane.take() else {
            if self.overran {
                // The plugin overran on this thread: its session is left as it is.
                return;
            }
            if let Some((sessions, ptr)) = self.session.take() {
                let close = || {
                    // SAFETY: the handle came from this plugin's `session_open`, no call
                    // is using it (calls without a lane ran on the owner's thread, which
                    // is dropping the channel), and it is closed exactly once, here.
                    unsafe { inprocess::close(sessions, ptr) };
                    Ok(())
                };
                match &self.watch {
                    // A close that hangs hands this thread's work on like a call.
                    Some(watch) => {
                        let _ = watched(watch, &mut self.overran, close);
                    }
                    None => {
                        let _ = close();
                    }
                }
            }
            return;
        };
        if self.overran || lane.is_abandoned() {
            // A call that overran may still be using the session: leak it, and the lane.
            return;
        }
        if let Some((sessions, ptr)) = self.session.take() {
            // Queued behind this channel's calls (cancelled above, so they end at once):
            // closing runs plugin code like any call, under the limit, and a close that
            // hangs marks the plugin hung instead of hanging its caller.
            lane.post(Box::new(move || {
                // SAFETY: the handle came from this plugin's `session_open`; every call
                // that used it ran before this job on the same lane; closed once, here.
                unsafe { inprocess::close(sessions, ptr) };
            }));
        }
        self.lanes.give_back(lane);
    }
}

/// A session's calls to an isolated plugin: one worker process held from open to close.
pub(crate) struct WorkerChannel {
    isolated: Arc<Isolated>,
    worker: Option<crate::isolated::WorkerProcess>,
    /// The worker-side session handle; 0 for full requests.
    handle: u64,
    queue: VecDeque<Vec<u8>>,
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
            queue: VecDeque::new(),
        })
    }

    fn receive(&mut self) -> Outcome {
        let Some(request) = self.queue.pop_front() else {
            return (Err(nothing_submitted()), Vec::new());
        };
        let Some(worker) = self.worker.as_mut() else {
            let gone = CallError::Worker(Box::new(WorkerFailure {
                event: WorkerEvent::Unavailable {
                    detail: "this session's worker process failed at an earlier call".into(),
                },
                at: None,
                then: Then::Nothing,
            }));
            return (Err(gone), request);
        };
        let result = if self.handle == 0 {
            self.isolated.call(worker, Op::Render, 0, &request, |r| {
                plugin_answer(r, read_render).map(|m| (0, m, Vec::new()))
            })
        } else {
            self.isolated
                .call(worker, Op::SessionRender, self.handle, &request, |r| {
                    plugin_answer(r, read_session_render)
                })
        };
        match result {
            Ok(result) => (result, request),
            Err(WorkerDown(e)) => {
                self.worker = None;
                (Err(e), request)
            }
        }
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
                "no rescue installed: calls go to a lane"
            );
            rescue::set_thread_rescue(Some(Arc::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
            })));
            let hung = Arc::new(Hung::default());
            let watch = thread_watch(&hung).expect("this thread may be given up");
            let mut overran = false;

            let me = std::thread::current().id();
            let on = watched(&watch, &mut overran, || Ok(std::thread::current().id()));
            assert_eq!(on.ok(), Some(me), "the call ran on the caller's thread");
            assert!(!overran && !hung.is_set() && !rescue::take_abandoned());

            let rescued_meanwhile = watched_count;
            let late = watched(&watch, &mut overran, || {
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
}
