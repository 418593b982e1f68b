//! `recap run`: replay corpora through strategies and report tokens, cache reuse,
//! retention, invariants and speed (the metrics of docs/format.md).

use super::config::PluginRun;
use super::provenance::ConfigText;
use anyhow::{Context, Result, bail};
use recap_core::Registry;
use recap_harness::engine::{SessionOutcome, corpus_name};
use recap_harness::output::{CALLS_CSV, OutputDir, PROMPTS_DIR};
use recap_harness::report::call_rows::CallsCsv;
use recap_harness::report::lowest_retention::{LowestRetention, call_views};
use recap_harness::report::{self, NonDeterministic, Report};
use recap_harness::{
    Backend, DeterminismCheck, Encoding, Hooks, RunConfig, StrategyEntry, Tokenizer, sweep,
};
use recap_plugin_host::Plugin;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

/// Calls of lowest retention the HTML report shows (one per strategy at most).
const LOWEST_CALLS: usize = 6;
/// Characters of each printed value of those calls (as `recap inspect --max-chars`).
const LOWEST_MAX_CHARS: usize = 2_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for the terminal.
    Table,
    /// The stable schema of docs/report-schema.md.
    Json,
    /// One row per strategy × tokenizer.
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

impl From<CheckDeterminism> for DeterminismCheck {
    fn from(c: CheckDeterminism) -> Self {
        match c {
            CheckDeterminism::Opaque => DeterminismCheck::Opaque,
            CheckDeterminism::All => DeterminismCheck::All,
        }
    }
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
    /// With --out: replace recap's files in a non-empty DIR.
    #[arg(long)]
    force: bool,
    /// Format printed on stdout. [default: table]
    #[arg(long, value_enum)]
    format: Option<Format>,
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
    #[command(flatten)]
    plugins: super::plugins::PluginArgs,
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a number between 0 and 1, got {s:?}")),
    }
}

/// `./bench-data/*.jsonl`, sorted; a clear error when there is none.
pub(crate) fn default_corpora() -> Result<Vec<PathBuf>> {
    let dir = Path::new("bench-data");
    let entries = std::fs::read_dir(dir).with_context(|| {
        format!(
            "no corpus given and {} is not readable here; run from the repository root or name corpus files",
            dir.display()
        )
    })?;
    let mut files = Vec::new();
    for e in entries {
        let path = e
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|x| x == "jsonl") {
            files.push(path);
        }
    }
    if files.is_empty() {
        bail!(
            "no corpus given and {} holds no *.jsonl files",
            dir.display()
        );
    }
    files.sort();
    Ok(files)
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
        self.out = self.out.take().or(exp.out);
        self.force |= exp.force.unwrap_or(false);
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

/// How an error names a strategy or sweep: where the experiment file wrote it, or the
/// flag that gave it.
fn origin(args: &Args, key: &str, value: &str, flag: &str) -> String {
    match args
        .origins
        .iter()
        .find(|o| o.key == key && o.value == value)
    {
        Some(o) => format!("{}: {value:?}", o.at),
        None => format!("{flag} {value:?}"),
    }
}

fn strategies(
    args: &Args,
    registry: &Registry,
    failures: &[super::plugins::LoadFailure],
) -> Result<Vec<StrategyEntry>> {
    let mut out = Vec::new();
    if args.strategies.is_empty() && args.sweeps.is_empty() {
        // The four of SPEC 6, the other built-ins, then plugins in name order.
        let mut names: Vec<String> = recap_builtins::SPEC_BUILTINS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (builtin, plugins): (Vec<_>, Vec<_>) =
            registry.infos().partition(|i| i.origin == "built-in");
        for info in builtin.into_iter().chain(plugins) {
            if !names.contains(&info.name) {
                names.push(info.name.clone());
            }
        }
        for name in names {
            out.push(StrategyEntry::new(
                registry
                    .build(&name)
                    .with_context(|| format!("strategy {name}"))?,
            ));
        }
        return Ok(out);
    }
    // Without a recorded order (a caller that did not parse a command line), the
    // strategies come first, then the sweeps.
    let order: Vec<bool> = if args.given_order.len() == args.strategies.len() + args.sweeps.len() {
        args.given_order.clone()
    } else {
        std::iter::repeat_n(false, args.strategies.len())
            .chain(std::iter::repeat_n(true, args.sweeps.len()))
            .collect()
    };
    // A strategy that needs a model endpoint is `recap eval`'s; say so instead of
    // "unknown strategy".
    let needs_endpoint = |spec: &str| {
        recap_core::StrategySpec::parse(spec).is_ok_and(|s| s.name == recap_llm_summary::NAME)
    };
    if let Some(spec) = args
        .strategies
        .iter()
        .chain(&args.sweeps)
        .find(|s| needs_endpoint(s))
    {
        anyhow::bail!("{spec:?}: {}", recap_llm_summary::NEEDS_ENDPOINT);
    }
    let (mut specs, mut sweeps) = (args.strategies.iter(), args.sweeps.iter());
    for is_sweep in order {
        if !is_sweep {
            let Some(spec) = specs.next() else { continue };
            if args.plugins.left_out(failures, registry, spec) {
                continue;
            }
            out.push(StrategyEntry::new(registry.build(spec).with_context(
                || origin(args, "strategies", spec, "--strategy"),
            )?));
            continue;
        }
        let Some(sw) = sweeps.next() else { continue };
        let at = origin(args, "sweeps", sw, "--sweep");
        for spec in sweep::expand(sw).with_context(|| at.clone())? {
            if args.plugins.left_out(failures, registry, &spec) {
                continue;
            }
            let s = registry
                .build(&spec)
                .with_context(|| format!("{at}: setting {spec:?}"))?;
            out.push(StrategyEntry::from_sweep(s, sw, &spec));
        }
    }
    // The same strategy asked twice (say by --strategy and a --sweep) runs once; the
    // canonical spec decides sameness (`rolling-window` = `rolling-window:window=3`).
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|e| {
        let fresh = seen.insert(e.strategy.spec());
        if !fresh {
            crate::say!(
                "note: strategy {} is listed more than once; it runs once",
                e.name
            );
        }
        fresh
    });
    Ok(out)
}

fn tokenizers(args: &Args) -> Result<Vec<Tokenizer>> {
    let backend = match args.tokenizer_backend.unwrap_or(BackendArg::Fast) {
        BackendArg::Fast => Backend::Fast,
        BackendArg::Reference => Backend::Reference,
    };
    let mut names = args.tokenizers.clone();
    if names.is_empty() {
        names.push(Encoding::O200kBase.name().to_string());
    }
    let mut out: Vec<Tokenizer> = Vec::new();
    for n in names {
        let enc: Encoding = n.parse().with_context(|| format!("--tokenizer {n:?}"))?;
        if !out.iter().any(|t| t.encoding() == enc) {
            out.push(Tokenizer::try_get(enc, backend).context("--tokenizer-backend")?);
        }
    }
    Ok(out)
}

/// A file name for a strategy's prompt dump: the spec with unsafe characters replaced.
fn dump_file_name(spec: &str, taken: &mut Vec<String>) -> String {
    let base: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{base}.jsonl");
    let mut i = 2;
    while taken.contains(&name) {
        name = format!("{base}-{i}.jsonl");
        i += 1;
    }
    taken.push(name.clone());
    name
}

fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Table => report::to_table(report),
        Format::Json => report.to_json(),
        Format::Csv => report::to_csv(report),
        Format::Markdown => report::to_markdown(report),
    }
}

fn progress_bar(total_bytes: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total_bytes);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg} (eta {eta})",
    )
    .ok()?;
    bar.set_style(style);
    Some(bar)
}

/// Every corpus must open before anything runs: a misspelt path is a usage error, not
/// a report of nothing.
fn check_readable(corpora: &[PathBuf]) -> Result<()> {
    let unreadable: Vec<String> = corpora
        .iter()
        .filter_map(|path| recap_core::corpus::open_file(path).err())
        .map(|e| format!("  {}: {}", e.file.display(), e.message))
        .collect();
    if unreadable.is_empty() {
        return Ok(());
    }
    bail!(
        "{} of {} corpus file{} cannot be read, so nothing was run:\n{}",
        unreadable.len(),
        corpora.len(),
        if corpora.len() == 1 { "" } else { "s" },
        unreadable.join("\n")
    )
}

/// Why a run that replayed no session at all has nothing to report.
fn no_sessions(report: &Report) -> anyhow::Error {
    if report.rejected.is_empty() {
        let names: Vec<&str> = report
            .settings
            .corpora
            .iter()
            .map(|c| c.path.as_str())
            .collect();
        anyhow::anyhow!(
            "no sessions to replay: {} {} empty or only blank lines (a corpus is JSON Lines, one session per line; docs/format.md)",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" }
        )
    } else {
        let which = match report.rejected.len() {
            1 => "the only corpus line was".to_string(),
            n => format!("every one of the {n} corpus lines was"),
        };
        anyhow::anyhow!(
            "no sessions to replay: {which} rejected (see above; `recap validate` lists each)"
        )
    }
}

/// A JSON report larger than this gets a note on how to make it smaller.
const LARGE_REPORT_BYTES: u64 = 64 << 20;

fn large_report_bytes() -> u64 {
    // Tests lower it to see the note without writing 64 MiB.
    std::env::var("RECAP_LARGE_REPORT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LARGE_REPORT_BYTES)
}

fn note_large_report(what: &str, bytes: u64, report: &Report) {
    if bytes < large_report_bytes() {
        return;
    }
    let records: usize = report.runs.iter().map(|r| r.session_details.len()).sum();
    if records == 0 {
        return;
    }
    crate::say!(
        "note: {what} is {:.1} MB, mostly its {records} per-session records (session_details); \
         --no-session-details leaves them out",
        bytes as f64 / 1e6
    );
}

/// Counts the bytes written through it (the size of the report on stdout).
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Prints the report on stdout; returns the bytes written. A reader that stops early
/// (`| head`) ends the printing, not the run: its problems still reach stderr and the
/// exit code.
fn print_report(report: &Report, format: Format) -> Result<u64> {
    // Buffered: stdout is line-buffered, and a JSON report has a line per field.
    let mut out = Counting {
        inner: BufWriter::new(std::io::stdout().lock()),
        bytes: 0,
    };
    let written = match format {
        Format::Json => report.write_json(&mut out),
        other => out.write_all(render(report, other).as_bytes()),
    }
    .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(out.bytes),
        Err(e) => Err(e).context("writing the report to stdout"),
        Ok(()) => Ok(out.bytes),
    }
}

/// Adds the plugin strategies the experiment file runs with options, now that the
/// plugins are loaded and their strategy names known.
fn add_plugin_runs(args: &mut Args, runs: Vec<PluginRun>, plugins: &[Arc<Plugin>]) -> Result<()> {
    for run in runs {
        let Some(plugin) = plugins.iter().find(|p| p.path() == run.path) else {
            if args.plugins.keep_going {
                // Its load failure was reported; the rest runs without it.
                continue;
            }
            bail!(
                "{}: the plugin {} was not loaded",
                run.origin,
                run.path.display()
            );
        };
        let options: Vec<String> = run
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let spec = if options.is_empty() {
            plugin.name().to_string()
        } else {
            format!("{}:{}", plugin.name(), options.join(","))
        };
        args.origins.push(super::config::Origin {
            key: "strategies",
            value: spec.clone(),
            at: run.origin,
        });
        args.strategies.push(spec);
    }
    Ok(())
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
    if args.out.is_none() {
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
    add_plugin_runs(&mut args, plugin_runs, &plugins)?;
    let tokenizers = tokenizers(&args)?;
    // Token budgets count with the first tokenizer of the run: the one its first rows
    // report.
    if let Some(first) = tokenizers.first() {
        registry.set_counter(std::sync::Arc::new(*first));
    }
    let baseline = registry
        .build("full-history")
        .context("the full-history baseline is not registered")?;
    let mut cfg = RunConfig::new(
        strategies(&args, &registry, &load_failures)?,
        baseline,
        tokenizers,
    )?;
    cfg.cache_read_ratio = args.cache_read_ratio.unwrap_or(0.1);
    cfg.jobs = match args.jobs {
        Some(j) => j as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    cfg.dump_prompts = args.dump_prompts;
    cfg.check_determinism = args
        .check_determinism
        .map_or_else(Default::default, Into::into);
    cfg.session_details = !args.no_session_details;
    // Per-call rows go to DIR/calls.csv only.
    cfg.call_records = args.out.is_some() && !args.no_calls_csv;
    let provenance = super::provenance::collect(
        config_text.as_ref(),
        &plugins,
        &load_failures,
        &corpora,
        &cfg.tokenizers,
    )?;

    // Checked and locked before the run, so a long run never ends in "cannot write" or
    // in a race with another run into the same directory.
    let out_dir = match &args.out {
        Some(dir) => Some(OutputDir::create(dir, args.force)?),
        None => None,
    };
    if let Some(out) = &out_dir
        && !out.cleaned_up().is_empty()
    {
        crate::say!(
            "note: removed {} staging director{} left in {} by interrupted runs",
            out.cleaned_up().len(),
            if out.cleaned_up().len() == 1 {
                "y"
            } else {
                "ies"
            },
            args.out.as_deref().unwrap_or(Path::new("")).display()
        );
    }

    let mut dump_files: BTreeMap<usize, BufWriter<File>> = BTreeMap::new();
    let mut taken = Vec::new();
    let dump_names: Vec<String> = cfg
        .strategies
        .iter()
        .map(|s| dump_file_name(&s.name, &mut taken))
        .collect();
    let mut dump = |s: usize, line: &str| -> std::io::Result<()> {
        let Some(out) = out_dir.as_ref() else {
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
    let mut calls_csv = match out_dir.as_ref().filter(|_| cfg.call_records) {
        Some(out) => Some(
            CallsCsv::new(
                out.stream(CALLS_CSV)?,
                &cfg,
                corpora.iter().map(|c| corpus_name(c)).collect(),
            )
            .context("writing calls.csv")?,
        ),
        None => None,
    };
    let mut lowest = LowestRetention::new(&cfg);
    let mut on_session = |corpus: usize, line: usize, o: &SessionOutcome| -> std::io::Result<()> {
        if let Some(w) = calls_csv.as_mut() {
            w.session(corpus, line, o)?;
        }
        lowest.session(corpus, line, o);
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
    let mut report = recap_harness::run_corpora(&cfg, &corpora, hooks)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    for (_, mut w) in std::mem::take(&mut dump_files) {
        w.flush().context("writing prompt dumps")?;
    }
    if let Some(w) = calls_csv.take() {
        w.finish().context("writing calls.csv")?;
    }
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
        let views = call_views(
            &cfg,
            &corpora,
            &lowest.picks(LOWEST_CALLS),
            LOWEST_MAX_CHARS,
        );
        let mut files = recap_harness::write_report(&out, &report, &views)?;
        if cfg.call_records {
            files.push(CALLS_CSV.to_string());
        }
        let dir = out.commit()?;
        crate::say!(
            "report written to {}: {}{}",
            dir.display(),
            files.join(", "),
            if args.dump_prompts {
                format!(", {PROMPTS_DIR}/")
            } else {
                String::new()
            }
        );
        let json = dir.join("report.json");
        if let Ok(meta) = std::fs::metadata(&json) {
            note_large_report(&json.display().to_string(), meta.len(), &report);
        }
    }
    let printed = print_report(&report, args.format())?;
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
