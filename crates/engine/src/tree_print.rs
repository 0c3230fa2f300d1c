//! The text the walk prints as it reaches a node that `/g_dumpTree` marked
//! (scsynth prints when the group runs, not when the command arrives).

use crate::limits::MAX_DUMP_INDENT;
use crate::node_tree::{CalcState, NodeIdx, NodeKind, NodeTree};
use magnetar_protocol::printed::c_g;
use magnetar_ugens::ControlMap;

/// `/g_dumpTree`'s lines for the children of `top`, as scsynth prints
/// them: three spaces a level; with controls, a second line per synth
/// holding ` name: value` (or ` value` for unnamed ones, `cN`/`aN` for
/// mapped ones) with `%.14g` numbers. scsynth walks the tree as it runs,
/// so a paused group's children are not listed. Walks node by node in
/// pre order without recursion; indentation stops growing past
/// `MAX_DUMP_INDENT` levels, so a deep tree's dump stays linear in size.
pub(crate) fn dump_tree(tree: &NodeTree, top: NodeIdx, depth: usize, with_controls: bool, out: &mut String) {
    if tree.node(top).state != CalcState::Run {
        return;
    }
    let mut depth = depth;
    let mut cur = tree.group(top).and_then(|g| g.head);
    while let Some(c) = cur {
        let n = tree.node(c);
        let pad = "   ".repeat(depth.min(MAX_DUMP_INDENT));
        match &n.kind {
            NodeKind::Group(_) => {
                out.push_str(&format!("{pad}{} group\n", n.id));
            }
            NodeKind::Synth(s) => {
                out.push_str(&format!("{pad}{} {}", n.id, s.def.name));
                if with_controls && !s.ctx.controls.is_empty() {
                    out.push_str("\n ");
                    out.push_str(&pad);
                    for (i, v) in s.ctx.controls.iter().enumerate() {
                        match s.def.param_names.iter().find(|p| p.1 as usize == i) {
                            Some((name, _)) => out.push_str(&format!(" {name}: ")),
                            None => out.push(' '),
                        }
                        match s.ctx.control_map[i] {
                            ControlMap::Own => out.push_str(&c_g(*v as f64, 14)),
                            ControlMap::ControlBus(b) => out.push_str(&format!("c{b}")),
                            ControlMap::AudioBus(b) => out.push_str(&format!("a{b}")),
                        }
                    }
                }
                out.push('\n');
            }
        }
        // On to the next node in pre order (into running groups only),
        // keeping count of the depth.
        let head = if n.state == CalcState::Run { tree.group(c).and_then(|g| g.head) } else { None };
        cur = match head {
            Some(h) => {
                depth += 1;
                Some(h)
            }
            None => {
                let mut x = c;
                loop {
                    if x == top {
                        break None;
                    }
                    if let Some(nx) = tree.node(x).next {
                        break Some(nx);
                    }
                    match tree.node(x).parent {
                        Some(p) => {
                            x = p;
                            depth -= 1;
                        }
                        None => break None,
                    }
                }
            }
        };
    }
}
