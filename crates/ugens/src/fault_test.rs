//! A unit that fails on purpose, for the tests of fault containment. It is
//! registered only when the environment has `MAGNETAR_TEST_UNITS=1`, so no
//! def a user loads can reach it otherwise.
//!
//! `MagnetarFault.ar(in)` / `.kr(in)` passes its input through, and panics in
//! the block where the input's first sample is above zero. `MagnetarStall`
//! holds up the thread running it, for the watchdog's test.

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// The environment variable that enables the test units.
pub const ENABLE_VAR: &str = "MAGNETAR_TEST_UNITS";

pub struct MagnetarFault;

impl MagnetarFault {
    // Failing is this unit's purpose.
    #[allow(clippy::panic)]
    fn pass(io: &mut Wires<'_>) {
        if io.in0(0) > 0.0 {
            panic!("MagnetarFault was asked to fail");
        }
        let n = io.n();
        let input = io.inp(0);
        let v = input[0];
        let out = io.out(0);
        if input.len() >= n {
            out.copy_from_slice(&input[..n]);
        } else {
            out.fill(v);
        }
    }
}

impl Construct for MagnetarFault {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let v = io.in0(0);
        io.out(0)[0] = v.min(0.0);
        MagnetarFault
    }
}

impl Unit for MagnetarFault {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        Self::pass(io);
    }
}

/// `MagnetarStall.kr(seconds)`: the first block whose input is above zero
/// holds up its thread for that many seconds (at most 10), once. Outputs 0.
pub struct MagnetarStall {
    stalled: bool,
}

impl Construct for MagnetarStall {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.out(0)[0] = 0.0;
        MagnetarStall { stalled: false }
    }
}

impl Unit for MagnetarStall {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let seconds = io.in0(0);
        if seconds > 0.0 && !self.stalled {
            self.stalled = true;
            std::thread::sleep(std::time::Duration::from_secs_f32(seconds.min(10.0)));
        }
        io.out(0).fill(0.0);
    }
}

/// Whether the test units are to be registered: [`ENABLE_VAR`] is `1`.
pub fn enabled() -> bool {
    std::env::var_os(ENABLE_VAR).is_some_and(|v| v == "1")
}
