//! One shard of a run: its sessions replayed as a run replays them, each entry's outcome
//! written to the part as the fold reaches it.

use super::sums::SummingWriter;
use super::wire::{Record, WireOutcome, WireRejected};
use super::{
    EntryCounts, FORMAT, FileSum, LOWEST_FILE, LowestCall, OUTCOMES_FILE, PART_FILE, PartHeader,
};
use crate::config::{HarnessError, RunConfig};
use crate::driver::{Hooks, run_entries};
use crate::lowest_retention::{CallView, LowestCalls};
use crate::outcome::SessionOutcome;
use crate::output::{CALLS_CSV, OutputDir, OutputError, PROMPTS_DIR};
use crate::report::call_rows::CallsCsv;
use crate::report::provenance::{NonDeterministic, Provenance};
use crate::shard::{Selection, Shard};
use crate::source::{corpus_entries, corpus_name};
use recap_core::{RejectedSession, Session};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// What a shard needs besides the run's configuration.
pub struct PartOptions {
    pub shard: Shard,
    /// The shard's provenance (its command line, corpora and plugins by hash).
    pub provenance: Provenance,
    /// With `--dump-prompts`: the dump file name of each strategy, in run order.
    pub prompt_files: Option<Vec<String>>,
    /// Characters of each printed value of the lowest-retention calls.
    pub lowest_max_chars: usize,
    pub started: SystemTime,
}

/// What the shard wrote.
#[derive(Debug, Clone)]
pub struct PartSummary {
    pub entries: EntryCounts,
    /// File names written into the part directory.
    pub files: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PartError {
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("writing the partial report: {0}")]
    Io(#[from] io::Error),
}

type Rejections = Arc<Mutex<VecDeque<(usize, RejectedSession)>>>;

/// Runs shard `opts.shard` of the run over `corpora` and writes its part into `out`
/// (staged; the caller commits it). `progress` hears (entries done, bytes read).
pub fn run_part(
    cfg: &RunConfig,
    corpora: &[PathBuf],
    out: &OutputDir,
    opts: PartOptions,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<PartSummary, PartError> {
    cfg.validate()?;
    let names: Vec<String> = corpora.iter().map(|p| corpus_name(p)).collect();
    let select = Arc::new(Selection::new(opts.shard));
    let bytes = Arc::new(AtomicU64::new(0));
    // Rejections are known when their line is taken, before the fold reaches them; the
    // record writer puts each in its place among the sessions.
    let rejections: Rejections = Arc::default();
    let tap = Arc::clone(&rejections);
    let entries = corpus_entries(corpora, &bytes, Some(Arc::clone(&select))).inspect(
        move |(corpus, entry)| {
            if let Err(r) = &entry.session {
                lock(&tap).push_back((*corpus, r.clone()));
            }
        },
    );

    let mut records = RecordWriter {
        out: SummingWriter::new(out.stream(OUTCOMES_FILE)?),
        rejections: Arc::clone(&rejections),
        written: 0,
        sessions: 0,
    };
    // The byte counter stays readable while the CSV writer owns the file.
    let mut calls = if cfg.call_records {
        let w = SummingWriter::new(out.stream(CALLS_CSV)?);
        let counter = w.counter();
        Some((CallsCsv::new(w, cfg, names.clone())?, counter))
    } else {
        None
    };
    let dumps = RefCell::new(opts.prompt_files.clone().map(Dumps::new));
    let mut lowest = LowestCalls::new(cfg, names.clone(), opts.lowest_max_chars);

    let mut dump = |s: usize, line: &str| -> io::Result<()> {
        match dumps.borrow_mut().as_mut() {
            Some(d) => d.write(out, s, line),
            None => Ok(()),
        }
    };
    let mut on_session =
        |corpus: usize, line: usize, session: &Session, o: &SessionOutcome| -> io::Result<()> {
            let calls_bytes = match calls.as_mut() {
                Some((w, counter)) => {
                    let before = counter.get();
                    w.session(corpus, line, o)?;
                    counter.get() - before
                }
                None => 0,
            };
            let prompt_bytes = dumps
                .borrow_mut()
                .as_mut()
                .map(Dumps::take_session)
                .unwrap_or_default();
            lowest.session(corpus, line, session, o);
            records.session(corpus, line, o, calls_bytes, prompt_bytes)
        };
    let mut progress = progress;
    let mut on_progress = |done: u64, bytes: u64| {
        if let Some(p) = progress.as_mut() {
            p(done, bytes);
        }
    };
    let hooks = Hooks {
        progress: Some(&mut on_progress),
        dump: cfg.dump_prompts.then_some(&mut dump as _),
        session: Some(&mut on_session),
    };
    let report = run_entries(cfg, names.clone(), entries, hooks, Some(&bytes))?;
    records.rest()?;

    let mut files = Vec::new();
    let (records_written, sessions) = (records.written, records.sessions);
    files.push(records.out.finish().map(sum(OUTCOMES_FILE))?);
    if let Some((w, _)) = calls {
        files.push(w.finish()?.finish().map(sum(CALLS_CSV))?);
    }
    if let Some(d) = dumps.into_inner() {
        files.extend(d.finish()?);
    }
    let (total, owned) = select.counts();
    debug_assert_eq!(owned, records_written, "one record per entry of the shard");
    let entries = EntryCounts {
        total,
        owned: records_written,
        sessions,
        rejected: report.rejected.len() as u64,
    };
    let (lowest_retention, views) = lowest_calls(lowest);
    let mut text = Vec::new();
    for v in &views {
        serde_json::to_writer(&mut text, v).map_err(io::Error::from)?;
        text.push(b'\n');
    }
    let mut w = SummingWriter::new(Vec::new());
    w.write_all(&text)?;
    files.push(w.finish().map(sum(LOWEST_FILE))?);
    out.write(LOWEST_FILE, &text)?;
    let finished = SystemTime::now();
    let header = PartHeader {
        format: FORMAT.to_string(),
        shard: opts.shard.into(),
        run: cfg.shape(),
        corpora: names,
        provenance: opts.provenance,
        calls_csv: cfg.call_records,
        prompt_files: opts.prompt_files,
        entries,
        files: files.clone(),
        lowest_retention,
        ran: NonDeterministic::new(opts.started, finished),
        started_unix: opts
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    };
    out.write_with(PART_FILE, |w| {
        serde_json::to_writer_pretty(&mut *w, &header)?;
        w.write_all(b"\n")
    })?;
    let mut written: Vec<String> = files.into_iter().map(|f| f.name).collect();
    written.push(PART_FILE.to_string());
    Ok(PartSummary {
        entries,
        files: written,
    })
}

/// Per strategy, the shard's first call of lowest retention, and its texts (each call's
/// `view` is the index of its texts): any of them may be the whole run's, so every
/// strategy's is kept, not only the few a report shows.
fn lowest_calls(lowest: LowestCalls<'_>) -> (Vec<LowestCall>, Vec<CallView>) {
    let mut views = Vec::new();
    let calls = lowest
        .all()
        .into_iter()
        .map(|(pick, view)| LowestCall {
            pick,
            view: view.map(|v| {
                views.push(v);
                views.len() - 1
            }),
        })
        .collect();
    (calls, views)
}

fn lock(r: &Rejections) -> std::sync::MutexGuard<'_, VecDeque<(usize, RejectedSession)>> {
    r.lock().unwrap_or_else(PoisonError::into_inner)
}

fn sum(name: &str) -> impl FnOnce((u64, String)) -> FileSum + '_ {
    move |(bytes, sha256)| FileSum {
        name: name.to_string(),
        bytes,
        sha256,
    }
}

/// `outcomes.jsonl`, one record per entry in corpus order.
struct RecordWriter {
    out: SummingWriter<BufWriter<File>>,
    rejections: Rejections,
    written: u64,
    sessions: u64,
}

impl RecordWriter {
    fn write(&mut self, record: &Record) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")?;
        self.written += 1;
        Ok(())
    }

    /// The rejections before `(corpus, line)` (all of them for `None`).
    fn rejections_before(&mut self, at: Option<(usize, usize)>) -> io::Result<()> {
        loop {
            let next = {
                let mut queue = lock(&self.rejections);
                match queue.front() {
                    Some((c, r)) if at.is_none_or(|at| (*c, r.line) < at) => queue.pop_front(),
                    _ => None,
                }
            };
            let Some((corpus, r)) = next else {
                return Ok(());
            };
            self.write(&Record {
                corpus,
                line: r.line,
                session: None,
                rejected: Some(WireRejected::from(&r)),
                calls_bytes: 0,
                prompt_bytes: Vec::new(),
            })?;
        }
    }

    fn session(
        &mut self,
        corpus: usize,
        line: usize,
        o: &SessionOutcome,
        calls_bytes: u64,
        prompt_bytes: Vec<u64>,
    ) -> io::Result<()> {
        self.rejections_before(Some((corpus, line)))?;
        self.sessions += 1;
        self.write(&Record {
            corpus,
            line,
            session: Some(WireOutcome::from(o)),
            rejected: None,
            calls_bytes,
            prompt_bytes,
        })
    }

    /// The rejections after the last session.
    fn rest(&mut self) -> io::Result<()> {
        self.rejections_before(None)
    }
}

/// The prompt dumps of a part: a file per strategy, created at its first line, with the
/// bytes each session wrote.
struct Dumps {
    names: Vec<String>,
    files: Vec<Option<SummingWriter<BufWriter<File>>>>,
    /// Bytes of the session being dumped, per strategy.
    session: Vec<u64>,
}

impl Dumps {
    fn new(names: Vec<String>) -> Self {
        Dumps {
            files: names.iter().map(|_| None).collect(),
            session: vec![0; names.len()],
            names,
        }
    }

    fn path(&self, s: usize) -> String {
        format!("{PROMPTS_DIR}/{}", self.names[s])
    }

    fn write(&mut self, out: &OutputDir, s: usize, line: &str) -> io::Result<()> {
        if self.files[s].is_none() {
            let w = out.stream(&self.path(s)).map_err(io::Error::other)?;
            self.files[s] = Some(SummingWriter::new(w));
        }
        if let Some(w) = self.files[s].as_mut() {
            w.write_all(line.as_bytes())?;
            w.write_all(b"\n")?;
        }
        self.session[s] += line.len() as u64 + 1;
        Ok(())
    }

    /// Bytes each strategy wrote for the session just done.
    fn take_session(&mut self) -> Vec<u64> {
        std::mem::replace(&mut self.session, vec![0; self.names.len()])
    }

    fn finish(self) -> io::Result<Vec<FileSum>> {
        let mut sums = Vec::new();
        for (s, w) in self.files.into_iter().enumerate() {
            if let Some(w) = w {
                let (bytes, sha256) = w.finish()?;
                sums.push(FileSum {
                    name: format!("{PROMPTS_DIR}/{}", self.names[s]),
                    bytes,
                    sha256,
                });
            }
        }
        Ok(sums)
    }
}
