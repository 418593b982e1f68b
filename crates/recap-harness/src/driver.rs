//! The parallel driver: sessions processed by worker threads and folded strictly in
//! input order (corpus order, then line order), so every number in the report —
//! floating point included — is the same whatever the job count.
//!
//! Each worker takes the next entry from the input itself (reading and parsing it under
//! the input's lock, so that a session is built on the thread — and in the cache — that
//! processes it) and the calling thread folds the results. Memory stays bounded
//! whatever the corpus: no entry is taken while [`MAX_IN_FLIGHT_PER_JOB`] × jobs
//! entries are taken but not yet folded, so a slow session holds back at most that
//! many finished ones in the reorder buffer, never the rest of the corpus.
//!
//! Workers own what they use (the configuration, their session), so a worker stuck in
//! a call that never returns — an in-process plugin past its time limit — can be left
//! behind ([`recap_core::rescue`]): the plugin host's watchdog tells the driver, which
//! hands the session to a new worker as a replay (the strategy's calls before the one
//! that overran made again, that one reported as the time-out) and ends the run
//! without waiting for the old one. That is what lets plugin calls run on the worker's
//! own thread under the time limit, with no hand-off per call.

use crate::aggregate::Aggregator;
use crate::config::{HarnessError, RunConfig};
use crate::outcome::{Processed, SessionOutcome};
use crate::report::Report;
use crate::session_run::{Overran, SessionRunner};
use recap_core::{Entry, Session};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;

/// Entries taken from the input but not yet folded, per worker thread, at most.
pub const MAX_IN_FLIGHT_PER_JOB: usize = 4;

/// Receives each prompt dump line with the index of its strategy.
pub type DumpHook<'a> = dyn FnMut(usize, &str) -> io::Result<()> + 'a;

/// Receives each replayed session and its outcome, in input order, with its corpus index
/// and line: per-session and per-call output streamed while the run goes, never held
/// whole.
pub type SessionHook<'a> =
    dyn FnMut(usize, usize, &Session, &SessionOutcome) -> io::Result<()> + 'a;

/// Where the run reports to while it goes (all called on the calling thread, in order).
#[derive(Default)]
pub struct Hooks<'a> {
    /// After each session or rejected line: (items done, corpus bytes read so far).
    pub progress: Option<&'a mut dyn FnMut(u64, u64)>,
    /// Each prompt dump line with the index of its strategy.
    pub dump: Option<&'a mut DumpHook<'a>>,
    /// Each replayed session (see [`SessionHook`]); with `RunConfig::call_records` its
    /// outcome carries every call.
    pub session: Option<&'a mut SessionHook<'a>>,
}

/// The parallel core: `entries` are (corpus index, entry) in input order.
pub fn run_entries<I>(
    cfg: &RunConfig,
    corpora: Vec<String>,
    entries: I,
    mut hooks: Hooks<'_>,
    bytes: Option<&AtomicU64>,
) -> Result<Report, HarnessError>
where
    I: Iterator<Item = (usize, Entry)> + Send + 'static,
{
    let jobs = cfg.jobs.max(1);
    let pool_error = |e: io::Error| HarnessError::Pool {
        jobs,
        message: e.to_string(),
    };
    let source = Arc::new(Source::new(Box::new(entries), jobs * MAX_IN_FLIGHT_PER_JOB));
    let mut pool = Pool::new(
        SessionRunner::owning(cfg.clone()),
        corpora.clone(),
        Arc::clone(&source),
        // Sessions wait for the fold only when a hook reads them.
        hooks.session.is_some(),
    );
    // Closes the source however this ends (a hook's panic included), so that no worker
    // waits for work forever.
    let closing = Closing(&source);
    for _ in 0..jobs {
        pool.spawn().map_err(pool_error)?;
    }
    let mut agg = Aggregator::new(cfg, corpora);
    let mut dump_error: Option<io::Error> = None;
    let mut session_error: Option<io::Error> = None;
    let mut pending: BTreeMap<usize, Folded> = BTreeMap::new();
    let mut next = 0usize;
    while !source.all_folded(next) {
        match pool.events.recv() {
            Ok(Event::Done { worker, seq, done }) => {
                if !pool.finished(worker) {
                    continue;
                }
                match done {
                    Ok(f) => {
                        pending.insert(seq, f);
                    }
                    // A bug of the harness itself: fail as loudly as the run would.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Ok(Event::Stuck { worker }) => pool.rescue(worker).map_err(pool_error)?,
            // The input ended: [`Source::all_folded`] can now say so.
            Ok(Event::InputDone) => {}
            // The pool holds a sender itself: never reached.
            Err(_) => break,
        }
        let before = next;
        while let Some(Folded {
            processed: p,
            session,
        }) = pending.remove(&next)
        {
            next += 1;
            if let (Some(dump), Ok(o)) = (hooks.dump.as_mut(), &p.outcome)
                && dump_error.is_none()
            {
                'dumps: for (s, so) in o.strategies.iter().enumerate() {
                    for line in &so.dumps {
                        if let Err(e) = dump(s, line) {
                            dump_error = Some(e);
                            break 'dumps;
                        }
                    }
                }
            }
            if let (Some(hook), Ok(o), Some(session)) =
                (hooks.session.as_mut(), &p.outcome, &session)
                && session_error.is_none()
                && let Err(e) = hook(p.corpus, p.line, session, o)
            {
                session_error = Some(e);
            }
            agg.add(p);
            if let Some(progress) = hooks.progress.as_mut() {
                progress(next as u64, bytes.map_or(0, |b| b.load(Ordering::Relaxed)));
            }
        }
        if next != before {
            source.folded(next);
        }
    }
    drop(closing);
    pool.finish();
    if let Some(e) = dump_error {
        return Err(HarnessError::Dump(e));
    }
    if let Some(e) = session_error {
        return Err(HarnessError::SessionHook(e));
    }
    Ok(agg.finish())
}

type Entries = Box<dyn Iterator<Item = (usize, Entry)> + Send>;

/// A processed entry waiting for the fold, with its session when a hook reads it.
struct Folded {
    processed: Processed,
    session: Option<Arc<Session>>,
}

/// One session for a worker.
#[derive(Clone)]
struct Work {
    seq: usize,
    corpus: usize,
    line: usize,
    session: Arc<Session>,
    /// Strategies whose calls overran on a worker that was given up.
    overran: Vec<Overran>,
}

/// What a worker takes next.
enum Task {
    Session(Work),
    /// A rejected line: nothing to process, only to fold in its place.
    Rejected(usize, Processed),
}

/// The input and what the workers may take from it: entries in order, each read (and
/// parsed) by the worker that processes it, so a session is built on the thread that
/// uses it; sessions of workers given up come first.
struct Source {
    state: Mutex<SourceState>,
    moved: Condvar,
    /// Entries taken but not yet folded, at most.
    window: usize,
}

struct SourceState {
    entries: Entries,
    /// Entries taken from the input.
    taken: usize,
    /// Entries folded so far (the fold takes them in order).
    folded: usize,
    input_done: bool,
    /// Sessions of workers given up, to be processed again.
    requeued: VecDeque<Work>,
    /// The run is over: workers stop.
    closed: bool,
}

impl Source {
    fn new(entries: Entries, window: usize) -> Self {
        Source {
            state: Mutex::new(SourceState {
                entries,
                taken: 0,
                folded: 0,
                input_done: false,
                requeued: VecDeque::new(),
                closed: false,
            }),
            moved: Condvar::new(),
            window: window.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SourceState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, f: impl FnOnce(&mut SourceState)) {
        f(&mut self.lock());
        self.moved.notify_all();
    }

    /// The next task, waiting while the window is full; `None` once the run is closed.
    /// Tells `events` when it finds the input's end.
    fn next_task(&self, events: &mpsc::Sender<Event>) -> Option<Task> {
        let mut state = self.lock();
        loop {
            if state.closed {
                return None;
            }
            if let Some(work) = state.requeued.pop_front() {
                return Some(Task::Session(work));
            }
            if !state.input_done && state.taken < state.folded + self.window {
                match state.entries.next() {
                    Some((corpus, entry)) => {
                        let seq = state.taken;
                        state.taken += 1;
                        let line = entry.line;
                        return Some(match entry.session {
                            Ok(session) => Task::Session(Work {
                                seq,
                                corpus,
                                line,
                                session: Arc::new(session),
                                overran: Vec::new(),
                            }),
                            Err(rejected) => Task::Rejected(
                                seq,
                                Processed {
                                    corpus,
                                    line,
                                    outcome: Err(rejected),
                                },
                            ),
                        });
                    }
                    None => {
                        state.input_done = true;
                        // The receiver only goes away when the run is over.
                        let _ = events.send(Event::InputDone);
                    }
                }
                continue;
            }
            state = self
                .moved
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn folded(&self, n: usize) {
        self.update(|s| s.folded = n);
    }

    fn requeue(&self, work: Work) {
        self.update(|s| s.requeued.push_back(work));
    }

    /// Whether the input ended and its `next` entries, all of them, are folded.
    fn all_folded(&self, next: usize) -> bool {
        let state = self.lock();
        state.input_done && next == state.taken
    }
}

/// Closes the source when dropped.
struct Closing<'s>(&'s Source);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        self.0.update(|s| s.closed = true);
    }
}

enum Event {
    Done {
        worker: usize,
        seq: usize,
        done: std::thread::Result<Folded>,
    },
    /// The worker is stuck in a call that overran ([`recap_core::rescue`]).
    Stuck { worker: usize },
    /// A worker found the end of the input.
    InputDone,
}

struct Worker {
    /// The session it processes.
    current: Arc<Mutex<Option<Work>>>,
    /// The strategy and call it renders ([`crate::session_run::progress`]).
    progress: Arc<AtomicU64>,
    thread: JoinHandle<()>,
}

/// The worker threads. They own what they use, so that one stuck in a call that never
/// returns can be left behind: its session goes to a new worker, and the run ends
/// without it.
struct Pool {
    runner: Arc<SessionRunner<'static>>,
    corpora: Arc<[String]>,
    source: Arc<Source>,
    workers: BTreeMap<usize, Worker>,
    next_id: usize,
    events: mpsc::Receiver<Event>,
    events_tx: mpsc::Sender<Event>,
    /// Workers hand each session to the fold with its outcome.
    keep_sessions: bool,
}

impl Pool {
    fn new(
        runner: SessionRunner<'static>,
        corpora: Vec<String>,
        source: Arc<Source>,
        keep_sessions: bool,
    ) -> Self {
        let (events_tx, events) = mpsc::channel();
        Pool {
            runner: Arc::new(runner),
            corpora: corpora.into(),
            source,
            keep_sessions,
            workers: BTreeMap::new(),
            next_id: 0,
            events,
            events_tx,
        }
    }

    fn spawn(&mut self) -> io::Result<()> {
        let id = self.next_id;
        let current = Arc::new(Mutex::new(None));
        let progress = Arc::new(AtomicU64::new(0));
        let worker = WorkLoop {
            id,
            source: Arc::clone(&self.source),
            events: self.events_tx.clone(),
            runner: Arc::clone(&self.runner),
            corpora: Arc::clone(&self.corpora),
            current: Arc::clone(&current),
            progress: Arc::clone(&progress),
            keep_sessions: self.keep_sessions,
        };
        let thread = std::thread::Builder::new()
            .name(format!("recap-worker-{id}"))
            .spawn(move || worker.run())?;
        self.next_id += 1;
        self.workers.insert(
            id,
            Worker {
                current,
                progress,
                thread,
            },
        );
        Ok(())
    }

    /// Whether a worker's result counts (one given up does not).
    fn finished(&self, id: usize) -> bool {
        self.workers.contains_key(&id)
    }

    /// Gives up a stuck worker: its session is processed again by a new worker, with
    /// the strategy it was rendering replayed up to the call that overran (a strategy
    /// that overran twice in the same session is not run in it again).
    fn rescue(&mut self, id: usize) -> io::Result<()> {
        let Some(worker) = self.workers.remove(&id) else {
            return Ok(());
        };
        let current = worker
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut work) = current {
            let (strategy, call) = crate::session_run::progress(&worker.progress);
            match work.overran.iter_mut().find(|r| r.strategy == strategy) {
                Some(r) => r.overran_at = 0,
                None => work.overran.push(Overran {
                    strategy,
                    overran_at: call,
                }),
            }
            self.source.requeue(work);
        }
        // Left behind, never joined: it ends if its call ever returns.
        drop(worker);
        self.spawn()
    }

    /// Waits for the workers that were not given up (the source is closed).
    fn finish(self) {
        for worker in self.workers.into_values() {
            // A worker's panic was reported as an event already.
            let _ = worker.thread.join();
        }
    }
}

/// A worker thread's side.
struct WorkLoop {
    id: usize,
    source: Arc<Source>,
    events: mpsc::Sender<Event>,
    runner: Arc<SessionRunner<'static>>,
    corpora: Arc<[String]>,
    current: Arc<Mutex<Option<Work>>>,
    progress: Arc<AtomicU64>,
    keep_sessions: bool,
}

impl WorkLoop {
    fn run(self) {
        crate::session_run::note_progress_in(Arc::clone(&self.progress));
        let (stuck, id) = (self.events.clone(), self.id);
        recap_core::rescue::set_thread_rescue(Some(Arc::new(move || {
            // The receiver only goes away when the run is over.
            let _ = stuck.send(Event::Stuck { worker: id });
        })));
        while let Some(task) = self.source.next_task(&self.events) {
            let (seq, done) = match task {
                Task::Rejected(seq, processed) => (
                    seq,
                    Ok(Folded {
                        processed,
                        session: None,
                    }),
                ),
                Task::Session(work) => {
                    let seq = work.seq;
                    *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(work.clone());
                    let outcome = catch_unwind(AssertUnwindSafe(|| {
                        self.runner.process_replaying(
                            &self.corpora[work.corpus],
                            &work.session,
                            &work.overran,
                        )
                    }));
                    if recap_core::rescue::take_abandoned() {
                        // Given up while it waited: its session is done elsewhere.
                        return;
                    }
                    self.current
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    let done = outcome.map(|o| Folded {
                        processed: Processed {
                            corpus: work.corpus,
                            line: work.line,
                            outcome: Ok(o),
                        },
                        session: self.keep_sessions.then_some(work.session),
                    });
                    (seq, done)
                }
            };
            let done = Event::Done {
                worker: self.id,
                seq,
                done,
            };
            if self.events.send(done).is_err() {
                return;
            }
        }
    }
}
