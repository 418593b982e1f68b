//! `recap run`: replay corpora through strategies and report tokens, cache reuse,
//! retention, invariants and speed (the metrics of docs/format.md).

mod output;
mod selection;

use super::provenance::ConfigText;
use anyhow::{Context, Result, bail};
use output::{check_readable, open_out_dir};
use recap_core::Session;
use recap_harness::engine::{SessionOutcome, corpus_name};
use recap_harness::lowest_retention::{CallView, LowestCalls};
use recap_harness::output::{CALLS_CSV, OutputDir, PROMPTS_DIR};
use recap_harness::report::call_rows::CallsCsv;
use recap_harness::report::{NonDeterministic, Report};
use recap_harness::{DeterminismCheck, Hooks, RunConfig};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

pub(crate) use output::{
    default_corpora, dump_file_name, no_sessions, note_large_report, print_report, progress_bar,
    table_columns,
};

pub(crate) use recap_harness::lowest_retention::{
    SHOWN_CALLS as LOWEST_CALLS, SHOWN_MAX_CHARS as LOWEST_MAX_CHARS,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns, a table per session form, fitted to the terminal (`--columns`).
    Table,
    /// The stable schema of docs/report-schema.md.
    Json,
    /// One row per session form × strategy × tokenizer.
    Csv,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// tiktoken 4.x: ~10× faster, proven to give the reference's counts on our data.
    Fast,
    /// tiktoken-rs, OpenAI's own BPE core.
    Reference,
}

/// `--check-determinism`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CheckDeterminism {
    /// Plugins: strategies whose code recap cannot see into.
    Opaque,
    /// Every strategy, built-ins too.
    All,
}

#[derive(clap::Args)]
pub struct Args {
    /// Corpus files (JSON Lines). Default: the experiment file's `corpora`, else every
    /// bench-data/*.jsonl of the current directory.
    #[arg(value_name = "CORPUS")]
    corpora: Vec<PathBuf>,
    /// Read the experiment from FILE (TOML; `recap init` writes a commented example,
    /// docs/experiments.md describes every key). Flags given here override the file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Strategy spec (`name` or `name:key=value,...`). Repeatable. Default: every
    /// registered strategy with its default options.
    #[arg(long = "strategy", value_name = "SPEC")]
    strategies: Vec<String>,
    /// One strategy per setting, e.g. `rolling-window:window=1..8` (inclusive range) or
    /// `rolling-window:window=1|2|4`. Repeatable.
    #[arg(long = "sweep", value_name = "SPEC")]
    sweeps: Vec<String>,
    /// For each `--strategy` / `--sweep` in command-line order: which one it was
    /// (`false` strategy, `true` sweep). Filled from the parsed matches, since clap's
    /// derive keeps each flag's values apart.
    #[arg(skip)]
    given_order: Vec<bool>,
    /// Where the experiment file wrote each of its strategies and sweeps.
    #[arg(skip)]
    origins: Vec<super::config::Origin>,
    /// Tokenizer to count with. Repeatable. Default: o200k_base. deepseek_v3 (the model
    /// of the ptc-runner corpus) has only the fast backend.
    #[arg(long = "tokenizer", value_name = "NAME", value_parser = ["o200k_base", "cl100k_base", "deepseek_v3"])]
    tokenizers: Vec<String>,
    /// Which implementation counts tokens (both give identical counts). [default: fast]
    #[arg(long, value_enum)]
    tokenizer_backend: Option<BackendArg>,
    /// Write every format, the SVG charts, report.html, sessions.csv and calls.csv into
    /// DIR (refused if DIR holds files).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The experiment file's `out`: each run writes a new `run-NNNN` directory in it.
    #[arg(skip)]
    runs_dir: Option<PathBuf>,
    /// With --out: replace recap's files in a non-empty DIR.
    #[arg(long)]
    force: bool,
    /// Format printed on stdout. [default: table]
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The table's columns, by name: `strategy,sessions,tokens,savings,retention`, or
    /// `all` (columns: strategy, tokenizer, sessions, n/a, calls, tokens, peak,
    /// savings, cached, cost, retention, violations, errors, p50, p95). Default: as
    /// many as fit the terminal (120 characters without one), leaving out render p95,
    /// peak, eff. cost, calls, render p50 and cached first; a note names those left out.
    #[arg(long, value_name = "LIST", value_parser = parse_columns)]
    columns: Option<ColumnList>,
    /// Price of a cached prompt token relative to an uncached one (0..=1). [default: 0.1]
    #[arg(long, value_name = "RATIO", value_parser = parse_ratio)]
    cache_read_ratio: Option<f64>,
    /// With --out: write the exact prompt of every call to DIR/prompts/STRATEGY.jsonl.
    #[arg(long)]
    dump_prompts: bool,
    /// Worker threads. Default: the number of CPUs.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Leave the per-session records out of the JSON report (smaller, for huge corpora).
    #[arg(long)]
    no_session_details: bool,
    /// Leave `calls.csv` out of `--out DIR` (a row per call × strategy × tokenizer: over
    /// a huge corpus, the largest file of a report).
    #[arg(long)]
    no_calls_csv: bool,
    /// Which strategies have every call rendered twice and the prompts compared (SPEC
    /// 7.6): `opaque`, those recap cannot see into (plugins), or `all`, built-ins too.
    /// [default: opaque]
    #[arg(long, value_enum)]
    check_determinism: Option<CheckDeterminism>,
    /// Run shard I of N (0 ≤ I < N) only, writing its partial report into --out DIR for
    /// `recap merge` (docs/scale.md).
    #[arg(long, value_name = "I/N")]
    shard: Option<recap_harness::Shard>,
    #[command(flatten)]
    plugins: super::plugins::PluginArgs,
}

/// The keys of `--columns`, in table order.
#[derive(Clone, Debug)]
pub struct ColumnList(Vec<&'static str>);

pub(crate) fn parse_columns(text: &str) -> Result<ColumnList, String> {
    recap_harness::report::parse_columns(text).map(ColumnList)
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a number between 0 and 1, got {s:?}")),
    }
}

impl Args {
    /// Fills in what the command line left unsaid from an experiment file: a list flag
    /// given replaces the file's list (`--strategy` or `--sweep` replace all of the
    /// file's strategies), a value given replaces the file's value, and plugins add up.
    /// Returns the plugin strategies the file runs with options (none when the command
    /// line names the strategies).
    fn apply_experiment(
        &mut self,
        exp: super::config::Experiment,
    ) -> Vec<super::config::PluginRun> {
        if self.corpora.is_empty() {
            self.corpora = exp.corpora;
        }
        let mut plugin_runs = Vec::new();
        if self.strategies.is_empty() && self.sweeps.is_empty() {
            self.strategies = exp.strategies;
            self.sweeps = exp.sweeps;
            // The file's order: its strategies, then its sweeps.
            self.given_order.clear();
            self.origins = exp.origins;
            plugin_runs = exp.plugin_runs;
        }
        if self.tokenizers.is_empty() {
            self.tokenizers = exp.tokenizers;
        }
        if self.tokenizer_backend.is_none() {
            self.tokenizer_backend = match exp.tokenizer_backend.as_deref() {
                Some("reference") => Some(BackendArg::Reference),
                Some(_) => Some(BackendArg::Fast),
                None => None,
            };
        }
        // The file's `out` collects its runs; `--out DIR` is one report in DIR.
        if self.out.is_none() {
            self.runs_dir = exp.out;
        }
        if self.format.is_none() {
            self.format = exp
                .format
                .as_deref()
                .and_then(|f| <Format as clap::ValueEnum>::from_str(f, false).ok());
        }
        self.cache_read_ratio = self.cache_read_ratio.or(exp.cache_read_ratio);
        self.dump_prompts |= exp.dump_prompts.unwrap_or(false);
        if self.check_determinism.is_none() {
            self.check_determinism = exp
                .check_determinism
                .as_deref()
                .and_then(|c| <CheckDeterminism as clap::ValueEnum>::from_str(c, false).ok());
        }
        self.jobs = self.jobs.or(exp.jobs);
        if exp.session_details == Some(false) {
            self.no_session_details = true;
        }
        // The file's plugins first: its strategies may name them.
        let mut plugins = exp.plugins;
        plugins.append(&mut self.plugins.plugins);
        self.plugins.plugins = plugins;
        let mut dirs = exp.plugin_dirs;
        dirs.append(&mut self.plugins.plugin_dirs);
        self.plugins.plugin_dirs = dirs;
        self.plugins.isolation_of = exp.isolation_of;
        self.plugins.file_isolation = exp.plugin_isolation;
        if self.plugins.plugin_timeout.is_none()
            && let Some(limit) = exp.plugin_timeout.as_deref()
            && let Ok(limit) = recap_plugin_host::parse_limit(limit)
        {
            self.plugins.plugin_timeout = Some(super::plugins::TimeLimit(limit));
        }
        plugin_runs
    }

    fn format(&self) -> Format {
        self.format.unwrap_or(Format::Table)
    }

    /// Records the command-line order of `--strategy` and `--sweep`, so rows come out
    /// in the order they were asked for.
    pub fn set_given_order(&mut self, m: &clap::ArgMatches) {
        let mut at: Vec<(usize, bool)> = Vec::new();
        if let Some(i) = m.indices_of("strategies") {
            at.extend(i.map(|i| (i, false)));
        }
        if let Some(i) = m.indices_of("sweeps") {
            at.extend(i.map(|i| (i, true)));
        }
        at.sort_unstable();
        self.given_order = at.into_iter().map(|(_, sweep)| sweep).collect();
    }
}

pub fn run(mut args: Args) -> Result<ExitCode> {
    let started = SystemTime::now();
    let (config_text, plugin_runs) = match args.config.clone() {
        Some(file) => {
            let exp = super::config::load(&file)?;
            let text = ConfigText {
                path: file,
                content: exp.content.clone(),
            };
            (Some(text), args.apply_experiment(exp))
        }
        None => (None, Vec::new()),
    };
    if args.force && args.out.is_none() && args.runs_dir.is_some() {
        bail!(
            "--force replaces a report in --out DIR; each run of an experiment writes a new run-NNNN directory under its `out`, so there is nothing to replace"
        );
    }
    if args.shard.is_some() && args.out.is_none() {
        // A shard writes its part into a directory of its own that the merge is given;
        // an experiment's `out` collects whole runs, one new directory each.
        bail!(
            "--shard needs an output directory of its own: --out DIR (with an experiment file too; docs/scale.md)"
        );
    }
    if args.out.is_none() && args.runs_dir.is_none() {
        for (given, flag) in [
            (args.force, "--force"),
            (args.dump_prompts, "--dump-prompts"),
        ] {
            if given {
                bail!(
                    "{flag} needs an output directory: --out DIR, or `out` in the experiment file"
                );
            }
        }
    }
    let corpora = if args.corpora.is_empty() {
        default_corpora()?
    } else {
        args.corpora.clone()
    };
    check_readable(&corpora)?;
    let (mut registry, plugins, load_failures) = args.plugins.load()?;
    selection::add_plugin_runs(&mut args, plugin_runs, &plugins)?;
    let cfg = run_config(&args, &mut registry, &load_failures)?;
    for warning in selection::idle_plugins(&plugins, &cfg) {
        crate::say!("{warning}");
    }
    let provenance = super::provenance::collect(
        config_text.as_ref(),
        &plugins,
        &load_failures,
        &corpora,
        &cfg.tokenizers,
    )?;
    // Checked and locked before the run, so a long run never ends in "cannot write" or
    // in a race with another run into the same directory.
    let out_dir = open_out_dir(&args)?;
    if let Some(shard) = args.shard {
        let job = super::shard::Job::new(shard, &cfg, &corpora, provenance, started);
        return super::shard::run(job, out_dir);
    }
    let (mut report, lowest) = replay(&cfg, &corpora, out_dir.as_ref())?;
    report.provenance = Some(provenance);
    report.non_deterministic = Some(NonDeterministic::new(started, SystemTime::now()));

    let rejections = super::problems::rejections(&report.rejected);
    let replayed: u64 = report.settings.corpora.iter().map(|c| c.sessions).sum();
    if replayed == 0 {
        // Nothing to compare: no table of zeros, no report directory (dropping
        // `out_dir` removes what it staged).
        for line in &rejections {
            crate::say!("{line}");
        }
        return Err(no_sessions(&report));
    }
    if let Some(out) = out_dir {
        write_report_dir(out, &report, &lowest, &cfg, args.dump_prompts)?;
    }
    let printed = print_report(
        &report,
        args.format(),
        &table_columns(args.columns.as_ref()),
    )?;
    if args.format() == Format::Json {
        note_large_report("the JSON report on stdout", printed, &report);
    }
    for line in rejections
        .iter()
        .chain(&super::problems::strategy_problems(&report))
    {
        crate::say!("{line}");
    }
    // A plugin left out under --keep-going is a problem found, like a rejected session.
    Ok(
        if report.has_problems() || !report.rejected.is_empty() || !load_failures.is_empty() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// The run's configuration: strategies, the baseline, tokenizers and settings.
fn run_config(
    args: &Args,
    registry: &mut recap_core::Registry,
    load_failures: &[super::plugins::LoadFailure],
) -> Result<RunConfig> {
    let tokenizers = selection::tokenizers(args)?;
    // Token budgets count with the first tokenizer of the run: the one its first rows
    // report.
    if let Some(first) = tokenizers.first() {
        registry.set_counter(std::sync::Arc::new(*first));
    }
    let baseline = registry
        .build("full-history")
        .context("the full-history baseline is not registered")?;
    let mut cfg = RunConfig::new(
        selection::strategies(args, registry, load_failures)?,
        baseline,
        tokenizers,
    )?;
    cfg.cache_read_ratio = args.cache_read_ratio.unwrap_or(0.1);
    cfg.jobs = match args.jobs {
        Some(j) => j as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    cfg.dump_prompts = args.dump_prompts;
    cfg.check_determinism = match args.check_determinism {
        Some(CheckDeterminism::All) => DeterminismCheck::All,
        Some(CheckDeterminism::Opaque) | None => DeterminismCheck::Opaque,
    };
    cfg.session_details = !args.no_session_details;
    // Per-call rows go to DIR/calls.csv only.
    cfg.call_records = (args.out.is_some() || args.runs_dir.is_some()) && !args.no_calls_csv;
    Ok(cfg)
}

/// Replays the corpora: the report, and the calls of lowest retention for the HTML
/// report. Prompt dumps and `calls.csv` stream into `out_dir` as sessions finish.
fn replay(
    cfg: &RunConfig,
    corpora: &[PathBuf],
    out_dir: Option<&OutputDir>,
) -> Result<(Report, Vec<CallView>)> {
    let mut dump_files: BTreeMap<usize, BufWriter<File>> = BTreeMap::new();
    let mut taken = Vec::new();
    let dump_names: Vec<String> = cfg
        .strategies
        .iter()
        .map(|s| dump_file_name(&s.name, &mut taken))
        .collect();
    let mut dump = |s: usize, line: &str| -> std::io::Result<()> {
        let Some(out) = out_dir else {
            return Ok(());
        };
        let w = match dump_files.entry(s) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let path = out.staged(&format!("{PROMPTS_DIR}/{}", dump_names[s]));
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                e.insert(BufWriter::new(File::create(&path)?))
            }
        };
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")
    };
    let total_bytes = corpora
        .iter()
        .filter_map(|c| std::fs::metadata(c).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    let bar = progress_bar(total_bytes);
    let mut progress = |done: u64, bytes: u64| {
        if let Some(b) = &bar {
            b.set_position(bytes);
            b.set_message(format!("{done} sessions"));
        }
    };
    let mut calls_csv = match out_dir.filter(|_| cfg.call_records) {
        Some(out) => Some(
            CallsCsv::new(
                out.stream(CALLS_CSV)?,
                cfg,
                corpora.iter().map(|c| corpus_name(c)).collect(),
            )
            .context("writing calls.csv")?,
        ),
        None => None,
    };
    let names = corpora.iter().map(|c| corpus_name(c)).collect();
    let mut lowest = LowestCalls::new(cfg, names, LOWEST_MAX_CHARS);
    let mut on_session = |corpus: usize,
                          line: usize,
                          session: &Session,
                          o: &SessionOutcome|
     -> std::io::Result<()> {
        if let Some(w) = calls_csv.as_mut() {
            w.session(corpus, line, o)?;
        }
        lowest.session(corpus, line, session, o);
        Ok(())
    };
    let hooks = Hooks {
        progress: Some(&mut progress),
        dump: if cfg.dump_prompts {
            Some(&mut dump)
        } else {
            None
        },
        session: if cfg.call_records {
            Some(&mut on_session)
        } else {
            None
        },
    };
    let report = recap_harness::run_corpora(cfg, corpora, hooks)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    for (_, mut w) in std::mem::take(&mut dump_files) {
        w.flush().context("writing prompt dumps")?;
    }
    if let Some(w) = calls_csv.take() {
        w.finish().context("writing calls.csv")?;
    }
    Ok((report, lowest.views(LOWEST_CALLS)))
}

/// Writes every format into the staged directory, moves it into place and says where.
fn write_report_dir(
    out: OutputDir,
    report: &Report,
    views: &[CallView],
    cfg: &RunConfig,
    dumped: bool,
) -> Result<()> {
    let mut files = recap_harness::write_report(&out, report, views)?;
    if cfg.call_records {
        files.push(CALLS_CSV.to_string());
    }
    let dir = out.commit()?;
    crate::say!(
        "report written to {}: {}{}",
        dir.display(),
        files.join(", "),
        if dumped {
            format!(", {PROMPTS_DIR}/")
        } else {
            String::new()
        }
    );
    let json = dir.join("report.json");
    if let Ok(meta) = std::fs::metadata(&json) {
        note_large_report(&json.display().to_string(), meta.len(), report);
    }
    Ok(())
}
