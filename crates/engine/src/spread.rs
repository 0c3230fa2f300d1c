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
//! A way's cost is its mean block time, not its median: a helper pre-empted
//! now and then stalls one block in a hundred by milliseconds, which the
//! median never shows and the render time always does. The chosen way is
//! measured over its whole stretch between two looks, the other over a
//! probe that grows with the stretch, so that rare stalls show in it too.

/// Blocks of the other way in a probe, at least (after one left out: the
/// first block of a run warms the caches of the other way).
const PROBE: u32 = 8;
/// Blocks between two looks at the other way: from `FIRST_INTERVAL`,
/// doubled at every look, up to `MAX_INTERVAL`; a probe lasts a
/// thirty-second of the interval (at least `PROBE`): the worse way costs
/// about 3 % of the blocks.
const FIRST_INTERVAL: u32 = 32;
const MAX_INTERVAL: u32 = 4096;
/// The other way must be this much faster to be taken (hysteresis).
const MARGIN: f64 = 0.96;

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
    sum: u64,
    counted: u64,
    /// Mean block time (ns) of the chosen way over its last stretch, and
    /// of the spread way when last measured.
    chosen_mean: Option<u64>,
    spread_mean: Option<u64>,
    interval: u32,
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
            sum: 0,
            counted: 0,
            chosen_mean: None,
            spread_mean: None,
            interval: FIRST_INTERVAL,
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
            if let (Some(budget), Some(spread)) = (budget_ns, self.spread_mean) {
                if spread.saturating_mul(threads as u64) > budget {
                    return Way::Spread;
                }
            }
        }
        other
    }

    /// Notes how long a block run `way` took (ns).
    pub fn record(&mut self, way: Way, ns: u64) {
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
            self.sum += ns;
            self.counted += 1;
        }
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            return;
        }
        let mean = self.sum / self.counted.max(1);
        if way == Way::Spread {
            self.spread_mean = Some(mean);
        }
        if !self.probing {
            self.chosen_mean = Some(mean);
            self.probing = true;
            self.left = 1 + (self.interval / 32).max(PROBE);
            self.warm = true;
            self.sum = 0;
            self.counted = 0;
            return;
        }
        if self.chosen_mean.is_some_and(|c| (mean as f64) < c as f64 * MARGIN) {
            self.chosen = way;
            self.switches += 1;
        }
        self.interval = (self.interval * 2).min(MAX_INTERVAL);
        self.start_stretch();
    }

    fn start_stretch(&mut self) {
        self.probing = false;
        self.left = self.interval;
        self.warm = true;
        self.sum = 0;
        self.counted = 0;
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
            c.record(w, if w == Way::Spread { spread } else { one });
        }
        n
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
            let ns = if w == Way::Spread {
                spread_blocks += 1;
                if spread_blocks.is_multiple_of(50) { 2_000_000 } else { 10_000 }
            } else {
                20_000
            };
            c.record(w, ns);
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
}
