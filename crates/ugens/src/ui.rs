//! The mouse and keyboard units (`MouseX`, `MouseY`, `MouseButton`,
//! `KeyState`) as they run on a server without a display: scsynth reads the
//! pointer and keyboard from X11 when it can open a display, and otherwise
//! keeps the pointer at 0, the button up and every key released. The units
//! then glide (exponential lag, 60 dB in `lag` seconds) towards the value
//! their inputs give for that state: `minval` for all four.

use crate::common::signal::zap_f32;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const LOG001: f64 = -6.907_755_278_982_137; // ln(0.001)

/// The pointer position (0 to 1 across and up the screen) and button state
/// a server without a display reports.
const POINTER: f32 = 0.0;
const BUTTON_DOWN: bool = false;
const KEY_DOWN: bool = false;


/// The one-pole lag the four units share: the coefficient is recomputed
/// when `lag` changes, and takes effect from the next block.
#[derive(Default)]
struct Glide {
    y1: f32,
    b1: f32,
    lag: f32,
}

impl Glide {
    fn step(&mut self, target: f32, lag: f32, cx: &UnitCtx<'_>) -> f32 {
        let b1 = self.b1;
        if lag != self.lag {
            self.b1 = if lag == 0.0 { 0.0 } else { (LOG001 / (lag as f64 * cx.rate.sample_rate)).exp() as f32 };
            self.lag = lag;
        }
        let y = target + b1 * (self.y1 - target);
        self.y1 = zap_f32(y);
        y
    }
}

/// `MouseX` (AXIS 0) and `MouseY` (AXIS 1): inputs minval, maxval, warp, lag.
pub struct Mouse<const AXIS: u8> {
    glide: Glide,
}

impl<const AXIS: u8> Mouse<AXIS> {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (minval, maxval, warp, lag) = (io.in0(0), io.in0(1), io.in0(2), io.in0(3));
        let target = if warp == 0.0 {
            (maxval - minval) * POINTER + minval
        } else {
            (maxval / minval).powf(POINTER) * minval
        };
        let y = self.glide.step(target, lag, cx);
        io.out(0).fill(y);
    }
}

impl<const AXIS: u8> Construct for Mouse<AXIS> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Mouse { glide: Glide::default() };
        u.run(io, cx);
        u
    }
}

impl<const AXIS: u8> Unit for Mouse<AXIS> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// `MouseButton`: inputs minval, maxval, lag.
pub struct MouseButton {
    glide: Glide,
}

impl MouseButton {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (minval, maxval, lag) = (io.in0(0), io.in0(1), io.in0(2));
        let target = if BUTTON_DOWN { maxval } else { minval };
        let y = self.glide.step(target, lag, cx);
        io.out(0).fill(y);
    }
}

impl Construct for MouseButton {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = MouseButton { glide: Glide::default() };
        u.run(io, cx);
        u
    }
}

impl Unit for MouseButton {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// `KeyState`: inputs keycode, minval, maxval, lag.
pub struct KeyState {
    glide: Glide,
}

impl KeyState {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (minval, maxval, lag) = (io.in0(1), io.in0(2), io.in0(3));
        let target = if KEY_DOWN { maxval } else { minval };
        let y = self.glide.step(target, lag, cx);
        io.out(0).fill(y);
    }
}

impl Construct for KeyState {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = KeyState { glide: Glide::default() };
        u.run(io, cx);
        u
    }
}

impl Unit for KeyState {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
