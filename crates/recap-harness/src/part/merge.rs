//! The merge: every part's records read in corpus order and folded as the run folds its
//! sessions; `calls.csv` and the prompt dumps copied session by session in that order.

use super::read::{MergeError, Part};
use super::sums::SummingReader;
use super::wire::Record;
use super::{FileSum, LOWEST_FILE, OUTCOMES_FILE, PartHeader};
use crate::aggregate::Aggregator;
use crate::lowest_retention::{CallView, LowestRetention};
use crate::outcome::Processed;
use crate::output::{CALLS_CSV, OutputDir, PROMPTS_DIR};
use crate::report::Report;
use crate::report::provenance::{NonDeterministic, ShardRun, ShardTime, rfc3339};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the merge is asked besides its parts.
pub struct MergeOptions {
    /// The merge's own command line (the merged report's `provenance.command_line`).
    pub command_line: Vec<String>,
    /// Calls of lowest retention the HTML report shows (as `recap run` does).
    pub lowest_calls: usize,
}

/// The merged report, the texts of its lowest-retention calls, and the files the merge
/// streamed into the output directory (`calls.csv`, `prompts/`).
pub struct Merged {
    pub report: Report,
    pub lowest: Vec<CallView>,
    pub files: Vec<String>,
}

type Reader = SummingReader<BufReader<File>>;

/// One part being read.
struct Reading<'p> {
    part: &'p Part,
    records: Reader,
    /// Records read so far, and where the last one was.
    read: u64,
    last: Option<(usize, usize)>,
    calls: Option<Reader>,
    prompts: Vec<Option<Reader>>,
}

impl<'p> Reading<'p> {
    fn open(part: &'p Part, copy: bool) -> Result<Self, MergeError> {
        let h = &part.header;
        let mut calls = None;
        if copy && h.calls_csv {
            calls = Some(open(&part.dir, CALLS_CSV)?);
        }
        let mut prompts = Vec::new();
        if copy && let Some(names) = &h.prompt_files {
            for name in names {
                let rel = format!("{PROMPTS_DIR}/{name}");
                let listed = h.files.iter().any(|f| f.name == rel);
                prompts.push(if listed {
                    Some(open(&part.dir, &rel)?)
                } else {
                    None
                });
            }
        }
        Ok(Reading {
            part,
            records: open(&part.dir, OUTCOMES_FILE)?,
            read: 0,
            last: None,
            calls,
            prompts,
        })
    }

    fn damaged(&self, why: impl Into<String>) -> MergeError {
        MergeError::Damaged {
            dir: self.part.dir.clone(),
            why: why.into(),
        }
    }

    fn next(&mut self) -> Result<Option<Record>, MergeError> {
        let mut line = String::new();
        let n = self
            .records
            .read_line(&mut line)
            .map_err(|e| self.damaged(format!("{OUTCOMES_FILE}: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.read += 1;
        let record: Record = serde_json::from_str(&line)
            .map_err(|e| self.damaged(format!("{OUTCOMES_FILE} record {}: {e}", self.read)))?;
        let at = (record.corpus, record.line);
        if self.last.is_some_and(|last| last >= at)
            || record.corpus >= self.part.header.corpora.len()
        {
            return Err(self.damaged(format!(
                "{OUTCOMES_FILE} record {} is out of order (corpus {}, line {})",
                self.read, record.corpus, record.line
            )));
        }
        self.last = Some(at);
        Ok(Some(record))
    }

    /// Checks that every file read was read whole and is what the shard wrote.
    fn check_end(self) -> Result<(), MergeError> {
        let h = &self.part.header;
        if self.read != h.entries.owned {
            return Err(self.damaged(format!(
                "{OUTCOMES_FILE} has {} records, {} says {}",
                self.read,
                super::PART_FILE,
                h.entries.owned
            )));
        }
        let dir = self.part.dir.clone();
        check_sum(&dir, h, OUTCOMES_FILE, self.records)?;
        if let Some(r) = self.calls {
            check_sum(&dir, h, CALLS_CSV, r)?;
        }
        if let Some(names) = &h.prompt_files {
            for (name, r) in names.iter().zip(self.prompts) {
                if let Some(r) = r {
                    check_sum(&dir, h, &format!("{PROMPTS_DIR}/{name}"), r)?;
                }
            }
        }
        Ok(())
    }
}

fn open(dir: &Path, name: &str) -> Result<Reader, MergeError> {
    let path = dir.join(name);
    let file = File::open(&path).map_err(|source| MergeError::Read { path, source })?;
    Ok(SummingReader::new(BufReader::with_capacity(1 << 16, file)))
}

fn check_sum(dir: &Path, h: &PartHeader, name: &str, mut r: Reader) -> Result<(), MergeError> {
    let damaged = |why: String| MergeError::Damaged {
        dir: dir.to_path_buf(),
        why,
    };
    if !r.at_end().map_err(|e| damaged(format!("{name}: {e}")))? {
        return Err(damaged(format!("{name} goes on past its last record")));
    }
    let (bytes, sha256) = r.sum();
    let listed = h.files.iter().find(|f| f.name == name);
    if listed
        != Some(&FileSum {
            name: name.to_string(),
            bytes,
            sha256,
        })
    {
        return Err(damaged(format!(
            "{name} is not the file the shard wrote ({bytes} bytes; its size or SHA-256 differs from {})",
            super::PART_FILE
        )));
    }
    Ok(())
}

/// Where the merge writes `calls.csv` and the prompt dumps.
struct Outputs<'o> {
    out: &'o OutputDir,
    calls: Option<BufWriter<File>>,
    prompts: Vec<Option<BufWriter<File>>>,
    names: Vec<String>,
}

impl Outputs<'_> {
    /// Strategy `s`'s dump, created at its first line (as a run creates it).
    fn prompt(&mut self, s: usize) -> Result<&mut BufWriter<File>, MergeError> {
        let name = format!("{PROMPTS_DIR}/{}", self.names[s]);
        let slot = &mut self.prompts[s];
        Ok(match slot {
            Some(w) => w,
            None => slot.insert(self.out.stream(&name)?),
        })
    }

    fn finish(self) -> Result<Vec<String>, MergeError> {
        let mut files = Vec::new();
        if let Some(mut w) = self.calls {
            w.flush().map_err(MergeError::Write)?;
            files.push(CALLS_CSV.to_string());
        }
        let mut dumped = false;
        for mut w in self.prompts.into_iter().flatten() {
            w.flush().map_err(MergeError::Write)?;
            dumped = true;
        }
        if dumped {
            files.push(format!("{PROMPTS_DIR}/"));
        }
        Ok(files)
    }
}

/// Copies `n` bytes of a part's file into the merged one.
fn copy(from: &mut Reader, to: &mut dyn Write, n: u64, what: &str) -> Result<(), String> {
    let copied = io::copy(&mut from.by_ref().take(n), to).map_err(|e| format!("{what}: {e}"))?;
    if copied != n {
        return Err(format!("{what} ends before a session's {n} bytes"));
    }
    Ok(())
}

/// Merges `parts` (from [`super::open_parts`]) into the report the whole run would have
/// written; with `out`, also its `calls.csv` and prompt dumps (staged there).
pub fn merge(
    parts: &[Part],
    out: Option<&OutputDir>,
    opts: &MergeOptions,
) -> Result<Merged, MergeError> {
    let first = &parts.first().ok_or(MergeError::NoParts)?.header;
    let mut readings = parts
        .iter()
        .map(|p| Reading::open(p, out.is_some()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outputs = match out {
        Some(out) => Some(Outputs {
            out,
            calls: match first.calls_csv {
                true => Some(calls_header(out, &mut readings)?),
                false => None,
            },
            prompts: first.run.strategies.iter().map(|_| None).collect(),
            names: first.prompt_files.clone().unwrap_or_default(),
        }),
        None => None,
    };
    let corpora: Vec<PathBuf> = first.corpora.iter().map(PathBuf::from).collect();
    let mut agg = Aggregator::of_shape(first.run.clone(), first.corpora.clone());
    let mut heads: Vec<Option<Record>> = Vec::with_capacity(parts.len());
    let mut heap = BinaryHeap::new();
    for (i, r) in readings.iter_mut().enumerate() {
        let head = r.next()?;
        if let Some(rec) = &head {
            heap.push(Reverse((rec.corpus, rec.line, i)));
        }
        heads.push(head);
    }
    let mut last: Option<(usize, usize)> = None;
    while let Some(Reverse((corpus, line, i))) = heap.pop() {
        let Some(record) = heads[i].take() else {
            continue;
        };
        if last == Some((corpus, line)) {
            return Err(readings[i].damaged(format!(
                "corpus {} line {line} is in two parts",
                first.corpora[corpus]
            )));
        }
        last = Some((corpus, line));
        if let Some(o) = outputs.as_mut() {
            copy_session(&mut readings[i], o, &record)?;
        }
        let entry = record
            .into_entry(&corpora[corpus])
            .map_err(|e| readings[i].damaged(format!("{OUTCOMES_FILE}: {e}")))?;
        if let Ok(o) = &entry
            && !fits(o, &first.run)
        {
            return Err(readings[i].damaged(format!(
                "{OUTCOMES_FILE}: session {:?} has not one outcome per strategy and tokenizer",
                o.id
            )));
        }
        agg.add(Processed {
            corpus,
            line,
            outcome: entry,
        });
        heads[i] = readings[i].next()?;
        if let Some(rec) = &heads[i] {
            heap.push(Reverse((rec.corpus, rec.line, i)));
        }
    }
    for r in readings {
        r.check_end()?;
    }
    let files = match outputs {
        Some(o) => o.finish()?,
        None => Vec::new(),
    };
    let mut report = agg.finish();
    report.provenance = Some(provenance(parts, opts));
    report.non_deterministic = Some(ran(parts));
    Ok(Merged {
        report,
        lowest: lowest(parts, opts.lowest_calls)?,
        files,
    })
}

/// Whether an outcome has one entry per strategy of the run, each with one per tokenizer
/// (what the fold indexes by).
fn fits(o: &crate::outcome::SessionOutcome, run: &crate::config::RunShape) -> bool {
    o.strategies.len() == run.strategies.len()
        && o.strategies
            .iter()
            .all(|s| s.toks.len() == run.tokenizers.len())
}

/// Opens the merged `calls.csv` with the parts' header line (each part's read past it).
fn calls_header(out: &OutputDir, readings: &mut [Reading]) -> Result<BufWriter<File>, MergeError> {
    let mut header: Option<Vec<u8>> = None;
    for r in readings.iter_mut() {
        let mut line = Vec::new();
        let Some(calls) = r.calls.as_mut() else {
            continue;
        };
        calls
            .read_until(b'\n', &mut line)
            .map_err(|e| r.damaged(format!("{CALLS_CSV}: {e}")))?;
        match &header {
            Some(h) if *h != line => {
                return Err(r.damaged(format!("{CALLS_CSV} has another header line")));
            }
            Some(_) => {}
            None => header = Some(line),
        }
    }
    let mut w = out.stream(CALLS_CSV)?;
    w.write_all(&header.unwrap_or_default())
        .map_err(MergeError::Write)?;
    Ok(w)
}

fn copy_session(r: &mut Reading, o: &mut Outputs, record: &Record) -> Result<(), MergeError> {
    if let (Some(from), Some(to)) = (r.calls.as_mut(), o.calls.as_mut()) {
        copy(from, to, record.calls_bytes, CALLS_CSV).map_err(|why| MergeError::Damaged {
            dir: r.part.dir.clone(),
            why,
        })?;
    }
    for (s, &n) in record.prompt_bytes.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let what = format!(
            "{PROMPTS_DIR}/{}",
            o.names.get(s).map_or("", String::as_str)
        );
        let Some(Some(from)) = r.prompts.get_mut(s) else {
            return Err(r.damaged(format!("{what} is missing")));
        };
        let to = o.prompt(s)?;
        copy(from, to, n, &what).map_err(|why| MergeError::Damaged {
            dir: r.part.dir.clone(),
            why,
        })?;
    }
    Ok(())
}

/// The first part's provenance (the parts agree on all of it but their command lines),
/// with the merge's command line and each shard's.
fn provenance(parts: &[Part], opts: &MergeOptions) -> crate::report::Provenance {
    let mut p = parts[0].header.provenance.clone();
    p.command_line = opts.command_line.clone();
    p.shards = parts
        .iter()
        .map(|part| ShardRun {
            shard: part.header.shard.to_string(),
            command_line: part.header.provenance.command_line.clone(),
        })
        .collect();
    p
}

/// The run spans the first shard's start to the merge's end.
fn ran(parts: &[Part]) -> NonDeterministic {
    let started = parts
        .iter()
        .map(|p| p.header.started_unix)
        .fold(f64::INFINITY, f64::min);
    let started = UNIX_EPOCH + Duration::try_from_secs_f64(started).unwrap_or_default();
    let mut ran = NonDeterministic::new(started, SystemTime::now());
    ran.started_at = rfc3339(started);
    ran.shards = parts
        .iter()
        .map(|p| ShardTime {
            shard: p.header.shard.to_string(),
            started_at: p.header.ran.started_at.clone(),
            finished_at: p.header.ran.finished_at.clone(),
            elapsed_seconds: p.header.ran.elapsed_seconds,
        })
        .collect();
    ran
}

/// The calls of lowest retention over all shards: each shard's first lowest per
/// strategy, offered in corpus order, gives the whole run's first lowest; the texts of
/// those shown are read from their parts.
fn lowest(parts: &[Part], n: usize) -> Result<Vec<CallView>, MergeError> {
    let mut calls: Vec<(usize, &super::LowestCall)> = parts
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.header.lowest_retention.iter().map(move |c| (i, c)))
        .collect();
    calls.sort_by_key(|(_, c)| (c.pick.corpus, c.pick.line, c.pick.call, c.pick.strategy));
    let mut worst = LowestRetention::with_baseline(parts[0].header.run.baseline);
    for (_, c) in &calls {
        worst.offer(c.pick.clone());
    }
    let mut texts: Vec<Option<Vec<String>>> = parts.iter().map(|_| None).collect();
    let mut views = Vec::new();
    for pick in worst.picks(n) {
        let Some(&(i, call)) = calls.iter().find(|(_, c)| c.pick == pick) else {
            continue;
        };
        let Some(at) = call.view else {
            // Its corpus no longer held it when the shard looked: as in a run, left out.
            continue;
        };
        if texts[i].is_none() {
            texts[i] = Some(lowest_texts(&parts[i])?);
        }
        let line = texts[i].as_ref().and_then(|t| t.get(at));
        let view = line.and_then(|l| serde_json::from_str::<CallView>(l).ok());
        views.push(view.ok_or_else(|| MergeError::Damaged {
            dir: parts[i].dir.clone(),
            why: format!("{LOWEST_FILE} has no texts {at}"),
        })?);
    }
    Ok(views)
}

/// The lines of a part's [`LOWEST_FILE`], checked against its header.
fn lowest_texts(part: &Part) -> Result<Vec<String>, MergeError> {
    let mut r = open(&part.dir, LOWEST_FILE)?;
    let mut text = String::new();
    r.read_to_string(&mut text)
        .map_err(|e| MergeError::Damaged {
            dir: part.dir.clone(),
            why: format!("{LOWEST_FILE}: {e}"),
        })?;
    check_sum(&part.dir, &part.header, LOWEST_FILE, r)?;
    Ok(text.lines().map(String::from).collect())
}
