//! Name → constructor table for every UGen magnetar knows.

use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

pub type UnitCtor = fn(&UnitSpec<'_>, &mut Wires<'_>, &mut UnitCtx<'_>) -> Box<dyn Unit>;

/// Says whether a unit with this spec and these input rates may join a
/// batch: several independent instances computed together, lane by lane,
/// with exactly the arithmetic each would do alone.
pub type Batchable = fn(&UnitSpec<'_>, &[Rate]) -> bool;

#[derive(Clone, Copy)]
pub struct BatchEntry {
    pub batchable: Batchable,
    /// Builds one unit for `spec.lanes` members.
    pub ctor: UnitCtor,
}

/// Most synths whose same step one lane kernel computes at once.
pub const MAX_LANES: usize = 16;

/// The same step of up to [`MAX_LANES`] synths: unit `l` and its wires.
pub struct Lanes<'a> {
    pub units: [Option<&'a mut dyn Unit>; MAX_LANES],
    pub ios: [Option<Wires<'a>>; MAX_LANES],
    pub len: usize,
}

impl<'a> Lanes<'a> {
    pub fn new() -> Lanes<'a> {
        Lanes { units: std::array::from_fn(|_| None), ios: std::array::from_fn(|_| None), len: 0 }
    }

    pub fn push(&mut self, unit: &'a mut dyn Unit, io: Wires<'a>) {
        assert!(self.len < MAX_LANES, "more lanes than a kernel takes");
        self.units[self.len] = Some(unit);
        self.ios[self.len] = Some(io);
        self.len += 1;
    }
}

impl Default for Lanes<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Computes the same step of several synths together, lane by lane, with
/// exactly the arithmetic each unit would do alone. All units are of the
/// UGen the kernel is registered for. Only for pure units: the kernel sees
/// nothing of the world but the rate.
pub type LaneKernel = fn(lanes: &mut Lanes<'_>, rate: &RateInfo);

#[derive(Default)]
pub struct Registry {
    ctors: HashMap<&'static str, UnitCtor>,
    batches: HashMap<&'static str, BatchEntry>,
    lanes: HashMap<&'static str, LaneKernel>,
    /// Names whose units are foreign code (plugins): never pure, never
    /// batched, kept in order.
    foreign: HashSet<&'static str>,
}

/// Registers units from outside this crate (the server's plugin host) in
/// every registry [`Registry::with_all`] builds; set once, at boot.
static EXTENSION: OnceLock<fn(&mut Registry)> = OnceLock::new();

/// Installs `f` as the extension every new registry runs (see
/// [`EXTENSION`]); a second call is ignored and returns false.
pub fn set_extension(f: fn(&mut Registry)) -> bool {
    EXTENSION.set(f).is_ok()
}

/// UGens that only read their inputs and write their outputs (and their own
/// state): no buses, buffers, controls, random generator or done actions.
/// The engine may run them in any order the data allows.
const PURE: &[&str] = &[
    "FSinOsc", "SinOsc", "Saw", "Pulse", "Blip", "Formant", "LFSaw", "LFPulse", "LFTri", "LFPar", "LFCub",
    "VarSaw", "SyncSaw", "Impulse", "MulAdd", "Sum3", "Sum4", "LPF", "HPF", "BPF", "BRF", "RLPF", "RHPF",
    "Resonz", "Ringz", "Formlet", "OnePole", "OneZero", "TwoPole", "TwoZero", "SOS", "Lag", "Lag2", "Lag3",
    "LagUD", "Ramp", "Slew", "LeakDC", "Decay", "Decay2", "Integrator", "Median", "Delay1", "Delay2", "DelayN",
    "DelayL", "DelayC", "CombN", "CombL", "CombC", "AllpassN", "AllpassL", "AllpassC", "Pan2", "LinPan2",
    "Balance2", "Pan4", "XFade2", "LinXFade2", "K2A", "A2K", "DC", "Clip", "Fold", "Wrap", "InRange",
    "Schmidt", "Trig", "Trig1", "Latch", "Gate", "ToggleFF", "SetResetFF", "Peak", "RunningMax", "RunningMin",
    "Phasor", "Sweep", "Stepper", "PulseCount", "PulseDivider", "TDelay", "Timer", "Select",
    "SinOscFB", "Klang", "Klank", "Pluck", "FreeVerb", "FreeVerb2", "Logistic", "Hasher",
    "LPZ1", "HPZ1", "LPZ2", "HPZ2", "BPZ2", "BRZ2", "Slope", "MidEQ", "LinExp",
    "BLowPass", "BHiPass", "BBandPass", "BBandStop", "BPeakEQ", "BAllPass", "BLowShelf", "BHiShelf",
    "MoogFF", "Amplitude", "Compander", "Limiter", "Normalizer", "Hilbert", "FreqShift", "GVerb",
    "PanAz", "PanB", "PanB2", "BiPanB2", "DecodeB2", "Rotate2", "T2K", "T2A", "RunningSum", "ZeroCrossing",
    "PeakFollower", "MostChange", "LeastChange", "ModDif", "LastValue", "Lag2UD", "Lag3UD", "VarLag", "FOS",
    "APF", "Spring", "AmpComp", "AmpCompA",
    "CuspN", "CuspL", "FBSineN", "FBSineL", "FBSineC", "GbmanN", "GbmanL", "HenonN", "HenonL", "HenonC",
    "LatoocarfianN", "LatoocarfianL", "LatoocarfianC", "LinCongN", "LinCongL", "LinCongC", "LorenzL",
    "QuadN", "QuadL", "QuadC", "StandardN", "StandardL",
];

/// Operator numbers of UnaryOpUGen and BinaryOpUGen that draw random numbers.
const RANDOM_UNARY_OPS: &[i16] = &[37, 38, 39, 40, 41, 44];
const RANDOM_BINARY_OPS: &[i16] = &[47, 48];

fn build<T: Construct>(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(T::new(spec, io, cx))
}

impl Registry {
    /// Every UGen of every family.
    pub fn with_all() -> Registry {
        let mut r = Registry::default();
        crate::osc::register(&mut r);
        crate::noise::register(&mut r);
        crate::filters::register(&mut r);
        crate::delays::register(&mut r);
        crate::envelopes::register(&mut r);
        crate::triggers::register(&mut r);
        crate::ops::register(&mut r);
        crate::io::register(&mut r);
        crate::pan::register(&mut r);
        crate::bufio::register(&mut r);
        crate::info::register(&mut r);
        crate::reply::register(&mut r);
        crate::gc_units::register(&mut r);
        crate::demand::register(&mut r);
        crate::tables::register(&mut r);
        crate::utility::register(&mut r);
        crate::chaos::register(&mut r);
        crate::fft::register(&mut r);
        crate::grains::register(&mut r);
        crate::listening::register(&mut r);
        crate::convolution::register(&mut r);
        crate::assorted::register(&mut r);
        crate::scope::register(&mut r);
        crate::ui::register(&mut r);
        crate::disk::register(&mut r);
        crate::fault_test::register_if_enabled(&mut r);
        if let Some(extend) = EXTENSION.get() {
            extend(&mut r);
        }
        r
    }

    /// Registers a foreign unit (a plugin's) under `name`. An existing
    /// unit of that name stays unless `replace`, which also drops its
    /// batch and lane kernels.
    pub fn add_foreign(&mut self, name: &'static str, ctor: UnitCtor, replace: bool) {
        if self.ctors.contains_key(name) && !replace {
            return;
        }
        self.ctors.insert(name, ctor);
        self.batches.remove(name);
        self.lanes.remove(name);
        self.foreign.insert(name);
    }

    /// Whether `name` is a foreign (plugin) unit.
    pub fn is_foreign(&self, name: &str) -> bool {
        self.foreign.contains(name)
    }

    /// Registers `T` under `name`.
    pub fn add<T: Construct>(&mut self, name: &'static str) {
        self.add_ctor(name, build::<T>);
    }

    /// Registers a hand-written constructor (several names for one struct,
    /// or a constructor that picks among structs).
    pub fn add_ctor(&mut self, name: &'static str, ctor: UnitCtor) {
        let previous = self.ctors.insert(name, ctor);
        assert!(previous.is_none(), "UGen {name} registered twice");
    }

    /// Lets instances of `name` be computed in batches.
    pub fn add_batch(&mut self, name: &'static str, batchable: Batchable, ctor: UnitCtor) {
        let previous = self.batches.insert(name, BatchEntry { batchable, ctor });
        assert!(previous.is_none(), "batch for UGen {name} registered twice");
    }

    /// Lets the same step of several synths of one def run together.
    pub fn add_lanes(&mut self, name: &'static str, kernel: LaneKernel) {
        let previous = self.lanes.insert(name, kernel);
        assert!(previous.is_none(), "lane kernel for UGen {name} registered twice");
    }

    pub fn lanes(&self, name: &str) -> Option<LaneKernel> {
        self.lanes.get(name).copied()
    }

    pub fn batch(&self, name: &str) -> Option<BatchEntry> {
        self.batches.get(name).copied()
    }

    /// Whether a unit may be reordered freely within its data dependencies.
    pub fn is_pure(&self, name: &str, special_index: i16) -> bool {
        if self.is_foreign(name) {
            return false;
        }
        match name {
            "UnaryOpUGen" => !RANDOM_UNARY_OPS.contains(&special_index),
            "BinaryOpUGen" => !RANDOM_BINARY_OPS.contains(&special_index),
            // The test unit (`fault_test`) is pure, so it may run in parallel groups.
            "MagnetarFault" => true,
            _ => PURE.contains(&name),
        }
    }

    /// Whether a unit draws from the random generator its synth uses (the
    /// noise units, the random operators, and `RandSeed`, which reseeds it).
    pub fn draws_random(&self, name: &str, special_index: i16) -> bool {
        if self.is_foreign(name) {
            // Unknown: `foreign` already keeps such units in order.
            return false;
        }
        match name {
            "UnaryOpUGen" => RANDOM_UNARY_OPS.contains(&special_index),
            "BinaryOpUGen" => RANDOM_BINARY_OPS.contains(&special_index),
            _ => [crate::noise::RANDOM_UNITS, crate::demand::RANDOM_UNITS, crate::chaos::RANDOM_UNITS, crate::fft::RANDOM_UNITS, &["TWindex", "Warp1", "PitchShift", "GrainTap"]]
                .iter()
                .any(|list| list.contains(&name)),
        }
    }

    pub fn get(&self, name: &str) -> Option<UnitCtor> {
        self.ctors.get(name).copied()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.ctors.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.ctors.keys().copied()
    }
}
