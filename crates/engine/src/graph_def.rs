//! A SynthDef made ready to instantiate: every UGen resolved to its
//! constructor and every wire given its place in the synth's wire array.

use magnetar_synthdef as sd;
use magnetar_ugens::unit::NO_UNIT;
use magnetar_ugens::{Rate, Registry, UnitCtor, WireRef};
use std::collections::HashMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DefError {
    #[error("synthdef \"{def}\": UGen '{ugen}' not installed")]
    UnknownUGen { def: String, ugen: String },
    #[error("synthdef \"{def}\": UGen {unit} ({ugen}) has rate {rate:?}, which magnetar cannot run")]
    UnsupportedRate { def: String, unit: usize, ugen: String, rate: Rate },
}

/// One UGen of a def, resolved.
pub struct UnitDef {
    pub name: String,
    pub rate: Rate,
    pub special_index: i16,
    pub ctor: UnitCtor,
    pub inputs: Vec<WireRef>,
    pub outputs: Vec<WireRef>,
}

/// A compiled SynthDef, shared by all synths made from it.
pub struct GraphDef {
    pub name: String,
    /// Constant values; they occupy the first slots of the wire array.
    pub constants: Vec<f32>,
    pub initial_controls: Vec<f32>,
    /// Control name → (first index, number of values).
    pub params: HashMap<String, (u32, u32)>,
    /// Names in definition order, for replies that list controls.
    pub param_names: Vec<(String, u32)>,
    pub units: Vec<UnitDef>,
    /// Units that compute every block (audio and control rate), in order.
    pub calc_units: Vec<u32>,
    /// Length of the wire array in samples.
    pub wire_len: usize,
}

fn rate_of(r: sd::Rate) -> Rate {
    match r {
        sd::Rate::Scalar => Rate::Scalar,
        sd::Rate::Control => Rate::Control,
        sd::Rate::Audio => Rate::Audio,
        sd::Rate::Demand => Rate::Demand,
    }
}

impl GraphDef {
    /// Resolves `def` against the installed UGens. The parser has already
    /// checked that every input refers to an earlier unit or a constant.
    pub fn compile(def: &sd::SynthDef, registry: &Registry, block_size: usize) -> Result<GraphDef, DefError> {
        let mut wire_len = def.constants.len();
        let mut units: Vec<UnitDef> = Vec::with_capacity(def.ugens.len());
        let mut calc_units = Vec::new();
        for (index, spec) in def.ugens.iter().enumerate() {
            let ctor = registry.get(&spec.name).ok_or_else(|| DefError::UnknownUGen {
                def: def.name.clone(),
                ugen: spec.name.clone(),
            })?;
            let rate = rate_of(spec.rate);
            if rate == Rate::Demand {
                return Err(DefError::UnsupportedRate {
                    def: def.name.clone(),
                    unit: index,
                    ugen: spec.name.clone(),
                    rate,
                });
            }
            let inputs = spec
                .inputs
                .iter()
                .map(|input| match *input {
                    sd::Input::Constant(c) => WireRef { offset: c, rate: Rate::Scalar, from_unit: NO_UNIT },
                    sd::Input::Unit { unit, output } => {
                        let from = &units[unit as usize];
                        WireRef { offset: from.outputs[output as usize].offset, rate: from.rate, from_unit: unit }
                    }
                })
                .collect();
            let out_len = if rate == Rate::Audio { block_size } else { 1 };
            let outputs = (0..spec.outputs.len())
                .map(|_| {
                    let w = WireRef { offset: wire_len as u32, rate, from_unit: index as u32 };
                    wire_len += out_len;
                    w
                })
                .collect();
            if rate != Rate::Scalar {
                calc_units.push(index as u32);
            }
            units.push(UnitDef {
                name: spec.name.clone(),
                rate,
                special_index: spec.special_index,
                ctor,
                inputs,
                outputs,
            });
        }
        let mut params = HashMap::new();
        let mut sorted: Vec<(String, u32)> = def.param_names.iter().map(|p| (p.name.clone(), p.index)).collect();
        sorted.sort_by_key(|p| p.1);
        for (i, (name, index)) in sorted.iter().enumerate() {
            let end = sorted.get(i + 1).map(|p| p.1).unwrap_or(def.params.len() as u32);
            params.entry(name.clone()).or_insert((*index, end.saturating_sub(*index)));
        }
        Ok(GraphDef {
            name: def.name.clone(),
            constants: def.constants.clone(),
            initial_controls: def.params.clone(),
            params,
            param_names: def.param_names.iter().map(|p| (p.name.clone(), p.index)).collect(),
            units,
            calc_units,
            wire_len,
        })
    }

    /// The first control index and count for a control name.
    pub fn param(&self, name: &str) -> Option<(u32, u32)> {
        self.params.get(name).copied()
    }
}
