//! Fused steps against the units they stand for, run alone: the same def
//! compiled with and without joining, every unit's outputs compared bit
//! for bit, block after block.

use crate::graph_def::GraphDef;
use crate::synth::Synth;
use magnetar_synthdef as sd;
use magnetar_ugens::{Registry, World};
use std::sync::{Arc, OnceLock};

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::with_all)
}

/// A def under construction; unit 0 is a `Control` with one value per control.
struct Builder {
    constants: Vec<f32>,
    params: Vec<f32>,
    names: Vec<sd::ParamName>,
    ugens: Vec<sd::UGenSpec>,
}

const AR: sd::Rate = sd::Rate::Audio;
const KR: sd::Rate = sd::Rate::Control;
const ADD: i16 = 0;
const SUB: i16 = 1;
const MUL: i16 = 2;
const FDIV: i16 = 4;

impl Builder {
    fn new(controls: &[(&str, f32)]) -> Builder {
        let mut b = Builder { constants: Vec::new(), params: Vec::new(), names: Vec::new(), ugens: Vec::new() };
        for (k, (name, v)) in controls.iter().enumerate() {
            b.params.push(*v);
            b.names.push(sd::ParamName { name: name.to_string(), index: k as u32 });
        }
        b.ugens.push(sd::UGenSpec {
            name: "Control".into(),
            rate: KR,
            special_index: 0,
            inputs: vec![],
            outputs: vec![KR; controls.len()],
        });
        b
    }

    fn control(&self, k: u32) -> sd::Input {
        sd::Input::Unit { unit: 0, output: k }
    }

    fn k(&mut self, v: f32) -> sd::Input {
        self.constants.push(v);
        sd::Input::Constant(self.constants.len() as u32 - 1)
    }

    fn unit(&mut self, name: &str, rate: sd::Rate, inputs: Vec<sd::Input>, special_index: i16) -> sd::Input {
        self.ugens.push(sd::UGenSpec { name: name.into(), rate, special_index, inputs, outputs: vec![rate] });
        sd::Input::Unit { unit: self.ugens.len() as u32 - 1, output: 0 }
    }

    fn index(input: sd::Input) -> usize {
        match input {
            sd::Input::Unit { unit, .. } => unit as usize,
            sd::Input::Constant(_) => usize::MAX,
        }
    }

    /// `n` audio signals of several kinds and sizes (sums of them round
    /// differently in different groupings), with infinities and NaN if `odd`.
    fn sources(&mut self, n: usize, odd: bool) -> Vec<sd::Input> {
        (0..n)
            .map(|i| {
                let f = 97.0 + 31.0 * i as f32;
                match i % 6 {
                    0 | 3 => {
                        let (freq, phase) = (self.k(f), self.k(0.1 * i as f32));
                        self.unit("SinOsc", AR, vec![freq, phase], 0)
                    }
                    1 => {
                        let freq = self.k(f);
                        self.unit("Saw", AR, vec![freq], 0)
                    }
                    2 => {
                        let v = self.k(if odd && i % 4 == 2 { f32::INFINITY } else { 1.0e7 + i as f32 });
                        self.unit("DC", AR, vec![v], 0)
                    }
                    4 => {
                        let (freq, phase) = (self.k(f * 0.5), self.k(0.0));
                        let saw = self.unit("LFSaw", AR, vec![freq, phase], 0);
                        let scale = self.k(if odd { 3.0e-3 } else { 1.0e-7 });
                        self.unit("BinaryOpUGen", AR, vec![saw, scale], MUL)
                    }
                    _ => {
                        let v = self.k(if odd && i % 4 == 1 { f32::NAN } else if odd { f32::NEG_INFINITY } else { -3.3e6 });
                        self.unit("DC", AR, vec![v], 0)
                    }
                }
            })
            .collect()
    }

    /// sclang's `Mix`: Sum4s (Sum3s, a `+`) of groups of four, again and
    /// again, down to one signal.
    fn mix(&mut self, signals: Vec<sd::Input>) -> sd::Input {
        let mut level = signals;
        loop {
            let mixed: Vec<sd::Input> = level.chunks(4).map(|c| self.sum(c)).collect();
            if mixed.len() < 3 {
                return self.sum(&mixed);
            }
            if mixed.len() == 3 {
                return self.unit("Sum3", AR, mixed, 0);
            }
            level = mixed;
        }
    }

    fn sum(&mut self, c: &[sd::Input]) -> sd::Input {
        match c.len() {
            4 => self.unit("Sum4", AR, c.to_vec(), 0),
            3 => self.unit("Sum3", AR, c.to_vec(), 0),
            2 => self.unit("BinaryOpUGen", AR, c.to_vec(), ADD),
            _ => c[0],
        }
    }

    fn def(self, name: &str) -> sd::SynthDef {
        sd::SynthDef {
            name: name.into(),
            constants: self.constants,
            params: self.params,
            param_names: self.names,
            ugens: self.ugens,
            variants: Vec::new(),
        }
    }
}

fn world(block_size: usize) -> World {
    World::new(48_000.0, block_size, 16, 64, 4, 2, 2, 7)
}

/// Compiles `def` with and without joining, runs a synth of each for
/// `blocks` blocks (setting control 0 to `freqs[b]` before block b, if
/// given) and checks every unit's outputs bit for bit. Returns both defs.
fn compare(def: &sd::SynthDef, block_size: usize, blocks: usize, freqs: &[f32]) -> (Arc<GraphDef>, Arc<GraphDef>) {
    let fused = Arc::new(GraphDef::compile_with(def, registry(), block_size, true).unwrap());
    let plain = Arc::new(GraphDef::compile_with(def, registry(), block_size, false).unwrap());
    let mut runs = [Arc::clone(&fused), Arc::clone(&plain)].map(|d| {
        let mut w = world(block_size);
        let mut scratch = vec![0.0f32; d.scratch_len];
        let mut s = Synth::new(d, 1000, 0, 0.0);
        s.construct(&mut w, &mut scratch);
        (s, w, scratch)
    });
    for b in 0..blocks {
        let outs: Vec<Vec<Vec<u32>>> = runs
            .iter_mut()
            .map(|(s, w, scratch)| {
                if let Some(&f) = freqs.get(b) {
                    s.set_control(0, f);
                }
                let outs = s.calc_outputs(w, scratch);
                outs.iter().map(|o| o.iter().map(|v| v.to_bits()).collect()).collect()
            })
            .collect();
        for (u, (f, p)) in outs[0].iter().zip(&outs[1]).enumerate() {
            assert_eq!(f, p, "unit {u} ({}) of {} differs in block {b} at block size {block_size}", def.ugens[u].name, def.name);
        }
    }
    (fused, plain)
}

fn tree_steps(def: &GraphDef) -> Vec<usize> {
    def.steps.iter().filter_map(|s| s.sum_tree.as_ref().map(|t| t.nodes.len())).collect()
}

#[test]
fn mix_trees_of_every_size_match_their_units_bit_for_bit() {
    for n in [2, 3, 4, 5, 7, 9, 12, 16, 17, 40, 65, 128] {
        for odd in [false, true] {
            let mut b = Builder::new(&[("freq", 100.0)]);
            let sources = b.sources(n, odd);
            let mix = b.mix(sources);
            let scale = b.k(0.01);
            b.unit("BinaryOpUGen", AR, vec![mix, scale], MUL);
            let def = b.def("mix");
            let sums = def.ugens.iter().filter(|u| u.name.starts_with("Sum") || (u.name == "BinaryOpUGen" && u.special_index == ADD)).count();
            for bs in [64, 20] {
                let (fused, plain) = compare(&def, bs, 6, &[]);
                assert!(tree_steps(&plain).is_empty());
                if sums >= 2 {
                    assert_eq!(tree_steps(&fused), vec![sums], "{n} signals mix as one tree of {sums} sums");
                    assert_eq!(fused.steps.len() + sums - 1, plain.steps.len());
                } else {
                    assert!(tree_steps(&fused).is_empty(), "a lone sum stays a unit");
                }
            }
        }
    }
}

#[test]
fn sums_with_control_or_constant_inputs_run_as_their_units() {
    let mut b = Builder::new(&[("freq", 100.0), ("level", 0.25)]);
    let s = b.sources(16, true);
    let quads: Vec<sd::Input> = s.chunks(4).map(|c| b.sum(c)).collect();
    let level = b.control(1);
    // A Sum4 with a control-rate input over two Sum4s: it and its
    // children stay units.
    let with_kr = b.unit("Sum4", AR, vec![quads[0], quads[1], s[0], level], 0);
    let one = b.k(1.5e-3);
    let with_constant = b.unit("Sum3", AR, vec![quads[2], quads[3], one], 0);
    let sq = b.unit("Sum3", AR, vec![s[1], s[2], level], 0);
    let top = b.unit("Sum3", AR, vec![with_kr, with_constant, sq], 0);
    let def = b.def("mixed");
    for bs in [64, 20] {
        let (fused, _) = compare(&def, bs, 6, &[100.0, 100.0, 230.0, 50.0]);
        assert!(tree_steps(&fused).is_empty(), "no sum here has only audio inputs and a summing reader");
        let _ = (with_kr, with_constant, top);
    }
}

#[test]
fn a_tree_stops_at_a_sum_of_non_audio_inputs() {
    // Sum4(Sum4(audio) x 3, Sum3(audio, audio, control)): the three fuse
    // with the top; the Sum3 with a control input is a leaf of the tree.
    let mut b = Builder::new(&[("freq", 100.0)]);
    let s = b.sources(14, false);
    let quads: Vec<sd::Input> = s[..12].chunks(4).map(|c| b.sum(c)).collect();
    let freq = b.control(0);
    let odd = b.unit("Sum3", AR, vec![s[12], s[13], freq], 0);
    let top = b.unit("Sum4", AR, vec![quads[0], quads[1], quads[2], odd], 0);
    let def = b.def("partial");
    for bs in [64, 20] {
        let (fused, _) = compare(&def, bs, 5, &[100.0, 300.0, 300.0, 20.0]);
        assert_eq!(tree_steps(&fused), vec![4]);
        let step = |u: sd::Input| fused.step_of_unit[Builder::index(u)];
        assert_eq!(step(quads[0]), step(top));
        assert_ne!(step(odd), step(top));
    }
}

#[test]
fn an_inner_sum_read_elsewhere_is_not_joined() {
    let mut b = Builder::new(&[("freq", 100.0)]);
    let s = b.sources(16, true);
    let quads: Vec<sd::Input> = s.chunks(4).map(|c| b.sum(c)).collect();
    let top = b.unit("Sum4", AR, quads.clone(), 0);
    // quads[1] is read by the top and by this product.
    let half = b.k(0.5);
    let shared = b.unit("BinaryOpUGen", AR, vec![quads[1], half], MUL);
    let twice = b.unit("BinaryOpUGen", AR, vec![top, shared], ADD);
    let def = b.def("shared");
    for bs in [64, 20] {
        let (fused, _) = compare(&def, bs, 5, &[]);
        let step = |u: sd::Input| fused.step_of_unit[Builder::index(u)];
        assert_ne!(step(quads[1]), step(top), "a sum read outside the tree keeps its own step");
        assert_eq!(step(quads[0]), step(top));
        assert_eq!(step(quads[2]), step(top));
        assert_eq!(step(top), step(twice), "the + over the tree joins it: its other input comes from outside");
        assert_eq!(tree_steps(&fused), vec![5]);
    }
}

#[test]
fn n_trace_prints_a_joined_tree_as_its_units() {
    let mut b = Builder::new(&[("freq", 100.0)]);
    let sources = b.sources(40, false);
    let mix = b.mix(sources);
    let scale = b.k(0.01);
    b.unit("BinaryOpUGen", AR, vec![mix, scale], MUL);
    let def = b.def("traced");
    let texts: Vec<String> = [true, false]
        .into_iter()
        .map(|join| {
            let d = Arc::new(GraphDef::compile_with(&def, registry(), 64, join).unwrap());
            let mut w = world(64);
            let mut scratch = vec![0.0f32; d.scratch_len];
            let mut s = Synth::new(d, 1000, 0, 0.0);
            s.construct(&mut w, &mut scratch);
            s.calc(&mut w, &mut scratch);
            s.calc_traced(&mut w, &mut scratch)
        })
        .collect();
    assert_eq!(texts[0], texts[1]);
}

#[test]
fn control_rate_operators_of_one_kind_run_as_one_step_bit_for_bit() {
    let mut b = Builder::new(&[("freq", 100.0), ("depth", 0.3)]);
    let freq = b.control(0);
    let depth = b.control(1);
    let mut products = Vec::new();
    for i in 0..20 {
        let k = b.k(i as f32 + 1.0);
        products.push(b.unit("BinaryOpUGen", KR, vec![freq, k], MUL));
    }
    // A product of a product: it reads the run, so it starts another.
    let k = b.k(1.0001);
    let again = b.unit("BinaryOpUGen", KR, vec![products[3], k], MUL);
    let k = b.k(0.0);
    let by_zero = b.unit("BinaryOpUGen", KR, vec![depth, k], FDIV);
    let k = b.k(3.0);
    let quotient = b.unit("BinaryOpUGen", KR, vec![freq, k], FDIV);
    let k = b.k(7.0);
    let diff = b.unit("BinaryOpUGen", KR, vec![k, depth], SUB);
    let sum = b.unit("BinaryOpUGen", KR, vec![freq, depth], ADD);
    let mut oscs = Vec::new();
    for &f in products.iter().chain([&again, &quotient, &diff, &sum]) {
        let phase = b.k(0.0);
        oscs.push(b.unit("SinOsc", AR, vec![f, phase], 0));
    }
    let mix = b.mix(oscs);
    let def = b.def("freqs");
    for bs in [64, 20] {
        let (fused, plain) = compare(&def, bs, 6, &[100.0, 100.0, 250.5, f32::NAN, 1.0e30, 44.0]);
        let step = |u: sd::Input| fused.step_of_unit[Builder::index(u)];
        assert!(products.iter().all(|&p| step(p) == step(products[0])), "the products run as one step");
        assert_ne!(step(again), step(products[0]));
        assert_ne!(step(by_zero), step(products[0]));
        assert!(fused.steps.len() < plain.steps.len());
        let _ = mix;
    }
}
