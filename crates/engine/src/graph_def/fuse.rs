//! Units that run as one step although no batch constructor joins them:
//! trees of audio-rate sums (a `Mix`), and runs of control-rate operators.
//!
//! Both are made after scheduling, from steps of one unit each, and keep
//! every unit's output wire written as the unit would write it; unit
//! indices stay those of the def (each member's step is the fused one).

use super::{source_unit, Proto, Step, UnitDef};
use magnetar_ugens::ops::control_ops::control_batch;
use magnetar_ugens::ops::sum_tree::{Operand, SumTree};
use magnetar_ugens::{Rate, UnitCtor, WireRef};

/// How the units of a step run.
pub(super) enum Fusion {
    /// As scheduled: one unit, or a batch of one kind.
    Plain,
    /// A tree of sums (see `sum_tree_members`), its root last.
    SumTree,
    /// A run of control-rate operators of one kind, built by this constructor.
    ControlOps(UnitCtor),
}

/// Whether unit `i` may be a node of a sum tree: an audio-rate Sum3, Sum4
/// or `+` (not a plugin's), every input an audio wire, alone in its step.
fn sum_node(protos: &[Proto<'_>], alone: &[bool], i: usize) -> bool {
    let p = &protos[i];
    let arity = match p.spec.name.as_str() {
        "Sum3" => 3,
        "Sum4" => 4,
        "BinaryOpUGen" if p.spec.special_index == 0 => 2,
        _ => return false,
    };
    alone[i]
        && p.pure
        && !p.effects.foreign
        && p.rate == Rate::Audio
        && p.spec.outputs.len() == 1
        && p.spec.inputs.len() == arity
        && p.spec.inputs.iter().all(|inp| source_unit(inp).is_some_and(|u| protos[u].rate == Rate::Audio))
}

/// Whether unit `i` may join a run of control-rate operators, and with
/// which constructor: a control-rate BinaryOpUGen (not a plugin's) whose
/// operator has one, reading constants and control or scalar wires, alone
/// in its step.
fn control_op(protos: &[Proto<'_>], alone: &[bool], i: usize) -> Option<UnitCtor> {
    if alone[i] {
        lone_control_op(protos, i)
    } else {
        None
    }
}

/// [`control_op`] for a unit known to be alone in its step: the
/// constructor of a run of its operator, if it may join one. Such a unit
/// alone in a plain step computes its one value from its inputs and
/// nothing else, as a run does.
pub(super) fn lone_control_op(protos: &[Proto<'_>], i: usize) -> Option<UnitCtor> {
    let p = &protos[i];
    let fits = p.spec.name == "BinaryOpUGen"
        && p.pure
        && !p.effects.foreign
        && p.rate == Rate::Control
        && p.spec.outputs.len() == 1
        && p.spec.inputs.len() == 2
        && p.spec.inputs.iter().all(|inp| source_unit(inp).is_none_or(|u| matches!(protos[u].rate, Rate::Scalar | Rate::Control)));
    if fits {
        control_batch(p.spec.special_index)
    } else {
        None
    }
}

/// Joins the steps of sum trees and of runs of control-rate operators.
///
/// A sum tree is a set of sum nodes (`sum_node`) in which every node but
/// the root feeds exactly one input of the whole def, an input of another
/// node of the tree; two nodes or more make one step, at the root's place
/// (the others feed only the tree, so they may run later), its nodes in
/// the def's order. A run is two or more consecutive steps of control-rate
/// operators of one kind (`control_op`), none reading another's output.
pub(super) fn fuse_steps(protos: &[Proto<'_>], groups: Vec<Vec<usize>>) -> (Vec<Vec<usize>>, Vec<Fusion>) {
    let n = protos.len();
    let mut alone = vec![false; n];
    for g in &groups {
        if let [u] = g[..] {
            alone[u] = true;
        }
    }
    // How many inputs read each unit, and the last that does.
    let mut reads = vec![0usize; n];
    let mut reader = vec![usize::MAX; n];
    for (i, p) in protos.iter().enumerate() {
        for u in p.spec.inputs.iter().filter_map(source_unit) {
            reads[u] += 1;
            reader[u] = i;
        }
    }
    let node: Vec<bool> = (0..n).map(|i| sum_node(protos, &alone, i)).collect();
    // Each node's root: readers come later than what they read, so a walk
    // from the last unit down finds a parent's root before its children's.
    let mut root = vec![usize::MAX; n];
    let mut size = vec![0usize; n];
    for i in (0..n).rev() {
        if !node[i] {
            continue;
        }
        root[i] = if reads[i] == 1 && node[reader[i]] { root[reader[i]] } else { i };
        size[root[i]] += 1;
    }
    let fused = |i: usize| node[i] && size[root[i]] >= 2;

    let mut out_groups = Vec::with_capacity(groups.len());
    let mut kinds = Vec::with_capacity(groups.len());
    let mut run: Vec<usize> = Vec::new();
    let mut run_ctor: Option<UnitCtor> = None;
    let flush = |run: &mut Vec<usize>, ctor: Option<UnitCtor>, out_groups: &mut Vec<Vec<usize>>, kinds: &mut Vec<Fusion>| {
        match (run.len(), ctor) {
            (0, _) => {}
            (1, _) | (_, None) => {
                for &u in run.iter() {
                    out_groups.push(vec![u]);
                    kinds.push(Fusion::Plain);
                }
            }
            (_, Some(ctor)) => {
                out_groups.push(run.clone());
                kinds.push(Fusion::ControlOps(ctor));
            }
        }
        run.clear();
    };
    for g in groups {
        let single = if let [u] = g[..] { Some(u) } else { None };
        let op = single.and_then(|u| control_op(protos, &alone, u).map(|ctor| (u, ctor)));
        if let Some((u, ctor)) = op {
            let same = run.first().is_some_and(|&f| protos[f].spec.special_index == protos[u].spec.special_index);
            let reads_run = protos[u].spec.inputs.iter().filter_map(source_unit).any(|s| run.contains(&s));
            if !same || reads_run {
                flush(&mut run, run_ctor, &mut out_groups, &mut kinds);
            }
            run.push(u);
            run_ctor = Some(ctor);
            continue;
        }
        flush(&mut run, run_ctor, &mut out_groups, &mut kinds);
        match single {
            Some(u) if fused(u) => {
                if root[u] == u {
                    let members: Vec<usize> = (0..=u).filter(|&m| fused(m) && root[m] == u).collect();
                    out_groups.push(members);
                    kinds.push(Fusion::SumTree);
                }
            }
            _ => {
                out_groups.push(g);
                kinds.push(Fusion::Plain);
            }
        }
    }
    flush(&mut run, run_ctor, &mut out_groups, &mut kinds);
    debug_assert_eq!(out_groups.iter().map(Vec::len).sum::<usize>(), n, "every unit is scheduled once");
    (out_groups, kinds)
}

/// The step of a fused group, once wires are placed (None for `Plain`).
pub(super) fn fused_step(fusion: &Fusion, members: &[usize], units: &[UnitDef]) -> Option<Step> {
    let last = *members.last()?;
    let outputs: Vec<WireRef> = members.iter().flat_map(|&m| units[m].outputs.iter().copied()).collect();
    match *fusion {
        Fusion::Plain => None,
        Fusion::ControlOps(ctor) => Some(Step {
            ctor,
            unit: last as u32,
            lanes: members.len(),
            audio: false,
            lane: None,
            draws: false,
            inputs: members.iter().flat_map(|&m| units[m].inputs.iter().copied()).collect(),
            outputs,
            sum_tree: None,
            writes_bus: false,
        }),
        Fusion::SumTree => {
            // The step's inputs are the wires from outside the tree, in the
            // order the nodes read them.
            let mut inputs = Vec::new();
            let nodes = members
                .iter()
                .map(|&m| {
                    units[m]
                        .inputs
                        .iter()
                        .map(|w| match members.iter().position(|&u| u as u32 == w.from_unit) {
                            Some(j) => Operand::Node(j as u32),
                            None => {
                                inputs.push(*w);
                                Operand::Input(inputs.len() as u32 - 1)
                            }
                        })
                        .collect()
                })
                .collect();
            Some(Step {
                ctor: units[last].ctor,
                unit: last as u32,
                lanes: members.len(),
                audio: true,
                lane: None,
                draws: false,
                inputs,
                outputs,
                sum_tree: Some(SumTree { nodes }),
                writes_bus: false,
            })
        }
    }
}

#[cfg(test)]
mod tests;
