//! The parallel driver: sessions processed by worker threads and folded strictly in
//! input order (corpus order, then line order), so every number in the report —
//! floating point included — is the same whatever the job count.
//!
//! The calling thread reads the input (parsing each entry when a worker is free for
//! it, as the workers themselves did before), hands one session at a time to an idle
//! worker and folds the results. Memory stays bounded whatever the corpus: no entry is
//! taken while [`MAX_IN_FLIGHT_PER_JOB`] × jobs entries are taken but not yet folded,
//! so a slow session holds back at most that many finished ones in the reorder buffer,
//! never the rest of the corpus.
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
use crate::session_run::{Replay, SessionRunner};
use recap_core::{Entry, Session};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

/// Entries taken from the input but not yet folded, per worker thread, at most.
pub const MAX_IN_FLIGHT_PER_JOB: usize = 4;

/// Receives each prompt dump line with the index of its strategy.
pub type DumpHook<'a> = dyn FnMut(usize, &str) -> io::Result<()> + 'a;

/// Receives each replayed session's outcome, in input order, with its corpus index and
/// line: per-session and per-call output streamed while the run goes, never held whole.
pub type SessionHook<'a> = dyn FnMut(usize, usize, &SessionOutcome) -> io::Result<()> + 'a;

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
    I: Iterator<Item = (usize, Entry)>,
{
    let jobs = cfg.jobs.max(1);
    let mut pool = Pool::new(SessionRunner::owning(cfg.clone()), corpora.clone());
    for _ in 0..jobs {
        pool.spawn().map_err(|e| HarnessError::Pool {
            jobs,
            message: e.to_string(),
        })?;
    }
    let mut agg = Aggregator::new(cfg, corpora);
    let mut dump_error: Option<io::Error> = None;
    let mut session_error: Option<io::Error> = None;
    let window = jobs * MAX_IN_FLIGHT_PER_JOB;
    let mut entries = entries.enumerate();
    let mut input_done = false;
    let mut pending: BTreeMap<usize, Processed> = BTreeMap::new();
    let mut next = 0usize;
    loop {
        // Work for every idle worker: a session given up by a stuck worker first, then
        // the next entries, as long as the window allows.
        while pool.has_idle() {
            let work = match pool.requeued.pop_front() {
                Some(work) => work,
                None if input_done || pool.taken >= next + window => break,
                None => match entries.next() {
                    None => {
                        input_done = true;
                        break;
                    }
                    Some((seq, (corpus, entry))) => {
                        pool.taken = seq + 1;
                        match entry.session {
                            Ok(session) => Work {
                                seq,
                                corpus,
                                line: entry.line,
                                session: Arc::new(session),
                                replays: Vec::new(),
                            },
                            Err(rejected) => {
                                let line = entry.line;
                                let outcome = Err(rejected);
                                pending.insert(
                                    seq,
                                    Processed {
                                        corpus,
                                        line,
                                        outcome,
                                    },
                                );
                                continue;
                            }
                        }
                    }
                },
            };
            pool.assign(work);
        }
        while let Some(p) = pending.remove(&next) {
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
            if let (Some(hook), Ok(o)) = (hooks.session.as_mut(), &p.outcome)
                && session_error.is_none()
                && let Err(e) = hook(p.corpus, p.line, o)
            {
                session_error = Some(e);
            }
            agg.add(p);
            if let Some(progress) = hooks.progress.as_mut() {
                progress(next as u64, bytes.map_or(0, |b| b.load(Ordering::Relaxed)));
            }
        }
        if !pool.busy() {
            // Nothing running: every entry taken is folded, so the window is open.
            if input_done && pool.requeued.is_empty() {
                break;
            }
            if !pool.has_idle() {
                // Every worker was lost: start one rather than wait for nothing.
                pool.spawn().map_err(|e| HarnessError::Pool {
                    jobs,
                    message: e.to_string(),
                })?;
            }
            continue;
        }
        match pool.events.recv() {
            Ok(Event::Done {
                worker,
                seq,
                outcome,
            }) => {
                let Some(work) = pool.finished(worker) else {
                    continue;
                };
                debug_assert_eq!(work.seq, seq);
                match outcome {
                    Ok(outcome) => {
                        pending.insert(
                            seq,
                            Processed {
                                corpus: work.corpus,
                                line: work.line,
                                outcome: Ok(outcome),
                            },
                        );
                    }
                    // A bug of the harness itself: fail as loudly as the run would.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Ok(Event::Stuck { worker }) => {
                pool.rescue(worker).map_err(|e| HarnessError::Pool {
                    jobs,
                    message: e.to_string(),
                })?;
            }
            // The pool holds a sender itself: never reached.
            Err(_) => break,
        }
    }
    pool.finish();
    if let Some(e) = dump_error {
        return Err(HarnessError::Dump(e));
    }
    if let Some(e) = session_error {
        return Err(HarnessError::SessionHook(e));
    }
    Ok(agg.finish())
}

/// One session for a worker.
#[derive(Clone)]
struct Work {
    seq: usize,
    corpus: usize,
    line: usize,
    session: Arc<Session>,
    /// Strategies whose calls overran on a worker that was given up.
    replays: Vec<Replay>,
}

enum Event {
    Done {
        worker: usize,
        seq: usize,
        outcome: std::thread::Result<SessionOutcome>,
    },
    /// The worker is stuck in a call that overran ([`recap_core::rescue`]).
    Stuck { worker: usize },
}

struct Worker {
    work: mpsc::Sender<Work>,
    /// The strategy and call it renders ([`crate::session_run::progress`]).
    progress: Arc<AtomicU64>,
    thread: JoinHandle<()>,
    /// The session it processes.
    current: Option<Work>,
}

/// The worker threads. They own what they use, so that one stuck in a call that never
/// returns can be left behind: its session goes to a new worker, and the run ends
/// without it.
struct Pool {
    runner: Arc<SessionRunner<'static>>,
    corpora: Arc<[String]>,
    workers: BTreeMap<usize, Worker>,
    idle: Vec<usize>,
    next_id: usize,
    events: mpsc::Receiver<Event>,
    events_tx: mpsc::Sender<Event>,
    /// Sessions of workers given up, to be processed again.
    requeued: VecDeque<Work>,
    /// Entries taken from the input.
    taken: usize,
}

impl Pool {
    fn new(runner: SessionRunner<'static>, corpora: Vec<String>) -> Self {
        let (events_tx, events) = mpsc::channel();
        Pool {
            runner: Arc::new(runner),
            corpora: corpora.into(),
            workers: BTreeMap::new(),
            idle: Vec::new(),
            next_id: 0,
            events,
            events_tx,
            requeued: VecDeque::new(),
            taken: 0,
        }
    }

    fn spawn(&mut self) -> io::Result<()> {
        let id = self.next_id;
        let (work, inbox) = mpsc::channel::<Work>();
        let progress = Arc::new(AtomicU64::new(0));
        let (runner, corpora) = (Arc::clone(&self.runner), Arc::clone(&self.corpora));
        let (events, slot) = (self.events_tx.clone(), Arc::clone(&progress));
        let thread = std::thread::Builder::new()
            .name(format!("recap-worker-{id}"))
            .spawn(move || work_loop(id, &inbox, &events, &runner, &corpora, slot))?;
        self.next_id += 1;
        self.workers.insert(
            id,
            Worker {
                work,
                progress,
                thread,
                current: None,
            },
        );
        self.idle.push(id);
        Ok(())
    }

    fn has_idle(&self) -> bool {
        !self.idle.is_empty()
    }

    fn busy(&self) -> bool {
        self.workers.values().any(|w| w.current.is_some())
    }

    fn assign(&mut self, work: Work) {
        let Some(id) = self.idle.pop() else {
            self.requeued.push_front(work);
            return;
        };
        let Some(worker) = self.workers.get_mut(&id) else {
            self.requeued.push_front(work);
            return;
        };
        if worker.work.send(work.clone()).is_err() {
            // The worker is gone (it panicked outside a session): give the work to
            // another; its own panic, if any, comes as an event.
            self.workers.remove(&id);
            self.requeued.push_front(work);
            return;
        }
        worker.current = Some(work);
    }

    /// The work a worker finished, if the worker still counts (one given up does not).
    fn finished(&mut self, id: usize) -> Option<Work> {
        let worker = self.workers.get_mut(&id)?;
        let work = worker.current.take()?;
        self.idle.push(id);
        Some(work)
    }

    /// Gives up a stuck worker: its session is processed again by a new worker, with
    /// the strategy it was rendering replayed up to the call that overran (a strategy
    /// that overran twice in the same session is not run in it again).
    fn rescue(&mut self, id: usize) -> io::Result<()> {
        let Some(mut worker) = self.workers.remove(&id) else {
            return Ok(());
        };
        let Some(mut work) = worker.current.take() else {
            self.workers.insert(id, worker);
            return Ok(());
        };
        let (strategy, call) = crate::session_run::progress(&worker.progress);
        match work.replays.iter_mut().find(|r| r.strategy == strategy) {
            Some(r) => r.overran_at = 0,
            None => work.replays.push(Replay {
                strategy,
                overran_at: call,
            }),
        }
        // Left behind: it ends if its call ever returns, finding its inbox closed.
        drop(worker);
        self.requeued.push_back(work);
        self.spawn()
    }

    /// Closes the inboxes and waits for the workers that were not given up.
    fn finish(self) {
        let threads: Vec<JoinHandle<()>> = self
            .workers
            .into_values()
            .map(|w| {
                drop(w.work);
                w.thread
            })
            .collect();
        for thread in threads {
            // A worker's panic was reported as an event already.
            let _ = thread.join();
        }
    }
}

fn work_loop(
    id: usize,
    inbox: &mpsc::Receiver<Work>,
    events: &mpsc::Sender<Event>,
    runner: &SessionRunner<'static>,
    corpora: &[String],
    progress: Arc<AtomicU64>,
) {
    crate::session_run::note_progress_in(progress);
    let stuck = events.clone();
    recap_core::rescue::set_thread_rescue(Some(Arc::new(move || {
        // The receiver only goes away when the run is over.
        let _ = stuck.send(Event::Stuck { worker: id });
    })));
    for work in inbox {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            runner.process_replaying(&corpora[work.corpus], &work.session, &work.replays)
        }));
        if recap_core::rescue::take_abandoned() {
            // This worker was given up while it waited: its session is done elsewhere.
            return;
        }
        let done = Event::Done {
            worker: id,
            seq: work.seq,
            outcome,
        };
        if events.send(done).is_err() {
            return;
        }
    }
}
