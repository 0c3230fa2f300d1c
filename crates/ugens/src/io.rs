//! Bus and control units: how a synth reads its controls and talks to the
//! world's audio and control buses, and to its own local buses.
//!
//! Bus numbers arrive as floats. A unit remembers the last valid bus it
//! was given: an out-of-range bus number leaves the previous one in place,
//! and each channel is then checked against the bus count, as scsynth does.
//! InTrig and LagIn, which read control buses as triggers or through a lag,
//! are in [`bus_read`].

mod bus_read;
#[cfg(test)]
mod tests_lanes;

pub use bus_read::{InTrig, LagIn};

use crate::common::signal::zap_f32;
use crate::unit::{Construct, Lanes, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, MAX_LANES};
use crate::world::ControlMap;

const LOG001: f64 = -6.907_755_278_982_137; // ln(0.001)

/// Remembers which bus an IO unit addresses.
struct BusSel {
    last: f32,
    first: usize,
}

impl BusSel {
    fn new(initial: f32) -> BusSel {
        BusSel { last: initial, first: 0 }
    }

    /// Re-reads the bus number; keeps the old bus if the new range does not
    /// fit in `num_buses`.
    #[inline]
    fn update(&mut self, fbus: f32, channels: usize, num_buses: usize) {
        if fbus != self.last {
            self.last = fbus;
            let bus = fbus as i64;
            if bus >= 0 && bus as usize + channels <= num_buses {
                self.first = bus as usize;
            }
        }
    }

    /// Whether channel `i` may be touched: scsynth checks the requested bus
    /// number (not the remembered one) against the bus count.
    #[inline]
    fn valid(&self, fbus: f32, i: usize, num_buses: usize) -> bool {
        ((fbus + i as f32) as i64) < num_buses as i64
    }
}

#[inline]
fn control_value(cx: &UnitCtx<'_>, index: usize) -> f32 {
    match cx.synth.control_map.get(index).copied().unwrap_or_default() {
        ControlMap::Own => cx.synth.controls.get(index).copied().unwrap_or(0.0),
        ControlMap::ControlBus(b) => cx.world.control_bus.get(b as usize).copied().unwrap_or(0.0),
        ControlMap::AudioBus(b) => {
            let bs = cx.world.block_size;
            cx.world.audio_bus.get(b as usize * bs).copied().unwrap_or(0.0)
        }
    }
}

/// Records a bus write and what it wrote, for replay (only in a worker's
/// private world, whose log has room reserved; a write that does not fit
/// is dropped and the log marked full, and the engine then treats the
/// block as incomplete).
/// `WIDE`: the usual block is copied by AVX2 moves (only where the CPU
/// has it).
#[inline(always)]
fn log_write<const WIDE: bool>(w: &mut crate::world::World, audio: bool, replace: bool, bus: usize, input: &[f32]) {
    let len = if audio { w.block_size } else { 1 };
    if w.touch_log.len() == w.touch_log.capacity() || w.touch_data.len() + len > w.touch_data.capacity() {
        w.touch_overflow = true;
        return;
    }
    let at = w.touch_data.len() as u32;
    match input.first_chunk::<64>().filter(|_| len == 64) {
        // The usual block as one fixed-length copy: straight vector moves.
        Some(x) => push_block::<WIDE>(&mut w.touch_data, x),
        None => log_samples(&mut w.touch_data, input, len),
    }
    w.touch_log.push(crate::world::BusTouch { audio, replace, bus: bus as u32, at });
}

/// Appends a block of 64 samples to the log, with room for it.
#[inline(always)]
fn push_block<const WIDE: bool>(data: &mut Vec<f32>, x: &[f32; 64]) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        let at = data.len();
        let spare = data.spare_capacity_mut();
        if spare.len() >= 64 {
            // SAFETY: the CPU has AVX2 (`WIDE`); the spare room holds the 64
            // samples written, which `set_len` then takes in.
            unsafe {
                block_avx2::<false>(spare.as_mut_ptr().cast(), x.as_ptr());
                data.set_len(at + 64);
            }
            return;
        }
    }
    data.extend_from_slice(x);
}

/// 64 samples onto `out` (`ADD`) or into it, eight a step: each sum is the
/// one a sample at a time makes.
///
/// # Safety
/// The CPU has AVX2; `x` is readable and `out` writable (and readable with
/// `ADD`) for 64 samples, and they do not overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn block_avx2<const ADD: bool>(out: *mut f32, x: *const f32) {
    use std::arch::x86_64::{_mm256_add_ps, _mm256_loadu_ps, _mm256_storeu_ps};
    for k in (0..64).step_by(8) {
        // SAFETY: `k + 8 <= 64`, inside both blocks (the contract).
        unsafe {
            let v = _mm256_loadu_ps(x.add(k));
            let v = if ADD { _mm256_add_ps(_mm256_loadu_ps(out.add(k)), v) } else { v };
            _mm256_storeu_ps(out.add(k), v);
        }
    }
}

/// `out_audio` for the logged path: the usual block by `block_avx2` with
/// `WIDE`, anything else as `out_audio_at`.
#[inline(always)]
fn out_audio_logged<const REPLACE: bool, const WIDE: bool>(out: &mut [f32], touched: &mut i32, counter: i32, input: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        if let (Ok(o), Some(x)) = (<&mut [f32; 64]>::try_from(&mut *out), input.first_chunk::<64>()) {
            // SAFETY: the CPU has AVX2 (`WIDE`); two distinct blocks of 64.
            unsafe {
                if !REPLACE && *touched == counter {
                    block_avx2::<true>(o.as_mut_ptr(), x.as_ptr());
                } else {
                    block_avx2::<false>(o.as_mut_ptr(), x.as_ptr());
                    *touched = counter;
                }
            }
            return;
        }
    }
    out_audio_at::<REPLACE, WIDE>(out, touched, counter, input);
}

/// `log_write`'s copy for other lengths, out of line: the usual block's
/// path keeps none of its set-up.
#[cold]
#[inline(never)]
fn log_samples(data: &mut Vec<f32>, input: &[f32], len: usize) {
    if input.len() >= len {
        data.extend_from_slice(&input[..len]);
    } else {
        data.extend(std::iter::repeat_n(input[0], len));
    }
}

/// Copies a block, or fills it when the source is a single (control) value.
#[inline]
fn copy_block(out: &mut [f32], input: &[f32]) {
    if input.len() == out.len() {
        out.copy_from_slice(input);
    } else {
        out.fill(input[0]);
    }
}

// ---------------------------------------------------------------- controls

/// Control: the synth's control values (or the buses they are mapped to).
pub struct Control {
    first: usize,
}

impl Control {
    #[inline(always)]
    fn compute(&self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let n = io.num_outputs();
        let range = self.first..self.first + n;
        // Controls the synth holds itself (the usual case: nothing mapped)
        // are copied without looking each one up on its own.
        let (Some(map), Some(values)) = (cx.synth.control_map.get(range.clone()), cx.synth.controls.get(range)) else {
            for i in 0..n {
                *io.out0(i) = control_value(cx, self.first + i);
            }
            return;
        };
        for (i, (m, &v)) in map.iter().zip(values).enumerate() {
            *io.out0(i) = if *m == ControlMap::Own { v } else { control_value(cx, self.first + i) };
        }
    }
}

impl Construct for Control {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let u = Control { first: spec.special_index.max(0) as usize };
        u.compute(io, cx);
        u
    }
}

impl Unit for Control {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.compute(io, cx);
    }
}

/// TrigControl: like Control, but each value is reset to zero once read.
pub struct TrigControl {
    first: usize,
}

impl Construct for TrigControl {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        TrigControl { first: spec.special_index.max(0) as usize }
    }
}

impl Unit for TrigControl {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        for i in 0..io.num_outputs() {
            let idx = self.first + i;
            io.out(i)[0] = control_value(cx, idx);
            // Zeroed even when mapped, so that unmapping does not re-trigger.
            if let Some(c) = cx.synth.controls.get_mut(idx) {
                *c = 0.0;
            }
        }
    }
}

/// LagControl: controls smoothed by a one-pole lag per channel; the lag
/// times are the unit's inputs.
pub struct LagControl {
    first: usize,
    y1: Vec<f32>,
    b1: Vec<f32>,
}

impl LagControl {
    fn compute(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        for i in 0..io.num_outputs().min(self.y1.len()) {
            let z = control_value(cx, self.first + i);
            let x = z + self.b1[i] * (self.y1[i] - z);
            let x = zap_f32(x);
            self.y1[i] = x;
            io.out(i)[0] = x;
        }
    }
}

impl Construct for LagControl {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let first = spec.special_index.max(0) as usize;
        let n = io.num_inputs();
        let mut y1 = Vec::with_capacity(n);
        let mut b1 = Vec::with_capacity(n);
        for i in 0..n {
            y1.push(control_value(cx, first + i));
            let lag = io.in0(i);
            b1.push(if lag == 0.0 { 0.0 } else { (LOG001 / (lag as f64 * cx.rate.sample_rate)).exp() as f32 });
        }
        let mut u = LagControl { first, y1, b1 };
        u.compute(io, cx);
        u
    }
}

impl Unit for LagControl {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.compute(io, cx);
    }
}

/// AudioControl: audio-rate controls; a control mapped to an audio bus
/// follows that bus, one mapped to a control bus ramps to its value.
pub struct AudioControl {
    first: usize,
    prev_val: Vec<f32>,
    used_prev_cycle: Vec<bool>,
    prev_map: Option<ControlMap>,
}

impl AudioControl {
    fn compute(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let n = io.n();
        let first_map = cx.synth.control_map.get(self.first).copied();
        if first_map != self.prev_map {
            self.used_prev_cycle.iter_mut().for_each(|u| *u = false);
            self.prev_map = first_map;
        }
        let bs = cx.world.block_size;
        for i in 0..io.num_outputs() {
            let idx = self.first + i;
            let map = cx.synth.control_map.get(idx).copied().unwrap_or_default();
            let out = io.out(i);
            match map {
                ControlMap::Own => {
                    let v = cx.synth.controls.get(idx).copied().unwrap_or(0.0);
                    out.fill(v);
                }
                ControlMap::ControlBus(b) => {
                    let next = cx.world.control_bus.get(b as usize).copied().unwrap_or(0.0);
                    let mut cur = self.prev_val[i];
                    let slope = ((next - cur) as f64 * cx.rate.slope_factor) as f32;
                    for o in out.iter_mut() {
                        *o = cur;
                        cur += slope;
                    }
                    self.prev_val[i] = cur;
                }
                ControlMap::AudioBus(b) => {
                    let b = b as usize;
                    let diff = cx.world.buf_counter.wrapping_sub(cx.world.audio_touched.get(b).copied().unwrap_or(-10));
                    let bus = &cx.world.audio_bus[b * bs..b * bs + n];
                    if diff == 0 {
                        out.copy_from_slice(bus);
                        self.used_prev_cycle[i] = true;
                    } else if diff == 1 {
                        if self.used_prev_cycle[i] {
                            out.fill(0.0);
                            self.used_prev_cycle[i] = false;
                        } else {
                            out.copy_from_slice(bus);
                        }
                    } else {
                        out.fill(0.0);
                        self.used_prev_cycle[i] = false;
                    }
                }
            }
        }
    }
}

impl Construct for AudioControl {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let n = io.num_outputs();
        let mut u = AudioControl {
            first: spec.special_index.max(0) as usize,
            prev_val: vec![0.0; n],
            used_prev_cycle: vec![false; n],
            prev_map: None,
        };
        u.compute(io, cx);
        u
    }
}

impl Unit for AudioControl {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.compute(io, cx);
    }
}

// ---------------------------------------------------------------- inputs

/// In: reads audio buses (silence where not written this block) or
/// control buses.
pub struct In {
    bus: BusSel,
    audio: bool,
}

impl In {
    fn compute(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, audio: bool) {
        let fbus = io.in0(0);
        let channels = io.num_outputs();
        let w = &*cx.world;
        if audio {
            let nb = w.num_audio_buses();
            self.bus.update(fbus, channels, nb);
            let bs = w.block_size;
            let n = io.n();
            for i in 0..channels {
                let ch = self.bus.first + i;
                let out = io.out(i);
                if self.bus.valid(fbus, i, nb) && ch < nb && w.audio_touched[ch] == w.buf_counter {
                    out.copy_from_slice(&w.audio_bus[ch * bs..ch * bs + n]);
                } else {
                    out.fill(0.0);
                }
            }
        } else {
            let nb = w.num_control_buses();
            self.bus.update(fbus, channels, nb);
            let first_requested = fbus as i64;
            for i in 0..channels {
                let ch = self.bus.first + i;
                io.out(i)[0] = if first_requested + (i as i64) < nb as i64 && ch < nb { w.control_bus[ch] } else { 0.0 };
            }
        }
    }
}

impl Construct for In {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = In { bus: BusSel::new(f32::NAN), audio: spec.rate == Rate::Audio };
        u.compute(io, cx, u.audio);
        u
    }
}

impl Unit for In {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.compute(io, cx, self.audio);
    }
}

/// InFeedback: reads an audio bus also when it was written in the
/// previous block (after this synth ran), for feedback paths.
pub struct InFeedback {
    bus: BusSel,
    used_prev_cycle: Vec<bool>,
}

impl InFeedback {
    fn compute(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let fbus = io.in0(0);
        let channels = io.num_outputs();
        if fbus != self.bus.last {
            self.used_prev_cycle.iter_mut().for_each(|u| *u = false);
        }
        let w = &*cx.world;
        let nb = w.num_audio_buses();
        self.bus.update(fbus, channels, nb);
        let bs = w.block_size;
        let n = io.n();
        for i in 0..channels {
            let ch = self.bus.first + i;
            let valid = self.bus.valid(fbus, i, nb) && ch < nb;
            let diff = if valid { w.buf_counter.wrapping_sub(w.audio_touched[ch]) } else { i32::MAX };
            let out = io.out(i);
            if valid && diff == 0 {
                out.copy_from_slice(&w.audio_bus[ch * bs..ch * bs + n]);
                self.used_prev_cycle[i] = true;
            } else if valid && diff == 1 {
                if self.used_prev_cycle[i] {
                    out.fill(0.0);
                    self.used_prev_cycle[i] = false;
                } else {
                    out.copy_from_slice(&w.audio_bus[ch * bs..ch * bs + n]);
                }
            } else {
                out.fill(0.0);
                self.used_prev_cycle[i] = false;
            }
        }
    }
}

impl Construct for InFeedback {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = InFeedback { bus: BusSel::new(-1.0), used_prev_cycle: vec![false; io.num_outputs()] };
        u.compute(io, cx);
        u
    }
}

impl Unit for InFeedback {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.compute(io, cx);
    }
}

// ---------------------------------------------------------------- outputs

/// Which channels of an `Out` or `ReplaceOut` reach a bus this block:
/// scsynth's checks (the requested bus number against the bus count, and
/// the remembered bus), redone only when the bus number or the bus count
/// changes. The channels that pass are nearly always `0..valid`; when
/// they are not (the integer sum of a huge control bus number wraps),
/// each channel is checked again every block.
struct OutChannels {
    bus: BusSel,
    /// Bus count the checks were made against (`usize::MAX` before the first).
    num_buses: usize,
    /// Channels `0..valid` pass.
    valid: usize,
    /// Whether the channels that pass are exactly `0..valid`.
    prefix: bool,
}

impl OutChannels {
    fn new() -> OutChannels {
        OutChannels { bus: BusSel::new(-1.0), num_buses: usize::MAX, valid: 0, prefix: true }
    }

    /// Whether channel `i` may be written, for the bus number `fbus`.
    #[inline]
    fn passes(&self, audio: bool, fbus: f32, i: usize, num_buses: usize) -> bool {
        let requested = if audio {
            self.bus.valid(fbus, i, num_buses)
        } else {
            (fbus as i64).wrapping_add(i as i64) < num_buses as i64
        };
        requested && self.bus.first + i < num_buses
    }

    /// Follows the bus number; true when the channels that pass are `0..valid`.
    #[inline(always)]
    fn update(&mut self, audio: bool, fbus: f32, channels: usize, num_buses: usize) -> bool {
        // A NaN bus number differs from the last one every block, and is
        // followed every block, as before.
        if fbus != self.bus.last || num_buses != self.num_buses {
            self.recheck(audio, fbus, channels, num_buses);
        }
        self.prefix
    }

    #[inline(never)]
    fn recheck(&mut self, audio: bool, fbus: f32, channels: usize, num_buses: usize) {
        self.bus.update(fbus, channels, num_buses);
        self.num_buses = num_buses;
        let valid = (0..channels).take_while(|&i| self.passes(audio, fbus, i, num_buses)).count();
        self.prefix = (valid..channels).all(|i| !self.passes(audio, fbus, i, num_buses));
        self.valid = valid;
    }
}

/// Out (`REPLACE` false: mixes into what the bus holds this block) and
/// ReplaceOut (`REPLACE` true: overwrites), at audio or control rate. What
/// cannot change in a synth's life (rate, kind, channel count, the CPU's
/// vector width) is decided when it is built.
pub struct Out<const REPLACE: bool> {
    channels: OutChannels,
    audio: bool,
    /// Whether the audio path mixes with the AVX2 build of `out_audio`.
    wide: bool,
}

impl<const REPLACE: bool> Out<REPLACE> {
    fn construct(spec: &UnitSpec<'_>) -> Self {
        let audio = spec.rate == Rate::Audio;
        Out { channels: OutChannels::new(), audio, wide: audio && crate::vector::avx2() }
    }
}

pub(crate) fn new_out(spec: &UnitSpec<'_>, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(Out::<false>::construct(spec))
}

pub(crate) fn new_replace_out(spec: &UnitSpec<'_>, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(Out::<true>::construct(spec))
}

/// One channel's block onto an audio bus: mixed into what it holds when it
/// was written this block (`touched == counter`), else set.
#[inline(always)]
fn out_audio<const REPLACE: bool>(out: &mut [f32], touched: &mut i32, counter: i32, input: &[f32]) {
    // The block size most servers run at, as fixed-length arrays: straight
    // vector operations, no test of the lengths, no call to copy.
    if let (Ok(o), Some(x)) = (<&mut [f32; 64]>::try_from(&mut *out), input.first_chunk::<64>()) {
        if !REPLACE && *touched == counter {
            for (o, &x) in o.iter_mut().zip(x) {
                *o += x;
            }
        } else {
            *o = *x;
            *touched = counter;
        }
        return;
    }
    if !REPLACE && *touched == counter {
        if input.len() == out.len() {
            // Element by element: the same sums at any vector width.
            for (o, &x) in out.iter_mut().zip(input) {
                *o += x;
            }
        } else {
            let x = input[0];
            out.iter_mut().for_each(|o| *o += x);
        }
    } else {
        copy_block(out, input);
        *touched = counter;
    }
}

/// One channel's value onto a control bus, as `out_audio`.
#[inline(always)]
fn out_control<const REPLACE: bool>(out: &mut f32, touched: &mut i32, counter: i32, x: f32) {
    if !REPLACE && *touched == counter {
        *out += x;
    } else {
        *out = x;
        *touched = counter;
    }
}

/// `out_audio` out of line: the channel loop around it then keeps nothing
/// of the mixing loop's set-up, and `out` and `input` are known apart.
#[inline(never)]
fn out_audio_plain<const REPLACE: bool>(out: &mut [f32], touched: &mut i32, counter: i32, input: &[f32]) {
    out_audio::<REPLACE>(out, touched, counter, input);
}

/// `out_audio_plain` compiled for AVX2: eight samples a step, each sum
/// unchanged.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn out_audio_avx2<const REPLACE: bool>(out: &mut [f32], touched: &mut i32, counter: i32, input: &[f32]) {
    out_audio::<REPLACE>(out, touched, counter, input);
}

/// `out_audio` out of line, by the AVX2 build with `WIDE`.
#[inline(always)]
fn out_audio_at<const REPLACE: bool, const WIDE: bool>(out: &mut [f32], touched: &mut i32, counter: i32, input: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is chosen only where the CPU has AVX2.
        unsafe { out_audio_avx2::<REPLACE>(out, touched, counter, input) };
        return;
    }
    out_audio_plain::<REPLACE>(out, touched, counter, input);
}

impl<const REPLACE: bool> Out<REPLACE> {
    /// The audio path in a world that does not log (`next_in` sends a
    /// worker's world to `next_logged`); `WIDE`: the channels are written
    /// by the AVX2 build of `out_audio` (only where the CPU has it).
    #[inline(never)]
    fn next_audio<const WIDE: bool>(&mut self, io: &mut Wires<'_>, w: &mut crate::world::World) {
        let fbus = io.in0(0);
        let channels = io.num_inputs().saturating_sub(1);
        let nb = w.num_audio_buses();
        debug_assert!(!w.log_touches, "a logging world's Out takes the logged path");
        if !self.channels.update(true, fbus, channels, nb) {
            self.next_logged::<WIDE>(io, w);
            return;
        }
        let (first, valid) = (self.channels.bus.first, self.channels.valid);
        let bs = w.block_size;
        let counter = w.buf_counter;
        for i in 0..valid {
            let ch = first + i;
            let (out, t) = (&mut w.audio_bus[ch * bs..ch * bs + bs], &mut w.audio_touched[ch]);
            let input = io.inp(i + 1);
            #[cfg(target_arch = "x86_64")]
            if WIDE {
                // SAFETY: `WIDE` is chosen only where the CPU has AVX2.
                unsafe { out_audio_avx2::<REPLACE>(out, t, counter, input) };
                continue;
            }
            out_audio_plain::<REPLACE>(out, t, counter, input);
        }
    }

    #[inline(never)]
    fn next_control(&mut self, io: &mut Wires<'_>, w: &mut crate::world::World) {
        let fbus = io.in0(0);
        let channels = io.num_inputs().saturating_sub(1);
        let nb = w.num_control_buses();
        if !self.channels.update(false, fbus, channels, nb) || w.log_touches {
            self.next_logged::<false>(io, w);
            return;
        }
        let (first, valid) = (self.channels.bus.first, self.channels.valid);
        let counter = w.buf_counter;
        let buses = &mut w.control_bus[first..first + valid];
        let touched = &mut w.control_touched[first..first + valid];
        for (i, (out, t)) in buses.iter_mut().zip(touched).enumerate() {
            out_control::<REPLACE>(out, t, counter, io.in0(i + 1));
        }
    }

    /// Every channel checked on its own, and, in a worker's private world,
    /// the writes logged or made straight to the buses the running item owns.
    /// `WIDE`: the audio channels are mixed by the AVX2 build of
    /// `out_audio` (only where the CPU has it).
    #[inline(never)]
    fn next_logged<const WIDE: bool>(&mut self, io: &mut Wires<'_>, w: &mut crate::world::World) {
        let audio = self.audio;
        let fbus = io.in0(0);
        let channels = io.num_inputs().saturating_sub(1);
        let counter = w.buf_counter;
        let nb = if audio { w.num_audio_buses() } else { w.num_control_buses() };
        let bs = w.block_size;
        // Nearly always the channels that pass are `0..valid`: no need to
        // check each again.
        let prefix = self.channels.update(audio, fbus, channels, nb);
        let (first, valid) = (self.channels.bus.first, self.channels.valid);
        if audio && prefix && w.log_touches {
            // A worker's world, the usual case: each passing channel
            // straight to a bus the item may write, else to the log.
            for i in 0..valid {
                write_logged_audio::<REPLACE, WIDE>(w, first + i, io.inp(i + 1));
            }
            return;
        }
        for i in 0..channels {
            if !(if prefix { i < valid } else { self.channels.passes(audio, fbus, i, nb) }) {
                continue;
            }
            let ch = first + i;
            if audio {
                let input = io.inp(i + 1);
                if w.log_touches {
                    // SAFETY: no other reference to the channel is held
                    // (the world's own buses are other memory).
                    if let Some((out, touched)) = w.direct.as_ref().and_then(|d| unsafe { d.audio_bus(ch, bs) }) {
                        out_audio_at::<REPLACE, WIDE>(out, touched, counter, input);
                        continue;
                    }
                    log_write::<false>(w, true, REPLACE, ch, input);
                    if w.touch_only {
                        continue;
                    }
                }
                let (out, touched) = (&mut w.audio_bus[ch * bs..ch * bs + bs], &mut w.audio_touched[ch]);
                out_audio_at::<REPLACE, WIDE>(out, touched, counter, input);
            } else {
                let x = io.in0(i + 1);
                if w.log_touches {
                    // SAFETY: as for the audio buses above.
                    if let Some((out, touched)) = w.direct.as_ref().and_then(|d| unsafe { d.control_bus(ch) }) {
                        out_control::<REPLACE>(out, touched, counter, x);
                        continue;
                    }
                    log_write::<false>(w, false, REPLACE, ch, &[x]);
                    if w.touch_only {
                        continue;
                    }
                }
                out_control::<REPLACE>(&mut w.control_bus[ch], &mut w.control_touched[ch], counter, x);
            }
        }
    }
}

impl<const REPLACE: bool> Unit for Out<REPLACE> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.next_in(io, cx.world);
    }
}

impl<const REPLACE: bool> Out<REPLACE> {
    #[inline(always)]
    fn next_in(&mut self, io: &mut Wires<'_>, w: &mut crate::world::World) {
        if !self.audio {
            self.next_control(io, w);
            return;
        }
        // A worker's world goes to the logged path at once, rather than
        // through the checks of the usual one.
        match (self.wide, w.log_touches) {
            (true, false) => self.next_audio::<true>(io, w),
            (false, false) => self.next_audio::<false>(io, w),
            (true, true) => self.next_logged::<true>(io, w),
            (false, true) => self.next_logged::<false>(io, w),
        }
    }
}

/// The Out (or ReplaceOut) step of several synths together: lane after
/// lane, in order, each as its unit writes alone, so that synths that
/// share a bus mix into it in synth order (lanes are consecutive synths,
/// whose def has no other bus writer).
pub(crate) fn out_lanes<const REPLACE: bool>(lanes: &mut Lanes<'_>, _rate: &RateInfo) {
    if lanes.world.is_null() {
        return;
    }
    // SAFETY: a set `Lanes::world` is live and reached through nothing
    // else while the kernel runs (its contract).
    let w = unsafe { &mut *lanes.world };
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        // SAFETY: the CPU has AVX2 (checked just now).
        unsafe { out_lanes_avx2::<REPLACE>(lanes, w) };
        return;
    }
    out_lanes_in::<REPLACE, false>(lanes, w);
}

/// `out_lanes_in` compiled for AVX2: eight samples a step, each sum unchanged.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn out_lanes_avx2<const REPLACE: bool>(lanes: &mut Lanes<'_>, w: &mut crate::world::World) {
    out_lanes_in::<REPLACE, true>(lanes, w);
}

/// `WIDE`: the logged path copies and mixes by `block_avx2` (only where
/// the CPU has AVX2).
#[inline(always)]
fn out_lanes_in<const REPLACE: bool, const WIDE: bool>(lanes: &mut Lanes<'_>, w: &mut crate::world::World) {
    if w.log_touches {
        out_lanes_logged::<REPLACE, WIDE>(lanes, w);
        return;
    }
    let nb = w.num_audio_buses();
    let (bs, counter) = (w.block_size, w.buf_counter);
    // A lane that is not filled or not this unit leaves the step
    // uncomputed rather than panic (as the other lane kernels do). The
    // units' type is looked up once for the lanes that share a table.
    let Some(units) = crate::unit::lane_units::<Out<REPLACE>>(lanes) else { return };
    for l in 0..lanes.len.min(MAX_LANES) {
        // SAFETY: the pointers came from distinct units borrowed mutably
        // through `lanes` for the whole call.
        let u = unsafe { &mut *units[l] };
        let Some(io) = lanes.ios[l].as_mut() else { return };
        // One audio channel to a bus that takes it, in the world's own
        // buses (the common case), here; anything else as the unit alone.
        if u.audio && io.num_inputs() == 2 && u.channels.update(true, io.in0(0), 1, nb) && u.channels.valid == 1 {
            let ch = u.channels.bus.first;
            let (Some(out), Some(t)) = (w.audio_bus.get_mut(ch * bs..ch * bs + bs), w.audio_touched.get_mut(ch)) else {
                return;
            };
            out_audio::<REPLACE>(out, t, counter, io.inp(1));
        } else {
            u.next_in(io, w);
        }
    }
}

/// `out_lanes_in` in a worker's private world: one audio channel to a bus
/// that takes it goes, as `Out::next_logged` sends it, straight to a bus
/// the running item may write, else to the log and (unless the world's
/// buses are not read) to the world's bus; anything else as the unit alone.
#[inline(always)]
fn out_lanes_logged<const REPLACE: bool, const WIDE: bool>(lanes: &mut Lanes<'_>, w: &mut crate::world::World) {
    let nb = w.num_audio_buses();
    // As in `out_lanes_in`.
    let Some(units) = crate::unit::lane_units::<Out<REPLACE>>(lanes) else { return };
    for l in 0..lanes.len.min(MAX_LANES) {
        // SAFETY: as in `out_lanes_in`.
        let u = unsafe { &mut *units[l] };
        let Some(io) = lanes.ios[l].as_mut() else { return };
        if !(u.audio && io.num_inputs() == 2 && u.channels.update(true, io.in0(0), 1, nb) && u.channels.valid == 1) {
            u.next_in(io, w);
            continue;
        }
        write_logged_audio::<REPLACE, WIDE>(w, u.channels.bus.first, io.inp(1));
    }
}

/// One passing audio channel of an `Out` in a worker's private world (the
/// unit's logged path and the lane kernel's): straight to a bus the running
/// item may write, else into the log and, unless the world's buses are not
/// read, onto the world's bus.
#[inline(always)]
fn write_logged_audio<const REPLACE: bool, const WIDE: bool>(w: &mut crate::world::World, ch: usize, input: &[f32]) {
    let (bs, counter) = (w.block_size, w.buf_counter);
    // SAFETY: no other reference to the channel is held (the world's own
    // buses are other memory).
    if let Some((out, touched)) = w.direct.as_ref().and_then(|d| unsafe { d.audio_bus(ch, bs) }) {
        out_audio_logged::<REPLACE, WIDE>(out, touched, counter, input);
        return;
    }
    log_write::<WIDE>(w, true, REPLACE, ch, input);
    if !w.touch_only {
        let (out, touched) = (&mut w.audio_bus[ch * bs..ch * bs + bs], &mut w.audio_touched[ch]);
        out_audio_logged::<REPLACE, WIDE>(out, touched, counter, input);
    }
}

/// XOut: crossfades its input into what the bus holds.
pub struct XOut {
    bus: BusSel,
    xfade: f32,
    audio: bool,
}

impl Construct for XOut {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        XOut { bus: BusSel::new(-1.0), xfade: io.in0(1), audio: spec.rate == Rate::Audio }
    }
}

impl Unit for XOut {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let fbus = io.in0(0);
        let channels = io.num_inputs().saturating_sub(2);
        let w = &mut *cx.world;
        let counter = w.buf_counter;
        if !self.audio {
            let nb = w.num_control_buses();
            self.bus.update(fbus, channels, nb);
            let xfade = io.in0(1);
            for i in 0..channels {
                let ch = self.bus.first + i;
                if (fbus as i64) + i as i64 >= nb as i64 || ch >= nb {
                    continue;
                }
                let zin = io.in0(i + 2);
                if w.control_touched[ch] == counter {
                    let zout = w.control_bus[ch];
                    w.control_bus[ch] = zout + xfade * (zin - zout);
                } else {
                    w.control_bus[ch] = xfade * zin;
                    w.control_touched[ch] = counter;
                }
            }
            return;
        }
        let nb = w.num_audio_buses();
        self.bus.update(fbus, channels, nb);
        let bs = w.block_size;
        let next_xfade = io.in0(1);
        let xfade0 = self.xfade;
        let slope = ((next_xfade - xfade0) as f64 * cx.rate.slope_factor) as f32;
        for i in 0..channels {
            let ch = self.bus.first + i;
            if !(self.bus.valid(fbus, i, nb) && ch < nb) {
                continue;
            }
            let input = io.inp(i + 2);
            let touched = w.audio_touched[ch] == counter;
            let out = &mut w.audio_bus[ch * bs..ch * bs + bs];
            if input.len() < bs {
                // An input below audio rate: its value over the whole block.
                let v = input.first().copied().unwrap_or(0.0);
                let ramp = xfade0 != next_xfade;
                if !ramp && xfade0 == 0.0 {
                    continue;
                }
                let mut xf = xfade0;
                for o in out.iter_mut() {
                    let z = if touched { *o } else { 0.0 };
                    *o = z + xf * (v - z);
                    if ramp {
                        xf += slope;
                    }
                }
                w.audio_touched[ch] = counter;
                continue;
            }
            if xfade0 != next_xfade {
                let mut xf = xfade0;
                if touched {
                    for (o, x) in out.iter_mut().zip(input) {
                        let z = *o;
                        *o = z + xf * (*x - z);
                        xf += slope;
                    }
                } else {
                    for (o, x) in out.iter_mut().zip(input) {
                        *o = *x * xf;
                        xf += slope;
                    }
                    w.audio_touched[ch] = counter;
                }
            } else if xfade0 == 1.0 {
                out.copy_from_slice(&input[..bs]);
                w.audio_touched[ch] = counter;
            } else if xfade0 == 0.0 {
                // Nothing to add: the bus keeps what it has.
            } else if touched {
                for (o, x) in out.iter_mut().zip(input) {
                    let z = *o;
                    *o = z + xfade0 * (*x - z);
                }
            } else {
                for (o, x) in out.iter_mut().zip(input) {
                    *o = *x * xfade0;
                }
                w.audio_touched[ch] = counter;
            }
        }
        self.xfade = next_xfade;
    }
}

/// OffsetOut: starts writing at the sample offset of the bundle that
/// created the synth, carrying the overhang into the next block.
pub struct OffsetOut {
    bus: BusSel,
    offset: usize,
    saved: Vec<f32>,
    empty: bool,
}

impl Construct for OffsetOut {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let offset = cx.synth.sample_offset.clamp(0, cx.world.block_size as i32 - 1) as usize;
        let channels = io.num_inputs().saturating_sub(1);
        OffsetOut { bus: BusSel::new(-1.0), offset, saved: vec![0.0; offset * channels], empty: true }
    }
}

impl Unit for OffsetOut {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let fbus = io.in0(0);
        let channels = io.num_inputs().saturating_sub(1);
        let w = &mut *cx.world;
        let counter = w.buf_counter;
        let nb = w.num_audio_buses();
        self.bus.update(fbus, channels, nb);
        let bs = w.block_size;
        let offset = self.offset;
        let remain = bs - offset;
        for i in 0..channels {
            let ch = self.bus.first + i;
            let input = io.inp(i + 1);
            let saved = &mut self.saved[i * offset..(i + 1) * offset];
            if input.len() < bs {
                // An input below audio rate: its value over the whole block.
                let v = input.first().copied().unwrap_or(0.0);
                if self.bus.valid(fbus, i, nb) && ch < nb {
                    let out = &mut w.audio_bus[ch * bs..ch * bs + bs];
                    if w.audio_touched[ch] == counter {
                        if !self.empty {
                            for (o, s) in out[..offset].iter_mut().zip(saved.iter()) {
                                *o += *s;
                            }
                        }
                        out[offset..].iter_mut().for_each(|o| *o += v);
                    } else {
                        if self.empty {
                            out[..offset].fill(0.0);
                        } else {
                            out[..offset].copy_from_slice(saved);
                        }
                        out[offset..].fill(v);
                        w.audio_touched[ch] = counter;
                    }
                }
                saved.fill(v);
                continue;
            }
            if self.bus.valid(fbus, i, nb) && ch < nb {
                let out = &mut w.audio_bus[ch * bs..ch * bs + bs];
                if w.audio_touched[ch] == counter {
                    if !self.empty {
                        for (o, s) in out[..offset].iter_mut().zip(saved.iter()) {
                            *o += *s;
                        }
                    }
                    for (o, x) in out[offset..].iter_mut().zip(&input[..remain]) {
                        *o += *x;
                    }
                } else {
                    if self.empty {
                        out[..offset].fill(0.0);
                    } else {
                        out[..offset].copy_from_slice(saved);
                    }
                    out[offset..].copy_from_slice(&input[..remain]);
                    w.audio_touched[ch] = counter;
                }
            }
            saved.copy_from_slice(&input[remain..]);
        }
        self.empty = false;
    }

    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        if self.offset == 0 || self.empty {
            return;
        }
        let w = &mut *cx.world;
        let counter = w.buf_counter;
        let bs = w.block_size;
        let nb = w.num_audio_buses();
        let offset = self.offset;
        let channels = self.saved.len() / offset;
        for i in 0..channels {
            let ch = self.bus.first + i;
            if ch >= nb {
                continue;
            }
            let saved = &self.saved[i * offset..(i + 1) * offset];
            let out = &mut w.audio_bus[ch * bs..ch * bs + bs];
            if w.audio_touched[ch] == counter {
                for (o, s) in out[..offset].iter_mut().zip(saved) {
                    *o += *s;
                }
            } else {
                out[..offset].copy_from_slice(saved);
                out[offset..].fill(0.0);
                w.audio_touched[ch] = counter;
            }
        }
    }
}

// ---------------------------------------------------------------- local buses

/// LocalIn: the synth's own buses, holding what LocalOut wrote in this or
/// the previous block; the unit's inputs are the values before that.
pub struct LocalIn {
    audio: bool,
    /// A second LocalIn of the same rate in one synth outputs silence.
    inert: bool,
}

impl LocalIn {
    fn compute(&self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        if self.inert {
            io.clear_outputs();
            return;
        }
        let counter = cx.world.buf_counter;
        let n = io.n();
        let (data, touched, len) = if self.audio {
            (&cx.synth.local_audio, &cx.synth.local_audio_touched, cx.world.block_size)
        } else {
            (&cx.synth.local_control, &cx.synth.local_control_touched, 1)
        };
        for i in 0..io.num_outputs() {
            let diff = counter.wrapping_sub(touched[i]);
            let default = if i < io.num_inputs() { io.in0(i) } else { 0.0 };
            let out = io.out(i);
            if diff == 0 || diff == 1 {
                out.copy_from_slice(&data[i * len..i * len + n]);
            } else {
                out.fill(default);
            }
        }
    }
}

impl Construct for LocalIn {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let audio = spec.rate == Rate::Audio;
        let channels = io.num_outputs();
        let s = &mut *cx.synth;
        let inert = if audio { s.local_audio_channels > 0 } else { s.local_control_channels > 0 };
        if !inert {
            if audio {
                s.local_audio = vec![0.0; channels * cx.world.block_size];
                s.local_audio_touched = vec![-1; channels];
                s.local_audio_channels = channels;
            } else {
                s.local_control = vec![0.0; channels];
                s.local_control_touched = vec![-1; channels];
                s.local_control_channels = channels;
            }
        }
        let u = LocalIn { audio, inert };
        u.compute(io, cx);
        u
    }
}

impl Unit for LocalIn {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.compute(io, cx);
    }
}

/// LocalOut: mixes into the synth's LocalIn buses.
pub struct LocalOut {
    audio: bool,
}

impl Construct for LocalOut {
    fn new(spec: &UnitSpec<'_>, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        LocalOut { audio: spec.rate == Rate::Audio }
    }
}

impl Unit for LocalOut {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let channels = io.num_inputs();
        let counter = cx.world.buf_counter;
        let s = &mut *cx.synth;
        let (data, touched, len, have) = if self.audio {
            (&mut s.local_audio, &mut s.local_audio_touched, cx.world.block_size, s.local_audio_channels)
        } else {
            (&mut s.local_control, &mut s.local_control_touched, 1, s.local_control_channels)
        };
        if have == 0 || have != channels {
            return;
        }
        for i in 0..channels {
            let input = io.inp(i);
            let out = &mut data[i * len..(i + 1) * len];
            if input.len() < len {
                // An input below audio rate: its value over the whole block.
                let v = input.first().copied().unwrap_or(0.0);
                if touched[i] == counter {
                    out.iter_mut().for_each(|o| *o += v);
                } else {
                    out.fill(v);
                    touched[i] = counter;
                }
            } else if touched[i] == counter {
                for (o, x) in out.iter_mut().zip(input) {
                    *o += *x;
                }
            } else {
                out.copy_from_slice(&input[..len]);
                touched[i] = counter;
            }
        }
    }
}

