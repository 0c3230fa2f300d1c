//! Notices an audio thread that stopped completing periods (a unit stuck in
//! a loop, a thread that died) so that the server says so instead of living
//! on as a zombie that accepts commands and never answers them.
//!
//! The control thread calls [`Watchdog::check`] every time it wakes (at
//! least four times a second) with the driver's count of finished periods.

use std::time::{Duration, Instant};

/// How long without a finished period counts as a stall.
pub const STALL: Duration = Duration::from_secs(1);

/// What changed since the last check that is worth saying.
#[derive(Debug, PartialEq)]
pub enum Change {
    /// No period finished for this long (reported once per stall).
    Stalled(Duration),
    /// Periods finish again after a stall.
    Resumed,
}

pub struct Watchdog {
    periods: u64,
    since: Instant,
    stalled: bool,
}

impl Watchdog {
    pub fn new(now: Instant) -> Watchdog {
        Watchdog { periods: 0, since: now, stalled: false }
    }

    /// `periods`: the driver's count of finished periods. A driver that has
    /// not finished its first period yet is still starting, not stalled.
    pub fn check(&mut self, periods: u64, now: Instant) -> Option<Change> {
        if periods != self.periods {
            self.periods = periods;
            self.since = now;
            return std::mem::take(&mut self.stalled).then_some(Change::Resumed);
        }
        let quiet = now.saturating_duration_since(self.since);
        if periods > 0 && !self.stalled && quiet >= STALL {
            self.stalled = true;
            return Some(Change::Stalled(quiet));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_reported_once_and_its_end_too() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut w = Watchdog::new(t0);
        // Starting: no period yet, however long it takes.
        assert_eq!(w.check(0, ms(5000)), None);
        assert_eq!(w.check(10, ms(5100)), None);
        assert_eq!(w.check(20, ms(5200)), None);
        assert_eq!(w.check(20, ms(6000)), None);
        assert_eq!(w.check(20, ms(6250)), Some(Change::Stalled(Duration::from_millis(1050))));
        assert_eq!(w.check(20, ms(9000)), None);
        assert_eq!(w.check(21, ms(9100)), Some(Change::Resumed));
        assert_eq!(w.check(22, ms(9200)), None);
    }
}
