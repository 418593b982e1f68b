//! The calls an evaluation asks about: a seeded sample, stratified by position in the
//! session, shared by every strategy (each strategy is measured on the same calls).
//!
//! A call's position is `k / n` (the call after `k` of the session's `n` recorded turns:
//! only calls whose next turn was recorded can be compared with it). Calls fall into
//! [`STRATA`] equal bands of position — early, early-middle, late-middle, late — and the
//! sample takes from each band in proportion to its size (largest remainders), so that a
//! corpus of long sessions is not sampled mostly from their middles by chance, and late
//! calls, where compression bites, are always represented.

use recap_llm::rng::Rng;
use serde::Serialize;

/// Position bands of the stratified sample.
pub const STRATA: usize = 4;

/// The call after `k` completed turns of session number `session` (its index among the
/// evaluated sessions, in corpus order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CallRef {
    pub session: usize,
    pub k: usize,
}

/// The band of call `k` of a session with `n` calls.
pub fn stratum(k: usize, n: usize) -> usize {
    (k * STRATA / n.max(1)).min(STRATA - 1)
}

/// Up to `n` calls, `calls[i]` being the number of calls of session `i`; every call when
/// `n` covers them all. Sorted by session, then call.
pub fn sample_calls(calls: &[usize], n: usize, seed: u64) -> Vec<CallRef> {
    let mut bands: Vec<Vec<CallRef>> = vec![Vec::new(); STRATA];
    for (session, &count) in calls.iter().enumerate() {
        for k in 0..count {
            bands[stratum(k, count)].push(CallRef { session, k });
        }
    }
    let total: usize = bands.iter().map(Vec::len).sum();
    let mut out: Vec<CallRef> = if n >= total {
        bands.into_iter().flatten().collect()
    } else {
        let quotas = allocate(&bands.iter().map(Vec::len).collect::<Vec<_>>(), n);
        bands
            .into_iter()
            .enumerate()
            .flat_map(|(i, mut band)| {
                Rng::derive(seed, &[i as u64]).shuffle(&mut band);
                band.truncate(quotas[i]);
                band
            })
            .collect()
    };
    out.sort();
    out
}

/// `n` split over bands in proportion to their sizes, by largest remainder (ties to the
/// earlier band).
fn allocate(sizes: &[usize], n: usize) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    if total == 0 {
        return vec![0; sizes.len()];
    }
    let mut quotas: Vec<usize> = sizes.iter().map(|&s| s * n / total).collect();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    // Remainders compared exactly as fractions over `total`.
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i] * n % total));
    let mut left = n - quotas.iter().sum::<usize>();
    for i in order {
        if left == 0 {
            break;
        }
        if quotas[i] < sizes[i] {
            quotas[i] += 1;
            left -= 1;
        }
    }
    quotas
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_seeded_sorted_and_spread_over_positions() {
        let calls = [40, 8, 0, 12];
        let a = sample_calls(&calls, 20, 1);
        assert_eq!(a, sample_calls(&calls, 20, 1));
        assert_ne!(a, sample_calls(&calls, 20, 2));
        assert_eq!(a.len(), 20);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        let mut per_band = [0; STRATA];
        for c in &a {
            per_band[stratum(c.k, calls[c.session])] += 1;
        }
        // 60 calls, 15 per band: 5 of each.
        assert_eq!(per_band, [5, 5, 5, 5]);
    }

    #[test]
    fn a_sample_larger_than_the_corpus_is_every_call() {
        let all = sample_calls(&[2, 3], 100, 9);
        assert_eq!(all.len(), 5);
        assert_eq!(all[0], CallRef { session: 0, k: 0 });
    }

    #[test]
    fn allocation_is_proportional_and_exact() {
        assert_eq!(allocate(&[10, 10, 10, 10], 6), vec![2, 2, 1, 1]);
        assert_eq!(allocate(&[1, 0, 0, 99], 10), vec![0, 0, 0, 10]);
        assert_eq!(allocate(&[3, 3, 3, 3], 12).iter().sum::<usize>(), 12);
    }
}
