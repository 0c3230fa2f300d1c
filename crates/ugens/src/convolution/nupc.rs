//! Non-uniformly partitioned convolution (paper 003): the layout of the
//! partitions, the prepared impulse-response buffer, and the work of one
//! frequency-domain delay line (FDL).
//!
//! # Layout
//!
//! Level 0 cuts the head of the impulse response into partitions of one
//! block (`N`) and runs in the audio thread, with no latency. Each later
//! level `l` has partitions of `M_l = N·2^a` samples (larger than the last)
//! and runs as a task of period `k = M_l / N` blocks. A level's output for
//! input segment `j` (samples `jM .. (j+1)M`) is due `k` blocks after the
//! segment is complete (deadline = period), at sample `(j+2)M − N`; so the
//! level must start `2M − N` samples into the response. That fixes every
//! level's offset and every count but the last: level 0 holds `2M_1/N − 1`
//! partitions, level `l` in between `2(M_{l+1}/M_l − 1)`, the last what is
//! left. A layout is therefore just its list of sizes (see `nupc_tune`).
//!
//! # Prepared buffer
//!
//! `/b_gen dest "MagnetarConvPrepare" source [size ...]` writes a header
//! (magic, version, block size, response length, levels, then size, count
//! and offset per level) followed by every partition's spectrum: `M + 1`
//! real parts, then `M + 1` imaginary parts, of the partition zero-padded to
//! `2M`, scaled by `1/2M` (the inverse transform's factor).

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use std::sync::{Arc, OnceLock};
use magnetar_rt::fallible::filled;

use crate::world::SndBuf;

/// First value of a prepared buffer.
pub const MAGIC: f32 = 7_340_033.0;
pub const VERSION: f32 = 1.0;
/// Header values before the per-level triples.
const HEADER: usize = 5;
/// Largest partition (the transform is twice as long).
pub const MAX_PARTITION: usize = 65_536;
/// Most levels a layout may have.
pub const MAX_LEVELS: usize = 12;

/// One FDL: partitions of `size` samples, `count` of them, starting
/// `offset` samples into the impulse response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub size: usize,
    pub count: usize,
    pub offset: usize,
}

/// How an impulse response is cut into levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub block: usize,
    pub ir_len: usize,
    pub levels: Vec<Level>,
}

/// Why a layout or a prepared buffer is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NupcError {
    BadSizes(String),
    NotAllocated(usize),
    EmptyResponse(usize),
    BadBlock(usize),
}

impl std::fmt::Display for NupcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadSizes(s) => write!(f, "MagnetarConvPrepare: {s}"),
            Self::NotAllocated(b) => write!(f, "MagnetarConvPrepare: source buffer {b} is not allocated"),
            Self::EmptyResponse(b) => write!(f, "MagnetarConvPrepare: source buffer {b} holds no frames"),
            Self::BadBlock(n) => write!(f, "MagnetarConvPrepare: block size {n} is not a power of two"),
        }
    }
}

impl std::error::Error for NupcError {}

impl Layout {
    /// The layout with partition sizes `sizes` after level 0 (each a power
    /// of two, larger than the one before, up to [`MAX_PARTITION`]) for a
    /// response of `ir_len` samples at block size `block`. Levels the
    /// response does not reach are left out.
    pub fn from_sizes(block: usize, ir_len: usize, sizes: &[usize]) -> Result<Layout, NupcError> {
        if !block.is_power_of_two() {
            return Err(NupcError::BadBlock(block));
        }
        let mut all = vec![block];
        for &s in sizes {
            let last = *all.last().unwrap_or(&block);
            if !s.is_power_of_two() || s <= last || s > MAX_PARTITION {
                return Err(NupcError::BadSizes(format!(
                    "partition size {s} must be a power of two above {last} and at most {MAX_PARTITION}"
                )));
            }
            all.push(s);
        }
        if all.len() > MAX_LEVELS {
            return Err(NupcError::BadSizes(format!("at most {} partition sizes", MAX_LEVELS - 1)));
        }
        let ir_len = ir_len.max(1);
        let mut levels = Vec::with_capacity(all.len());
        let mut offset = 0;
        for (i, &m) in all.iter().enumerate() {
            let next = all.get(i + 1).map(|&m2| 2 * m2 - block);
            let count = match next {
                Some(end) if end < ir_len => (end - offset) / m,
                _ => (ir_len - offset).div_ceil(m),
            };
            levels.push(Level { size: m, count, offset });
            offset += count * m;
            if offset >= ir_len {
                break;
            }
        }
        Ok(Layout { block, ir_len, levels })
    }

    /// The sizes after level 0 (what [`Layout::from_sizes`] takes).
    pub fn sizes(&self) -> Vec<usize> {
        self.levels.iter().skip(1).map(|l| l.size).collect()
    }

    /// Floats a prepared buffer of this layout holds.
    pub fn buffer_len(&self) -> usize {
        HEADER + 3 * self.levels.len() + self.levels.iter().map(|l| l.count * (2 * l.size + 2)).sum::<usize>()
    }

    /// Reads the header of a prepared buffer; None if it is not one.
    pub fn read(data: &[f32]) -> Option<Layout> {
        let int = |i: usize| -> Option<usize> {
            let v = *data.get(i)?;
            (v >= 0.0 && v.fract() == 0.0 && v < 16_777_216.0).then_some(v as usize)
        };
        if data.first() != Some(&MAGIC) || data.get(1) != Some(&VERSION) {
            return None;
        }
        let block = int(2)?;
        let ir_len = int(3)?;
        let n = int(4)?;
        if n == 0 || n > MAX_LEVELS || !block.is_power_of_two() {
            return None;
        }
        let mut levels = Vec::with_capacity(n);
        for l in 0..n {
            let (size, count, offset) = (int(HEADER + 3 * l)?, int(HEADER + 3 * l + 1)?, int(HEADER + 3 * l + 2)?);
            if !size.is_power_of_two() || size < block || size > MAX_PARTITION || count == 0 {
                return None;
            }
            levels.push(Level { size, count, offset });
        }
        let layout = Layout { block, ir_len, levels };
        // The sizes must give back the same offsets and counts, and the spectra must be there.
        let again = Layout::from_sizes(block, ir_len, &layout.sizes()).ok()?;
        (again == layout && data.len() >= layout.buffer_len()).then_some(layout)
    }

    /// Where level `l`'s spectra start in a prepared buffer.
    pub fn spectra_at(&self, l: usize) -> usize {
        HEADER
            + 3 * self.levels.len()
            + self.levels[..l].iter().map(|v| v.count * (2 * v.size + 2)).sum::<usize>()
    }
}

/// One transform pair of `2M` points: planned once per partition size, off
/// the audio thread, and shared by every level of that size in every
/// instance (a plan holds only tables; running it needs a caller's scratch).
pub struct Plans {
    pub fwd: Arc<dyn RealToComplex<f32>>,
    pub inv: Arc<dyn ComplexToReal<f32>>,
    /// Complex values of scratch either transform needs.
    pub scratch_len: usize,
}

/// The plan cache: entry `a` holds the plans for partitions of `2^a` samples.
static PLANS: [OnceLock<Plans>; MAX_PARTITION.trailing_zeros() as usize + 1] =
    [const { OnceLock::new() }; MAX_PARTITION.trailing_zeros() as usize + 1];

fn plan_slot(m: usize) -> Option<&'static OnceLock<Plans>> {
    if !m.is_power_of_two() {
        return None;
    }
    PLANS.get(m.trailing_zeros() as usize)
}

/// The plans for partitions of `m` samples, made now if they are not yet.
/// Off the audio thread only: planning allocates and computes tables.
pub fn plans(m: usize) -> Option<&'static Plans> {
    Some(plan_slot(m)?.get_or_init(|| {
        let mut planner = RealFftPlanner::<f32>::new();
        let fwd = planner.plan_fft_forward(2 * m);
        let inv = planner.plan_fft_inverse(2 * m);
        let scratch_len = fwd.get_scratch_len().max(inv.get_scratch_len());
        Plans { fwd, inv, scratch_len }
    }))
}

/// The plans for partitions of `m` samples if they were made: one atomic
/// load, for the audio thread and the task threads.
pub fn planned(m: usize) -> Option<&'static Plans> {
    plan_slot(m)?.get()
}

/// Writes the prepared buffer for `ir` cut as `layout` into `out`
/// (`layout.buffer_len()` floats).
pub fn write_prepared(layout: &Layout, ir: &[f32], out: &mut [f32]) {
    out[0] = MAGIC;
    out[1] = VERSION;
    out[2] = layout.block as f32;
    out[3] = layout.ir_len as f32;
    out[4] = layout.levels.len() as f32;
    for (l, level) in layout.levels.iter().enumerate() {
        out[HEADER + 3 * l] = level.size as f32;
        out[HEADER + 3 * l + 1] = level.count as f32;
        out[HEADER + 3 * l + 2] = level.offset as f32;
        let m = level.size;
        let Some(plan) = plans(m) else { continue };
        let mut frame = plan.fwd.make_input_vec();
        let mut spec = plan.fwd.make_output_vec();
        let mut scratch = plan.fwd.make_scratch_vec();
        let scale = 1.0 / (2 * m) as f32;
        let mut at = layout.spectra_at(l);
        for p in 0..level.count {
            frame.fill(0.0);
            let start = level.offset + p * m;
            if start < ir.len() {
                let take = m.min(ir.len() - start);
                frame[..take].copy_from_slice(&ir[start..start + take]);
            }
            // Lengths come from the plan itself.
            let _ = plan.fwd.process_with_scratch(&mut frame, &mut spec, &mut scratch);
            for (k, c) in spec.iter().enumerate() {
                out[at + k] = c.re * scale;
                out[at + m + 1 + k] = c.im * scale;
            }
            at += 2 * m + 2;
        }
    }
}

/// `/b_gen dest "MagnetarConvPrepare" source [size ...]`: cuts `source`'s
/// first channel as the sizes say (or as the tuner picks for this block
/// size and length, and task threads on `cpus` CPUs, when none are given)
/// and makes `dest` the prepared buffer, one channel of `buffer_len`
/// frames. Runs on the control thread.
pub fn prepare_magnetar_conv(
    buffers: &mut [SndBuf],
    dest: usize,
    args: &[f32],
    block: usize,
    sample_rate: f64,
    cpus: usize,
) -> Result<Layout, NupcError> {
    let source = args.first().map_or(0, |&v| v as i32 as u32 as usize);
    let source = if source >= buffers.len() { 0 } else { source };
    let src = &buffers[source];
    if !src.is_allocated() {
        return Err(NupcError::NotAllocated(source));
    }
    let channels = src.channels.max(1) as usize;
    let ir: Vec<f32> = src.data.iter().step_by(channels).copied().collect();
    if ir.is_empty() {
        return Err(NupcError::EmptyResponse(source));
    }
    let mut sizes = Vec::new();
    for &v in &args[1.min(args.len())..] {
        if v < 1.0 || v.fract() != 0.0 || v > MAX_PARTITION as f32 {
            return Err(NupcError::BadSizes(format!("partition size {v} is not a whole number from 1 to {MAX_PARTITION}")));
        }
        sizes.push(v as usize);
    }
    let layout = if sizes.is_empty() {
        super::nupc_tune::tuned_layout(block, ir.len(), sample_rate, cpus)?
    } else {
        Layout::from_sizes(block, ir.len(), &sizes)?
    };
    let mut data = vec![0.0f32; layout.buffer_len()];
    write_prepared(&layout, &ir, &mut data);
    let prepared = PreparedResponse::of(&data);
    let rate = buffers[source].sample_rate;
    let dst = &mut buffers[dest];
    let path = dst.path.take();
    *dst = SndBuf {
        data,
        channels: 1,
        frames: layout.buffer_len() as u32,
        sample_rate: rate,
        path,
        prepared,
        ..SndBuf::default()
    };
    Ok(layout)
}

/// A prepared response as instances read it: the layout and the spectra of
/// a buffer holding one, shared read-only (`SndBuf::prepared`) by every
/// instance on that buffer. Made off the audio thread whenever a command
/// changes such a buffer's contents, and swapped in at a block start; an
/// instance takes the new one at its next block.
#[derive(Debug)]
pub struct PreparedResponse {
    pub layout: Layout,
    /// The buffer's header and spectra, as the buffer held them.
    pub data: Box<[f32]>,
}

impl PreparedResponse {
    /// The shared form of `data` if it is a prepared response (its plans
    /// made too), else None. Off the audio thread: it allocates.
    pub fn of(data: &[f32]) -> Option<Arc<PreparedResponse>> {
        if data.first() != Some(&MAGIC) {
            return None;
        }
        let layout = Layout::read(data)?;
        for level in &layout.levels {
            plans(level.size)?;
        }
        let data: Box<[f32]> = data[..layout.buffer_len()].into();
        let shared = Arc::new(PreparedResponse { layout, data });
        keep_until_unused(&shared);
        Some(shared)
    }
}

/// Whether a change to `buf`'s contents may change the response prepared
/// from them: it has one, or now starts like one. Cheap, for any thread.
pub fn may_hold_response(buf: &SndBuf) -> bool {
    buf.prepared.is_some() || buf.data.first() == Some(&MAGIC)
}

/// Makes `buf.prepared` follow `buf`'s contents after a command changed
/// them. Off the audio thread (see [`PreparedResponse::of`]).
pub fn refresh_prepared(buf: &mut SndBuf) {
    // Unchanged (the preparation itself made it): kept, no second copy.
    if let Some(p) = &buf.prepared {
        if buf.data.get(..p.data.len()) == Some(&p.data[..]) {
            return;
        }
    }
    if may_hold_response(buf) {
        buf.prepared = PreparedResponse::of(&buf.data);
    }
}

/// Every prepared response, one reference each, so that the last reference
/// is never dropped by a unit on the audio thread or a task thread (a
/// system heap free there): the thread that prepares, the control thread,
/// frees them once nothing else holds them ([`release_unused_spectra`]).
static KEPT: std::sync::Mutex<Vec<Arc<PreparedResponse>>> = std::sync::Mutex::new(Vec::new());

fn keep_until_unused(spectra: &Arc<PreparedResponse>) {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.retain(|s| Arc::strong_count(s) > 1);
    kept.push(Arc::clone(spectra));
}

/// Frees the prepared responses that no buffer and no unit holds any more;
/// returns how many. For the control thread (it takes a lock); the
/// real-time server calls it now and then, a new preparation does too.
pub fn release_unused_spectra() -> usize {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let before = kept.len();
    // Only this list holds such responses: no buffer or unit can reach
    // them to take a new reference meanwhile.
    kept.retain(|s| Arc::strong_count(s) > 1);
    before - kept.len()
}

/// `acc += x · h` over split complex arrays (real parts, then imaginary).
#[inline(always)]
fn cmadd_body(acc_re: &mut [f32], acc_im: &mut [f32], x_re: &[f32], x_im: &[f32], h_re: &[f32], h_im: &[f32]) {
    let n = acc_re.len();
    let (acc_im, x_re, x_im, h_re, h_im) = (&mut acc_im[..n], &x_re[..n], &x_im[..n], &h_re[..n], &h_im[..n]);
    for k in 0..n {
        acc_re[k] += x_re[k] * h_re[k] - x_im[k] * h_im[k];
        acc_im[k] += x_re[k] * h_im[k] + x_im[k] * h_re[k];
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn cmadd_avx2(acc_re: &mut [f32], acc_im: &mut [f32], x_re: &[f32], x_im: &[f32], h_re: &[f32], h_im: &[f32]) {
    cmadd_body(acc_re, acc_im, x_re, x_im, h_re, h_im)
}

/// The complex multiply-add of the convolution: vectorised by the compiler
/// over split arrays, with AVX2 and FMA where the CPU has them.
pub fn cmadd(acc_re: &mut [f32], acc_im: &mut [f32], x_re: &[f32], x_im: &[f32], h_re: &[f32], h_im: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has both features (checked just above).
        unsafe { cmadd_avx2(acc_re, acc_im, x_re, x_im, h_re, h_im) };
        return;
    }
    cmadd_body(acc_re, acc_im, x_re, x_im, h_re, h_im)
}

/// One FDL's state and work: the input window, the ring of past input
/// spectra and the accumulator. All memory is reserved when it is made; the
/// partition spectra are read from a [`PreparedResponse`] given to each run
/// and the transforms are the shared [`Plans`] of the size.
pub struct LevelWork {
    pub m: usize,
    pub count: usize,
    plans: Option<&'static Plans>,
    /// The last `2M` input samples.
    window: Vec<f32>,
    frame: Vec<f32>,
    spec: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    /// Past spectra, slot `head` the newest, `count × (M+1)` each part.
    fdl_re: Vec<f32>,
    fdl_im: Vec<f32>,
    head: usize,
    /// Partition `p`'s spectrum: `M + 1` real parts then `M + 1` imaginary
    /// ones, at `h_at + p·(2M + 2)` in the prepared response's data.
    h_at: usize,
    acc_re: Vec<f32>,
    acc_im: Vec<f32>,
    last_seq: usize,
}

impl LevelWork {
    /// The work of `level`, whose spectra start at `at` in a prepared
    /// response. Takes the plans of its size if they were made (they are
    /// whenever a buffer holds a response of that size); without them the
    /// level is silent until they are.
    pub fn new(level: &Level, at: usize) -> LevelWork {
        let m = level.size;
        let bins = m + 1;
        let plans = planned(m);
        // Without plans yet, room for any transform of this size (see `usable_plans`).
        let scratch_len = plans.map_or(4 * bins, |p| p.scratch_len);
        LevelWork {
            m,
            count: level.count,
            plans,
            window: filled(0.0, 2 * m),
            frame: filled(0.0, 2 * m),
            spec: filled(Complex::new(0.0, 0.0), bins),
            scratch: filled(Complex::new(0.0, 0.0), scratch_len),
            fdl_re: filled(0.0, level.count * bins),
            fdl_im: filled(0.0, level.count * bins),
            head: 0,
            h_at: at,
            acc_re: filled(0.0, bins),
            acc_im: filled(0.0, bins),
            last_seq: 0,
        }
    }

    /// The plans, looked up again (one atomic load) if the level was made
    /// before they were; None while they are missing or need more scratch
    /// than the level has.
    fn usable_plans(&mut self) -> Option<&'static Plans> {
        if self.plans.is_none() {
            self.plans = planned(self.m).filter(|p| p.scratch_len <= self.scratch.len());
        }
        self.plans
    }

    /// Takes input segment `seq` (`M` samples): a gap since the last one
    /// (segments dropped after a deadline miss) enters as silence. Then
    /// transforms the window into the newest FDL slot.
    pub fn begin(&mut self, input: &[f32], seq: usize) {
        let m = self.m;
        let bins = m + 1;
        let gap = seq.saturating_sub(self.last_seq + 1).min(self.count + 1);
        self.last_seq = seq;
        for _ in 0..gap.min(self.count) {
            self.head = (self.head + 1) % self.count;
            self.fdl_re[self.head * bins..(self.head + 1) * bins].fill(0.0);
            self.fdl_im[self.head * bins..(self.head + 1) * bins].fill(0.0);
        }
        if gap > 0 {
            self.window[m..].fill(0.0);
        }
        self.window.copy_within(m.., 0);
        self.window[m..].copy_from_slice(&input[..m]);
        self.head = (self.head + 1) % self.count;
        let Some(plans) = self.usable_plans() else {
            self.fdl_re[self.head * bins..(self.head + 1) * bins].fill(0.0);
            self.fdl_im[self.head * bins..(self.head + 1) * bins].fill(0.0);
            return;
        };
        self.frame.copy_from_slice(&self.window);
        // Lengths come from the plan itself.
        let _ = plans.fwd.process_with_scratch(&mut self.frame, &mut self.spec, &mut self.scratch);
        let (re, im) = (&mut self.fdl_re[self.head * bins..], &mut self.fdl_im[self.head * bins..]);
        for (k, c) in self.spec.iter().enumerate() {
            re[k] = c.re;
            im[k] = c.im;
        }
    }

    /// Adds partitions `parts` (0 = the newest spectrum times the first
    /// partition) of the response `h` into the accumulator.
    pub fn accumulate(&mut self, parts: std::ops::Range<usize>, h: &PreparedResponse) {
        let bins = self.m + 1;
        let h = &h.data[..];
        for p in parts {
            let slot = (self.head + self.count - p) % self.count;
            let xs = slot * bins..(slot + 1) * bins;
            let hs = self.h_at + p * 2 * bins;
            let (Some(h_re), Some(h_im)) = (h.get(hs..hs + bins), h.get(hs + bins..hs + 2 * bins)) else { return };
            cmadd(&mut self.acc_re, &mut self.acc_im, &self.fdl_re[xs.clone()], &self.fdl_im[xs], h_re, h_im);
        }
    }

    /// Transforms the accumulator back and writes the `M` new output
    /// samples (silence without plans).
    pub fn finish(&mut self, out: &mut [f32]) {
        let m = self.m;
        let Some(plans) = self.usable_plans() else {
            out[..m].fill(0.0);
            return;
        };
        for (k, c) in self.spec.iter_mut().enumerate() {
            *c = Complex::new(self.acc_re[k], self.acc_im[k]);
        }
        self.spec[0].im = 0.0;
        self.spec[m].im = 0.0;
        let _ = plans.inv.process_with_scratch(&mut self.spec, &mut self.frame, &mut self.scratch);
        out[..m].copy_from_slice(&self.frame[m..]);
        self.acc_re.fill(0.0);
        self.acc_im.fill(0.0);
    }

    /// The whole period's work at once, with the response `h`; none (the
    /// buffer holds no response of this layout now) gives silence and
    /// keeps the input history.
    pub fn run(&mut self, input: &[f32], out: &mut [f32], seq: usize, h: Option<&PreparedResponse>) {
        self.begin(input, seq);
        match h {
            Some(h) => {
                self.accumulate(0..self.count, h);
                self.finish(out);
            }
            None => out[..self.m].fill(0.0),
        }
    }

    /// Step `step` of `steps` of the period's work, for running it a slice
    /// per block: the transform with the first slice of multiply-adds, the
    /// inverse with the last.
    pub fn run_step(&mut self, input: &[f32], out: &mut [f32], seq: usize, step: usize, steps: usize, h: Option<&PreparedResponse>) {
        if step == 0 {
            self.begin(input, seq);
        }
        let (lo, hi) = (self.count * step / steps, self.count * (step + 1) / steps);
        if let Some(h) = h {
            self.accumulate(lo..hi, h);
        }
        if step + 1 == steps {
            match h {
                Some(_) => self.finish(out),
                None => {
                    self.acc_re.fill(0.0);
                    self.acc_im.fill(0.0);
                    out[..self.m].fill(0.0);
                }
            }
        }
    }
}
