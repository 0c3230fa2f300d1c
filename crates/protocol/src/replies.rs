//! Messages the server sends: replies to commands and notifications, laid out
//! as scsynth lays them out.

use crate::commands::{ControlId, ControlValue};
use crate::osc::{OscArg, OscMessage, OscPacket};
use std::borrow::Cow;

/// Where a node sits, as reported by `/n_go`, `/n_end`, `/n_off`, `/n_on`,
/// `/n_move` and `/n_info`. IDs are -1 where there is no such node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeState {
    pub node: i32,
    pub parent: i32,
    pub prev: i32,
    pub next: i32,
    /// `Some((head, tail))` for a group, `None` for a synth.
    pub group: Option<(i32, i32)>,
}

/// One buffer in a `/b_info` reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferInfo {
    pub buffer: i32,
    pub frames: i32,
    pub channels: i32,
    pub sample_rate: f32,
}

/// A node in a `/g_queryTree.reply`, as the reply lists it: in pre order,
/// each group followed by its children in execution order (a flat list, so
/// that a deep tree costs memory, not stack, to build and to encode).
#[derive(Debug, Clone, PartialEq)]
pub enum QueryTreeNode {
    Group {
        id: i32,
        /// How many of the entries that follow are its children (theirs
        /// follow each of them in turn).
        num_children: i32,
    },
    Synth {
        id: i32,
        def_name: String,
        /// Present when controls were asked for: each control by name (or
        /// index if unnamed) with its value or bus mapping.
        controls: Option<Vec<(ControlId, ControlValue)>>,
    },
}

/// `/g_queryTree.reply`: the queried group and its subtree.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTreeReply {
    pub with_controls: bool,
    /// The queried group first, then its subtree in pre order.
    pub nodes: Vec<QueryTreeNode>,
}

/// What `/status 1` (an extension) adds after scsynth's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusExtension {
    /// Periods the driver finished late, or that the audio server dropped.
    pub xruns: i32,
    /// Halves disk streams found undelivered when due.
    pub disk_underruns: i32,
    /// Periodic tasks found unfinished at their deadlines.
    pub deadline_misses: i32,
}

/// A message from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `/done command extra...`: the extra arguments are integers (a
    /// buffer number, `/notify`'s client id and maximum).
    Done { command: Cow<'static, str>, args: Vec<i32> },
    /// `/fail command message extra...`: the extra arguments are integers
    /// (the buffer number, where scsynth sends one).
    Fail { command: Cow<'static, str>, message: String, args: Vec<i32> },
    /// `/synced id`
    Synced { id: i32 },
    /// `/status.reply 1 ugens synths groups synthdefs avg_cpu peak_cpu
    /// nominal_rate actual_rate`
    Status {
        ugens: i32,
        synths: i32,
        groups: i32,
        synthdefs: i32,
        avg_cpu: f32,
        peak_cpu: f32,
        nominal_sample_rate: f64,
        actual_sample_rate: f64,
        /// `/status 1`'s extra counts, as integers after the rest.
        extension: Option<StatusExtension>,
    },
    /// `/version.reply program major minor patch branch commit`
    Version { program: String, major: i32, minor: i32, patch: String, branch: String, commit: String },
    /// `/rtMemoryStatus.reply free largest_free_chunk`
    RtMemoryStatus { free: i32, largest_free_chunk: i32 },
    /// `/n_go`
    NodeGo(NodeState),
    /// `/n_end`
    NodeEnd(NodeState),
    /// `/n_off`
    NodeOff(NodeState),
    /// `/n_on`
    NodeOn(NodeState),
    /// `/n_move`
    NodeMove(NodeState),
    /// `/n_info` (reply to `/n_query`)
    NodeInfo(NodeState),
    /// `/tr node trigger_id value`
    Trigger { node: i32, id: i32, value: f32 },
    /// `/b_info (buffer frames channels rate)...` (reply to `/b_query`)
    BufferInfo(Vec<BufferInfo>),
    /// `/n_set node (control value)...` (reply to `/s_get`)
    NodeSet { node: i32, controls: Vec<(ControlId, f32)> },
    /// `/n_setn node (control count values...)...` (reply to `/s_getn`)
    NodeSetn { node: i32, controls: Vec<(ControlId, Vec<f32>)> },
    /// `/c_set (bus value)...` (reply to `/c_get`)
    ControlSet { values: Vec<(i32, f32)> },
    /// `/c_setn (start count values...)...` (reply to `/c_getn`)
    ControlSetn { ranges: Vec<(i32, Vec<f32>)> },
    /// `/b_set buffer (index value)...` (reply to `/b_get`)
    BufferSet { buffer: i32, samples: Vec<(i32, f32)> },
    /// `/b_setn buffer (start count values...)...` (reply to `/b_getn`)
    BufferSetn { buffer: i32, ranges: Vec<(i32, Vec<f32>)> },
    /// `/g_queryTree.reply`
    QueryTree(QueryTreeReply),
    /// `/d_removed name`: a def `/d_free` removed is no longer used.
    DefRemoved { name: String },
    /// `/late`: as documented in the command reference, the bundle's time
    /// tag and the time it ran, each as (high, low) 32-bit halves.
    Late { bundle_time: u64, executed_time: u64 },
}

impl Reply {
    /// `/done` for a command with no extra arguments.
    pub fn done(command: impl Into<Cow<'static, str>>) -> Reply {
        Reply::Done { command: command.into(), args: Vec::new() }
    }

    /// `/fail` for a command with no extra arguments.
    pub fn fail(command: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Reply {
        Reply::Fail { command: command.into(), message: message.into(), args: Vec::new() }
    }

    /// Whether this is a `/fail` (which `/error 0` silences).
    pub fn is_fail(&self) -> bool {
        matches!(self, Reply::Fail { .. })
    }

    /// The OSC address of this reply.
    pub fn address(&self) -> &'static str {
        match self {
            Reply::Done { .. } => "/done",
            Reply::Fail { .. } => "/fail",
            Reply::Synced { .. } => "/synced",
            Reply::Status { .. } => "/status.reply",
            Reply::Version { .. } => "/version.reply",
            Reply::RtMemoryStatus { .. } => "/rtMemoryStatus.reply",
            Reply::NodeGo(_) => "/n_go",
            Reply::NodeEnd(_) => "/n_end",
            Reply::NodeOff(_) => "/n_off",
            Reply::NodeOn(_) => "/n_on",
            Reply::NodeMove(_) => "/n_move",
            Reply::NodeInfo(_) => "/n_info",
            Reply::Trigger { .. } => "/tr",
            Reply::BufferInfo(_) => "/b_info",
            Reply::NodeSet { .. } => "/n_set",
            Reply::NodeSetn { .. } => "/n_setn",
            Reply::ControlSet { .. } => "/c_set",
            Reply::ControlSetn { .. } => "/c_setn",
            Reply::BufferSet { .. } => "/b_set",
            Reply::BufferSetn { .. } => "/b_setn",
            Reply::QueryTree(_) => "/g_queryTree.reply",
            Reply::DefRemoved { .. } => "/d_removed",
            Reply::Late { .. } => "/late",
        }
    }

    /// The reply as an OSC message.
    pub fn to_message(&self) -> OscMessage {
        let mut a: Vec<OscArg> = Vec::new();
        match self {
            Reply::Done { command, args } => {
                a.push(command.as_ref().into());
                a.extend(args.iter().map(|&i| OscArg::Int(i)));
            }
            Reply::Fail { command, message, args } => {
                a.push(command.as_ref().into());
                a.push(message.as_str().into());
                a.extend(args.iter().map(|&i| OscArg::Int(i)));
            }
            Reply::Synced { id } => a.push((*id).into()),
            Reply::Status {
                ugens,
                synths,
                groups,
                synthdefs,
                avg_cpu,
                peak_cpu,
                nominal_sample_rate,
                actual_sample_rate,
                extension,
            } => {
                // The leading 1 is historical: "audio is running".
                a.extend([
                    OscArg::Int(1),
                    OscArg::Int(*ugens),
                    OscArg::Int(*synths),
                    OscArg::Int(*groups),
                    OscArg::Int(*synthdefs),
                    OscArg::Float(*avg_cpu),
                    OscArg::Float(*peak_cpu),
                    OscArg::Double(*nominal_sample_rate),
                    OscArg::Double(*actual_sample_rate),
                ]);
                if let Some(x) = extension {
                    a.extend([OscArg::Int(x.xruns), OscArg::Int(x.disk_underruns), OscArg::Int(x.deadline_misses)]);
                }
            }
            Reply::Version { program, major, minor, patch, branch, commit } => {
                a.extend([
                    program.as_str().into(),
                    OscArg::Int(*major),
                    OscArg::Int(*minor),
                    patch.as_str().into(),
                    branch.as_str().into(),
                    commit.as_str().into(),
                ]);
            }
            Reply::RtMemoryStatus { free, largest_free_chunk } => {
                a.extend([OscArg::Int(*free), OscArg::Int(*largest_free_chunk)]);
            }
            Reply::NodeGo(s)
            | Reply::NodeEnd(s)
            | Reply::NodeOff(s)
            | Reply::NodeOn(s)
            | Reply::NodeMove(s)
            | Reply::NodeInfo(s) => {
                a.extend([
                    OscArg::Int(s.node),
                    OscArg::Int(s.parent),
                    OscArg::Int(s.prev),
                    OscArg::Int(s.next),
                    OscArg::Int(s.group.is_some() as i32),
                ]);
                if let Some((head, tail)) = s.group {
                    a.extend([OscArg::Int(head), OscArg::Int(tail)]);
                }
            }
            Reply::Trigger { node, id, value } => {
                a.extend([OscArg::Int(*node), OscArg::Int(*id), OscArg::Float(*value)]);
            }
            Reply::BufferInfo(infos) => {
                for b in infos {
                    a.extend([
                        OscArg::Int(b.buffer),
                        OscArg::Int(b.frames),
                        OscArg::Int(b.channels),
                        OscArg::Float(b.sample_rate),
                    ]);
                }
            }
            Reply::NodeSet { node, controls } => {
                a.push(OscArg::Int(*node));
                for (c, v) in controls {
                    a.push(c.to_arg());
                    a.push(OscArg::Float(*v));
                }
            }
            Reply::NodeSetn { node, controls } => {
                a.push(OscArg::Int(*node));
                for (c, vs) in controls {
                    a.push(c.to_arg());
                    a.push(OscArg::Int(vs.len() as i32));
                    a.extend(vs.iter().map(|&v| OscArg::Float(v)));
                }
            }
            Reply::ControlSet { values } => {
                for &(i, v) in values {
                    a.extend([OscArg::Int(i), OscArg::Float(v)]);
                }
            }
            Reply::ControlSetn { ranges } => push_ranges(&mut a, ranges),
            Reply::BufferSet { buffer, samples } => {
                a.push(OscArg::Int(*buffer));
                for &(i, v) in samples {
                    a.extend([OscArg::Int(i), OscArg::Float(v)]);
                }
            }
            Reply::BufferSetn { buffer, ranges } => {
                a.push(OscArg::Int(*buffer));
                push_ranges(&mut a, ranges);
            }
            Reply::QueryTree(q) => {
                a.push(OscArg::Int(q.with_controls as i32));
                for node in &q.nodes {
                    push_tree_node(&mut a, node, q.with_controls);
                }
            }
            Reply::DefRemoved { name } => a.push(name.as_str().into()),
            Reply::Late { bundle_time, executed_time } => {
                a.extend([
                    OscArg::Int((bundle_time >> 32) as u32 as i32),
                    OscArg::Int(*bundle_time as u32 as i32),
                    OscArg::Int((executed_time >> 32) as u32 as i32),
                    OscArg::Int(*executed_time as u32 as i32),
                ]);
            }
        }
        OscMessage::new(self.address(), a)
    }

    /// The reply as a packet.
    pub fn to_packet(&self) -> OscPacket {
        OscPacket::Message(self.to_message())
    }

    /// The reply's wire bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.to_message().encode()
    }
}

fn push_ranges(a: &mut Vec<OscArg>, ranges: &[(i32, Vec<f32>)]) {
    for (start, vs) in ranges {
        a.push(OscArg::Int(*start));
        a.push(OscArg::Int(vs.len() as i32));
        a.extend(vs.iter().map(|&v| OscArg::Float(v)));
    }
}

fn push_tree_node(a: &mut Vec<OscArg>, node: &QueryTreeNode, with_controls: bool) {
    match node {
        QueryTreeNode::Group { id, num_children } => {
            a.push(OscArg::Int(*id));
            a.push(OscArg::Int(*num_children));
        }
        QueryTreeNode::Synth { id, def_name, controls } => {
            a.push(OscArg::Int(*id));
            a.push(OscArg::Int(-1));
            a.push(def_name.as_str().into());
            if with_controls {
                let controls = controls.as_deref().unwrap_or(&[]);
                a.push(OscArg::Int(controls.len() as i32));
                for (c, v) in controls {
                    a.push(c.to_arg());
                    a.push(v.to_arg());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(m: &OscMessage) -> Vec<i32> {
        m.args.iter().filter_map(|a| if let OscArg::Int(i) = a { Some(*i) } else { None }).collect()
    }

    #[test]
    fn node_notifications_add_head_and_tail_only_for_groups() {
        let synth = NodeState { node: 1000, parent: 1, prev: -1, next: 1001, group: None };
        let m = Reply::NodeGo(synth).to_message();
        assert_eq!(m.address.as_name(), Some("/n_go"));
        assert_eq!(ints(&m), vec![1000, 1, -1, 1001, 0]);
        let group = NodeState { node: 2, parent: 0, prev: 1, next: -1, group: Some((1000, 1001)) };
        assert_eq!(ints(&Reply::NodeEnd(group).to_message()), vec![2, 0, 1, -1, 1, 1000, 1001]);
    }

    #[test]
    fn done_and_fail_carry_command_name_first() {
        let m = Reply::Done { command: "/b_alloc".into(), args: vec![3] }.to_message();
        assert_eq!(m.args, vec![OscArg::Str("/b_alloc".into()), OscArg::Int(3)]);
        let m = Reply::fail("/s_new", "SynthDef not found").to_message();
        assert_eq!(m.address.as_name(), Some("/fail"));
        assert_eq!(m.args, vec![OscArg::Str("/s_new".into()), OscArg::Str("SynthDef not found".into())]);
    }

    #[test]
    fn status_reply_has_scsynth_types() {
        let mut status = Reply::Status {
            ugens: 1,
            synths: 2,
            groups: 3,
            synthdefs: 4,
            avg_cpu: 0.5,
            peak_cpu: 1.0,
            nominal_sample_rate: 48000.0,
            actual_sample_rate: 48000.1,
            extension: None,
        };
        let m = status.to_message();
        let tags: String = m.args.iter().map(|a| a.type_tag()).collect();
        assert_eq!(tags, "iiiiiffdd");
        assert_eq!(m.args[0], OscArg::Int(1));
        let Reply::Status { extension, .. } = &mut status else { unreachable!() };
        *extension = Some(StatusExtension { xruns: 7, disk_underruns: 8, deadline_misses: 9 });
        let m = status.to_message();
        let tags: String = m.args.iter().map(|a| a.type_tag()).collect();
        assert_eq!(tags, "iiiiiffddiii");
        assert_eq!(m.args[9..], [OscArg::Int(7), OscArg::Int(8), OscArg::Int(9)]);
    }

    #[test]
    fn query_tree_is_flattened_in_execution_order() {
        let tree = QueryTreeReply {
            with_controls: true,
            nodes: vec![
                QueryTreeNode::Group { id: 0, num_children: 2 },
                QueryTreeNode::Group { id: 1, num_children: 1 },
                QueryTreeNode::Synth {
                    id: 1000,
                    def_name: "sine".into(),
                    controls: Some(vec![
                        ("freq".into(), ControlValue::Value(440.0)),
                        (1.into(), ControlValue::ControlBus(3)),
                    ]),
                },
                QueryTreeNode::Group { id: 2, num_children: 0 },
            ],
        };
        let m = Reply::QueryTree(tree).to_message();
        assert_eq!(
            m.args,
            vec![
                OscArg::Int(1),
                OscArg::Int(0),
                OscArg::Int(2),
                OscArg::Int(1),
                OscArg::Int(1),
                OscArg::Int(1000),
                OscArg::Int(-1),
                OscArg::Str("sine".into()),
                OscArg::Int(2),
                OscArg::Str("freq".into()),
                OscArg::Float(440.0),
                OscArg::Int(1),
                OscArg::Str("c3".into()),
                OscArg::Int(2),
                OscArg::Int(0),
            ]
        );
    }

    #[test]
    fn getn_replies_carry_counts() {
        let m = Reply::BufferSetn { buffer: 4, ranges: vec![(10, vec![0.5, 0.25])] }.to_message();
        assert_eq!(
            m.args,
            vec![OscArg::Int(4), OscArg::Int(10), OscArg::Int(2), OscArg::Float(0.5), OscArg::Float(0.25)]
        );
        let m = Reply::NodeSet { node: 5, controls: vec![("amp".into(), 0.1)] }.to_message();
        assert_eq!(m.address.as_name(), Some("/n_set"));
        assert_eq!(m.args, vec![OscArg::Int(5), OscArg::Str("amp".into()), OscArg::Float(0.1)]);
    }

    #[test]
    fn late_splits_time_tags_into_halves() {
        let m = Reply::Late { bundle_time: (5 << 32) | 7, executed_time: (6 << 32) | 0xffff_ffff }.to_message();
        assert_eq!(ints(&m), vec![5, 7, 6, -1]);
    }
}
