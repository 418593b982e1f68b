//! Chat-form against PTC-Lisp `recap run` cost per corpus byte, in process CPU time,
//! measured in alternating pairs (the chat-per-MB target of `docs/performance.md`).
//!
//! The criterion benches time each form in its own minute, and on a shared VM the CPU
//! time of identical runs drifts by 10–15 % from one minute to the next: more than the
//! difference the target compares. Here each pair runs the engine over the chat corpus
//! and then over the PTC-Lisp corpus (as `harness/<corpus>/engine` does: every built-in,
//! o200k_base, one job, from the file to the finished report), each side repeated so
//! that it lasts about a quarter of a second against the 10 ms tick of
//! `/proc/self/stat`, and takes the ratio of the two sides' costs per byte; drift slower
//! than a pair cancels out of that ratio. Warm-up pairs come first and are not counted.
//!
//! ```text
//! cargo run --profile bench --example form-cost -- [--pairs N] [--warm N] [--reps N] [CHAT PTC]
//! ```
//!
//! Defaults: 30 pairs after 3 warm-up pairs, `bench-data/chat-generated.jsonl` against
//! `bench-data/generated.jsonl`. `--reps N` fixes the runs per side (for instruction
//! counts: under callgrind, two pair counts apart give the warm instructions of a run).
//! Prints each form's median ms per MB and the median and quartiles of the per-pair
//! ratio (chat per byte / PTC per byte).

#[path = "../benches/common/mod.rs"]
mod common;

use anyhow::{Context, Result, bail};
use common::pairs::{SIDE, alternate, number_after, quantile, reps_for};
use common::{engine, engine_config, run_strategies};
use std::hint::black_box;
use std::path::{Path, PathBuf};

struct Args {
    pairs: usize,
    warm: usize,
    /// Runs per side, instead of as many as last about [`SIDE`].
    reps: Option<usize>,
    chat: PathBuf,
    ptc: PathBuf,
}

fn parse_args() -> Result<Args> {
    let root = common::workspace_root().join("bench-data");
    let mut args = Args {
        pairs: 30,
        warm: 3,
        reps: None,
        chat: root.join("chat-generated.jsonl"),
        ptc: root.join("generated.jsonl"),
    };
    let mut files = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pairs" | "--warm" | "--reps" => {
                let n = number_after(&mut it, &a)?;
                match a.as_str() {
                    "--pairs" => args.pairs = n.max(1),
                    "--warm" => args.warm = n,
                    _ => args.reps = Some(n.max(1)),
                }
            }
            "--bench" => {} // passed by `cargo bench`-style runners; nothing to do
            _ if a.starts_with("--") => bail!("unknown option {a}"),
            _ => files.push(PathBuf::from(a)),
        }
    }
    match files.len() {
        0 => {}
        2 => {
            args.ptc = files.pop().context("two files")?;
            args.chat = files.pop().context("two files")?;
        }
        n => bail!("expected a chat corpus and a PTC-Lisp corpus, got {n} files"),
    }
    Ok(args)
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let bytes = |p: &Path| -> Result<f64> {
        Ok(std::fs::metadata(p)
            .with_context(|| format!("reading {}", p.display()))?
            .len() as f64
            / 1e6)
    };
    let (chat_mb, ptc_mb) = (bytes(&args.chat)?, bytes(&args.ptc)?);
    let cfg = engine_config(&run_strategies());
    let mut chat_run = || drop(black_box(engine(&cfg, &args.chat)));
    let mut ptc_run = || drop(black_box(engine(&cfg, &args.ptc)));
    let (chat_reps, ptc_reps) = match args.reps {
        Some(n) => (n, n),
        None => (
            reps_for(&mut chat_run, SIDE)?,
            reps_for(&mut ptc_run, SIDE)?,
        ),
    };
    let pairs = alternate(
        &mut chat_run,
        &mut ptc_run,
        (chat_reps, ptc_reps),
        args.warm,
        args.pairs,
    )?;
    let per_mb = |v: &[f64], mb: f64| {
        let mut v: Vec<f64> = v.iter().map(|ms| ms / mb).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (chat, ptc) = (per_mb(&pairs.a, chat_mb), per_mb(&pairs.b, ptc_mb));
    let mut ratios: Vec<f64> = pairs
        .ratios()
        .iter()
        // chat per byte / PTC per byte = (chat ms / PTC ms) × (PTC MB / chat MB).
        .map(|ptc_over_chat| ptc_mb / (ptc_over_chat * chat_mb))
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "chat {} ({chat_mb:.2} MB, {chat_reps} runs a side): median {:.1} ms/MB",
        args.chat.display(),
        quantile(&chat, 0.5)
    );
    println!(
        "ptc  {} ({ptc_mb:.2} MB, {ptc_reps} runs a side): median {:.1} ms/MB",
        args.ptc.display(),
        quantile(&ptc, 0.5)
    );
    println!(
        "chat / ptc per MB over {} pairs: median {:.3}, quartiles {:.3} – {:.3}, range {:.3} – {:.3}",
        ratios.len(),
        quantile(&ratios, 0.5),
        quantile(&ratios, 0.25),
        quantile(&ratios, 0.75),
        ratios[0],
        ratios[ratios.len() - 1]
    );
    Ok(())
}
