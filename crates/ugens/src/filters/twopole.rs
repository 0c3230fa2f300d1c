//! Second-order sections: LPF, HPF, BPF, BRF, RLPF, RHPF, Resonz, Ringz,
//! TwoPole, TwoZero, and Formlet (two Ringz sections).

use super::lanes4::Sample;
use crate::common::signal::{decay_coef, zap, In, Loops, RawIn};
use crate::unit::{Construct, RateInfo, Unit, UnitCtx, UnitSpec, Wires};
use std::marker::PhantomData;

/// One filter's formulas: how parameters become coefficients and how one
/// sample is computed. `Section<D>` supplies the state and block handling.
pub trait Design: 'static {
    /// Number of parameters, read from inputs 1..=NP.
    const NP: usize;
    /// The filter has a one-sample form (scsynth's `_next_1`) that control-rate
    /// units and the constructor use, applying new coefficients at once.
    const SINGLE: bool;
    /// The state is flushed of denormals at the end of each block.
    const ZAP: bool = true;
    /// Coefficients before the first parameters arrive.
    const INIT: [f64; 3] = [0.0; 3];
    /// `single` selects the one-sample form's arithmetic where it differs.
    fn coefs(p: &[f32; 3], rate: &RateInfo, single: bool) -> [f64; 3];
    /// Returns the new state value and the output for input `x` (one
    /// lane, or several lanes at once with the same arithmetic).
    fn tick<T: Sample>(x: T, c: &[T; 3], s1: T, s2: T) -> (T, T);
}

/// A second-order section running design `D`.
pub struct Section<D: Design> {
    params: [f32; 3],
    c: [f64; 3],
    s1: f64,
    s2: f64,
    single: bool,
    _design: PhantomData<fn() -> D>,
}

impl<D: Design> Section<D> {
    fn read_params(io: &Wires<'_>) -> ([f32; 3], bool) {
        let mut p = [0.0f32; 3];
        for (k, v) in p.iter_mut().enumerate().take(D::NP) {
            *v = crate::common::signal::in0(io, k + 1);
        }
        (p, false)
    }

    fn changed(&self, p: &[f32; 3]) -> bool {
        (0..D::NP).any(|k| p[k] != self.params[k])
    }

    fn finish(&mut self, s1: f64, s2: f64) {
        if D::ZAP {
            self.s1 = zap(s1);
            self.s2 = zap(s2);
        } else {
            self.s1 = s1;
            self.s2 = s2;
        }
    }

    fn next_block(&mut self, io: &mut Wires<'_>, rate: &RateInfo, lp: Loops) {
        let inp = In::new(io, 0);
        let (p, _) = Self::read_params(io);
        let out = io.out(0);
        let (mut s1, mut s2) = (self.s1, self.s2);
        let mut c = self.c;
        let mut step = |i: usize, c: &[f64; 3]| {
            let (s0, y) = D::tick(inp.at(i) as f64, c, s1, s2);
            out[i] = y as f32;
            s2 = s1;
            s1 = s0;
        };
        if self.changed(&p) {
            let target = D::coefs(&p, rate, false);
            lp.run(&mut c, Some(&target), &mut step);
            self.params = p;
            self.c = target;
        } else {
            lp.run(&mut c, None, &mut step);
        }
        self.finish(s1, s2);
    }

    fn next_single(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        let x = crate::common::signal::in0(io, 0);
        let (p, _) = Self::read_params(io);
        io.out(0)[0] = self.single_step(x, &p, rate);
    }

    /// The one-sample form on input `x` and parameters `p`: the output.
    #[inline(always)]
    fn single_step(&mut self, x: f32, p: &[f32; 3], rate: &RateInfo) -> f32 {
        if self.changed(p) {
            self.c = D::coefs(p, rate, true);
            self.params = *p;
        }
        let (s0, y) = D::tick(x as f64, &self.c, self.s1, self.s2);
        let s1 = self.s1;
        self.finish(s0, s1);
        y as f32
    }
}

#[cfg(test)]
impl<D: Design> Section<D> {
    /// The state and coefficients, bit for bit.
    pub(crate) fn state_bits(&self) -> [u64; 5] {
        [self.s1.to_bits(), self.s2.to_bits(), self.c[0].to_bits(), self.c[1].to_bits(), self.c[2].to_bits()]
    }
}

impl<D: Design> Construct for Section<D> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut s = Section {
            params: [f32::NAN; 3],
            c: D::INIT,
            s1: 0.0,
            s2: 0.0,
            single: cx.rate.buf_length == 1,
            _design: PhantomData,
        };
        if D::SINGLE {
            s.next_single(io, cx.rate);
        } else {
            s.next_block(io, cx.rate, Loops::single(cx.rate));
        }
        s
    }
}

impl<D: Design> Section<D> {
    pub(super) fn run(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        if D::SINGLE && self.single {
            self.next_single(io, rate);
        } else {
            self.next_block(io, rate, Loops::of(rate));
        }
    }
}

impl<D: Design> Unit for Section<D> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx.rate);
    }
}

use crate::unit::{Lanes, MAX_LANES};

/// The same Section step of several synths, computed side by side: each
/// lane does exactly the ticks and coefficient steps its unit would do
/// alone, so the latency of one filter's recurrence hides behind the others.
pub(crate) fn section_lanes<D: Design>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let Some(secs) = crate::unit::lane_units::<Section<D>>(lanes) else { return };
    // SAFETY: the pointers came from distinct units borrowed mutably
    // through `lanes` for the whole call, and lane l's wires are unit l's.
    unsafe { section_lanes_of::<D>(&secs, lanes, rate) };
}

/// `section_lanes` on units already known to be `Section<D>`.
///
/// # Safety
/// `secs[l]` for `l < lanes.len` point at distinct live units, used through
/// nothing else during the call; `lanes.ios[l]` (filled) holds unit l's wires.
unsafe fn section_lanes_of<D: Design>(secs: &[*mut Section<D>; MAX_LANES], lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let k = lanes.len;
    let single_rate = D::SINGLE && rate.buf_length == 1;
    if single_rate {
        for l in 0..k {
            // SAFETY: distinct units, borrowed mutably through `lanes`.
            let sec = unsafe { &mut *secs[l] };
            if let Some(io) = lanes.ios[l].as_mut() {
                sec.run(io, rate);
            }
        }
        return;
    }
    let mut run = [SecLane::<D>::EMPTY; MAX_LANES];
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_mut() else { return };
        run[l] = SecLane::resolve(io, secs[l]);
    }
    // SAFETY: the caller's contract: distinct live units, each lane's
    // wires (borrowed through `lanes` for the call) its unit's own.
    unsafe { section_run(&run[..k], rate) };
}

/// A zero for the parameters a unit has no input for (`in0` reads 0).
static NO_PARAM: f32 = 0.0;

/// One lane of the section kernels: its unit and that unit's wires,
/// resolved to addresses. A batch keeps its members' lanes from one block
/// to the next while its wires stay in place (`Wires::place`).
pub struct SecLane<D: Design> {
    pub(crate) unit: *mut Section<D>,
    /// Input 0, as `In::new` reads it.
    pub(crate) inp: RawIn,
    /// Where parameter k (input k + 1) is read, for k < `D::NP`.
    pub(crate) params: [*const f32; 3],
    /// The output's block.
    pub(crate) out: *mut f32,
}

impl<D: Design> Clone for SecLane<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D: Design> Copy for SecLane<D> {}

impl<D: Design> SecLane<D> {
    /// No unit and no wires: a place to fill.
    pub(crate) const EMPTY: SecLane<D> = SecLane {
        unit: std::ptr::null_mut(),
        inp: RawIn::NONE,
        params: [std::ptr::null(); 3],
        out: std::ptr::null_mut(),
    };

    /// Unit `unit`'s lane, its wires being `io`.
    pub(crate) fn resolve(io: &mut Wires<'_>, unit: *mut Section<D>) -> SecLane<D> {
        let params = std::array::from_fn(|k| {
            if k < D::NP && k + 1 < io.num_inputs() {
                io.inp(k + 1).as_ptr()
            } else {
                &NO_PARAM as *const f32
            }
        });
        SecLane { unit, inp: In::new(io, 0).to_raw(), params, out: io.out_ptr(0) }
    }

    /// The lane's one-sample form, as its unit's `run` takes it in a
    /// one-sample block.
    ///
    /// # Safety
    /// As for one lane of [`section_run`].
    unsafe fn run_single(&self, rate: &RateInfo) {
        let mut p = [0.0f32; 3];
        for (k, v) in p.iter_mut().enumerate().take(D::NP) {
            // SAFETY: a parameter's wire, or `NO_PARAM` (the caller's contract).
            *v = unsafe { *self.params[k] };
        }
        // SAFETY: the input is this block's (the caller's contract).
        let x = unsafe { In::from_raw(self.inp) }.first();
        // SAFETY: the unit is live and borrowed for the call alone, its
        // output this block's and its own (the caller's contract).
        unsafe { *self.out = (*self.unit).single_step(x, &p, rate) };
    }
}

/// A bank of one section inside one synth (six `Ringz` on one source) is
/// a batch that keeps its members' lanes (`crate::batch::KeptBatch`).
impl<D: Design> crate::batch::KeptLaneUnit for Section<D> {
    type Lane = SecLane<D>;
    const EMPTY: SecLane<D> = SecLane::EMPTY;

    unsafe fn resolve(io: &mut Wires<'_>, unit: *mut Self) -> SecLane<D> {
        SecLane::resolve(io, unit)
    }

    unsafe fn run_kept(lanes: &[SecLane<D>], rate: &RateInfo) {
        // In one-sample blocks a filter with a one-sample form takes its
        // new coefficients at once (scsynth's `_next_1`), which the section
        // kernel does not do.
        if D::SINGLE && rate.buf_length == 1 {
            for lane in lanes {
                // SAFETY: the caller's contract, lane by lane.
                unsafe { lane.run_single(rate) };
            }
        } else {
            // SAFETY: the caller's contract.
            unsafe { section_run(lanes, rate) };
        }
    }
}

/// The section kernel proper: lanes `lanes` (at most [`MAX_LANES`]) through
/// one block, each with exactly the ticks and coefficient steps its unit
/// would do alone. Block forms only: a `D::SINGLE` filter in one-sample
/// blocks (control rate, or audio at `-z 1`) takes its new coefficients at
/// once, which only its own `run` does.
///
/// # Safety
/// `lanes[l].unit` point at distinct live units used through nothing else
/// during the call; each lane's input, parameters and output are where its
/// unit's wires are for this block (`SecLane::resolve`), live for the call,
/// the outputs written through nothing else.
pub(crate) unsafe fn section_run<D: Design>(run: &[SecLane<D>], rate: &RateInfo) {
    let k = run.len();
    assert!(k <= MAX_LANES, "more section lanes than a kernel takes");
    debug_assert!(!(D::SINGLE && rate.buf_length == 1), "a one-sample form given to the block kernel");
    let lp = Loops::of(rate);
    let mut inp: [In<'_>; MAX_LANES] = [In::silent(); MAX_LANES];
    let mut out: [*mut f32; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    // Coefficient-major (c[kk][l]): the vector kernels load four lanes'
    // coefficient kk at once.
    let mut c = [[0.0f64; MAX_LANES]; 3];
    let mut slope = [[0.0f64; MAX_LANES]; 3];
    let mut changed = [false; MAX_LANES];
    let mut s1 = [0.0f64; MAX_LANES];
    let mut s2 = [0.0f64; MAX_LANES];
    // Whether every lane filters the same signal (a filter bank of one
    // synth on one source): then each sample's input is read once.
    let mut shared = true;
    // The parameters (bit for bit) and the coefficients computed last:
    // identical voices sweeping one filter together share one computation
    // per block instead of a tangent and a cosine each.
    let mut last: Option<([u32; 3], [f64; 3])> = None;
    for (l, lane) in run.iter().enumerate() {
        // SAFETY: each unit is distinct and borrowed for the call alone
        // (the caller's contract); no other reference to it is live here.
        let sec = unsafe { &mut *lane.unit };
        // SAFETY: the input is this block's (the caller's contract).
        inp[l] = unsafe { In::from_raw(lane.inp) };
        shared &= lane.inp.same_signal(&run[0].inp);
        out[l] = lane.out;
        let mut p = [0.0f32; 3];
        for kk in 0..D::NP {
            // SAFETY: a parameter's wire, or `NO_PARAM` (the caller's contract).
            p[kk] = unsafe { *lane.params[kk] };
        }
        for kk in 0..3 {
            c[kk][l] = sec.c[kk];
        }
        s1[l] = sec.s1;
        s2[l] = sec.s2;
        if sec.changed(&p) {
            changed[l] = true;
            // Coefficients are a function of the parameters alone: equal
            // bits give equal coefficients.
            let bits = p.map(f32::to_bits);
            let target = match last {
                Some((b, t)) if b == bits => t,
                _ => {
                    let t = D::coefs(&p, rate, false);
                    last = Some((bits, t));
                    t
                }
            };
            for kk in 0..3 {
                slope[kk][l] = (target[kk] - c[kk][l]) * lp.slope;
            }
            // The kernel glides from `c`; the unit keeps the target.
            sec.params = p;
            sec.c = target;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        let lanes = SectionLanes { k, inp: &inp, out: &out, c: &c, slope: &slope, changed: &changed, shared };
        // SAFETY: AVX2 is present; out[l], l < k, is lane l's own output,
        // valid for the block.
        unsafe { section_ticks_x4::<D>(lanes, &mut s1, &mut s2, lp) };
    } else {
        section_ticks::<D>(
            SectionLanes { k, inp: &inp, out: &out, c: &c, slope: &slope, changed: &changed, shared },
            &mut s1,
            &mut s2,
            lp,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    section_ticks::<D>(SectionLanes { k, inp: &inp, out: &out, c: &c, slope: &slope, changed: &changed, shared }, &mut s1, &mut s2, lp);
    for (l, lane) in run.iter().enumerate() {
        // SAFETY: as above; no other reference to the unit is live now.
        unsafe { &mut *lane.unit }.finish(s1[l], s2[l]);
    }
}

/// What the per-sample part of `section_lanes` works on.
#[derive(Clone, Copy)]
struct SectionLanes<'a, 'b> {
    k: usize,
    inp: &'a [In<'b>; MAX_LANES],
    out: &'a [*mut f32; MAX_LANES],
    /// c[kk][l]: lane l's coefficient kk, and its step after each group of three.
    c: &'a [[f64; MAX_LANES]; 3],
    slope: &'a [[f64; MAX_LANES]; 3],
    changed: &'a [bool; MAX_LANES],
    /// Every lane's input is the same signal.
    shared: bool,
}

/// The block's ticks, lane after lane within each sample.
fn section_ticks<D: Design>(
    lanes: SectionLanes<'_, '_>,
    s1: &mut [f64; MAX_LANES],
    s2: &mut [f64; MAX_LANES],
    lp: Loops,
) {
    let SectionLanes { k, inp, out, c, slope, changed, .. } = lanes;
    let mut c = *c;
    let c = &mut c;
    let tick_all = |i: usize, c: &[[f64; MAX_LANES]; 3]| {
        for l in 0..k {
            let (s0, y) = D::tick(inp[l].at(i) as f64, &[c[0][l], c[1][l], c[2][l]], s1[l], s2[l]);
            // SAFETY: `out_ptr` is valid for the block and lane l's alone.
            unsafe { *out[l].add(i) = y as f32 };
            s2[l] = s1[l];
            s1[l] = s0;
        }
    };
    lp.schedule(c, tick_all, |c| {
        for l in 0..k {
            if changed[l] {
                for kk in 0..3 {
                    c[kk][l] += slope[kk][l];
                }
            }
        }
    });
}

/// `section_ticks` four lanes per vector: the same ticks and coefficient
/// steps, in the same order within each lane.
///
/// Up to four vectors (sixteen lanes) advance together sample by sample,
/// so that each one's recurrence latency hides behind the others'; the
/// lanes left over run as two vectors or one.
///
/// # Safety
/// The CPU has AVX2; `out[l]`, l < k, is valid for the block and written
/// through no other reference.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn section_ticks_x4<D: Design>(
    lanes: SectionLanes<'_, '_>,
    s1: &mut [f64; MAX_LANES],
    s2: &mut [f64; MAX_LANES],
    lp: Loops,
) {
    const { assert!(MAX_LANES % 16 == 0) };
    let mut base = 0;
    while base < lanes.k {
        if lanes.k - base > 8 {
            // SAFETY: forwarded contract; base + 16 <= MAX_LANES.
            unsafe { section_vector::<D, 4>(lanes, base, s1, s2, lp) };
            base += 16;
        } else if lanes.k - base > 4 {
            // SAFETY: forwarded contract; base + 8 <= MAX_LANES.
            unsafe { section_vector::<D, 2>(lanes, base, s1, s2, lp) };
            base += 8;
        } else {
            // SAFETY: forwarded contract; base + 4 <= MAX_LANES.
            unsafe { section_vector::<D, 1>(lanes, base, s1, s2, lp) };
            base += 4;
        }
    }
}

/// Samples the vector kernels move between the lanes' wires and their
/// vectors at a time (one 8×8 transpose per eight lanes).
#[cfg(target_arch = "x86_64")]
const TILE: usize = 8;

/// `section_vector`, built for the CPU features `$features`: with
/// AVX-512 (F and VL) the compiler has 32 vector registers, enough for
/// sixteen lanes' coefficients, glides and state, instead of 16 (the same
/// operations on the same vectors either way, so the same bits).
#[cfg(target_arch = "x86_64")]
macro_rules! section_vector_for {
    ($name:ident, $features:literal) => {
        /// Lanes `base..base + 4 * V` (those below k) through the whole block, `V`
        /// vectors of four side by side.
        ///
        /// Inputs and outputs pass through tiles of [`TILE`] samples, transposed
        /// eight lanes at a time, so that each sample costs one vector load and
        /// one vector store per four lanes rather than one scalar access per lane.
        ///
        /// # Safety
        /// As for `section_ticks_x4`, and base + 4 * V <= MAX_LANES.
        #[target_feature(enable = $features)]
        unsafe fn $name<D: Design, const V: usize>(
            lanes: SectionLanes<'_, '_>,
            base: usize,
            s1: &mut [f64; MAX_LANES],
            s2: &mut [f64; MAX_LANES],
            lp: Loops,
        ) {
            use super::lanes4::F64x4;
            use std::arch::x86_64::*;
            let SectionLanes { k, inp, out, c, slope, changed, shared } = lanes;
            let end = k.min(base + 4 * V);
            let moving = changed[base..end].iter().any(|&b| b);
            // Lanes b..b + 4 of a MAX_LANES array as one vector.
            macro_rules! quad {
                ($a:expr, $v:expr) => {{
                    let b = base + 4 * $v;
                    let a: &[f64; MAX_LANES] = $a;
                    // SAFETY: four doubles of a MAX_LANES array, b + 4 <= MAX_LANES
                    // (the caller's contract); AVX2 by the caller's contract.
                    F64x4(unsafe { _mm256_loadu_pd(a[b..b + 4].as_ptr()) })
                }};
            }
            let zero = F64x4(_mm256_setzero_pd());
            let mut cv = [[zero; 3]; V];
            // The glide is read only when some lane moves (its loops alone use it).
            let mut sv = [[zero; 3]; V];
            let mut mask = [_mm256_setzero_pd(); V];
            let mut y1 = [zero; V];
            let mut y2 = [zero; V];
            for v in 0..V {
                for kk in 0..3 {
                    cv[v][kk] = quad!(&c[kk], v);
                }
                y1[v] = quad!(s1, v);
                y2[v] = quad!(s2, v);
                if moving {
                    for kk in 0..3 {
                        sv[v][kk] = quad!(&slope[kk], v);
                    }
                    let b = base + 4 * v;
                    let m = |l: usize| -i64::from(changed[l]);
                    mask[v] = _mm256_castsi256_pd(_mm256_setr_epi64x(m(b), m(b + 1), m(b + 2), m(b + 3)));
                }
            }
            let shared_in = inp[base];
            // Groups of eight lanes (the last may be half used when V is odd).
            let groups = V.div_ceil(2);
            let n = 3 * lp.loops + lp.remain;
            // Samples up to here belong to whole groups of three, after each of
            // which the coefficients step (scsynth's filter loop).
            let stepped = 3 * lp.loops;
            // Where every lane reads a whole audio block, whole tiles load straight
            // from the lanes' inputs (padding lanes past `end` read lane `base`'s,
            // and their results are dropped).
            let mut src = [std::ptr::null::<f32>(); 16];
            let mut direct = true;
            for (j, p) in src.iter_mut().enumerate().take(8 * groups) {
                if base + j < end {
                    match inp[base + j].audio() {
                        Some(a) if a.len() >= n => *p = a.as_ptr(),
                        _ => direct = false,
                    }
                }
            }
            for j in (end - base)..8 * groups {
                src[j] = src[0];
            }
            if direct && n % 4 == 0 {
                // Whole audio blocks: no tiles (`quad_pass`).
                let q = Quads { n, stepped, base, end, out, src: &src, sv: &sv, mask: &mask };
                // SAFETY: forwarded contract; `direct` and n % 4 == 0, as it asks.
                unsafe {
                    if moving {
                        quads::<D, V, true>(&q, &cv, &mut y1, &mut y2);
                    } else {
                        quads::<D, V, false>(&q, &cv, &mut y1, &mut y2);
                    }
                }
            } else {
                // `direct` matters only to lanes that do not share their source.
                let direct = direct && !shared;
                let blk = Block { n, stepped, base, end, groups, inp, out, src: &src, direct, shared_in: &shared_in, sv: &sv, mask: &mask };
                // The lanes' source and whether coefficients glide are fixed for the
                // block: each combination gets a loop without those tests.
                // SAFETY: forwarded contract (AVX2 present; the outputs).
                unsafe {
                    match (shared, moving) {
                        (true, true) => run_tiles::<D, V, true, true>(&blk, &mut cv, &mut y1, &mut y2),
                        (true, false) => run_tiles::<D, V, true, false>(&blk, &mut cv, &mut y1, &mut y2),
                        (false, true) => run_tiles::<D, V, false, true>(&blk, &mut cv, &mut y1, &mut y2),
                        (false, false) => run_tiles::<D, V, false, false>(&blk, &mut cv, &mut y1, &mut y2),
                    }
                }
            }
            for v in 0..V {
                let b = base + 4 * v;
                // SAFETY: four doubles into MAX_LANES arrays, b + 4 <= MAX_LANES.
                unsafe {
                    _mm256_storeu_pd(s1[b..b + 4].as_mut_ptr(), y1[v].0);
                    _mm256_storeu_pd(s2[b..b + 4].as_mut_ptr(), y2[v].0);
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
section_vector_for!(section_vector_avx2, "avx2");
#[cfg(target_arch = "x86_64")]
section_vector_for!(section_vector_avx512, "avx2,avx512f,avx512vl");

/// Lanes `base..base + 4 * V` through the whole block, with AVX-512's
/// registers where the CPU has them.
///
/// # Safety
/// As for `section_ticks_x4`, and base + 4 * V <= MAX_LANES.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn section_vector<D: Design, const V: usize>(
    lanes: SectionLanes<'_, '_>,
    base: usize,
    s1: &mut [f64; MAX_LANES],
    s2: &mut [f64; MAX_LANES],
    lp: Loops,
) {
    // SAFETY: the caller's contract, and the features checked.
    unsafe {
        if crate::vector::avx512_registers() {
            section_vector_avx512::<D, V>(lanes, base, s1, s2, lp)
        } else {
            section_vector_avx2::<D, V>(lanes, base, s1, s2, lp)
        }
    }
}

/// What the ticks of a block of lanes read besides the filter state.
#[cfg(target_arch = "x86_64")]
struct Block<'a, 'b, const V: usize> {
    /// Samples in the block.
    n: usize,
    /// Samples before this one end groups of three that step the coefficients.
    stepped: usize,
    /// The first lane and the end of the used lanes.
    base: usize,
    end: usize,
    /// Groups of eight lanes (the last may be half used when V is odd).
    groups: usize,
    inp: &'a [In<'b>; MAX_LANES],
    out: &'a [*mut f32; MAX_LANES],
    /// Each lane's audio input, when `direct` (padding lanes read lane `base`'s).
    src: &'a [*const f32; 16],
    direct: bool,
    /// The lanes' one source when they share it.
    shared_in: &'a In<'b>,
    sv: &'a [[super::lanes4::F64x4; 3]; V],
    mask: &'a [std::arch::x86_64::__m256d; V],
}

/// The block's ticks, [`TILE`] samples at a time, `V` vectors side by
/// side: the arithmetic of `section_ticks`, with the shared source and the
/// coefficient glide fixed at compile time so that the per-sample loop
/// carries no test of either, and the state kept in locals for the block.
///
/// Inputs and outputs pass through tiles transposed eight lanes at a time,
/// so that each sample costs one vector load and one vector store per four
/// lanes rather than one scalar access per lane.
///
/// # Safety
/// The CPU has AVX2; `out[l]`, base <= l < end, is valid for the block and
/// written through no other reference.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn run_tiles<D: Design, const V: usize, const SHARED: bool, const MOVING: bool>(
    b: &Block<'_, '_, V>,
    cv: &mut [[super::lanes4::F64x4; 3]; V],
    y1s: &mut [super::lanes4::F64x4; V],
    y2s: &mut [super::lanes4::F64x4; V],
) {
    use super::lanes4::F64x4;
    use crate::osc::dsf_x8::transpose8;
    use std::arch::x86_64::*;
    let Block { n, stepped, base, end, groups, inp, out, src, direct, shared_in, sv, mask } = *b;
    let (mut y1, mut y2) = (*y1s, *y2s);
    let mut c = *cv;
    let mut k3 = 0u32;
    // xin[s][v]: the four lanes of vector v at sample s of the tile.
    // SAFETY: AVX2 by the caller's contract.
    let mut xin = [[unsafe { _mm_setzero_ps() }; V]; TILE];
    // SAFETY: AVX2 by the caller's contract.
    let mut yout = [[unsafe { _mm_setzero_ps() }; V]; TILE];
    // The lanes' inputs at sample i, a vector of four per `v`. (Macros,
    // not closures: a closure would not be compiled for AVX2, and its
    // intrinsics would become calls.)
    macro_rules! input {
        ($i0:expr, $s:expr) => {{
            let s: usize = $s;
            let mut x = [F64x4(_mm256_setzero_pd()); V];
            if SHARED {
                x = [F64x4(_mm256_set1_pd(shared_in.at($i0 + s) as f64)); V];
            } else {
                for v in 0..V {
                    x[v] = F64x4(_mm256_cvtps_pd(xin[s][v]));
                }
            }
            x
        }};
    }
    // After sample i: every third sample of the block steps the coefficients.
    macro_rules! advance {
        ($i:expr) => {
            if MOVING {
                k3 += 1;
                if k3 == 3 {
                    k3 = 0;
                    if $i < stepped {
                        for v in 0..V {
                            for kk in 0..3 {
                                let next = c[v][kk] + sv[v][kk];
                                c[v][kk] = F64x4(_mm256_blendv_pd(c[v][kk].0, next.0, mask[v]));
                            }
                        }
                    }
                }
            }
        };
    }
    // `len` samples from i0. Two samples per pass: the second tick takes
    // the first one's new state in place, so that the state never moves
    // between registers.
    macro_rules! ticks {
        ($i0:expr, $len:expr) => {{
            let (i0, len): (usize, usize) = ($i0, $len);
            let mut s = 0;
            if !SHARED && !MOVING {
                // Fixed coefficients and a tile of inputs per vector: each
                // vector runs through the whole tile on its own, its state
                // and coefficients in registers; the vectors are independent,
                // so one's recurrence still overlaps the next one's.
                for v in 0..V {
                    let (mut a, mut b) = (y1[v], y2[v]);
                    let cc = c[v];
                    for s in 0..len {
                        let (y0, y) = D::tick(F64x4(_mm256_cvtps_pd(xin[s][v])), &cc, a, b);
                        yout[s][v] = _mm256_cvtpd_ps(y.0);
                        b = a;
                        a = y0;
                    }
                    y1[v] = a;
                    y2[v] = b;
                }
                s = len;
            }
            while s + 2 <= len {
                let mut ya: [F64x4; V] = y1;
                let x = input!(i0, s);
                for v in 0..V {
                    let (y0, y) = D::tick(x[v], &c[v], y1[v], y2[v]);
                    yout[s][v] = _mm256_cvtpd_ps(y.0);
                    ya[v] = y0;
                }
                advance!(i0 + s);
                let x = input!(i0, s + 1);
                for v in 0..V {
                    let (y0, y) = D::tick(x[v], &c[v], ya[v], y1[v]);
                    yout[s + 1][v] = _mm256_cvtpd_ps(y.0);
                    y2[v] = ya[v];
                    y1[v] = y0;
                }
                advance!(i0 + s + 1);
                s += 2;
            }
            if s < len {
                let x = input!(i0, s);
                for v in 0..V {
                    let (y0, y) = D::tick(x[v], &c[v], y1[v], y2[v]);
                    yout[s][v] = _mm256_cvtpd_ps(y.0);
                    y2[v] = y1[v];
                    y1[v] = y0;
                }
                advance!(i0 + s);
            }
        }};
    }
    let mut i0 = 0;
    while i0 < n {
        let len = (n - i0).min(TILE);
        if !SHARED && direct && len == TILE {
            for g in 0..groups {
                // SAFETY: AVX2 by the caller's contract.
                let mut rows = [unsafe { _mm256_setzero_ps() }; 8];
                for (j, row) in rows.iter_mut().enumerate() {
                    // SAFETY: samples i0..i0 + 8 < n of an audio block of at
                    // least n samples (`direct`).
                    *row = unsafe { _mm256_loadu_ps(src[8 * g + j].add(i0)) };
                }
                // SAFETY: AVX2 by the caller's contract.
                let cols = unsafe { transpose8(rows) };
                for (s, col) in cols.iter().enumerate() {
                    // SAFETY: AVX2 by the caller's contract.
                    unsafe {
                        xin[s][2 * g] = _mm256_castps256_ps128(*col);
                        if 2 * g + 1 < V {
                            xin[s][2 * g + 1] = _mm256_extractf128_ps::<1>(*col);
                        }
                    }
                }
            }
        } else if !SHARED {
            for g in 0..groups {
                // SAFETY: AVX2 by the caller's contract.
                let mut rows = [unsafe { _mm256_setzero_ps() }; 8];
                for (j, row) in rows.iter_mut().enumerate() {
                    let l = base + 8 * g + j;
                    if l >= end {
                        continue;
                    }
                    *row = match inp[l].audio() {
                        // SAFETY: samples i0..i0 + 8 of the block's input.
                        Some(a) if len == TILE => unsafe { _mm256_loadu_ps(a[i0..i0 + TILE].as_ptr()) },
                        _ => {
                            let mut t = [0.0f32; TILE];
                            for (s, x) in t[..len].iter_mut().enumerate() {
                                *x = inp[l].at(i0 + s);
                            }
                            // SAFETY: a load of a local array of eight.
                            unsafe { _mm256_loadu_ps(t.as_ptr()) }
                        }
                    };
                }
                // SAFETY: AVX2 by the caller's contract.
                let cols = unsafe { transpose8(rows) };
                for (s, col) in cols.iter().enumerate() {
                    // SAFETY: AVX2 by the caller's contract.
                    unsafe {
                        xin[s][2 * g] = _mm256_castps256_ps128(*col);
                        if 2 * g + 1 < V {
                            xin[s][2 * g + 1] = _mm256_extractf128_ps::<1>(*col);
                        }
                    }
                }
            }
        }
        // SAFETY: AVX2 by the caller's contract.
        unsafe {
            // A whole tile's constant length lets its loop unroll.
            if len == TILE {
                ticks!(i0, TILE)
            } else {
                ticks!(i0, len)
            }
        }
        for g in 0..groups {
            // SAFETY: AVX2 by the caller's contract.
            let mut rows = [unsafe { _mm256_setzero_ps() }; 8];
            for (s, row) in rows.iter_mut().enumerate() {
                // SAFETY: AVX2 by the caller's contract.
                *row = unsafe {
                    let hi = if 2 * g + 1 < V { yout[s][2 * g + 1] } else { _mm_setzero_ps() };
                    _mm256_set_m128(hi, yout[s][2 * g])
                };
            }
            // SAFETY: AVX2 by the caller's contract.
            let cols = unsafe { transpose8(rows) };
            let used = (end - base).saturating_sub(8 * g).min(8);
            if len == TILE && used == 8 {
                // A whole group: eight stores with no test between them.
                for (j, col) in cols.iter().enumerate() {
                    // SAFETY: samples i0..i0 + 8 of lane base + 8g + j's
                    // output (below `end`), by the caller's contract on `out`.
                    unsafe { _mm256_storeu_ps(out[base + 8 * g + j].add(i0), *col) };
                }
            } else if len == TILE {
                for (j, col) in cols.iter().enumerate().take(used) {
                    // SAFETY: as above.
                    unsafe { _mm256_storeu_ps(out[base + 8 * g + j].add(i0), *col) };
                }
            } else {
                for (j, col) in cols.iter().enumerate().take(used) {
                    let mut t = [0.0f32; TILE];
                    // SAFETY: a store into a local array of eight.
                    unsafe { _mm256_storeu_ps(t.as_mut_ptr(), *col) };
                    for (s, &y) in t[..len].iter().enumerate() {
                        // SAFETY: sample i0 + s < n of lane base + 8g + j's output.
                        unsafe { *out[base + 8 * g + j].add(i0 + s) = y };
                    }
                }
            }
        }
        i0 += len;
    }
    *y1s = y1;
    *y2s = y2;
    *cv = c;
}

/// What `quad_pass` reads besides the filter state: the block's lanes,
/// each reading a whole audio block, and how their coefficients glide.
#[cfg(target_arch = "x86_64")]
struct Quads<'a, const V: usize> {
    /// Samples in the block, a multiple of four.
    n: usize,
    /// Samples before this one end groups of three that step the coefficients.
    stepped: usize,
    /// The first lane and the end of the used lanes.
    base: usize,
    end: usize,
    out: &'a [*mut f32; MAX_LANES],
    /// Lane base + j's input at `src[j]` (padding lanes read lane `base`'s).
    src: &'a [*const f32; 16],
    /// Each vector's coefficient steps, and which of its lanes take them.
    sv: &'a [[super::lanes4::F64x4; 3]; V],
    mask: &'a [std::arch::x86_64::__m256d; V],
}

/// Every vector of the block through `quad_pass`, two at a time.
///
/// # Safety
/// As for `quad_pass`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn quads<D: Design, const V: usize, const MOVING: bool>(
    q: &Quads<'_, V>,
    cv: &[[super::lanes4::F64x4; 3]; V],
    y1: &mut [super::lanes4::F64x4; V],
    y2: &mut [super::lanes4::F64x4; V],
) {
    // Whether vector v's used lanes all read one signal: each combination
    // of the pair run side by side gets a loop without that test.
    let one = |v: usize| {
        let used = (q.end - q.base).saturating_sub(4 * v).min(4);
        (1..used).all(|j| q.src[4 * v + j] == q.src[4 * v])
    };
    // SAFETY: forwarded contract; v0 + P <= V in every call.
    unsafe {
        if V == 1 {
            if one(0) {
                quad_pass::<D, V, 1, MOVING, 1>(q, 0, cv, y1, y2);
            } else {
                quad_pass::<D, V, 1, MOVING, 0>(q, 0, cv, y1, y2);
            }
        } else {
            for v0 in (0..V).step_by(2) {
                match (one(v0), one(v0 + 1)) {
                    (true, true) => quad_pass::<D, V, 2, MOVING, 3>(q, v0, cv, y1, y2),
                    (true, false) => quad_pass::<D, V, 2, MOVING, 1>(q, v0, cv, y1, y2),
                    (false, true) => quad_pass::<D, V, 2, MOVING, 2>(q, v0, cv, y1, y2),
                    (false, false) => quad_pass::<D, V, 2, MOVING, 0>(q, v0, cv, y1, y2),
                }
            }
        }
    }
}

/// Vectors `v0..v0 + P` of a block of lanes through the whole block, four
/// samples at a time, side by side so that one's recurrence hides behind
/// the other's: the ticks and coefficient steps of `run_tiles` (`MOVING`:
/// some lane's coefficients glide), in the same order within each lane.
///
/// Inputs and outputs move through 4×4 transposes in registers rather than
/// tiles in memory; a vector whose lanes all filter one signal (a synth's
/// filter bank on one source) reads it with one load and four broadcasts;
/// bit p of `ONE` says vector v0 + p is one of those.
///
/// # Safety
/// The CPU has AVX2; q.n % 4 == 0; `q.src[j]`, j < 4 * V, is valid for
/// q.n samples; `q.out[l]`, q.base <= l < q.end, is valid for q.n samples
/// and written through no other reference; v0 + P <= V, and
/// q.base + 4 * V <= MAX_LANES.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn quad_pass<D: Design, const V: usize, const P: usize, const MOVING: bool, const ONE: u8>(
    q: &Quads<'_, V>,
    v0: usize,
    cv: &[[super::lanes4::F64x4; 3]; V],
    y1s: &mut [super::lanes4::F64x4; V],
    y2s: &mut [super::lanes4::F64x4; V],
) {
    use super::lanes4::F64x4;
    use std::arch::x86_64::*;
    let mut c = [cv[v0]; P];
    // Each vector's coefficient steps, -0.0 in the lanes that hold theirs:
    // adding -0.0 leaves every value as it is (a zero's sign included, and
    // coefficients are never signalling NaNs), as the mask of `run_tiles`
    // does, without a blend per step.
    // SAFETY: AVX2 by the caller's contract.
    let mut sv = [[F64x4(unsafe { _mm256_set1_pd(-0.0) }); 3]; P];
    let (mut y1, mut y2) = ([y1s[v0]; P], [y2s[v0]; P]);
    let mut src = [[std::ptr::null::<f32>(); 4]; P];
    let mut dst = [[std::ptr::null_mut::<f32>(); 4]; P];
    // Whether vector p's used lanes read one signal (bit p of `ONE`), and
    // how many are used.
    let one: [bool; P] = std::array::from_fn(|p| ONE >> p & 1 == 1);
    let mut used = [0usize; P];
    for p in 0..P {
        let v = v0 + p;
        c[p] = cv[v];
        if MOVING {
            for kk in 0..3 {
                // SAFETY: AVX2 by the caller's contract.
                sv[p][kk] = F64x4(unsafe { _mm256_blendv_pd(sv[p][kk].0, q.sv[v][kk].0, q.mask[v]) });
            }
        }
        y1[p] = y1s[v];
        y2[p] = y2s[v];
        used[p] = (q.end - q.base).saturating_sub(4 * v).min(4);
        for j in 0..4 {
            src[p][j] = q.src[4 * v + j];
            if j < used[p] {
                dst[p][j] = q.out[q.base + 4 * v + j];
            }
        }
        debug_assert_eq!(one[p], (1..used[p]).all(|j| src[p][j] == src[p][0]));
    }
    // Rows r0..r3 to columns (a 4×4 transpose of floats).
    macro_rules! transpose4 {
        ($r0:expr, $r1:expr, $r2:expr, $r3:expr) => {{
            let (t0, t1) = (_mm_unpacklo_ps($r0, $r1), _mm_unpacklo_ps($r2, $r3));
            let (t2, t3) = (_mm_unpackhi_ps($r0, $r1), _mm_unpackhi_ps($r2, $r3));
            [_mm_movelh_ps(t0, t1), _mm_movehl_ps(t1, t0), _mm_movelh_ps(t2, t3), _mm_movehl_ps(t3, t2)]
        }};
    }
    let mut i = 0;
    // The four samples from i, i % 3 being `$r`: the coefficients step
    // after every sample j with j % 3 == 2 (the end of a group of three;
    // in a block of whole quads every such j lies below `q.stepped`).
    macro_rules! quad {
        ($r:expr) => {{
            let r: usize = $r;
            debug_assert!(!MOVING || i % 3 == r);
            // SAFETY: AVX2 by the caller's contract; samples i..i + 4 <= q.n
            // of each lane's input, and of each used lane's output.
            unsafe {
                let mut x = [[_mm256_setzero_pd(); 4]; P];
                for p in 0..P {
                    if one[p] {
                        let w = _mm256_cvtps_pd(_mm_loadu_ps(src[p][0].add(i)));
                        x[p] = [
                            _mm256_permute4x64_pd::<0x00>(w),
                            _mm256_permute4x64_pd::<0x55>(w),
                            _mm256_permute4x64_pd::<0xAA>(w),
                            _mm256_permute4x64_pd::<0xFF>(w),
                        ];
                    } else {
                        let r = &src[p];
                        let cols = transpose4!(
                            _mm_loadu_ps(r[0].add(i)),
                            _mm_loadu_ps(r[1].add(i)),
                            _mm_loadu_ps(r[2].add(i)),
                            _mm_loadu_ps(r[3].add(i))
                        );
                        x[p] = [
                            _mm256_cvtps_pd(cols[0]),
                            _mm256_cvtps_pd(cols[1]),
                            _mm256_cvtps_pd(cols[2]),
                            _mm256_cvtps_pd(cols[3]),
                        ];
                    }
                }
                let mut y = [[_mm_setzero_ps(); 4]; P];
                for s in 0..4 {
                    for p in 0..P {
                        let (y0, out) = D::tick(F64x4(x[p][s]), &c[p], y1[p], y2[p]);
                        y[p][s] = _mm256_cvtpd_ps(out.0);
                        y2[p] = y1[p];
                        y1[p] = y0;
                    }
                    if MOVING && (r + s) % 3 == 2 {
                        debug_assert!(i + s < q.stepped);
                        for p in 0..P {
                            for kk in 0..3 {
                                c[p][kk] = c[p][kk] + sv[p][kk];
                            }
                        }
                    }
                }
                for p in 0..P {
                    let rows = transpose4!(y[p][0], y[p][1], y[p][2], y[p][3]);
                    if used[p] == 4 {
                        for j in 0..4 {
                            _mm_storeu_ps(dst[p][j].add(i), rows[j]);
                        }
                    } else {
                        for j in 0..used[p] {
                            _mm_storeu_ps(dst[p][j].add(i), rows[j]);
                        }
                    }
                }
            }
            i += 4;
        }};
    }
    if MOVING {
        // Quads in threes, so that where the coefficients step is fixed in
        // each; a block of whole quads ends with at most two more.
        while i + 12 <= q.n {
            quad!(0);
            quad!(1);
            quad!(2);
        }
        while i < q.n {
            if i % 12 == 0 {
                quad!(0);
            } else {
                quad!(1);
            }
        }
    } else {
        while i < q.n {
            quad!(0);
        }
    }
    y1s[v0..v0 + P].copy_from_slice(&y1);
    y2s[v0..v0 + P].copy_from_slice(&y2);
}

const SQRT2_F: f32 = std::f32::consts::SQRT_2;

/// Butterworth low-pass: in, freq.
pub struct LpfDesign;
pub type Lpf = Section<LpfDesign>;

impl Design for LpfDesign {
    const NP: usize = 1;
    const SINGLE: bool = true;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let pfreq = p[0] as f64 * rate.radians_per_sample * 0.5;
        let c = 1.0 / pfreq.tan();
        let c2 = c * c;
        let sqrt2c = c * SQRT2_F as f64;
        let a0 = 1.0 / (1.0 + sqrt2c + c2);
        let b1 = -2.0 * (1.0 - c2) * a0;
        let b2 = -(1.0 - sqrt2c + c2) * a0;
        [a0, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, c[0] * (y0 + T::splat(2.0) * y1 + y2))
    }
}

/// Butterworth high-pass: in, freq.
pub struct HpfDesign;
pub type Hpf = Section<HpfDesign>;

impl Design for HpfDesign {
    const NP: usize = 1;
    const SINGLE: bool = true;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let pfreq = p[0] as f64 * rate.radians_per_sample * 0.5;
        let c = pfreq.tan();
        let c2 = c * c;
        let sqrt2c = c * SQRT2_F as f64;
        let a0 = 1.0 / (1.0 + sqrt2c + c2);
        let b1 = 2.0 * (1.0 - c2) * a0;
        let b2 = -(1.0 - sqrt2c + c2) * a0;
        [a0, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, c[0] * (y0 - T::splat(2.0) * y1 + y2))
    }
}

/// a0, b1, b2 of scsynth's band-pass section at `freq` Hz with bandwidth
/// `rq` (BPF; MidEQ scales a0 by its gain).
fn bandpass_coefs(freq: f32, rq: f32, rate: &RateInfo) -> [f64; 3] {
    let pfreq = freq as f64 * rate.radians_per_sample;
    let pbw = rq as f64 * pfreq * 0.5;
    let c = 1.0 / pbw.tan();
    let d = 2.0 * pfreq.cos();
    let a0 = 1.0 / (1.0 + c);
    let b1 = c * d * a0;
    let b2 = (1.0 - c) * a0;
    [a0, b1, b2]
}

/// Band-pass: in, freq, bandwidth (rq).
pub struct BpfDesign;
pub type Bpf = Section<BpfDesign>;

impl Design for BpfDesign {
    const NP: usize = 2;
    const SINGLE: bool = true;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        bandpass_coefs(p[0], p[1], rate)
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, c[0] * (y0 - y2))
    }
}

/// Band-reject: in, freq, bandwidth (rq). Coefficients are a0, a1, b2.
pub struct BrfDesign;
pub type Brf = Section<BrfDesign>;

impl Design for BrfDesign {
    const NP: usize = 2;
    const SINGLE: bool = true;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let pfreq = p[0] as f64 * rate.radians_per_sample;
        let pbw = p[1] as f64 * pfreq * 0.5;
        let c = pbw.tan();
        let d = 2.0 * pfreq.cos();
        let a0 = 1.0 / (1.0 + c);
        let a1 = -d * a0;
        let b2 = (1.0 - c) * a0;
        [a0, a1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let ay = c[1] * y1;
        let y0 = x - ay - c[2] * y2;
        (y0, c[0] * (y0 + y2) + ay)
    }
}

/// Resonant low-pass: in, freq, rq.
pub struct RlpfDesign;
pub type Rlpf = Section<RlpfDesign>;

impl Design for RlpfDesign {
    const NP: usize = 2;
    const SINGLE: bool = true;
    fn coefs(p: &[f32; 3], rate: &RateInfo, single: bool) -> [f64; 3] {
        let reson = p[1];
        // The block form clamps against a double 0.001, the one-sample form
        // against a float one.
        let qres = if single {
            (if 0.001f32 > reson { 0.001f32 } else { reson }) as f64
        } else if 0.001f64 > reson as f64 {
            0.001f64
        } else {
            reson as f64
        };
        let pfreq = p[0] as f64 * rate.radians_per_sample;
        let d = (pfreq * qres * 0.5).tan();
        let c = (1.0 - d) / (1.0 + d);
        let cosf = pfreq.cos();
        let b1 = (1.0 + c) * cosf;
        let b2 = -c;
        let a0 = (1.0 + c - b1) * 0.25;
        [a0, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = c[0] * x + c[1] * y1 + c[2] * y2;
        (y0, y0 + T::splat(2.0) * y1 + y2)
    }
}

/// Resonant high-pass: in, freq, rq.
pub struct RhpfDesign;
pub type Rhpf = Section<RhpfDesign>;

impl Design for RhpfDesign {
    const NP: usize = 2;
    const SINGLE: bool = true;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let reson = p[1];
        let qres = (if 0.001f32 > reson { 0.001f32 } else { reson }) as f64;
        let pfreq = p[0] as f64 * rate.radians_per_sample;
        let d = (pfreq * qres * 0.5).tan();
        let c = (1.0 - d) / (1.0 + d);
        let cosf = pfreq.cos();
        let b1 = (1.0 + c) * cosf;
        let b2 = -c;
        let a0 = (1.0 + c + b1) * 0.25;
        [a0, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = c[0] * x + c[1] * y1 + c[2] * y2;
        (y0, y0 - T::splat(2.0) * y1 + y2)
    }
}

/// Resonant band-pass with constant gain at the centre: in, freq, rq.
pub struct ResonzDesign;
pub type Resonz = Section<ResonzDesign>;

impl Design for ResonzDesign {
    const NP: usize = 2;
    const SINGLE: bool = false;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let ffreq = p[0] as f64 * rate.radians_per_sample;
        let b = ffreq * p[1] as f64;
        let r = 1.0 - b * 0.5;
        let two_r = 2.0 * r;
        let r2 = r * r;
        let cost = (two_r * ffreq.cos()) / (1.0 + r2);
        [(1.0 - r2) * 0.5, two_r * cost, -r2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, c[0] * (y0 - y2))
    }
}

/// Ringing filter: in, freq, decay time (60 dB) of its impulse response.
pub struct RingzDesign;
pub type Ringz = Section<RingzDesign>;

/// Pole pair at `ffreq` radians whose impulse response decays 60 dB in `time`.
fn ring_coefs(ffreq: f64, time: f32, sample_rate: f64) -> (f64, f64) {
    let r = decay_coef(time, sample_rate);
    let two_r = 2.0 * r;
    let r2 = r * r;
    let cost = (two_r * ffreq.cos()) / (1.0 + r2);
    (two_r * cost, -r2)
}

impl Design for RingzDesign {
    const NP: usize = 2;
    const SINGLE: bool = false;
    const INIT: [f64; 3] = [0.5, 0.0, 0.0];
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let ffreq = p[0] as f64 * rate.radians_per_sample;
        let (b1, b2) = ring_coefs(ffreq, p[1], rate.sample_rate);
        [0.5, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, c[0] * (y0 - y2))
    }
}

/// Two-pole resonator: in, freq, radius.
pub struct TwoPoleDesign;
pub type TwoPoleFilter = Section<TwoPoleDesign>;

impl Design for TwoPoleDesign {
    const NP: usize = 2;
    const SINGLE: bool = false;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let reson = p[1];
        // 2 * reson and reson * reson are single-precision products.
        let b1 = (2.0 * reson) as f64 * (p[0] as f64 * rate.radians_per_sample).cos();
        let b2 = -(reson * reson) as f64;
        [0.0, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, y0)
    }
}

/// Two-zero notch: in, freq, radius. The state is the input history.
pub struct TwoZeroDesign;
pub type TwoZeroFilter = Section<TwoZeroDesign>;

impl Design for TwoZeroDesign {
    const NP: usize = 2;
    const SINGLE: bool = false;
    const ZAP: bool = false;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        let reson = p[1];
        let b1 = (-2.0 * reson) as f64 * (p[0] as f64 * rate.radians_per_sample).cos();
        let b2 = (reson * reson) as f64;
        [0.0, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], x1: T, x2: T) -> (T, T) {
        (x, x + c[1] * x1 + c[2] * x2)
    }
}

/// Formlet: the difference of two ringing sections (decay minus attack),
/// a resonance with a smooth attack. Inputs: in, freq, attack, decay.
pub struct Formlet {
    freq: f32,
    attack: f32,
    decay: f32,
    /// Decay section b1, b2, then attack section b1, b2.
    b: [f64; 4],
    y01: f64,
    y02: f64,
    y11: f64,
    y12: f64,
    single: bool,
}

impl Formlet {
    fn coefs(&self, freq: f32, attack: f32, decay: f32, rate: &RateInfo) -> [f64; 4] {
        let ffreq = freq as f64 * rate.radians_per_sample;
        let (b01, b02) = ring_coefs(ffreq, decay, rate.sample_rate);
        let (b11, b12) = ring_coefs(ffreq, attack, rate.sample_rate);
        [b01, b02, b11, b12]
    }

    fn params(io: &Wires<'_>) -> (f32, f32, f32) {
        (crate::common::signal::in0(io, 1), crate::common::signal::in0(io, 2), crate::common::signal::in0(io, 3))
    }

    fn next_block(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        let inp = In::new(io, 0);
        let (freq, attack, decay) = Self::params(io);
        let out = io.out(0);
        let (mut y01, mut y02, mut y11, mut y12) = (self.y01, self.y02, self.y11, self.y12);
        let mut b = self.b;
        let mut step = |i: usize, b: &[f64; 4]| {
            let ain = inp.at(i) as f64;
            let y00 = ain + b[0] * y01 + b[1] * y02;
            let y10 = ain + b[2] * y11 + b[3] * y12;
            out[i] = (0.25 * ((y00 - y02) - (y10 - y12))) as f32;
            y02 = y01;
            y01 = y00;
            y12 = y11;
            y11 = y10;
        };
        let lp = Loops::of(rate);
        if freq != self.freq || decay != self.decay || attack != self.attack {
            let target = self.coefs(freq, attack, decay, rate);
            lp.run(&mut b, Some(&target), &mut step);
            self.freq = freq;
            self.attack = attack;
            self.decay = decay;
            self.b = target;
        } else {
            lp.run(&mut b, None, &mut step);
        }
        self.y01 = y01;
        self.y02 = y02;
        self.y11 = y11;
        self.y12 = y12;
    }

    fn next_single(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        let ain = crate::common::signal::in0(io, 0) as f64;
        let (freq, attack, decay) = Self::params(io);
        if freq != self.freq || decay != self.decay || attack != self.attack {
            self.b = self.coefs(freq, attack, decay, rate);
            self.freq = freq;
            self.attack = attack;
            self.decay = decay;
        }
        let b = self.b;
        let y00 = ain + b[0] * self.y01 + b[1] * self.y02;
        let y10 = ain + b[2] * self.y11 + b[3] * self.y12;
        io.out(0)[0] = (0.25 * ((y00 - self.y02) - (y10 - self.y12))) as f32;
        self.y02 = self.y01;
        self.y01 = y00;
        self.y12 = self.y11;
        self.y11 = y10;
    }
}

impl Construct for Formlet {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut f = Formlet {
            freq: f32::NAN,
            attack: f32::NAN,
            decay: f32::NAN,
            b: [0.0; 4],
            y01: 0.0,
            y02: 0.0,
            y11: 0.0,
            y12: 0.0,
            single: cx.rate.buf_length == 1,
        };
        f.next_single(io, cx.rate);
        f
    }
}

impl Unit for Formlet {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.single {
            self.next_single(io, cx.rate);
        } else {
            self.next_block(io, cx.rate);
        }
    }
}

/// Parametric equaliser band: in, freq, rq, db. A band-pass section whose
/// output, scaled by the gain minus one, is added to the input.
pub struct MidEqDesign;
pub type MidEq = Section<MidEqDesign>;

impl Design for MidEqDesign {
    const NP: usize = 3;
    const SINGLE: bool = false;
    fn coefs(p: &[f32; 3], rate: &RateInfo, _single: bool) -> [f64; 3] {
        // The gain minus one is a single-precision difference.
        let amp = (crate::common::math::sc_dbamp(p[2]) - 1.0) as f64;
        let [a0, b1, b2] = bandpass_coefs(p[0], p[1], rate);
        [a0 * amp, b1, b2]
    }
    #[inline(always)]
    fn tick<T: Sample>(x: T, c: &[T; 3], y1: T, y2: T) -> (T, T) {
        let y0 = x + c[1] * y1 + c[2] * y2;
        (y0, x + c[0] * (y0 - y2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::{Rate, WireRef, NO_UNIT};

    /// A bank of Ringz lanes, some sharing a source and some not, computed
    /// by the lane kernel equals each unit run alone, sample for sample and
    /// in its final state: blocks whose coefficients glide and blocks
    /// whose coefficients hold, lane counts that leave vectors part used,
    /// and a block length the quad path does not take.
    #[test]
    fn ringz_lanes_sharing_sources_match_the_units_run_alone() {
        // Lane l reads source SRC[l]: two banks of six on one source each,
        // then lanes with sources of their own.
        const SRC: [usize; MAX_LANES] = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 3, 4, 2];
        for (k, n) in [(16usize, 64usize), (11, 64), (6, 64), (3, 64), (16, 66), (9, 8)] {
            let rate = RateInfo::full(48000.0, n);
            // Wire array: five sources, each lane's two parameters, each lane's output.
            let params_at = 5 * n;
            let out_at = params_at + 2 * MAX_LANES;
            let mut wires = vec![0.0f32; out_at + MAX_LANES * n];
            let mut want_wires = wires.clone();
            let audio = |offset: usize| WireRef { offset: offset as u32, rate: Rate::Audio, from_unit: 0 };
            let value = |offset: usize| WireRef { offset: offset as u32, rate: Rate::Control, from_unit: NO_UNIT };
            let ins: Vec<[WireRef; 3]> =
                (0..k).map(|l| [audio(SRC[l] * n), value(params_at + 2 * l), value(params_at + 2 * l + 1)]).collect();
            let outs: Vec<[WireRef; 1]> = (0..k).map(|l| [audio(out_at + l * n)]).collect();
            let new_unit = || Section::<RingzDesign> {
                params: [f32::NAN; 3],
                c: RingzDesign::INIT,
                s1: 0.0,
                s2: 0.0,
                single: false,
                _design: PhantomData,
            };
            let mut units: Vec<Section<RingzDesign>> = (0..k).map(|_| new_unit()).collect();
            let mut alone: Vec<Section<RingzDesign>> = (0..k).map(|_| new_unit()).collect();
            let mut seed = 12345u32;
            for block in 0..4 {
                for w in [&mut wires, &mut want_wires] {
                    for l in 0..k {
                        // A new frequency for lane 2 in block 2: its coefficients glide.
                        let moved = if block >= 2 && l == 2 { 90.0 } else { 0.0 };
                        w[params_at + 2 * l] = 150.0 + 37.0 * l as f32 + moved;
                        w[params_at + 2 * l + 1] = 0.2 + 0.01 * l as f32;
                    }
                }
                for i in 0..5 * n {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let x = (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
                    wires[i] = x;
                    want_wires[i] = x;
                }
                {
                    let base = wires.as_mut_ptr();
                    let mut lanes = Lanes::new();
                    let mut secs: [*mut Section<RingzDesign>; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
                    for l in 0..k {
                        // SAFETY: every wire named lies inside `wires`, whose
                        // outputs are disjoint; nothing else touches it meanwhile.
                        lanes.ios[l] = Some(unsafe { Wires::new(base, base, &ins[l], &outs[l], n, n) });
                        secs[l] = &mut units[l];
                    }
                    lanes.len = k;
                    // SAFETY: distinct units, lane l's wires are unit l's.
                    unsafe { section_lanes_of::<RingzDesign>(&secs, &mut lanes, &rate) };
                }
                let want_base = want_wires.as_mut_ptr();
                for l in 0..k {
                    // SAFETY: as above, one unit's wires at a time.
                    let mut io = unsafe { Wires::new(want_base, want_base, &ins[l], &outs[l], n, n) };
                    alone[l].run(&mut io, &rate);
                }
                for l in 0..k {
                    for i in 0..n {
                        let (got, want) = (wires[out_at + l * n + i], want_wires[out_at + l * n + i]);
                        assert_eq!(got.to_bits(), want.to_bits(), "{k} lanes, n {n}, block {block}, lane {l}, sample {i}");
                    }
                    assert_eq!((units[l].s1.to_bits(), units[l].s2.to_bits()), (alone[l].s1.to_bits(), alone[l].s2.to_bits()));
                }
            }
        }
    }
}
