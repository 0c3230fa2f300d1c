//! Demand-rate units and the units that read them.
//!
//! A demand-rate unit computes nothing per block: it gives its next value
//! when a reader asks for one ([`UnitCtx::demand_input_at`]) and starts over
//! when asked to reset. Its `next` sees `cx.demanded` = 0 for a reset and
//! k >= 1 for a value asked for at sample k of the reader's block (audio-rate
//! inputs of the demand unit are read at that sample). A pattern that has
//! run out answers NaN; readers then hold their last value and may end
//! their synth.

use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

pub(crate) mod dpoll;
pub(crate) mod envgen;
pub(crate) mod patterns;
pub(crate) mod readers;
pub(crate) mod values;


/// Sample `i` (0-based) of input `index`: audio-rate inputs change per sample, others not.
#[inline]
fn at(io: &Wires<'_>, index: usize, i: usize) -> f32 {
    if io.in_rate(index) == Rate::Audio {
        io.inp(index)[i]
    } else {
        io.in0(index)
    }
}

use crate::common::math::sc_mod_i32 as sc_mod_int;

/// A pattern's length: how many values it gives before answering NaN. Read
/// from its length input at the first value after a reset; NaN reads as 0.
#[derive(Clone, Copy, Debug)]
struct Repeats {
    /// Negative until read.
    limit: f64,
    count: i32,
}

impl Repeats {
    fn new() -> Repeats {
        Repeats { limit: -1.0, count: 0 }
    }

    fn reset(&mut self) {
        *self = Repeats::new();
    }

    /// Reads the length from input `index` if it was not read since the last reset.
    fn read(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, index: usize) {
        if self.limit < 0.0 {
            let x = cx.demand_input_at(io, index, cx.demanded);
            self.limit = if x.is_nan() { 0.0 } else { (x + 0.5).floor() as f64 };
        }
    }

    fn exhausted(&self) -> bool {
        self.count as f64 >= self.limit
    }
}

/// What a demand-rate unit does; [`Demanded`] runs it as a unit.
trait Source: Sized + Send + 'static {
    /// The constructor: builds the state and writes the initial output.
    fn build(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self;
    /// Starts over (its reader asked for a reset).
    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>);
    /// The next value: NaN once it has run out; None leaves the output as it was.
    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32>;
}

/// The common kind of [`Source`]: state alone, whose reset touches neither
/// its inputs nor the random generator. Its constructor resets it and leaves
/// 0 in its output, as scsynth's do.
trait Pattern: Sized + Send + 'static {
    fn build(spec: &UnitSpec<'_>) -> Self;
    fn reset(&mut self);
    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32>;
}

impl<P: Pattern> Source for P {
    fn build(spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mut p = P::build(spec);
        p.reset();
        if io.num_outputs() > 0 {
            io.out(0)[0] = 0.0;
        }
        p
    }

    fn reset(&mut self, _io: &Wires<'_>, _cx: &mut UnitCtx<'_>) {
        Pattern::reset(self);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        Pattern::value(self, io, cx)
    }
}

/// Runs a [`Source`] as a unit.
pub(crate) struct Demanded<S>(S);

impl<S: Source> Unit for Demanded<S> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if cx.demanded == 0 {
            self.0.reset(io, cx);
        } else if let Some(x) = self.0.value(io, cx) {
            io.out(0)[0] = x;
        }
    }
}

impl<S: Source> Construct for Demanded<S> {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        Demanded(S::build(spec, io, cx))
    }
}
