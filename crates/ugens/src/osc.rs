//! Oscillators: table lookup (SinOsc, Osc, COsc, OscN), the recursive sine
//! (FSinOsc), band-limited impulse trains (Blip, Saw, Pulse), non-band-limited
//! low-frequency shapes (LFSaw, LFPulse, LFTri, LFPar, LFCub, VarSaw, SyncSaw,
//! Impulse, and LFGauss and Vibrato in [`lf_shapes`]), Formant, the
//! wavetable crossfaders VOsc and VOsc3 ([`vosc`]), the sine banks Klang and
//! Klank, and SinOscFB.
//!
//! Phases and increments use the same integer and float widths as scsynth so
//! that outputs match it sample for sample.

mod banks;
#[cfg(target_arch = "x86_64")]
pub(crate) mod dsf_x8;
#[cfg(target_arch = "x86_64")]
mod fsin_x8;
mod feedback;
#[cfg(target_arch = "x86_64")]
mod lanes_x8;
mod lf_shapes;
mod vosc;

pub use banks::{Klang, Klank};
pub use feedback::SinOscFB;
pub use lf_shapes::{LFGauss, Vibrato};
pub use vosc::{VOsc, VOsc3};

use crate::common::buffer::resolve_buffer;
use crate::unit::{Lanes, MAX_LANES};
use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, WiresPlace};
use crate::world::SndBuf;
use crate::common::math::{d2i, f2i, sc_clip, sc_max};
use crate::common::wavetable::{
    lookup13, lookupi1, pair13, phase_frac, sine_tables, SineTables, BAD_VALUE, SINE_MASK, SINE_SIZE,
};

const RTWOPI: f64 = 1.0 / (std::f64::consts::PI * 2.0);
/// A full cycle of the 8192-point tables in 16.16 fixed point, shifted by 13.
const ONECYC13: i32 = 0x2000_0000;
/// Three quarters of `ONECYC13`: turns a sine phase into a cosine one.
const TQCYC13: i32 = 0x1800_0000;


// ---------------------------------------------------------------------------
// Table-lookup oscillators

/// Which inputs of a table oscillator run at audio rate: frequency first,
/// then phase. The scalar phase case only differs from `Ak` in that the
/// phase never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PhaseMode {
    Kk,
    Ka,
    Ak,
    Aa,
    Ai,
}

fn phase_mode(io: &Wires<'_>, freq: usize) -> PhaseMode {
    match (io.in_rate(freq), io.in_rate(freq + 1)) {
        (Rate::Audio, Rate::Audio) => PhaseMode::Aa,
        (Rate::Audio, Rate::Control) => PhaseMode::Ak,
        (Rate::Audio, _) => PhaseMode::Ai,
        (_, Rate::Audio) => PhaseMode::Ka,
        _ => PhaseMode::Kk,
    }
}

/// Phase accumulator of SinOsc and Osc: a 32-bit phase whose upper bits
/// index the table and whose lower 16 bits interpolate.
struct TablePhase {
    phase: i32,
    phasein: f32,
    cpstoinc: f64,
    radtoinc: f64,
}

impl TablePhase {
    /// Runs one block in `mode`. `table` holds `mask + 1` value pairs.
    ///
    /// # Safety
    /// `table.len() >= 2 * (mask + 1)`.
    #[inline(always)]
    unsafe fn run(
        &mut self,
        mode: PhaseMode,
        table: &[f32],
        mask: u32,
        out: &mut [f32],
        freq: &[f32],
        phase: &[f32],
        slope_factor: f64,
    ) {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            match mode {
                PhaseMode::Kk => self.kk(table, mask, out, freq[0], phase[0], slope_factor),
                PhaseMode::Ka => self.ka(table, mask, out, freq[0], phase),
                PhaseMode::Aa => self.aa(table, mask, out, freq, phase),
                PhaseMode::Ak => self.ak(table, mask, out, freq, phase[0], slope_factor),
                PhaseMode::Ai => self.ai(table, mask, out, freq),
            }
        }
    }

    #[inline(always)]
    unsafe fn kk(&mut self, table: &[f32], mask: u32, out: &mut [f32], freqin: f32, phasein: f32, sf: f64) {
        let mut phase = self.phase;
        let freq = d2i(self.cpstoinc * freqin as f64);
        let slope = (phasein - self.phasein) * sf as f32;
        let inc = freq.wrapping_add(d2i(slope as f64 * self.radtoinc));
        self.phasein = phasein;
        for o in out.iter_mut() {
            // SAFETY: the caller's contract on `table` and `mask`.
            *o = unsafe { lookupi1(table, phase as u32, mask) };
            phase = phase.wrapping_add(inc);
        }
        self.phase = phase;
    }

    #[inline(always)]
    unsafe fn ka(&mut self, table: &[f32], mask: u32, out: &mut [f32], freqin: f32, phasein: &[f32]) {
        let mut phase = self.phase;
        let freq = d2i(self.cpstoinc * freqin as f64);
        let radtoinc = self.radtoinc as f32;
        for (o, &p) in out.iter_mut().zip(phasein) {
            let pphase = phase.wrapping_add(f2i(radtoinc * p));
            // SAFETY: the caller's contract on `table` and `mask`.
            *o = unsafe { lookupi1(table, pphase as u32, mask) };
            phase = phase.wrapping_add(freq);
        }
        self.phase = phase;
    }

    #[inline(always)]
    unsafe fn aa(&mut self, table: &[f32], mask: u32, out: &mut [f32], freqin: &[f32], phasein: &[f32]) {
        let mut phase = self.phase;
        let cpstoinc = self.cpstoinc as f32;
        let radtoinc = self.radtoinc as f32;
        for ((o, &p), &f) in out.iter_mut().zip(phasein).zip(freqin) {
            let pphase = phase.wrapping_add(f2i(radtoinc * p));
            // SAFETY: the caller's contract on `table` and `mask`.
            *o = unsafe { lookupi1(table, pphase as u32, mask) };
            phase = phase.wrapping_add(f2i(cpstoinc * f));
        }
        self.phase = phase;
    }

    #[inline(always)]
    unsafe fn ak(&mut self, table: &[f32], mask: u32, out: &mut [f32], freqin: &[f32], phasein: f32, sf: f64) {
        let mut phase = self.phase;
        let cpstoinc = self.cpstoinc as f32;
        let radtoinc = self.radtoinc as f32;
        let mut phasemod = self.phasein;
        if phasein != phasemod {
            let slope = (phasein - phasemod) * sf as f32;
            for (o, &f) in out.iter_mut().zip(freqin) {
                let pphase = phase.wrapping_add(f2i(radtoinc * phasemod));
                phasemod += slope;
                // SAFETY: the caller's contract on `table` and `mask`.
                *o = unsafe { lookupi1(table, pphase as u32, mask) };
                phase = phase.wrapping_add(f2i(cpstoinc * f));
            }
        } else {
            let poff = f2i(radtoinc * phasemod);
            for (o, &f) in out.iter_mut().zip(freqin) {
                // SAFETY: the caller's contract on `table` and `mask`.
                *o = unsafe { lookupi1(table, phase.wrapping_add(poff) as u32, mask) };
                phase = phase.wrapping_add(f2i(cpstoinc * f));
            }
        }
        self.phase = phase;
        self.phasein = phasein;
    }

    #[inline(always)]
    unsafe fn ai(&mut self, table: &[f32], mask: u32, out: &mut [f32], freqin: &[f32]) {
        let mut phase = self.phase;
        let cpstoinc = self.cpstoinc as f32;
        let poff = f2i(self.radtoinc as f32 * self.phasein);
        for (o, &f) in out.iter_mut().zip(freqin) {
            // SAFETY: the caller's contract on `table` and `mask`.
            *o = unsafe { lookupi1(table, phase.wrapping_add(poff) as u32, mask) };
            phase = phase.wrapping_add(f2i(cpstoinc * f));
        }
        self.phase = phase;
    }
}

/// SinOsc: interpolating lookup in the shared sine wavetable.
pub struct SinOsc {
    p: TablePhase,
    mode: PhaseMode,
    table: &'static [f32],
    /// A frequency (its bits) and its increment `d2i(cpstoinc * freq)`,
    /// as the lane kernel last computed it: a fixed frequency's increment
    /// is worked out once, not every block.
    freq_bits: u32,
    freq_inc: i32,
}

impl Construct for SinOsc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = SINE_SIZE as f64;
        let phasein = io.in0(1);
        let mut u = SinOsc {
            p: TablePhase {
                phase: 0,
                phasein,
                cpstoinc: size * cx.rate.sample_dur * 65536.0,
                radtoinc: size * (RTWOPI * 65536.0),
            },
            mode: phase_mode(io, 0),
            table: &sine_tables().wavetable,
            freq_bits: 0,
            freq_inc: 0,
        };
        u.freq_bits = io.in0(0).to_bits();
        u.freq_inc = d2i(u.p.cpstoinc * io.in0(0) as f64);
        let (freq, phase) = (io.inp(0), io.inp(1));
        let out = io.out(0);
        let init = if u.mode == PhaseMode::Kk { d2i(phasein as f64 * u.p.radtoinc) } else { 0 };
        u.p.phase = init;
        // SAFETY: the sine wavetable holds 2 * SINE_SIZE values.
        unsafe {
            if u.mode == PhaseMode::Kk {
                u.p.kk(u.table, SINE_MASK, out, freq[0], phase[0], cx.rate.slope_factor);
            } else {
                u.p.aa(u.table, SINE_MASK, out, freq, phase);
            }
        }
        u.p.phase = init;
        u
    }
}

impl Unit for SinOsc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (freq, phase) = (io.inp(0), io.inp(1));
        let out = io.out(0);
        // SAFETY: the sine wavetable holds 2 * SINE_SIZE values.
        unsafe { self.p.run(self.mode, self.table, SINE_MASK, out, freq, phase, cx.rate.slope_factor) };
    }
}

/// The lanes of a lane kernel as units of type `U` and their wires, or
/// `None` where a lane is unfilled or holds another unit (the kernel then
/// leaves the step uncomputed rather than panic, as the others do).
#[allow(clippy::type_complexity)]
fn typed_lanes<'w, U: Unit>(lanes: &mut Lanes<'w>) -> Option<([*mut U; MAX_LANES], [*mut Wires<'w>; MAX_LANES])> {
    Some((crate::unit::lane_units::<U>(lanes)?, lane_wires(lanes)?))
}

/// The wires of a batch's lanes, whose units the batch already holds by
/// type, or `None` where a lane is unfilled.
fn lane_wires<'w>(lanes: &mut Lanes<'w>) -> Option<[*mut Wires<'w>; MAX_LANES]> {
    let mut ios: [*mut Wires<'w>; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let k = lanes.len;
    for (l, io) in lanes.ios.iter_mut().take(k).enumerate() {
        ios[l] = io.as_mut()?;
    }
    Some(ios)
}

/// The same SinOsc step of several synths (or of several SinOscs of one
/// synth, through `LaneBatch`): lanes of one input-rate combination run
/// side by side, each with exactly the arithmetic of `TablePhase::run` in
/// that mode; without the vector instructions each unit runs alone.
pub(crate) fn sinosc_lanes(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let Some((units, ios)) = typed_lanes::<SinOsc>(lanes) else { return };
    // SAFETY: distinct live units and their own wires, borrowed through
    // `lanes` for the call.
    unsafe { sinosc_run(&units[..lanes.len], &ios[..lanes.len], rate) };
}

/// Whether lanes are worth the vector kernels: a block of at least eight
/// samples (a control-rate step's single sample costs more to gather than
/// to compute alone).
///
/// # Safety
/// Each `ios[l]` is live and used through nothing else during the call.
#[cfg(target_arch = "x86_64")]
unsafe fn vector_worthwhile(ios: &[*mut Wires<'_>]) -> bool {
    // SAFETY: the caller's contract.
    crate::vector::avx2() && ios.first().is_some_and(|&w| unsafe { (*w).n() } >= 8)
}

/// `sinosc_lanes` on lanes already found to be SinOscs.
///
/// # Safety
/// `units[l]` and `ios[l]` are distinct live units and their own wires,
/// used through nothing else during the call.
unsafe fn sinosc_run(units: &[*mut SinOsc], ios: &[*mut Wires<'_>], rate: &RateInfo) {
    let mut run = [SinLane::EMPTY; MAX_LANES];
    for ((lane, &u), &w) in run.iter_mut().zip(units).zip(ios) {
        // SAFETY: the caller's contract.
        *lane = unsafe { SinLane::resolve(&mut *w, u) };
    }
    // SAFETY: the caller's contract; the lanes were resolved for these wires.
    unsafe { sinosc_lanes_of(&run[..units.len()], rate) };
}

/// One SinOsc lane: its unit, its mode and where its wires are. A batch
/// keeps its members' lanes from one block to the next while its wires stay
/// in place (`crate::batch::KeptBatch`); the mode is fixed by the input
/// rates, which never change.
#[derive(Clone, Copy)]
pub struct SinLane {
    unit: *mut SinOsc,
    mode: PhaseMode,
    /// Samples per block.
    n: usize,
    freq: *const f32,
    /// Samples the frequency input holds: the block's, or one.
    freq_len: usize,
    phase: *const f32,
    phase_len: usize,
    out: *mut f32,
}

impl SinLane {
    const EMPTY: SinLane = SinLane {
        unit: std::ptr::null_mut(),
        mode: PhaseMode::Kk,
        n: 0,
        freq: std::ptr::null(),
        freq_len: 0,
        phase: std::ptr::null(),
        phase_len: 0,
        out: std::ptr::null_mut(),
    };

    /// Unit `unit`'s lane, its wires being `io`.
    ///
    /// # Safety
    /// `unit` points at a live unit used through nothing else meanwhile.
    #[inline]
    unsafe fn resolve(io: &mut Wires<'_>, unit: *mut SinOsc) -> SinLane {
        let (freq, phase) = (io.inp(0), io.inp(1));
        SinLane {
            unit,
            // SAFETY: the caller's contract.
            mode: unsafe { (*unit).mode },
            n: io.n(),
            freq: freq.as_ptr(),
            freq_len: freq.len(),
            phase: phase.as_ptr(),
            phase_len: phase.len(),
            out: io.out_ptr(0),
        }
    }
}

impl crate::batch::KeptLaneUnit for SinOsc {
    type Lane = SinLane;
    const EMPTY: SinLane = SinLane::EMPTY;

    unsafe fn resolve(io: &mut Wires<'_>, unit: *mut Self) -> SinLane {
        // SAFETY: the caller's contract.
        unsafe { SinLane::resolve(io, unit) }
    }

    unsafe fn run_kept(lanes: &[SinLane], rate: &RateInfo) {
        // SAFETY: the caller's contract.
        unsafe { sinosc_lanes_of(lanes, rate) };
    }
}

/// The SinOsc lanes `run` through one block: lanes of one mode side by
/// side in the vector kernel, each with exactly the arithmetic of
/// `TablePhase::run` in that mode; without the vector instructions, or in
/// blocks of fewer than eight samples, each unit alone.
///
/// # Safety
/// The lanes' units are distinct, live and used through nothing else
/// during the call; each lane was resolved for wires where this block's
/// are, live for the call, the outputs written through nothing else.
unsafe fn sinosc_lanes_of(run: &[SinLane], rate: &RateInfo) {
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() && run.first().is_some_and(|l| l.n >= 8) {
        use lanes_x8::{PHASE_AUDIO, PHASE_RAMP};
        let mut modes = 0u32;
        for lane in run {
            modes |= 1 << lane.mode as u32;
        }
        let has = |mode: PhaseMode| modes & (1 << mode as u32) != 0;
        // SAFETY: AVX2 is present; the caller's contract (for every call).
        unsafe {
            if has(PhaseMode::Kk) {
                sinosc_fixed_mode(run, rate);
            }
            if has(PhaseMode::Ka) {
                sinosc_mode::<false, PHASE_AUDIO>(PhaseMode::Ka, run, rate);
            }
            if has(PhaseMode::Ak) {
                sinosc_mode::<true, PHASE_RAMP>(PhaseMode::Ak, run, rate);
            }
            if has(PhaseMode::Ai) {
                sinosc_mode::<true, PHASE_RAMP>(PhaseMode::Ai, run, rate);
            }
            if has(PhaseMode::Aa) {
                sinosc_mode::<true, PHASE_AUDIO>(PhaseMode::Aa, run, rate);
            }
        }
        return;
    }
    for lane in run {
        // SAFETY: the caller's contract: the unit is live and unaliased,
        // and the wires are where the lane says, as long as it says; the
        // output overlaps no input.
        let (unit, freq, phase, out) = unsafe {
            (
                &mut *lane.unit,
                std::slice::from_raw_parts(lane.freq, lane.freq_len),
                std::slice::from_raw_parts(lane.phase, lane.phase_len),
                std::slice::from_raw_parts_mut(lane.out, lane.n),
            )
        };
        // SAFETY: the sine wavetable holds 2 * SINE_SIZE values.
        unsafe { unit.p.run(lane.mode, unit.table, SINE_MASK, out, freq, phase, rate.slope_factor) };
    }
}

/// Runs the lanes of mode Kk in the vector kernel of a fixed increment,
/// after doing each one's block-start arithmetic of `TablePhase::kk`.
///
/// # Safety
/// As for `sinosc_mode`.
#[cfg(target_arch = "x86_64")]
unsafe fn sinosc_fixed_mode(run: &[SinLane], rate: &RateInfo) {
    let mut m = 0;
    let mut sel: [*mut SinOsc; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let mut phase = [0i32; MAX_LANES];
    let mut inc = [0i32; MAX_LANES];
    let mut out: [*mut f32; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let n = run[0].n;
    for lane in run {
        if lane.mode != PhaseMode::Kk {
            continue;
        }
        debug_assert_eq!(lane.n, n, "SinOsc lanes of different block lengths");
        // SAFETY: the caller's contract.
        let u = unsafe { &mut *lane.unit };
        // SAFETY: the caller's contract: the inputs are where the lane says.
        let (freq0, phase0) = unsafe { (*lane.freq, *lane.phase) };
        // `kk`'s increment: the frequency's, a function of its bits...
        if freq0.to_bits() != u.freq_bits {
            u.freq_bits = freq0.to_bits();
            u.freq_inc = d2i(u.p.cpstoinc * freq0 as f64);
        }
        // ... plus the phase's slope, zero (a finite phase minus itself,
        // times finite factors) when the phase holds.
        let p = &mut u.p;
        let ramp = if phase0.to_bits() == p.phasein.to_bits() && phase0.is_finite() {
            0
        } else {
            let s = (phase0 - p.phasein) * rate.slope_factor as f32;
            d2i(s as f64 * p.radtoinc)
        };
        inc[m] = u.freq_inc.wrapping_add(ramp);
        p.phasein = phase0;
        phase[m] = p.phase;
        out[m] = lane.out;
        sel[m] = lane.unit;
        m += 1;
    }
    // SAFETY: AVX2 is present; out[j] is lane j's own output, valid for n
    // samples.
    unsafe { lanes_x8::sinosc_fixed(&sine_tables().wavetable, &mut phase[..m], &inc[..m], &out[..m], n) };
    for (j, &u) in sel[..m].iter().enumerate() {
        // SAFETY: the caller's contract; no other reference to the unit is
        // live here.
        unsafe { (*u).p.phase = phase[j] };
    }
}

/// Runs the lanes whose mode is `mode` in the vector kernel, after doing
/// each one's block-start arithmetic of `TablePhase::run` in that mode.
///
/// # Safety
/// The CPU has AVX2; as for `sinosc_lanes_of`, and every lane's block has
/// the first one's `n` samples.
#[cfg(target_arch = "x86_64")]
unsafe fn sinosc_mode<const FREQ_AUDIO: bool, const PHASE: u8>(mode: PhaseMode, run: &[SinLane], rate: &RateInfo) {
    let mut m = 0;
    let mut sel: [*mut SinOsc; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let mut phase = [0i32; MAX_LANES];
    let mut inc = [0i32; MAX_LANES];
    let mut phasemod = [0f32; MAX_LANES];
    let mut slope = [0f32; MAX_LANES];
    let mut cpstoinc = [0f32; MAX_LANES];
    let mut radtoinc = [0f32; MAX_LANES];
    let mut freq: [*const f32; MAX_LANES] = [std::ptr::null(); MAX_LANES];
    let mut phasein: [*const f32; MAX_LANES] = [std::ptr::null(); MAX_LANES];
    let mut out: [*mut f32; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let n = run[0].n;
    for lane in run {
        if lane.mode != mode {
            continue;
        }
        debug_assert_eq!(lane.n, n, "SinOsc lanes of different block lengths");
        // SAFETY: the caller's contract.
        let p = unsafe { &mut (*lane.unit).p };
        // SAFETY: the caller's contract: the inputs are where the lane says.
        let (freq0, phase0) = unsafe { (*lane.freq, *lane.phase) };
        match mode {
            PhaseMode::Kk => {
                let f = d2i(p.cpstoinc * freq0 as f64);
                let s = (phase0 - p.phasein) * rate.slope_factor as f32;
                inc[m] = f.wrapping_add(d2i(s as f64 * p.radtoinc));
                p.phasein = phase0;
            }
            PhaseMode::Ka => inc[m] = d2i(p.cpstoinc * freq0 as f64),
            PhaseMode::Ak => {
                phasemod[m] = p.phasein;
                // `ak` ramps only when the phase moved; a zero slope keeps
                // `phasemod` and so the offset `f2i(radtoinc * phasemod)`.
                if phase0 != p.phasein {
                    slope[m] = (phase0 - p.phasein) * rate.slope_factor as f32;
                }
                p.phasein = phase0;
            }
            PhaseMode::Ai => phasemod[m] = p.phasein,
            PhaseMode::Aa => {}
        }
        if FREQ_AUDIO {
            cpstoinc[m] = p.cpstoinc as f32;
            freq[m] = lane.freq;
        }
        if PHASE != lanes_x8::PHASE_NONE {
            radtoinc[m] = p.radtoinc as f32;
        }
        phase[m] = p.phase;
        phasein[m] = lane.phase;
        out[m] = lane.out;
        sel[m] = lane.unit;
        m += 1;
    }
    if m == 0 {
        return;
    }
    let lanes = lanes_x8::SinLanes {
        phase: &mut phase,
        inc: &inc,
        phasemod: &phasemod,
        slope: &slope,
        cpstoinc: &cpstoinc,
        radtoinc: &radtoinc,
        freq: &freq,
        phasein: &phasein,
        out: &out,
    };
    // SAFETY: AVX2 is present; out[j] is lane j's own output, valid for n
    // samples, and its audio inputs are valid for n samples.
    unsafe { lanes_x8::sinosc::<FREQ_AUDIO, PHASE>(&sine_tables().wavetable, lanes, m, n) };
    for (j, &u) in sel[..m].iter().enumerate() {
        // SAFETY: the caller's contract; no other reference to the unit is
        // live here.
        unsafe { (*u).p.phase = phase[j] };
    }
}


/// Wavetables must be powers of two no larger than 131072 values.
fn valid_table_size(size: usize) -> bool {
    size <= 131_072 && size.is_power_of_two()
}

/// Osc: interpolating lookup in a wavetable-format buffer.
pub struct Osc {
    p: TablePhase,
    mode: PhaseMode,
    table_size: i64,
    mask: u32,
}

impl Osc {
    /// Refreshes the size-dependent constants; `false` when the buffer is
    /// missing or not a usable wavetable (outputs must then be cleared).
    fn prepare(&mut self, buf: Option<&SndBuf>, sample_dur: f64) -> bool {
        let Some(buf) = buf.filter(|b| b.is_allocated()) else { return false };
        let size = buf.samples();
        if size as i64 != self.table_size {
            self.table_size = size as i64;
            let size2 = (size >> 1) as f64;
            self.mask = ((size >> 1) as u32).wrapping_sub(1);
            self.p.radtoinc = size2 * (RTWOPI * 65536.0);
            self.p.cpstoinc = size2 * sample_dur * 65536.0;
        }
        valid_table_size(size) && size >= 2
    }
}

impl Construct for Osc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = resolve_buffer(cx.world, io.in0(0)).map_or(0, |b| b.samples());
        let phasein = io.in0(2);
        let mut u = Osc {
            p: TablePhase { phase: 0, phasein, cpstoinc: 0.0, radtoinc: (size >> 1) as f64 * (RTWOPI * 65536.0) },
            mode: phase_mode(io, 1),
            table_size: -1,
            mask: 0,
        };
        let init = if u.mode == PhaseMode::Kk { d2i(phasein as f64 * u.p.radtoinc) } else { 0 };
        u.p.phase = init;
        let (freq, phase) = (io.inp(1), io.inp(2));
        let buf = resolve_buffer(cx.world, io.in0(0));
        let out = io.out(0);
        if u.prepare(buf, cx.rate.sample_dur) {
            let table = buf.map_or(&[][..], |b| &b.data[..]);
            // SAFETY: `prepare` checked that the buffer holds 2 * (mask + 1) values.
            unsafe {
                if u.mode == PhaseMode::Kk {
                    u.p.kk(table, u.mask, out, freq[0], phase[0], cx.rate.slope_factor);
                } else {
                    u.p.aa(table, u.mask, out, freq, phase);
                }
            }
        } else {
            out.fill(0.0);
        }
        u.p.phase = init;
        u
    }
}

impl Unit for Osc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let buf = resolve_buffer(cx.world, io.in0(0));
        let (freq, phase) = (io.inp(1), io.inp(2));
        let out = io.out(0);
        if !self.prepare(buf, cx.rate.sample_dur) {
            out.fill(0.0);
            return;
        }
        let table = buf.map_or(&[][..], |b| &b.data[..]);
        // SAFETY: `prepare` checked that the buffer holds 2 * (mask + 1) values.
        unsafe { self.p.run(self.mode, table, self.mask, out, freq, phase, cx.rate.slope_factor) };
    }
}

/// OscN: non-interpolating lookup in a buffer of plain samples.
pub struct OscN {
    phase: i32,
    phasein: f32,
    cpstoinc: f64,
    radtoinc: f64,
    mode: PhaseMode,
    table_size: i64,
    mask: i32,
}

impl OscN {
    fn prepare(&mut self, buf: Option<&SndBuf>, sample_dur: f64) -> bool {
        let Some(buf) = buf.filter(|b| b.is_allocated()) else { return false };
        let size = buf.samples();
        if size as i64 != self.table_size {
            self.table_size = size as i64;
            self.mask = (size as i32).wrapping_sub(1);
            self.radtoinc = size as f64 * (RTWOPI * 65536.0);
            self.cpstoinc = size as f64 * sample_dur * 65536.0;
        }
        valid_table_size(size)
    }

    /// Runs one block. `table.len()` must be `mask + 1` (checked by `prepare`).
    #[inline(always)]
    fn run(&mut self, mode: PhaseMode, table: &[f32], out: &mut [f32], freq: &[f32], ph: &[f32], sf: f64) {
        let mask = self.mask;
        // Arithmetic shift, as the phase is a signed integer.
        let at = |p: i32| table[((p >> 16) & mask) as usize];
        let mut phase = self.phase;
        match mode {
            PhaseMode::Kk => {
                let f = d2i(self.cpstoinc * freq[0] as f64);
                let slope = (ph[0] - self.phasein) * sf as f32;
                let inc = f.wrapping_add(d2i(slope as f64 * self.radtoinc));
                self.phasein = ph[0];
                for o in out.iter_mut() {
                    *o = at(phase);
                    phase = phase.wrapping_add(inc);
                }
            }
            PhaseMode::Ka => {
                let f = d2i(self.cpstoinc * freq[0] as f64);
                let radtoinc = self.radtoinc as f32;
                for (o, &p) in out.iter_mut().zip(ph) {
                    *o = at(phase.wrapping_add(f2i(radtoinc * p)));
                    phase = phase.wrapping_add(f);
                }
            }
            PhaseMode::Aa => {
                let cpstoinc = self.cpstoinc as f32;
                let radtoinc = self.radtoinc as f32;
                for ((o, &p), &f) in out.iter_mut().zip(ph).zip(freq) {
                    *o = at(phase.wrapping_add(f2i(radtoinc * p)));
                    phase = phase.wrapping_add(f2i(cpstoinc * f));
                }
            }
            PhaseMode::Ak | PhaseMode::Ai => {
                let cpstoinc = self.cpstoinc as f32;
                let radtoinc = self.radtoinc as f32;
                let mut phasemod = self.phasein;
                let target = ph[0];
                let slope = (target - phasemod) * sf as f32;
                for (o, &f) in out.iter_mut().zip(freq) {
                    let pphase = phase.wrapping_add(f2i(radtoinc * phasemod));
                    phasemod += slope;
                    *o = at(pphase);
                    phase = phase.wrapping_add(f2i(cpstoinc * f));
                }
                self.phasein = target;
            }
        }
        self.phase = phase;
    }
}

impl Construct for OscN {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = resolve_buffer(cx.world, io.in0(0)).map_or(0, |b| b.samples());
        let phasein = io.in0(2);
        let mut u = OscN {
            phase: 0,
            phasein,
            cpstoinc: 0.0,
            radtoinc: size as f64 * (RTWOPI * 65536.0),
            mode: phase_mode(io, 1),
            table_size: -1,
            mask: 0,
        };
        let init = if u.mode == PhaseMode::Kk { d2i(phasein as f64 * u.radtoinc) } else { 0 };
        u.phase = init;
        let (freq, phase) = (io.inp(1), io.inp(2));
        let buf = resolve_buffer(cx.world, io.in0(0));
        let out = io.out(0);
        if u.prepare(buf, cx.rate.sample_dur) {
            let table = buf.map_or(&[][..], |b| &b.data[..]);
            let mode = if u.mode == PhaseMode::Kk { PhaseMode::Kk } else { PhaseMode::Aa };
            u.run(mode, table, out, freq, phase, cx.rate.slope_factor);
        } else {
            out.fill(0.0);
        }
        u.phase = init;
        u
    }
}

impl Unit for OscN {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let buf = resolve_buffer(cx.world, io.in0(0));
        let (freq, phase) = (io.inp(1), io.inp(2));
        let out = io.out(0);
        if !self.prepare(buf, cx.rate.sample_dur) {
            out.fill(0.0);
            return;
        }
        let table = buf.map_or(&[][..], |b| &b.data[..]);
        self.run(self.mode, table, out, freq, phase, cx.rate.slope_factor);
    }
}

/// COsc: two wavetable oscillators detuned by `beats` Hz, summed (chorus).
pub struct COsc {
    phase1: i32,
    phase2: i32,
    cpstoinc: f64,
    table_size: i64,
    mask: u32,
}

impl COsc {
    fn calc(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let buf = resolve_buffer(cx.world, io.in0(0));
        let freqin = io.in0(1);
        let beats = io.in0(2) * 0.5;
        let out = io.out(0);
        let Some(buf) = buf.filter(|b| b.is_allocated()) else {
            out.fill(0.0);
            return;
        };
        let size = buf.samples();
        if size as i64 != self.table_size {
            self.table_size = size as i64;
            self.mask = ((size >> 1) as u32).wrapping_sub(1);
            self.cpstoinc = (size >> 1) as f64 * cx.rate.sample_dur * 65536.0;
        }
        if !valid_table_size(size) || size < 2 {
            out.fill(0.0);
            return;
        }
        let table = &buf.data[..];
        let mask = self.mask;
        let cfreq = d2i(self.cpstoinc * freqin as f64);
        let beatf = d2i(self.cpstoinc * beats as f64);
        let freq1 = cfreq.wrapping_add(beatf);
        let freq2 = cfreq.wrapping_sub(beatf);
        let (mut phase1, mut phase2) = (self.phase1, self.phase2);
        for o in out.iter_mut() {
            // SAFETY: the size check above makes the buffer hold 2 * (mask + 1) values.
            let (a, b) = unsafe { (lookupi1(table, phase1 as u32, mask), lookupi1(table, phase2 as u32, mask)) };
            *o = a + b;
            phase1 = phase1.wrapping_add(freq1);
            phase2 = phase2.wrapping_add(freq2);
        }
        self.phase1 = phase1;
        self.phase2 = phase2;
    }
}

impl Construct for COsc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = COsc { phase1: 0, phase2: 0, cpstoinc: 0.0, table_size: -1, mask: 0 };
        u.calc(io, cx);
        u.phase1 = 0;
        u.phase2 = 0;
        u
    }
}

impl Unit for COsc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.calc(io, cx);
    }
}

// ---------------------------------------------------------------------------
// FSinOsc

/// FSinOsc: a sine from a two-pole resonator (very cheap, frequency read
/// once per block).
pub struct FSinOsc {
    b1: f64,
    y1: f64,
    y2: f64,
    freq: f64,
    fixed: bool,
}

impl Construct for FSinOsc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let freq = io.in0(0) as f64;
        let iphase = io.in0(1);
        let w = (freq * cx.rate.radians_per_sample) as f32;
        // Single-precision trig here, as scsynth's constructor uses.
        let b1 = 2.0 * w.cos() as f64;
        let y1 = (iphase - w).sin() as f64;
        let y2 = (iphase - 2.0 * w).sin() as f64;
        io.out(0)[0] = (b1 * y1 - y2) as f32;
        FSinOsc { b1, y1, y2, freq, fixed: io.in_rate(0) == Rate::Scalar }
    }
}

impl Unit for FSinOsc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if !self.fixed {
            let freq = io.in0(0) as f64;
            if freq != self.freq {
                self.freq = freq;
                self.b1 = 2.0 * (freq * cx.rate.radians_per_sample).cos();
            }
        }
        let b1 = self.b1;
        let (mut y1, mut y2) = (self.y1, self.y2);
        let out = io.out(0);
        let mut chunks = out.chunks_exact_mut(3);
        for c in &mut chunks {
            let y0 = b1 * y1 - y2;
            y2 = b1 * y0 - y1;
            y1 = b1 * y2 - y0;
            c[0] = y0 as f32;
            c[1] = y2 as f32;
            c[2] = y1 as f32;
        }
        for o in chunks.into_remainder() {
            let y0 = b1 * y1 - y2;
            *o = y0 as f32;
            y2 = y1;
            y1 = y0;
        }
        self.y1 = y1;
        self.y2 = y2;
    }
}

/// One FSinOsc's recurrence state at construction, exactly as
/// `FSinOsc::new` computes it: (b1, y1, y2, first output).
#[inline]
fn fsinosc_init(freq: f64, iphase: f32, radians_per_sample: f64) -> (f64, f64, f64, f32) {
    let w = (freq * radians_per_sample) as f32;
    let b1 = 2.0 * w.cos() as f64;
    let y1 = (iphase - w).sin() as f64;
    let y2 = (iphase - 2.0 * w).sin() as f64;
    (b1, y1, y2, (b1 * y1 - y2) as f32)
}

pub(crate) fn fsinosc_batchable(spec: &UnitSpec<'_>, _input_rates: &[Rate]) -> bool {
    spec.rate == Rate::Audio && spec.num_inputs == 2
}

pub(crate) fn new_fsinosc_batch(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(FSinOscBatch::new(spec, io, cx))
}

/// Many independent FSinOscs of one synth computed together. Each lane does
/// the same double-precision recurrence as a lone FSinOsc, so the output is
/// identical; running the lanes side by side hides the latency of the
/// recurrence, which is what bounds a lone oscillator.
///
/// Like a kept batch (`crate::batch::KeptBatch`), the batch keeps
/// its oscillators' wires resolved (`FsinWires`) from one block to the
/// next: they change only when the synth's wires move (another scratch
/// area, when the synth takes another place in a lane batch or another
/// thread), which `Wires::place` tells.
pub struct FSinOscBatch {
    lanes: usize,
    /// The oscillators' state, four to a quad in the layout the vector
    /// kernel loads, so that it reads and writes them in place (the last
    /// quad's places past `lanes` stay zero).
    quads: Vec<FsinQuad>,
    fixed: bool,
    /// Each quad's wires as resolved for wires at `place`.
    wires: Vec<FsinWires>,
    place: Option<WiresPlace>,
}

// SAFETY: the kept wires' addresses are followed only during a call whose
// wires are at the place they were resolved for (`FSinOscBatch::follow`),
// on the thread making that call, as the wires themselves would be.
unsafe impl Send for FSinOscBatch {}

/// Four oscillators side by side: their recurrence state, and the
/// frequency input each `b1` was computed from.
#[derive(Clone, Copy, Default)]
struct FsinQuad {
    b1: [f64; 4],
    y1: [f64; 4],
    y2: [f64; 4],
    freq: [f32; 4],
}

/// Where a quad's oscillators read their frequency and write their
/// samples. A place past the batch's oscillators reads [`NO_FREQ`] (which
/// equals its quad's frequency, zero, so it never changes) and has no
/// output.
#[derive(Clone, Copy)]
struct FsinWires {
    freq: [*const f32; 4],
    out: [*mut f32; 4],
    /// Every place has an output.
    full: bool,
}

/// The frequency a quad's places past the batch's oscillators read.
static NO_FREQ: f32 = 0.0;

impl FsinWires {
    const EMPTY: FsinWires = FsinWires { freq: [std::ptr::null(); 4], out: [std::ptr::null_mut(); 4], full: false };
}

/// Whether any of four values differs (`!=`, so NaN always does), tested
/// at once rather than one by one.
#[inline(always)]
fn any_differs(a: &[f32; 4], b: &[f32; 4]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE is part of every x86_64 CPU; the loads read four
        // floats of arrays of four. The not-equal predicate is unordered,
        // true for NaN, as `!=` is.
        unsafe { _mm_movemask_ps(_mm_cmpneq_ps(_mm_loadu_ps(a.as_ptr()), _mm_loadu_ps(b.as_ptr()))) != 0 }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (0..4).fold(false, |m, j| m | (a[j] != b[j]))
    }
}

impl FsinQuad {
    /// New frequencies `now` for the quad's oscillators (a place past the
    /// batch's oscillators reads the zero it holds, so it is left as it is).
    #[inline]
    fn follow(&mut self, now: &[f32; 4], rate: &RateInfo) {
        for j in 0..4 {
            if now[j] != self.freq[j] {
                self.freq[j] = now[j];
                self.b1[j] = 2.0 * (now[j] as f64 * rate.radians_per_sample).cos();
            }
        }
    }
}

impl FSinOscBatch {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let lanes = spec.lanes;
        let quads = lanes.div_ceil(4);
        let mut u = FSinOscBatch {
            lanes,
            quads: vec![FsinQuad::default(); quads],
            fixed: io.in_rate(0) == Rate::Scalar,
            wires: vec![FsinWires::EMPTY; quads],
            place: None,
        };
        for l in 0..lanes {
            let freq = io.in0(2 * l);
            let (b1, y1, y2, first) = fsinosc_init(freq as f64, io.in0(2 * l + 1), cx.rate.radians_per_sample);
            let q = &mut u.quads[l / 4];
            (q.b1[l % 4], q.y1[l % 4], q.y2[l % 4], q.freq[l % 4]) = (b1, y1, y2, freq);
            io.out(l)[0] = first;
        }
        u
    }

    /// Resolves the oscillators' wires again if `io` is not where they were
    /// resolved last.
    #[inline(always)]
    fn follow(&mut self, io: &mut Wires<'_>) {
        let place = io.place();
        if !self.place.is_some_and(|p| p == place) {
            self.resolve(io, place);
        }
    }

    #[inline(never)]
    fn resolve(&mut self, io: &mut Wires<'_>, place: WiresPlace) {
        let lanes = self.lanes;
        // Oscillator l's frequency is input 2l, its samples output l.
        assert!(io.num_inputs() >= 2 * lanes, "an FSinOsc batch without its inputs");
        assert!(io.num_outputs() >= lanes, "an FSinOsc batch without its outputs");
        for (q, w) in self.wires.iter_mut().enumerate() {
            *w = FsinWires { full: 4 * q + 4 <= lanes, ..FsinWires::EMPTY };
            for j in 0..4 {
                let l = 4 * q + j;
                if l < lanes {
                    w.freq[j] = io.inp(2 * l).as_ptr();
                    w.out[j] = io.out_ptr(l);
                } else {
                    w.freq[j] = &NO_FREQ;
                }
            }
        }
        self.place = Some(place);
    }
}

impl FSinOscBatch {
    /// Lanes `base..base + W` for `n` samples (lanes past the last one are
    /// padding: computed, never written out). `base` is a multiple of four
    /// and `base + W` at most four times the quads.
    #[inline(always)]
    fn run_chunk<const W: usize>(&mut self, io: &mut Wires<'_>, base: usize, n: usize) {
        let live = (self.lanes - base).min(W);
        let mut b1 = [0.0f64; W];
        let mut y1 = [0.0f64; W];
        let mut y2 = [0.0f64; W];
        for j in 0..W {
            let q = &self.quads[(base + j) / 4];
            (b1[j], y1[j], y2[j]) = (q.b1[j % 4], q.y1[j % 4], q.y2[j % 4]);
        }
        let mut outs = [std::ptr::null_mut::<f32>(); W];
        for (j, o) in outs.iter_mut().enumerate().take(live) {
            *o = io.out_ptr(base + j);
        }
        for s in 0..n {
            let mut y0 = [0.0f64; W];
            for j in 0..W {
                y0[j] = b1[j] * y1[j] - y2[j];
                y2[j] = y1[j];
                y1[j] = y0[j];
            }
            if live == W {
                for j in 0..W {
                    // SAFETY: `out_ptr` points at `n` samples of lane j's own
                    // output, which no other lane or input shares.
                    unsafe { *outs[j].add(s) = y0[j] as f32 };
                }
            } else {
                for j in 0..live {
                    // SAFETY: as above.
                    unsafe { *outs[j].add(s) = y0[j] as f32 };
                }
            }
        }
        for j in 0..W {
            let q = &mut self.quads[(base + j) / 4];
            (q.y1[j % 4], q.y2[j % 4]) = (y1[j], y2[j]);
        }
    }

    /// Every lane through the scalar chunks.
    fn run_scalar(&mut self, io: &mut Wires<'_>, n: usize) {
        let mut base = 0;
        while base < self.lanes {
            // Eight lanes at a time, or four when no more than four are left,
            // so that small batches do not compute padding.
            if self.lanes - base > 4 {
                self.run_chunk::<8>(io, base, n);
                base += 8;
            } else {
                self.run_chunk::<4>(io, base, n);
                base += 4;
            }
        }
    }
}

impl FSinOscBatch {
    /// New frequencies from the inputs (as a lone FSinOsc takes them), read
    /// through the wires `follow` resolved for this call's wires.
    #[inline(always)]
    fn follow_freqs(&mut self, rate: &RateInfo) {
        if self.fixed {
            return;
        }
        for (quad, w) in self.quads.iter_mut().zip(&self.wires) {
            // SAFETY: `follow` resolved the pointers for this call's wires
            // (or points them at `NO_FREQ`); inputs are only read.
            let now: [f32; 4] = std::array::from_fn(|j| unsafe { *w.freq[j] });
            if any_differs(&now, &quad.freq) {
                quad.follow(&now, rate);
            }
        }
    }

    fn run(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        self.follow(io);
        self.follow_freqs(rate);
        let n = io.n();
        #[cfg(target_arch = "x86_64")]
        if crate::vector::avx2() {
            let mut chunk = FsinChunk::new();
            // SAFETY: AVX2 is present; this unit's quads are borrowed
            // mutably here, its wires resolved for `io` just now, and its
            // outputs are its own.
            unsafe {
                chunk.add(self, n);
                chunk.run(n);
            }
            return;
        }
        self.run_scalar(io, n);
    }
}

/// Oscillators gathered for one call of the vector kernel: up to four
/// quads, in place in their units, and their outputs.
#[cfg(target_arch = "x86_64")]
struct FsinChunk {
    quads: [*mut FsinQuad; fsin_x8::QUADS],
    out: [*mut f32; fsin_x8::WIDTH],
    len: usize,
    /// Every quad queued has all its outputs.
    full: bool,
}

#[cfg(target_arch = "x86_64")]
impl FsinChunk {
    fn new() -> Self {
        FsinChunk {
            quads: [std::ptr::null_mut(); fsin_x8::QUADS],
            out: [std::ptr::null_mut(); fsin_x8::WIDTH],
            len: 0,
            full: true,
        }
    }

    /// Queues `u`'s oscillators, running the kernel whenever four quads are
    /// queued.
    ///
    /// # Safety
    /// The CPU has AVX2. `u`'s wires are resolved (`FSinOscBatch::follow`)
    /// for wires that stay live until the chunk has run (`run`); `u`'s
    /// quads and those outputs are reached through nothing else until then,
    /// and are not those of a unit queued before.
    #[inline(always)]
    unsafe fn add(&mut self, u: &mut FSinOscBatch, n: usize) {
        for (quad, w) in u.quads.iter_mut().zip(&u.wires) {
            let at = self.len;
            self.quads[at] = quad;
            self.out[4 * at..4 * at + 4].copy_from_slice(&w.out);
            self.full &= w.full;
            self.len = at + 1;
            if self.len == fsin_x8::QUADS {
                // SAFETY: forwarded contract.
                unsafe { self.run(n) };
            }
        }
    }

    /// Runs the queued quads for `n` samples and empties the chunk.
    ///
    /// # Safety
    /// As for `add`, for every quad queued.
    #[target_feature(enable = "avx2")]
    unsafe fn run(&mut self, n: usize) {
        // SAFETY: AVX2 is present; the quads queued are distinct, the
        // queued units' own; each non-null output of theirs is one
        // oscillator's own, valid for the block's n samples (the
        // contract), and every one is there when every quad queued had
        // all of its.
        unsafe {
            match (self.len, self.full) {
                (0, _) => return,
                (1, true) => fsin_x8::run::<1, true>(&self.quads, &self.out, n),
                (1, false) => fsin_x8::run::<1, false>(&self.quads, &self.out, n),
                (2, true) => fsin_x8::run::<2, true>(&self.quads, &self.out, n),
                (2, false) => fsin_x8::run::<2, false>(&self.quads, &self.out, n),
                (3, true) => fsin_x8::run::<3, true>(&self.quads, &self.out, n),
                (3, false) => fsin_x8::run::<3, false>(&self.quads, &self.out, n),
                (_, true) => fsin_x8::run::<4, true>(&self.quads, &self.out, n),
                (_, false) => fsin_x8::run::<4, false>(&self.quads, &self.out, n),
            }
        }
        self.len = 0;
        self.full = true;
    }
}

impl Unit for FSinOscBatch {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx.rate);
    }
}

/// The FSinOsc batch step of several synths of one def: the oscillators of
/// all of them, sixteen at a time, so that a synth with few oscillators
/// still runs them beside enough others to hide the recurrence's latency.
/// Each oscillator does exactly what it does in its own synth's batch; the
/// kernel reads and writes each unit's state in place, four oscillators to
/// a load, and each unit keeps its wires resolved from block to block, so
/// that gathering a synth's oscillators costs a few copies per four.
pub(crate) fn fsinosc_batch_lanes(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        // SAFETY: the CPU has AVX2 (checked just now).
        unsafe { fsinosc_batch_lanes_avx2(lanes, rate) };
        return;
    }
    let k = lanes.len;
    let mut units: [*mut FSinOscBatch; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_mut() else { return };
        let Some(u) = lanes.units[l].as_deref_mut().and_then(crate::unit::downcast_unit::<FSinOscBatch>) else {
            return;
        };
        u.follow(io);
        u.follow_freqs(rate);
        units[l] = u;
    }
    for l in 0..k {
        // SAFETY: as above.
        let u = unsafe { &mut *units[l] };
        if let Some(io) = lanes.ios[l].as_mut() {
            let n = io.n();
            u.run_scalar(io, n);
        }
    }
}

/// `fsinosc_batch_lanes` on a CPU with AVX2: one pass over the lanes
/// follows each unit's frequencies and queues its oscillators for the
/// vector kernel, which runs every sixteen.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fsinosc_batch_lanes_avx2(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let mut chunk = FsinChunk::new();
    let mut n = 0;
    for l in 0..lanes.len.min(MAX_LANES) {
        // A lane that is not filled or not this unit's batch is left
        // uncomputed, with the lanes after it, rather than panic (as the
        // other lane kernels do).
        let (Some(io), Some(unit)) = (lanes.ios[l].as_mut(), lanes.units[l].as_mut()) else { break };
        let Some(u) = crate::unit::downcast_unit::<FSinOscBatch>(&mut **unit) else { break };
        u.follow(io);
        u.follow_freqs(rate);
        n = io.n();
        // SAFETY: AVX2 is present; distinct units borrowed mutably through
        // `lanes`, their wires resolved for the lanes' wires just now, which
        // stay live and whose outputs are their own; nothing else reaches
        // them until the chunk has run.
        unsafe { chunk.add(u, n) };
    }
    // SAFETY: as above.
    unsafe { chunk.run(n) };
}

// ---------------------------------------------------------------------------
// Band-limited impulse trains (Blip, Saw, Pulse)

/// The denominator of the closed-form harmonic sum at `phase`: `None` where
/// sin is too close to zero to divide by, else the value and whether it is
/// sin (divide) or its reciprocal (multiply).
#[inline(always)]
fn dsf_denom(t: &SineTables, phase: i32) -> Option<(f32, bool)> {
    let (c0, c1) = pair13(&t.cosecant, phase);
    let frac = phase_frac(phase as u32);
    if c0 == BAD_VALUE || c1 == BAD_VALUE {
        let (s0, s1) = pair13(&t.sine, phase);
        let denom = s0 + (s1 - s0) * frac;
        if denom.abs() < 0.0005 {
            None
        } else {
            Some((denom, true))
        }
    } else {
        Some((c0 + (c1 - c0) * frac, false))
    }
}

/// sin(n2 * phase) over (or times) the denominator.
#[inline(always)]
fn dsf_ratio(t: &SineTables, phase: i32, n2: i32, denom: (f32, bool)) -> f32 {
    let numer = lookup13(&t.sine, phase.wrapping_mul(n2));
    if denom.1 {
        numer / denom.0
    } else {
        numer * denom.0
    }
}

/// Crossfaded harmonic sum at `phase` for two harmonic counts.
#[inline(always)]
fn dsf_xfade(t: &SineTables, phase: i32, d: (f32, bool), n2s: (i32, i32), scales: (f32, f32), xfade: f32) -> f32 {
    let n1 = (dsf_ratio(t, phase, n2s.0, d) - 1.0) * scales.0;
    let n2 = (dsf_ratio(t, phase, n2s.1, d) - 1.0) * scales.1;
    n1 + xfade * (n2 - n1)
}

/// The per-block frequency bookkeeping shared by Saw and Pulse.
struct HarmonicState {
    freqin: f32,
    n: i32,
    scale: f32,
    cpstoinc: f64,
}

/// Block plan: phase increment, current and previous harmonic count and
/// scale, and whether to crossfade between them.
struct BlockPlan {
    freq: i32,
    n: i32,
    scale: f32,
    prev_n: i32,
    prev_scale: f32,
    crossfade: bool,
}

impl HarmonicState {
    fn new(freqin: f32, sample_rate: f64, sample_dur: f64) -> Self {
        let n = d2i((sample_rate * 0.5) / freqin as f64);
        HarmonicState {
            freqin,
            n,
            scale: (0.5 / n as f64) as f32,
            cpstoinc: SINE_SIZE as f64 * sample_dur * 65536.0 * 0.5,
        }
    }

    /// Saw's and Pulse's rule: the count follows the frequency, and a change
    /// of count crossfades over one block at the higher frequency.
    fn plan(&mut self, freqin: f32, sample_rate: f64) -> BlockPlan {
        if freqin != self.freqin {
            let n = d2i((sample_rate * 0.5) / freqin as f64);
            let (freq, crossfade) = if n != self.n {
                (d2i(self.cpstoinc * sc_max(self.freqin, freqin) as f64), true)
            } else {
                (d2i(self.cpstoinc * freqin as f64), false)
            };
            let plan = BlockPlan {
                freq,
                n,
                scale: (0.5 / n as f64) as f32,
                prev_n: self.n,
                prev_scale: self.scale,
                crossfade,
            };
            self.n = n;
            self.scale = plan.scale;
            self.freqin = freqin;
            plan
        } else {
            BlockPlan {
                freq: d2i(self.cpstoinc * freqin as f64),
                n: self.n,
                scale: self.scale,
                prev_n: self.n,
                prev_scale: self.scale,
                crossfade: false,
            }
        }
    }
}

/// Saw: band-limited sawtooth, a leaky-integrated impulse train.
pub struct Saw {
    h: HarmonicState,
    phase: i32,
    y1: f32,
}

impl Saw {
    fn calc(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let p = self.h.plan(io.in0(0), cx.rate.sample_rate);
        self.block(&p, io.out(0), cx.rate.slope_factor);
    }

    fn block(&mut self, p: &BlockPlan, out: &mut [f32], slope_factor: f64) {
        let t = sine_tables();
        let n2 = p.n.wrapping_mul(2).wrapping_add(1);
        let (mut phase, mut y1) = (self.phase, self.y1);
        if p.crossfade {
            let pn2 = p.prev_n.wrapping_mul(2).wrapping_add(1);
            let xfade_slope = slope_factor as f32;
            let mut xfade = 0.0f32;
            for o in out.iter_mut() {
                y1 = match dsf_denom(t, phase) {
                    None => 1.0 + 0.999 * y1,
                    Some(d) => dsf_xfade(t, phase, d, (pn2, n2), (p.prev_scale, p.scale), xfade) + 0.999 * y1,
                };
                *o = y1;
                phase = phase.wrapping_add(p.freq);
                xfade += xfade_slope;
            }
        } else {
            let scale = p.scale;
            for o in out.iter_mut() {
                y1 = match dsf_denom(t, phase) {
                    None => 1.0 + 0.999 * y1,
                    Some(d) => (dsf_ratio(t, phase, n2, d) - 1.0) * scale + 0.999 * y1,
                };
                *o = y1;
                phase = phase.wrapping_add(p.freq);
            }
        }
        self.phase = phase;
        self.y1 = y1;
    }
}

impl crate::batch::LaneUnit for Saw {
    const KERNEL: crate::unit::LaneKernel = saw_lanes;
}

/// The same Saw step of several synths: lanes whose harmonic count holds
/// this block run side by side, sample by sample, each with exactly its own
/// arithmetic; a lane that crossfades to a new count runs alone.
pub(crate) fn saw_lanes(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let t = sine_tables();
    let k = lanes.len;
    let mut m = 0;
    let mut units: [*mut Saw; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let mut out: [*mut f32; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let mut phase = [0i32; MAX_LANES];
    let mut y1 = [0f32; MAX_LANES];
    let mut freq = [0i32; MAX_LANES];
    let mut n2 = [0i32; MAX_LANES];
    let mut scale = [0f32; MAX_LANES];
    let mut n = 0;
    let Some(saws) = crate::unit::lane_units::<Saw>(lanes) else { return };
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_mut() else { return };
        // SAFETY: distinct units borrowed mutably through `lanes` for the
        // whole call, reached through nothing else here.
        let saw = unsafe { &mut *saws[l] };
        n = io.n();
        let p = saw.h.plan(io.in0(0), rate.sample_rate);
        if p.crossfade {
            saw.block(&p, io.out(0), rate.slope_factor);
            continue;
        }
        units[m] = saw;
        out[m] = io.out_ptr(0);
        phase[m] = saw.phase;
        y1[m] = saw.y1;
        freq[m] = p.freq;
        n2[m] = p.n.wrapping_mul(2).wrapping_add(1);
        scale[m] = p.scale;
        m += 1;
    }
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        let lanes = dsf_x8::SawLanes { phase: &mut phase, y1: &mut y1, freq: &freq, n2: &n2, scale: &scale, out: &out };
        // SAFETY: AVX2 is present; each out[j], j < m, is lane j's own
        // output, valid for n samples.
        unsafe { dsf_x8::saw(t, lanes, m, n) };
        store_saw_lanes(&units[..m], &phase, &y1);
        return;
    }
    for i in 0..n {
        for j in 0..m {
            y1[j] = match dsf_denom(t, phase[j]) {
                None => 1.0 + 0.999 * y1[j],
                Some(d) => (dsf_ratio(t, phase[j], n2[j], d) - 1.0) * scale[j] + 0.999 * y1[j],
            };
            // SAFETY: lane j's own output, valid for the block.
            unsafe { *out[j].add(i) = y1[j] };
            phase[j] = phase[j].wrapping_add(freq[j]);
        }
    }
    store_saw_lanes(&units[..m], &phase, &y1);
}

fn store_saw_lanes(units: &[*mut Saw], phase: &[i32], y1: &[f32]) {
    for (j, &unit) in units.iter().enumerate() {
        // SAFETY: distinct units borrowed through `lanes`, no other
        // reference to them is live here.
        let saw = unsafe { &mut *unit };
        saw.phase = phase[j];
        saw.y1 = y1[j];
    }
}

impl Construct for Saw {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let h = HarmonicState::new(io.in0(0), cx.rate.sample_rate, cx.rate.sample_dur);
        let mut u = Saw { h, phase: 0, y1: -0.46 };
        u.calc(io, cx);
        u.h.scale = (0.5 / u.h.n as f64) as f32;
        u.phase = 0;
        u.y1 = -0.46;
        u
    }
}

impl Unit for Saw {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.calc(io, cx);
    }
}

/// Pulse: band-limited pulse, the difference of two sawtooths offset by
/// the duty cycle.
pub struct Pulse {
    h: HarmonicState,
    phase: i32,
    phaseoff: i32,
    y1: f32,
}

impl Construct for Pulse {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let h = HarmonicState::new(io.in0(0), cx.rate.sample_rate, cx.rate.sample_dur);
        io.out(0)[0] = 0.0;
        Pulse { h, phase: 0, phaseoff: 0, y1: 0.0 }
    }
}

impl Pulse {
    /// The block's plan and pulse-width ramp (`phaseoff`, its slope).
    fn begin(&mut self, io: &Wires<'_>, rate: &RateInfo) -> (BlockPlan, i32, i32) {
        let p = self.h.plan(io.in0(0), rate.sample_rate);
        let duty = io.in0(1);
        let phaseoff = self.phaseoff;
        let next_phaseoff = f2i(duty * (1u32 << 28) as f32);
        let phaseoff_slope = d2i(next_phaseoff.wrapping_sub(phaseoff) as f64 * rate.slope_factor);
        self.phaseoff = next_phaseoff;
        (p, phaseoff, phaseoff_slope)
    }

    fn block(&mut self, p: &BlockPlan, mut phaseoff: i32, phaseoff_slope: i32, out: &mut [f32], slope_factor: f64) {
        let t = sine_tables();
        let n2 = p.n.wrapping_mul(2).wrapping_add(1);
        let (mut phase, mut y1) = (self.phase, self.y1);
        if p.crossfade {
            let pn2 = p.prev_n.wrapping_mul(2).wrapping_add(1);
            let xfade_slope = slope_factor as f32;
            let mut xfade = 0.0f32;
            let pul = |ph: i32, xfade: f32| match dsf_denom(t, ph) {
                None => 1.0,
                Some(d) => dsf_xfade(t, ph, d, (pn2, n2), (p.prev_scale, p.scale), xfade),
            };
            for o in out.iter_mut() {
                let pul1 = pul(phase, xfade);
                let pul2 = pul(phase.wrapping_add(phaseoff), xfade);
                y1 = pul1 - pul2 + 0.999 * y1;
                *o = y1;
                phase = phase.wrapping_add(p.freq);
                phaseoff = phaseoff.wrapping_add(phaseoff_slope);
                xfade += xfade_slope;
            }
        } else {
            let scale = p.scale;
            let rscale = 1.0 / scale + 1.0;
            let pul = |ph: i32| match dsf_denom(t, ph) {
                None => rscale,
                Some(d) => dsf_ratio(t, ph, n2, d),
            };
            for o in out.iter_mut() {
                let pul1 = pul(phase);
                let pul2 = pul(phase.wrapping_add(phaseoff));
                y1 = (pul1 - pul2) * scale + 0.999 * y1;
                *o = y1;
                phase = phase.wrapping_add(p.freq);
                phaseoff = phaseoff.wrapping_add(phaseoff_slope);
            }
        }
        self.phase = phase;
        self.y1 = y1;
    }
}

impl Unit for Pulse {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (p, phaseoff, phaseoff_slope) = self.begin(io, cx.rate);
        self.block(&p, phaseoff, phaseoff_slope, io.out(0), cx.rate.slope_factor);
    }
}

impl crate::batch::LaneUnit for Pulse {
    const KERNEL: crate::unit::LaneKernel = pulse_lanes;
}

/// The same Pulse step of several synths, side by side as in `saw_lanes`.
pub(crate) fn pulse_lanes(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let t = sine_tables();
    let k = lanes.len;
    let mut m = 0;
    let mut units: [*mut Pulse; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let mut out: [*mut f32; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    let mut phase = [0i32; MAX_LANES];
    let mut phaseoff = [0i32; MAX_LANES];
    let mut phaseoff_slope = [0i32; MAX_LANES];
    let mut y1 = [0f32; MAX_LANES];
    let mut freq = [0i32; MAX_LANES];
    let mut n2 = [0i32; MAX_LANES];
    let mut scale = [0f32; MAX_LANES];
    let mut rscale = [0f32; MAX_LANES];
    let mut n = 0;
    let Some(pulses) = crate::unit::lane_units::<Pulse>(lanes) else { return };
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_mut() else { return };
        // SAFETY: as in `saw_lanes`.
        let pulse = unsafe { &mut *pulses[l] };
        n = io.n();
        let (p, off, off_slope) = pulse.begin(io, rate);
        if p.crossfade {
            pulse.block(&p, off, off_slope, io.out(0), rate.slope_factor);
            continue;
        }
        units[m] = pulse;
        out[m] = io.out_ptr(0);
        phase[m] = pulse.phase;
        phaseoff[m] = off;
        phaseoff_slope[m] = off_slope;
        y1[m] = pulse.y1;
        freq[m] = p.freq;
        n2[m] = p.n.wrapping_mul(2).wrapping_add(1);
        scale[m] = p.scale;
        rscale[m] = 1.0 / p.scale + 1.0;
        m += 1;
    }
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        let lanes = dsf_x8::PulseLanes {
            phase: &mut phase,
            phaseoff: &mut phaseoff,
            phaseoff_slope: &phaseoff_slope,
            y1: &mut y1,
            freq: &freq,
            n2: &n2,
            scale: &scale,
            rscale: &rscale,
            out: &out,
        };
        // SAFETY: AVX2 is present; each out[j], j < m, is lane j's own
        // output, valid for n samples.
        unsafe { dsf_x8::pulse(t, lanes, m, n) };
        store_pulse_lanes(&units[..m], &phase, &y1);
        return;
    }
    for i in 0..n {
        for j in 0..m {
            let pul = |ph: i32| match dsf_denom(t, ph) {
                None => rscale[j],
                Some(d) => dsf_ratio(t, ph, n2[j], d),
            };
            let pul1 = pul(phase[j]);
            let pul2 = pul(phase[j].wrapping_add(phaseoff[j]));
            y1[j] = (pul1 - pul2) * scale[j] + 0.999 * y1[j];
            // SAFETY: lane j's own output, valid for the block.
            unsafe { *out[j].add(i) = y1[j] };
            phase[j] = phase[j].wrapping_add(freq[j]);
            phaseoff[j] = phaseoff[j].wrapping_add(phaseoff_slope[j]);
        }
    }
    store_pulse_lanes(&units[..m], &phase, &y1);
}

fn store_pulse_lanes(units: &[*mut Pulse], phase: &[i32], y1: &[f32]) {
    for (j, &unit) in units.iter().enumerate() {
        // SAFETY: distinct units borrowed through `lanes`; no other
        // reference to them is live here.
        let pulse = unsafe { &mut *unit };
        pulse.phase = phase[j];
        pulse.y1 = y1[j];
    }
}

/// Blip: band-limited impulse train with a chosen number of harmonics.
pub struct Blip {
    phase: i32,
    numharm: i32,
    n: i32,
    freqin: f32,
    scale: f32,
    cpstoinc: f64,
}

impl Blip {
    fn calc(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let t = sine_tables();
        let freqin = io.in0(0);
        let numharm = f2i(io.in0(1));
        let sr = cx.rate.sample_rate;
        let (freq, n, scale, prev_n, prev_scale, crossfade);
        if numharm != self.numharm || freqin != self.freqin {
            let mut nn = numharm;
            let max_n = d2i((sr * 0.5) / freqin as f64);
            if nn > max_n {
                nn = max_n;
                freq = d2i(self.cpstoinc * sc_max(self.freqin, freqin) as f64);
            } else {
                if nn < 1 {
                    nn = 1;
                }
                freq = d2i(self.cpstoinc * freqin as f64);
            }
            n = nn;
            crossfade = n != self.n;
            prev_n = self.n;
            prev_scale = self.scale;
            scale = (0.5 / n as f64) as f32;
            self.n = n;
            self.scale = scale;
        } else {
            n = self.n;
            freq = d2i(self.cpstoinc * freqin as f64);
            scale = self.scale;
            prev_n = n;
            prev_scale = scale;
            crossfade = false;
        }
        let n2 = n.wrapping_mul(2).wrapping_add(1);
        let mut phase = self.phase;
        let out = io.out(0);
        if crossfade {
            let pn2 = prev_n.wrapping_mul(2).wrapping_add(1);
            let xfade_slope = cx.rate.slope_factor as f32;
            let mut xfade = 0.0f32;
            for o in out.iter_mut() {
                *o = match dsf_denom(t, phase) {
                    None => 1.0,
                    Some(d) => dsf_xfade(t, phase, d, (pn2, n2), (prev_scale, scale), xfade),
                };
                phase = phase.wrapping_add(freq);
                xfade += xfade_slope;
            }
        } else {
            for o in out.iter_mut() {
                *o = match dsf_denom(t, phase) {
                    None => 1.0,
                    Some(d) => (dsf_ratio(t, phase, n2, d) - 1.0) * scale,
                };
                phase = phase.wrapping_add(freq);
            }
        }
        self.phase = phase;
        self.freqin = freqin;
        self.numharm = numharm;
    }
}

impl Construct for Blip {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let freqin = io.in0(0);
        let numharm = f2i(io.in0(1));
        let max_n = d2i((cx.rate.sample_rate * 0.5) / freqin as f64);
        let n = numharm.min(max_n).max(1);
        let scale = (0.5 / n as f64) as f32;
        let cpstoinc = SINE_SIZE as f64 * cx.rate.sample_dur * 65536.0 * 0.5;
        let mut u = Blip { phase: 0, numharm, n, freqin, scale, cpstoinc };
        u.calc(io, cx);
        u.n = n;
        u.scale = scale;
        u.phase = 0;
        u
    }
}

impl Unit for Blip {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.calc(io, cx);
    }
}

/// Formant: a windowed sine at the formant frequency, restarted every
/// cycle of the fundamental.
pub struct Formant {
    phase1: i32,
    phase2: i32,
    phase3: i32,
    cpstoinc: f64,
}

impl Formant {
    fn calc(&mut self, io: &mut Wires<'_>) {
        let sine = &sine_tables().sine;
        let cpstoinc = self.cpstoinc as f32;
        let freq1 = f2i(cpstoinc * io.in0(0));
        let freq2 = f2i(cpstoinc * io.in0(1));
        let freq3 = f2i(cpstoinc * io.in0(2));
        let formfreq = freq1.max(freq3);
        let (mut p1, mut p2, mut p3) = (self.phase1, self.phase2, self.phase3);
        let at = |p: i32| sine[((p as u32 >> 16) & SINE_MASK) as usize];
        for o in io.out(0).iter_mut() {
            if p3 < ONECYC13 {
                *o = (at(p3.wrapping_add(TQCYC13)) + 1.0) * at(p2);
                p3 = p3.wrapping_add(formfreq);
            } else {
                *o = 0.0;
            }
            p1 = p1.wrapping_add(freq1);
            p2 = p2.wrapping_add(freq2);
            if p1 > ONECYC13 {
                p1 -= ONECYC13;
                // freq1 cannot be zero here: the phase only passes a cycle by moving.
                p2 = p1.wrapping_mul(freq2).checked_div(freq1).unwrap_or(0);
                p3 = p1.wrapping_mul(freq3).checked_div(freq1).unwrap_or(0);
            }
        }
        self.phase1 = p1;
        self.phase2 = p2;
        self.phase3 = p3;
    }
}

impl Construct for Formant {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Formant { phase1: 0, phase2: 0, phase3: 0, cpstoinc: SINE_SIZE as f64 * cx.rate.sample_dur * 65536.0 };
        u.calc(io);
        u.phase1 = 0;
        u.phase2 = 0;
        u.phase3 = 0;
        u
    }
}

impl Unit for Formant {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.calc(io);
    }
}

// ---------------------------------------------------------------------------
// Low-frequency (aliasing) oscillators: a double-precision phase, frequency
// either audio-rate (per sample) or read once per block.

/// LFSaw: sawtooth from -1 to 1; `iphase` in 0..2.
pub struct LFSaw {
    phase: f64,
    freqmul: f32,
    audio: bool,
}

impl LFSaw {
    fn next_k(&mut self, io: &mut Wires<'_>) {
        let freq = io.in0(0) * self.freqmul;
        let mut phase = self.phase;
        let out = io.out(0);
        if freq >= 0.0 {
            for o in out.iter_mut() {
                *o = phase as f32;
                phase += freq as f64;
                if phase >= 1.0 {
                    phase -= 2.0;
                }
            }
        } else {
            for o in out.iter_mut() {
                *o = phase as f32;
                phase += freq as f64;
                if phase <= -1.0 {
                    phase += 2.0;
                }
            }
        }
        self.phase = phase;
    }

    fn next_a(&mut self, io: &mut Wires<'_>) {
        let freq = io.inp(0);
        let freqmul = self.freqmul;
        let mut phase = self.phase;
        for (o, &f) in io.out(0).iter_mut().zip(freq) {
            let z = phase as f32;
            phase += (f * freqmul) as f64;
            if phase >= 1.0 {
                phase -= 2.0;
            } else if phase <= -1.0 {
                phase += 2.0;
            }
            *o = z;
        }
        self.phase = phase;
    }
}

impl Construct for LFSaw {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LFSaw {
            phase: io.in0(1) as f64,
            freqmul: (2.0 * cx.rate.sample_dur) as f32,
            audio: io.in_rate(0) == Rate::Audio,
        };
        // scsynth 3.13 keeps the phase advanced by this first sample.
        u.next_k(io);
        u
    }
}

impl Unit for LFSaw {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

/// LFPulse: 0/1 pulse; the duty cycle changes only at the start of a cycle.
pub struct LFPulse {
    phase: f64,
    freqmul: f32,
    duty: f32,
    audio: bool,
}

impl LFPulse {
    #[inline(always)]
    fn step(phase: &mut f64, duty: &mut f32, next_duty: f32) -> f32 {
        if *phase >= 1.0 {
            *phase -= 1.0;
            *duty = next_duty;
            // At least one sample of the opposite level at each cycle start.
            if *duty <= 0.5 {
                1.0
            } else {
                0.0
            }
        } else if *phase < *duty as f64 {
            1.0
        } else {
            0.0
        }
    }

    fn next_k(&mut self, io: &mut Wires<'_>) {
        let freq = io.in0(0) * self.freqmul;
        let next_duty = io.in0(2);
        let (mut phase, mut duty) = (self.phase, self.duty);
        for o in io.out(0).iter_mut() {
            let z = Self::step(&mut phase, &mut duty, next_duty);
            phase += freq as f64;
            *o = z;
        }
        self.phase = phase;
        self.duty = duty;
    }

    fn next_a(&mut self, io: &mut Wires<'_>) {
        let freq = io.inp(0);
        let next_duty = io.in0(2);
        let freqmul = self.freqmul;
        let (mut phase, mut duty) = (self.phase, self.duty);
        for (o, &f) in io.out(0).iter_mut().zip(freq) {
            let z = Self::step(&mut phase, &mut duty, next_duty);
            phase += (f * freqmul) as f64;
            *o = z;
        }
        self.phase = phase;
        self.duty = duty;
    }
}

impl Construct for LFPulse {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LFPulse {
            phase: io.in0(1) as f64,
            freqmul: cx.rate.sample_dur as f32,
            duty: io.in0(2),
            audio: io.in_rate(0) == Rate::Audio,
        };
        u.next_k(io);
        u
    }
}

impl Unit for LFPulse {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

/// LFTri: triangle from -1 to 1; `iphase` in 0..4.
pub struct LFTri {
    phase: f64,
    freqmul: f32,
    audio: bool,
}

impl LFTri {
    #[inline(always)]
    fn step(phase: &mut f64, inc: f32) -> f32 {
        let z = if *phase > 1.0 { (2.0 - *phase) as f32 } else { *phase as f32 };
        *phase += inc as f64;
        if *phase >= 3.0 {
            *phase -= 4.0;
        }
        z
    }

    fn next_k(&mut self, io: &mut Wires<'_>) {
        let freq = io.in0(0) * self.freqmul;
        let mut phase = self.phase;
        for o in io.out(0).iter_mut() {
            *o = Self::step(&mut phase, freq);
        }
        self.phase = phase;
    }

    fn next_a(&mut self, io: &mut Wires<'_>) {
        let freq = io.inp(0);
        let freqmul = self.freqmul;
        let mut phase = self.phase;
        for (o, &f) in io.out(0).iter_mut().zip(freq) {
            *o = Self::step(&mut phase, f * freqmul);
        }
        self.phase = phase;
    }
}

impl Construct for LFTri {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LFTri {
            phase: io.in0(1) as f64,
            freqmul: (4.0 * cx.rate.sample_dur) as f32,
            audio: io.in_rate(0) == Rate::Audio,
        };
        u.next_k(io);
        u
    }
}

impl Unit for LFTri {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

/// LFSaw, LFPulse and LFTri: a double phase advanced by `freq * freqmul`
/// per sample, a control-rate or an audio-rate frequency.
trait LfPhase: Unit {
    /// The phase, `freqmul`, and whether the frequency is an audio input.
    fn parts(&mut self) -> (&mut f64, f32, bool);
    /// The unit's own block.
    fn run_alone(&mut self, io: &mut Wires<'_>);
}

impl LfPhase for LFSaw {
    fn parts(&mut self) -> (&mut f64, f32, bool) {
        (&mut self.phase, self.freqmul, self.audio)
    }

    fn run_alone(&mut self, io: &mut Wires<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

impl LfPhase for LFPulse {
    fn parts(&mut self) -> (&mut f64, f32, bool) {
        (&mut self.phase, self.freqmul, self.audio)
    }

    fn run_alone(&mut self, io: &mut Wires<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

impl LfPhase for LFTri {
    fn parts(&mut self) -> (&mut f64, f32, bool) {
        (&mut self.phase, self.freqmul, self.audio)
    }

    fn run_alone(&mut self, io: &mut Wires<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

/// The lanes of one frequency rate of an LF shape's lane kernel, gathered
/// for the vector kernel.
#[cfg(target_arch = "x86_64")]
struct LfGathered<U> {
    units: [*mut U; MAX_LANES],
    phase: [f64; MAX_LANES],
    inc: [f64; MAX_LANES],
    freqmul: [f32; MAX_LANES],
    freq: [*const f32; MAX_LANES],
    out: [*mut f32; MAX_LANES],
    m: usize,
    n: usize,
}

#[cfg(target_arch = "x86_64")]
impl<U> LfGathered<U> {
    fn lanes(&mut self) -> lanes_x8::LfLanes<'_> {
        lanes_x8::LfLanes { phase: &mut self.phase, inc: &self.inc, freqmul: &self.freqmul, freq: &self.freq, out: &self.out }
    }
}

#[cfg(target_arch = "x86_64")]
impl<U: LfPhase> LfGathered<U> {
    /// The lanes whose frequency is (`audio`) or is not an audio input,
    /// with the block-start arithmetic of the unit's own block: a
    /// control-rate increment is `(freq * freqmul) as f64`. `extra` gathers
    /// a unit's other state into lane j.
    ///
    /// # Safety
    /// `units[l]` and `ios[l]` are distinct live units and their own wires,
    /// used through nothing else during the call.
    unsafe fn new(units: &[*mut U], ios: &[*mut Wires<'_>], audio: bool, mut extra: impl FnMut(usize, &mut U, &Wires<'_>)) -> Self {
        let mut g = LfGathered {
            units: [std::ptr::null_mut(); MAX_LANES],
            phase: [0.0; MAX_LANES],
            inc: [0.0; MAX_LANES],
            freqmul: [0.0; MAX_LANES],
            freq: [std::ptr::null(); MAX_LANES],
            out: [std::ptr::null_mut(); MAX_LANES],
            m: 0,
            n: 0,
        };
        for (&u, &w) in units.iter().zip(ios) {
            // SAFETY: the caller's contract.
            let (unit, io) = unsafe { (&mut *u, &mut *w) };
            let (phase, freqmul, unit_audio) = unit.parts();
            if unit_audio != audio {
                continue;
            }
            let j = g.m;
            g.phase[j] = *phase;
            g.freqmul[j] = freqmul;
            g.inc[j] = (io.in0(0) * freqmul) as f64;
            g.freq[j] = io.inp(0).as_ptr();
            g.out[j] = io.out_ptr(0);
            g.n = io.n();
            extra(j, unit, io);
            g.units[j] = unit;
            g.m += 1;
        }
        g
    }

    /// Writes each lane's phase back to its unit, and `extra`'s state.
    ///
    /// # Safety
    /// As for `new`, with the same units.
    unsafe fn store(&self, mut extra: impl FnMut(usize, &mut U)) {
        for (j, &u) in self.units[..self.m].iter().enumerate() {
            // SAFETY: the caller's contract; no other reference to the unit
            // is live here.
            let unit = unsafe { &mut *u };
            *unit.parts().0 = self.phase[j];
            extra(j, unit);
        }
    }
}

/// The frequency rates among the lanes: control first, then audio (`true`).
///
/// # Safety
/// Each `units[l]` is live and used through nothing else during the call.
#[cfg(target_arch = "x86_64")]
unsafe fn lf_rates<U: LfPhase>(units: &[*mut U]) -> impl Iterator<Item = bool> {
    let (mut control, mut audio) = (false, false);
    for &u in units {
        // SAFETY: the caller's contract.
        let a = unsafe { (*u).parts().2 };
        control |= !a;
        audio |= a;
    }
    [(false, control), (true, audio)].into_iter().filter(|&(_, any)| any).map(|(a, _)| a)
}

/// Runs each lane's own block: the lane kernels' path without the vector
/// instructions.
///
/// # Safety
/// As for `LfGathered::new`.
unsafe fn lf_alone<U: LfPhase>(units: &[*mut U], ios: &[*mut Wires<'_>]) {
    for (&u, &w) in units.iter().zip(ios) {
        // SAFETY: the caller's contract.
        unsafe { (*u).run_alone(&mut *w) };
    }
}

/// A vector kernel of an LF oscillator's lanes (`lanes_x8`).
#[cfg(target_arch = "x86_64")]
type LfKernel = unsafe fn(lanes_x8::LfLanes<'_>, usize, usize);

/// The lanes of an LF oscillator whose kernel needs nothing of a unit but
/// its phase and frequency (LFSaw, LFTri): the vector kernel for control-
/// and for audio-rate frequency, or each unit alone.
///
/// # Safety
/// As for `lfsaw_run`; the kernels are the units' own.
#[cfg(target_arch = "x86_64")]
unsafe fn lf_plain_run<U: LfPhase>(
    units: &[*mut U],
    ios: &[*mut Wires<'_>],
    control: LfKernel,
    audio_freq: LfKernel,
) {
    // SAFETY: the caller's contract.
    if unsafe { vector_worthwhile(ios) } {
        // SAFETY: the caller's contract.
        for audio in unsafe { lf_rates(units) } {
            // SAFETY: the caller's contract.
            let mut g = unsafe { LfGathered::new(units, ios, audio, |_, _, _| {}) };
            if g.m == 0 {
                continue;
            }
            let (m, n) = (g.m, g.n);
            let kernel = if audio { audio_freq } else { control };
            // SAFETY: AVX2 is present; out[j] is lane j's own output and
            // freq[j] its frequency input, valid for n samples.
            unsafe { kernel(g.lanes(), m, n) };
            // SAFETY: as for `new`.
            unsafe { g.store(|_, _| {}) };
        }
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { lf_alone(units, ios) };
}

impl crate::batch::LaneUnit for LFSaw {
    const KERNEL: crate::unit::LaneKernel = lfsaw_lanes;

    unsafe fn typed_kernel(units: &[*mut Self; MAX_LANES], lanes: &mut Lanes<'_>, _rate: &RateInfo) {
        let Some(ios) = lane_wires(lanes) else { return };
        // SAFETY: the caller's contract: distinct, live, unaliased units,
        // and lane l's wires are unit l's.
        unsafe { lfsaw_run(&units[..lanes.len], &ios[..lanes.len]) };
    }
}

/// The same LFSaw step of several synths: lanes of one frequency rate side
/// by side, each with exactly the arithmetic of its own block.
pub(crate) fn lfsaw_lanes(lanes: &mut Lanes<'_>, _rate: &RateInfo) {
    let Some((units, ios)) = typed_lanes::<LFSaw>(lanes) else { return };
    // SAFETY: distinct live units and their own wires, borrowed through
    // `lanes` for the call.
    unsafe { lfsaw_run(&units[..lanes.len], &ios[..lanes.len]) };
}

/// `lfsaw_lanes` on lanes already found to be LFSaws.
///
/// # Safety
/// `units[l]` and `ios[l]` are distinct live units and their own wires,
/// used through nothing else during the call.
unsafe fn lfsaw_run(units: &[*mut LFSaw], ios: &[*mut Wires<'_>]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract; the kernels are LFSaw's.
    unsafe {
        lf_plain_run(units, ios, lanes_x8::lfsaw::<false>, lanes_x8::lfsaw::<true>)
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        lf_alone(units, ios)
    };
}

impl crate::batch::LaneUnit for LFPulse {
    const KERNEL: crate::unit::LaneKernel = lfpulse_lanes;

    unsafe fn typed_kernel(units: &[*mut Self; MAX_LANES], lanes: &mut Lanes<'_>, _rate: &RateInfo) {
        let Some(ios) = lane_wires(lanes) else { return };
        // SAFETY: the caller's contract: distinct, live, unaliased units,
        // and lane l's wires are unit l's.
        unsafe { lfpulse_run(&units[..lanes.len], &ios[..lanes.len]) };
    }
}

/// The same LFPulse step of several synths, side by side as in `lfsaw_lanes`.
pub(crate) fn lfpulse_lanes(lanes: &mut Lanes<'_>, _rate: &RateInfo) {
    let Some((units, ios)) = typed_lanes::<LFPulse>(lanes) else { return };
    // SAFETY: distinct live units and their own wires, borrowed through
    // `lanes` for the call.
    unsafe { lfpulse_run(&units[..lanes.len], &ios[..lanes.len]) };
}

/// `lfpulse_lanes` on lanes already found to be LFPulses.
///
/// # Safety
/// `units[l]` and `ios[l]` are distinct live units and their own wires,
/// used through nothing else during the call.
unsafe fn lfpulse_run(units: &[*mut LFPulse], ios: &[*mut Wires<'_>]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract.
    if unsafe { vector_worthwhile(ios) } {
        // SAFETY: the caller's contract.
        for audio in unsafe { lf_rates(units) } {
            let (mut duty, mut next_duty) = ([0f64; MAX_LANES], [0f64; MAX_LANES]);
            let extra = |j: usize, unit: &mut LFPulse, io: &Wires<'_>| {
                duty[j] = unit.duty as f64;
                next_duty[j] = io.in0(2) as f64;
            };
            // SAFETY: the caller's contract.
            let mut g = unsafe { LfGathered::new(units, ios, audio, extra) };
            if g.m == 0 {
                continue;
            }
            let (m, n) = (g.m, g.n);
            // SAFETY: AVX2 is present; out[j] is lane j's own output and
            // freq[j] its frequency input, valid for n samples.
            unsafe {
                if audio {
                    lanes_x8::lfpulse::<true>(g.lanes(), &mut duty, &next_duty, m, n)
                } else {
                    lanes_x8::lfpulse::<false>(g.lanes(), &mut duty, &next_duty, m, n)
                }
            }
            // The duty cycles were widened from floats, so narrowing is exact.
            // SAFETY: as for `new`.
            unsafe { g.store(|j, unit| unit.duty = duty[j] as f32) };
        }
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { lf_alone(units, ios) };
}

impl crate::batch::LaneUnit for LFTri {
    const KERNEL: crate::unit::LaneKernel = lftri_lanes;

    unsafe fn typed_kernel(units: &[*mut Self; MAX_LANES], lanes: &mut Lanes<'_>, _rate: &RateInfo) {
        let Some(ios) = lane_wires(lanes) else { return };
        // SAFETY: the caller's contract: distinct, live, unaliased units,
        // and lane l's wires are unit l's.
        unsafe { lftri_run(&units[..lanes.len], &ios[..lanes.len]) };
    }
}

/// The same LFTri step of several synths, side by side as in `lfsaw_lanes`.
pub(crate) fn lftri_lanes(lanes: &mut Lanes<'_>, _rate: &RateInfo) {
    let Some((units, ios)) = typed_lanes::<LFTri>(lanes) else { return };
    // SAFETY: distinct live units and their own wires, borrowed through
    // `lanes` for the call.
    unsafe { lftri_run(&units[..lanes.len], &ios[..lanes.len]) };
}

/// `lftri_lanes` on lanes already found to be LFTris.
///
/// # Safety
/// `units[l]` and `ios[l]` are distinct live units and their own wires,
/// used through nothing else during the call.
unsafe fn lftri_run(units: &[*mut LFTri], ios: &[*mut Wires<'_>]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract; the kernels are LFTri's.
    unsafe {
        lf_plain_run(units, ios, lanes_x8::lftri::<false>, lanes_x8::lftri::<true>)
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        lf_alone(units, ios)
    };
}

/// LFPar: parabolic (sine-like) wave; `iphase` in 0..4.
pub struct LFPar {
    phase: f64,
    freqmul: f32,
    audio: bool,
}

impl LFPar {
    #[inline(always)]
    fn shape(phase: &mut f64) -> f32 {
        if *phase < 1.0 {
            let z = *phase as f32;
            1.0 - z * z
        } else if *phase < 3.0 {
            let z = (*phase - 2.0) as f32;
            z * z - 1.0
        } else {
            *phase -= 4.0;
            let z = *phase as f32;
            1.0 - z * z
        }
    }

    fn next_k(&mut self, io: &mut Wires<'_>) {
        let freq = io.in0(0) * self.freqmul;
        let mut phase = self.phase;
        for o in io.out(0).iter_mut() {
            *o = Self::shape(&mut phase);
            phase += freq as f64;
        }
        self.phase = phase;
    }

    fn next_a(&mut self, io: &mut Wires<'_>) {
        let freq = io.inp(0);
        let freqmul = self.freqmul;
        let mut phase = self.phase;
        for (o, &f) in io.out(0).iter_mut().zip(freq) {
            let y = Self::shape(&mut phase);
            phase += (f * freqmul) as f64;
            *o = y;
        }
        self.phase = phase;
    }
}

impl Construct for LFPar {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LFPar {
            phase: io.in0(1) as f64,
            freqmul: (4.0 * cx.rate.sample_dur) as f32,
            audio: io.in_rate(0) == Rate::Audio,
        };
        u.next_k(io);
        u
    }
}

impl Unit for LFPar {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

/// LFCub: cubic (sine-like) wave; `iphase` in 0..2.
pub struct LFCub {
    phase: f64,
    freqmul: f32,
    audio: bool,
}

impl LFCub {
    #[inline(always)]
    fn shape(phase: &mut f64) -> f32 {
        let z = if *phase < 1.0 {
            *phase as f32
        } else if *phase < 2.0 {
            (2.0 - *phase) as f32
        } else {
            *phase -= 2.0;
            *phase as f32
        };
        z * z * (6.0 - 4.0 * z) - 1.0
    }

    fn next_k(&mut self, io: &mut Wires<'_>) {
        let freq = io.in0(0) * self.freqmul;
        let mut phase = self.phase;
        for o in io.out(0).iter_mut() {
            *o = Self::shape(&mut phase);
            phase += freq as f64;
        }
        self.phase = phase;
    }

    fn next_a(&mut self, io: &mut Wires<'_>) {
        let freq = io.inp(0);
        let freqmul = self.freqmul;
        let mut phase = self.phase;
        for (o, &f) in io.out(0).iter_mut().zip(freq) {
            // The phase advances before the shape is evaluated from `z`.
            let z = if phase < 1.0 {
                phase as f32
            } else if phase < 2.0 {
                (2.0 - phase) as f32
            } else {
                phase -= 2.0;
                phase as f32
            };
            phase += (f * freqmul) as f64;
            *o = z * z * (6.0 - 4.0 * z) - 1.0;
        }
        self.phase = phase;
    }
}

impl Construct for LFCub {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LFCub {
            phase: io.in0(1) as f64 + 0.5,
            freqmul: (2.0 * cx.rate.sample_dur) as f32,
            audio: io.in_rate(0) == Rate::Audio,
        };
        u.next_k(io);
        u
    }
}

impl Unit for LFCub {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.audio {
            self.next_a(io)
        } else {
            self.next_k(io)
        }
    }
}

/// VarSaw: triangle-to-sawtooth with variable rise/fall ratio (`width`),
/// which changes only at cycle starts.
pub struct VarSaw {
    phase: f64,
    freqmul: f32,
    duty: f32,
    inv_duty: f32,
    inv_1duty: f32,
    audio: bool,
}

impl VarSaw {
    fn set_duty(&mut self, duty: f32) {
        self.duty = sc_clip(duty, 0.001, 0.999);
        self.inv_duty = 2.0 / self.duty;
        self.inv_1duty = 2.0 / (1.0 - self.duty);
    }

    /// One sample; a new width is taken only when a cycle starts.
    #[inline(always)]
    fn step(&mut self, phase: &mut f64, next_duty: f32) -> f32 {
        if *phase >= 1.0 {
            *phase -= 1.0;
            self.set_duty(next_duty);
        }
        if *phase < self.duty as f64 {
            (*phase * self.inv_duty as f64) as f32
        } else {
            ((1.0 - *phase) * self.inv_1duty as f64) as f32
        }
    }
}

impl Construct for VarSaw {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = VarSaw {
            phase: io.in0(1) as f64,
            freqmul: cx.rate.sample_dur as f32,
            duty: 0.0,
            inv_duty: 0.0,
            inv_1duty: 0.0,
            audio: io.in_rate(0) == Rate::Audio,
        };
        u.set_duty(io.in0(2));
        io.out(0)[0] = 0.0;
        u
    }
}

impl Unit for VarSaw {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let next_duty = io.in0(2);
        let mut phase = self.phase;
        if self.audio {
            let (freq, freqmul) = (io.inp(0), self.freqmul);
            for (o, &f) in io.out(0).iter_mut().zip(freq) {
                let z = self.step(&mut phase, next_duty);
                phase += (f * freqmul) as f64;
                *o = z - 1.0;
            }
        } else {
            let inc = (io.in0(0) * self.freqmul) as f64;
            for o in io.out(0).iter_mut() {
                let z = self.step(&mut phase, next_duty);
                phase += inc;
                *o = z - 1.0;
            }
        }
        self.phase = phase;
    }
}

/// SyncSaw: a sawtooth at `sawFreq` hard-synced to `syncFreq`.
pub struct SyncSaw {
    phase1: f64,
    phase2: f64,
    freqmul: f32,
}

impl SyncSaw {
    #[inline(always)]
    fn step(p1: &mut f64, p2: &mut f64, freq1x: f32, freq2x: f32) -> f32 {
        let z = *p2 as f32;
        *p2 += freq2x as f64;
        if *p2 >= 1.0 {
            *p2 -= 2.0;
        }
        *p1 += freq1x as f64;
        if *p1 >= 1.0 {
            *p1 -= 2.0;
            *p2 = (*p1 + 1.0) * freq2x as f64 / freq1x as f64 - 1.0;
        }
        z
    }

    fn run(&mut self, io: &mut Wires<'_>) {
        let (f1, f2) = (io.inp(0), io.inp(1));
        let m = self.freqmul;
        let (mut p1, mut p2) = (self.phase1, self.phase2);
        let out = io.out(0);
        match (f1.len() > 1, f2.len() > 1) {
            (true, true) => {
                for ((o, &a), &b) in out.iter_mut().zip(f1).zip(f2) {
                    *o = Self::step(&mut p1, &mut p2, a * m, b * m);
                }
            }
            (true, false) => {
                let b = f2[0] * m;
                for (o, &a) in out.iter_mut().zip(f1) {
                    *o = Self::step(&mut p1, &mut p2, a * m, b);
                }
            }
            (false, true) => {
                let a = f1[0] * m;
                for (o, &b) in out.iter_mut().zip(f2) {
                    *o = Self::step(&mut p1, &mut p2, a, b * m);
                }
            }
            (false, false) => {
                let (a, b) = (f1[0] * m, f2[0] * m);
                for o in out.iter_mut() {
                    *o = Self::step(&mut p1, &mut p2, a, b);
                }
            }
        }
        self.phase1 = p1;
        self.phase2 = p2;
    }
}

impl Construct for SyncSaw {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = SyncSaw { phase1: 0.0, phase2: 0.0, freqmul: (2.0 * cx.rate.sample_dur) as f32 };
        let m = u.freqmul;
        let (a, b) = (io.in0(0) * m, io.in0(1) * m);
        let z = SyncSaw::step(&mut u.phase1, &mut u.phase2, a, b);
        io.out(0)[0] = z;
        u
    }
}

impl Unit for SyncSaw {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.run(io);
    }
}

// ---------------------------------------------------------------------------
// Impulse

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ImpulseMode {
    Aa,
    Ak,
    Ai,
    Kk,
    Ki,
    Ik,
    Ii,
}

/// Impulse: a single-sample 1 each time a wrapping phasor passes 1 (0 for
/// negative frequencies). Changing the phase offset moves the phasor
/// without firing.
pub struct Impulse {
    phase: f64,
    offset: f64,
    inc: f64,
    freqmul: f32,
    mode: ImpulseMode,
}

/// Wraps the phasor into [0, 1) after a step in the direction of `inc`;
/// returns 1 when it wrapped.
#[inline(always)]
fn impulse_wrap(inc: f64, phase: &mut f64) -> f32 {
    if inc < 0.0 {
        if *phase <= 0.0 {
            *phase += 1.0;
            if *phase <= 0.0 {
                *phase -= phase.ceil();
            }
            1.0
        } else {
            0.0
        }
    } else if *phase >= 1.0 {
        *phase -= 1.0;
        if *phase >= 1.0 {
            *phase -= phase.floor();
        }
        1.0
    } else {
        0.0
    }
}


impl Impulse {
    fn calc(&mut self, io: &mut Wires<'_>, sf: f64) {
        let mut phase = self.phase;
        match self.mode {
            ImpulseMode::Ii => {
                let inc = self.inc;
                for o in io.out(0).iter_mut() {
                    *o = impulse_wrap(inc, &mut phase);
                    phase += inc;
                }
            }
            ImpulseMode::Ik => {
                let inc = self.inc;
                let off = io.in0(1) as f64;
                let slope = (off - self.offset) * sf;
                let out = io.out(0);
                if slope != 0.0 {
                    for o in out.iter_mut() {
                        *o = impulse_wrap(inc, &mut phase);
                        phase += slope;
                        impulse_wrap(inc, &mut phase);
                        phase += inc;
                    }
                } else {
                    for o in out.iter_mut() {
                        *o = impulse_wrap(inc, &mut phase);
                        phase += inc;
                    }
                }
                self.offset = off;
            }
            ImpulseMode::Ki | ImpulseMode::Kk => {
                let mut prev_inc = self.inc;
                let inc = (io.in0(0) * self.freqmul) as f64;
                let inc_slope = (inc - prev_inc) * sf;
                let off = if self.mode == ImpulseMode::Kk { io.in0(1) as f64 } else { self.offset };
                let slope = (off - self.offset) * sf;
                let out = io.out(0);
                if slope != 0.0 {
                    for o in out.iter_mut() {
                        *o = impulse_wrap(prev_inc, &mut phase);
                        phase += slope;
                        impulse_wrap(prev_inc, &mut phase);
                        prev_inc += inc_slope;
                        phase += prev_inc;
                    }
                } else {
                    for o in out.iter_mut() {
                        *o = impulse_wrap(prev_inc, &mut phase);
                        prev_inc += inc_slope;
                        phase += prev_inc;
                    }
                }
                self.offset = off;
                self.inc = inc;
            }
            ImpulseMode::Ak | ImpulseMode::Ai => {
                let mut inc = self.inc;
                let freq = io.inp(0);
                let freqmul = self.freqmul;
                let off = if self.mode == ImpulseMode::Ak { io.in0(1) as f64 } else { self.offset };
                let slope = (off - self.offset) * sf;
                let out = io.out(0);
                if slope != 0.0 {
                    for (o, &f) in out.iter_mut().zip(freq) {
                        let z = impulse_wrap(inc, &mut phase);
                        phase += slope;
                        impulse_wrap(inc, &mut phase);
                        inc = (f * freqmul) as f64;
                        *o = z;
                        phase += inc;
                    }
                } else {
                    for (o, &f) in out.iter_mut().zip(freq) {
                        let z = impulse_wrap(inc, &mut phase);
                        inc = (f * freqmul) as f64;
                        *o = z;
                        phase += inc;
                    }
                }
                self.offset = off;
                self.inc = inc;
            }
            ImpulseMode::Aa => {
                let mut inc = self.inc;
                let (freq, offs) = (io.inp(0), io.inp(1));
                let freqmul = self.freqmul;
                let mut prev_off = self.offset;
                for ((o, &f), &off) in io.out(0).iter_mut().zip(freq).zip(offs) {
                    let z = impulse_wrap(inc, &mut phase);
                    let off_inc = (off as f64 - prev_off) as f32;
                    phase += off_inc as f64;
                    impulse_wrap(inc, &mut phase);
                    inc = (f * freqmul) as f64;
                    *o = z;
                    phase += inc;
                    prev_off = off as f64;
                }
                self.offset = prev_off;
                self.inc = inc;
            }
        }
        self.phase = phase;
    }
}

impl crate::batch::LaneUnit for Impulse {
    const KERNEL: crate::unit::LaneKernel = impulse_lanes;

    unsafe fn typed_kernel(units: &[*mut Self; MAX_LANES], lanes: &mut Lanes<'_>, rate: &RateInfo) {
        let Some(ios) = lane_wires(lanes) else { return };
        // SAFETY: the caller's contract: distinct, live, unaliased units,
        // and lane l's wires are unit l's.
        unsafe { impulse_run(&units[..lanes.len], &ios[..lanes.len], rate) };
    }
}

/// The same Impulse step of several synths: lanes whose phase offset holds
/// this block run side by side, by how their increment moves, each with
/// exactly the arithmetic of its own block; a lane whose offset moves (or
/// with both inputs at audio rate) runs alone.
pub(crate) fn impulse_lanes(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let Some((units, ios)) = typed_lanes::<Impulse>(lanes) else { return };
    // SAFETY: distinct live units and their own wires, borrowed through
    // `lanes` for the call.
    unsafe { impulse_run(&units[..lanes.len], &ios[..lanes.len], rate) };
}

/// `impulse_lanes` on lanes already found to be Impulses.
///
/// # Safety
/// `units[l]` and `ios[l]` are distinct live units and their own wires,
/// used through nothing else during the call.
unsafe fn impulse_run(units: &[*mut Impulse], ios: &[*mut Wires<'_>], rate: &RateInfo) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract.
    if unsafe { vector_worthwhile(ios) } {
        use lanes_x8::{INC_AUDIO, INC_HELD, INC_RAMP};
        // SAFETY: AVX2 is present; the caller's contract (for every call).
        unsafe {
            impulse_group::<INC_HELD>(units, ios, rate);
            impulse_group::<INC_RAMP>(units, ios, rate);
            impulse_group::<INC_AUDIO>(units, ios, rate);
        }
        return;
    }
    for (&u, &w) in units.iter().zip(ios) {
        // SAFETY: the caller's contract.
        unsafe { (*u).calc(&mut *w, rate.slope_factor) };
    }
}

/// Runs the lanes whose increment moves as `INC` says (see
/// `lanes_x8::INC_HELD`) in the vector kernel, after the block-start
/// arithmetic of `Impulse::calc` in their mode; lanes of that kind whose
/// phase offset moves this block run alone (`Aa` lanes run alone with the
/// held ones).
///
/// # Safety
/// The CPU has AVX2; as for `impulse_run`.
#[cfg(target_arch = "x86_64")]
unsafe fn impulse_group<const INC: u8>(units: &[*mut Impulse], ios: &[*mut Wires<'_>], rate: &RateInfo) {
    use lanes_x8::{INC_AUDIO, INC_HELD, INC_RAMP};
    let sf = rate.slope_factor;
    let mut g = LfGathered::<Impulse> {
        units: [std::ptr::null_mut(); MAX_LANES],
        phase: [0.0; MAX_LANES],
        inc: [0.0; MAX_LANES],
        freqmul: [0.0; MAX_LANES],
        freq: [std::ptr::null(); MAX_LANES],
        out: [std::ptr::null_mut(); MAX_LANES],
        m: 0,
        n: 0,
    };
    let mut inc_slope = [0f64; MAX_LANES];
    // The increment each lane's unit keeps after a ramp: its target.
    let mut inc_after = [0f64; MAX_LANES];
    for (&u, &w) in units.iter().zip(ios) {
        // SAFETY: the caller's contract.
        let (unit, io) = unsafe { (&mut *u, &mut *w) };
        let kind = match unit.mode {
            ImpulseMode::Ii | ImpulseMode::Ik | ImpulseMode::Aa => INC_HELD,
            ImpulseMode::Kk | ImpulseMode::Ki => INC_RAMP,
            ImpulseMode::Ak | ImpulseMode::Ai => INC_AUDIO,
        };
        if kind != INC {
            continue;
        }
        let off = match unit.mode {
            ImpulseMode::Ik | ImpulseMode::Kk | ImpulseMode::Ak => io.in0(1) as f64,
            _ => unit.offset,
        };
        if unit.mode == ImpulseMode::Aa || (off - unit.offset) * sf != 0.0 {
            unit.calc(io, sf);
            continue;
        }
        let j = g.m;
        g.inc[j] = unit.inc;
        if INC == INC_RAMP {
            inc_after[j] = (io.in0(0) * unit.freqmul) as f64;
            inc_slope[j] = (inc_after[j] - unit.inc) * sf;
        }
        unit.offset = off;
        g.phase[j] = unit.phase;
        g.freqmul[j] = unit.freqmul;
        g.freq[j] = io.inp(0).as_ptr();
        g.out[j] = io.out_ptr(0);
        g.n = io.n();
        g.units[j] = unit;
        g.m += 1;
    }
    if g.m == 0 {
        return;
    }
    let (m, n) = (g.m, g.n);
    let mut inc = g.inc;
    // SAFETY: AVX2 is present; out[j] is lane j's own output and freq[j]
    // its frequency input, valid for n samples.
    unsafe { lanes_x8::impulse::<INC>(g.lanes(), &mut inc, &inc_slope, m, n) };
    for (j, &u) in g.units[..m].iter().enumerate() {
        // SAFETY: the caller's contract; no other reference to the unit is
        // live here.
        let unit = unsafe { &mut *u };
        unit.phase = g.phase[j];
        unit.inc = match INC {
            INC_HELD => unit.inc,
            INC_RAMP => inc_after[j],
            _ => inc[j],
        };
    }
}

impl Construct for Impulse {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let offset = io.in0(1) as f64;
        let freqmul = cx.rate.sample_dur as f32;
        let inc = (io.in0(0) * freqmul) as f64;
        let mut phase = crate::common::math::sc_wrap_f64(offset, 0.0, 1.0);
        // An offset of 0 fires on the very first sample.
        if phase == 0.0 && inc >= 0.0 {
            phase = 1.0;
        }
        let r1 = io.in_rate(1);
        let mode = match io.in_rate(0) {
            Rate::Audio => match r1 {
                Rate::Audio => ImpulseMode::Aa,
                Rate::Control => ImpulseMode::Ak,
                _ => ImpulseMode::Ai,
            },
            Rate::Control => {
                if r1 == Rate::Scalar {
                    ImpulseMode::Ki
                } else {
                    ImpulseMode::Kk
                }
            }
            _ => {
                if r1 == Rate::Scalar {
                    ImpulseMode::Ii
                } else {
                    ImpulseMode::Ik
                }
            }
        };
        let mut u = Impulse { phase, offset, inc, freqmul, mode };
        u.calc(io, cx.rate.slope_factor);
        u.phase = phase;
        u.offset = offset;
        u.inc = inc;
        u
    }
}

impl Unit for Impulse {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.calc(io, cx.rate.slope_factor);
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_more;

#[cfg(test)]
mod tests_lanes;

#[cfg(test)]
mod tests_kept;

#[cfg(test)]
mod tests_fsin;
