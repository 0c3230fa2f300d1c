//! Whether a parallel group runs on several threads or on one: whichever
//! its recent blocks ran faster on.
//!
//! Handing a group to the helpers costs a few microseconds (waking them,
//! dividing the items, merging bus writes), and a helper that the system
//! pre-empts in the middle of an item keeps the block waiting until it runs
//! again. A small group, or any group on a machine whose other core is busy,
//! can therefore take longer on two threads than on one. Both ways render
//! the same samples, so the engine may pick either block by block: it
//! measures both and keeps the faster, looking again at the other now and
//! then (more rarely each time), so that a group that grows, or a machine
//! that calms down, gets its threads back.
//!
//! A way's cost must see what the threads cost without drowning in what a
//! busy machine does to every block. The thread that runs blocks may be
//! pre-empted for milliseconds in any block, whichever way it runs: that
//! is the same for both ways, and a mean over a few dozen blocks is mostly
//! made of it, so a way's typical block is its median, which leaves such
//! stalls out. What only the threads cost is the time the block's thread
//! waits for the others, a helper pre-empted in the middle of an item
//! above all: rare, long, and paid in full by the render, so it counts by
//! its mean. A spread block's cost is thus the median of its time less its
//! wait, plus the mean wait; a one-thread block has no wait.
//!
//! The choice leans to one thread: the threads must be clearly faster to
//! be taken (`TO_SPREAD`), and lose them as soon as they are not faster
//! (`TO_ONE`), so that noise left in the measurements costs at most a few
//! percent of the gain, never a loss against one thread. The chosen way is
//! measured over its stretch between two looks (its last `SAMPLES` blocks
//! for the median), the other over a probe that grows with the stretch.
//!
//! One probe can be unlucky: a busy spell that slows the one-thread probe
//! would keep the threads, and the next look comes only after a stretch
//! twice as long. A look therefore takes the one-thread way's cost as the
//! lower of its last two measurements (a stall only ever adds time), so
//! that one unlucky measurement of it never keeps or gives the threads;
//! the lean is to one thread, whose cost is that of `-T 1`.
//!
//! A one-thread stretch's blocks are not timed (`keeps_one`), no clock
//! read, but for its last `TIMED` blocks, which measure it for the next
//! look.

/// Blocks of the other way in a probe, at least (after one left out: the
/// first block of a run warms the caches of the other way).
const PROBE: u32 = 16;
/// Blocks between two looks at the other way: from `FIRST_INTERVAL`,
/// doubled at every look, up to `MAX_INTERVAL`; a probe lasts a
/// thirty-second of the interval (at least `PROBE`): the worse way costs
/// about 3 % of the blocks.
const FIRST_INTERVAL: u32 = 32;
const MAX_INTERVAL: u32 = 4096;
/// Blocks whose times the median is taken over: the most recent ones.
const SAMPLES: usize = 64;
/// Blocks at the end of a one-thread stretch that are timed (after one
/// left out), the others not.
const TIMED: u32 = PROBE + 1;
/// The threads are taken when they cost less than this share of one
/// thread's block; one thread is taken back when it costs less than this
/// share of the threads' (hysteresis between the two).
const TO_SPREAD: f64 = 0.92;
const TO_ONE: f64 = 1.0;

/// How a group's block runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// On the executor's threads.
    Spread,
    /// On the calling thread, children in order.
    One,
}

impl Way {
    fn other(self) -> Way {
        match self {
            Way::Spread => Way::One,
            Way::One => Way::Spread,
        }
    }
}

/// The blocks of one stretch or probe: the last `SAMPLES` times less
/// their waits, and the waits' sum.
#[derive(Clone, Debug)]
struct Tally {
    busy: [u32; SAMPLES],
    /// Blocks counted.
    n: u64,
    wait: u64,
}

impl Tally {
    fn new() -> Tally {
        Tally { busy: [0; SAMPLES], n: 0, wait: 0 }
    }

    fn add(&mut self, ns: u64, wait_ns: u64) {
        let wait_ns = wait_ns.min(ns);
        self.busy[(self.n % SAMPLES as u64) as usize] = (ns - wait_ns).min(u32::MAX as u64) as u32;
        self.n += 1;
        self.wait += wait_ns;
    }

    /// Median time less wait, plus mean wait (ns).
    fn cost(&self) -> u64 {
        let k = (self.n as usize).min(SAMPLES);
        if k == 0 {
            return 0;
        }
        let mut busy = self.busy;
        let (_, median, _) = busy[..k].select_nth_unstable(k / 2);
        *median as u64 + self.wait / self.n
    }
}

/// One parallel group's choice and the measurements behind it.
#[derive(Clone, Debug)]
pub struct Chooser {
    /// The way blocks run between looks.
    chosen: Way,
    /// Whether the other way is being tried (a probe) rather than the
    /// chosen one run (a stretch), and the blocks left of either.
    probing: bool,
    left: u32,
    /// The first block of a stretch or probe is not counted.
    warm: bool,
    tally: Tally,
    /// Cost (ns, see the module docs) of the chosen way over its last
    /// stretch, and of the spread way when last measured.
    chosen_cost: Option<u64>,
    spread_cost: Option<u64>,
    /// Cost of the one-thread way when last measured (a stretch or a
    /// probe), while the group's size holds.
    one_cost: Option<u64>,
    interval: u32,
    /// Whether a look has chosen a way yet (the first stretch runs on the
    /// threads, without having been chosen).
    settled: bool,
    /// Work items of the group when it was last measured.
    items: usize,
    /// Choices made that changed the way, for statistics and tests.
    pub switches: u64,
}

impl Default for Chooser {
    fn default() -> Self {
        Chooser::new()
    }
}

impl Chooser {
    /// A chooser that starts with a stretch on the threads.
    pub fn new() -> Chooser {
        Chooser {
            chosen: Way::Spread,
            probing: false,
            left: FIRST_INTERVAL,
            warm: true,
            tally: Tally::new(),
            chosen_cost: None,
            spread_cost: None,
            one_cost: None,
            interval: FIRST_INTERVAL,
            settled: false,
            items: 0,
            switches: 0,
        }
    }

    /// Forgets everything measured (a different group).
    pub fn reset(&mut self) {
        let switches = self.switches;
        *self = Chooser::new();
        self.switches = switches;
    }

    /// Notes the group's size in work items: when it has doubled or halved
    /// since the last measurement, the next look comes soon and looks come
    /// often again (the current choice holds meanwhile); a voice more or
    /// less does not.
    pub fn note_items(&mut self, items: usize) {
        if items > 2 * self.items || 2 * items < self.items {
            self.items = items;
            self.interval = FIRST_INTERVAL;
            self.one_cost = None;
            if !self.probing {
                self.left = self.left.min(FIRST_INTERVAL);
            }
        }
    }

    /// The way to run this block. `budget_ns`: in real time, the
    /// one-thread way is not tried when the spread way's blocks, times the
    /// thread count, would pass it (a share of the period).
    pub fn way(&self, threads: usize, budget_ns: Option<u64>) -> Way {
        if !self.probing {
            return self.chosen;
        }
        let other = self.chosen.other();
        if other == Way::One {
            if let (Some(budget), Some(spread)) = (budget_ns, self.spread_cost) {
                if spread.saturating_mul(threads as u64) > budget {
                    return Way::Spread;
                }
            }
        }
        other
    }

    /// Notes how long a block run `way` took (ns), and how much of it the
    /// block's thread waited for the others (`Executor::last_wait`; 0 on
    /// one thread).
    pub fn record(&mut self, way: Way, ns: u64, wait_ns: u64) {
        let expected = if self.probing { self.chosen.other() } else { self.chosen };
        if way != expected {
            // The budget kept the one-thread way from being tried.
            self.interval = (self.interval * 2).min(MAX_INTERVAL);
            self.start_stretch();
            return;
        }
        if self.warm {
            self.warm = false;
        } else {
            self.tally.add(ns, wait_ns);
        }
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            return;
        }
        let cost = self.tally.cost();
        if way == Way::Spread {
            self.spread_cost = Some(cost);
        }
        if !self.probing {
            self.end_stretch();
            return;
        }
        let Some(chosen_cost) = self.chosen_cost else {
            self.start_stretch();
            return;
        };
        let (spread, one) = if way == Way::Spread { (cost, chosen_cost) } else { (chosen_cost, cost) };
        // One thread's cost: the lower of its last two measurements.
        let one = match self.one_cost.replace(one) {
            Some(before) => one.min(before),
            None => one,
        };
        // The threads are kept while not slower, taken only when clearly
        // faster; the first look takes them as if from one thread.
        let keep_spread = self.chosen == Way::Spread && self.settled;
        let spread_wins = if keep_spread {
            (one as f64) >= spread as f64 * TO_ONE
        } else {
            (spread as f64) < one as f64 * TO_SPREAD
        };
        let best = if spread_wins { Way::Spread } else { Way::One };
        if best != self.chosen {
            // The stretch to come compares with this look's cost of its
            // way until it has measured its own.
            self.chosen = best;
            self.chosen_cost = Some(if best == Way::One { one } else { spread });
            self.switches += 1;
        }
        self.settled = true;
        self.interval = (self.interval * 2).min(MAX_INTERVAL);
        self.start_stretch();
    }

    /// Whether this block runs on one thread, untimed: a one-thread
    /// stretch, but for its last `TIMED` blocks.
    pub fn keeps_one(&self) -> bool {
        !self.probing && self.chosen == Way::One && self.left > TIMED
    }

    /// Notes a block of a one-thread stretch that ran without being timed
    /// (`keeps_one`, or the jobs were edited). The stretch's cost is then
    /// what its timed blocks measured, or, with none, the last cost
    /// measured.
    pub fn skip_one(&mut self) {
        self.left = self.left.saturating_sub(1);
        if self.left == 0 {
            self.end_stretch();
        }
    }

    /// Ends the chosen way's stretch: its cost noted, a probe of the other
    /// way starts.
    fn end_stretch(&mut self) {
        if self.tally.n > 0 || self.chosen_cost.is_none() {
            self.chosen_cost = Some(self.tally.cost());
        }
        self.probing = true;
        self.left = 1 + (self.interval / 32).max(PROBE);
        self.warm = true;
        self.tally = Tally::new();
    }

    fn start_stretch(&mut self) {
        self.probing = false;
        self.left = self.interval;
        self.warm = true;
        self.tally = Tally::new();
    }

    /// The way blocks run between looks.
    pub fn chosen(&self) -> Way {
        self.chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c_budget(_: &Chooser) -> Option<u64> {
        BUDGET.with(|b| b.get())
    }

    thread_local! {
        static BUDGET: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    }

    /// Runs `blocks` blocks where spread blocks take `spread` ns and
    /// one-thread blocks `one` ns; returns the blocks run each way.
    fn run(c: &mut Chooser, blocks: usize, spread: u64, one: u64) -> [usize; 2] {
        let mut n = [0, 0];
        for _ in 0..blocks {
            let w = c.way(2, c_budget(c));
            n[w as usize] += 1;
            c.record(w, if w == Way::Spread { spread } else { one }, 0);
        }
        n
    }

    /// One block as the engine runs it: left untimed while the chooser keeps
    /// one thread without measuring, else run the way it picks, taking
    /// `ns(chooser, way)` ns; counted in `n`.
    fn block(c: &mut Chooser, n: &mut [usize; 2], ns: impl FnOnce(&Chooser, Way) -> u64) {
        if c.keeps_one() {
            n[Way::One as usize] += 1;
            c.skip_one();
            return;
        }
        let w = c.way(2, None);
        n[w as usize] += 1;
        let t = ns(c, w);
        c.record(w, t, 0);
    }

    #[test]
    fn a_group_that_runs_faster_on_one_thread_stays_there_but_for_rare_looks() {
        let mut c = Chooser::new();
        let n = run(&mut c, 20_000, 30_000, 20_000);
        assert_eq!(c.chosen(), Way::One);
        assert!(n[Way::Spread as usize] < 20_000 / 25, "spread blocks: {n:?}");
    }

    #[test]
    fn a_group_that_gains_from_threads_keeps_them_but_for_rare_looks() {
        let mut c = Chooser::new();
        let n = run(&mut c, 20_000, 12_000, 20_000);
        assert_eq!(c.chosen(), Way::Spread);
        assert!(n[Way::One as usize] < 20_000 / 25, "one-thread blocks: {n:?}");
    }

    #[test]
    fn untimed_one_thread_blocks_keep_the_last_cost_and_the_looks_coming() {
        // One thread chosen; then every one-thread block runs untimed (a
        // plain walk after an edit). The looks at the threads still come,
        // and compare with the one-thread cost last measured: the threads
        // come back once they are clearly faster, not sooner.
        let mut c = Chooser::new();
        run(&mut c, 2_000, 30_000, 20_000);
        assert_eq!(c.chosen(), Way::One);
        let mut n = [0, 0];
        for spread in [25_000, 10_000] {
            for _ in 0..20_000 {
                block(&mut c, &mut n, |_, w| if w == Way::Spread { spread } else { 20_000 });
            }
            let want = if spread == 25_000 { Way::One } else { Way::Spread };
            assert_eq!(c.chosen(), want, "spread blocks of {spread} ns: {n:?}");
        }
    }

    #[test]
    fn a_group_whose_threads_become_worth_it_gets_them_back() {
        let mut c = Chooser::new();
        run(&mut c, 2_000, 30_000, 20_000);
        assert_eq!(c.chosen(), Way::One);
        run(&mut c, 20_000, 10_000, 20_000);
        assert_eq!(c.chosen(), Way::Spread);
    }

    #[test]
    fn threads_that_stall_now_and_then_lose_to_one_thread_though_their_usual_block_is_faster() {
        // Spread blocks take 10 µs, but one in fifty waits 2 ms for a pre-empted
        // helper: 50 µs on average, against 20 µs on one thread.
        let mut c = Chooser::new();
        let mut n = [0, 0];
        let mut spread_blocks = 0u64;
        for _ in 0..20_000 {
            let w = c.way(2, None);
            n[w as usize] += 1;
            // The stall is time the block's thread waits for the helper.
            let (ns, wait) = if w == Way::Spread {
                spread_blocks += 1;
                if spread_blocks.is_multiple_of(50) { (2_000_000, 1_990_000) } else { (10_000, 0) }
            } else {
                (20_000, 0)
            };
            c.record(w, ns, wait);
        }
        assert_eq!(c.chosen(), Way::One);
        assert!(n[Way::Spread as usize] < 20_000 / 10, "spread blocks: {n:?}");
    }

    #[test]
    fn in_real_time_a_group_too_long_for_one_thread_is_never_tried_on_one() {
        BUDGET.with(|b| b.set(Some(50_000)));
        let mut c = Chooser::new();
        let n = run(&mut c, 5_000, 40_000, 1_000);
        assert_eq!(n[Way::One as usize], 0);
        assert_eq!(c.chosen(), Way::Spread);
    }

    /// A small generator for the tests' noise (xorshift).
    fn noise(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Runs `blocks` blocks of a busy machine: the block's thread is
    /// pre-empted for 1-5 ms in one block of eight whichever way it runs;
    /// otherwise spread blocks take `spread` ns and one-thread blocks `one`.
    fn run_busy(c: &mut Chooser, blocks: usize, spread: u64, one: u64, seed: u64) -> [usize; 2] {
        let mut state = seed;
        let mut n = [0, 0];
        for _ in 0..blocks {
            let w = c.way(2, None);
            n[w as usize] += 1;
            let r = noise(&mut state);
            let stall = if r.is_multiple_of(8) { 1_000_000 + (r >> 8) % 4_000_000 } else { 0 };
            c.record(w, stall + if w == Way::Spread { spread } else { one }, 0);
        }
        n
    }

    #[test]
    fn on_a_busy_machine_a_group_slower_on_the_threads_stays_on_one_thread() {
        for seed in 1..20 {
            let mut c = Chooser::new();
            let n = run_busy(&mut c, 20_000, 95_000, 85_000, seed);
            assert_eq!(c.chosen(), Way::One, "seed {seed}");
            assert!(n[Way::Spread as usize] < 20_000 / 20, "seed {seed}: spread blocks: {n:?}");
        }
    }

    #[test]
    fn on_a_busy_machine_a_group_that_gains_from_threads_keeps_them() {
        for seed in 1..20 {
            let mut c = Chooser::new();
            let n = run_busy(&mut c, 20_000, 60_000, 85_000, seed);
            assert_eq!(c.chosen(), Way::Spread, "seed {seed}");
            assert!(n[Way::One as usize] < 20_000 / 20, "seed {seed}: one-thread blocks: {n:?}");
        }
    }

    #[test]
    fn one_slow_measurement_of_one_thread_does_not_give_the_threads_a_long_stretch() {
        // One thread is faster (22 µs against 27), and the looks have
        // grown rare. Then a busy spell slows the one-thread blocks that
        // measure one stretch (the last 64 before a look), once: the next
        // look still sees one thread as the faster, from the measurement
        // before, rather than taking the threads until the look after.
        let mut c = Chooser::new();
        run(&mut c, 40_000, 27_000, 22_000);
        assert_eq!(c.chosen(), Way::One);
        assert_eq!(c.interval, MAX_INTERVAL);
        // To the start of a one-thread stretch.
        while c.probing || c.left < MAX_INTERVAL / 2 {
            let w = c.way(2, None);
            c.record(w, if w == Way::Spread { 27_000 } else { 22_000 }, 0);
        }
        let mut n = [0, 0];
        let mut spell = true;
        for _ in 0..3 * MAX_INTERVAL {
            block(&mut c, &mut n, |c, w| {
                let slow = spell && w == Way::One && !c.probing && c.left <= SAMPLES as u32;
                spell &= !c.probing;
                match w {
                    Way::Spread => 27_000,
                    Way::One if slow => 35_000,
                    Way::One => 22_000,
                }
            });
        }
        assert!(!spell, "the spell never came");
        assert_eq!(c.chosen(), Way::One);
        assert!(n[Way::Spread as usize] < 3 * MAX_INTERVAL as usize / 16, "spread blocks: {n:?}");
    }

    #[test]
    fn a_one_thread_stretch_is_timed_only_at_its_end() {
        let mut c = Chooser::new();
        run(&mut c, 40_000, 27_000, 22_000);
        while c.probing || c.left < MAX_INTERVAL / 2 {
            let w = c.way(2, None);
            c.record(w, if w == Way::Spread { 27_000 } else { 22_000 }, 0);
        }
        let mut untimed = 0;
        while c.keeps_one() {
            untimed += 1;
            c.skip_one();
        }
        assert!(untimed >= MAX_INTERVAL / 2 - TIMED, "untimed: {untimed}");
        assert_eq!(c.way(2, None), Way::One);
    }

    #[test]
    fn threads_barely_faster_than_one_thread_are_left_alone() {
        // 3 % faster on the threads is within what measurements miss: one
        // thread saves the second thread's time for nothing lost.
        let mut c = Chooser::new();
        run(&mut c, 20_000, 97_000, 100_000);
        assert_eq!(c.chosen(), Way::One);
    }
}
