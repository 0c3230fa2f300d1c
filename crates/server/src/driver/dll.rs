//! A delay-locked loop that turns jittery callback wake-up times into a smooth
//! period clock (F. Adriaensen, "Using a DLL to filter time", 2005), as scsynth
//! does for JACK: the server's own cycle-time estimates can be milliseconds off
//! on some backends, the wake-up times are not.

/// scsynth's loop bandwidth in Hz: slow enough to ignore wake-up jitter, fast
/// enough to follow a sound card's clock drift.
pub(crate) const DLL_BANDWIDTH_HZ: f64 = 0.012;

#[derive(Debug, Clone, Default)]
pub(crate) struct TimeDll {
    b: f64,
    c: f64,
    /// Filtered start of the current period, ns.
    t0: f64,
    /// Predicted start of the next period, ns.
    t1: f64,
    /// Filtered period, ns.
    e2: f64,
}

impl TimeDll {
    /// Restarts the loop so that the next period is expected at `next_ns`.
    pub(crate) fn reset(&mut self, sample_rate: f64, period_frames: usize, next_ns: f64) {
        let period_s = period_frames as f64 / sample_rate;
        // Second-order loop with critical damping: b = 2π·B·T, c = b²/2.
        self.b = 2.0 * std::f64::consts::PI * DLL_BANDWIDTH_HZ * period_s;
        self.c = self.b * self.b / 2.0;
        self.e2 = period_s * 1e9;
        self.t0 = next_ns - self.e2;
        self.t1 = next_ns;
    }

    /// Feeds the wake-up time of a new period.
    pub(crate) fn update(&mut self, now_ns: f64) {
        let e = now_ns - self.t1;
        self.t0 = self.t1;
        self.t1 += self.b * e + self.e2;
        self.e2 += self.c * e;
    }

    pub(crate) fn period_start_ns(&self) -> f64 {
        self.t0
    }

    pub(crate) fn next_period_ns(&self) -> f64 {
        self.t1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dll_follows_a_slightly_fast_clock_and_smooths_wakeup_jitter() {
        // A card running 100 ppm fast, wake-ups scattered by ±500 µs.
        let true_period = 256.0 / 48000.0 * 1e9 * (1.0 - 1e-4);
        let mut dll = TimeDll::default();
        dll.reset(48000.0, 256, 1e12);
        let mut seed = 12345u32;
        let mut max_err: f64 = 0.0;
        let mut start_of_tail = 0.0;
        let (n, tail) = (40_000u32, 10_000u32);
        for k in 0..n {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let jitter = (seed >> 8) as f64 / (1u32 << 24) as f64 * 1e6 - 5e5;
            let ideal = 1e12 + k as f64 * true_period;
            dll.update(ideal + jitter);
            if k == n - tail {
                start_of_tail = dll.period_start_ns();
            }
            if k >= n - tail {
                max_err = max_err.max((dll.period_start_ns() - ideal).abs());
            }
        }
        // Locked on the card's rate: the average period over the last stretch is
        // exact to a few ns, and each period start is far closer than the jitter.
        let period = (dll.period_start_ns() - start_of_tail) / (tail - 1) as f64;
        assert!((period - true_period).abs() < 5.0, "period {period} vs {true_period}");
        assert!(max_err < 50_000.0, "period starts off by up to {max_err} ns");
    }
}
