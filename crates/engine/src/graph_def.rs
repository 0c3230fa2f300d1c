//! A SynthDef made ready to instantiate: every UGen resolved to its
//! constructor and every wire given its place in the synth's wire array.

use magnetar_synthdef as sd;
use magnetar_ugens::unit::NO_UNIT;
use magnetar_ugens::{Rate, Registry, UnitCtor, UnitSpec, WireRef};
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

/// One unit to build and run: a unit of the def, or a batch of several.
pub struct Step {
    pub ctor: UnitCtor,
    /// The def unit this step stands for (the last member of a batch);
    /// its done flag is the one the step sets.
    pub unit: u32,
    pub lanes: usize,
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
    /// What a synth builds and runs, in order: one step per unit, except
    /// that independent instances of a batchable UGen share one step.
    pub steps: Vec<Step>,
    /// Steps that compute every block (audio and control rate), in order.
    pub calc_steps: Vec<u32>,
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
        let steps = plan_steps(&units, registry);
        let calc_steps = steps
            .iter()
            .enumerate()
            .filter(|(_, st)| units[st.unit as usize].rate != Rate::Scalar)
            .map(|(i, _)| i as u32)
            .collect();
        Ok(GraphDef {
            name: def.name.clone(),
            constants: def.constants.clone(),
            initial_controls: def.params.clone(),
            params,
            param_names: def.param_names.iter().map(|p| (p.name.clone(), p.index)).collect(),
            units,
            steps,
            calc_steps,
            wire_len,
        })
    }

    /// The first control index and count for a control name.
    pub fn param(&self, name: &str) -> Option<(u32, u32)> {
        self.params.get(name).copied()
    }
}

/// Groups independent instances of batchable UGens into single steps. A
/// batch runs where its last member stood; that is sound because members
/// only read their inputs (computed earlier) and write their outputs, and
/// the group closes before any unit that reads a member's output.
fn plan_steps(units: &[UnitDef], registry: &Registry) -> Vec<Step> {
    const MAX_LANES: usize = 256;
    let single = |i: usize| Step {
        ctor: units[i].ctor,
        unit: i as u32,
        lanes: 1,
        inputs: units[i].inputs.clone(),
        outputs: units[i].outputs.clone(),
    };
    fn spec_of(u: &UnitDef) -> UnitSpec<'_> {
        UnitSpec {
            name: &u.name,
            rate: u.rate,
            special_index: u.special_index,
            num_inputs: u.inputs.len(),
            num_outputs: u.outputs.len(),
            lanes: 1,
        }
    }
    let rates = |u: &UnitDef| u.inputs.iter().map(|w| w.rate).collect::<Vec<_>>();
    let batchable = |u: &UnitDef| registry.batch(&u.name).filter(|b| (b.batchable)(&spec_of(u), &rates(u)));

    // Where each unit ends up: None = not yet placed, Some(step) = placed.
    let mut member_of: Vec<Option<usize>> = vec![None; units.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for start in 0..units.len() {
        if member_of[start].is_some() || batchable(&units[start]).is_none() {
            continue;
        }
        let head = &units[start];
        let signature = (head.name.as_str(), head.rate, head.special_index, rates(head), head.outputs.len());
        let mut members = vec![start];
        let mut is_member = vec![false; units.len()];
        is_member[start] = true;
        for v in start + 1..units.len() {
            if members.len() == MAX_LANES {
                break;
            }
            let u = &units[v];
            let reads_member = u.inputs.iter().any(|w| w.from_unit != NO_UNIT && is_member[w.from_unit as usize]);
            if reads_member {
                break;
            }
            if member_of[v].is_none()
                && (u.name.as_str(), u.rate, u.special_index, rates(u), u.outputs.len()) == signature
                && batchable(u).is_some()
            {
                members.push(v);
                is_member[v] = true;
            }
        }
        if members.len() > 1 {
            let g = groups.len();
            for &m in &members {
                member_of[m] = Some(g);
            }
            groups.push(members);
        }
    }

    let mut steps = Vec::with_capacity(units.len());
    for i in 0..units.len() {
        match member_of[i] {
            None => steps.push(single(i)),
            Some(g) if *groups[g].last().unwrap() == i => {
                let members = &groups[g];
                let entry = batchable(&units[i]).expect("members are batchable");
                steps.push(Step {
                    ctor: entry.ctor,
                    unit: i as u32,
                    lanes: members.len(),
                    inputs: members.iter().flat_map(|&m| units[m].inputs.iter().copied()).collect(),
                    outputs: members.iter().flat_map(|&m| units[m].outputs.iter().copied()).collect(),
                });
            }
            Some(_) => {}
        }
    }
    steps
}
