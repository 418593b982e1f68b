//! Percentile bootstrap confidence intervals (95 %), seeded so reports reproduce.

use recap_llm::rng::Rng;
use serde::Serialize;

/// A 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

fn percentile_interval(mut stats: Vec<f64>) -> Option<Interval> {
    stats.retain(|x| x.is_finite());
    if stats.is_empty() {
        return None;
    }
    stats.sort_by(f64::total_cmp);
    let at = |q: f64| stats[((stats.len() - 1) as f64 * q).round() as usize];
    Some(Interval {
        low: at(0.025),
        high: at(0.975),
    })
}

/// The interval of the mean of `values`, from `resamples` resamples.
pub fn mean_interval(values: &[f64], resamples: usize, seed: u64) -> Option<Interval> {
    if values.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = Rng::new(seed);
    let n = values.len() as u64;
    let stats = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.below(n) as usize]).sum::<f64>() / n as f64)
        .collect();
    percentile_interval(stats)
}

/// The interval of `mean(a) / mean(b)` over paired observations (the same calls under
/// a strategy and under the control); resamples where `mean(b)` is 0 are skipped.
pub fn ratio_interval(pairs: &[(f64, f64)], resamples: usize, seed: u64) -> Option<Interval> {
    if pairs.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = Rng::new(seed);
    let n = pairs.len() as u64;
    let stats = (0..resamples)
        .filter_map(|_| {
            let (mut a, mut b) = (0.0, 0.0);
            for _ in 0..n {
                let (x, y) = pairs[rng.below(n) as usize];
                a += x;
                b += y;
            }
            (b != 0.0).then(|| a / b)
        })
        .collect();
    percentile_interval(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_holds_the_mean_and_narrows_with_more_data() {
        let small: Vec<f64> = (0..20).map(|i| f64::from(i % 2)).collect();
        let large: Vec<f64> = (0..2000).map(|i| f64::from(i % 2)).collect();
        let a = mean_interval(&small, 1000, 1).unwrap();
        let b = mean_interval(&large, 1000, 1).unwrap();
        assert!(a.low < 0.5 && 0.5 < a.high, "{a:?}");
        assert!(b.high - b.low < a.high - a.low);
        assert_eq!(a, mean_interval(&small, 1000, 1).unwrap());
        assert_eq!(mean_interval(&[], 1000, 1), None);
    }

    #[test]
    fn ratio_of_equal_series_is_one() {
        let pairs: Vec<(f64, f64)> = (0..30)
            .map(|i| (f64::from(i % 3), f64::from(i % 3)))
            .collect();
        let r = ratio_interval(&pairs, 500, 4).unwrap();
        assert_eq!((r.low, r.high), (1.0, 1.0));
        assert_eq!(ratio_interval(&[(1.0, 0.0)], 100, 1), None);
    }
}
