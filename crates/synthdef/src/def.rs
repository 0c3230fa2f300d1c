//! The typed description of a parsed SynthDef.

use std::fmt;

/// How often a unit (or one of its outputs) computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rate {
    /// Once, when the synth starts.
    Scalar,
    /// Once per control block.
    Control,
    /// Once per sample.
    Audio,
    /// When a consumer asks for a value.
    Demand,
}

impl Rate {
    /// The rate for a byte as written in a SynthDef file (0..=3), if it is one.
    pub fn from_u8(byte: u8) -> Option<Rate> {
        match byte {
            0 => Some(Rate::Scalar),
            1 => Some(Rate::Control),
            2 => Some(Rate::Audio),
            3 => Some(Rate::Demand),
            _ => None,
        }
    }

    /// The byte a SynthDef file uses for this rate.
    pub fn as_u8(self) -> u8 {
        match self {
            Rate::Scalar => 0,
            Rate::Control => 1,
            Rate::Audio => 2,
            Rate::Demand => 3,
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rate::Scalar => "scalar",
            Rate::Control => "control",
            Rate::Audio => "audio",
            Rate::Demand => "demand",
        })
    }
}

/// Where one input of a unit takes its value from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Input {
    /// An entry of [`SynthDef::constants`].
    Constant(u32),
    /// Output `output` of the unit at index `unit` of [`SynthDef::ugens`],
    /// which always comes before the unit reading it.
    Unit { unit: u32, output: u32 },
}

/// One unit generator of a def, in execution order.
#[derive(Debug, Clone, PartialEq)]
pub struct UGenSpec {
    /// The UGen's class name (e.g. `SinOsc`); not checked against any plugin list.
    pub name: String,
    pub rate: Rate,
    /// Unit-specific selector, e.g. the operator of a `BinaryOpUGen`.
    pub special_index: i16,
    pub inputs: Vec<Input>,
    /// The rate of each output; its length is the unit's output count.
    pub outputs: Vec<Rate>,
}

/// A control name and the index of its first value in [`SynthDef::params`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParamName {
    pub name: String,
    pub index: u32,
}

/// An alternative set of initial parameter values stored with a def.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The name as stored in the file; sclang writes `"defname.variantname"`.
    pub name: String,
    /// One value per parameter of the def.
    pub params: Vec<f32>,
}

/// One synth definition, validated: every input refers to an existing constant
/// or to an existing output of an earlier unit, every control name points inside
/// `params`, and every variant has exactly `params.len()` values.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthDef {
    pub name: String,
    pub constants: Vec<f32>,
    /// Initial values of the controls.
    pub params: Vec<f32>,
    pub param_names: Vec<ParamName>,
    pub ugens: Vec<UGenSpec>,
    pub variants: Vec<Variant>,
}

impl SynthDef {
    /// The def itself plus one def per variant, as scsynth installs them.
    ///
    /// A variant def is named with the variant's stored name (which sclang
    /// already writes as `"defname.variantname"`), starts from the variant's
    /// values and has no variants of its own.
    ///
    /// Each variant def is a full copy of the graph; callers that accept defs
    /// from the network may want to bound `variants.len() * ugens.len()` first.
    pub fn with_variants(mut self) -> Vec<SynthDef> {
        let variants = std::mem::take(&mut self.variants);
        let mut defs = Vec::with_capacity(variants.len() + 1);
        for variant in variants {
            defs.push(SynthDef {
                name: variant.name,
                constants: self.constants.clone(),
                params: variant.params,
                param_names: self.param_names.clone(),
                ugens: self.ugens.clone(),
                variants: Vec::new(),
            });
        }
        defs.insert(0, self);
        defs
    }

    /// The index in [`SynthDef::params`] of the control called `name`.
    ///
    /// For a control spanning several values this is the index of its first
    /// value. If a name occurs twice, the first one counts (as in scsynth).
    pub fn param_index(&self, name: &str) -> Option<u32> {
        self.find_param(name).map(|p| p.index)
    }

    /// How many parameter values the control called `name` spans: the distance
    /// from its index to the next larger index of any named control, or to the
    /// end of [`SynthDef::params`].
    pub fn param_len(&self, name: &str) -> Option<u32> {
        let start = self.find_param(name)?.index;
        let end = self
            .param_names
            .iter()
            .map(|p| p.index)
            .filter(|&index| index > start)
            .min()
            .unwrap_or_else(|| u32::try_from(self.params.len()).unwrap_or(u32::MAX));
        Some(end.saturating_sub(start))
    }

    fn find_param(&self, name: &str) -> Option<&ParamName> {
        self.param_names.iter().find(|p| p.name == name)
    }
}
