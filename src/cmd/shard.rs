//! `recap run --shard I/N --out DIR`: one shard of a run, written as a partial report
//! that `recap merge` folds with the others into the whole run's report (docs/scale.md).

use anyhow::{Context, Result};
use recap_harness::output::OutputDir;
use recap_harness::part::{PartOptions, run_part};
use recap_harness::report::provenance::Provenance;
use recap_harness::{RunConfig, Shard};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

/// A shard of a configured run.
pub struct Job<'a> {
    shard: Shard,
    cfg: &'a RunConfig,
    corpora: &'a [PathBuf],
    provenance: Provenance,
    started: SystemTime,
}

impl<'a> Job<'a> {
    pub fn new(
        shard: Shard,
        cfg: &'a RunConfig,
        corpora: &'a [PathBuf],
        provenance: Provenance,
        started: SystemTime,
    ) -> Self {
        Job {
            shard,
            cfg,
            corpora,
            provenance,
            started,
        }
    }
}

/// Runs the shard into `out` (required: `recap run` refuses `--shard` without `--out`).
/// Exits 0 once the part is written, whatever its sessions hold: rejections and
/// problems count in the merged report, whose exit code is the run's.
pub fn run(job: Job<'_>, out: Option<OutputDir>) -> Result<ExitCode> {
    let out = out.context("--shard needs an output directory: --out DIR")?;
    let cfg = job.cfg;
    let prompt_files = cfg.dump_prompts.then(|| {
        let mut taken = Vec::new();
        cfg.strategies
            .iter()
            .map(|s| super::run::dump_file_name(&s.name, &mut taken))
            .collect()
    });
    let bar = super::run::progress_bar(job.provenance.corpora.iter().map(|c| c.bytes).sum());
    let mut progress = |done: u64, bytes: u64| {
        if let Some(b) = &bar {
            b.set_position(bytes);
            b.set_message(format!("{done} entries of shard {}", job.shard));
        }
    };
    let opts = PartOptions {
        shard: job.shard,
        provenance: job.provenance,
        prompt_files,
        lowest_max_chars: super::run::LOWEST_MAX_CHARS,
        started: job.started,
    };
    let summary = run_part(cfg, job.corpora, &out, opts, Some(&mut progress))?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let dir = out.commit()?;
    let e = summary.entries;
    let mut files: Vec<&str> = Vec::new();
    for f in &summary.files {
        let f = match f.split_once('/') {
            Some((dir, _)) => &f[..=dir.len()],
            None => f.as_str(),
        };
        if !files.contains(&f) {
            files.push(f);
        }
    }
    crate::say!(
        "shard {}: {} of the corpora's {} entries ({} sessions, {} rejected); partial report written to {}: {}; `recap merge` the {} parts for the report",
        job.shard,
        e.owned,
        e.total,
        e.sessions,
        e.rejected,
        dir.display(),
        files.join(", "),
        job.shard.count()
    );
    Ok(ExitCode::SUCCESS)
}
