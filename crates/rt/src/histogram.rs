//! A fixed-size latency histogram with log-linear buckets.
//!
//! Values (typically nanoseconds) below 32 have a bucket each; above that,
//! every power of two is split into 32 equal buckets, so a reported quantile
//! is within about 3 % of the true value over the whole `u64` range. The
//! storage is a fixed array: [`record`](Histogram::record) is a few
//! instructions and never allocates, so a real-time thread may record its
//! own timings. Quantiles are reported as the upper edge of their bucket
//! (never below the true value, never above the exact maximum).
//!
//! ```
//! use magnetar_rt::histogram::Histogram;
//!
//! let mut h = Histogram::new();
//! for v in 1..=1000 {
//!     h.record(v);
//! }
//! assert_eq!(h.count(), 1000);
//! assert_eq!(h.max(), 1000);
//! let p50 = h.quantile(0.5);
//! assert!((500..=520).contains(&p50), "{p50}");
//! println!("{}", h.summary_micros());
//! ```

use std::fmt;
use std::time::Duration;

/// log2 of the number of linear buckets per power of two.
const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
/// Values below SUB map to themselves; each of the 64 - SUB_BITS powers of
/// two above gets SUB buckets.
const BUCKETS: usize = SUB * (64 - SUB_BITS as usize + 1);

/// A latency histogram; see the [module documentation](self).
#[derive(Clone)]
pub struct Histogram {
    counts: [u64; BUCKETS],
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket_of(value: u64) -> usize {
    if value < SUB as u64 {
        return value as usize;
    }
    let exp = 63 - value.leading_zeros(); // >= SUB_BITS
    let sub = (value >> (exp - SUB_BITS)) as usize & (SUB - 1);
    (exp - SUB_BITS + 1) as usize * SUB + sub
}

/// The largest value that falls in `bucket`.
fn bucket_upper(bucket: usize) -> u64 {
    if bucket < SUB {
        return bucket as u64;
    }
    let exp = (bucket / SUB) as u32 + SUB_BITS - 1;
    let sub = (bucket % SUB) as u64;
    let lower = (1u64 << exp) | (sub << (exp - SUB_BITS));
    lower + ((1u64 << (exp - SUB_BITS)) - 1)
}

impl Histogram {
    /// An empty histogram (about 15 KiB; box it to keep it off the stack).
    pub const fn new() -> Self {
        Self {
            counts: [0; BUCKETS],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Adds one value.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_of(value)] += 1;
        self.count += 1;
        self.sum += value as u128;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Adds one duration, in nanoseconds.
    #[inline]
    pub fn record_duration(&mut self, d: Duration) {
        self.record(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Adds everything recorded in `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Forgets everything.
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Exact smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// Exact largest value (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value below or at which a fraction `q` (0..=1) of the values lie,
    /// to bucket precision (0 when empty).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_upper(bucket).min(self.max).max(self.min);
            }
        }
        self.max
    }

    /// Median.
    pub fn p50(&self) -> u64 {
        self.quantile(0.5)
    }

    /// 99th percentile.
    pub fn p99(&self) -> u64 {
        self.quantile(0.99)
    }

    /// 99.9th percentile.
    pub fn p999(&self) -> u64 {
        self.quantile(0.999)
    }

    /// One line with the values read as nanoseconds and printed in µs.
    pub fn summary_micros(&self) -> String {
        let us = |ns: u64| ns as f64 / 1000.0;
        format!(
            "n={} mean={:.2}µs p50={:.2}µs p99={:.2}µs p99.9={:.2}µs max={:.2}µs",
            self.count,
            self.mean() / 1000.0,
            us(self.p50()),
            us(self.p99()),
            us(self.p999()),
            us(self.max())
        )
    }
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("mean", &self.mean())
            .field("p50", &self.p50())
            .field("p99", &self.p99())
            .field("p999", &self.p999())
            .field("max", &self.max)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_a_bucket_that_contains_it() {
        let mut v = 1u64;
        while v < u64::MAX / 3 {
            for x in [v - 1, v, v + 1, v * 3 / 2] {
                let b = bucket_of(x);
                assert!(b < BUCKETS);
                assert!(bucket_upper(b) >= x, "{x} in bucket {b}");
                if b > 0 {
                    assert!(bucket_upper(b - 1) < x, "{x} in bucket {b}");
                }
            }
            v = v * 2 + 1;
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_upper(BUCKETS - 1), u64::MAX);
    }

    #[test]
    fn quantiles_are_within_three_percent() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        for (q, exact) in [(0.5, 500_000.0), (0.99, 990_000.0), (0.999, 999_000.0)] {
            let got = h.quantile(q) as f64;
            assert!(
                got >= exact && got <= exact * 1.03,
                "q={q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.min(), 10);
        assert!((h.mean() - 500_005.0).abs() < 1e-6);
    }

    #[test]
    fn a_single_outlier_is_the_max_and_shows_in_p999_only_when_rare_enough() {
        let mut h = Histogram::new();
        for _ in 0..999 {
            h.record(1_000);
        }
        h.record(5_000_000);
        assert_eq!(h.max(), 5_000_000);
        assert!(h.p99() <= 1_031);
        assert!(h.p999() <= 1_031);
        assert_eq!(h.quantile(1.0), 5_000_000);
    }

    #[test]
    fn merging_two_histograms_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in 0..5000u64 {
            let x = v * v % 100_003;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert_eq!(a.max(), all.max());
        assert_eq!(a.min(), all.min());
        assert_eq!(a.p99(), all.p99());
        assert_eq!(a.mean(), all.mean());
    }

    #[test]
    fn an_empty_histogram_reports_zeros() {
        let h = Histogram::new();
        assert_eq!((h.count(), h.max(), h.min(), h.p99()), (0, 0, 0, 0));
        assert_eq!(h.mean(), 0.0);
    }
}
