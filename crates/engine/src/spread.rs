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
//! then (more rarely while the choice holds), so that a group that grows,
//! or a machine that calms down, gets its threads back.

/// Blocks measured in a row before a comparison: their median stands for
/// the way the group ran (the first block of a run warms the caches of the
/// other way and is left out).
const SAMPLES: usize = 8;
/// Blocks between two looks at the other way: from `FIRST_INTERVAL`,
/// doubled each time the choice holds, up to `MAX_INTERVAL`.
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
    /// The way blocks run while nothing is being measured.
    chosen: Way,
    /// The way being measured now, and the blocks measured so far.
    measuring: Way,
    times: [u64; SAMPLES + 1],
    taken: usize,
    /// Median block time (ns) of each way when last measured.
    median: [Option<u64>; 2],
    /// Blocks left before the next measurement, and the interval.
    until: u32,
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
    /// A chooser that starts by measuring both ways, spread first.
    pub fn new() -> Chooser {
        Chooser {
            chosen: Way::Spread,
            measuring: Way::Spread,
            times: [0; SAMPLES + 1],
            taken: 0,
            median: [None, None],
            until: 0,
            interval: FIRST_INTERVAL,
            items: 0,
            switches: 0,
        }
    }

    /// Forgets everything measured (a different group, or a group whose
    /// shape changed).
    pub fn reset(&mut self) {
        let switches = self.switches;
        *self = Chooser::new();
        self.switches = switches;
    }

    /// Notes the group's size in work items: when it has doubled or halved
    /// since the last measurement, both ways are measured again soon (the
    /// current choice holds meanwhile); a voice more or less does not.
    pub fn note_items(&mut self, items: usize) {
        if items > 2 * self.items || 2 * items < self.items {
            self.items = items;
            self.until = self.until.min(FIRST_INTERVAL);
            self.interval = FIRST_INTERVAL;
        }
    }

    /// The way to run this block. `budget_ns`: in real time, the
    /// one-thread way is not tried when the spread way's blocks, times the
    /// thread count, would pass it (a share of the period).
    pub fn way(&self, threads: usize, budget_ns: Option<u64>) -> Way {
        if self.until > 0 {
            return self.chosen;
        }
        if self.measuring == Way::One {
            if let (Some(budget), Some(spread)) = (budget_ns, self.median[0]) {
                if spread.saturating_mul(threads as u64) > budget {
                    return Way::Spread;
                }
            }
        }
        self.measuring
    }

    /// Notes how long a block run `way` took (ns).
    pub fn record(&mut self, way: Way, ns: u64) {
        if self.until > 0 {
            self.until -= 1;
            return;
        }
        if way != self.measuring {
            // The budget kept the one-thread way from being tried: stay spread.
            self.chosen = way;
            self.finish();
            return;
        }
        self.times[self.taken] = ns;
        self.taken += 1;
        if self.taken < SAMPLES + 1 {
            return;
        }
        // The first block of a run is left out.
        let t = &mut self.times[1..];
        t.sort_unstable();
        let median = t[SAMPLES / 2];
        self.taken = 0;
        self.median[way as usize] = Some(median);
        if self.median[way.other() as usize].is_none() && way == self.chosen {
            // The other way has not been measured yet (the first look).
            self.measuring = way.other();
            return;
        }
        let (chosen, other) = (self.median[self.chosen as usize], self.median[self.chosen.other() as usize]);
        if let (Some(c), Some(o)) = (chosen, other) {
            if (o as f64) < c as f64 * MARGIN {
                self.chosen = self.chosen.other();
                self.switches += 1;
                self.interval = FIRST_INTERVAL;
            } else {
                self.interval = (self.interval * 2).min(MAX_INTERVAL);
            }
        }
        self.finish();
    }

    /// Back to running the chosen way until the next look, which measures
    /// both ways afresh (the chosen one first), so that a change of load on
    /// the machine shows in both.
    fn finish(&mut self) {
        self.until = self.interval;
        self.measuring = self.chosen;
        self.median = [None, None];
        self.taken = 0;
    }

    /// The way blocks run between measurements.
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
        assert!(n[Way::Spread as usize] < 20_000 / 50, "spread blocks: {n:?}");
    }

    #[test]
    fn a_group_that_gains_from_threads_keeps_them_but_for_rare_looks() {
        let mut c = Chooser::new();
        let n = run(&mut c, 20_000, 12_000, 20_000);
        assert_eq!(c.chosen(), Way::Spread);
        assert!(n[Way::One as usize] < 20_000 / 50, "one-thread blocks: {n:?}");
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
    fn in_real_time_a_group_too_long_for_one_thread_is_never_tried_on_one() {
        BUDGET.with(|b| b.set(Some(50_000)));
        let mut c = Chooser::new();
        let n = run(&mut c, 5_000, 40_000, 1_000);
        assert_eq!(n[Way::One as usize], 0);
        assert_eq!(c.chosen(), Way::Spread);
    }
}
