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
use common::pairs::{alternate, number_after, reps_for};
use common::plugin_twins::{
    run_corpora, token_totals, twin, twin_library, twin_names, wrapped_libraries,
};
use common::{bench_data_files, engine, engine_config, read_corpus};
use recap_plugin_host::Isolation;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

struct Args {
    pairs: usize,
    warm: usize,
    /// How long each side of a pair lasts.
    side_ms: u64,
    strategies: Vec<String>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        pairs: 15,
        warm: 2,
        side_ms: 1000,
        strategies: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pairs" | "--warm" | "--side-ms" => {
                let n = number_after(&mut it, &a)?;
                match a.as_str() {
                    "--pairs" => args.pairs = n.max(1),
                    "--warm" => args.warm = n,
                    _ => args.side_ms = n.max(10) as u64,
                }
            }
            "--bench" => {} // passed by `cargo bench`-style runners; nothing to do
            _ if a.starts_with("--") => bail!("unknown option {a}"),
            _ => args.strategies.push(a),
        }
    }
    let known = twin_names();
    if args.strategies.is_empty() {
        args.strategies = known;
    } else if let Some(unknown) = args.strategies.iter().find(|s| !known.contains(s)) {
        bail!(
            "{unknown:?} has no plugin twin; those that do: {}",
            known.join(", ")
        );
    }
    Ok(args)
}

fn main() -> Result<()> {
    let args = parse_args()?;
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
    for name in &args.strategies {
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
            let side = Duration::from_millis(args.side_ms);
            let reps = (reps_for(&mut a, side)?, reps_for(&mut b, side)?);
            let pairs = alternate(&mut a, &mut b, reps, args.warm, args.pairs)?;
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
