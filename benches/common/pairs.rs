//! Two costs compared in alternating pairs of process CPU time, for the examples that
//! check a ratio target (`form-cost`, `plugin-cost`).
//!
//! On a shared VM the CPU time of identical runs drifts by 10–15 % from one minute to
//! the next, and the criterion benches time each side in its own minute: more than some
//! targets' margins. Here each pair runs one side and then the other, each repeated so
//! that it lasts about a quarter of a second against the 10 ms tick of
//! `/proc/self/stat`, and keeps the ratio of the two; drift slower than a pair cancels
//! out of it. Warm-up pairs come first and are not counted.

use super::cpu::process_cpu_time;
use anyhow::{Context, Result};
use std::time::Duration;

/// How long one side of a pair should last by default: many ticks of the CPU clock.
pub const SIDE: Duration = Duration::from_millis(250);

/// CPU time of `reps` calls of `run`.
pub fn side(run: &mut dyn FnMut(), reps: usize) -> Result<Duration> {
    let start = process_cpu_time().context("process CPU time needs /proc/self/stat")?;
    for _ in 0..reps {
        run();
    }
    let end = process_cpu_time().context("process CPU time needs /proc/self/stat")?;
    Ok(end.saturating_sub(start))
}

/// Calls of `run` needed for one side to last about `side_length` ([`SIDE`] unless a
/// caller wants longer sides, for a finer reading of the 10 ms clock).
pub fn reps_for(run: &mut dyn FnMut(), side_length: Duration) -> Result<usize> {
    let mut reps = 1;
    loop {
        let t = side(run, reps)?;
        if t >= side_length / 4 || reps >= 1 << 12 {
            let per_run = t.as_secs_f64() / reps as f64;
            return Ok(((side_length.as_secs_f64() / per_run.max(1e-6)).ceil() as usize).max(1));
        }
        reps *= 2;
    }
}

/// The value at quantile `q` of `sorted` (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

/// Milliseconds per call of each side in every counted pair.
pub struct Pairs {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
}

impl Pairs {
    /// Each pair's ratio b / a.
    pub fn ratios(&self) -> Vec<f64> {
        ratios(&self.b, &self.a)
    }

    /// Lower quartile, median and upper quartile of the ratios.
    pub fn ratio_quartiles(&self) -> (f64, f64, f64) {
        quartiles(&self.ratios())
    }

    pub fn median_a(&self) -> f64 {
        quartiles(&self.a).1
    }

    pub fn median_b(&self) -> f64 {
        quartiles(&self.b).1
    }
}

/// `warm` uncounted pairs, then `pairs` counted ones, of `reps.0` calls of `a` then
/// `reps.1` calls of `b`.
pub fn alternate(
    a: &mut dyn FnMut(),
    b: &mut dyn FnMut(),
    reps: (usize, usize),
    warm: usize,
    pairs: usize,
) -> Result<Pairs> {
    let mut sides = rounds(&mut [a, b], &[reps.0, reps.1], warm, pairs)?;
    let b = sides.pop().context("two sides")?;
    let a = sides.pop().context("two sides")?;
    Ok(Pairs { a, b })
}

/// `warm` uncounted rounds, then `counted` ones, each running every side in turn
/// (`reps[i]` calls of `sides[i]`): milliseconds per call, per side, per counted round.
/// Ratios between sides are taken within a round, so drift slower than a round cancels.
pub fn rounds(
    sides: &mut [&mut dyn FnMut()],
    reps: &[usize],
    warm: usize,
    counted: usize,
) -> Result<Vec<Vec<f64>>> {
    let mut out = vec![Vec::with_capacity(counted); sides.len()];
    for round in 0..warm + counted {
        for (i, side_run) in sides.iter_mut().enumerate() {
            let t = side(*side_run, reps[i])?;
            if round >= warm {
                out[i].push(t.as_secs_f64() * 1e3 / reps[i] as f64);
            }
        }
    }
    Ok(out)
}

/// `num[i] / den[i]` for each round `i`: ratios taken within a round.
pub fn ratios(num: &[f64], den: &[f64]) -> Vec<f64> {
    num.iter().zip(den).map(|(n, d)| n / d).collect()
}

/// Median and quartiles of `values`.
pub fn quartiles(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    (quantile(&v, 0.25), quantile(&v, 0.5), quantile(&v, 0.75))
}

/// The command line the alternating-rounds examples share: how many rounds or pairs
/// (`COUNT_FLAG N`), warm-up rounds (`--warm N`), each side's CPU time (`--side-ms N`,
/// at least 10), and the positional arguments (`rest`).
pub struct RoundArgs {
    pub count: usize,
    pub warm: usize,
    pub side: Duration,
    pub rest: Vec<String>,
}

impl RoundArgs {
    /// Reads the process's arguments; `count` and `warm` are the defaults, each side
    /// lasts a second unless `--side-ms` says otherwise.
    pub fn parse(count_flag: &str, count: usize, warm: usize) -> Result<RoundArgs> {
        let mut args = RoundArgs {
            count,
            warm,
            side: Duration::from_secs(1),
            rest: Vec::new(),
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            if a == count_flag {
                args.count = number_after(&mut it, &a)?.max(1);
            } else if a == "--warm" {
                args.warm = number_after(&mut it, &a)?;
            } else if a == "--side-ms" {
                args.side = Duration::from_millis(number_after(&mut it, &a)?.max(10) as u64);
            } else if a == "--bench" {
                // passed by `cargo bench`-style runners; nothing to do
            } else if a.starts_with("--") {
                anyhow::bail!("unknown option {a}");
            } else {
                args.rest.push(a);
            }
        }
        Ok(args)
    }
}

/// The number after the option `flag` on a command line (`--pairs 30`).
pub fn number_after(args: &mut impl Iterator<Item = String>, flag: &str) -> Result<usize> {
    args.next()
        .with_context(|| format!("{flag} needs a number"))?
        .parse()
        .with_context(|| format!("{flag} needs a number"))
}
