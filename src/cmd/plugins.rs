//! `recap plugins check`, and the `--plugin` / `--plugin-dir` flags that every command
//! taking `--strategy` flattens in (see [`PluginArgs`]).

use anyhow::{Context, Result, bail};
use recap_core::Registry;
use recap_plugin_host::{
    Isolation, IsolationConfig, LoadError, Plugin, load_all_each, load_all_with, plugin_files_in,
    register,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Strategy plugins to load next to the built-ins; their strategies are then named in
/// `--strategy` like built-ins. Add to a command with `#[command(flatten)]`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PluginArgs {
    /// Load a strategy plugin (a shared library built against recap's strategy ABI).
    /// Repeatable.
    #[arg(long = "plugin", value_name = "LIB")]
    pub plugins: Vec<PathBuf>,
    /// Load every plugin library in DIR (files named like lib*.so, lib*.dylib or
    /// *.dll; other files are ignored). Repeatable.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,
    /// Give up on a plugin call after SECONDS (`0` or `none`: never). A plugin whose
    /// call times out is disabled for the rest of the run: its later calls fail at once
    /// and are reported; other strategies go on. Default: $RECAP_PLUGIN_TIMEOUT, else 30.
    #[arg(long = "plugin-timeout", value_name = "SECONDS", value_parser = parse_time_limit)]
    pub plugin_timeout: Option<TimeLimit>,
    /// Where plugins run. `in-process`: loaded into recap, the cheapest calls, but a
    /// plugin that aborts, crashes or exits takes recap down. `process`: each in
    /// `recap plugin-worker` child processes; a crash, abort, exit, running out of
    /// memory or a hang is an error of the call it happened in (naming the plugin,
    /// session and call), the next session gets a new worker, other strategies go on.
    /// Given here it applies to every plugin; an experiment file may set it per plugin.
    /// [default: in-process]
    #[arg(long = "plugin-isolation", value_name = "MODE", value_enum)]
    pub plugin_isolation: Option<IsolationMode>,
    /// Per plugin library, from an experiment file (`[[plugins]] isolation`): where it
    /// runs when `--plugin-isolation` is not given.
    #[arg(skip)]
    pub isolation_of: BTreeMap<PathBuf, IsolationMode>,
    /// The experiment file's `plugin_isolation`: for its other plugins.
    #[arg(skip)]
    pub file_isolation: Option<IsolationMode>,
    /// With `--plugin-isolation process`: the most address space each worker may use
    /// (bytes, or with a K, M or G suffix: `512M`). An allocation past it fails inside
    /// the plugin, which ends the call with an error.
    #[arg(long = "plugin-memory-limit", value_name = "SIZE", value_parser = parse_size)]
    pub plugin_memory_limit: Option<u64>,
    /// With `--plugin-isolation process`: how many times a plugin's worker may fail
    /// (crash, abort, exit, write garbage, overrun the time limit) and be replaced; at
    /// the next failure the plugin is disabled for the rest of the run. [default: 8]
    #[arg(long = "plugin-restarts", value_name = "N")]
    pub plugin_restarts: Option<u32>,
    /// When a plugin library fails to load, run everything else and report the failure
    /// (on stderr and in the report's notes) instead of refusing to run. Strategies
    /// that no loaded library provides are then left out.
    #[arg(long = "keep-going")]
    pub keep_going: bool,
}

/// Where plugins run (`--plugin-isolation`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IsolationMode {
    #[default]
    InProcess,
    Process,
}

/// A plugin library that did not load, under `--keep-going`.
#[derive(Debug, Clone)]
pub struct LoadFailure {
    pub path: PathBuf,
    pub error: String,
}

impl From<&LoadError> for LoadFailure {
    fn from(e: &LoadError) -> Self {
        Self {
            path: e.path.clone(),
            error: e.problem.to_string(),
        }
    }
}

/// Parses `512M`, `2G`, `64k`, `1024` (bytes; K, M and G are binary multiples; an
/// `i`, `B` or `iB` after the letter is allowed).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("expected a size like 512M or 2G, got {text:?}"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let shift = match unit.trim_end_matches('b').trim_end_matches('i') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => {
            return Err(format!(
                "unknown size unit {unit:?} in {text:?} (use K, M or G)"
            ));
        }
    };
    let bytes = number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    // The worker is recap itself: below this it cannot even start.
    const LEAST: u64 = 64 << 20;
    if bytes < LEAST {
        return Err(format!(
            "{text:?} is below the 64M a worker process needs to start"
        ));
    }
    Ok(bytes)
}

/// A per-call plugin time limit; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLimit(pub Option<std::time::Duration>);

fn parse_time_limit(text: &str) -> Result<TimeLimit, String> {
    recap_plugin_host::parse_limit(text).map(TimeLimit)
}

impl PluginArgs {
    /// Sets the per-call plugin time limit for this process when the flag is given.
    pub fn apply_time_limit(&self) {
        if let Some(TimeLimit(limit)) = self.plugin_timeout {
            recap_plugin_host::set_call_time_limit(limit);
        }
    }

    /// The library files the flags name: each `--plugin`, then each directory's
    /// libraries in name order.
    pub fn files(&self) -> Result<Vec<PathBuf>> {
        let mut files = self.plugins.clone();
        for dir in &self.plugin_dirs {
            files.extend(plugin_files_in(dir).map_err(|e| anyhow::anyhow!("--plugin-dir: {e}"))?);
        }
        Ok(files)
    }

    /// Where the plugin library `file` runs: `--plugin-isolation` when given, else
    /// what the experiment file says for it, else the file's `plugin_isolation`, else
    /// in-process.
    pub fn mode_of(&self, file: &Path) -> IsolationMode {
        self.plugin_isolation
            .or_else(|| self.isolation_of.get(file).copied())
            .or(self.file_isolation)
            .unwrap_or_default()
    }

    /// How to run plugins in `mode`, with the flags' worker settings.
    pub fn isolation(&self, mode: IsolationMode) -> Result<Isolation> {
        match mode {
            IsolationMode::InProcess => Ok(Isolation::InProcess),
            IsolationMode::Process => {
                // The worker is this very recap.
                let worker = std::env::current_exe()
                    .context("--plugin-isolation process: cannot find the recap executable")?;
                let mut config = IsolationConfig::new(worker);
                config.memory_limit = self.plugin_memory_limit;
                if let Some(limit) = self.plugin_restarts {
                    config.restart_limit = limit;
                }
                Ok(Isolation::Process(config))
            }
        }
    }

    /// The built-in strategies plus every plugin's. Any library that fails to load,
    /// self-test or register is an error (all of them are listed, each naming its file),
    /// unless `--keep-going` (then they are said on stderr and left out).
    pub fn registry(&self) -> Result<Registry> {
        self.load().map(|(registry, _, _)| registry)
    }

    /// [`PluginArgs::registry`], the plugins loaded into it (in file order), and with
    /// `--keep-going` the libraries that failed, for callers that report them.
    pub fn load(&self) -> Result<(Registry, Vec<Arc<Plugin>>, Vec<LoadFailure>)> {
        self.apply_time_limit();
        let mut registry = recap_builtins::registry();
        let files = self.files()?;
        let any_isolated = files
            .iter()
            .any(|f| self.mode_of(f) == IsolationMode::Process);
        if !any_isolated {
            for (given, flag) in [
                (self.plugin_memory_limit.is_some(), "--plugin-memory-limit"),
                (self.plugin_restarts.is_some(), "--plugin-restarts"),
            ] {
                if given {
                    bail!(
                        "{flag} needs --plugin-isolation process (or a plugin isolated by the experiment file)"
                    );
                }
            }
        }
        if files.is_empty() {
            return Ok((registry, Vec::new(), Vec::new()));
        }
        let in_process = Isolation::InProcess;
        // Worker settings are worked out once, and only when some plugin needs them.
        let process = if any_isolated {
            self.isolation(IsolationMode::Process)?
        } else {
            Isolation::InProcess
        };
        let (mut plugins, mut errors) = load_all_each(&files, |file| match self.mode_of(file) {
            IsolationMode::InProcess => &in_process,
            IsolationMode::Process => &process,
        });
        plugins.retain(|plugin| match register(&mut registry, plugin) {
            Ok(()) => true,
            Err(e) => {
                errors.push(e);
                false
            }
        });
        if errors.is_empty() {
            return Ok((registry, plugins, Vec::new()));
        }
        let count = format!(
            "{} of {} plugin librar{} failed to load",
            errors.len(),
            files.len(),
            if files.len() == 1 { "y" } else { "ies" },
        );
        let list: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        if !self.keep_going {
            bail!(
                "{count} (--keep-going runs without them):\n{}",
                list.join("\n")
            );
        }
        crate::say!("warning: {count}; running without them (--keep-going):");
        for line in &list {
            crate::say!("{line}");
        }
        Ok((
            registry,
            plugins,
            errors.iter().map(LoadFailure::from).collect(),
        ))
    }

    /// Whether `spec` names a strategy to leave out: `--keep-going` is on, a library
    /// failed to load, and no loaded library (nor a built-in) provides the strategy —
    /// most likely the failed library did.
    pub fn left_out(&self, failures: &[LoadFailure], registry: &Registry, spec: &str) -> bool {
        if !self.keep_going || failures.is_empty() {
            return false;
        }
        let name =
            recap_core::StrategySpec::parse(spec).map_or_else(|_| spec.to_string(), |s| s.name);
        if registry.get(&name).is_some() {
            return false;
        }
        crate::say!(
            "note: strategy {spec:?} left out: no loaded plugin provides {name:?} (--keep-going)"
        );
        true
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Load each plugin library as `--plugin` would and report its strategy name,
    /// version, ABI version, the session forms it renders and its self-test result.
    /// Exit 1 if any fails.
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Plugin libraries to check.
    #[arg(value_name = "LIB")]
    libs: Vec<PathBuf>,
    /// Also check every plugin library in DIR. Repeatable.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    plugin_dirs: Vec<PathBuf>,
    /// Give up on a plugin call (the self-test included) after SECONDS.
    #[arg(long = "plugin-timeout", value_name = "SECONDS", value_parser = parse_time_limit)]
    plugin_timeout: Option<TimeLimit>,
    /// Check the libraries as `--plugin-isolation process` runs them: loaded and
    /// self-tested in a worker process.
    #[arg(
        long = "plugin-isolation",
        value_name = "MODE",
        value_enum,
        default_value_t
    )]
    plugin_isolation: IsolationMode,
    /// With `--plugin-isolation process`: each worker's memory limit (`512M`).
    #[arg(long = "plugin-memory-limit", value_name = "SIZE", value_parser = parse_size)]
    plugin_memory_limit: Option<u64>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    match args.command {
        Command::Check(check_args) => check(check_args),
    }
}

fn check(args: CheckArgs) -> Result<ExitCode> {
    let plugin_args = PluginArgs {
        plugins: args.libs,
        plugin_dirs: args.plugin_dirs,
        plugin_timeout: args.plugin_timeout,
        plugin_isolation: Some(args.plugin_isolation),
        isolation_of: BTreeMap::new(),
        file_isolation: None,
        plugin_memory_limit: args.plugin_memory_limit,
        plugin_restarts: None,
        keep_going: false,
    };
    plugin_args.apply_time_limit();
    if args.plugin_isolation == IsolationMode::InProcess && args.plugin_memory_limit.is_some() {
        bail!("--plugin-memory-limit needs --plugin-isolation process");
    }
    let isolation = plugin_args.isolation(args.plugin_isolation)?;
    let files = plugin_args.files()?;
    if files.is_empty() {
        bail!("nothing to check: name plugin libraries, or a directory with --plugin-dir");
    }
    // Registering next to the built-ins also catches name clashes.
    let mut registry = recap_builtins::registry();
    let mut out = std::io::stdout().lock();
    let (mut ok, mut failed) = (0usize, 0usize);
    for file in &files {
        let (plugins, errors) = load_all_with(std::slice::from_ref(file), &isolation);
        let outcome = match (plugins.into_iter().next(), errors.into_iter().next()) {
            (Some(plugin), _) => register(&mut registry, &plugin).map(|()| plugin),
            (None, Some(e)) => Err(e),
            (None, None) => continue, // the same file was listed twice
        };
        match outcome {
            Ok(plugin) => {
                ok += 1;
                print_ok(&mut out, &plugin)?;
            }
            Err(e) => {
                failed += 1;
                writeln!(out, "FAIL  {}", e.path.display())?;
                writeln!(out, "        {}", e.problem)?;
            }
        }
    }
    let checked = ok + failed;
    writeln!(
        out,
        "{checked} plugin librar{} checked: {ok} ok, {failed} failed",
        if checked == 1 { "y" } else { "ies" },
    )?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_ok(out: &mut impl Write, plugin: &Arc<Plugin>) -> std::io::Result<()> {
    let (major, minor) = plugin.abi();
    writeln!(
        out,
        "ok    {} {} (ABI {major}.{minor})  {}",
        plugin.name(),
        plugin.version(),
        plugin.path().display()
    )?;
    // The forms decide which sessions a run sends the plugin; the others are reported
    // as not applicable, so say them before anything else.
    let mut forms: Vec<String> = plugin
        .forms()
        .iter()
        .map(|f| f.as_str().to_string())
        .collect();
    forms.extend(
        plugin
            .unknown_forms()
            .iter()
            .map(|f| format!("{f} (unknown to this recap)")),
    );
    writeln!(out, "        forms: {}", forms.join(", "))?;
    writeln!(out, "        self-test: {}", plugin.self_test())?;
    let options = if plugin.options().is_empty() {
        "none".to_string()
    } else {
        plugin
            .options()
            .iter()
            .map(|o| format!("{}={}", o.key, o.default))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut invariants: Vec<String> = plugin
        .invariants()
        .iter()
        .map(|i| i.id().to_string())
        .collect();
    invariants.extend(
        plugin
            .unknown_invariants()
            .iter()
            .map(|id| format!("{id} (unknown to this recap)")),
    );
    writeln!(
        out,
        "        options: {options}; invariants: {}",
        invariants.join(", ")
    )
}
