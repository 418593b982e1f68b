//! The parallel driver: sessions processed on a local rayon pool and folded strictly in
//! input order (corpus order, then line order), so every number in the report —
//! floating point included — is the same whatever the job count.
//!
//! Memory stays bounded whatever the corpus: workers take entries from the input one
//! at a time, and no entry is taken while [`MAX_IN_FLIGHT_PER_JOB`] × jobs entries are
//! taken but not yet folded. A slow session therefore holds back at most that many
//! finished ones in the reorder buffer, never the rest of the corpus.

use crate::aggregate::Aggregator;
use crate::config::{HarnessError, RunConfig};
use crate::outcome::{Processed, SessionOutcome};
use crate::report::Report;
use crate::session_run::SessionRunner;
use recap_core::Entry;
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

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
    I: Iterator<Item = (usize, Entry)> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let jobs = cfg.jobs.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("recap-worker-{i}"))
        .build()
        .map_err(|e| HarnessError::Pool {
            jobs,
            message: e.to_string(),
        })?;
    let runner = SessionRunner::new(cfg);
    let mut agg = Aggregator::new(cfg, corpora.clone());
    let mut dump_error: Option<io::Error> = None;
    let mut session_error: Option<io::Error> = None;
    let window = Window::new(jobs * MAX_IN_FLIGHT_PER_JOB);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Processed)>(window.size);
    std::thread::scope(|scope| {
        let runner = &runner;
        let corpora = &corpora;
        let window = &window;
        scope.spawn(move || {
            pool.install(|| {
                window
                    .admit(entries.enumerate())
                    .par_bridge()
                    .for_each_with(tx, |tx, (seq, (corpus, entry))| {
                        let outcome = entry.session.map(|s| runner.process(&corpora[corpus], &s));
                        let processed = Processed {
                            corpus,
                            line: entry.line,
                            outcome,
                        };
                        // The receiver only goes away when the run is over.
                        let _ = tx.send((seq, processed));
                    });
            });
        });
        // Closes the window however this ends, so no worker waits for it forever.
        let folding = window.folder();
        let mut pending: BTreeMap<usize, Processed> = BTreeMap::new();
        let mut next = 0usize;
        for (seq, p) in rx {
            pending.insert(seq, p);
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
                folding.folded(next);
                if let Some(progress) = hooks.progress.as_mut() {
                    progress(next as u64, bytes.map_or(0, |b| b.load(Ordering::Relaxed)));
                }
            }
        }
    });
    if let Some(e) = dump_error {
        return Err(HarnessError::Dump(e));
    }
    if let Some(e) = session_error {
        return Err(HarnessError::SessionHook(e));
    }
    Ok(agg.finish())
}

/// How far the workers may run ahead of the fold.
struct Window {
    size: usize,
    state: Mutex<WindowState>,
    moved: Condvar,
}

#[derive(Default)]
struct WindowState {
    /// Entries folded so far (the fold takes them in order).
    folded: usize,
    /// The fold is over: stop handing out entries.
    closed: bool,
}

impl Window {
    fn new(size: usize) -> Self {
        Window {
            size: size.max(1),
            state: Mutex::new(WindowState::default()),
            moved: Condvar::new(),
        }
    }

    /// `entries` (numbered in input order), handing out entry n only once fewer than
    /// `size` entries before it are unfolded.
    fn admit<I: Iterator>(&self, entries: I) -> Admitted<'_, I> {
        Admitted {
            window: self,
            inner: entries,
            taken: 0,
        }
    }

    fn folder(&self) -> Folding<'_> {
        Folding { window: self }
    }

    fn update(&self, f: impl FnOnce(&mut WindowState)) {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
        self.moved.notify_all();
    }

    /// Waits until entry `n` may be taken; false when the fold is over.
    fn wait_for(&self, n: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !state.closed && n >= state.folded + self.size {
            state = self
                .moved
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        !state.closed
    }
}

/// The fold's side of the window: it moves the window on, and closes it when dropped
/// (the fold finished, or panicked).
struct Folding<'w> {
    window: &'w Window,
}

impl Folding<'_> {
    fn folded(&self, n: usize) {
        self.window.update(|s| s.folded = n);
    }
}

impl Drop for Folding<'_> {
    fn drop(&mut self) {
        self.window.update(|s| s.closed = true);
    }
}

struct Admitted<'w, I> {
    window: &'w Window,
    inner: I,
    taken: usize,
}

impl<I: Iterator> Iterator for Admitted<'_, I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        if !self.window.wait_for(self.taken) {
            return None;
        }
        let item = self.inner.next()?;
        self.taken += 1;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// With nothing folded, exactly `size` entries are handed out; each fold admits one
    /// more; closing ends the input.
    #[test]
    fn window_hands_out_no_more_than_its_size_ahead_of_the_fold() {
        let window = Window::new(3);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let folding = window.folder();
            let (window, taken) = (&window, &taken);
            let worker = scope.spawn(move || {
                for _ in window.admit(0..100) {
                    taken.fetch_add(1, Ordering::SeqCst);
                }
            });
            let settle = |want: usize| {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                while taken.load(Ordering::SeqCst) < want && std::time::Instant::now() < deadline {
                    std::thread::yield_now();
                }
                // Give a wrongly unbounded worker time to run past the bound.
                std::thread::sleep(std::time::Duration::from_millis(50));
                taken.load(Ordering::SeqCst)
            };
            assert_eq!(settle(3), 3);
            folding.folded(1);
            assert_eq!(settle(4), 4);
            folding.folded(4);
            assert_eq!(settle(7), 7);
            drop(folding);
            worker.join().expect("worker ends once the window closes");
            assert_eq!(taken.load(Ordering::SeqCst), 7);
        });
    }
}
