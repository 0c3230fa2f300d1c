//! Cartoon physical models: Spring (a damped mass on a spring driven by a
//! force), Ball (a ball bouncing on a moving floor) and TBall (the impulses
//! such a ball gives off when it hits the floor). The balls add a little
//! random dither at each bounce, drawn from the synth's generator.

use crate::common::signal::{in0, In};
use crate::common::math::sc_clip;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Spring: outputs the force the spring exerts on a mass pushed by the
/// input force.
pub struct Spring {
    pos: f32,
    vel: f32,
}

impl Spring {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let input = In::new(io, 0);
        let c = cx.rate.sample_dur as f32;
        let rc = cx.rate.sample_rate as f32;
        let spring = in0(io, 1) * c;
        let damping = 1.0 - in0(io, 2);
        let (mut pos, mut vel) = (self.pos, self.vel);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let force = input.at(i) * c - pos * spring;
            vel = (force + vel) * damping;
            pos += vel;
            *o = force * rc;
        }
        self.pos = pos;
        self.vel = vel;
    }
}

impl Construct for Spring {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Spring { pos: 0.0, vel: 0.0 };
        u.run(io, cx);
        u
    }
}

impl Unit for Spring {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// What both balls read per block.
struct Bounce {
    g_in: f32,
    damping: f32,
    /// Stickiness: closer to the floor than this, the ball sticks.
    k: f32,
    g: f32,
    max_vel: f32,
    min_vel: f32,
}

impl Bounce {
    fn read(io: &Wires<'_>, sample_dur: f64) -> Bounce {
        let g_in = in0(io, 1);
        let c = sample_dur as f32;
        let max_vel = c * 1000.0;
        Bounce {
            g_in,
            damping: 1.0 - in0(io, 2),
            k: (in0(io, 3) as f64 * g_in as f64) as f32,
            g: c * g_in,
            max_vel,
            min_vel: 0.0 - max_vel,
        }
    }
}

/// Ball: the height of a ball falling under gravity onto the floor given
/// by the input.
pub struct Ball {
    pos: f32,
    vel: f32,
    prev_floor: f32,
}

impl Ball {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let floor_in = In::new(io, 0);
        let p = Bounce::read(io, cx.rate.sample_dur);
        let inter = cx.rate.sample_dur as f32 * 1000.0;
        let (mut pos, mut vel, mut prev_floor) = (self.pos, self.vel, self.prev_floor);
        let g = &mut cx.world.rgen;
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let floor = floor_in.at(i);
            vel -= p.g;
            pos += vel;
            let dist = pos - floor;
            let floor_vel = sc_clip(floor - prev_floor, p.min_vel, p.max_vel);
            let vel_diff = floor_vel - vel;
            if dist.abs() < p.k {
                if (dist.abs() as f64) < p.k as f64 * 0.005 {
                    vel = 0.0;
                    pos = floor + p.g;
                } else {
                    vel = vel_diff * inter + vel;
                    pos = (floor - pos) * inter + pos;
                }
            } else if dist <= 0.0 {
                pos = floor - dist;
                vel = vel_diff;
                vel *= p.damping;
                vel += g.frand() * 0.00005 * p.g_in;
            }
            prev_floor = floor;
            *o = pos;
        }
        self.pos = pos;
        self.vel = vel;
        self.prev_floor = prev_floor;
    }
}

impl Construct for Ball {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let start = in0(io, 0);
        let mut u = Ball { pos: start, vel: 0.0, prev_floor: start };
        u.run(io, cx);
        u
    }
}

impl Unit for Ball {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// TBall: the ball of [`Ball`], but outputting the bounce velocity at each
/// impact and zero in between. Position and floor are kept in double
/// precision.
pub struct TBall {
    pos: f64,
    vel: f32,
    prev_floor: f64,
}

impl TBall {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let floor_in = In::new(io, 0);
        let p = Bounce::read(io, cx.rate.sample_dur);
        let inter = cx.rate.sample_dur as f32 * 10000.0;
        let (mut pos, mut vel, mut prev_floor) = (self.pos, self.vel, self.prev_floor);
        let g = &mut cx.world.rgen;
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let floor = floor_in.at(i) as f64;
            let mut outval = 0.0f32;
            vel -= p.g;
            pos += vel as f64;
            let dist = pos - floor;
            let floor_vel = sc_clip((floor - prev_floor) as f32, p.min_vel, p.max_vel);
            let vel_diff = floor_vel - vel;
            if dist.abs() < p.k as f64 {
                if dist.abs() < p.k as f64 * 0.005 {
                    vel = 0.0;
                    pos = floor + p.g as f64;
                } else {
                    vel = vel_diff * inter + vel;
                    pos = (floor - pos) * inter as f64 + pos;
                }
            } else if dist <= 0.0 {
                pos = floor - dist;
                vel = floor_vel - vel;
                vel *= p.damping;
                outval = vel;
                vel += g.frand() * 0.001 * p.g_in;
            }
            prev_floor = floor;
            *o = outval;
        }
        self.pos = pos;
        self.vel = vel;
        self.prev_floor = prev_floor;
    }
}

impl Construct for TBall {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let start = in0(io, 0) as f64;
        let mut u = TBall { pos: start, vel: 0.0, prev_floor: start };
        u.run(io, cx);
        u
    }
}

impl Unit for TBall {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
