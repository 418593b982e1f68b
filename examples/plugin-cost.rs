//! A plugin twin against its built-in in `recap run`, in process CPU time, measured in
//! alternating pairs (the plugin target of `docs/performance.md`: a twin ≤ 1.3× its
//! built-in end to end, time limit on).
//!
//! The `plugin` bench's `plugin-run` groups time the built-in and then its twin, each in
//! its own few seconds, and on a shared VM identical runs drift by more than the
//! target's margin between the two. Here the two alternate (`benches/common/pairs.rs`):
//! each pair runs the engine over a corpus with the built-in, then with its twin (one
//! job, o200k_base, every check, the default time limit — the `plugin-run/…/builtin`
//! and `…/plugin` configurations, over the same two corpora), and keeps the ratio.
//! Both sides must count the same tokens, or the example stops.
//!
//! ```text
//! cargo run --profile bench --example plugin-cost -- [--pairs N] [--warm N] [--side-ms N] [STRATEGY ...]
//! ```
//!
//! Defaults: 15 pairs after 2 warm-up pairs, each side about 1,000 ms of CPU time (the
//! CPU clock ticks every 10 ms: a side of 1 s reads it to 1 %), every built-in that has
//! a twin. Prints, per
//! strategy and corpus, the median ms of each side and the median and quartiles of the
//! per-pair ratio (twin / built-in).

#[path = "../benches/common/mod.rs"]
mod common;

use anyhow::{Context, Result, bail};
use common::pairs::{RoundArgs, alternate, reps_for};
use common::plugin_twins::{
    run_corpora, token_totals, twin, twin_library, twin_names, wrapped_libraries,
};
use common::{bench_data_files, engine, engine_config, read_corpus};
use recap_plugin_host::Isolation;
use std::hint::black_box;
use std::sync::Arc;

/// The strategies named on the command line (every twin's when none is), checked to
/// have a twin.
fn strategies(named: Vec<String>) -> Result<Vec<String>> {
    let known = twin_names();
    if named.is_empty() {
        return Ok(known);
    }
    if let Some(unknown) = named.iter().find(|s| !known.contains(s)) {
        bail!(
            "{unknown:?} has no plugin twin; those that do: {}",
            known.join(", ")
        );
    }
    Ok(named)
}

fn main() -> Result<()> {
    let args = RoundArgs::parse("--pairs", 15, 2)?;
    let names = strategies(args.rest)?;
    let tmp = tempfile::tempdir().context("a temporary directory")?;
    // Every bench-data session (`bench_data_sessions` keeps a few outside `cargo bench`).
    let bench_data: Vec<_> = bench_data_files()
        .iter()
        .flat_map(|p| read_corpus(p))
        .collect();
    let corpora = run_corpora(tmp.path(), &bench_data, true);
    let libs = wrapped_libraries(true);
    let direct = recap_builtins::registry();
    println!(
        "strategy               corpus      built-in ms  twin ms   twin / built-in: median (quartiles)"
    );
    for name in &names {
        let builtin = direct
            .build(name)
            .with_context(|| format!("built-in {name}"))?;
        let plugin = twin(twin_library(&libs, name), name, &Isolation::InProcess);
        for (corpus_name, corpus, _) in &corpora {
            let builtin_run = engine_config(&[Arc::clone(&builtin)]);
            let plugin_run = engine_config(&[Arc::clone(&plugin)]);
            let (want, got) = (
                token_totals(&engine(&builtin_run, corpus)),
                token_totals(&engine(&plugin_run, corpus)),
            );
            if want != got {
                bail!("{name} on {corpus_name}: the twin counted {got:?}, the built-in {want:?}");
            }
            let mut a = || drop(black_box(engine(&builtin_run, corpus)));
            let mut b = || drop(black_box(engine(&plugin_run, corpus)));
            let reps = (reps_for(&mut a, args.side)?, reps_for(&mut b, args.side)?);
            let pairs = alternate(&mut a, &mut b, reps, args.warm, args.count)?;
            let (q1, median, q3) = pairs.ratio_quartiles();
            println!(
                "{name:<22} {corpus_name:<11} {:>11.2} {:>8.2}   {median:.3} ({q1:.3} – {q3:.3})",
                pairs.median_a(),
                pairs.median_b(),
            );
        }
    }
    Ok(())
}
