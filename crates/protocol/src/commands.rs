//! scsynth's command set as typed values, decoded from OSC messages.
//!
//! Arguments are read exactly as scsynth's argument iterator reads them
//! ([`crate::sc_args`]): where an integer is expected a float is truncated
//! and anything else reads as the default (0 for most); where a float is
//! expected numbers are converted and anything else reads as 0; arrays are
//! seen as markers; and repeated groups (`/n_free` ids, `/g_new` triples,
//! `/n_set` pairs) are read while as many bytes remain on the wire as
//! scsynth asks for. A message scsynth accepts decodes to the command it
//! performs, so a server that performs the decoded command behaves as
//! scsynth does. The only errors are an unknown command and the few
//! arguments scsynth itself refuses (a SynthDef name that is not a string,
//! say), with the text of the `/fail` reply.

pub use crate::control_sets::{BusRanges, ControlRef, ControlSets};
use crate::kind::CommandKind;
use crate::osc::{OscArg, OscMessage};
use crate::sc_args::{atoi, ScArgs};
use smallvec::SmallVec;
use thiserror::Error;

/// Where a new node goes relative to its target (commands carry the raw
/// number: scsynth fails other numbers when it performs the command).
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

/// A node as a command names it: an id, or scsynth's path form, a string of
/// steps (`h` head, `t` tail, `u` up, `p` previous, `n` next) followed by
/// the id to start from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeRef {
    pub steps: Option<String>,
    pub id: i32,
}

impl From<i32> for NodeRef {
    fn from(id: i32) -> Self {
        NodeRef { steps: None, id }
    }
}

impl NodeRef {
    fn read(a: &mut ScArgs<'_>) -> NodeRef {
        if a.next_tag('i') == 's' {
            let steps = a.gets().unwrap_or("").to_owned();
            NodeRef { steps: Some(steps), id: a.geti(0) }
        } else {
            NodeRef { steps: None, id: a.geti(0) }
        }
    }

    fn push_args(&self, a: &mut Vec<OscArg>) {
        if let Some(steps) = &self.steps {
            a.push(OscArg::Str(steps.clone()));
        }
        a.push(OscArg::Int(self.id));
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

    /// A string names a control; anything else is read as an index.
    fn read(a: &mut ScArgs<'_>) -> ControlId {
        if a.next_tag('i') == 's' {
            ControlId::Name(a.gets().unwrap_or("").to_owned())
        } else {
            ControlId::Index(a.geti(0))
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
    /// Another string where `/n_setn` (or `/n_fill`'s trailing value)
    /// expects a value: it takes its place and changes nothing.
    Ignored,
}

impl ControlValue {
    /// The OSC form: a float, or the bus-map string `c<n>` / `a<n>`.
    pub fn to_arg(&self) -> OscArg {
        match *self {
            ControlValue::Value(v) => OscArg::Float(v),
            ControlValue::ControlBus(b) => OscArg::Str(format!("c{b}")),
            ControlValue::AudioBus(b) => OscArg::Str(format!("a{b}")),
            ControlValue::Ignored => OscArg::Str(String::new()),
        }
    }
}

/// `/n_fill` group: `count` consecutive controls from `control` set to
/// `value`. scsynth 3.13 then reads one more argument and applies it to the
/// same range: `then` is that argument (a value, 0 when the message has
/// ended; a `c<n>` string maps the range to consecutive control buses; any
/// other string is ignored).
#[derive(Debug, Clone, PartialEq)]
pub struct ControlFill {
    pub control: ControlId,
    pub count: i32,
    pub value: f32,
    pub then: ControlValue,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGroup {
    pub id: i32,
    pub add_action: i32,
    pub target: NodeRef,
}

/// A fill of `count` samples/buses from `start` with `value`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueFill {
    pub start: i32,
    pub count: i32,
    pub value: f32,
}

/// One argument as both of scsynth's numeric reads see it, for a command
/// whose groups depend on the server's state (`/b_setn`: a range that
/// misses the buffer leaves its values to be read as the next start and
/// count).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number {
    /// As `geti(0)` reads it.
    pub int: i32,
    /// As `getf(0.0)` reads it.
    pub float: f32,
    /// Whether it takes bytes on the wire (array markers, `T`, `F`, `N`
    /// and `I` take none, and a loop over what remains stops before them).
    pub sized: bool,
}

/// `/c_set`'s pairs of a bus and its value, the first few held in place.
pub type IndexValues = SmallVec<[(i32, f32); 4]>;

/// Raw bytes of an OSC packet to perform when an asynchronous command
/// completes (an empty blob is none).
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
    /// `/status [1]`; magnetar answers `1` with its extra counts.
    Status { extended: bool },
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
    /// `/d_free name...`; `None` stands for an argument that is not a
    /// string, where scsynth stops with "SynthDef not found".
    DFree { names: Vec<Option<String>> },
    /// `/d_freeAll` (number 8; not in the reference but scsynth has it)
    DFreeAll,

    // ---- nodes
    /// `/n_free id...`
    NFree { nodes: Vec<NodeRef> },
    /// `/n_run (id flag)...`; a missing flag is 0 (off).
    NRun { nodes: Vec<(NodeRef, bool)> },
    /// `/n_set id (control value)...`
    NSet { node: NodeRef, controls: ControlSets },
    /// `/n_setn id (control count values...)...`
    NSetn { node: NodeRef, controls: ControlSets },
    /// `/n_fill id (control count value)...` (see [`ControlFill`] for the
    /// argument scsynth reads after each triple)
    NFill { node: NodeRef, fills: Vec<ControlFill> },
    /// `/n_map id (control bus)...`
    NMap { node: NodeRef, maps: Vec<BusMap> },
    /// `/n_mapn id (control bus count)...`
    NMapn { node: NodeRef, maps: Vec<BusMapRange> },
    /// `/n_mapa id (control bus)...`
    NMapa { node: NodeRef, maps: Vec<BusMap> },
    /// `/n_mapan id (control bus count)...`
    NMapan { node: NodeRef, maps: Vec<BusMapRange> },
    /// `/n_before (node target)...`: each `.0` goes just before `.1`.
    NBefore { pairs: Vec<(NodeRef, NodeRef)> },
    /// `/n_after (node target)...`: each `.0` goes just after `.1`.
    NAfter { pairs: Vec<(NodeRef, NodeRef)> },
    /// `/n_query id...`
    NQuery { nodes: Vec<NodeRef> },
    /// `/n_trace id...`
    NTrace { nodes: Vec<NodeRef> },
    /// `/n_order action target id...`
    NOrder { add_action: i32, target: NodeRef, nodes: Vec<NodeRef> },

    // ---- synths
    /// `/s_new def id action target (control value)...`; `node` -1 asks the
    /// server for an id. Missing id/action/target are 0 as in scsynth.
    SNew { def_name: String, node: i32, add_action: i32, target: NodeRef, controls: ControlSets },
    /// `/s_newargs def id action target (control count values...)...`
    /// (number 59, which scsynth 3.13 does not perform).
    SNewargs { def_name: String, node: i32, add_action: i32, target: NodeRef, controls: ControlSets },
    /// `/s_get id control...`
    SGet { node: NodeRef, controls: Vec<ControlId> },
    /// `/s_getn id (control count)...`
    SGetn { node: NodeRef, controls: Vec<(ControlId, i32)> },
    /// `/s_noid id...`
    SNoid { nodes: Vec<NodeRef> },

    // ---- groups
    /// `/g_new (id action target)...`
    GNew { groups: Vec<NewGroup> },
    /// `/p_new (id action target)...`
    PNew { groups: Vec<NewGroup> },
    /// `/g_head (group node)...`
    GHead { pairs: Vec<(NodeRef, NodeRef)> },
    /// `/g_tail (group node)...`
    GTail { pairs: Vec<(NodeRef, NodeRef)> },
    /// `/g_freeAll group...`
    GFreeAll { groups: Vec<NodeRef> },
    /// `/g_deepFree group...`
    GDeepFree { groups: Vec<NodeRef> },
    /// `/g_dumpTree (group with_controls)...`
    GDumpTree { groups: Vec<(NodeRef, bool)> },
    /// `/g_queryTree (group with_controls)...`
    GQueryTree { groups: Vec<(NodeRef, bool)> },

    // ---- unit generators
    /// `/u_cmd node unit_index name args...`
    UCmd { node: i32, unit: i32, name: String, args: Vec<OscArg> },

    // ---- buffers
    /// `/b_alloc buf frames [channels=1] [completion] [sample_rate]`; a
    /// rate that is not positive means the server's.
    BAlloc { buffer: i32, frames: i32, channels: i32, completion: Completion, sample_rate: f32 },
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
    /// `/b_setn buf (start count values...)...`: the arguments after the
    /// buffer, grouped when performed (see [`Number`]).
    BSetn { buffer: i32, args: Vec<Number> },
    /// `/b_fill buf (start count value)...`
    BFill { buffer: i32, fills: Vec<ValueFill> },
    /// `/b_gen buf command args...`: the arguments as floats (flags first
    /// for the standard fill commands; array markers left out), and as they
    /// came for a generator a plugin defined (`rest`: arrays nested, tags
    /// without a value left out).
    BGen { buffer: i32, command: String, args: Vec<f32>, rest: Vec<OscArg> },
    /// `/b_close buf [completion]`
    BClose { buffer: i32, completion: Completion },
    /// `/b_query buf...`
    BQuery { buffers: Vec<i32> },
    /// `/b_get buf index...`
    BGet { buffer: i32, indices: Vec<i32> },
    /// `/b_getn buf (start count)...`
    BGetn { buffer: i32, ranges: Vec<(i32, i32)> },
    /// `/b_setSampleRate buf rate`; a rate that is not positive means the
    /// server's.
    BSetSampleRate { buffer: i32, sample_rate: f32 },

    // ---- control buses
    /// `/c_set (index value)...`
    CSet { values: IndexValues },
    /// `/c_setn (start count values...)...`
    CSetn { ranges: BusRanges },
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

    // ---- magnetar's extensions
    /// `/magnetar_rtStats`: what the audio thread measured about itself.
    MagnetarRtStats,
    /// `/magnetar_diskStats [1]`: the disk threads' statistics; 1 resets
    /// them once read.
    MagnetarDiskStats { reset: bool },
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
            Status { .. } => "/status",
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
            MagnetarRtStats => "/magnetar_rtStats",
            MagnetarDiskStats { .. } => "/magnetar_diskStats",
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
        fn nodes(a: &mut Vec<OscArg>, v: &[NodeRef]) {
            for n in v {
                n.push_args(a);
            }
        }
        fn node_pairs(a: &mut Vec<OscArg>, v: &[(NodeRef, NodeRef)]) {
            for (x, y) in v {
                x.push_args(a);
                y.push_args(a);
            }
        }
        fn flags(a: &mut Vec<OscArg>, v: &[(NodeRef, bool)]) {
            for (x, y) in v {
                x.push_args(a);
                a.push(OscArg::Int(i32::from(*y)));
            }
        }
        fn pairs(a: &mut Vec<OscArg>, v: &[(i32, i32)]) {
            for &(x, y) in v {
                a.extend([OscArg::Int(x), OscArg::Int(y)]);
            }
        }
        fn completion(a: &mut Vec<OscArg>, c: &Completion) {
            if let Some(bytes) = c {
                a.push(OscArg::Blob(bytes.clone()));
            }
        }
        fn sets(a: &mut Vec<OscArg>, v: &ControlSets) {
            for (control, mut values) in v.iter() {
                a.push(control.to_id().to_arg());
                if values.len() == 1 {
                    a.extend(values.next().map(|one| one.to_arg()));
                } else {
                    a.push(OscArg::Array(values.map(|v| v.to_arg()).collect()));
                }
            }
        }
        fn ranges(a: &mut Vec<OscArg>, v: &ControlSets) {
            for (control, values) in v.iter() {
                a.push(control.to_id().to_arg());
                a.push(OscArg::Int(values.len() as i32));
                a.extend(values.map(|v| v.to_arg()));
            }
        }
        fn value_pairs(a: &mut Vec<OscArg>, v: &[(i32, f32)]) {
            for &(i, x) in v {
                a.extend([OscArg::Int(i), OscArg::Float(x)]);
            }
        }
        fn fills(a: &mut Vec<OscArg>, v: &[ValueFill]) {
            for f in v {
                a.extend([OscArg::Int(f.start), OscArg::Int(f.count), OscArg::Float(f.value)]);
            }
        }
        fn new_node(a: &mut Vec<OscArg>, def: &str, node: i32, action: i32, target: &NodeRef) {
            a.extend([OscArg::Str(def.to_owned()), OscArg::Int(node), OscArg::Int(action)]);
            target.push_args(a);
        }
        match self {
            C::None
            | C::Quit
            | C::ClearSched
            | C::Version
            | C::RtMemoryStatus
            | C::DFreeAll
            | C::NrtEnd
            | C::MagnetarRtStats => {}
            C::MagnetarDiskStats { reset } => {
                if *reset {
                    a.push(OscArg::Int(1));
                }
            }
            C::Status { extended } => {
                if *extended {
                    a.push(OscArg::Int(1));
                }
            }
            C::Notify { on, client_id } => a.extend([OscArg::Int(i32::from(*on)), OscArg::Int(*client_id)]),
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
            C::DFree { names } => {
                a.extend(names.iter().map(|n| n.as_ref().map_or(OscArg::Int(0), |n| OscArg::Str(n.clone()))))
            }
            C::NFree { nodes: n } | C::NQuery { nodes: n } | C::NTrace { nodes: n } | C::SNoid { nodes: n } => {
                nodes(&mut a, n)
            }
            C::GFreeAll { groups } | C::GDeepFree { groups } => nodes(&mut a, groups),
            C::NRun { nodes } => flags(&mut a, nodes),
            C::GDumpTree { groups } | C::GQueryTree { groups } => flags(&mut a, groups),
            C::NSet { node, controls } => {
                node.push_args(&mut a);
                sets(&mut a, controls);
            }
            C::NSetn { node, controls } => {
                node.push_args(&mut a);
                ranges(&mut a, controls);
            }
            C::NFill { node, fills } => {
                node.push_args(&mut a);
                for f in fills {
                    a.extend([f.control.to_arg(), OscArg::Int(f.count), OscArg::Float(f.value), f.then.to_arg()]);
                }
            }
            C::NMap { node, maps } | C::NMapa { node, maps } => {
                node.push_args(&mut a);
                for m in maps {
                    a.extend([m.control.to_arg(), OscArg::Int(m.bus)]);
                }
            }
            C::NMapn { node, maps } | C::NMapan { node, maps } => {
                node.push_args(&mut a);
                for m in maps {
                    a.extend([m.control.to_arg(), OscArg::Int(m.bus), OscArg::Int(m.count)]);
                }
            }
            C::NBefore { pairs: p } | C::NAfter { pairs: p } | C::GHead { pairs: p } | C::GTail { pairs: p } => {
                node_pairs(&mut a, p)
            }
            C::NOrder { add_action, target, nodes: n } => {
                a.push(OscArg::Int(*add_action));
                target.push_args(&mut a);
                nodes(&mut a, n);
            }
            C::SNew { def_name, node, add_action, target, controls } => {
                new_node(&mut a, def_name, *node, *add_action, target);
                sets(&mut a, controls);
            }
            C::SNewargs { def_name, node, add_action, target, controls } => {
                new_node(&mut a, def_name, *node, *add_action, target);
                ranges(&mut a, controls);
            }
            C::SGet { node, controls } => {
                node.push_args(&mut a);
                a.extend(controls.iter().map(ControlId::to_arg));
            }
            C::SGetn { node, controls } => {
                node.push_args(&mut a);
                for (c, n) in controls {
                    a.extend([c.to_arg(), OscArg::Int(*n)]);
                }
            }
            C::GNew { groups } | C::PNew { groups } => {
                for g in groups {
                    a.extend([OscArg::Int(g.id), OscArg::Int(g.add_action)]);
                    g.target.push_args(&mut a);
                }
            }
            C::UCmd { node, unit, name, args } => {
                a.extend([OscArg::Int(*node), OscArg::Int(*unit), name.as_str().into()]);
                a.extend(args.iter().cloned());
            }
            C::BAlloc { buffer, frames, channels, completion: c, sample_rate } => {
                a.extend([OscArg::Int(*buffer), OscArg::Int(*frames), OscArg::Int(*channels)]);
                // A 0 int stands in for "no completion message" so the rate lands in place.
                a.push(c.as_ref().map_or(OscArg::Int(0), |b| OscArg::Blob(b.clone())));
                a.push(OscArg::Float(*sample_rate));
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
                    OscArg::Int(i32::from(*leave_open)),
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
                    OscArg::Int(i32::from(*leave_open)),
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
                    OscArg::Int(i32::from(*leave_open)),
                ]);
                completion(&mut a, c);
            }
            C::BFree { buffer, completion: c } | C::BZero { buffer, completion: c } | C::BClose { buffer, completion: c } => {
                a.push(OscArg::Int(*buffer));
                completion(&mut a, c);
            }
            C::BSet { buffer, samples } => {
                a.push(OscArg::Int(*buffer));
                value_pairs(&mut a, samples);
            }
            C::BSetn { buffer, args } => {
                a.push(OscArg::Int(*buffer));
                for n in args {
                    // An int when it reads as the same number both ways.
                    a.push(if n.int as f32 == n.float { OscArg::Int(n.int) } else { OscArg::Float(n.float) });
                }
            }
            C::BFill { buffer, fills: f } => {
                a.push(OscArg::Int(*buffer));
                fills(&mut a, f);
            }
            C::BGen { buffer, command, rest, .. } => {
                a.extend([OscArg::Int(*buffer), command.as_str().into()]);
                a.extend(rest.iter().cloned());
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
                a.extend([OscArg::Int(*buffer), OscArg::Float(*sample_rate)]);
            }
            C::CSet { values } => value_pairs(&mut a, values),
            C::CSetn { ranges } => {
                for (start, count, values) in ranges.iter() {
                    a.extend([OscArg::Int(start), OscArg::Int(count)]);
                    a.extend(values.map(OscArg::Float));
                }
            }
            C::CFill { fills: f } => fills(&mut a, f),
            C::CGet { buses } => ints(&mut a, buses),
            C::CGetn { ranges } => pairs(&mut a, ranges),
        }
        OscMessage::new(self.name(), a)
    }
}

/// Why a message is not a command scsynth performs. The text is the `/fail`
/// reply's.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    /// No such command (`command` is the address as the message gave it).
    #[error("{command}: Command not found")]
    UnknownCommand { command: String },
    /// An argument scsynth refuses, before the command changes anything.
    #[error("{command}: {message}")]
    Rejected { command: &'static str, message: String },
}

impl CommandError {
    /// The command's name, for the `/fail` reply.
    pub fn command(&self) -> &str {
        match self {
            CommandError::UnknownCommand { command } => command,
            CommandError::Rejected { command, .. } => command,
        }
    }

    /// The `/fail` reply's message.
    pub fn message(&self) -> &str {
        match self {
            CommandError::UnknownCommand { .. } => "Command not found",
            CommandError::Rejected { message, .. } => message,
        }
    }
}

/// The text scsynth's commands fail with when a string argument is not one.
pub const WRONG_ARGUMENT_TYPE: &str = "wrong argument type";
/// The buffer file commands' text for a path that is not a string.
pub const PATH_NOT_A_STRING: &str = "wrong argument type: the file path must be a string";
/// `/b_gen`'s text for a generator name that is not a string.
pub const GENERATOR_NOT_A_STRING: &str = "wrong argument type: the generator name must be a string";
/// `/cmd` and `/u_cmd`'s text for a missing command name.
pub const NO_COMMAND_NAME: &str = "no command name";

/// Parses a bus-map string the way scsynth does: `c` or `a` followed by an
/// integer read like C's `atoi` (leading digits; none gives bus 0).
pub fn parse_bus_map(s: &str) -> Option<ControlValue> {
    if let Some(rest) = s.strip_prefix('c') {
        Some(ControlValue::ControlBus(atoi(rest)))
    } else {
        s.strip_prefix('a').map(|rest| ControlValue::AudioBus(atoi(rest)))
    }
}

/// `/s_new` and `/n_set` controls: while two words remain, a control, then
/// a value, a bus-map string or an array of them (nested arrays are walked;
/// other strings and other types are passed over without taking a place).
fn control_sets(a: &mut ScArgs<'_>) -> ControlSets {
    let mut sets = ControlSets::new();
    while a.remain() >= 8 {
        sets.push_control(read_control(a));
        let mut depth = 0;
        loop {
            match a.next_tag('f') {
                'f' | 'i' | 'd' | 'h' => sets.push_value(ControlValue::Value(a.getf(0.0))),
                's' => {
                    if let Some(v) = parse_bus_map(a.gets().unwrap_or("")) {
                        sets.push_value(v);
                    }
                }
                '[' => {
                    a.skip();
                    depth += 1;
                }
                ']' => {
                    a.skip();
                    depth -= 1;
                }
                _ => a.skip(),
            }
            if depth <= 0 {
                break;
            }
        }
    }
    sets
}

/// A control by name (a string) or by index (anything else), borrowed from
/// the message.
fn read_control<'a>(a: &mut ScArgs<'a>) -> ControlRef<'a> {
    if a.next_tag('i') == 's' {
        ControlRef::Name(a.gets().unwrap_or(""))
    } else {
        ControlRef::Index(a.geti(0))
    }
}

/// `/n_setn` controls: while anything remains, a control, a count and up to
/// that many values (a string that is not a bus mapping takes a place).
fn control_ranges(a: &mut ScArgs<'_>) -> ControlSets {
    let mut sets = ControlSets::new();
    while a.remain() > 0 {
        sets.push_control(read_control(a));
        let count = a.geti(0);
        let mut i = 0;
        while a.remain() > 0 && i < count {
            if a.next_tag('f') == 's' {
                sets.push_value(parse_bus_map(a.gets().unwrap_or("")).unwrap_or(ControlValue::Ignored));
            } else {
                sets.push_value(ControlValue::Value(a.getf(0.0)));
            }
            i += 1;
        }
    }
    sets
}

fn node_refs(a: &mut ScArgs<'_>) -> Vec<NodeRef> {
    let mut out = Vec::new();
    while a.remain() > 0 {
        out.push(NodeRef::read(a));
    }
    out
}

fn node_pairs(a: &mut ScArgs<'_>) -> Vec<(NodeRef, NodeRef)> {
    let mut out = Vec::new();
    while a.remain() > 0 {
        let first = NodeRef::read(a);
        out.push((first, NodeRef::read(a)));
    }
    out
}

fn node_flags(a: &mut ScArgs<'_>) -> Vec<(NodeRef, bool)> {
    let mut out = Vec::new();
    while a.remain() > 0 {
        let node = NodeRef::read(a);
        out.push((node, a.geti(0) != 0));
    }
    out
}

fn ints(a: &mut ScArgs<'_>, min_remain: usize) -> Vec<i32> {
    let mut out = Vec::new();
    while a.remain() >= min_remain {
        out.push(a.geti(0));
    }
    out
}

fn int_pairs(a: &mut ScArgs<'_>) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    while a.remain() > 0 {
        let first = a.geti(0);
        out.push((first, a.geti(0)));
    }
    out
}

fn index_values(a: &mut ScArgs<'_>) -> IndexValues {
    let mut out = IndexValues::new();
    while a.remain() >= 8 {
        let i = a.geti(0);
        out.push((i, a.getf(0.0)));
    }
    out
}

fn value_fills(a: &mut ScArgs<'_>) -> Vec<ValueFill> {
    let mut out = Vec::new();
    while a.remain() >= 12 {
        let start = a.geti(0);
        let count = a.geti(0);
        out.push(ValueFill { start, count, value: a.getf(0.0) });
    }
    out
}

/// The optional completion message of a buffer command: a blob (empty is
/// none); an int in its place (clients send 0 for "none") is passed over so
/// that later arguments line up.
fn buffer_completion(a: &mut ScArgs<'_>) -> Completion {
    match a.getb() {
        Some(b) => (!b.is_empty()).then(|| b.to_vec()),
        None => {
            if a.next_tag('\0') == 'i' {
                a.skip();
            }
            None
        }
    }
}

/// The optional completion message of a SynthDef command: a blob, if the
/// next argument is one.
fn completion(a: &mut ScArgs<'_>) -> Completion {
    a.getb().filter(|b| !b.is_empty()).map(<[u8]>::to_vec)
}

/// The channel numbers of a `*Channel` command: every `i` argument up to the
/// first of another type.
fn channels(a: &mut ScArgs<'_>) -> Vec<i32> {
    let mut out = Vec::new();
    while a.next_tag('\0') == 'i' {
        out.push(a.geti(0));
    }
    out
}

/// Decodes a message into the command scsynth would perform, reading its
/// arguments as scsynth does (see the module documentation).
pub fn parse_command(msg: &OscMessage) -> Result<Command, CommandError> {
    let unknown = || CommandError::UnknownCommand { command: msg.address.to_string() };
    let kind = CommandKind::of(&msg.address).ok_or_else(unknown)?;
    if let Some(cmd) = parse_args(kind, &mut ScArgs::new(&msg.args)) {
        return cmd;
    }
    let rejected = |message: &str| CommandError::Rejected { command: kind.name(), message: message.to_owned() };
    match kind {
        K::Cmd | K::UCmd => {
            let all = &msg.args;
            let (skip, node, unit) = match kind {
                K::Cmd => (0, 0, 0),
                _ => (
                    2,
                    all.first().and_then(OscArg::as_i32).unwrap_or(0),
                    all.get(1).and_then(OscArg::as_i32).unwrap_or(-1),
                ),
            };
            let name = all.get(skip).and_then(OscArg::as_str).ok_or_else(|| rejected(NO_COMMAND_NAME))?.to_owned();
            let args = all[skip + 1..].to_vec();
            Ok(match kind {
                K::Cmd => Command::Cmd { name, args },
                _ => Command::UCmd { node, unit, name, args },
            })
        }
        _ => Err(unknown()),
    }
}

use CommandKind as K;

/// `?` for an argument refused inside [`parse_args`].
macro_rules! try_arg {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        }
    };
}

/// The command of `kind` from its arguments, read as scsynth reads them;
/// `None` for the commands that need the message itself (the plug-in
/// commands keep their arguments as they came; `/n_cmd` fails naming the
/// address as sent).
pub(crate) fn parse_args(kind: CommandKind, a: &mut ScArgs<'_>) -> Option<Result<Command, CommandError>> {
    let name = kind.name();
    let rejected = |message: &str| CommandError::Rejected { command: name, message: message.to_owned() };
    use Command as C;
    let string = |a: &mut ScArgs<'_>, message: &str| a.gets().map(str::to_owned).ok_or_else(|| rejected(message));
    Some(Ok(match kind {
        K::None => C::None,
        K::Quit => C::Quit,
        K::Notify => {
            let on = a.geti(0) != 0;
            C::Notify { on, client_id: a.geti(-1) }
        }
        K::Status => C::Status { extended: a.remain() > 0 && a.geti(0) == 1 },
        K::Cmd | K::UCmd | K::NCmd => return None,
        K::DumpOsc => C::DumpOsc { mode: a.geti(0) },
        K::Sync => C::Sync { id: a.geti(0) },
        K::ClearSched => C::ClearSched,
        K::Error => C::Error { mode: a.geti(0) },
        K::Version => C::Version,
        K::RtMemoryStatus => C::RtMemoryStatus,

        K::DRecv => {
            let data = try_arg!(a.getb().ok_or_else(|| rejected(WRONG_ARGUMENT_TYPE))).to_vec();
            C::DRecv { data, completion: completion(a) }
        }
        K::DLoad | K::DLoadDir => {
            let path = try_arg!(string(a, WRONG_ARGUMENT_TYPE));
            let completion = completion(a);
            match kind {
                K::DLoad => C::DLoad { path, completion },
                _ => C::DLoadDir { path, completion },
            }
        }
        K::DFree => {
            let mut names = Vec::new();
            while a.remain() > 0 {
                names.push(a.gets().map(str::to_owned));
            }
            C::DFree { names }
        }
        K::DFreeAll => C::DFreeAll,

        K::NFree => C::NFree { nodes: node_refs(a) },
        K::NRun => C::NRun { nodes: node_flags(a) },
        K::NSet => C::NSet { node: NodeRef::read(a), controls: control_sets(a) },
        K::NSetn => C::NSetn { node: NodeRef::read(a), controls: control_ranges(a) },
        K::NFill => {
            let node = NodeRef::read(a);
            let mut fills = Vec::new();
            while a.remain() >= 12 {
                let control = ControlId::read(a);
                let count = a.geti(0);
                let value = a.getf(0.0);
                let then = if a.next_tag('f') == 's' {
                    match a.gets().unwrap_or("").strip_prefix('c') {
                        Some(rest) => ControlValue::ControlBus(atoi(rest)),
                        None => ControlValue::Ignored,
                    }
                } else {
                    ControlValue::Value(a.getf(0.0))
                };
                fills.push(ControlFill { control, count, value, then });
            }
            C::NFill { node, fills }
        }
        K::NMap | K::NMapa => {
            let node = NodeRef::read(a);
            let mut maps = Vec::new();
            while a.remain() >= 8 {
                let control = ControlId::read(a);
                maps.push(BusMap { control, bus: a.geti(0) });
            }
            if kind == K::NMap {
                C::NMap { node, maps }
            } else {
                C::NMapa { node, maps }
            }
        }
        K::NMapn | K::NMapan => {
            let node = NodeRef::read(a);
            let mut maps = Vec::new();
            while a.remain() >= 12 {
                let control = ControlId::read(a);
                let bus = a.geti(0);
                maps.push(BusMapRange { control, bus, count: a.geti(0) });
            }
            if kind == K::NMapn {
                C::NMapn { node, maps }
            } else {
                C::NMapan { node, maps }
            }
        }
        K::NBefore => C::NBefore { pairs: node_pairs(a) },
        K::NAfter => C::NAfter { pairs: node_pairs(a) },
        K::NQuery => C::NQuery { nodes: node_refs(a) },
        K::NTrace => C::NTrace { nodes: node_refs(a) },
        K::NOrder => {
            let add_action = a.geti(0);
            let target = NodeRef::read(a);
            C::NOrder { add_action, target, nodes: node_refs(a) }
        }
        K::MagnetarRtStats => C::MagnetarRtStats,
        K::MagnetarDiskStats => C::MagnetarDiskStats { reset: a.remain() > 0 && a.geti(0) == 1 },

        K::SNew | K::SNewargs => {
            let def_name = try_arg!(string(a, WRONG_ARGUMENT_TYPE));
            let node = a.geti(0);
            let add_action = a.geti(0);
            let target = NodeRef::read(a);
            if kind == K::SNew {
                C::SNew { def_name, node, add_action, target, controls: control_sets(a) }
            } else {
                C::SNewargs { def_name, node, add_action, target, controls: control_ranges(a) }
            }
        }
        K::SGet => {
            let node = NodeRef::read(a);
            let mut controls = Vec::new();
            while a.remain() > 0 {
                controls.push(ControlId::read(a));
            }
            C::SGet { node, controls }
        }
        K::SGetn => {
            let node = NodeRef::read(a);
            let mut controls = Vec::new();
            while a.remain() > 0 {
                let control = ControlId::read(a);
                controls.push((control, a.geti(0)));
            }
            C::SGetn { node, controls }
        }
        K::SNoid => C::SNoid { nodes: node_refs(a) },

        K::GNew | K::PNew => {
            let mut groups = Vec::new();
            while a.remain() > 0 {
                let id = a.geti(0);
                let add_action = a.geti(0);
                groups.push(NewGroup { id, add_action, target: NodeRef::read(a) });
            }
            if kind == K::GNew {
                C::GNew { groups }
            } else {
                C::PNew { groups }
            }
        }
        K::GHead => C::GHead { pairs: node_pairs(a) },
        K::GTail => C::GTail { pairs: node_pairs(a) },
        K::GFreeAll => C::GFreeAll { groups: node_refs(a) },
        K::GDeepFree => C::GDeepFree { groups: node_refs(a) },
        K::GDumpTree => C::GDumpTree { groups: node_flags(a) },
        K::GQueryTree => C::GQueryTree { groups: node_flags(a) },

        K::BAlloc => {
            let buffer = a.geti(0);
            let frames = a.geti(0);
            let channels = a.geti(1);
            let completion = buffer_completion(a);
            C::BAlloc { buffer, frames, channels, completion, sample_rate: a.getf(0.0) }
        }
        K::BAllocRead | K::BAllocReadChannel => {
            let buffer = a.geti(0);
            let path = try_arg!(string(a, PATH_NOT_A_STRING));
            let start_frame = a.geti(0);
            let frames = a.geti(0);
            if kind == K::BAllocRead {
                C::BAllocRead { buffer, path, start_frame, frames, completion: buffer_completion(a) }
            } else {
                let channels = channels(a);
                C::BAllocReadChannel { buffer, path, start_frame, frames, channels, completion: buffer_completion(a) }
            }
        }
        K::BRead | K::BReadChannel => {
            let buffer = a.geti(0);
            let path = try_arg!(string(a, PATH_NOT_A_STRING));
            let start_frame = a.geti(0);
            let frames = a.geti(-1);
            let buffer_start_frame = a.geti(0);
            let leave_open = a.geti(0) != 0;
            if kind == K::BRead {
                let completion = buffer_completion(a);
                C::BRead { buffer, path, start_frame, frames, buffer_start_frame, leave_open, completion }
            } else {
                let channels = channels(a);
                let completion = buffer_completion(a);
                C::BReadChannel { buffer, path, start_frame, frames, buffer_start_frame, leave_open, channels, completion }
            }
        }
        K::BWrite => {
            let buffer = a.geti(0);
            let path = try_arg!(string(a, PATH_NOT_A_STRING));
            let header_format = a.gets().unwrap_or("aiff").to_owned();
            let sample_format = a.gets().unwrap_or("int16").to_owned();
            let frames = a.geti(-1);
            let start_frame = a.geti(0);
            let leave_open = a.geti(0) != 0;
            let completion = buffer_completion(a);
            C::BWrite { buffer, path, header_format, sample_format, frames, start_frame, leave_open, completion }
        }
        K::BFree | K::BZero | K::BClose => {
            let buffer = a.geti(0);
            let completion = buffer_completion(a);
            match kind {
                K::BFree => C::BFree { buffer, completion },
                K::BZero => C::BZero { buffer, completion },
                _ => C::BClose { buffer, completion },
            }
        }
        K::BSet => C::BSet { buffer: a.geti(0), samples: index_values(a).into_vec() },
        K::BSetn => {
            let buffer = a.geti(0);
            let mut args = Vec::new();
            while a.has_more() {
                let (int, float, sized) = a.get_number();
                args.push(Number { int, float, sized });
            }
            C::BSetn { buffer, args }
        }
        K::BFill => C::BFill { buffer: a.geti(0), fills: value_fills(a) },
        K::BGen => {
            let buffer = a.geti(0);
            let command = try_arg!(string(a, GENERATOR_NOT_A_STRING));
            let rest = a.rest();
            let mut args = Vec::new();
            while a.has_more() {
                match a.next_tag('\0') {
                    '[' | ']' => a.skip(),
                    _ => args.push(a.getf(0.0)),
                }
            }
            C::BGen { buffer, command, args, rest }
        }
        K::BQuery => C::BQuery { buffers: ints(a, 1) },
        K::BGet => C::BGet { buffer: a.geti(0), indices: ints(a, 4) },
        K::BGetn => C::BGetn { buffer: a.geti(0), ranges: int_pairs(a) },
        K::BSetSampleRate => C::BSetSampleRate { buffer: a.geti(0), sample_rate: a.getf(0.0) },

        K::CSet => C::CSet { values: index_values(a) },
        K::CSetn => {
            let mut ranges = BusRanges::new();
            while a.remain() > 0 {
                let start = a.geti(0);
                let count = a.geti(0);
                ranges.push_range(start, count);
                let mut n = 0i64;
                while a.remain() > 0 && n < i64::from(count) {
                    ranges.push_value(a.getf(0.0));
                    n += 1;
                }
            }
            C::CSetn { ranges }
        }
        K::CFill => C::CFill { fills: value_fills(a) },
        K::CGet => C::CGet { buses: ints(a, 1) },
        K::CGetn => C::CGetn { ranges: int_pairs(a) },

        K::NrtEnd => C::NrtEnd,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osc::{decode, Address, OscPacket};

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
    fn value(v: f32) -> ControlValue {
        ControlValue::Value(v)
    }

    #[test]
    fn s_new_with_named_and_indexed_controls() {
        let c = parse("/s_new", vec![s("sine"), i(1000), i(1), i(0), s("freq"), f(440.0), i(2), i(3)]);
        assert_eq!(
            c,
            Command::SNew {
                def_name: "sine".into(),
                node: 1000,
                add_action: 1,
                target: 0.into(),
                controls: ControlSets::new().with("freq", [value(440.0)]).with(2, [value(3.0)]),
            }
        );
    }

    #[test]
    fn s_new_maps_controls_to_buses_and_walks_arrays() {
        let arr = OscArg::Array(vec![f(1.0), i(2), s("c4"), s("x"), OscArg::Array(vec![f(5.0)])]);
        let c = parse("/s_new", vec![s("x"), i(-1), i(0), i(1), s("freq"), s("c12"), s("in"), s("a3"), s("lv"), arr]);
        let Command::SNew { controls, node, .. } = c else { panic!() };
        assert_eq!(node, -1);
        let controls = controls.to_vec();
        assert_eq!(controls[0].1, vec![ControlValue::ControlBus(12)]);
        assert_eq!(controls[1].1, vec![ControlValue::AudioBus(3)]);
        assert_eq!(controls[2].1, vec![value(1.0), value(2.0), ControlValue::ControlBus(4), value(5.0)]);
    }

    #[test]
    fn mistyped_arguments_read_as_scsynth_reads_them() {
        // A string where an int belongs reads as 0; floats are truncated;
        // a missing argument takes the default.
        let c = parse("/s_new", vec![s("x"), s("oops"), f(1.7), f(3.9)]);
        assert_eq!(
            c,
            Command::SNew { def_name: "x".into(), node: 0, add_action: 1, target: 3.into(), controls: ControlSets::new() }
        );
        // Add actions are kept as sent: performing decides.
        let Command::SNew { add_action, .. } = parse("/s_new", vec![s("x"), i(1), i(9), i(0)]) else { panic!() };
        assert_eq!(add_action, 9);
        // A string in a node's place is a path of steps before the id.
        assert_eq!(
            parse("/n_free", vec![s("hu"), i(1), i(2)]),
            Command::NFree { nodes: vec![NodeRef { steps: Some("hu".into()), id: 1 }, 2.into()] }
        );
        // A control value that is neither number nor bus mapping is passed over.
        let Command::NSet { controls, .. } = parse("/n_set", vec![i(1), s("freq"), s("loud")]) else { panic!() };
        assert_eq!(controls, ControlSets::new().with("freq", []));
    }

    #[test]
    fn only_strings_scsynth_needs_are_refused() {
        let e = parse_command(&msg("/s_new", vec![i(3)])).unwrap_err();
        assert_eq!((e.command(), e.message()), ("/s_new", WRONG_ARGUMENT_TYPE));
        let e = parse_command(&msg("/b_read", vec![i(3), i(4)])).unwrap_err();
        assert_eq!(e.message(), PATH_NOT_A_STRING);
        let e = parse_command(&msg("/d_recv", vec![s("x")])).unwrap_err();
        assert_eq!(e.message(), WRONG_ARGUMENT_TYPE);
        let e = parse_command(&msg("/nope", vec![])).unwrap_err();
        assert_eq!(e.to_string(), "/nope: Command not found");
    }

    #[test]
    fn groups_are_read_while_their_bytes_remain() {
        // A trailing control without a value is not read (4 bytes < 8).
        let Command::NSet { controls, .. } = parse("/n_set", vec![i(7), s("freq"), f(1.0), i(3)]) else { panic!() };
        assert_eq!(controls.len(), 1);
        // A long string is enough bytes for a pair on its own.
        let Command::NSet { controls, .. } = parse("/n_set", vec![i(7), s("frequency")]) else { panic!() };
        assert_eq!(controls, ControlSets::new().with("frequency", [value(0.0)]));
        assert_eq!(
            parse("/n_run", vec![i(1), i(0), i(2), i(1), i(3)]),
            Command::NRun { nodes: vec![(1.into(), false), (2.into(), true), (3.into(), false)] }
        );
        assert_eq!(parse("/c_set", vec![i(0), f(1.0), i(5), f(2.0), i(9)]), Command::CSet {
            values: [(0, 1.0), (5, 2.0)].into_iter().collect()
        });
        assert_eq!(parse("/b_get", vec![i(0), i(1), i(2)]), Command::BGet { buffer: 0, indices: vec![1, 2] });
        assert_eq!(
            parse("/c_setn", vec![i(0), i(3), f(1.0), f(2.0)]),
            Command::CSetn { ranges: BusRanges::new().with(0, 3, [1.0, 2.0]) }
        );
    }

    #[test]
    fn n_setn_strings_take_places() {
        let c = parse("/n_setn", vec![i(7), s("a"), i(3), f(1.0), s("zz"), s("c9"), i(5), i(1)]);
        assert_eq!(
            c,
            Command::NSetn {
                node: 7.into(),
                controls: ControlSets::new()
                    .with("a", [value(1.0), ControlValue::Ignored, ControlValue::ControlBus(9)])
                    .with(5, []),
            }
        );
    }

    #[test]
    fn n_fill_reads_the_extra_argument_scsynth_reads() {
        assert_eq!(
            parse("/n_fill", vec![i(1), s("x"), i(3), f(0.5)]),
            Command::NFill {
                node: 1.into(),
                fills: vec![ControlFill { control: "x".into(), count: 3, value: 0.5, then: value(0.0) }]
            }
        );
        let Command::NFill { fills, .. } = parse("/n_fill", vec![i(1), i(0), i(2), f(0.5), s("c4")]) else { panic!() };
        assert_eq!(fills[0].then, ControlValue::ControlBus(4));
    }

    #[test]
    fn b_setn_keeps_both_readings_of_each_argument() {
        let Command::BSetn { buffer, args } = parse("/b_setn", vec![i(2), i(0), f(2.5), OscArg::Array(vec![])]) else {
            panic!()
        };
        assert_eq!(buffer, 2);
        assert_eq!(
            args,
            vec![
                Number { int: 0, float: 0.0, sized: true },
                Number { int: 2, float: 2.5, sized: true },
                Number { int: 0, float: 0.0, sized: false },
                Number { int: 0, float: 0.0, sized: false },
            ]
        );
    }

    #[test]
    fn integer_command_numbers_dispatch_like_names() {
        let by_number = OscMessage::new(Address::Number(9), vec![s("x"), i(1)]);
        assert_eq!(parse_command(&by_number).unwrap(), parse("/s_new", vec![s("x"), i(1)]));
        assert_eq!(command_number("/b_setSampleRate"), Some(66));
        assert_eq!(command_name(2), Some("/status"));
        assert!(parse_command(&OscMessage::new(Address::Number(13), vec![])).is_err());
        assert!(parse_command(&OscMessage::new(Address::Number(200), vec![])).is_err());
        let bytes = OscMessage::new(Address::Number(11), vec![i(5)]).encode();
        let OscPacket::Message(m) = decode(&bytes).unwrap() else { panic!() };
        assert_eq!(parse_command(&m).unwrap(), Command::NFree { nodes: vec![5.into()] });
    }

    #[test]
    fn every_numbered_command_decodes_without_arguments_or_names_its_refusal() {
        for &(n, name) in COMMAND_NUMBERS {
            match parse_command(&OscMessage::new(Address::Number(n), vec![])) {
                Ok(c) => assert_eq!(c.name(), name),
                Err(e) => assert!(name == "/n_cmd" || e.command() == name, "{name}: {e}"),
            }
        }
    }

    #[test]
    fn buffer_commands_take_defaults_and_completion() {
        let done = OscMessage::new("/status", vec![]).encode();
        assert_eq!(
            parse("/b_alloc", vec![i(2), i(1024)]),
            Command::BAlloc { buffer: 2, frames: 1024, channels: 1, completion: None, sample_rate: 0.0 }
        );
        assert_eq!(
            parse("/b_alloc", vec![i(2), i(1024), i(2), i(0), f(48000.0)]),
            Command::BAlloc { buffer: 2, frames: 1024, channels: 2, completion: None, sample_rate: 48000.0 }
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
        // Mistyped optional strings are passed over with their defaults.
        assert_eq!(
            parse("/b_write", vec![i(1), s("o.aiff"), i(3)]),
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
            parse("/b_gen", vec![i(1), s("sine1"), i(7), OscArg::Array(vec![f(1.0), s("x")])]),
            Command::BGen {
                buffer: 1,
                command: "sine1".into(),
                args: vec![7.0, 1.0, 0.0],
                rest: vec![i(7), OscArg::Array(vec![f(1.0), s("x")])]
            }
        );
    }

    #[test]
    fn top_level_commands() {
        assert_eq!(parse("/notify", vec![i(1)]), Command::Notify { on: true, client_id: -1 });
        assert_eq!(parse("/sync", vec![]), Command::Sync { id: 0 });
        assert_eq!(parse("/status", vec![i(1)]), Command::Status { extended: true });
        assert_eq!(
            parse("/d_free", vec![s("a"), i(1)]),
            Command::DFree { names: vec![Some("a".into()), None] }
        );
        assert_eq!(
            parse("/u_cmd", vec![i(1000), i(2), s("setFoo"), f(1.0)]),
            Command::UCmd { node: 1000, unit: 2, name: "setFoo".into(), args: vec![f(1.0)] }
        );
    }

    #[test]
    fn bus_map_strings_parse_like_atoi() {
        assert_eq!(parse_bus_map("c12"), Some(ControlValue::ControlBus(12)));
        assert_eq!(parse_bus_map("a3x"), Some(ControlValue::AudioBus(3)));
        assert_eq!(parse_bus_map("c"), Some(ControlValue::ControlBus(0)));
        assert_eq!(parse_bus_map("x1"), None);
    }
}

#[cfg(test)]
mod encode_tests {
    use super::*;
    use crate::osc::{decode, OscPacket};

    fn sample_commands() -> Vec<Command> {
        let done = OscMessage::new("/sync", vec![OscArg::Int(1)]).encode();
        let path = NodeRef { steps: Some("ht".into()), id: 1 };
        vec![
            Command::Quit,
            Command::Status { extended: true },
            Command::Notify { on: true, client_id: 2 },
            Command::Cmd { name: "foo".into(), args: vec![OscArg::Int(1)] },
            Command::DRecv { data: vec![1, 2, 3], completion: Some(done.clone()) },
            Command::DLoad { path: "/a/*.scsyndef".into(), completion: None },
            Command::DFree { names: vec![Some("a".into()), None] },
            Command::NRun { nodes: vec![(1.into(), true), (path.clone(), false)] },
            Command::NSet {
                node: path.clone(),
                controls: ControlSets::new()
                    .with("freq", [ControlValue::Value(1.5)])
                    .with(3, [ControlValue::AudioBus(2), ControlValue::Value(0.0)])
                    .with("a_name_longer_than_fits_in_a_slot", [ControlValue::Value(2.0)]),
            },
            Command::NSetn {
                node: 4.into(),
                controls: ControlSets::new().with("x", [ControlValue::ControlBus(1), ControlValue::Ignored]),
            },
            Command::NFill {
                node: 1.into(),
                fills: vec![ControlFill { control: 0.into(), count: 2, value: 0.5, then: ControlValue::ControlBus(5) }],
            },
            Command::NMapn { node: 1.into(), maps: vec![BusMapRange { control: "a".into(), bus: -1, count: 2 }] },
            Command::NOrder { add_action: 2, target: 5.into(), nodes: vec![6.into(), path.clone()] },
            Command::SNew {
                def_name: "sine".into(),
                node: -1,
                add_action: 4,
                target: 3.into(),
                controls: ControlSets::new().with("a", [ControlValue::Value(1.0), ControlValue::Value(2.0)]),
            },
            Command::SGetn { node: 1.into(), controls: vec![("a".into(), 3)] },
            Command::PNew { groups: vec![NewGroup { id: 9, add_action: 1, target: path }] },
            Command::GQueryTree { groups: vec![(0.into(), true)] },
            Command::UCmd { node: 1, unit: 2, name: "x".into(), args: vec![] },
            Command::BAlloc { buffer: 1, frames: 8, channels: 2, completion: None, sample_rate: 44100.0 },
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
            Command::BSetn {
                buffer: 1,
                args: vec![Number { int: 2, float: 2.0, sized: true }, Number { int: 0, float: 0.25, sized: true }],
            },
            Command::BGen {
                buffer: 1,
                command: "sine1".into(),
                args: vec![7.0, 1.0],
                rest: vec![OscArg::Int(7), OscArg::Float(1.0)],
            },
            Command::BSetSampleRate { buffer: 1, sample_rate: 0.0 },
            Command::CSetn { ranges: BusRanges::new().with(2, 2, [0.5, 0.25]).with(7, 1, [1.0]) },
            Command::MagnetarDiskStats { reset: true },
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
