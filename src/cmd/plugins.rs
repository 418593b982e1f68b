//! `recap plugins check`, and the `--plugin` / `--plugin-dir` flags that every command
//! taking `--strategy` flattens in (see [`PluginArgs`]).

use anyhow::{Result, bail};
use recap_core::Registry;
use recap_plugin_host::{Plugin, load_all, plugin_files_in, register};
use std::io::Write;
use std::path::PathBuf;
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

    /// The built-in strategies plus every plugin's. Any library that fails to load,
    /// self-test or register is an error (all of them are listed, each naming its file).
    pub fn registry(&self) -> Result<Registry> {
        self.load().map(|(registry, _)| registry)
    }

    /// [`PluginArgs::registry`] and the plugins loaded into it (in file order), for
    /// callers that report which libraries they ran.
    pub fn load(&self) -> Result<(Registry, Vec<Arc<Plugin>>)> {
        self.apply_time_limit();
        let mut registry = recap_builtins::registry();
        let files = self.files()?;
        if files.is_empty() {
            return Ok((registry, Vec::new()));
        }
        let (plugins, mut errors) = load_all(&files);
        for plugin in &plugins {
            if let Err(e) = register(&mut registry, plugin) {
                errors.push(e);
            }
        }
        if !errors.is_empty() {
            let list: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
            bail!(
                "{} of {} plugin librar{} failed to load:\n{}",
                errors.len(),
                files.len(),
                if files.len() == 1 { "y" } else { "ies" },
                list.join("\n")
            );
        }
        Ok((registry, plugins))
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
    };
    plugin_args.apply_time_limit();
    let files = plugin_args.files()?;
    if files.is_empty() {
        bail!("nothing to check: name plugin libraries, or a directory with --plugin-dir");
    }
    // Registering next to the built-ins also catches name clashes.
    let mut registry = recap_builtins::registry();
    let mut out = std::io::stdout().lock();
    let (mut ok, mut failed) = (0usize, 0usize);
    for file in &files {
        let (plugins, errors) = load_all(std::slice::from_ref(file));
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
