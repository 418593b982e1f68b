//! Sharded runs from Python: one shard written as a partial report, as `recap run
//! --shard I/N --out DIR` writes it, and the merge of the parts into the whole run's
//! report, as `recap merge` folds them. Both are the harness's own code
//! (`recap_harness::part`); `recap_replay.ray` runs the shards as Ray tasks.

use crate::bridge::SignalWatch;
use crate::errors::recap_error;
use crate::report::PyReport;
use crate::run::{Configured, Settings, configure, no_sessions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use recap_harness::Shard;
use recap_harness::lowest_retention;
use recap_harness::output::OutputDir;
use recap_harness::part::{MergeOptions, PartOptions, merge, open_parts, run_part};
use std::path::PathBuf;
use std::time::SystemTime;

/// Runs shard `index` of `count` into the part directory `out` (refused if it holds
/// files, unless `force`); returns what it wrote. Ctrl-C, or a Python strategy raising
/// `KeyboardInterrupt`, stops it with nothing written.
#[pyfunction]
#[pyo3(signature = (corpora, strategies, tokenizers, plugins, jobs, settings, command_line, index, count, out, force))]
#[allow(clippy::too_many_arguments)]
pub fn run_shard<'py>(
    py: Python<'py>,
    corpora: Vec<PathBuf>,
    strategies: Option<Vec<Bound<'_, PyAny>>>,
    tokenizers: Vec<String>,
    plugins: Vec<PathBuf>,
    jobs: Option<usize>,
    settings: Settings,
    command_line: Vec<String>,
    index: u32,
    count: u32,
    out: PathBuf,
    force: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let started = SystemTime::now();
    let shard = Shard::new(index, count).map_err(|e| recap_error(py, e.to_string()))?;
    let Configured {
        cfg,
        interrupt,
        provenance,
    } = configure(
        py,
        &corpora,
        strategies,
        &tokenizers,
        &plugins,
        jobs,
        &settings,
        command_line,
    )?;
    let dir = OutputDir::create(&out, force).map_err(|e| recap_error(py, e.to_string()))?;
    let opts = PartOptions {
        shard,
        provenance,
        prompt_files: None,
        lowest_max_chars: lowest_retention::SHOWN_MAX_CHARS,
        started,
    };
    let written = py.detach(|| {
        let mut signals = SignalWatch::default();
        let mut progress = |_: u64, _: u64| signals.check(&interrupt);
        run_part(&cfg, &corpora, &dir, opts, Some(&mut progress))
    });
    if let Some(e) = interrupt.take() {
        // The staged part is dropped, so the directory holds nothing of this shard.
        return Err(e);
    }
    py.check_signals()?;
    let summary = written.map_err(|e| recap_error(py, e.to_string()))?;
    let committed = dir.commit().map_err(|e| recap_error(py, e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("shard", format!("{shard}"))?;
    d.set_item("dir", committed)?;
    d.set_item("entries", summary.entries.total)?;
    d.set_item("owned", summary.entries.owned)?;
    d.set_item("sessions", summary.entries.sessions)?;
    d.set_item("rejected", summary.entries.rejected)?;
    d.set_item("files", summary.files)?;
    Ok(d)
}

/// Merges the part directories `parts` into the whole run's report. `calls.csv` is
/// written into `out` (refused if it holds files, unless `force`); with `every_format`,
/// every file `recap merge --out` writes is. Refusals come before anything is written.
#[pyfunction]
#[pyo3(signature = (parts, out, force, every_format, command_line))]
pub fn merge_parts(
    py: Python<'_>,
    parts: Vec<PathBuf>,
    out: PathBuf,
    force: bool,
    every_format: bool,
    command_line: Vec<String>,
) -> PyResult<PyReport> {
    let opened = py
        .detach(|| open_parts(&parts))
        .map_err(|e| recap_error(py, e.to_string()))?;
    let dir = OutputDir::create(&out, force).map_err(|e| recap_error(py, e.to_string()))?;
    let opts = MergeOptions {
        command_line,
        lowest_calls: lowest_retention::SHOWN_CALLS,
    };
    let merged = py
        .detach(|| merge(&opened, Some(&dir), &opts))
        .map_err(|e| recap_error(py, e.to_string()))?;
    let report = merged.report;
    if report.settings.corpora.iter().all(|c| c.sessions == 0) {
        return Err(no_sessions(py, &report));
    }
    if every_format {
        py.detach(|| recap_harness::write_report(&dir, &report, &merged.lowest))
            .map_err(|e| recap_error(py, e.to_string()))?;
    }
    dir.commit().map_err(|e| recap_error(py, e.to_string()))?;
    Ok(PyReport::new(report, None))
}
