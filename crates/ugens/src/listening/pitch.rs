//! `Pitch`: a time-domain autocorrelation pitch follower.
//!
//! The input is collected (optionally decimated) into a window of twice the
//! longest period. Each time the window is full the unit checks the level,
//! steps through lags (coarser at long lags) to the first autocorrelation
//! peak above a fraction of the zero-lag value, refines it by a parabola and
//! keeps the result if it lies within the frequency range. The window then
//! slides by the execution period.

use crate::common::median::MedianWindow;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

const MAX_MEDIAN: usize = 32;

/// `32 - clz(x - 1)` on 32-bit ints, with a zero argument counting 32 zeros.
fn log2_ceil(x: i32) -> i32 {
    32 - (x.wrapping_sub(1) as u32).leading_zeros() as i32
}

/// `Pitch.kr(in, initFreq, minFreq, maxFreq, execFreq, maxBinsPerOctave,
/// median, ampThreshold, peakThreshold, downSample, clar)`: frequency and
/// whether one was found (or the clarity of the peak).
pub struct Pitch {
    buffer: Vec<f32>,
    median: MedianWindow,
    freq: f32,
    min_freq: f32,
    max_freq: f32,
    has_freq: f32,
    srate: f32,
    amp_thresh: f32,
    peak_thresh: f32,
    min_period: i32,
    max_period: i32,
    exec_period: i32,
    index: usize,
    readp: i32,
    size: usize,
    downsamp: i32,
    max_log2_bins: i32,
    clarity: bool,
    audio_in: bool,
}

impl Construct for Pitch {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let freq = io.in0(1);
        let min_freq = io.in0(2);
        let max_freq = io.in0(3);
        let exec_freq = io.in0(4).max(min_freq).min(max_freq);
        let max_log2_bins = log2_ceil(io.in0(5) as i32);
        let median_size = (io.in0(6) as i32).clamp(0, MAX_MEDIAN as i32) as usize;
        let block = cx.world.full_rate.buf_length as i32;
        let downsamp = io.in0(9) as i32;
        let audio_in = io.in_rate(0) == Rate::Audio;
        let full = cx.world.full_rate.sample_rate;
        let (downsamp, srate) = if audio_in {
            let d = downsamp.clamp(1, block);
            (d, (full / d as f32 as f64) as f32)
        } else {
            let d = downsamp.max(1);
            (d, (full / (block * d) as f32 as f64) as f32)
        };
        let min_period = (srate / max_freq) as i32;
        let max_period = (srate / min_freq) as i32;
        let exec_period = ((srate / exec_freq) as i32).max(block);
        let size = (max_period.saturating_mul(2)).max(exec_period).max(1) as usize;
        let o = io.outs::<2>();
        o[0][0] = 0.0;
        o[1][0] = 0.0;
        Pitch {
            // One spare sample: the peak search may read one past the window.
            buffer: crate::unit::unit_samples(size + 2),
            median: MedianWindow::new(median_size, freq),
            freq,
            min_freq,
            max_freq,
            has_freq: 0.0,
            srate,
            amp_thresh: io.in0(7),
            peak_thresh: io.in0(8),
            min_period,
            max_period,
            exec_period,
            index: 0,
            readp: 0,
            size,
            downsamp,
            max_log2_bins,
            clarity: io.in0(10) > 0.0,
            audio_in,
        }
    }
}

impl Pitch {
    /// Autocorrelation of the window at lag `lag` over `max_period` samples.
    #[inline]
    fn lag_sum(&self, lag: i32) -> f32 {
        let n = self.max_period.max(0) as usize;
        let base = lag.max(0) as usize;
        let b = &self.buffer;
        let mut sum = 0.0f32;
        for j in 0..n {
            sum += b.get(base + j).copied().unwrap_or(0.0) * b[j];
        }
        sum
    }

    fn step_for(&self, i: i32) -> i32 {
        let octave = log2_ceil(i);
        if octave <= self.max_log2_bins {
            1
        } else {
            1i32.wrapping_shl((octave - self.max_log2_bins) as u32)
        }
    }

    /// Analyses a full window; `control` selects the control-rate variant's
    /// double-precision parabola.
    fn analyse(&mut self, control: bool) {
        self.has_freq = 0.0;
        let max_period = self.max_period;
        let n = max_period.max(0) as usize;
        let amp_ok = self.buffer[..n.min(self.size)].iter().any(|x| x.abs() >= self.amp_thresh);
        if amp_ok {
            let mut zero_lag = 0.0f32;
            for j in 0..n {
                zero_lag += self.buffer[j] * self.buffer[j];
            }
            let threshold = zero_lag * self.peak_thresh;
            let mut binstep: i32;
            let mut i = 1;
            while i <= max_period {
                if self.lag_sum(i) < threshold {
                    break;
                }
                binstep = self.step_for(i);
                i += binstep;
            }
            let mut period = i;
            let mut maxsum = threshold;
            let mut found = false;
            while i <= max_period {
                if i >= self.min_period {
                    let s = self.lag_sum(i);
                    if s > threshold {
                        if s > maxsum {
                            found = true;
                            maxsum = s;
                            period = i;
                        }
                    } else if found {
                        break;
                    }
                }
                binstep = self.step_for(i);
                i += binstep;
            }
            if found {
                let mut prev = if period > 0 { self.lag_sum(period - 1) } else { 0.0 };
                let mut next = if period < max_period { self.lag_sum(period + 1) } else { 0.0 };
                while prev > maxsum && period > 0 {
                    next = maxsum;
                    maxsum = prev;
                    period -= 1;
                    prev = self.lag_sum(period - 1);
                }
                while next > maxsum && period < max_period {
                    prev = maxsum;
                    maxsum = next;
                    period += 1;
                    next = self.lag_sum(period + 1);
                }
                let (beta, gamma) = if control {
                    ((0.5 * (next - prev) as f64) as f32, (2.0 * maxsum as f64 - next as f64 - prev as f64) as f32)
                } else {
                    (0.5f32 * (next - prev), 2.0f32 * maxsum - next - prev)
                };
                let fperiod = period as f32 + beta / gamma;
                let temp = self.srate / fperiod;
                if temp >= self.min_freq && temp <= self.max_freq {
                    self.freq = if self.median.size() > 1 { self.median.insert(temp) } else { temp };
                    self.has_freq = if self.clarity { maxsum / zero_lag } else { 1.0 };
                }
            }
        }
        let exec = (self.exec_period.max(0) as usize).min(self.size);
        let interval = self.size - exec;
        self.buffer.copy_within(exec..exec + interval, 0);
        self.index = interval;
    }

    fn push(&mut self, z: f32, control: bool) {
        self.buffer[self.index] = z;
        self.index += 1;
        if self.index >= self.size {
            self.analyse(control);
        }
    }
}

impl Unit for Pitch {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio_in {
            let input = io.inp(0);
            let block = cx.world.full_rate.buf_length as i32;
            let mut readp = self.readp;
            loop {
                // scsynth indexes the input one sample early, so each block's
                // first read lands just before the input's block: a zero when
                // the input has the first wire buffer, as in simple graphs.
                let z = if readp == 0 {
                    0.0
                } else {
                    input.get((readp - 1) as usize).copied().unwrap_or(0.0)
                };
                readp += self.downsamp;
                self.push(z, false);
                if readp >= block {
                    break;
                }
            }
            self.readp = readp - block;
        } else {
            self.readp += 1;
            if self.readp == self.downsamp {
                self.readp = 0;
                let z = io.in0(0);
                self.push(z, true);
            }
        }
        let (freq, has) = (self.freq, self.has_freq);
        let o = io.outs::<2>();
        o[0][0] = freq;
        o[1][0] = has;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestInput, UnitHarness};

    fn pitch_of(signal: Vec<f32>, blocks: usize, median: f32) -> (f32, f32) {
        let ins = [
            TestInput::Audio(signal),
            TestInput::Const(440.0),
            TestInput::Const(60.0),
            TestInput::Const(4000.0),
            TestInput::Const(100.0),
            TestInput::Const(16.0),
            TestInput::Const(median),
            TestInput::Const(0.01),
            TestInput::Const(0.5),
            TestInput::Const(1.0),
            TestInput::Const(0.0),
        ];
        let out = UnitHarness::new("Pitch", Rate::Control).inputs(ins).outputs(2).run(blocks);
        (*out[0].last().unwrap(), *out[1].last().unwrap())
    }

    fn sine(freq: f32, len: usize, sr: f32) -> Vec<f32> {
        (0..len).map(|i| 0.5 * (std::f32::consts::TAU * freq * i as f32 / sr).sin()).collect()
    }

    #[test]
    fn a_steady_sine_is_found_within_a_semitone() {
        let blocks = 200;
        for freq in [110.0f32, 220.0, 331.0, 880.0] {
            let (f, has) = pitch_of(sine(freq, blocks * 64, 48_000.0), blocks, 1.0);
            assert_eq!(has, 1.0, "{freq} Hz not found");
            // Each block's first sample is read from before the block (as in
            // scsynth), which bends the estimate by up to a few percent.
            assert!((f / freq - 1.0).abs() < 0.059, "{freq} Hz read as {f}");
        }
    }

    #[test]
    fn silence_keeps_the_initial_frequency_and_reports_no_pitch() {
        let (f, has) = pitch_of(vec![0.0; 64 * 100], 100, 7.0);
        assert_eq!((f, has), (440.0, 0.0));
    }

    #[test]
    fn the_running_median_rejects_a_single_outlier() {
        let mut m = MedianWindow::new(5, 100.0);
        assert_eq!(m.insert(100.0), 100.0);
        assert_eq!(m.insert(900.0), 100.0);
        assert_eq!(m.insert(200.0), 100.0);
        assert_eq!(m.insert(200.0), 200.0);
        assert_eq!(log2_ceil(1), 0);
        assert_eq!(log2_ceil(16), 4);
        assert_eq!(log2_ceil(17), 5);
    }
}
