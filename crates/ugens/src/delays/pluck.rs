//! Pluck: Karplus-Strong string. A trigger lets `delaytime` seconds of the
//! input into a cubic-interpolated feedback delay whose loop is damped by a
//! one-pole filter.

use crate::common::math::cubicinterp;
use crate::delays::line_size;
use crate::common::signal::{calc_feedback, clip_f32 as clip};
use crate::common::signal::zap_f32;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

/// Cubic interpolation reads one sample ahead of and two behind the point.
const MIN_DELAY: f32 = 2.0;

/// Pluck: inputs in, trig, maxdelaytime, delaytime, decaytime, coef.
pub struct Pluck {
    buf: Vec<f32>,
    mask: i64,
    len: i64,
    wr: i64,
    /// Samples written so far, until the line has gone round once (reads
    /// behind the first write are silence until then).
    written: i64,
    dsamp: f32,
    delaytime: f32,
    decaytime: f32,
    feedbk: f32,
    coef: f32,
    lastsamp: f32,
    prevtrig: f32,
    /// Input samples still to let in since the last trigger.
    inputsamps: u64,
    audio_trig: bool,
    audio_coef: bool,
    failed: bool,
}

impl Pluck {
    fn calc_delay(&self, delaytime: f32, sample_rate: f64) -> f32 {
        clip(delaytime * sample_rate as f32, MIN_DELAY, self.len as f32)
    }

    fn excite(&mut self, delaytime: f32, sample_rate: f64) {
        self.inputsamps = ((delaytime as f64 * sample_rate + 0.5) as i64) as u64;
    }

    fn calc(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let sr = cx.rate.sample_rate;
        let sf = cx.rate.slope_factor;
        let (input, trig, coefs) = (io.inp(0), io.inp(1), io.inp(5));
        let delaytime = io.in0(3);
        let decaytime = io.in0(4);
        let coef_in = coefs[0];
        let checked = self.written < self.len;
        if !self.audio_trig {
            if self.prevtrig <= 0.0 && trig[0] > 0.0 {
                self.excite(delaytime, sr);
            }
            self.prevtrig = trig[0];
        }
        // While the line fills, a control-rate coef change also ramps; once
        // full, an audio-rate trigger with control-rate coef takes new coef
        // values at once unless the delay changes too.
        let coef_counts = !self.audio_coef && (!self.audio_trig || checked);
        let steady = delaytime == self.delaytime
            && decaytime == self.decaytime
            && (!coef_counts || coef_in == self.coef);
        let (dsamp_slope, feedbk_slope, coef_slope, mut coef) = if steady {
            (0.0, 0.0, 0.0, coef_in)
        } else {
            let next_dsamp = self.calc_delay(delaytime, sr);
            let next_feedbk = calc_feedback(delaytime, decaytime);
            let coef_slope = ((coef_in - self.coef) as f64 * sf) as f32;
            (
                ((next_dsamp - self.dsamp) as f64 * sf) as f32,
                ((next_feedbk - self.feedbk) as f64 * sf) as f32,
                coef_slope,
                self.coef,
            )
        };
        let mask = self.mask;
        let (mut dsamp, mut feedbk, mut wr, mut lastsamp) = (self.dsamp, self.feedbk, self.wr, self.lastsamp);
        let mut inputsamps = self.inputsamps;
        let mut prevtrig = self.prevtrig;
        let buf = &mut self.buf[..];
        let (audio_trig, audio_coef) = (self.audio_trig, self.audio_coef);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            if audio_trig {
                let t = trig[i];
                if prevtrig <= 0.0 && t > 0.0 {
                    inputsamps = ((delaytime as f64 * sr + 0.5) as i64) as u64;
                }
                prevtrig = t;
            }
            if !steady {
                dsamp += dsamp_slope;
            }
            let idsamp = dsamp as i64;
            let frac = dsamp - idsamp as f32;
            let r1 = wr - idsamp;
            let (r0, r2, r3) = (r1 + 1, r1 - 1, r1 - 2);
            let thisin = if inputsamps > 0 {
                inputsamps -= 1;
                input[if input.len() > 1 { i } else { 0 }]
            } else {
                0.0
            };
            let at = |r: i64| buf[(r & mask) as usize];
            if checked && r0 < 0 {
                buf[(wr & mask) as usize] = thisin;
                *o = 0.0;
            } else {
                let (d0, d1, d2, d3) = if !checked || r3 >= 0 {
                    (at(r0), at(r1), at(r2), at(r3))
                } else if r2 >= 0 {
                    (at(r0), at(r1), at(r2), 0.0)
                } else if r1 >= 0 {
                    (at(r0), at(r1), 0.0, 0.0)
                } else {
                    (at(r0), 0.0, 0.0, 0.0)
                };
                let value = cubicinterp(frac, d0, d1, d2, d3);
                let c = if audio_coef { coefs[i] } else { coef };
                let onepole = ((1.0 - c.abs() as f64) * value as f64 + (c * lastsamp) as f64) as f32;
                buf[(wr & mask) as usize] = thisin + feedbk * onepole;
                *o = onepole;
                lastsamp = onepole;
            }
            if !steady {
                feedbk += feedbk_slope;
                coef += coef_slope;
            }
            wr += 1;
        }
        if !steady {
            self.feedbk = feedbk;
            self.dsamp = dsamp;
            self.delaytime = delaytime;
            self.decaytime = decaytime;
            if !audio_coef {
                self.coef = coef_in;
            }
        }
        self.prevtrig = prevtrig;
        self.inputsamps = inputsamps;
        self.lastsamp = zap_f32(lastsamp);
        self.wr = wr;
        if checked {
            self.written += io.n() as i64;
        }
    }
}

impl Construct for Pluck {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let maxdel = io.in0(2);
        let delaytime = io.in0(3);
        let decaytime = io.in0(4);
        let size = line_size(maxdel, cx.rate.sample_rate, cx.rate.buf_length);
        let len = size.unwrap_or(1);
        let mut u = Pluck {
            buf: Vec::new(),
            mask: len - 1,
            len,
            wr: 0,
            written: 0,
            dsamp: 0.0,
            delaytime,
            decaytime,
            feedbk: calc_feedback(delaytime, decaytime),
            coef: io.in0(5),
            lastsamp: 0.0,
            prevtrig: 0.0,
            inputsamps: 0,
            audio_trig: io.in_rate(1) == Rate::Audio,
            audio_coef: io.in_rate(5) == Rate::Audio,
            failed: size.is_none(),
        };
        u.dsamp = u.calc_delay(delaytime, cx.rate.sample_rate);
        io.out(0)[0] = 0.0;
        if u.failed {
            cx.set_done(true);
        } else {
            u.buf = fallible::zeroed(len as usize);
        }
        u
    }
}

impl Unit for Pluck {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.failed {
            io.out(0).fill(0.0);
            return;
        }
        self.calc(io, cx);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, ar, peak};
    use TestInput::{Audio, Const};

    const SR: f64 = 48_000.0;
    const BS: usize = 64;
    const SECOND: usize = 750;

    /// Lag in `lo..hi` where the signal best matches itself.
    fn best_lag(sig: &[f32], lo: usize, hi: usize) -> usize {
        (lo..hi)
            .max_by(|&a, &b| {
                let c = |l: usize| sig.iter().zip(&sig[l..]).map(|(x, y)| (x * y) as f64).sum::<f64>();
                c(a).total_cmp(&c(b))
            })
            .unwrap()
    }

    fn pluck(delay: f32, decay: f32, coef: f32, blocks: usize) -> Vec<f32> {
        // Let white-ish input in (a fixed pseudo-random burst), then ring.
        let mut x = 1u32;
        let noise: Vec<f32> = (0..blocks * BS)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
            })
            .collect();
        ar("Pluck", vec![Audio(noise), Const(1.0), Const(0.2), Const(delay), Const(decay), Const(coef)], blocks)
    }

    #[test]
    fn pluck_period_equals_its_delay_time() {
        let out = pluck(0.01, 2.0, 0.2, 200);
        let tail = &out[2000..];
        let lag = best_lag(tail, 300, 700);
        // Half a sample of extra delay from the damping filter at most.
        assert!((480..=482).contains(&lag), "{lag}");
    }

    #[test]
    fn pluck_lets_in_one_period_of_input_and_then_decays() {
        let out = pluck(0.005, 0.3, 0.3, SECOND);
        let early = peak(&out[480..960]);
        let late = peak(&out[(0.6 * SR) as usize..(0.6 * SR) as usize + 480]);
        assert!(early > 0.1, "{early}");
        assert!(late < early * 0.01, "{late} vs {early}");
    }

    #[test]
    fn pluck_outputs_silence_until_the_delay_has_passed() {
        let out = pluck(0.01, 2.0, 0.2, 20);
        assert!(out[..478].iter().all(|&x| x == 0.0));
        assert!(out[480..960].iter().any(|&x| x != 0.0));
    }
}
