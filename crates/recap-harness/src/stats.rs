//! Small statistics helpers: a bounded-memory latency histogram and exact quantiles.

/// Log-linear histogram of non-negative integers (nanoseconds): values below 256 are
/// exact; above, each power of two is split into 128 buckets, so a reported quantile is
/// within 1% of the true sample. Memory is fixed (~60 KB) whatever the number of calls,
/// which keeps `recap run` bounded on huge corpora.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const LINEAR: u64 = 2 * SUB;

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram(n={})", self.total)
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; Self::bucket(u64::MAX) + 1],
            total: 0,
        }
    }

    fn bucket(v: u64) -> usize {
        if v < LINEAR {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros(); // ≥ SUB_BITS + 1
        let shift = exp - SUB_BITS;
        let mantissa = (v >> shift) - SUB; // 0..SUB
        (LINEAR + u64::from(exp - SUB_BITS - 1) * SUB + mantissa) as usize
    }

    /// The midpoint of a bucket's value range.
    fn value(bucket: usize) -> u64 {
        let b = bucket as u64;
        if b < LINEAR {
            return b;
        }
        let exp = (b - LINEAR) / SUB + u64::from(SUB_BITS) + 1;
        let mantissa = (b - LINEAR) % SUB;
        let shift = exp - u64::from(SUB_BITS);
        let low = (SUB + mantissa) << shift;
        low + ((1u64 << shift) >> 1)
    }

    pub fn record(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.total += 1;
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The `q`-quantile (0 ≤ q ≤ 1), nearest rank; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::value(i));
            }
        }
        None
    }
}

/// Exact nearest-rank quantile of a sorted slice.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize).max(1);
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(50));
        assert_eq!(h.quantile(0.95), Some(95));
        assert_eq!(Histogram::new().quantile(0.5), None);
    }

    #[test]
    fn large_values_within_one_percent() {
        for v in [300u64, 1_000, 12_345, 987_654_321, u64::MAX / 3] {
            let mut h = Histogram::new();
            h.record(v);
            let got = h.quantile(0.5).unwrap() as f64;
            assert!((got - v as f64).abs() / (v as f64) < 0.01, "{v} -> {got}");
        }
    }

    #[test]
    fn quantile_sorted_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(4.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
    }
}
