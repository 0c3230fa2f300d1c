//! Audio drivers: the period-driven real-time loop that calls the audio work.
//!
//! Two backends share one contract ([`Process`], [`PeriodIo`], [`DriverStats`]):
//!
//! - the **clock driver** ([`start_clock`]): its own SCHED_FIFO thread woken at
//!   absolute period boundaries (`clock_nanosleep(TIMER_ABSTIME)`), silent inputs,
//!   no sound card needed;
//! - the **JACK driver** ([`start_jack`]): a JACK client named like scsynth's
//!   (`SuperCollider`, ports `in_N` / `out_N`), connected per
//!   `SC_JACK_DEFAULT_INPUTS` / `SC_JACK_DEFAULT_OUTPUTS`.
//!
//! [`start_default`] picks JACK when a server runs and the clock otherwise.
//! [`tap_outputs`] mirrors what the audio work writes to a non-real-time reader.

mod clock;
mod dll;
mod io;
mod jack;
mod rt;
mod stats;
mod tap;

#[cfg(test)]
mod tests;

use std::sync::Arc;

// The real-time server mode is the user of these; until it is wired in, only tests are.
#[allow(unused_imports)]
pub use self::clock::start_clock;
#[allow(unused_imports)]
pub use self::jack::{start_jack, ENV_DEFAULT_INPUTS, ENV_DEFAULT_OUTPUTS};
#[allow(unused_imports)]
pub use self::stats::{DriverStats, DriverStatsSnapshot};
#[allow(unused_imports)]
pub use self::tap::{tap_outputs, OutputTap, TapThread};

/// The scsynth default JACK client name.
pub const DEFAULT_CLIENT_NAME: &str = "SuperCollider";

/// The clock driver's sample rate when none is asked for.
pub const CLOCK_DEFAULT_SAMPLE_RATE: f64 = 48000.0;

/// What the command line asks of the audio driver.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverConfig {
    /// `-S`: `None` lets the driver choose (clock: 48000; JACK: the server's rate).
    pub sample_rate: Option<f64>,
    /// `-z`: frames per engine block; every period is a whole number of blocks.
    pub block_size: usize,
    /// `-Z`: frames per driver period, 0 lets the driver choose (clock: the block size).
    pub hardware_buffer_size: usize,
    /// Hardware input channels (JACK ports `in_1..`).
    pub num_inputs: usize,
    /// Hardware output channels (JACK ports `out_1..`).
    pub num_outputs: usize,
    /// `-H`: for JACK `server:client`, `client`, or `server:` (scsynth's convention).
    pub device_name: Option<String>,
    /// JACK client name when `-H` names none.
    pub client_name: String,
}

impl Default for DriverConfig {
    fn default() -> Self {
        // scsynth's defaults: 64-sample blocks, 8 hardware inputs and outputs.
        DriverConfig {
            sample_rate: None,
            block_size: 64,
            hardware_buffer_size: 0,
            num_inputs: 8,
            num_outputs: 8,
            device_name: None,
            client_name: DEFAULT_CLIENT_NAME.to_string(),
        }
    }
}

/// The audio work, called on the driver's real-time thread once per period
/// with `nframes` a multiple of the block size.
///
/// It must follow the real-time rules: no allocation, no blocking locks, no I/O.
pub trait Process: Send + 'static {
    fn process(&mut self, io: &mut PeriodIo<'_>);
}

/// One period's buffers and timing, valid for the duration of one `process()` call.
pub struct PeriodIo<'a> {
    /// One slice of `nframes` samples per hardware input (silence on the clock driver).
    pub inputs: &'a [&'a [f32]],
    /// One slice of `nframes` samples per hardware output; the driver does not
    /// clear them, so the work must write every sample.
    pub outputs: &'a mut [&'a mut [f32]],
    pub nframes: usize,
    /// CLOCK_MONOTONIC time in ns at which this period started: the exact schedule
    /// on the clock driver, the callback wake-ups smoothed by a DLL on JACK (as
    /// scsynth times its buffers).
    pub period_start_ns: u64,
    /// CLOCK_MONOTONIC time in ns of the next period's start: this period's deadline.
    pub next_period_ns: u64,
    /// The driver's estimate of the delay from `period_start_ns` until the period's
    /// first sample is heard (JACK's playback latency; 0 on the clock driver).
    pub output_latency_ns: u64,
}

/// Why a driver could not start.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("no JACK server is running")]
    NoServer,
    #[error("the JACK library could not be loaded: {0}")]
    NoLibrary(String),
    #[error("JACK: {0}")]
    Jack(String),
    #[error("invalid driver configuration: {0}")]
    Config(String),
    #[error("the driver period of {period} frames is not a multiple of the block size {block}")]
    PeriodNotMultipleOfBlock { period: usize, block: usize },
    #[error("could not start the audio thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A driver that is calling its [`Process`]; dropping it stops it too.
pub struct RunningDriver {
    backend: Backend,
    sample_rate: f64,
    period_frames: Arc<std::sync::atomic::AtomicUsize>,
    stats: Arc<DriverStats>,
    name: &'static str,
}

enum Backend {
    Clock(clock::ClockHandle),
    Jack(jack::JackHandle),
    Stopped,
}

impl RunningDriver {
    pub fn sample_rate(&self) -> f64 {
        self.sample_rate
    }

    /// Frames per period (JACK may change it while running).
    pub fn period_frames(&self) -> usize {
        self.period_frames.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn stats(&self) -> Arc<DriverStats> {
        Arc::clone(&self.stats)
    }

    /// "clock" or "jack".
    pub fn backend_name(&self) -> &'static str {
        self.name
    }

    /// The JACK client's actual name (`None` on the clock driver).
    pub fn client_name(&self) -> Option<&str> {
        match &self.backend {
            Backend::Jack(h) => Some(h.client_name()),
            _ => None,
        }
    }

    /// True once the JACK server has shut the client down; the driver then calls
    /// `process()` no more.
    pub fn is_shut_down(&self) -> bool {
        match &self.backend {
            Backend::Jack(h) => h.is_shut_down(),
            _ => false,
        }
    }

    /// Stops calling `process()` and waits for the real-time thread to finish the
    /// current period (at most one period on the clock driver).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        match std::mem::replace(&mut self.backend, Backend::Stopped) {
            Backend::Clock(h) => h.stop(),
            Backend::Jack(h) => h.stop(),
            Backend::Stopped => {}
        }
    }
}

impl Drop for RunningDriver {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// JACK if a server runs, else the clock driver; says on stderr which one it chose.
pub fn start_default(cfg: &DriverConfig, p: Box<dyn Process>) -> Result<RunningDriver, DriverError> {
    // The process object is only consumed when the JACK client is activated, so
    // the probe hands it back when no server answers.
    match jack::try_start_jack(cfg, p) {
        Ok(d) => {
            eprintln!("audio driver: JACK");
            Ok(d)
        }
        Err((e @ (DriverError::NoServer | DriverError::NoLibrary(_)), Some(p))) => {
            eprintln!("audio driver: {e}; using the built-in clock");
            start_clock(cfg, p)
        }
        Err((e, _)) => Err(e),
    }
}

/// Checks the settings both drivers share.
fn validate(cfg: &DriverConfig) -> Result<(), DriverError> {
    if cfg.block_size == 0 {
        return Err(DriverError::Config("block size must be at least 1".into()));
    }
    if let Some(sr) = cfg.sample_rate {
        if !(sr.is_finite() && sr >= 1.0) {
            return Err(DriverError::Config(format!("sample rate {sr} is not a positive number")));
        }
    }
    Ok(())
}
