//! The section kernel (`section_run`) on up to sixteen lanes against each
//! lane's unit run alone: every sample and the state after every block,
//! bit for bit, with coefficients gliding and holding, lanes with their
//! own sources and lanes sharing one, in every width the kernel splits
//! lanes into.

use super::twopole::{section_run, Design, ResonzDesign, RlpfDesign, SecLane, Section};
use crate::testing::test_world;
use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, WireRef, Wires, SCRATCH};
use crate::world::SynthCtx;

fn noise(seed: &mut u32) -> f32 {
    *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    (*seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
}

/// A lane's wires: its source (n samples), two parameters, its output.
struct Lane {
    w: Vec<f32>,
}

const INS: [WireRef; 3] = [
    WireRef { offset: 0, rate: Rate::Audio, from_unit: 0 },
    WireRef { offset: 0, rate: Rate::Control, from_unit: crate::unit::NO_UNIT },
    WireRef { offset: 0, rate: Rate::Control, from_unit: crate::unit::NO_UNIT },
];

/// A section unit's wires in a lane's array of `2n + 2` floats (source at
/// 0, the two parameters at `n` and `n + 1`, output at `n + 2`), and its
/// spec.
fn section_wires(n: usize) -> ([WireRef; 3], [WireRef; 1], UnitSpec<'static>) {
    let ins = [INS[0], WireRef { offset: n as u32, ..INS[1] }, WireRef { offset: n as u32 + 1, ..INS[2] }];
    let outs = [WireRef { offset: n as u32 + 2, rate: Rate::Audio, from_unit: 0 }];
    let spec = UnitSpec { name: "section", rate: Rate::Audio, special_index: 0, num_inputs: 3, num_outputs: 1, lanes: 1 };
    (ins, outs, spec)
}

/// Lanes `k` through `blocks` blocks of `n` samples; lane l takes its
/// source from lane `src(l)` (equal sources make vectors whose lanes
/// share one signal).
fn lanes_match_alone<D: Design>(k: usize, n: usize, blocks: usize, src: impl Fn(usize) -> usize, base: [f32; 2]) {
    let rate = RateInfo::full(48_000.0, n);
    let mut world = test_world(n);
    let mut synth = SynthCtx::default();
    let mut done = vec![false; 1];
    let (ins, outs, spec) = section_wires(n);
    // The kernel's lanes read their source from the array of the lane they name.
    let kins = [WireRef { offset: SCRATCH, ..INS[0] }, ins[1], ins[2]];
    let mut seed = 99u32;
    // The kernel's lanes read the sources of the lanes they name, in place.
    let mut kern: Vec<Lane> = (0..k).map(|_| Lane { w: vec![0.0; 2 * n + 2] }).collect();
    let mut alone: Vec<Lane> = (0..k).map(|_| Lane { w: vec![0.0; 2 * n + 2] }).collect();
    let params = |l: usize, b: usize| -> [f32; 2] {
        // Lanes 1 and 6 hold; the others glide for a while, then hold.
        let sweep = if l % 5 != 1 && b < blocks / 2 { 23.0 * b as f32 + 3.0 * l as f32 } else { 0.0 };
        [base[0] + 41.0 * l as f32 + sweep, base[1] + 0.01 * (l % 3) as f32]
    };
    let mut fill = |b: usize, kern: &mut [Lane], alone: &mut [Lane]| {
        for l in 0..k {
            for i in 0..n {
                kern[l].w[i] = noise(&mut seed);
            }
        }
        for l in 0..k {
            let p = params(l, b);
            kern[l].w[n..n + 2].copy_from_slice(&p);
            let s: Vec<f32> = kern[src(l)].w[..n].to_vec();
            alone[l].w[..n].copy_from_slice(&s);
            alone[l].w[n..n + 2].copy_from_slice(&p);
        }
    };
    fill(0, &mut kern, &mut alone);
    // Each unit's first sample (its constructor) reads the source its lane reads.
    let mut make = |w: *mut f32, from: *mut f32, ins: &[WireRef]| {
        // SAFETY: the arrays hold every wire named.
        let mut io = unsafe { Wires::new(w, from, ins, &outs, n, 1) };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        Section::<D>::new(&spec, &mut io, &mut cx)
    };
    let mut units: Vec<Section<D>> =
        (0..k).map(|l| make(kern[l].w.as_mut_ptr(), kern[src(l)].w.as_mut_ptr(), &kins)).collect();
    let mut solo: Vec<Section<D>> = alone.iter_mut().map(|a| make(a.w.as_mut_ptr(), a.w.as_mut_ptr(), &ins)).collect();
    for b in 1..=blocks {
        fill(b, &mut kern, &mut alone);
        let mut run = Vec::new();
        for l in 0..k {
            let (w, from) = (kern[l].w.as_mut_ptr(), kern[src(l)].w.as_mut_ptr());
            // SAFETY: as above; lane l's source is lane src(l)'s (its
            // "scratch" array), the rest its own.
            let mut io = unsafe { Wires::new(w, from, &kins, &outs, n, n) };
            run.push(SecLane::resolve(&mut io, &mut units[l]));
        }
        // SAFETY: distinct units, each lane's wires its own and live.
        unsafe { section_run(&run, &rate) };
        for l in 0..k {
            let w = alone[l].w.as_mut_ptr();
            // SAFETY: as above.
            let mut io = unsafe { Wires::new(w, w, &ins, &outs, n, n) };
            let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
            solo[l].next(&mut io, &mut cx);
            for i in 0..n {
                let (got, want) = (kern[l].w[n + 2 + i], alone[l].w[n + 2 + i]);
                assert_eq!(got.to_bits(), want.to_bits(), "k {k}, n {n}, block {b}, lane {l}, sample {i}");
            }
            assert_eq!(units[l].state_bits(), solo[l].state_bits(), "k {k}, n {n}, block {b}, lane {l}");
        }
    }
}

#[test]
fn section_lanes_of_every_width_match_their_units_alone() {
    crate::vector::each_register_build(|| {
        for k in [16, 15, 13, 12, 9, 8, 5, 4, 1] {
            for n in [64, 20, 66] {
                lanes_match_alone::<RlpfDesign>(k, n, 10, |l| l, [300.0, 0.3]);
                lanes_match_alone::<ResonzDesign>(k, n, 10, |l| l, [500.0, 0.2]);
            }
        }
    });
}

#[test]
fn section_lanes_sharing_sources_match_their_units_alone() {
    // Whole vectors on one source, vectors of mixed sources, and all on one.
    let sources: [fn(usize) -> usize; 4] = [|l| l / 4 * 4, |l| if l < 8 { l / 4 * 4 } else { l }, |l| if l % 8 < 4 { l } else { l / 4 * 4 }, |_| 0];
    crate::vector::each_register_build(|| {
        for src in sources {
            for k in [16, 14, 11, 8, 6] {
                lanes_match_alone::<RlpfDesign>(k, 64, 8, src, [300.0, 0.3]);
            }
        }
    });
}

/// Time of the kernel on sixteen RLPF lanes gliding every block, per
/// lane and sample (`cargo test --release -p magnetar-ugens
/// section_kernel_timing -- --ignored --nocapture`).
#[test]
#[ignore]
fn section_kernel_timing() {
    let (k, n, blocks) = (16usize, 64usize, 200_000usize);
    let rate = RateInfo::full(48_000.0, n);
    let mut world = test_world(n);
    let mut synth = SynthCtx::default();
    let mut done = vec![false; 1];
    let (ins, outs, spec) = section_wires(n);
    let mut seed = 5u32;
    let mut ws: Vec<Vec<f32>> = (0..k).map(|_| (0..2 * n + 2).map(|_| noise(&mut seed)).collect()).collect();
    let mut units: Vec<Section<RlpfDesign>> = ws
        .iter_mut()
        .map(|w| {
            w[n] = 1000.0;
            w[n + 1] = 0.3;
            // SAFETY: the array holds every wire named.
            let mut io = unsafe { Wires::new(w.as_mut_ptr(), w.as_mut_ptr(), &ins, &outs, n, 1) };
            let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
            Section::new(&spec, &mut io, &mut cx)
        })
        .collect();
    let run: Vec<SecLane<RlpfDesign>> = ws
        .iter_mut()
        .zip(&mut units)
        .map(|(w, u)| {
            // SAFETY: as above.
            let mut io = unsafe { Wires::new(w.as_mut_ptr(), w.as_mut_ptr(), &ins, &outs, n, n) };
            SecLane::resolve(&mut io, u)
        })
        .collect();
    // Each build of the kernel (AVX-512's registers, AVX2's), the best of
    // several rounds taken in turns, so that a busy machine disturbs both alike.
    let mut best = [f64::MAX; 2];
    for _ in 0..10 {
        let mut build = 0;
        crate::vector::each_register_build(|| {
            let t = std::time::Instant::now();
            for b in 0..blocks / 10 {
                let f = 1000.0 + (b % 512) as f32;
                for w in ws.iter_mut() {
                    // SAFETY: a parameter wire of a live array no lane holds a reference into.
                    unsafe { *w.as_mut_ptr().add(n) = f };
                }
                // SAFETY: distinct units, each lane's wires its own and live.
                unsafe { section_run(&run, &rate) };
            }
            let ns = t.elapsed().as_secs_f64() * 1e9 / (k * n * blocks / 10) as f64;
            best[build] = best[build].min(ns);
            build += 1;
        });
    }
    println!("section kernel: {:.3} ns per lane and sample (avx2 {:.3})", best[0], best[1]);
}

/// `lane_units` takes lanes whose units share a table without asking each
/// unit its type, and still refuses a lane holding another unit, wherever
/// it is among the lanes.
#[test]
fn lane_units_refuse_a_unit_of_another_type() {
    let n = 8;
    let rate = RateInfo::full(48_000.0, n);
    let mut world = test_world(n);
    let mut synth = SynthCtx::default();
    let mut done = vec![false; 1];
    let (ins, outs, spec) = section_wires(n);
    for odd in [None, Some(0), Some(1), Some(7), Some(15)] {
        let k = 16;
        let mut ws: Vec<Vec<f32>> = (0..k).map(|_| vec![0.5f32; 2 * n + 2]).collect();
        let mut units: Vec<Box<dyn Unit>> = ws
            .iter_mut()
            .enumerate()
            .map(|(l, w)| {
                // SAFETY: the array holds every wire named.
                let mut io = unsafe { Wires::new(w.as_mut_ptr(), w.as_mut_ptr(), &ins, &outs, n, 1) };
                let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
                if odd == Some(l) {
                    Box::new(Section::<ResonzDesign>::new(&spec, &mut io, &mut cx)) as Box<dyn Unit>
                } else {
                    Box::new(Section::<RlpfDesign>::new(&spec, &mut io, &mut cx))
                }
            })
            .collect();
        let addrs: Vec<*const u8> = units.iter().map(|u| (&**u as *const dyn Unit).cast::<u8>()).collect();
        let mut lanes = crate::unit::Lanes::new();
        for (l, (u, w)) in units.iter_mut().zip(ws.iter_mut()).enumerate() {
            lanes.units[l] = Some(&mut **u);
            // SAFETY: as above.
            lanes.ios[l] = Some(unsafe { Wires::new(w.as_mut_ptr(), w.as_mut_ptr(), &ins, &outs, n, n) });
        }
        lanes.len = k;
        let got = crate::unit::lane_units::<Section<RlpfDesign>>(&mut lanes);
        match odd {
            Some(l) => assert!(got.is_none(), "lane {l} holds a Resonz"),
            None => {
                let got = got.expect("every lane an RLPF");
                for l in 0..k {
                    assert_eq!(got[l].cast::<u8>().cast_const(), addrs[l], "lane {l}");
                }
            }
        }
    }
}
