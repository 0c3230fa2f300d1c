//! `KeyTrack`: key estimation from a 4096-point FFT chain. Semitone energies
//! (from weighted harmonic bins) are folded into a leaky chromagram, matched
//! against major and minor diatonic profiles, and accumulated in a leaky
//! histogram whose best entry is the key (0-11 major, 12-23 minor, from C).

use super::key_tables as kt;
use crate::common::spectrum as coord;
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const HALF: usize = 2048;
const MAJOR_PROFILE: [f64; 12] = [5.0, 0.0, 3.5, 0.0, 4.5, 4.0, 0.0, 4.5, 0.0, 3.5, 0.0, 4.0];
const MINOR_PROFILE: [f64; 12] = [5.0, 0.0, 3.5, 4.5, 0.0, 4.0, 0.0, 4.5, 3.5, 0.0, 0.0, 4.0];
const MAJOR: [usize; 7] = [0, 2, 4, 5, 7, 9, 11];
const MINOR: [usize; 7] = [0, 2, 3, 5, 7, 8, 11];

/// `KeyTrack.kr(chain, keydecay, chromaleak)`.
pub struct KeyTrack {
    power: Vec<f32>,
    chroma: [f32; 12],
    key: [f32; 24],
    histogram: [f32; 24],
    weights: &'static [f32; 720],
    bins: &'static [u16; 720],
    frame_period: f32,
    current: i32,
}

impl Construct for KeyTrack {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let mut srate = cx.world.full_rate.sample_rate as f32;
        if srate as f64 > 44100.0 * 1.5 {
            srate *= 0.5;
        }
        // Only 44.1 and 48 kHz tables exist; other rates use the 48 kHz ones.
        let (weights, bins, frame_period) = if (srate as f64 + 0.01) as i32 == 44100 {
            (&kt::WEIGHTS_44100, &kt::BINS_44100, 0.046439909297052f32)
        } else {
            (&kt::WEIGHTS_48000, &kt::BINS_48000, 0.042666666666667f32)
        };
        io.out(0)[0] = 0.0;
        KeyTrack {
            power: vec![0.0; HALF / 2],
            chroma: [0.0; 12],
            key: [0.0; 24],
            histogram: [0.0; 24],
            weights,
            bins,
            frame_period,
            current: 0,
        }
    }
}

impl KeyTrack {
    fn frame(&mut self, data: &[f32], key_decay: f32, chroma_leak: f32) {
        let at = |i: usize| data.get(i).copied().unwrap_or(0.0);
        for (k, p) in self.power.iter_mut().enumerate() {
            let (a, b) = (at(2 * k), at(2 * k + 1));
            *p = a * a + b * b;
        }
        for c in self.chroma.iter_mut() {
            *c *= chroma_leak;
        }
        for i in 0..60 {
            // Semitone 0 is an A.
            let pitch_class = (i + 9) % 12;
            let mut sum = 0.0f32;
            for j in 12 * i..12 * i + 12 {
                sum += self.weights[j] * self.power[self.bins[j] as usize];
            }
            self.chroma[pitch_class] += sum;
        }
        for i in 0..12 {
            let mut major = 0.0f32;
            for &deg in &MAJOR {
                major = (major as f64 + self.chroma[(i + deg) % 12] as f64 * MAJOR_PROFILE[deg]) as f32;
            }
            self.key[i] = major;
            let mut minor = 0.0f32;
            for &deg in &MINOR {
                minor = (minor as f64 + self.chroma[(i + deg) % 12] as f64 * MINOR_PROFILE[deg]) as f32;
            }
            self.key[12 + i] = minor;
        }
        // The decay time is given in seconds to fall to 1%; per frame:
        let frames = (key_decay / self.frame_period).max(0.001);
        let leak = 0.01f32.powf(1.0 / frames);
        let mut best = 0;
        let mut best_score = 0.0f32;
        for i in 0..24 {
            self.histogram[i] = leak * self.histogram[i] + self.key[i];
            if self.histogram[i] > best_score {
                best_score = self.histogram[i];
                best = i as i32;
            }
        }
        self.current = best;
    }
}

impl Unit for KeyTrack {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let fbufnum = io.in0(0) + 0.001;
        if fbufnum > -0.01 {
            let (decay, leak) = (io.in0(1), io.in0(2));
            if let Some(buf) = resolve_buffer_index(cx.world, fbufnum).and_then(|i| cx.world.buf_mut(i)) {
                coord::to_complex(buf);
                self.frame(&buf.data, decay, leak);
            }
        }
        io.out(0)[0] = self.current as f32;
    }
}
