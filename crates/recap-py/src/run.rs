//! `run`: the harness over corpora, as `recap run` runs it, with the GIL released while
//! the engine works.

use crate::bridge::{Interrupt, PyStrategy, SignalWatch};
use crate::errors::recap_error;
use crate::report::{CallsTable, PyReport};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pyo3::prelude::*;
use recap_core::Registry;
use recap_harness::engine::all_corpus_entries;
use recap_harness::report::provenance::{
    PluginFile, Provenance, corpus_files, file_sha256, vocabulary,
};
use recap_harness::report::{NonDeterministic, Report};
use recap_harness::{
    Backend, DeterminismCheck, Encoding, Hooks, RunConfig, StrategyEntry, Tokenizer,
};
use recap_plugin_host::Plugin;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime};

/// Runs shorter than this show no progress bar.
const QUIET_START: Duration = Duration::from_secs(1);

/// The run's settings beyond corpora and strategies (the Python `config` mapping).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Settings {
    cache_read_ratio: f64,
    tokenizer_backend: String,
    session_details: bool,
    calls: bool,
    plugin_timeout: Option<f64>,
    progress: bool,
    check_determinism: String,
}

/// The run's determinism check from its setting, named as `--check-determinism` names it.
fn determinism_check(py: Python<'_>, name: &str) -> PyResult<DeterminismCheck> {
    [DeterminismCheck::Opaque, DeterminismCheck::All]
        .into_iter()
        .find(|c| c.as_str() == name)
        .ok_or_else(|| {
            recap_error(
                py,
                format!(
                    "config: check_determinism: expected \"opaque\" (strategies recap cannot \
                     see into) or \"all\" (built-ins too), got {name:?}"
                ),
            )
        })
}

/// Built-ins plus the strategies of `plugins`, loaded in-process; any library that
/// fails to load is an error naming it.
pub fn registry(py: Python<'_>, plugins: &[PathBuf]) -> PyResult<(Registry, Vec<Arc<Plugin>>)> {
    let mut registry = recap_builtins::registry();
    let (loaded, failures) = recap_plugin_host::load_all(plugins);
    if !failures.is_empty() {
        let lines: Vec<String> = failures.iter().map(|e| format!("  {e}")).collect();
        return Err(recap_error(
            py,
            format!("plugins that did not load:\n{}", lines.join("\n")),
        ));
    }
    for p in &loaded {
        recap_plugin_host::register(&mut registry, p)
            .map_err(|e| recap_error(py, e.to_string()))?;
    }
    Ok((registry, loaded))
}

fn tokenizers(py: Python<'_>, names: &[String], backend: &str) -> PyResult<Vec<Tokenizer>> {
    let backend = match backend {
        "fast" => Backend::Fast,
        "reference" => Backend::Reference,
        other => {
            return Err(recap_error(
                py,
                format!("tokenizer_backend {other:?}: expected \"fast\" or \"reference\""),
            ));
        }
    };
    let mut out: Vec<Tokenizer> = Vec::new();
    for n in names {
        let enc: Encoding = n
            .parse()
            .map_err(|e| recap_error(py, format!("tokenizer {n:?}: {e}")))?;
        if !out.iter().any(|t| t.encoding() == enc) {
            out.push(Tokenizer::try_get(enc, backend).map_err(|e| recap_error(py, e.to_string()))?);
        }
    }
    Ok(out)
}

/// The strategies `recap run` runs when none is named: the four of SPEC 6, the other
/// built-ins, then plugins, each once.
fn default_names(registry: &Registry) -> Vec<String> {
    let mut names: Vec<String> = recap_builtins::SPEC_BUILTINS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let infos: Vec<_> = registry.infos().collect();
    let built_in = infos.iter().filter(|i| i.origin == "built-in");
    let plugins = infos.iter().filter(|i| i.origin != "built-in");
    for info in built_in.chain(plugins) {
        if !names.contains(&info.name) {
            names.push(info.name.clone());
        }
    }
    names
}

/// The run's strategies: spec strings built by the registry, Python strategy objects
/// through the bridge.
fn strategies(
    py: Python<'_>,
    registry: &Registry,
    given: Option<Vec<Bound<'_, PyAny>>>,
    interrupt: &Arc<Interrupt>,
) -> PyResult<Vec<StrategyEntry>> {
    let Some(given) = given else {
        return default_names(registry)
            .iter()
            .map(|spec| spec_entry(py, registry, spec))
            .collect();
    };
    given
        .iter()
        .map(|g| match g.extract::<String>() {
            Ok(spec) => spec_entry(py, registry, &spec),
            Err(_) => Ok(StrategyEntry::new(Arc::new(PyStrategy::new(
                g,
                Arc::clone(interrupt),
            )?))),
        })
        .collect()
}

fn spec_entry(py: Python<'_>, registry: &Registry, spec: &str) -> PyResult<StrategyEntry> {
    registry
        .build(spec)
        .map(StrategyEntry::new)
        .map_err(|e| recap_error(py, format!("strategy {spec:?}: {e}")))
}

fn provenance(
    py: Python<'_>,
    plugins: &[Arc<Plugin>],
    corpora: &[PathBuf],
    tokenizers: &[Tokenizer],
    command_line: Vec<String>,
) -> PyResult<Provenance> {
    let mut plugin_files = Vec::with_capacity(plugins.len());
    for p in plugins {
        let (sha256, _) = file_sha256(p.path()).map_err(|e| recap_error(py, e.to_string()))?;
        plugin_files.push(PluginFile {
            path: p.path().display().to_string(),
            name: p.name().to_string(),
            version: p.version().to_string(),
            sha256,
        });
    }
    Ok(Provenance {
        recap_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: env!("RECAP_GIT_COMMIT").to_string(),
        command_line,
        config: None,
        plugins: plugin_files,
        corpora: corpus_files(corpora).map_err(|e| recap_error(py, e.to_string()))?,
        tokenizers: tokenizers
            .iter()
            .map(|t| vocabulary(t.encoding()))
            .collect(),
        plugin_failures: Vec::new(),
        shards: Vec::new(),
    })
}

/// Every corpus must open before anything runs (as `recap run` checks).
fn check_readable(py: Python<'_>, corpora: &[PathBuf]) -> PyResult<()> {
    for path in corpora {
        if let Err(r) = recap_core::corpus::open_file(path) {
            return Err(crate::errors::corpus_error(py, &r));
        }
    }
    Ok(())
}

pub fn progress_bar(total_bytes: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg} (eta {eta})",
    )
    .ok()?;
    bar.set_style(style);
    Some(bar)
}

/// A configured run: what `run` and `run_shard` share.
pub struct Configured {
    pub cfg: RunConfig,
    /// The run's stop, shared with its Python strategies.
    pub interrupt: Arc<Interrupt>,
    pub provenance: Provenance,
}

/// Checks the corpora and builds the run's configuration as `recap run` does: plugins
/// loaded, tokenizers and strategies resolved, settings applied and validated; and its
/// provenance.
#[allow(clippy::too_many_arguments)]
pub fn configure(
    py: Python<'_>,
    corpora: &[PathBuf],
    strategies: Option<Vec<Bound<'_, PyAny>>>,
    tokenizers: &[String],
    plugins: &[PathBuf],
    jobs: Option<usize>,
    settings: &Settings,
    command_line: Vec<String>,
) -> PyResult<Configured> {
    check_readable(py, corpora)?;
    if let Some(seconds) = settings.plugin_timeout {
        let limit = (seconds > 0.0).then(|| Duration::from_secs_f64(seconds));
        recap_plugin_host::set_call_time_limit(limit);
    }
    let (mut registry, loaded) = registry(py, plugins)?;
    let tokenizers = self::tokenizers(py, tokenizers, &settings.tokenizer_backend)?;
    if let Some(first) = tokenizers.first() {
        registry.set_counter(Arc::new(*first));
    }
    let baseline = registry
        .build("full-history")
        .map_err(|e| recap_error(py, e.to_string()))?;
    let interrupt = Arc::new(Interrupt::default());
    let mut cfg = RunConfig::new(
        self::strategies(py, &registry, strategies, &interrupt)?,
        baseline,
        tokenizers,
    )
    .map_err(|e| recap_error(py, e.to_string()))?;
    cfg.cache_read_ratio = settings.cache_read_ratio;
    cfg.jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    cfg.session_details = settings.session_details;
    cfg.call_records = settings.calls;
    cfg.check_determinism = determinism_check(py, &settings.check_determinism)?;
    cfg.validate().map_err(|e| recap_error(py, e.to_string()))?;
    let provenance = provenance(py, &loaded, corpora, &cfg.tokenizers, command_line)?;
    Ok(Configured {
        cfg,
        interrupt,
        provenance,
    })
}

/// Runs the harness; returns the report, or the KeyboardInterrupt that stopped it.
#[pyfunction]
#[pyo3(signature = (corpora, strategies, tokenizers, plugins, jobs, settings, command_line))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    corpora: Vec<PathBuf>,
    strategies: Option<Vec<Bound<'_, PyAny>>>,
    tokenizers: Vec<String>,
    plugins: Vec<PathBuf>,
    jobs: Option<usize>,
    settings: Settings,
    command_line: Vec<String>,
) -> PyResult<PyReport> {
    let started = SystemTime::now();
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
    let names: Vec<String> = corpora
        .iter()
        .map(|c| recap_harness::engine::corpus_name(c))
        .collect();
    let mut calls = settings.calls.then(|| CallsTable::new(&cfg, &names));
    let total_bytes = corpora
        .iter()
        .filter_map(|c| std::fs::metadata(c).ok())
        .map(|m| m.len())
        .sum();
    let bar = settings
        .progress
        .then(|| progress_bar(total_bytes))
        .flatten();

    let stop = Arc::clone(&interrupt);
    let result = py.detach(|| {
        let bytes = Arc::new(AtomicU64::new(0));
        let go_on = Arc::clone(&interrupt);
        // Once stopped, no session is taken from the input: the run ends with the ones
        // in flight.
        let entries = all_corpus_entries(&corpora, &bytes).take_while(move |_| !go_on.is_set());
        let begun = Instant::now();
        let mut signals = SignalWatch::default();
        let mut progress = |done: u64, read: u64| {
            if let Some(b) = &bar {
                if b.is_hidden() && begun.elapsed() > QUIET_START {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                }
                b.set_position(read);
                b.set_message(format!("{done} sessions"));
            }
            signals.check(&stop);
        };
        let mut on_session =
            |corpus: usize,
             line: usize,
             _: &recap_core::Session,
             o: &recap_harness::engine::SessionOutcome| {
                if let Some(t) = calls.as_mut() {
                    t.session(corpus, line, o);
                }
                Ok(())
            };
        let hooks = Hooks {
            progress: Some(&mut progress),
            dump: None,
            session: if settings.calls {
                Some(&mut on_session)
            } else {
                None
            },
        };
        recap_harness::run_entries(&cfg, names.clone(), entries, hooks, Some(&bytes))
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(e) = interrupt.take() {
        // Nothing partial leaves the run: the report of the sessions done is dropped.
        return Err(e);
    }
    // Ctrl-C during the last sessions, after the last check.
    py.check_signals()?;
    let mut report: Report = result.map_err(|e| recap_error(py, e.to_string()))?;
    report.provenance = Some(provenance);
    report.non_deterministic = Some(NonDeterministic::new(started, SystemTime::now()));
    if report
        .settings
        .corpora
        .iter()
        .map(|c| c.sessions)
        .sum::<u64>()
        == 0
    {
        return Err(no_sessions(py, &report));
    }
    let calls = calls.map(|c| c.finish(py)).transpose()?;
    Ok(PyReport::new(report, calls))
}

/// Why a run that replayed no session has nothing to report.
pub fn no_sessions(py: Python<'_>, report: &Report) -> PyErr {
    let names = report.settings.corpus_paths();
    let why = match report.rejected.len() {
        0 => "they are empty or hold only blank lines".to_string(),
        n => format!(
            "all {n} corpus lines were rejected (the report's first: {}:{}: {}: {})",
            report.rejected[0].corpus,
            report.rejected[0].line,
            report.rejected[0].field,
            report.rejected[0].message
        ),
    };
    crate::errors::error(
        py,
        "NoSessionsError",
        (format!(
            "no sessions to replay in {}: {why}",
            names.join(", ")
        ),),
    )
}
