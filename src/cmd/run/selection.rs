//! Which strategies and tokenizers a run measures: the command line's or experiment
//! file's choice, in the order given, with plugins' strategies; and a warning for a
//! plugin loaded for nothing.

use super::{Args, BackendArg};
use crate::cmd::config::{Origin, PluginRun};
use crate::cmd::plugins::LoadFailure;
use anyhow::{Context, Result, bail};
use recap_core::{Registry, StrategySpec};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer, sweep};
use recap_plugin_host::Plugin;
use std::sync::Arc;

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

/// Every registered strategy with its default options: the four ptc_runner ones
/// first, the other built-ins, then plugins in name order.
fn every_strategy(registry: &Registry) -> Result<Vec<StrategyEntry>> {
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
    names
        .into_iter()
        .map(|name| {
            let s = registry
                .build(&name)
                .with_context(|| format!("strategy {name}"))?;
            Ok(StrategyEntry::new(s))
        })
        .collect()
}

pub(super) fn strategies(
    args: &Args,
    registry: &Registry,
    failures: &[LoadFailure],
) -> Result<Vec<StrategyEntry>> {
    if args.strategies.is_empty() && args.sweeps.is_empty() {
        return every_strategy(registry);
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
    let needs_endpoint =
        |spec: &str| StrategySpec::parse(spec).is_ok_and(|s| s.name == recap_llm_summary::NAME);
    if let Some(spec) = args
        .strategies
        .iter()
        .chain(&args.sweeps)
        .find(|s| needs_endpoint(s))
    {
        bail!("{spec:?}: {}", recap_llm_summary::NEEDS_ENDPOINT);
    }
    let mut out = Vec::new();
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

pub(super) fn tokenizers(args: &Args) -> Result<Vec<Tokenizer>> {
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

/// Adds the plugin strategies the experiment file runs with options, now that the
/// plugins are loaded and their strategy names known.
pub(super) fn add_plugin_runs(
    args: &mut Args,
    runs: Vec<PluginRun>,
    plugins: &[Arc<Plugin>],
) -> Result<()> {
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
        args.origins.push(Origin {
            key: "strategies",
            value: spec.clone(),
            at: run.origin,
        });
        args.strategies.push(spec);
    }
    Ok(())
}

/// The warnings for plugins loaded although none of their strategies runs (a
/// `--strategy` list that leaves them out): loading one is then most likely a mistake.
pub(super) fn idle_plugins(plugins: &[Arc<Plugin>], cfg: &RunConfig) -> Vec<String> {
    let running: Vec<String> = cfg
        .strategies
        .iter()
        .filter(|e| !e.implicit)
        .map(|e| StrategySpec::parse(&e.name).map_or_else(|_| e.name.clone(), |s| s.name))
        .collect();
    plugins
        .iter()
        .filter(|p| !running.iter().any(|n| n == p.name()))
        .map(|p| {
            format!(
                "warning: plugin {} was loaded, but none of its strategies runs: it provides {}, which the strategies asked for ({}) leave out; add `--strategy {}` to run it",
                p.path().display(),
                p.name(),
                running.join(", "),
                p.name()
            )
        })
        .collect()
}
