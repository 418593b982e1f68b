//! `recap merge PART_DIR... --out DIR`: the partial reports of a sharded run
//! (`recap run --shard I/N`) folded into the report the whole run would have written
//! (docs/scale.md). Refused, with nothing written, unless the parts are every shard of
//! one run, each once and finished.

use super::run::{Format, LOWEST_CALLS};
use anyhow::{Result, bail};
use recap_harness::output::OutputDir;
use recap_harness::part::{MergeOptions, merge, open_parts};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The shards' --out directories: every shard of one run, each once, in any order.
    #[arg(value_name = "PART_DIR", required = true)]
    parts: Vec<PathBuf>,
    /// Write every format, the SVG charts, report.html, sessions.csv and calls.csv (and
    /// prompts/ when the shards dumped them) into DIR (refused if DIR holds files).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// With --out: replace recap's files in a non-empty DIR.
    #[arg(long)]
    force: bool,
    /// Format printed on stdout. [default: table]
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// The output directory cannot be one of the parts: its files would replace theirs.
fn check_out(out: &Path, parts: &[PathBuf]) -> Result<()> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if let Some(p) = parts.iter().find(|p| same(out, p)) {
        bail!(
            "--out {} is one of the parts being merged; choose another directory",
            p.display()
        );
    }
    Ok(())
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.force && args.out.is_none() {
        bail!("--force needs an output directory: --out DIR");
    }
    // Every refusal comes before the output directory is made.
    let parts = open_parts(&args.parts)?;
    let out_dir = match &args.out {
        Some(dir) => {
            check_out(dir, &args.parts)?;
            Some(OutputDir::create(dir, args.force)?)
        }
        None => None,
    };
    let opts = MergeOptions {
        command_line: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        lowest_calls: LOWEST_CALLS,
    };
    let merged = merge(&parts, out_dir.as_ref(), &opts)?;
    let report = merged.report;
    let rejections = super::problems::rejections(&report.rejected);
    if report.settings.corpora.iter().all(|c| c.sessions == 0) {
        for line in &rejections {
            crate::say!("{line}");
        }
        return Err(super::run::no_sessions(&report));
    }
    if let Some(out) = out_dir {
        let mut files = recap_harness::write_report(&out, &report, &merged.lowest)?;
        files.extend(merged.files);
        let dir = out.commit()?;
        crate::say!(
            "merged {} parts; report written to {}: {}",
            parts.len(),
            dir.display(),
            files.join(", ")
        );
        if let Ok(meta) = std::fs::metadata(dir.join("report.json")) {
            let json = dir.join("report.json").display().to_string();
            super::run::note_large_report(&json, meta.len(), &report);
        }
    }
    let format = args.format.unwrap_or(Format::Table);
    let printed = super::run::print_report(&report, format)?;
    if format == Format::Json {
        super::run::note_large_report("the JSON report on stdout", printed, &report);
    }
    for line in rejections
        .iter()
        .chain(&super::problems::strategy_problems(&report))
    {
        crate::say!("{line}");
    }
    let plugins_failed = report
        .provenance
        .as_ref()
        .is_some_and(|p| !p.plugin_failures.is_empty());
    Ok(
        if report.has_problems() || !report.rejected.is_empty() || plugins_failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}
