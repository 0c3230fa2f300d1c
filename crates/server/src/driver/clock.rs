//! The built-in clock driver: a real-time thread woken at absolute period
//! boundaries, for machines without a sound card or JACK server.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::io::{PeriodTimes, SliceTables};
use super::rt::{flush_denormals, make_current_thread_realtime, monotonic_ns, sleep_until_ns};
use super::stats::{DriverStats, LoadMeter};
use super::{validate, Backend, DriverConfig, DriverError, Process, RunningDriver, CLOCK_DEFAULT_SAMPLE_RATE};

/// SCHED_FIFO priority of the clock thread: the middle of Linux's 1..99, which
/// leaves room above for the kernel's threads and below for helper threads.
const CLOCK_RT_PRIORITY: i32 = 50;

pub(crate) struct ClockHandle {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Box<dyn Process>>,
}

impl ClockHandle {
    /// Returns once the thread has finished its current period.
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::Release);
        // The work is dropped here, off the real-time thread. A panic in it has
        // already been reported by the panic hook.
        drop(self.thread.join());
    }
}

/// Starts the clock driver: periods of `hardware_buffer_size` frames (or one
/// block) at `sample_rate` (or 48 kHz), inputs silent, outputs discarded unless
/// tapped with [`super::tap_outputs`].
pub fn start_clock(cfg: &DriverConfig, p: Box<dyn Process>) -> Result<RunningDriver, DriverError> {
    validate(cfg)?;
    let sample_rate = cfg.sample_rate.unwrap_or(CLOCK_DEFAULT_SAMPLE_RATE);
    let period = if cfg.hardware_buffer_size == 0 { cfg.block_size } else { cfg.hardware_buffer_size };
    if period % cfg.block_size != 0 {
        return Err(DriverError::PeriodNotMultipleOfBlock { period, block: cfg.block_size });
    }
    let stats = Arc::new(DriverStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let clock = ClockLoop {
        process: p,
        stats: Arc::clone(&stats),
        stop: Arc::clone(&stop),
        sample_rate,
        period,
        num_inputs: cfg.num_inputs,
        num_outputs: cfg.num_outputs,
    };
    let thread = std::thread::Builder::new().name("magnetar-audio".into()).spawn(move || clock.run())?;
    Ok(RunningDriver {
        backend: Backend::Clock(ClockHandle { stop, thread }),
        sample_rate,
        period_frames: Arc::new(AtomicUsize::new(period)),
        stats,
        name: "clock",
    })
}

struct ClockLoop {
    process: Box<dyn Process>,
    stats: Arc<DriverStats>,
    stop: Arc<AtomicBool>,
    sample_rate: f64,
    period: usize,
    num_inputs: usize,
    num_outputs: usize,
}

impl ClockLoop {
    /// Runs periods until stopped, then hands the work back to be dropped elsewhere.
    fn run(mut self) -> Box<dyn Process> {
        make_current_thread_realtime(CLOCK_RT_PRIORITY);
        flush_denormals();
        // Everything the loop touches is allocated here, before the first period.
        let inputs = vec![vec![0.0f32; self.period]; self.num_inputs];
        let mut outputs = vec![vec![0.0f32; self.period]; self.num_outputs];
        let mut tables = SliceTables::new(self.num_inputs, self.num_outputs);
        let mut meter = LoadMeter::new(self.sample_rate, self.period);
        let period_ns = self.period as f64 * 1e9 / self.sample_rate;

        // Period k starts at anchor + k * period, computed from the anchor each
        // time so that rounding never accumulates into drift.
        let mut anchor = monotonic_ns();
        let mut k: u64 = 0;
        while !self.stop.load(Ordering::Acquire) {
            let start = anchor + (k as f64 * period_ns).round() as u64;
            let next = anchor + ((k + 1) as f64 * period_ns).round() as u64;
            sleep_until_ns(start);
            let woke = monotonic_ns();
            let times = PeriodTimes { start_ns: start, next_ns: next, output_latency_ns: 0 };
            // SAFETY: the buffers are owned by this frame, each holds `self.period`
            // samples, and nothing else references them during the call.
            unsafe {
                tables.run(
                    &mut *self.process,
                    inputs.iter().map(|b| b.as_ptr()),
                    outputs.iter_mut().map(|b| b.as_mut_ptr()),
                    self.period,
                    times,
                );
            }
            let end = monotonic_ns();
            let late = end > next;
            meter.record(&self.stats, end.saturating_sub(woke), next - start, late);
            if late {
                // Re-anchor instead of bursting through the missed periods;
                // the server's clock moves on by the time lost.
                let lost_ns = end - next;
                self.stats.count_skipped_frames((lost_ns as f64 * self.sample_rate / 1e9).round() as u64);
                anchor = end;
                k = 0;
            } else {
                k += 1;
            }
        }
        self.process
    }
}
