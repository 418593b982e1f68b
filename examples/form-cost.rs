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
use common::cpu::process_cpu_time;
use common::{engine, engine_config, run_strategies};
use recap_harness::RunConfig;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one side of a pair should last: many ticks of the CPU clock.
const SIDE: Duration = Duration::from_millis(250);

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
                let n: usize = it
                    .next()
                    .with_context(|| format!("{a} needs a number"))?
                    .parse()
                    .with_context(|| format!("{a} needs a number"))?;
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

/// CPU time of `reps` engine runs over `corpus`.
fn side(cfg: &RunConfig, corpus: &Path, reps: usize) -> Result<Duration> {
    let start = process_cpu_time().context("process CPU time needs /proc/self/stat")?;
    for _ in 0..reps {
        black_box(engine(cfg, corpus));
    }
    let end = process_cpu_time().context("process CPU time needs /proc/self/stat")?;
    Ok(end.saturating_sub(start))
}

/// Runs over `corpus` needed for one side to last about [`SIDE`].
fn reps_for(cfg: &RunConfig, corpus: &Path) -> Result<usize> {
    let mut reps = 1;
    loop {
        let t = side(cfg, corpus, reps)?;
        if t >= SIDE / 4 || reps >= 1 << 12 {
            let per_run = t.as_secs_f64() / reps as f64;
            return Ok(((SIDE.as_secs_f64() / per_run.max(1e-6)).ceil() as usize).max(1));
        }
        reps *= 2;
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
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
    let (chat_reps, ptc_reps) = match args.reps {
        Some(n) => (n, n),
        None => (reps_for(&cfg, &args.chat)?, reps_for(&cfg, &args.ptc)?),
    };
    let per_mb = |t: Duration, reps: usize, mb: f64| t.as_secs_f64() * 1e3 / reps as f64 / mb;
    let (mut chat, mut ptc, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..args.warm + args.pairs {
        let c = per_mb(side(&cfg, &args.chat, chat_reps)?, chat_reps, chat_mb);
        let p = per_mb(side(&cfg, &args.ptc, ptc_reps)?, ptc_reps, ptc_mb);
        if pair >= args.warm {
            chat.push(c);
            ptc.push(p);
            ratios.push(c / p);
        }
    }
    for v in [&mut chat, &mut ptc, &mut ratios] {
        v.sort_by(f64::total_cmp);
    }
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
