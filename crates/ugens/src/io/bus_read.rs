//! Control-bus readers with a twist: InTrig (only values written in this
//! block) and LagIn (smoothed by a one-pole lag).

use crate::common::signal::{decay_coef, in0};
use crate::common::signal::zap_f32;
use crate::common::math::c_int;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::World;

/// The control buses a unit reads: the bus number is re-read every block,
/// and a range that does not fit leaves the previous buses in place.
struct ControlBuses {
    last: f32,
    first: usize,
}

impl ControlBuses {
    fn new() -> ControlBuses {
        // scsynth starts from bus 0 and an impossible bus number.
        ControlBuses { last: -1.0, first: 0 }
    }

    #[inline]
    fn update(&mut self, fbus: f32, channels: usize, w: &World) {
        if fbus != self.last {
            self.last = fbus;
            let bus = c_int(fbus) as i64;
            if bus >= 0 && bus + channels as i64 <= w.num_control_buses() as i64 {
                self.first = bus as usize;
            }
        }
    }

    /// The bus channel `i` reads, if any: scsynth checks the requested bus
    /// number, not the remembered one, against the bus count.
    #[inline]
    fn channel(&self, fbus: f32, i: usize, w: &World) -> Option<usize> {
        let requested = c_int(fbus) as i64 + i as i64;
        let ch = self.first + i;
        (requested < w.num_control_buses() as i64 && ch < w.control_bus.len()).then_some(ch)
    }
}

/// InTrig (`bus`): a control bus's value in blocks where something wrote
/// it, 0 otherwise. At audio rate it outputs silence, as in scsynth.
pub struct InTrig {
    buses: ControlBuses,
    audio: bool,
}

impl InTrig {
    fn run(&mut self, io: &mut Wires<'_>, w: &World) {
        if self.audio {
            io.clear_outputs();
            return;
        }
        let fbus = in0(io, 0);
        let channels = io.num_outputs();
        self.buses.update(fbus, channels, w);
        for i in 0..channels {
            let ch = self.buses.first + i;
            let touched = w.control_touched.get(ch).is_some_and(|&t| t == w.buf_counter);
            let v = match self.buses.channel(fbus, i, w) {
                Some(c) if touched => w.control_bus[c],
                _ => 0.0,
            };
            io.out(i).fill(v);
        }
    }
}

impl Construct for InTrig {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = InTrig { buses: ControlBuses::new(), audio: spec.rate == Rate::Audio };
        unit.run(io, cx.world);
        unit
    }
}

impl Unit for InTrig {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx.world);
    }
}

/// LagIn (`bus, lag`): control buses smoothed by a one-pole lag (60 dB in
/// `lag` seconds, fixed at construction).
pub struct LagIn {
    buses: ControlBuses,
    b1: f32,
    y1: Vec<f32>,
}

impl LagIn {
    fn run(&mut self, io: &mut Wires<'_>, w: &World, smooth: bool) {
        let fbus = in0(io, 0);
        let channels = io.num_outputs().min(self.y1.len());
        self.buses.update(fbus, channels, w);
        for i in 0..channels {
            let z = self.buses.channel(fbus, i, w).map_or(0.0, |c| w.control_bus[c]);
            self.y1[i] = if smooth { zap_f32(z + self.b1 * (self.y1[i] - z)) } else { z };
            let y = self.y1[i];
            io.out(i).fill(y);
        }
    }
}

impl Construct for LagIn {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let b1 = decay_coef(in0(io, 1), cx.rate.sample_rate) as f32;
        let mut unit = LagIn { buses: ControlBuses::new(), b1, y1: vec![0.0; io.num_outputs()] };
        // The first value is the bus itself, unsmoothed.
        unit.run(io, cx.world, false);
        unit
    }
}

impl Unit for LagIn {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx.world, true);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    #[test]
    fn intrig_reads_a_bus_only_in_blocks_that_wrote_it() {
        let mut h = UnitHarness::new("InTrig", Rate::Control).input(TestInput::Const(3.0));
        h.world.control_bus[3] = 0.8;
        // Written in block 2 (the harness counts blocks from 1).
        h.world.control_touched[3] = 2;
        let out = h.run(3);
        assert_eq!(out[0], vec![0.0, 0.8, 0.0]);
    }

    #[test]
    fn lagin_glides_towards_the_bus_value() {
        let mut h = UnitHarness::new("LagIn", Rate::Control).inputs([TestInput::Const(5.0), TestInput::Const(0.1)]);
        h.world.control_bus[5] = 1.0;
        let out = h.run(20);
        // Starts at the bus value, stays there.
        assert!(out[0].iter().all(|&v| v == 1.0));
    }
}
