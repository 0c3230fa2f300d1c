//! scsynth's command set as typed values, parsed from OSC messages.
//!
//! Argument handling follows scsynth's (its `sc_msg_iter` reads): where an
//! integer is expected a float is truncated; where a float is expected an
//! integer or double is converted; a missing trailing argument takes the
//! default scsynth uses (0 for most integers; the exceptions are noted on the
//! fields). Repeated groups (`/n_free` ids, `/g_new` triples, `/n_set` pairs)
//! are read while a whole group remains, as scsynth does; a trailing partial
//! group is ignored, or completed with defaults where scsynth does that.
//!
//! Where scsynth silently reads a wrongly typed argument as 0 (a string where a
//! node ID belongs, say), parsing fails instead, with a message naming the
//! command, the argument's position and what was expected.

use crate::osc::{Address, OscArg, OscMessage};
use thiserror::Error;

/// Where a new node goes relative to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddAction {
    /// 0: at the head of the target group.
    Head = 0,
    /// 1: at the tail of the target group.
    Tail = 1,
    /// 2: just before the target node.
    Before = 2,
    /// 3: just after the target node.
    After = 3,
    /// 4: in place of the target node, which is freed.
    Replace = 4,
}

impl AddAction {
    pub fn from_i32(v: i32) -> Option<AddAction> {
        Some(match v {
            0 => AddAction::Head,
            1 => AddAction::Tail,
            2 => AddAction::Before,
            3 => AddAction::After,
            4 => AddAction::Replace,
            _ => return None,
        })
    }
}

/// A synth control, addressed by index or by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ControlId {
    Index(i32),
    Name(String),
}

impl From<i32> for ControlId {
    fn from(v: i32) -> Self {
        ControlId::Index(v)
    }
}
impl From<&str> for ControlId {
    fn from(v: &str) -> Self {
        ControlId::Name(v.to_owned())
    }
}

impl ControlId {
    pub fn to_arg(&self) -> OscArg {
        match self {
            ControlId::Index(i) => OscArg::Int(*i),
            ControlId::Name(n) => OscArg::Str(n.clone()),
        }
    }
}

/// What a control is set to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ControlValue {
    /// A plain value (ints arrive converted to float).
    Value(f32),
    /// `"c<n>"`: map the control to read control bus n.
    ControlBus(i32),
    /// `"a<n>"`: map the control to read audio bus n.
    AudioBus(i32),
}

impl ControlValue {
    /// The OSC form: a float, or the bus-map string `c<n>` / `a<n>`.
    pub fn to_arg(&self) -> OscArg {
        match *self {
            ControlValue::Value(v) => OscArg::Float(v),
            ControlValue::ControlBus(b) => OscArg::Str(format!("c{b}")),
            ControlValue::AudioBus(b) => OscArg::Str(format!("a{b}")),
        }
    }
}

/// Sets `values.len()` consecutive controls starting at `control` (an array
/// argument sets several; a plain value sets one).
#[derive(Debug, Clone, PartialEq)]
pub struct ControlSet {
    pub control: ControlId,
    pub values: Vec<ControlValue>,
}

/// `/n_fill` group: `count` consecutive controls from `control` set to `value`
/// (a bus mapping maps them to consecutive buses).
#[derive(Debug, Clone, PartialEq)]
pub struct ControlFill {
    pub control: ControlId,
    pub count: i32,
    pub value: ControlValue,
}

/// `/n_map` / `/n_mapa` pair: map `control` to `bus` (-1 unmaps).
#[derive(Debug, Clone, PartialEq)]
pub struct BusMap {
    pub control: ControlId,
    pub bus: i32,
}

/// `/n_mapn` / `/n_mapan` triple: map `count` controls from `control` to
/// consecutive buses from `bus` (-1 unmaps).
#[derive(Debug, Clone, PartialEq)]
pub struct BusMapRange {
    pub control: ControlId,
    pub bus: i32,
    pub count: i32,
}

/// `/g_new` / `/p_new` triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewGroup {
    pub id: i32,
    pub add_action: AddAction,
    pub target: i32,
}

/// A range of values starting at `start` (`/b_setn`, `/c_setn`).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRange {
    pub start: i32,
    pub values: Vec<f32>,
}

/// A fill of `count` samples/buses from `start` with `value`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueFill {
    pub start: i32,
    pub count: i32,
    pub value: f32,
}

/// Raw bytes of an OSC packet to perform when an asynchronous command
/// completes.
pub type Completion = Option<Vec<u8>>;

/// One command of the Server Command Reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `/none` (command number 0): does nothing.
    None,

    // ---- top level
    /// `/quit`
    Quit,
    /// `/notify on [client_id]`; `client_id` -1 (the default) lets the server
    /// pick.
    Notify { on: bool, client_id: i32 },
    /// `/status`
    Status,
    /// `/cmd name args...`: a plug-in command.
    Cmd { name: String, args: Vec<OscArg> },
    /// `/dumpOSC mode`: 0 off, 1 parsed, 2 hex, 3 both.
    DumpOsc { mode: i32 },
    /// `/sync id`
    Sync { id: i32 },
    /// `/clearSched`
    ClearSched,
    /// `/error mode`: 0 off, 1 on, -1 off for this bundle, -2 on for this
    /// bundle.
    Error { mode: i32 },
    /// `/version`
    Version,
    /// `/rtMemoryStatus`
    RtMemoryStatus,

    // ---- synth definitions
    /// `/d_recv data [completion]`
    DRecv { data: Vec<u8>, completion: Completion },
    /// `/d_load path [completion]` (path may hold wildcards)
    DLoad { path: String, completion: Completion },
    /// `/d_loadDir dir [completion]`
    DLoadDir { path: String, completion: Completion },
    /// `/d_free name...`
    DFree { names: Vec<String> },
    /// `/d_freeAll` (number 8; not in the reference but scsynth has it)
    DFreeAll,

    // ---- nodes
    /// `/n_free id...`
    NFree { nodes: Vec<i32> },
    /// `/n_run (id flag)...`; a missing flag is 0 (off).
    NRun { nodes: Vec<(i32, bool)> },
    /// `/n_set id (control value)...`
    NSet { node: i32, controls: Vec<ControlSet> },
    /// `/n_setn id (control count values...)...`
    NSetn { node: i32, controls: Vec<ControlSet> },
    /// `/n_fill id (control count value)...`, as documented. scsynth 3.13
    /// itself reads one more argument after each triple and applies it to the
    /// same range (0 when the message has ended), so a lone triple leaves
    /// the controls at 0 there; this parse follows the documentation.
    NFill { node: i32, fills: Vec<ControlFill> },
    /// `/n_map id (control bus)...`
    NMap { node: i32, maps: Vec<BusMap> },
    /// `/n_mapn id (control bus count)...`
    NMapn { node: i32, maps: Vec<BusMapRange> },
    /// `/n_mapa id (control bus)...`
    NMapa { node: i32, maps: Vec<BusMap> },
    /// `/n_mapan id (control bus count)...`
    NMapan { node: i32, maps: Vec<BusMapRange> },
    /// `/n_before (node target)...`: each `.0` goes just before `.1`.
    NBefore { pairs: Vec<(i32, i32)> },
    /// `/n_after (node target)...`: each `.0` goes just after `.1`.
    NAfter { pairs: Vec<(i32, i32)> },
    /// `/n_query id...`
    NQuery { nodes: Vec<i32> },
    /// `/n_trace id...`
    NTrace { nodes: Vec<i32> },
    /// `/n_order action target id...`
    NOrder { add_action: AddAction, target: i32, nodes: Vec<i32> },

    // ---- synths
    /// `/s_new def id action target (control value)...`; `node` -1 asks the
    /// server for an id. Missing id/action/target are 0 as in scsynth.
    SNew { def_name: String, node: i32, add_action: AddAction, target: i32, controls: Vec<ControlSet> },
    /// `/s_newargs def id action target (control count values...)...`
    /// (number 59): `/s_new` with `/n_setn`-style controls.
    SNewargs { def_name: String, node: i32, add_action: AddAction, target: i32, controls: Vec<ControlSet> },
    /// `/s_get id control...`
    SGet { node: i32, controls: Vec<ControlId> },
    /// `/s_getn id (control count)...`
    SGetn { node: i32, controls: Vec<(ControlId, i32)> },
    /// `/s_noid id...`
    SNoid { nodes: Vec<i32> },

    // ---- groups
    /// `/g_new (id action target)...`
    GNew { groups: Vec<NewGroup> },
    /// `/p_new (id action target)...` (scsynth makes ordinary groups)
    PNew { groups: Vec<NewGroup> },
    /// `/g_head (group node)...`
    GHead { pairs: Vec<(i32, i32)> },
    /// `/g_tail (group node)...`
    GTail { pairs: Vec<(i32, i32)> },
    /// `/g_freeAll group...`
    GFreeAll { groups: Vec<i32> },
    /// `/g_deepFree group...`
    GDeepFree { groups: Vec<i32> },
    /// `/g_dumpTree (group with_controls)...`
    GDumpTree { groups: Vec<(i32, bool)> },
    /// `/g_queryTree (group with_controls)...`
    GQueryTree { groups: Vec<(i32, bool)> },

    // ---- unit generators
    /// `/u_cmd node unit_index name args...`
    UCmd { node: i32, unit: i32, name: String, args: Vec<OscArg> },

    // ---- buffers
    /// `/b_alloc buf frames [channels=1] [completion] [sample_rate]`;
    /// `sample_rate` None (absent or <= 0) means the server's rate.
    BAlloc { buffer: i32, frames: i32, channels: i32, completion: Completion, sample_rate: Option<f32> },
    /// `/b_allocRead buf path [start_frame=0] [frames=0] [completion]`;
    /// frames <= 0 (or past the end) reads to the end of the file.
    BAllocRead { buffer: i32, path: String, start_frame: i32, frames: i32, completion: Completion },
    /// `/b_allocReadChannel buf path start frames channel... [completion]`;
    /// no channels means all of them.
    BAllocReadChannel {
        buffer: i32,
        path: String,
        start_frame: i32,
        frames: i32,
        channels: Vec<i32>,
        completion: Completion,
    },
    /// `/b_read buf path [start_frame=0] [frames=-1] [buffer_start_frame=0]
    /// [leave_open=0] [completion]`; frames < 0 reads as many as fit.
    BRead {
        buffer: i32,
        path: String,
        start_frame: i32,
        frames: i32,
        buffer_start_frame: i32,
        leave_open: bool,
        completion: Completion,
    },
    /// `/b_readChannel` as `/b_read` plus channels before the completion.
    BReadChannel {
        buffer: i32,
        path: String,
        start_frame: i32,
        frames: i32,
        buffer_start_frame: i32,
        leave_open: bool,
        channels: Vec<i32>,
        completion: Completion,
    },
    /// `/b_write buf path [header="aiff"] [sample="int16"] [frames=-1]
    /// [start_frame=0] [leave_open=0] [completion]`; frames -1 writes all.
    BWrite {
        buffer: i32,
        path: String,
        header_format: String,
        sample_format: String,
        frames: i32,
        start_frame: i32,
        leave_open: bool,
        completion: Completion,
    },
    /// `/b_free buf [completion]`
    BFree { buffer: i32, completion: Completion },
    /// `/b_zero buf [completion]`
    BZero { buffer: i32, completion: Completion },
    /// `/b_set buf (index value)...`
    BSet { buffer: i32, samples: Vec<(i32, f32)> },
    /// `/b_setn buf (start count values...)...`
    BSetn { buffer: i32, ranges: Vec<ValueRange> },
    /// `/b_fill buf (start count value)...`
    BFill { buffer: i32, fills: Vec<ValueFill> },
    /// `/b_gen buf command args...` (args begin with the flags int for the
    /// standard fill commands)
    BGen { buffer: i32, command: String, args: Vec<OscArg> },
    /// `/b_close buf [completion]`
    BClose { buffer: i32, completion: Completion },
    /// `/b_query buf...`
    BQuery { buffers: Vec<i32> },
    /// `/b_get buf index...`
    BGet { buffer: i32, indices: Vec<i32> },
    /// `/b_getn buf (start count)...`
    BGetn { buffer: i32, ranges: Vec<(i32, i32)> },
    /// `/b_setSampleRate buf rate`; None (absent or <= 0) means the server's
    /// rate.
    BSetSampleRate { buffer: i32, sample_rate: Option<f32> },

    // ---- control buses
    /// `/c_set (index value)...`
    CSet { values: Vec<(i32, f32)> },
    /// `/c_setn (start count values...)...`
    CSetn { ranges: Vec<ValueRange> },
    /// `/c_fill (start count value)...`
    CFill { fills: Vec<ValueFill> },
    /// `/c_get index...`
    CGet { buses: Vec<i32> },
    /// `/c_getn (start count)...`
    CGetn { ranges: Vec<(i32, i32)> },

    // ---- non-real-time
    /// `/nrt_end` (scsynth does not implement it; a score ends at its last
    /// bundle)
    NrtEnd,
}

pub use crate::kind::COMMAND_NUMBERS;

/// The command name scsynth dispatches an integer address to. scsynth looks
/// only at the address's last byte (as a signed char).
pub fn command_name(number: i32) -> Option<&'static str> {
    let index = (number & 0xff) as u8 as i8;
    if index < 0 {
        return None;
    }
    COMMAND_NUMBERS.get(index as usize).map(|&(_, name)| name)
}

/// The integer command number of a command name, if it has one.
pub fn command_number(name: &str) -> Option<i32> {
    COMMAND_NUMBERS.iter().find(|&&(_, n)| n == name).map(|&(i, _)| i)
}

impl Command {
    /// The command's OSC address (as used in `/done` and `/fail` replies).
    pub fn name(&self) -> &'static str {
        use Command::*;
        match self {
            None => "/none",
            Quit => "/quit",
            Notify { .. } => "/notify",
            Status => "/status",
            Cmd { .. } => "/cmd",
            DumpOsc { .. } => "/dumpOSC",
            Sync { .. } => "/sync",
            ClearSched => "/clearSched",
            Error { .. } => "/error",
            Version => "/version",
            RtMemoryStatus => "/rtMemoryStatus",
            DRecv { .. } => "/d_recv",
            DLoad { .. } => "/d_load",
            DLoadDir { .. } => "/d_loadDir",
            DFree { .. } => "/d_free",
            DFreeAll => "/d_freeAll",
            NFree { .. } => "/n_free",
            NRun { .. } => "/n_run",
            NSet { .. } => "/n_set",
            NSetn { .. } => "/n_setn",
            NFill { .. } => "/n_fill",
            NMap { .. } => "/n_map",
            NMapn { .. } => "/n_mapn",
            NMapa { .. } => "/n_mapa",
            NMapan { .. } => "/n_mapan",
            NBefore { .. } => "/n_before",
            NAfter { .. } => "/n_after",
            NQuery { .. } => "/n_query",
            NTrace { .. } => "/n_trace",
            NOrder { .. } => "/n_order",
            SNew { .. } => "/s_new",
            SNewargs { .. } => "/s_newargs",
            SGet { .. } => "/s_get",
            SGetn { .. } => "/s_getn",
            SNoid { .. } => "/s_noid",
            GNew { .. } => "/g_new",
            PNew { .. } => "/p_new",
            GHead { .. } => "/g_head",
            GTail { .. } => "/g_tail",
            GFreeAll { .. } => "/g_freeAll",
            GDeepFree { .. } => "/g_deepFree",
            GDumpTree { .. } => "/g_dumpTree",
            GQueryTree { .. } => "/g_queryTree",
            UCmd { .. } => "/u_cmd",
            BAlloc { .. } => "/b_alloc",
            BAllocRead { .. } => "/b_allocRead",
            BAllocReadChannel { .. } => "/b_allocReadChannel",
            BRead { .. } => "/b_read",
            BReadChannel { .. } => "/b_readChannel",
            BWrite { .. } => "/b_write",
            BFree { .. } => "/b_free",
            BZero { .. } => "/b_zero",
            BSet { .. } => "/b_set",
            BSetn { .. } => "/b_setn",
            BFill { .. } => "/b_fill",
            BGen { .. } => "/b_gen",
            BClose { .. } => "/b_close",
            BQuery { .. } => "/b_query",
            BGet { .. } => "/b_get",
            BGetn { .. } => "/b_getn",
            BSetSampleRate { .. } => "/b_setSampleRate",
            CSet { .. } => "/c_set",
            CSetn { .. } => "/c_setn",
            CFill { .. } => "/c_fill",
            CGet { .. } => "/c_get",
            CGetn { .. } => "/c_getn",
            NrtEnd => "/nrt_end",
        }
    }

    /// Whether scsynth runs this command through its asynchronous stages
    /// (replying `/done` or `/fail` when finished).
    pub fn is_async(&self) -> bool {
        use Command::*;
        matches!(
            self,
            Quit | Notify { .. }
                | Sync { .. }
                | DRecv { .. }
                | DLoad { .. }
                | DLoadDir { .. }
                | BAlloc { .. }
                | BAllocRead { .. }
                | BAllocReadChannel { .. }
                | BRead { .. }
                | BReadChannel { .. }
                | BWrite { .. }
                | BFree { .. }
                | BZero { .. }
                | BGen { .. }
                | BClose { .. }
        )
    }

    /// The completion message carried by an asynchronous command, if any.
    pub fn completion(&self) -> Option<&[u8]> {
        use Command::*;
        match self {
            DRecv { completion, .. }
            | DLoad { completion, .. }
            | DLoadDir { completion, .. }
            | BAlloc { completion, .. }
            | BAllocRead { completion, .. }
            | BAllocReadChannel { completion, .. }
            | BRead { completion, .. }
            | BReadChannel { completion, .. }
            | BWrite { completion, .. }
            | BFree { completion, .. }
            | BZero { completion, .. }
            | BClose { completion, .. } => completion.as_deref(),
            _ => Option::None,
        }
    }
}

impl Command {
    /// The command as an OSC message that [`parse_command`] reads back to an
    /// equal command (every optional argument is written out).
    pub fn to_message(&self) -> OscMessage {
        use Command as C;
        let mut a: Vec<OscArg> = Vec::new();
        fn ints(a: &mut Vec<OscArg>, v: &[i32]) {
            a.extend(v.iter().map(|&i| OscArg::Int(i)));
        }
        fn pairs(a: &mut Vec<OscArg>, v: &[(i32, i32)]) {
            for &(x, y) in v {
                a.extend([OscArg::Int(x), OscArg::Int(y)]);
            }
        }
        fn flags(a: &mut Vec<OscArg>, v: &[(i32, bool)]) {
            for &(x, y) in v {
                a.extend([OscArg::Int(x), OscArg::Int(y as i32)]);
            }
        }
        fn completion(a: &mut Vec<OscArg>, c: &Completion) {
            if let Some(bytes) = c {
                a.push(OscArg::Blob(bytes.clone()));
            }
        }
        fn sets(a: &mut Vec<OscArg>, v: &[ControlSet]) {
            for s in v {
                a.push(s.control.to_arg());
                if let [one] = s.values.as_slice() {
                    a.push(one.to_arg());
                } else {
                    a.push(OscArg::Array(s.values.iter().map(ControlValue::to_arg).collect()));
                }
            }
        }
        fn ranges(a: &mut Vec<OscArg>, v: &[ControlSet]) {
            for s in v {
                a.push(s.control.to_arg());
                a.push(OscArg::Int(s.values.len() as i32));
                a.extend(s.values.iter().map(ControlValue::to_arg));
            }
        }
        fn value_ranges(a: &mut Vec<OscArg>, v: &[ValueRange]) {
            for r in v {
                a.extend([OscArg::Int(r.start), OscArg::Int(r.values.len() as i32)]);
                a.extend(r.values.iter().map(|&x| OscArg::Float(x)));
            }
        }
        fn fills(a: &mut Vec<OscArg>, v: &[ValueFill]) {
            for f in v {
                a.extend([OscArg::Int(f.start), OscArg::Int(f.count), OscArg::Float(f.value)]);
            }
        }
        fn new_node(a: &mut Vec<OscArg>, def: &str, node: i32, action: AddAction, target: i32) {
            a.extend([OscArg::Str(def.to_owned()), OscArg::Int(node), OscArg::Int(action as i32), OscArg::Int(target)]);
        }
        match self {
            C::None | C::Quit | C::Status | C::ClearSched | C::Version | C::RtMemoryStatus | C::DFreeAll | C::NrtEnd => {}
            C::Notify { on, client_id } => a.extend([OscArg::Int(*on as i32), OscArg::Int(*client_id)]),
            C::Cmd { name, args } => {
                a.push(name.as_str().into());
                a.extend(args.iter().cloned());
            }
            C::DumpOsc { mode } | C::Error { mode } => a.push(OscArg::Int(*mode)),
            C::Sync { id } => a.push(OscArg::Int(*id)),
            C::DRecv { data, completion: c } => {
                a.push(OscArg::Blob(data.clone()));
                completion(&mut a, c);
            }
            C::DLoad { path, completion: c } | C::DLoadDir { path, completion: c } => {
                a.push(path.as_str().into());
                completion(&mut a, c);
            }
            C::DFree { names } => a.extend(names.iter().map(|n| OscArg::Str(n.clone()))),
            C::NFree { nodes } | C::NQuery { nodes } | C::NTrace { nodes } | C::SNoid { nodes } => ints(&mut a, nodes),
            C::NRun { nodes } => flags(&mut a, nodes),
            C::NSet { node, controls } => {
                a.push(OscArg::Int(*node));
                sets(&mut a, controls);
            }
            C::NSetn { node, controls } => {
                a.push(OscArg::Int(*node));
                ranges(&mut a, controls);
            }
            C::NFill { node, fills } => {
                a.push(OscArg::Int(*node));
                for f in fills {
                    a.extend([f.control.to_arg(), OscArg::Int(f.count), f.value.to_arg()]);
                }
            }
            C::NMap { node, maps } | C::NMapa { node, maps } => {
                a.push(OscArg::Int(*node));
                for m in maps {
                    a.extend([m.control.to_arg(), OscArg::Int(m.bus)]);
                }
            }
            C::NMapn { node, maps } | C::NMapan { node, maps } => {
                a.push(OscArg::Int(*node));
                for m in maps {
                    a.extend([m.control.to_arg(), OscArg::Int(m.bus), OscArg::Int(m.count)]);
                }
            }
            C::NBefore { pairs: p } | C::NAfter { pairs: p } | C::GHead { pairs: p } | C::GTail { pairs: p } => {
                pairs(&mut a, p)
            }
            C::NOrder { add_action, target, nodes } => {
                a.extend([OscArg::Int(*add_action as i32), OscArg::Int(*target)]);
                ints(&mut a, nodes);
            }
            C::SNew { def_name, node, add_action, target, controls } => {
                new_node(&mut a, def_name, *node, *add_action, *target);
                sets(&mut a, controls);
            }
            C::SNewargs { def_name, node, add_action, target, controls } => {
                new_node(&mut a, def_name, *node, *add_action, *target);
                ranges(&mut a, controls);
            }
            C::SGet { node, controls } => {
                a.push(OscArg::Int(*node));
                a.extend(controls.iter().map(ControlId::to_arg));
            }
            C::SGetn { node, controls } => {
                a.push(OscArg::Int(*node));
                for (c, n) in controls {
                    a.extend([c.to_arg(), OscArg::Int(*n)]);
                }
            }
            C::GNew { groups } | C::PNew { groups } => {
                for g in groups {
                    a.extend([OscArg::Int(g.id), OscArg::Int(g.add_action as i32), OscArg::Int(g.target)]);
                }
            }
            C::GFreeAll { groups } | C::GDeepFree { groups } => ints(&mut a, groups),
            C::GDumpTree { groups } | C::GQueryTree { groups } => flags(&mut a, groups),
            C::UCmd { node, unit, name, args } => {
                a.extend([OscArg::Int(*node), OscArg::Int(*unit), name.as_str().into()]);
                a.extend(args.iter().cloned());
            }
            C::BAlloc { buffer, frames, channels, completion: c, sample_rate } => {
                a.extend([OscArg::Int(*buffer), OscArg::Int(*frames), OscArg::Int(*channels)]);
                if let Some(rate) = sample_rate {
                    // A 0 int stands in for "no completion message" so the rate lands in place.
                    a.push(c.as_ref().map_or(OscArg::Int(0), |b| OscArg::Blob(b.clone())));
                    a.push(OscArg::Float(*rate));
                } else {
                    completion(&mut a, c);
                }
            }
            C::BAllocRead { buffer, path, start_frame, frames, completion: c } => {
                a.extend([OscArg::Int(*buffer), path.as_str().into(), OscArg::Int(*start_frame), OscArg::Int(*frames)]);
                completion(&mut a, c);
            }
            C::BAllocReadChannel { buffer, path, start_frame, frames, channels, completion: c } => {
                a.extend([OscArg::Int(*buffer), path.as_str().into(), OscArg::Int(*start_frame), OscArg::Int(*frames)]);
                ints(&mut a, channels);
                completion(&mut a, c);
            }
            C::BRead { buffer, path, start_frame, frames, buffer_start_frame, leave_open, completion: c } => {
                a.extend([
                    OscArg::Int(*buffer),
                    path.as_str().into(),
                    OscArg::Int(*start_frame),
                    OscArg::Int(*frames),
                    OscArg::Int(*buffer_start_frame),
                    OscArg::Int(*leave_open as i32),
                ]);
                completion(&mut a, c);
            }
            C::BReadChannel {
                buffer,
                path,
                start_frame,
                frames,
                buffer_start_frame,
                leave_open,
                channels,
                completion: c,
            } => {
                a.extend([
                    OscArg::Int(*buffer),
                    path.as_str().into(),
                    OscArg::Int(*start_frame),
                    OscArg::Int(*frames),
                    OscArg::Int(*buffer_start_frame),
                    OscArg::Int(*leave_open as i32),
                ]);
                ints(&mut a, channels);
                completion(&mut a, c);
            }
            C::BWrite {
                buffer,
                path,
                header_format,
                sample_format,
                frames,
                start_frame,
                leave_open,
                completion: c,
            } => {
                a.extend([
                    OscArg::Int(*buffer),
                    path.as_str().into(),
                    header_format.as_str().into(),
                    sample_format.as_str().into(),
                    OscArg::Int(*frames),
                    OscArg::Int(*start_frame),
                    OscArg::Int(*leave_open as i32),
                ]);
                completion(&mut a, c);
            }
            C::BFree { buffer, completion: c } | C::BZero { buffer, completion: c } | C::BClose { buffer, completion: c } => {
                a.push(OscArg::Int(*buffer));
                completion(&mut a, c);
            }
            C::BSet { buffer, samples } => {
                a.push(OscArg::Int(*buffer));
                for &(i, v) in samples {
                    a.extend([OscArg::Int(i), OscArg::Float(v)]);
                }
            }
            C::BSetn { buffer, ranges } => {
                a.push(OscArg::Int(*buffer));
                value_ranges(&mut a, ranges);
            }
            C::BFill { buffer, fills: f } => {
                a.push(OscArg::Int(*buffer));
                fills(&mut a, f);
            }
            C::BGen { buffer, command, args } => {
                a.extend([OscArg::Int(*buffer), command.as_str().into()]);
                a.extend(args.iter().cloned());
            }
            C::BQuery { buffers } => ints(&mut a, buffers),
            C::BGet { buffer, indices } => {
                a.push(OscArg::Int(*buffer));
                ints(&mut a, indices);
            }
            C::BGetn { buffer, ranges } => {
                a.push(OscArg::Int(*buffer));
                pairs(&mut a, ranges);
            }
            C::BSetSampleRate { buffer, sample_rate } => {
                a.extend([OscArg::Int(*buffer), OscArg::Float(sample_rate.unwrap_or(0.0))]);
            }
            C::CSet { values } => {
                for &(i, v) in values {
                    a.extend([OscArg::Int(i), OscArg::Float(v)]);
                }
            }
            C::CSetn { ranges } => value_ranges(&mut a, ranges),
            C::CFill { fills: f } => fills(&mut a, f),
            C::CGet { buses } => ints(&mut a, buses),
            C::CGetn { ranges } => pairs(&mut a, ranges),
        }
        OscMessage::new(self.name(), a)
    }
}

/// Why a message is not a valid command. The text is written for the person
/// who sent the message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    #[error("{0}: command not found")]
    UnknownCommand(String),
    #[error("{command}: argument {position} ({what}) must be {expected}, got {got}")]
    WrongType { command: &'static str, position: usize, what: &'static str, expected: &'static str, got: &'static str },
    #[error("{command}: argument {position} ({what}) is missing")]
    Missing { command: &'static str, position: usize, what: &'static str },
    #[error("{command}: argument {position} ({what}): {problem}")]
    Invalid { command: &'static str, position: usize, what: &'static str, problem: String },
}

impl CommandError {
    /// The command's name, for the `/fail` reply.
    pub fn command(&self) -> &str {
        match self {
            CommandError::UnknownCommand(c) => c,
            CommandError::WrongType { command, .. }
            | CommandError::Missing { command, .. }
            | CommandError::Invalid { command, .. } => command,
        }
    }
}

type Result<T> = std::result::Result<T, CommandError>;

/// Reads a message's arguments in order, the way scsynth's `sc_msg_iter`
/// does, with typed errors.
struct Args<'a> {
    cmd: &'static str,
    args: &'a [OscArg],
    pos: usize,
}

impl<'a> Args<'a> {
    fn remaining(&self) -> usize {
        self.args.len() - self.pos
    }

    fn peek(&self) -> Option<&'a OscArg> {
        self.args.get(self.pos)
    }

    fn position(&self) -> usize {
        self.pos + 1
    }

    fn wrong(&self, what: &'static str, expected: &'static str, got: &OscArg) -> CommandError {
        CommandError::WrongType { command: self.cmd, position: self.position(), what, expected, got: got.type_name() }
    }

    fn missing(&self, what: &'static str) -> CommandError {
        CommandError::Missing { command: self.cmd, position: self.position(), what }
    }

    fn int(&mut self, what: &'static str) -> Result<i32> {
        match self.peek() {
            None => Err(self.missing(what)),
            Some(a) => match a.as_i32() {
                Some(v) => {
                    self.pos += 1;
                    Ok(v)
                }
                None => Err(self.wrong(what, "an integer", a)),
            },
        }
    }

    fn int_or(&mut self, what: &'static str, default: i32) -> Result<i32> {
        if self.peek().is_none() {
            return Ok(default);
        }
        self.int(what)
    }

    fn float_or(&mut self, what: &'static str, default: f32) -> Result<f32> {
        match self.peek() {
            None => Ok(default),
            Some(a) => match a.as_f32() {
                Some(v) => {
                    self.pos += 1;
                    Ok(v)
                }
                None => Err(self.wrong(what, "a number", a)),
            },
        }
    }

    fn string(&mut self, what: &'static str) -> Result<String> {
        match self.peek() {
            None => Err(self.missing(what)),
            Some(OscArg::Str(s)) => {
                self.pos += 1;
                Ok(s.clone())
            }
            Some(a) => Err(self.wrong(what, "a string", a)),
        }
    }

    fn string_or(&mut self, what: &'static str, default: &str) -> Result<String> {
        if self.peek().is_none() {
            return Ok(default.to_owned());
        }
        self.string(what)
    }

    fn blob(&mut self, what: &'static str) -> Result<Vec<u8>> {
        match self.peek() {
            None => Err(self.missing(what)),
            Some(OscArg::Blob(b)) => {
                self.pos += 1;
                Ok(b.clone())
            }
            Some(a) => Err(self.wrong(what, "a blob", a)),
        }
    }

    fn add_action(&mut self, what: &'static str) -> Result<AddAction> {
        let position = self.position();
        let v = self.int_or(what, 0)?;
        AddAction::from_i32(v).ok_or_else(|| CommandError::Invalid {
            command: self.cmd,
            position,
            what,
            problem: format!("{v} is not an add action (0 head, 1 tail, 2 before, 3 after, 4 replace)"),
        })
    }

    /// Optional completion message: a blob holding an OSC packet. An int in
    /// its place (clients send 0 for "none") is skipped, as scsynth does.
    fn completion(&mut self) -> Result<Completion> {
        match self.peek() {
            Option::None => Ok(Option::None),
            Some(OscArg::Blob(b)) => {
                self.pos += 1;
                Ok(if b.is_empty() { Option::None } else { Some(b.clone()) })
            }
            Some(OscArg::Int(_)) => {
                self.pos += 1;
                Ok(Option::None)
            }
            Some(a) => Err(self.wrong("completion message", "a blob holding an OSC packet", a)),
        }
    }

    fn control_id(&mut self, what: &'static str) -> Result<ControlId> {
        match self.peek() {
            None => Err(self.missing(what)),
            Some(OscArg::Str(s)) => {
                self.pos += 1;
                Ok(ControlId::Name(s.clone()))
            }
            Some(a) => match a.as_i32() {
                Some(v) => {
                    self.pos += 1;
                    Ok(ControlId::Index(v))
                }
                None => Err(self.wrong(what, "a control name or index", a)),
            },
        }
    }

    /// A control value: number or bus-map string.
    fn control_value(&self, arg: &OscArg, what: &'static str) -> Result<ControlValue> {
        if let OscArg::Str(s) = arg {
            return parse_bus_map(s).ok_or_else(|| CommandError::Invalid {
                command: self.cmd,
                position: self.position(),
                what,
                problem: format!("string \"{s}\" is not a bus mapping (\"c<bus>\" or \"a<bus>\")"),
            });
        }
        arg.as_f32()
            .map(ControlValue::Value)
            .ok_or_else(|| self.wrong(what, "a number, a bus mapping string or an array", arg))
    }

    /// A value for `/s_new` / `/n_set`: a single value or an array of values
    /// (nested arrays are flattened) setting consecutive controls.
    fn control_values(&mut self, what: &'static str) -> Result<Vec<ControlValue>> {
        let Some(arg) = self.peek() else { return Err(self.missing(what)) };
        let mut out = Vec::new();
        self.flatten_values(arg, what, &mut out)?;
        self.pos += 1;
        Ok(out)
    }

    fn flatten_values(&self, arg: &OscArg, what: &'static str, out: &mut Vec<ControlValue>) -> Result<()> {
        if let OscArg::Array(items) = arg {
            for item in items {
                self.flatten_values(item, what, out)?;
            }
            Ok(())
        } else {
            out.push(self.control_value(arg, what)?);
            Ok(())
        }
    }

    /// `/n_set`-style pairs: control, value-or-array; read while two args
    /// remain (a trailing lone control is ignored, as scsynth does).
    fn control_sets(&mut self) -> Result<Vec<ControlSet>> {
        let mut sets = Vec::new();
        while self.remaining() >= 2 {
            let control = self.control_id("control")?;
            let values = self.control_values("control value")?;
            sets.push(ControlSet { control, values });
        }
        Ok(sets)
    }

    /// `/n_setn`-style groups: control, count, that many values (fewer if the
    /// message ends first).
    fn control_ranges(&mut self) -> Result<Vec<ControlSet>> {
        let mut sets = Vec::new();
        while self.remaining() > 0 {
            let control = self.control_id("control")?;
            let count = self.int_or("number of values", 0)?;
            let n = (count.max(0) as usize).min(self.remaining());
            let mut values = Vec::with_capacity(n);
            for _ in 0..n {
                let arg = &self.args[self.pos];
                values.push(self.control_value(arg, "control value")?);
                self.pos += 1;
            }
            sets.push(ControlSet { control, values });
        }
        Ok(sets)
    }

    fn ints(&mut self, what: &'static str) -> Result<Vec<i32>> {
        let mut out = Vec::with_capacity(self.remaining());
        while self.remaining() > 0 {
            out.push(self.int(what)?);
        }
        Ok(out)
    }

    /// Pairs of ints read while anything remains; a missing second is
    /// `default`.
    fn int_pairs(&mut self, first: &'static str, second: &'static str, default: i32) -> Result<Vec<(i32, i32)>> {
        let mut out = Vec::with_capacity(self.remaining() / 2);
        while self.remaining() > 0 {
            let a = self.int(first)?;
            let b = self.int_or(second, default)?;
            out.push((a, b));
        }
        Ok(out)
    }

    fn int_flag_pairs(&mut self, first: &'static str, second: &'static str) -> Result<Vec<(i32, bool)>> {
        Ok(self.int_pairs(first, second, 0)?.into_iter().map(|(a, b)| (a, b != 0)).collect())
    }

    /// (index, value) pairs read while two args remain.
    fn index_values(&mut self) -> Result<Vec<(i32, f32)>> {
        let mut out = Vec::with_capacity(self.remaining() / 2);
        while self.remaining() >= 2 {
            let i = self.int("index")?;
            let v = self.float_or("value", 0.0)?;
            out.push((i, v));
        }
        Ok(out)
    }

    /// (start, count, values...) groups.
    fn value_ranges(&mut self) -> Result<Vec<ValueRange>> {
        let mut out = Vec::new();
        while self.remaining() > 0 {
            let start = self.int("start index")?;
            let count = self.int_or("number of values", 0)?;
            let n = (count.max(0) as usize).min(self.remaining());
            let mut values = Vec::with_capacity(n);
            for _ in 0..n {
                values.push(self.float_or("value", 0.0)?);
            }
            out.push(ValueRange { start, values });
        }
        Ok(out)
    }

    /// (start, count, value) triples read while three args remain.
    fn value_fills(&mut self) -> Result<Vec<ValueFill>> {
        let mut out = Vec::with_capacity(self.remaining() / 3);
        while self.remaining() >= 3 {
            let start = self.int("start index")?;
            let count = self.int("number of values")?;
            let value = self.float_or("value", 0.0)?;
            out.push(ValueFill { start, count, value });
        }
        Ok(out)
    }

    fn bus_maps(&mut self) -> Result<Vec<BusMap>> {
        let mut out = Vec::new();
        while self.remaining() >= 2 {
            let control = self.control_id("control")?;
            let bus = self.int("bus")?;
            out.push(BusMap { control, bus });
        }
        Ok(out)
    }

    fn bus_map_ranges(&mut self) -> Result<Vec<BusMapRange>> {
        let mut out = Vec::new();
        while self.remaining() >= 3 {
            let control = self.control_id("control")?;
            let bus = self.int("bus")?;
            let count = self.int("number of controls")?;
            out.push(BusMapRange { control, bus, count });
        }
        Ok(out)
    }

    /// Channel numbers: consecutive int arguments (scsynth takes only `i`
    /// tags here, so a float ends the list).
    fn channels(&mut self) -> Vec<i32> {
        let mut out = Vec::new();
        while let Some(OscArg::Int(c)) = self.peek() {
            out.push(*c);
            self.pos += 1;
        }
        out
    }

    fn rest(&mut self) -> Vec<OscArg> {
        let r = self.args[self.pos..].to_vec();
        self.pos = self.args.len();
        r
    }
}

/// Parses a bus-map string the way scsynth does: `c` or `a` followed by an
/// integer read like C's `atoi` (leading digits; none gives bus 0).
pub fn parse_bus_map(s: &str) -> Option<ControlValue> {
    let mut chars = s.chars();
    let kind = chars.next()?;
    let rest = chars.as_str().trim_start();
    let (neg, digits) = match rest.as_bytes().first() {
        Some(b'-') => (true, &rest[1..]),
        Some(b'+') => (false, &rest[1..]),
        _ => (false, rest),
    };
    let mut n: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        n = (n * 10 + (b - b'0') as i64).min(i32::MAX as i64 + 1);
    }
    let n = if neg { -n } else { n };
    let n = n.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    match kind {
        'c' => Some(ControlValue::ControlBus(n)),
        'a' => Some(ControlValue::AudioBus(n)),
        _ => None,
    }
}

/// Turns a decoded OSC message into a command.
pub fn parse_command(msg: &OscMessage) -> std::result::Result<Command, CommandError> {
    let name: &str = match &msg.address {
        Address::Name(n) => n,
        Address::Number(n) => match command_name(*n) {
            Some(name) => name,
            None => return Err(CommandError::UnknownCommand(format!("command number {n}"))),
        },
    };
    let Some(cmd) = canonical_name(name) else {
        return Err(CommandError::UnknownCommand(name.to_owned()));
    };
    let mut a = Args { cmd, args: &msg.args, pos: 0 };
    use Command as C;
    let command = match cmd {
        "/none" => C::None,
        "/quit" => C::Quit,
        "/notify" => C::Notify { on: a.int_or("on/off flag", 0)? != 0, client_id: a.int_or("client ID", -1)? },
        "/status" => C::Status,
        "/cmd" => C::Cmd { name: a.string("plug-in command name")?, args: a.rest() },
        "/dumpOSC" => C::DumpOsc { mode: a.int_or("mode", 0)? },
        "/sync" => C::Sync { id: a.int_or("sync ID", 0)? },
        "/clearSched" => C::ClearSched,
        "/error" => C::Error { mode: a.int_or("mode", 0)? },
        "/version" => C::Version,
        "/rtMemoryStatus" => C::RtMemoryStatus,

        "/d_recv" => C::DRecv { data: a.blob("SynthDef file data")?, completion: a.completion()? },
        "/d_load" => C::DLoad { path: a.string("path")?, completion: a.completion()? },
        "/d_loadDir" => C::DLoadDir { path: a.string("directory")?, completion: a.completion()? },
        "/d_free" => {
            let mut names = Vec::with_capacity(a.remaining());
            while a.remaining() > 0 {
                names.push(a.string("SynthDef name")?);
            }
            C::DFree { names }
        }
        "/d_freeAll" => C::DFreeAll,

        "/n_free" => C::NFree { nodes: a.ints("node ID")? },
        "/n_run" => C::NRun { nodes: a.int_flag_pairs("node ID", "run flag")? },
        "/n_set" => C::NSet { node: a.int_or("node ID", 0)?, controls: a.control_sets()? },
        "/n_setn" => C::NSetn { node: a.int_or("node ID", 0)?, controls: a.control_ranges()? },
        "/n_fill" => {
            let node = a.int_or("node ID", 0)?;
            let mut fills = Vec::new();
            while a.remaining() >= 3 {
                let control = a.control_id("control")?;
                let count = a.int("number of controls")?;
                let Some(arg) = a.peek() else { break };
                let value = a.control_value(arg, "value")?;
                a.pos += 1;
                fills.push(ControlFill { control, count, value });
            }
            C::NFill { node, fills }
        }
        "/n_map" => C::NMap { node: a.int_or("node ID", 0)?, maps: a.bus_maps()? },
        "/n_mapn" => C::NMapn { node: a.int_or("node ID", 0)?, maps: a.bus_map_ranges()? },
        "/n_mapa" => C::NMapa { node: a.int_or("node ID", 0)?, maps: a.bus_maps()? },
        "/n_mapan" => C::NMapan { node: a.int_or("node ID", 0)?, maps: a.bus_map_ranges()? },
        "/n_before" => C::NBefore { pairs: a.int_pairs("node ID", "target node ID", 0)? },
        "/n_after" => C::NAfter { pairs: a.int_pairs("node ID", "target node ID", 0)? },
        "/n_query" => C::NQuery { nodes: a.ints("node ID")? },
        "/n_trace" => C::NTrace { nodes: a.ints("node ID")? },
        "/n_order" => C::NOrder {
            add_action: a.add_action("add action")?,
            target: a.int_or("target ID", 0)?,
            nodes: a.ints("node ID")?,
        },

        "/s_new" | "/s_newargs" => {
            let def_name = a.string("SynthDef name")?;
            let node = a.int_or("node ID", 0)?;
            let add_action = a.add_action("add action")?;
            let target = a.int_or("target ID", 0)?;
            if cmd == "/s_new" {
                C::SNew { def_name, node, add_action, target, controls: a.control_sets()? }
            } else {
                C::SNewargs { def_name, node, add_action, target, controls: a.control_ranges()? }
            }
        }
        "/s_get" => {
            let node = a.int_or("node ID", 0)?;
            let mut controls = Vec::with_capacity(a.remaining());
            while a.remaining() > 0 {
                controls.push(a.control_id("control")?);
            }
            C::SGet { node, controls }
        }
        "/s_getn" => {
            let node = a.int_or("node ID", 0)?;
            let mut controls = Vec::new();
            while a.remaining() > 0 {
                let c = a.control_id("control")?;
                let n = a.int_or("number of controls", 0)?;
                controls.push((c, n));
            }
            C::SGetn { node, controls }
        }
        "/s_noid" => C::SNoid { nodes: a.ints("node ID")? },

        "/g_new" | "/p_new" => {
            let mut groups = Vec::with_capacity(a.remaining() / 3);
            while a.remaining() > 0 {
                let id = a.int("group ID")?;
                let add_action = a.add_action("add action")?;
                let target = a.int_or("target ID", 0)?;
                groups.push(NewGroup { id, add_action, target });
            }
            if cmd == "/g_new" {
                C::GNew { groups }
            } else {
                C::PNew { groups }
            }
        }
        "/g_head" => C::GHead { pairs: a.int_pairs("group ID", "node ID", 0)? },
        "/g_tail" => C::GTail { pairs: a.int_pairs("group ID", "node ID", 0)? },
        "/g_freeAll" => C::GFreeAll { groups: a.ints("group ID")? },
        "/g_deepFree" => C::GDeepFree { groups: a.ints("group ID")? },
        "/g_dumpTree" => C::GDumpTree { groups: a.int_flag_pairs("group ID", "controls flag")? },
        "/g_queryTree" => C::GQueryTree { groups: a.int_flag_pairs("group ID", "controls flag")? },

        "/u_cmd" => C::UCmd {
            node: a.int("node ID")?,
            unit: a.int("unit index")?,
            name: a.string("unit command name")?,
            args: a.rest(),
        },

        "/b_alloc" => {
            let buffer = a.int_or("buffer number", 0)?;
            let frames = a.int_or("number of frames", 0)?;
            let channels = a.int_or("number of channels", 1)?;
            let completion = a.completion()?;
            let rate = a.float_or("sample rate", 0.0)?;
            C::BAlloc { buffer, frames, channels, completion, sample_rate: (rate > 0.0).then_some(rate) }
        }
        "/b_allocRead" => C::BAllocRead {
            buffer: a.int_or("buffer number", 0)?,
            path: a.string("path")?,
            start_frame: a.int_or("starting frame", 0)?,
            frames: a.int_or("number of frames", 0)?,
            completion: a.completion()?,
        },
        "/b_allocReadChannel" => C::BAllocReadChannel {
            buffer: a.int_or("buffer number", 0)?,
            path: a.string("path")?,
            start_frame: a.int_or("starting frame", 0)?,
            frames: a.int_or("number of frames", 0)?,
            channels: a.channels(),
            completion: a.completion()?,
        },
        "/b_read" => C::BRead {
            buffer: a.int_or("buffer number", 0)?,
            path: a.string("path")?,
            start_frame: a.int_or("starting frame in file", 0)?,
            frames: a.int_or("number of frames", -1)?,
            buffer_start_frame: a.int_or("starting frame in buffer", 0)?,
            leave_open: a.int_or("leave file open flag", 0)? != 0,
            completion: a.completion()?,
        },
        "/b_readChannel" => C::BReadChannel {
            buffer: a.int_or("buffer number", 0)?,
            path: a.string("path")?,
            start_frame: a.int_or("starting frame in file", 0)?,
            frames: a.int_or("number of frames", -1)?,
            buffer_start_frame: a.int_or("starting frame in buffer", 0)?,
            leave_open: a.int_or("leave file open flag", 0)? != 0,
            channels: a.channels(),
            completion: a.completion()?,
        },
        "/b_write" => C::BWrite {
            buffer: a.int_or("buffer number", 0)?,
            path: a.string("path")?,
            header_format: a.string_or("header format", "aiff")?,
            sample_format: a.string_or("sample format", "int16")?,
            frames: a.int_or("number of frames", -1)?,
            start_frame: a.int_or("starting frame in buffer", 0)?,
            leave_open: a.int_or("leave file open flag", 0)? != 0,
            completion: a.completion()?,
        },
        "/b_free" => C::BFree { buffer: a.int_or("buffer number", 0)?, completion: a.completion()? },
        "/b_zero" => C::BZero { buffer: a.int_or("buffer number", 0)?, completion: a.completion()? },
        "/b_close" => C::BClose { buffer: a.int_or("buffer number", 0)?, completion: a.completion()? },
        "/b_set" => C::BSet { buffer: a.int_or("buffer number", 0)?, samples: a.index_values()? },
        "/b_setn" => C::BSetn { buffer: a.int_or("buffer number", 0)?, ranges: a.value_ranges()? },
        "/b_fill" => C::BFill { buffer: a.int_or("buffer number", 0)?, fills: a.value_fills()? },
        "/b_gen" => C::BGen {
            buffer: a.int_or("buffer number", 0)?,
            command: a.string("fill command name")?,
            args: a.rest(),
        },
        "/b_query" => C::BQuery { buffers: a.ints("buffer number")? },
        "/b_get" => C::BGet { buffer: a.int_or("buffer number", 0)?, indices: a.ints("sample index")? },
        "/b_getn" => C::BGetn {
            buffer: a.int_or("buffer number", 0)?,
            ranges: a.int_pairs("start index", "number of samples", 0)?,
        },
        "/b_setSampleRate" => {
            let buffer = a.int_or("buffer number", 0)?;
            let rate = a.float_or("sample rate", 0.0)?;
            C::BSetSampleRate { buffer, sample_rate: (rate > 0.0).then_some(rate) }
        }

        "/c_set" => C::CSet { values: a.index_values()? },
        "/c_setn" => C::CSetn { ranges: a.value_ranges()? },
        "/c_fill" => C::CFill { fills: a.value_fills()? },
        "/c_get" => C::CGet { buses: a.ints("bus index")? },
        "/c_getn" => C::CGetn { ranges: a.int_pairs("start bus", "number of buses", 0)? },

        "/nrt_end" => C::NrtEnd,
        _ => return Err(CommandError::UnknownCommand(name.to_owned())),
    };
    Ok(command)
}

/// The static name for a command address, or None if scsynth has no such
/// command (`/n_cmd` is numbered but not implemented).
fn canonical_name(name: &str) -> Option<&'static str> {
    if name == "/nrt_end" {
        return Some("/nrt_end");
    }
    COMMAND_NUMBERS.iter().map(|&(_, n)| n).find(|&n| n == name && n != "/n_cmd")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osc::{decode, OscPacket};

    fn msg(addr: &str, args: Vec<OscArg>) -> OscMessage {
        OscMessage::new(addr, args)
    }

    fn parse(addr: &str, args: Vec<OscArg>) -> Command {
        parse_command(&msg(addr, args)).unwrap()
    }

    fn s(v: &str) -> OscArg {
        OscArg::Str(v.into())
    }
    fn i(v: i32) -> OscArg {
        OscArg::Int(v)
    }
    fn f(v: f32) -> OscArg {
        OscArg::Float(v)
    }

    #[test]
    fn s_new_with_named_and_indexed_controls() {
        let c = parse("/s_new", vec![s("sine"), i(1000), i(1), i(0), s("freq"), f(440.0), i(2), i(3)]);
        assert_eq!(
            c,
            Command::SNew {
                def_name: "sine".into(),
                node: 1000,
                add_action: AddAction::Tail,
                target: 0,
                controls: vec![
                    ControlSet { control: "freq".into(), values: vec![ControlValue::Value(440.0)] },
                    ControlSet { control: 2.into(), values: vec![ControlValue::Value(3.0)] },
                ],
            }
        );
    }

    #[test]
    fn s_new_maps_controls_to_buses_from_strings() {
        let c = parse("/s_new", vec![s("x"), i(-1), i(0), i(1), s("freq"), s("c12"), s("in"), s("a3")]);
        let Command::SNew { controls, node, .. } = c else { panic!() };
        assert_eq!(node, -1);
        assert_eq!(controls[0].values, vec![ControlValue::ControlBus(12)]);
        assert_eq!(controls[1].values, vec![ControlValue::AudioBus(3)]);
    }

    #[test]
    fn s_new_array_sets_consecutive_controls() {
        let arr = OscArg::Array(vec![f(1.0), i(2), s("c4")]);
        let c = parse("/s_new", vec![s("x"), i(5), i(0), i(1), s("levels"), arr, s("amp"), f(0.5)]);
        let Command::SNew { controls, .. } = c else { panic!() };
        assert_eq!(
            controls[0].values,
            vec![ControlValue::Value(1.0), ControlValue::Value(2.0), ControlValue::ControlBus(4)]
        );
        assert_eq!(controls[1], ControlSet { control: "amp".into(), values: vec![ControlValue::Value(0.5)] });
    }

    #[test]
    fn s_new_with_only_a_name_takes_scsynth_defaults() {
        let c = parse("/s_new", vec![s("x")]);
        assert_eq!(
            c,
            Command::SNew { def_name: "x".into(), node: 0, add_action: AddAction::Head, target: 0, controls: vec![] }
        );
    }

    #[test]
    fn s_new_float_ids_are_truncated() {
        let Command::SNew { node, target, .. } = parse("/s_new", vec![s("x"), f(1001.7), f(3.0), f(1.2)]) else {
            panic!()
        };
        assert_eq!((node, target), (1001, 1));
    }

    #[test]
    fn wrong_type_names_the_argument_for_the_sender() {
        let e = parse_command(&msg("/s_new", vec![s("x"), s("oops")])).unwrap_err();
        assert_eq!(e.to_string(), "/s_new: argument 2 (node ID) must be an integer, got string");
        let e = parse_command(&msg("/s_new", vec![i(3)])).unwrap_err();
        assert_eq!(e.to_string(), "/s_new: argument 1 (SynthDef name) must be a string, got integer");
        let e = parse_command(&msg("/s_new", vec![s("x"), i(1), i(9), i(0)])).unwrap_err();
        assert!(e.to_string().starts_with("/s_new: argument 3 (add action): 9 is not an add action"), "{e}");
    }

    #[test]
    fn non_bus_string_value_is_rejected_clearly() {
        let e = parse_command(&msg("/n_set", vec![i(1), s("freq"), s("loud")])).unwrap_err();
        assert!(e.to_string().contains("\"loud\" is not a bus mapping"), "{e}");
    }

    #[test]
    fn n_set_pairs_and_arrays() {
        let c = parse(
            "/n_set",
            vec![i(7), s("freq"), f(220.0), i(3), OscArg::Array(vec![f(1.0), f(2.0)]), s("out"), s("c1")],
        );
        assert_eq!(
            c,
            Command::NSet {
                node: 7,
                controls: vec![
                    ControlSet { control: "freq".into(), values: vec![ControlValue::Value(220.0)] },
                    ControlSet { control: 3.into(), values: vec![ControlValue::Value(1.0), ControlValue::Value(2.0)] },
                    ControlSet { control: "out".into(), values: vec![ControlValue::ControlBus(1)] },
                ],
            }
        );
    }

    #[test]
    fn n_set_ignores_a_trailing_control_without_value() {
        let Command::NSet { controls, .. } = parse("/n_set", vec![i(7), s("freq"), f(1.0), s("amp")]) else {
            panic!()
        };
        assert_eq!(controls.len(), 1);
    }

    #[test]
    fn n_setn_reads_counted_values() {
        let c = parse("/n_setn", vec![i(7), s("a"), i(2), f(1.0), f(2.0), i(5), i(1), s("c9")]);
        assert_eq!(
            c,
            Command::NSetn {
                node: 7,
                controls: vec![
                    ControlSet { control: "a".into(), values: vec![ControlValue::Value(1.0), ControlValue::Value(2.0)] },
                    ControlSet { control: 5.into(), values: vec![ControlValue::ControlBus(9)] },
                ],
            }
        );
    }

    #[test]
    fn n_fill_and_maps() {
        assert_eq!(
            parse("/n_fill", vec![i(1), s("x"), i(3), f(0.5)]),
            Command::NFill {
                node: 1,
                fills: vec![ControlFill { control: "x".into(), count: 3, value: ControlValue::Value(0.5) }]
            }
        );
        assert_eq!(
            parse("/n_map", vec![i(1), s("freq"), i(4), i(2), i(-1)]),
            Command::NMap {
                node: 1,
                maps: vec![BusMap { control: "freq".into(), bus: 4 }, BusMap { control: 2.into(), bus: -1 }]
            }
        );
        assert_eq!(
            parse("/n_mapan", vec![i(1), s("in"), i(8), i(2)]),
            Command::NMapan { node: 1, maps: vec![BusMapRange { control: "in".into(), bus: 8, count: 2 }] }
        );
    }

    #[test]
    fn repeated_groups_are_all_read() {
        assert_eq!(parse("/n_free", vec![i(1), i(2), f(3.0)]), Command::NFree { nodes: vec![1, 2, 3] });
        assert_eq!(
            parse("/g_new", vec![i(1), i(0), i(0), i(2), i(3), i(1)]),
            Command::GNew {
                groups: vec![
                    NewGroup { id: 1, add_action: AddAction::Head, target: 0 },
                    NewGroup { id: 2, add_action: AddAction::After, target: 1 },
                ]
            }
        );
        assert_eq!(
            parse("/n_run", vec![i(1), i(0), i(2), i(1), i(3)]),
            Command::NRun { nodes: vec![(1, false), (2, true), (3, false)] }
        );
        assert_eq!(parse("/b_set", vec![i(0), i(1), f(0.5), i(2), i(3)]), Command::BSet {
            buffer: 0,
            samples: vec![(1, 0.5), (2, 3.0)]
        });
        assert_eq!(parse("/c_set", vec![i(0), f(1.0), i(5), f(2.0), i(9)]), Command::CSet {
            values: vec![(0, 1.0), (5, 2.0)]
        });
        assert_eq!(
            parse("/c_setn", vec![i(0), i(2), f(1.0), f(2.0)]),
            Command::CSetn { ranges: vec![ValueRange { start: 0, values: vec![1.0, 2.0] }] }
        );
        assert_eq!(
            parse("/b_fill", vec![i(3), i(0), i(10), f(0.25)]),
            Command::BFill { buffer: 3, fills: vec![ValueFill { start: 0, count: 10, value: 0.25 }] }
        );
        assert_eq!(
            parse("/n_order", vec![i(1), i(0), i(5), i(6)]),
            Command::NOrder { add_action: AddAction::Tail, target: 0, nodes: vec![5, 6] }
        );
    }

    #[test]
    fn integer_command_numbers_dispatch_like_names() {
        let by_number = OscMessage::new(Address::Number(9), vec![s("x"), i(1)]);
        assert_eq!(parse_command(&by_number).unwrap(), parse("/s_new", vec![s("x"), i(1)]));
        assert_eq!(parse_command(&OscMessage::new(Address::Number(52), vec![i(4)])).unwrap(), Command::Sync {
            id: 4
        });
        assert_eq!(command_number("/b_setSampleRate"), Some(66));
        assert_eq!(command_name(2), Some("/status"));
        assert!(parse_command(&OscMessage::new(Address::Number(13), vec![])).is_err());
        assert!(parse_command(&OscMessage::new(Address::Number(200), vec![])).is_err());
        // Round trip through the wire with an integer address.
        let bytes = OscMessage::new(Address::Number(11), vec![i(5)]).encode();
        let OscPacket::Message(m) = decode(&bytes).unwrap() else { panic!() };
        assert_eq!(parse_command(&m).unwrap(), Command::NFree { nodes: vec![5] });
    }

    #[test]
    fn every_numbered_command_parses_with_no_arguments_or_asks_for_one() {
        for &(n, name) in COMMAND_NUMBERS {
            let r = parse_command(&OscMessage::new(Address::Number(n), vec![]));
            match r {
                Ok(c) => assert_eq!(c.name(), name),
                Err(CommandError::Missing { command, .. }) => assert_eq!(command, name),
                Err(CommandError::UnknownCommand(_)) => assert_eq!(name, "/n_cmd"),
                Err(e) => panic!("{name}: {e}"),
            }
        }
    }

    #[test]
    fn unknown_command_is_reported() {
        let e = parse_command(&msg("/nope", vec![])).unwrap_err();
        assert_eq!(e.to_string(), "/nope: command not found");
    }

    #[test]
    fn async_buffer_commands_take_defaults_and_completion() {
        let done = OscMessage::new("/status", vec![]).encode();
        assert_eq!(
            parse("/b_alloc", vec![i(2), i(1024)]),
            Command::BAlloc { buffer: 2, frames: 1024, channels: 1, completion: None, sample_rate: None }
        );
        assert_eq!(
            parse("/b_alloc", vec![i(2), i(1024), i(2), OscArg::Blob(done.clone()), f(48000.0)]),
            Command::BAlloc {
                buffer: 2,
                frames: 1024,
                channels: 2,
                completion: Some(done.clone()),
                sample_rate: Some(48000.0)
            }
        );
        assert_eq!(
            parse("/b_read", vec![i(1), s("a.wav")]),
            Command::BRead {
                buffer: 1,
                path: "a.wav".into(),
                start_frame: 0,
                frames: -1,
                buffer_start_frame: 0,
                leave_open: false,
                completion: None
            }
        );
        assert_eq!(
            parse("/b_allocReadChannel", vec![i(1), s("a.wav"), i(10), i(0), i(1), i(0), OscArg::Blob(done.clone())]),
            Command::BAllocReadChannel {
                buffer: 1,
                path: "a.wav".into(),
                start_frame: 10,
                frames: 0,
                channels: vec![1, 0],
                completion: Some(done.clone())
            }
        );
        assert_eq!(
            parse("/b_readChannel", vec![i(1), s("a.wav"), i(0), i(100), i(5), i(1), i(3)]),
            Command::BReadChannel {
                buffer: 1,
                path: "a.wav".into(),
                start_frame: 0,
                frames: 100,
                buffer_start_frame: 5,
                leave_open: true,
                channels: vec![3],
                completion: None
            }
        );
        assert_eq!(
            parse("/b_write", vec![i(1), s("o.aiff")]),
            Command::BWrite {
                buffer: 1,
                path: "o.aiff".into(),
                header_format: "aiff".into(),
                sample_format: "int16".into(),
                frames: -1,
                start_frame: 0,
                leave_open: false,
                completion: None
            }
        );
        assert_eq!(
            parse("/b_write", vec![i(1), s("o.wav"), s("wav"), s("float"), i(100), i(3), i(1), i(0)]),
            Command::BWrite {
                buffer: 1,
                path: "o.wav".into(),
                header_format: "wav".into(),
                sample_format: "float".into(),
                frames: 100,
                start_frame: 3,
                leave_open: true,
                completion: None
            }
        );
        assert_eq!(parse("/b_free", vec![i(4), i(0)]), Command::BFree { buffer: 4, completion: None });
        let e = parse_command(&msg("/b_free", vec![i(4), s("x")])).unwrap_err();
        assert!(e.to_string().contains("completion message"), "{e}");
    }

    #[test]
    fn b_gen_keeps_its_command_and_arguments() {
        assert_eq!(
            parse("/b_gen", vec![i(1), s("sine1"), i(7), f(1.0), f(0.5)]),
            Command::BGen { buffer: 1, command: "sine1".into(), args: vec![i(7), f(1.0), f(0.5)] }
        );
    }

    #[test]
    fn top_level_commands() {
        assert_eq!(parse("/notify", vec![i(1)]), Command::Notify { on: true, client_id: -1 });
        assert_eq!(parse("/notify", vec![i(1), i(3)]), Command::Notify { on: true, client_id: 3 });
        assert_eq!(parse("/sync", vec![]), Command::Sync { id: 0 });
        assert_eq!(parse("/error", vec![i(-1)]), Command::Error { mode: -1 });
        assert_eq!(parse("/d_free", vec![s("a"), s("b")]), Command::DFree { names: vec!["a".into(), "b".into()] });
        assert_eq!(parse("/nrt_end", vec![]), Command::NrtEnd);
        assert_eq!(
            parse("/u_cmd", vec![i(1000), i(2), s("setFoo"), f(1.0)]),
            Command::UCmd { node: 1000, unit: 2, name: "setFoo".into(), args: vec![f(1.0)] }
        );
        assert_eq!(
            parse("/g_queryTree", vec![i(0), i(1)]),
            Command::GQueryTree { groups: vec![(0, true)] }
        );
        assert_eq!(
            parse("/s_getn", vec![i(1), s("freq"), i(2)]),
            Command::SGetn { node: 1, controls: vec![("freq".into(), 2)] }
        );
    }

    #[test]
    fn bus_map_strings_parse_like_atoi() {
        assert_eq!(parse_bus_map("c12"), Some(ControlValue::ControlBus(12)));
        assert_eq!(parse_bus_map("a3x"), Some(ControlValue::AudioBus(3)));
        assert_eq!(parse_bus_map("c"), Some(ControlValue::ControlBus(0)));
        assert_eq!(parse_bus_map("c-1"), Some(ControlValue::ControlBus(-1)));
        assert_eq!(parse_bus_map("x1"), None);
        assert_eq!(parse_bus_map(""), None);
    }
}

#[cfg(test)]
mod encode_tests {
    use super::*;
    use crate::osc::{decode, OscPacket};

    fn sample_commands() -> Vec<Command> {
        let done = OscMessage::new("/sync", vec![OscArg::Int(1)]).encode();
        let cs = |c: ControlId, v: Vec<ControlValue>| ControlSet { control: c, values: v };
        vec![
            Command::Quit,
            Command::Notify { on: true, client_id: 2 },
            Command::Cmd { name: "foo".into(), args: vec![OscArg::Int(1)] },
            Command::DRecv { data: vec![1, 2, 3], completion: Some(done.clone()) },
            Command::DLoad { path: "/a/*.scsyndef".into(), completion: None },
            Command::DFree { names: vec!["a".into()] },
            Command::NRun { nodes: vec![(1, true), (2, false)] },
            Command::NSet {
                node: 4,
                controls: vec![
                    cs("freq".into(), vec![ControlValue::Value(1.5)]),
                    cs(3.into(), vec![ControlValue::AudioBus(2), ControlValue::Value(0.0)]),
                ],
            },
            Command::NSetn { node: 4, controls: vec![cs("x".into(), vec![ControlValue::ControlBus(1)])] },
            Command::NFill {
                node: 1,
                fills: vec![ControlFill { control: 0.into(), count: 2, value: ControlValue::ControlBus(5) }],
            },
            Command::NMapn { node: 1, maps: vec![BusMapRange { control: "a".into(), bus: -1, count: 2 }] },
            Command::NOrder { add_action: AddAction::Before, target: 5, nodes: vec![6, 7] },
            Command::SNew {
                def_name: "sine".into(),
                node: -1,
                add_action: AddAction::Replace,
                target: 3,
                controls: vec![cs("a".into(), vec![ControlValue::Value(1.0), ControlValue::Value(2.0)])],
            },
            Command::SNewargs {
                def_name: "sine".into(),
                node: 5,
                add_action: AddAction::Head,
                target: 1,
                controls: vec![cs(0.into(), vec![ControlValue::Value(1.0), ControlValue::Value(2.0)])],
            },
            Command::SGetn { node: 1, controls: vec![("a".into(), 3)] },
            Command::PNew { groups: vec![NewGroup { id: 9, add_action: AddAction::Tail, target: 1 }] },
            Command::GQueryTree { groups: vec![(0, true)] },
            Command::UCmd { node: 1, unit: 2, name: "x".into(), args: vec![] },
            Command::BAlloc { buffer: 1, frames: 8, channels: 2, completion: None, sample_rate: Some(44100.0) },
            Command::BAllocReadChannel {
                buffer: 1,
                path: "f.wav".into(),
                start_frame: 0,
                frames: 0,
                channels: vec![0, 1],
                completion: Some(done.clone()),
            },
            Command::BWrite {
                buffer: 1,
                path: "o.wav".into(),
                header_format: "wav".into(),
                sample_format: "float".into(),
                frames: -1,
                start_frame: 0,
                leave_open: true,
                completion: None,
            },
            Command::BSetn { buffer: 1, ranges: vec![ValueRange { start: 2, values: vec![0.5, 0.25] }] },
            Command::BGen { buffer: 1, command: "sine1".into(), args: vec![OscArg::Int(7), OscArg::Float(1.0)] },
            Command::BSetSampleRate { buffer: 1, sample_rate: None },
            Command::CFill { fills: vec![ValueFill { start: 0, count: 4, value: 1.0 }] },
            Command::CGetn { ranges: vec![(0, 4)] },
        ]
    }

    #[test]
    fn commands_survive_encoding_and_parsing() {
        for c in sample_commands() {
            let bytes = c.to_message().encode();
            let OscPacket::Message(m) = decode(&bytes).unwrap() else { panic!() };
            assert_eq!(parse_command(&m).unwrap(), c);
        }
    }
}
