//! The auto-tuner of paper 003: measures on this machine what one FDL costs
//! at each partition size (the transforms, and one partition's
//! multiply-add), then picks the layout of least time per block among those
//! that meet their deadlines.
//!
//! A layout is its list of sizes, and a level's offset depends only on its
//! own size (`2M − N`, see `nupc`), so a level's count, and hence its cost,
//! depends only on its size and the next one: the best layout is a shortest
//! path over the sizes (the paper's dynamic programming, exact here), with
//! measured edge costs. Each level's work must fit in half its period
//! (level 0: half a block), the deadline constraint with room for other
//! work. On one CPU the layout of least total time wins; when the task
//! threads have other CPUs than the thread that runs the synths, the
//! figure is the larger of the head's time and the total over the CPUs
//! (`LayoutCost::score`), which moves work from the head into tasks, and
//! no period class may take more than that either: one thread serves a
//! class for every instance. The score is the busiest thread's or CPU's
//! time per block for one instance, so `n` instances fit while `n` times it
//! fits a block: the layout that minimises it is the one that meets every
//! deadline with the most instances running, whatever their number now.
//! Results are kept per (block size, response length, CPUs).

use super::nupc::{cmadd, Layout, NupcError, MAX_LEVELS, MAX_PARTITION};
use realfft::num_complex::Complex;
use realfft::RealFftPlanner;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Fraction of a level's period its work may take.
const DEADLINE_SHARE: f64 = 0.5;

/// Measured seconds at one partition size: transform pair, one partition's multiply-add.
#[derive(Clone, Copy, Debug)]
struct Costs {
    fft: f64,
    part: f64,
}

fn measure(m: usize) -> Costs {
    let bins = m + 1;
    let mut planner = RealFftPlanner::<f32>::new();
    let fwd = planner.plan_fft_forward(2 * m);
    let inv = planner.plan_fft_inverse(2 * m);
    let mut frame: Vec<f32> = (0..2 * m).map(|i| ((i * 7919) % 1000) as f32 * 1e-3).collect();
    let mut spec = fwd.make_output_vec();
    let mut scratch = vec![Complex::new(0.0f32, 0.0); fwd.get_scratch_len().max(inv.get_scratch_len())];
    // Enough distinct partitions that the multiply-add streams from memory as in use.
    let parts = (1 << 22) / (4 * bins) + 1;
    let parts = parts.clamp(2, 32);
    let x = vec![0.5f32; parts * bins];
    let h = vec![0.25f32; parts * bins];
    let mut acc_re = vec![0.0f32; bins];
    let mut acc_im = vec![0.0f32; bins];
    let reps = (1 << 16) / m + 3;
    let mut best_fft = f64::MAX;
    let mut best_part = f64::MAX;
    for _ in 0..reps.min(40) {
        let t = Instant::now();
        let _ = fwd.process_with_scratch(&mut frame, &mut spec, &mut scratch);
        spec[0].im = 0.0;
        spec[m].im = 0.0;
        let _ = inv.process_with_scratch(&mut spec, &mut frame, &mut scratch);
        best_fft = best_fft.min(t.elapsed().as_secs_f64());
        for v in frame.iter_mut() {
            *v *= 1e-3;
        }
        let t = Instant::now();
        for p in 0..parts {
            let r = p * bins..(p + 1) * bins;
            cmadd(&mut acc_re, &mut acc_im, &x[r.clone()], &x[r.clone()], &h[r.clone()], &h[r]);
        }
        best_part = best_part.min(t.elapsed().as_secs_f64() / parts as f64);
    }
    std::hint::black_box((&acc_re, &acc_im, &frame));
    Costs { fft: best_fft, part: best_part }
}

/// Costs per size, measured once per process.
fn costs(m: usize) -> Costs {
    static MEASURED: OnceLock<Mutex<HashMap<usize, Costs>>> = OnceLock::new();
    let map = MEASURED.get_or_init(Default::default);
    if let Some(c) = map.lock().ok().and_then(|m2| m2.get(&m).copied()) {
        return c;
    }
    let c = measure(m);
    // Two threads may measure the same size at once: the first result
    // stays, so every layout of the process is weighed with the same costs.
    match map.lock() {
        Ok(mut m2) => *m2.entry(m).or_insert(c),
        Err(_) => c,
    }
}

/// The sizes the tuner may pick for a response of `ir_len` at `block`:
/// every level it can reach.
pub fn candidate_sizes(block: usize, ir_len: usize) -> Vec<usize> {
    let mut sizes = vec![block];
    let mut m = block * 2;
    while m <= MAX_PARTITION && 2 * m - block < ir_len {
        sizes.push(m);
        m *= 2;
    }
    sizes
}

/// What a layout costs per block, as the tuner measures it: the head
/// (level 0, in the unit on the thread that runs the synth), the later
/// levels (the task threads), and the largest of those levels (one period
/// class, which one thread serves for every instance), in seconds per
/// block of one instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutCost {
    pub head: f64,
    pub tasks: f64,
    pub class: f64,
}

impl LayoutCost {
    /// The figure the tuner minimises with the task threads spread over
    /// `cpus` CPUs: the time per block of the busiest thread or CPU for one
    /// instance, so that `n` instances meet every deadline while `n` times
    /// it fits the block. On one CPU everything shares it: the sum (the
    /// periods are powers of two, so rate-monotonic order meets them all
    /// while the sum fits). On several, the thread that runs the synths
    /// must fit every head in its block, each period class must fit its
    /// period on its one thread, and the whole work must fit the CPUs: the
    /// largest of the three bounds decides (paper 003's PE moves work off
    /// the audio callback for that reason).
    pub fn score(&self, cpus: usize) -> f64 {
        if cpus <= 1 {
            self.head + self.tasks
        } else {
            self.head.max(self.class).max((self.head + self.tasks) / cpus as f64)
        }
    }
}

/// Picks the layout of least measured time per block whose levels meet
/// their deadlines, with at most `max_levels` levels (`sizes` of the
/// result: at most `max_levels - 1`), for task threads on `cpus` CPUs (see
/// [`LayoutCost::score`]; 1 minimises the total). Blocks last
/// `block / sample_rate`.
pub fn tune(block: usize, ir_len: usize, sample_rate: f64, max_levels: usize, cpus: usize) -> Result<Layout, NupcError> {
    Ok(tune_with_cost(block, ir_len, sample_rate, max_levels, cpus)?.0)
}

/// The measured time per block of each level at each size for one response:
/// what the tuner and [`layout_cost`] read.
struct Levels {
    block: usize,
    ir_len: usize,
    sizes: Vec<usize>,
    costs: Vec<Costs>,
    period: f64,
}

impl Levels {
    fn new(block: usize, ir_len: usize, sample_rate: f64) -> Levels {
        let sizes = candidate_sizes(block, ir_len);
        let costs = sizes.iter().map(|&m| costs(m)).collect();
        Levels { block, ir_len, sizes, costs, period: block as f64 / sample_rate.max(1.0) }
    }

    /// Where the level of size index `i` starts in the response.
    fn offset(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            2 * self.sizes[i] - self.block
        }
    }

    /// Partitions of the level at size index `i` followed by the one at `next` (None: it is the last).
    fn count(&self, i: usize, next: Option<usize>) -> usize {
        match next {
            Some(j) => (self.offset(j) - self.offset(i)) / self.sizes[i],
            None => (self.ir_len - self.offset(i)).div_ceil(self.sizes[i]),
        }
    }

    /// Time per block of the level at size index `i` with `count`
    /// partitions, if one run of it fits half its period (the deadline
    /// constraint, with room for other work).
    fn cost(&self, i: usize, count: usize) -> Option<f64> {
        let k = self.sizes[i] / self.block;
        let t = self.costs[i].fft + count as f64 * self.costs[i].part;
        (t <= DEADLINE_SHARE * k as f64 * self.period).then_some(t / k as f64)
    }
}

/// What the layout of later sizes `sizes` would cost for a response of
/// `ir_len` at `block`, as the tuner weighs it (None: a size the tuner
/// cannot use, or a level that misses its deadline).
pub fn layout_cost(block: usize, ir_len: usize, sample_rate: f64, sizes: &[usize]) -> Option<LayoutCost> {
    let lv = Levels::new(block, ir_len, sample_rate);
    let mut at = vec![0];
    for m in sizes {
        at.push(lv.sizes.iter().position(|s| s == m)?);
    }
    if at.windows(2).any(|w| w[1] <= w[0]) || at.iter().any(|&i| lv.offset(i) >= ir_len) {
        return None;
    }
    let mut cost = LayoutCost { head: 0.0, tasks: 0.0, class: 0.0 };
    for (n, &i) in at.iter().enumerate() {
        let c = lv.cost(i, lv.count(i, at.get(n + 1).copied()))?;
        if n == 0 {
            cost.head = c;
        } else {
            cost.tasks += c;
            cost.class = cost.class.max(c);
        }
    }
    Some(cost)
}

/// As [`tune`], with the measured cost of the layout picked.
pub fn tune_with_cost(
    block: usize,
    ir_len: usize,
    sample_rate: f64,
    max_levels: usize,
    cpus: usize,
) -> Result<(Layout, LayoutCost), NupcError> {
    let lv = Levels::new(block, ir_len, sample_rate);
    let n = lv.sizes.len();
    let levels = max_levels.clamp(1, MAX_LEVELS);
    // With task threads on other CPUs the busiest class bounds the
    // channels too, a maximum the shortest path cannot carry: it is
    // searched once per bound on the classes (every time a task level can
    // take), each search keeping to the levels within it. Exact, since the
    // best layout is the least total under its own largest class.
    let mut caps = vec![f64::INFINITY];
    if cpus > 1 {
        for i in 1..n {
            for next in (i + 1..n).map(Some).chain([None]) {
                if let Some(c) = lv.cost(i, lv.count(i, next)) {
                    caps.push(c);
                }
            }
        }
    }
    let mut end: Option<(f64, LayoutCost, usize, Vec<Vec<Tail>>)> = None;
    for &cap in &caps {
        let tail = tails(&lv, levels, cap);
        // The head (level 0) with each possible next size, and the best tail after it.
        let mut consider = |cost: LayoutCost, next: usize| {
            let s = cost.score(cpus);
            if s.is_finite() && end.as_ref().is_none_or(|e| s < e.0) {
                end = Some((s, cost, next, tail.clone()));
            }
        };
        if let Some(h) = lv.cost(0, lv.count(0, None)) {
            consider(LayoutCost { head: h, tasks: 0.0, class: 0.0 }, usize::MAX);
        }
        for j in 1..n {
            if lv.offset(j) >= ir_len || levels < 2 {
                break;
            }
            let t = tail[levels - 1][j];
            if let (Some(h), true) = (lv.cost(0, lv.count(0, Some(j))), t.total.is_finite()) {
                consider(LayoutCost { head: h, tasks: t.total, class: t.class }, j);
            }
        }
    }
    let Some((_, cost, mut next, tail)) = end else {
        // Nothing meets the deadlines on this machine: the cheapest plain
        // uniform layout, whose level 0 at least keeps the latency at zero.
        let layout = Layout::from_sizes(block, ir_len, &[])?;
        let head = (lv.costs[0].fft + layout.levels[0].count as f64 * lv.costs[0].part).max(0.0);
        return Ok((layout, LayoutCost { head, tasks: 0.0, class: 0.0 }));
    };
    let mut picked = Vec::new();
    let mut d = levels - 1;
    while next != usize::MAX {
        picked.push(lv.sizes[next]);
        next = tail[d][next].next;
        d = d.saturating_sub(1);
    }
    Ok((Layout::from_sizes(block, ir_len, &picked)?, cost))
}

/// The least total time of the levels from one size to the end.
#[derive(Clone, Copy, Debug)]
struct Tail {
    total: f64,
    /// The largest level among them.
    class: f64,
    /// The size index of the level after this one (usize::MAX: none).
    next: usize,
}

/// `tails[d][i]`: the least total of the levels from size index `i` (a
/// level) to the end, with at most `d` of them, each costing at most `cap`
/// per block. The paper's dynamic programming, exact here since a level's
/// cost depends only on its size and the next one's.
fn tails(lv: &Levels, levels: usize, cap: f64) -> Vec<Vec<Tail>> {
    let n = lv.sizes.len();
    let none = Tail { total: f64::INFINITY, class: 0.0, next: usize::MAX };
    let within = |c: Option<f64>| c.filter(|&c| c <= cap);
    let mut tail = vec![vec![none; n]; levels + 1];
    for d in 1..=levels {
        for i in (0..n).rev() {
            if lv.offset(i) >= lv.ir_len {
                continue;
            }
            let mut best = none;
            if let Some(t) = within(lv.cost(i, lv.count(i, None))) {
                best = Tail { total: t, class: t, next: usize::MAX };
            }
            for j in i + 1..n {
                if lv.offset(j) >= lv.ir_len {
                    break;
                }
                let rest = tail[d - 1][j];
                if !rest.total.is_finite() {
                    continue;
                }
                if let Some(t) = within(lv.cost(i, lv.count(i, Some(j)))) {
                    if t + rest.total < best.total {
                        best = Tail { total: t + rest.total, class: t.max(rest.class), next: j };
                    }
                }
            }
            tail[d][i] = best;
        }
    }
    tail
}

/// Block size, response length, CPUs.
type LayoutKey = (usize, usize, usize);

/// The tuned layout for `block` and `ir_len` with task threads on `cpus`
/// CPUs, measured once and then kept.
pub fn tuned_layout(block: usize, ir_len: usize, sample_rate: f64, cpus: usize) -> Result<Layout, NupcError> {
    static CACHE: OnceLock<Mutex<HashMap<LayoutKey, Layout>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let cpus = cpus.max(1);
    if let Some(l) = cache.lock().ok().and_then(|c| c.get(&(block, ir_len, cpus)).cloned()) {
        return Ok(l);
    }
    let layout = tune(block, ir_len, sample_rate, MAX_LEVELS, cpus)?;
    if let Ok(mut c) = cache.lock() {
        c.insert((block, ir_len, cpus), layout.clone());
    }
    Ok(layout)
}
