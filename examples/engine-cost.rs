//! `recap run`'s engine against the naive loop and the floor, in process CPU time,
//! measured in rounds that run the three in turn (the engine-speed targets of
//! `docs/performance.md`: the engine ≥ 4× the naive loop, within 2× of the floor).
//!
//! The `harness` bench times the engine, the naive loop and the floor each in its own
//! few seconds, and on a shared VM identical runs drift by 5–20 % between them: the
//! floor's unchanged code has come out 20 % slower from one run to the next. Here each
//! round runs the three one after the other (`benches/common/pairs.rs`), each side about
//! a second of CPU time, and the ratios are taken within a round. The three are the
//! bench's own (`benches/common/naive.rs`): the engine configured as `recap run` runs by
//! default with one job, the naive loop with the same tokenizer (checked to count the
//! engine's total), the floor over the corpus's distinct prompt lines.
//!
//! ```text
//! cargo run --profile bench --example engine-cost -- [--rounds N] [--warm N] [--side-ms N] [CORPUS ...]
//! ```
//!
//! Defaults: 9 rounds after 1 warm-up round, every `bench-data/*.jsonl`. Prints, per
//! corpus, the median ms of each and the median and quartiles of naive / engine and
//! engine / floor.

#[path = "../benches/common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::naive::{distinct_prompt_lines, floor, naive, report_total};
use common::pairs::{RoundArgs, quartiles, ratios, reps_for, rounds};
use common::{bench_data_files, engine, engine_config, run_strategies, run_tokenizer};
use std::hint::black_box;
use std::path::PathBuf;

fn main() -> Result<()> {
    let args = RoundArgs::parse("--rounds", 9, 1)?;
    let corpora = if args.rest.is_empty() {
        bench_data_files()
    } else {
        args.rest.iter().map(PathBuf::from).collect()
    };
    let strategies = run_strategies();
    let cfg = engine_config(&strategies);
    let tok = run_tokenizer();
    println!(
        "corpus                       engine ms  naive ms  floor ms   naive / engine         engine / floor"
    );
    for corpus in &corpora {
        let want = report_total(&engine(&cfg, corpus));
        let got = naive(&strategies, &tok, corpus);
        if got != want {
            bail!(
                "{}: the naive loop counted {got} tokens, the engine {want}",
                corpus.display()
            );
        }
        let lines = distinct_prompt_lines(&strategies, corpus);
        let mut e = || drop(black_box(engine(&cfg, corpus)));
        let mut n = || {
            black_box(naive(&strategies, &tok, corpus));
        };
        let mut f = || {
            black_box(floor(&tok, corpus, &lines));
        };
        let reps = [
            reps_for(&mut e, args.side)?,
            reps_for(&mut n, args.side)?,
            reps_for(&mut f, args.side)?,
        ];
        let ms = rounds(&mut [&mut e, &mut n, &mut f], &reps, args.warm, args.count)?;
        let (n1, n2, n3) = quartiles(&ratios(&ms[1], &ms[0]));
        let (f1, f2, f3) = quartiles(&ratios(&ms[0], &ms[2]));
        let name = corpus.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{name:<28} {:>9.1} {:>9.1} {:>9.1}   {n2:.2} ({n1:.2} – {n3:.2})    {f2:.2} ({f1:.2} – {f3:.2})",
            quartiles(&ms[0]).1,
            quartiles(&ms[1]).1,
            quartiles(&ms[2]).1,
        );
    }
    Ok(())
}
