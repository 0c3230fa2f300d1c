//! Counters the real-time thread publishes and any thread may read.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Live driver counters; written by the audio thread (and JACK's notification
/// thread), read by anyone through [`DriverStats::snapshot`].
#[derive(Debug, Default)]
pub struct DriverStats {
    periods: AtomicU64,
    late_periods: AtomicU64,
    server_xruns: AtomicU64,
    skipped_frames: AtomicU64,
    // Loads are f32 percentages stored as bits so that readers never tear them.
    avg_load: AtomicU32,
    peak_load: AtomicU32,
    last_load: AtomicU32,
}

/// A consistent-enough copy of [`DriverStats`] at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DriverStatsSnapshot {
    /// `late_periods + server_xruns`.
    pub xruns: u64,
    /// Periods whose `process()` finished after the next period's start.
    pub late_periods: u64,
    /// Xruns the JACK server reported (always 0 on the clock driver).
    pub server_xruns: u64,
    /// Periods processed since start.
    pub periods: u64,
    /// Frames of time the clock driver's schedule moved on by when it
    /// re-anchored after late periods (always 0 on JACK): a time-stamped
    /// event that spans a late period sounds this much shorter.
    pub skipped_frames: u64,
    /// Time in `process()` as a percentage of the period, smoothed like scsynth's
    /// average CPU (each period moves it 10 % of the way to the new value).
    pub avg_load: f32,
    /// Highest load of roughly the last second (scsynth's peak CPU).
    pub peak_load: f32,
    /// Load of the latest period.
    pub last_load: f32,
}

impl DriverStats {
    pub fn snapshot(&self) -> DriverStatsSnapshot {
        let late_periods = self.late_periods.load(Ordering::Relaxed);
        let server_xruns = self.server_xruns.load(Ordering::Relaxed);
        DriverStatsSnapshot {
            xruns: late_periods + server_xruns,
            late_periods,
            server_xruns,
            periods: self.periods.load(Ordering::Relaxed),
            skipped_frames: self.skipped_frames.load(Ordering::Relaxed),
            avg_load: f32::from_bits(self.avg_load.load(Ordering::Relaxed)),
            peak_load: f32::from_bits(self.peak_load.load(Ordering::Relaxed)),
            last_load: f32::from_bits(self.last_load.load(Ordering::Relaxed)),
        }
    }

    pub(crate) fn count_server_xrun(&self) {
        self.server_xruns.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_skipped_frames(&self, frames: u64) {
        self.skipped_frames.fetch_add(frames, Ordering::Relaxed);
    }
}

/// The audio thread's side of the load accounting: keeps the smoothing state
/// and publishes into [`DriverStats`] with plain atomic stores.
pub(crate) struct LoadMeter {
    avg: f32,
    peak: f32,
    peak_countdown: u32,
    periods_per_second: u32,
}

impl LoadMeter {
    pub(crate) fn new(sample_rate: f64, period_frames: usize) -> Self {
        let mut m = LoadMeter { avg: 0.0, peak: 0.0, peak_countdown: 0, periods_per_second: 1 };
        m.reset_rate(sample_rate, period_frames);
        m
    }

    /// The peak is held for about one second of periods, as scsynth does.
    pub(crate) fn reset_rate(&mut self, sample_rate: f64, period_frames: usize) {
        let pps = sample_rate / period_frames.max(1) as f64;
        self.periods_per_second = pps.clamp(1.0, u32::MAX as f64) as u32;
    }

    /// Records one period: `busy_ns` spent in `process()` out of `period_ns`,
    /// and whether it finished after its deadline.
    pub(crate) fn record(&mut self, stats: &DriverStats, busy_ns: u64, period_ns: u64, late: bool) {
        let load = if period_ns == 0 { 0.0 } else { (busy_ns as f64 * 100.0 / period_ns as f64) as f32 };
        self.avg += 0.1 * (load - self.avg);
        self.peak_countdown = self.peak_countdown.saturating_sub(1);
        if load > self.peak || self.peak_countdown == 0 {
            self.peak = load;
            self.peak_countdown = self.periods_per_second;
        }
        stats.last_load.store(load.to_bits(), Ordering::Relaxed);
        stats.avg_load.store(self.avg.to_bits(), Ordering::Relaxed);
        stats.peak_load.store(self.peak.to_bits(), Ordering::Relaxed);
        if late {
            stats.late_periods.fetch_add(1, Ordering::Relaxed);
        }
        // Counted last so a reader that sees N periods also sees their lateness.
        stats.periods.fetch_add(1, Ordering::Release);
    }
}
