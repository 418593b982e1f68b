//! The plugin-run comparison under an instruction counter (`docs/performance.md`):
//! `recap run`'s engine (one job, o200k_base, every check), asked for one strategy, once
//! as the built-in and once as its plugin twin (a wrapped built-in loaded in-process).
//! Both runs also replay the implicit `full-history` baseline, as `recap run --strategy
//! X` does (full-history's twin has the baseline's spec, so it is the baseline), and
//! must count the same tokens. `PLUGIN_RUN_ONLY=builtin|plugin|setup` runs
//! one of them (or neither) for `valgrind --tool=callgrind`: a run's instructions are
//! its count minus the `setup` count (loading, configuring), every thread included.
//! `PLUGIN_RUN_REPS=n` makes that one run n times (for `perf` or `perf stat`, which
//! would otherwise see mostly the tokenizer's loading).
//!
//! ```text
//! cargo build --release --manifest-path crates/recap-plugin-host/tests/fixtures/Cargo.toml \
//!     -p recap-plugin-wrapped-builtins --examples
//! cargo run --profile bench --example plugin-run-instructions -- \
//!     <fixtures target>/release/examples/libwrap_rolling_window.so rolling-window bench-data/*.jsonl
//! ```
//!
//! The time limit follows `RECAP_PLUGIN_TIMEOUT` as in `recap run` (calls run on the
//! run's worker either way; with a limit, under the watchdog). Prints the prompt tokens
//! each run counted.
//!
//! A corpus argument `generated` stands for the plugin bench's generated corpus
//! (`benches/plugin.rs`: recap-gen seed 7, 30 PTC-Lisp and 30 chat sessions of 8–40
//! turns), written to a temporary file.

/// Allocates as the `recap` binary does (src/main.rs), so the counts are the command's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::{Context, Result, bail};
use recap_core::{Registry, Strategy};
use recap_harness::{
    Backend, Encoding, Hooks, Report, RunConfig, StrategyEntry, Tokenizer, run_corpora,
};
use std::path::PathBuf;
use std::sync::Arc;

fn config(strategy: &Arc<dyn Strategy>) -> Result<RunConfig> {
    let baseline = recap_builtins::registry()
        .build("full-history")
        .context("full-history builds")?;
    let tokenizer = Tokenizer::get(Encoding::O200kBase, Backend::default());
    let mut cfg = RunConfig::new(
        vec![StrategyEntry::new(Arc::clone(strategy))],
        baseline,
        vec![tokenizer],
    )?;
    cfg.jobs = 1;
    Ok(cfg)
}

fn run(cfg: &RunConfig, corpora: &[PathBuf]) -> Result<Vec<(String, u64)>> {
    let report: Report = run_corpora(cfg, corpora, Hooks::default())?;
    Ok(totals(&report))
}

fn totals(report: &Report) -> Vec<(String, u64)> {
    report
        .runs
        .iter()
        .map(|r| (r.strategy.clone(), r.prompt_tokens_total))
        .collect()
}

/// The plugin bench's generated corpus (see the module's documentation).
fn write_generated(dir: &std::path::Path) -> Result<PathBuf> {
    let mut sessions = recap_gen::generate_corpus(7, 30, 8..=40);
    sessions.extend(recap_gen::generate_chat_corpus(7, 30, 8..=40));
    let path = dir.join("generated.jsonl");
    let file = std::fs::File::create(&path).with_context(|| format!("{}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    recap_gen::write_jsonl(&mut out, &sessions)?;
    std::io::Write::flush(&mut out)?;
    Ok(path)
}

/// `PLUGIN_RUN_REPS` (default 1): how many times the one run `PLUGIN_RUN_ONLY` names is
/// made, so that a sampling profiler sees it rather than the tokenizer's loading.
fn reps() -> Result<usize> {
    match std::env::var("PLUGIN_RUN_REPS") {
        Ok(n) => n
            .parse()
            .with_context(|| format!("PLUGIN_RUN_REPS={n:?}: expected a whole number")),
        Err(_) => Ok(1),
    }
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: plugin-run-instructions <wrapped-builtin-lib> <strategy> <corpus.jsonl | generated>...";
    let lib = PathBuf::from(args.next().context(usage)?);
    let name = args.next().context(usage)?;
    let tmp = tempfile::tempdir().context("a temporary directory")?;
    let mut corpora: Vec<PathBuf> = Vec::new();
    for arg in args {
        if arg == "generated" {
            corpora.push(write_generated(tmp.path())?);
        } else {
            corpora.push(PathBuf::from(arg));
        }
    }
    if corpora.is_empty() {
        bail!("{usage}");
    }
    let builtin = recap_builtins::registry()
        .build(&name)
        .with_context(|| format!("built-in {name:?}"))?;
    let plugin =
        recap_plugin_host::load(&lib).with_context(|| format!("loading {}", lib.display()))?;
    let mut registry = Registry::new();
    recap_plugin_host::register(&mut registry, &plugin)?;
    let twin = registry
        .build(&name)
        .with_context(|| format!("{} provides no {name:?}", lib.display()))?;

    let builtin_cfg = config(&builtin)?;
    let plugin_cfg = config(&twin)?;
    match std::env::var("PLUGIN_RUN_ONLY").as_deref() {
        Ok("setup") => return Ok(()),
        Ok("builtin") => {
            for _ in 0..reps()? {
                run(&builtin_cfg, &corpora)?;
            }
            return Ok(());
        }
        Ok("plugin") => {
            for _ in 0..reps()? {
                run(&plugin_cfg, &corpora)?;
            }
            return Ok(());
        }
        Ok(other) => bail!("PLUGIN_RUN_ONLY={other:?}: expected setup, builtin or plugin"),
        Err(_) => {}
    }
    let want = run(&builtin_cfg, &corpora)?;
    let got = run(&plugin_cfg, &corpora)?;
    if want != got {
        bail!("the twin counted {got:?}, the built-in {want:?}");
    }
    for (strategy, tokens) in want {
        println!("{strategy} {tokens}");
    }
    Ok(())
}
