//! Reads command arguments the way scsynth's argument iterator does: typed
//! reads with defaults, numbers converted between int and float, arrays seen
//! as `[` and `]` markers, and "bytes remaining" counted as on the wire, so
//! that loops over argument groups stop exactly where scsynth's stop.

use magnetar_protocol::commands::{
    BusMap, BusMapRange, Command, CommandError, ControlFill, ControlId, ControlSet, ControlValue, NewGroup, NodeRef,
    Number, ValueFill, ValueRange,
};
use magnetar_protocol::osc::OscArg;

/// One flattened argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Token<'a> {
    Int(i32),
    Float(f32),
    Double(f64),
    Long(i64),
    Str(&'a str),
    Blob(&'a [u8]),
    Open,
    Close,
    Other(char),
}

impl Token<'_> {
    fn tag(&self) -> char {
        match self {
            Token::Int(_) => 'i',
            Token::Float(_) => 'f',
            Token::Double(_) => 'd',
            Token::Long(_) => 'h',
            Token::Str(_) => 's',
            Token::Blob(_) => 'b',
            Token::Open => '[',
            Token::Close => ']',
            Token::Other(c) => *c,
        }
    }

    /// Size of the value on the wire, in bytes.
    fn wire_size(&self) -> usize {
        match self {
            Token::Int(_) | Token::Float(_) => 4,
            Token::Double(_) | Token::Long(_) => 8,
            Token::Str(s) => (s.len() + 4) & !3,
            Token::Blob(b) => 4 + ((b.len() + 3) & !3),
            Token::Open | Token::Close => 0,
            Token::Other(c) => match c {
                't' => 8,
                'c' | 'r' | 'm' => 4,
                _ => 0,
            },
        }
    }
}

fn flatten<'a>(args: &'a [OscArg], out: &mut Vec<Token<'a>>) {
    for a in args {
        match a {
            OscArg::Int(v) => out.push(Token::Int(*v)),
            OscArg::Float(v) => out.push(Token::Float(*v)),
            OscArg::Double(v) => out.push(Token::Double(*v)),
            OscArg::Long(v) => out.push(Token::Long(*v)),
            OscArg::Str(s) => out.push(Token::Str(s)),
            OscArg::Blob(b) => out.push(Token::Blob(b)),
            OscArg::Array(inner) => {
                out.push(Token::Open);
                flatten(inner, out);
                out.push(Token::Close);
            }
            other => out.push(Token::Other(other.type_tag())),
        }
    }
}

pub struct Args<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    remain: usize,
}

impl<'a> Args<'a> {
    pub fn new(args: &'a [OscArg]) -> Args<'a> {
        let mut tokens = Vec::with_capacity(args.len());
        flatten(args, &mut tokens);
        let remain = tokens.iter().map(Token::wire_size).sum();
        Args { tokens, pos: 0, remain }
    }

    /// Bytes of argument data not yet read.
    pub fn remain(&self) -> usize {
        self.remain
    }

    /// Whether any argument (even a zero-size marker) is left.
    pub fn has_more(&self) -> bool {
        self.pos < self.tokens.len()
    }

    /// The type tag of the next argument, or `default` when none is left.
    pub fn next_tag(&self, default: char) -> char {
        self.tokens.get(self.pos).map(Token::tag).unwrap_or(default)
    }

    fn advance(&mut self) -> Option<Token<'a>> {
        let t = self.tokens.get(self.pos)?.clone();
        self.pos += 1;
        self.remain -= t.wire_size();
        Some(t)
    }

    /// The arguments not read yet, as OSC arguments again (arrays nested
    /// as they came; a marker without its pair is dropped).
    pub fn rest(&self) -> Vec<OscArg> {
        let mut stack: Vec<Vec<OscArg>> = vec![Vec::new()];
        for t in self.tokens.iter().skip(self.pos) {
            let arg = match t {
                Token::Int(v) => OscArg::Int(*v),
                Token::Float(v) => OscArg::Float(*v),
                Token::Double(v) => OscArg::Double(*v),
                Token::Long(v) => OscArg::Long(*v),
                Token::Str(s) => OscArg::Str((*s).to_string()),
                Token::Blob(b) => OscArg::Blob(b.to_vec()),
                Token::Open => {
                    stack.push(Vec::new());
                    continue;
                }
                Token::Close => match stack.len() {
                    1 => continue,
                    _ => OscArg::Array(stack.pop().unwrap_or_default()),
                },
                Token::Other(_) => continue,
            };
            if let Some(top) = stack.last_mut() {
                top.push(arg);
            }
        }
        while stack.len() > 1 {
            let inner = stack.pop().unwrap_or_default();
            if let Some(top) = stack.last_mut() {
                top.push(OscArg::Array(inner));
            }
        }
        stack.pop().unwrap_or_default()
    }

    /// Skips one argument (an array marker, for instance).
    pub fn skip(&mut self) {
        self.advance();
    }

    pub fn geti(&mut self, default: i32) -> i32 {
        match self.advance() {
            Some(Token::Int(v)) => v,
            Some(Token::Float(v)) => float_to_i32(v as f64),
            Some(Token::Double(v)) => float_to_i32(v),
            Some(Token::Long(v)) => v as i32,
            _ => default,
        }
    }

    pub fn getf(&mut self, default: f32) -> f32 {
        match self.advance() {
            Some(Token::Int(v)) => v as f32,
            Some(Token::Float(v)) => v,
            Some(Token::Double(v)) => v as f32,
            Some(Token::Long(v)) => v as f32,
            _ => default,
        }
    }

    /// The next argument if it is a string; otherwise `None`, and the
    /// argument is consumed all the same.
    pub fn gets(&mut self) -> Option<&'a str> {
        match self.advance() {
            Some(Token::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The next argument if it is a blob (a completion message).
    pub fn getb(&mut self) -> Option<&'a [u8]> {
        match self.tokens.get(self.pos) {
            Some(Token::Blob(_)) => match self.advance() {
                Some(Token::Blob(b)) => Some(b),
                _ => None,
            },
            _ => None,
        }
    }

    /// scsynth's optional trailing completion message: taken if the next
    /// argument is a blob, skipped otherwise.
    pub fn completion(&mut self) -> Option<&'a [u8]> {
        if self.next_tag('\0') == 'b' {
            self.getb()
        } else {
            None
        }
    }
}

/// The first argument read as `geti(default)` reads it, without building an
/// argument reader (a message's preparation uses it to find the buffer an
/// asynchronous command will touch, and must agree with the command).
pub fn first_i32(args: &[OscArg], default: i32) -> i32 {
    match args.first() {
        Some(OscArg::Int(v)) => *v,
        Some(OscArg::Float(v)) => float_to_i32(f64::from(*v)),
        Some(OscArg::Double(v)) => float_to_i32(*v),
        Some(OscArg::Long(v)) => *v as i32,
        _ => default,
    }
}

/// A float converted to int the way scsynth's C cast does on x86: out of
/// range or NaN gives `i32::MIN` (the "integer indefinite" value), so a huge
/// count sent as a float loops zero times there, and here.
pub fn float_to_i32(v: f64) -> i32 {
    if !(-2_147_483_648.0..2_147_483_648.0).contains(&v) {
        i32::MIN
    } else {
        v as i32
    }
}

/// `atoi` on the digits after a bus-map prefix ("c12" → 12), as scsynth.
pub fn atoi(s: &str) -> i32 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        v = (v * 10 + (b - b'0') as i64).min(i32::MAX as i64 + 1);
    }
    (if neg { -v } else { v }) as i32
}

/// The engine's reading of a message (the reads its command performers
/// make, in their order, through [`Args`]) as protocol's typed command: the
/// reference the typed decoding is checked against
/// (`tests/typed_decode.rs`, the `typed_decode` fuzz target) while the
/// performers move over to it. Where a performer stops early on an
/// argument, the command is refused with its message.
pub fn engine_reading(msg: &magnetar_protocol::osc::OscMessage) -> Result<Command, CommandError> {
    use magnetar_protocol::CommandKind as K;
    let unknown = || CommandError::UnknownCommand { command: msg.address.to_string() };
    match K::of(&msg.address) {
        None | Some(K::NCmd | K::MagnetarRtStats | K::MagnetarDiskStats) => Err(unknown()),
        Some(kind) => read_command(kind, &mut Args::new(&msg.args), &msg.args),
    }
}

/// Reads a command's arguments as the engine's performers read them;
/// `raw` are the message's arguments (`/cmd` and `/u_cmd` take them as
/// they are).
pub fn read_command(
    kind: magnetar_protocol::CommandKind,
    a: &mut Args<'_>,
    raw: &[OscArg],
) -> Result<Command, CommandError> {
    use magnetar_protocol::CommandKind as K;
    use Command as C;
    let name = kind.name();
    let unknown = || CommandError::UnknownCommand { command: name.to_string() };
    let refuse = |message: &str| CommandError::Rejected { command: name, message: message.to_string() };
    // The engine's node argument (`Engine::node_ref`).
    fn node(a: &mut Args<'_>) -> NodeRef {
        if a.next_tag('i') != 's' {
            return NodeRef::from(a.geti(0));
        }
        let steps = a.gets().unwrap_or("").to_string();
        NodeRef { steps: Some(steps), id: a.geti(0) }
    }
    fn control(a: &mut Args<'_>) -> ControlId {
        if a.next_tag('i') == 's' {
            ControlId::Name(a.gets().unwrap_or("").to_string())
        } else {
            ControlId::Index(a.geti(0))
        }
    }
    // `Engine::apply_controls`.
    fn apply_controls(a: &mut Args<'_>) -> Vec<ControlSet> {
        let mut out = Vec::new();
        while a.remain() >= 8 {
            let ctl = control(a);
            let mut values = Vec::new();
            let mut depth = 0;
            loop {
                match a.next_tag('f') {
                    'f' | 'i' | 'd' | 'h' => values.push(ControlValue::Value(a.getf(0.0))),
                    's' => {
                        let s = a.gets().unwrap_or("");
                        if let Some(rest) = s.strip_prefix('c') {
                            values.push(ControlValue::ControlBus(atoi(rest)));
                        } else if let Some(rest) = s.strip_prefix('a') {
                            values.push(ControlValue::AudioBus(atoi(rest)));
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
            out.push(ControlSet { control: ctl, values });
        }
        out
    }
    // `Engine::cmd_n_setn`'s groups.
    fn setn_controls(a: &mut Args<'_>) -> Vec<ControlSet> {
        let mut out = Vec::new();
        while a.remain() > 0 {
            let ctl = control(a);
            let count = a.geti(0);
            let mut values = Vec::new();
            let mut i = 0;
            while a.remain() > 0 && i < count {
                if a.next_tag('f') == 's' {
                    let s = a.gets().unwrap_or("");
                    values.push(if let Some(rest) = s.strip_prefix('c') {
                        ControlValue::ControlBus(atoi(rest))
                    } else if let Some(rest) = s.strip_prefix('a') {
                        ControlValue::AudioBus(atoi(rest))
                    } else {
                        ControlValue::Ignored
                    });
                } else {
                    values.push(ControlValue::Value(a.getf(0.0)));
                }
                i += 1;
            }
            out.push(ControlSet { control: ctl, values });
        }
        out
    }
    fn while_any<T>(a: &mut Args<'_>, mut f: impl FnMut(&mut Args<'_>) -> T) -> Vec<T> {
        let mut out = Vec::new();
        while a.remain() > 0 {
            out.push(f(a));
        }
        out
    }
    // `buffer_cmds::take_completion`.
    fn take_completion(a: &mut Args<'_>) -> Option<Vec<u8>> {
        match a.completion() {
            Some(bytes) if !bytes.is_empty() => Some(bytes.to_vec()),
            Some(_) => None,
            None => {
                if a.next_tag('\0') == 'i' {
                    a.skip();
                }
                None
            }
        }
    }
    fn channel_list(a: &mut Args<'_>) -> Vec<i32> {
        let mut out = Vec::new();
        while a.next_tag('\0') == 'i' {
            out.push(a.geti(0));
        }
        out
    }
    fn def_completion(a: &mut Args<'_>) -> Option<Vec<u8>> {
        a.completion().filter(|b| !b.is_empty()).map(<[u8]>::to_vec)
    }
    const PATH: &str = magnetar_protocol::commands::PATH_NOT_A_STRING;
    Ok(match kind {
        K::None => C::None,
        K::Quit => C::Quit,
        K::Notify => {
            let on = a.geti(0) != 0;
            C::Notify { on, client_id: a.geti(-1) }
        }
        K::Status => C::Status { extended: a.remain() > 0 && a.geti(0) == 1 },
        // `cmd_plugin` and `cmd_u_cmd` read the raw arguments.
        K::Cmd => {
            let all = raw;
            let name = all.first().and_then(OscArg::as_str).ok_or_else(|| refuse("no command name"))?;
            C::Cmd { name: name.to_string(), args: all[1..].to_vec() }
        }
        K::UCmd => {
            let all = raw;
            let node = all.first().and_then(OscArg::as_i32).unwrap_or(0);
            let unit = all.get(1).and_then(OscArg::as_i32).unwrap_or(-1);
            let name = all.get(2).and_then(OscArg::as_str).ok_or_else(|| refuse("no command name"))?;
            C::UCmd { node, unit, name: name.to_string(), args: all[3..].to_vec() }
        }
        K::DumpOsc => C::DumpOsc { mode: a.geti(0) },
        K::Sync => C::Sync { id: a.geti(0) },
        K::ClearSched => C::ClearSched,
        K::Error => C::Error { mode: a.geti(0) },
        K::Version => C::Version,
        K::RtMemoryStatus => C::RtMemoryStatus,
        K::DRecv => {
            let data = a.getb().ok_or_else(|| refuse("wrong argument type"))?.to_vec();
            C::DRecv { data, completion: def_completion(a) }
        }
        K::DLoad | K::DLoadDir => {
            let path = a.gets().ok_or_else(|| refuse("wrong argument type"))?.to_string();
            let completion = def_completion(a);
            if kind == K::DLoad {
                C::DLoad { path, completion }
            } else {
                C::DLoadDir { path, completion }
            }
        }
        K::DFree => C::DFree { names: while_any(a, |a| a.gets().map(str::to_string)) },
        K::DFreeAll => C::DFreeAll,
        K::NFree => C::NFree { nodes: while_any(a, node) },
        K::NRun => C::NRun {
            nodes: while_any(a, |a| {
                let n = node(a);
                (n, a.geti(0) != 0)
            }),
        },
        K::NSet => C::NSet { node: node(a), controls: apply_controls(a) },
        K::NSetn => {
            let n = node(a);
            C::NSetn { node: n, controls: setn_controls(a) }
        }
        K::NFill => {
            let n = node(a);
            let mut fills = Vec::new();
            while a.remain() >= 12 {
                let ctl = control(a);
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
                fills.push(ControlFill { control: ctl, count, value, then });
            }
            C::NFill { node: n, fills }
        }
        K::NMap | K::NMapa | K::NMapn | K::NMapan => {
            let multi = matches!(kind, K::NMapn | K::NMapan);
            let n = node(a);
            let group = if multi { 12 } else { 8 };
            let mut maps = Vec::new();
            let mut ranges = Vec::new();
            while a.remain() >= group {
                let ctl = control(a);
                let bus = a.geti(0);
                if multi {
                    ranges.push(BusMapRange { control: ctl, bus, count: a.geti(0) });
                } else {
                    maps.push(BusMap { control: ctl, bus });
                }
            }
            match kind {
                K::NMap => C::NMap { node: n, maps },
                K::NMapa => C::NMapa { node: n, maps },
                K::NMapn => C::NMapn { node: n, maps: ranges },
                _ => C::NMapan { node: n, maps: ranges },
            }
        }
        K::NBefore | K::NAfter | K::GHead | K::GTail => {
            let pairs = while_any(a, |a| {
                let first = node(a);
                (first, node(a))
            });
            match kind {
                K::NBefore => C::NBefore { pairs },
                K::NAfter => C::NAfter { pairs },
                K::GHead => C::GHead { pairs },
                _ => C::GTail { pairs },
            }
        }
        K::NQuery => C::NQuery { nodes: while_any(a, node) },
        K::NTrace => C::NTrace { nodes: while_any(a, node) },
        K::NOrder => {
            let add_action = a.geti(0);
            let target = node(a);
            C::NOrder { add_action, target, nodes: while_any(a, node) }
        }
        K::NCmd | K::MagnetarRtStats | K::MagnetarDiskStats => return Err(unknown()),
        K::SNew => {
            let def_name = a.gets().ok_or_else(|| refuse("wrong argument type"))?.to_string();
            let id = a.geti(0);
            let action = a.geti(0);
            let target = node(a);
            C::SNew { def_name, node: id, add_action: action, target, controls: apply_controls(a) }
        }
        // Not performed: read as `/s_new` with `/n_setn`'s groups.
        K::SNewargs => {
            let def_name = a.gets().ok_or_else(|| refuse("wrong argument type"))?.to_string();
            let id = a.geti(0);
            let action = a.geti(0);
            let target = node(a);
            C::SNewargs { def_name, node: id, add_action: action, target, controls: setn_controls(a) }
        }
        K::SGet => C::SGet { node: node(a), controls: while_any(a, control) },
        K::SGetn => C::SGetn {
            node: node(a),
            controls: while_any(a, |a| {
                let c = control(a);
                (c, a.geti(0))
            }),
        },
        K::SNoid => C::SNoid { nodes: while_any(a, node) },
        K::GNew | K::PNew => {
            let groups = while_any(a, |a| {
                let id = a.geti(0);
                let add_action = a.geti(0);
                NewGroup { id, add_action, target: node(a) }
            });
            if kind == K::GNew {
                C::GNew { groups }
            } else {
                C::PNew { groups }
            }
        }
        K::GFreeAll => C::GFreeAll { groups: while_any(a, node) },
        K::GDeepFree => C::GDeepFree { groups: while_any(a, node) },
        K::GDumpTree | K::GQueryTree => {
            let groups = while_any(a, |a| {
                let g = node(a);
                (g, a.geti(0) != 0)
            });
            if kind == K::GDumpTree {
                C::GDumpTree { groups }
            } else {
                C::GQueryTree { groups }
            }
        }
        K::BAlloc => {
            let buffer = a.geti(0);
            let frames = a.geti(0);
            let channels = a.geti(1);
            let completion = take_completion(a);
            C::BAlloc { buffer, frames, channels, completion, sample_rate: a.getf(0.0) }
        }
        K::BAllocRead | K::BAllocReadChannel => {
            let buffer = a.geti(0);
            let path = a.gets().ok_or_else(|| refuse(PATH))?.to_string();
            let start_frame = a.geti(0);
            let frames = a.geti(0);
            if kind == K::BAllocRead {
                C::BAllocRead { buffer, path, start_frame, frames, completion: take_completion(a) }
            } else {
                let channels = channel_list(a);
                C::BAllocReadChannel { buffer, path, start_frame, frames, channels, completion: take_completion(a) }
            }
        }
        K::BRead | K::BReadChannel => {
            let buffer = a.geti(0);
            let path = a.gets().ok_or_else(|| refuse(PATH))?.to_string();
            let start_frame = a.geti(0);
            let frames = a.geti(-1);
            let buffer_start_frame = a.geti(0);
            let leave_open = a.geti(0) != 0;
            let channels = if kind == K::BReadChannel { channel_list(a) } else { Vec::new() };
            let completion = take_completion(a);
            if kind == K::BRead {
                C::BRead { buffer, path, start_frame, frames, buffer_start_frame, leave_open, completion }
            } else {
                C::BReadChannel { buffer, path, start_frame, frames, buffer_start_frame, leave_open, channels, completion }
            }
        }
        K::BWrite => {
            let buffer = a.geti(0);
            let path = a.gets().ok_or_else(|| refuse(PATH))?.to_string();
            let header_format = a.gets().unwrap_or("aiff").to_string();
            let sample_format = a.gets().unwrap_or("int16").to_string();
            let frames = a.geti(-1);
            let start_frame = a.geti(0);
            let leave_open = a.geti(0) != 0;
            let completion = take_completion(a);
            C::BWrite { buffer, path, header_format, sample_format, frames, start_frame, leave_open, completion }
        }
        K::BFree | K::BZero | K::BClose => {
            let buffer = a.geti(0);
            let completion = take_completion(a);
            match kind {
                K::BFree => C::BFree { buffer, completion },
                K::BZero => C::BZero { buffer, completion },
                _ => C::BClose { buffer, completion },
            }
        }
        K::BSet => {
            let buffer = a.geti(0);
            let mut samples = Vec::new();
            while a.remain() >= 8 {
                let i = a.geti(0);
                samples.push((i, a.getf(0.0)));
            }
            C::BSet { buffer, samples }
        }
        K::BSetn => {
            let buffer = a.geti(0);
            let mut args = Vec::new();
            while a.has_more() {
                let before = a.remain();
                let next = a.tokens.get(a.pos).cloned();
                let int = a.geti(0);
                let float = match next {
                    Some(Token::Int(v)) => v as f32,
                    Some(Token::Float(v)) => v,
                    Some(Token::Double(v)) => v as f32,
                    Some(Token::Long(v)) => v as f32,
                    _ => 0.0,
                };
                args.push(Number { int, float, sized: a.remain() < before });
            }
            C::BSetn { buffer, args }
        }
        K::BFill | K::CFill => {
            let buffer = if kind == K::BFill { a.geti(0) } else { 0 };
            let mut fills = Vec::new();
            while a.remain() >= 12 {
                let start = a.geti(0);
                let count = a.geti(0);
                fills.push(ValueFill { start, count, value: a.getf(0.0) });
            }
            if kind == K::BFill {
                C::BFill { buffer, fills }
            } else {
                C::CFill { fills }
            }
        }
        K::BGen => {
            let buffer = a.geti(0);
            let command = a
                .gets()
                .ok_or_else(|| refuse("wrong argument type: the generator name must be a string"))?
                .to_string();
            let rest = a.rest();
            let mut values = Vec::new();
            while a.has_more() {
                match a.next_tag('\0') {
                    '[' | ']' => a.skip(),
                    _ => values.push(a.getf(0.0)),
                }
            }
            C::BGen { buffer, command, args: values, rest }
        }
        K::BSetSampleRate => {
            let buffer = a.geti(0);
            C::BSetSampleRate { buffer, sample_rate: a.getf(0.0) }
        }
        K::BQuery => C::BQuery { buffers: while_any(a, |a| a.geti(0)) },
        K::BGet => {
            let buffer = a.geti(0);
            let mut indices = Vec::new();
            while a.remain() >= 4 {
                indices.push(a.geti(0));
            }
            C::BGet { buffer, indices }
        }
        K::BGetn | K::CGetn => {
            let buffer = if kind == K::BGetn { a.geti(0) } else { 0 };
            let ranges = while_any(a, |a| {
                let start = a.geti(0);
                (start, a.geti(0))
            });
            if kind == K::BGetn {
                C::BGetn { buffer, ranges }
            } else {
                C::CGetn { ranges }
            }
        }
        K::CSet => {
            let mut values = Vec::new();
            while a.remain() >= 8 {
                let index = a.geti(0);
                values.push((index, a.getf(0.0)));
            }
            C::CSet { values }
        }
        K::CSetn => C::CSetn {
            ranges: while_any(a, |a| {
                let start = a.geti(0);
                let count = a.geti(0);
                let end = i64::from(start) + i64::from(count) - 1;
                let mut values = Vec::new();
                let mut i = i64::from(start);
                while a.remain() > 0 && i <= end {
                    values.push(a.getf(0.0));
                    i += 1;
                }
                ValueRange { start, count, values }
            }),
        },
        K::CGet => C::CGet { buses: while_any(a, |a| a.geti(0)) },
        K::NrtEnd => C::NrtEnd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_gives_back_what_was_not_read_with_arrays_nested() {
        let inner = vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(2.0)])];
        let args = vec![OscArg::Int(0), OscArg::Str("gen".into()), OscArg::Array(inner.clone()), OscArg::Float(3.0)];
        let mut a = Args::new(&args);
        assert_eq!(a.geti(-1), 0);
        assert_eq!(a.gets(), Some("gen"));
        assert_eq!(a.rest(), vec![OscArg::Array(inner), OscArg::Float(3.0)]);
        a.skip();
        // Inside the array: its close marker has no open one left, and is dropped.
        assert_eq!(a.rest(), vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(2.0)]), OscArg::Float(3.0)]);
    }

    #[test]
    fn numbers_convert_and_missing_values_take_defaults() {
        let args = vec![OscArg::Float(3.7), OscArg::Int(2), OscArg::Str("x".into())];
        let mut a = Args::new(&args);
        assert_eq!(a.remain(), 12);
        assert_eq!(a.geti(0), 3);
        assert_eq!(a.getf(0.0), 2.0);
        assert_eq!(a.next_tag('f'), 's');
        assert_eq!(a.gets(), Some("x"));
        assert_eq!(a.geti(7), 7);
        assert_eq!(a.remain(), 0);
    }

    #[test]
    fn arrays_appear_as_markers_that_take_no_bytes() {
        let args = vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(1.0), OscArg::Float(2.0)])];
        let mut a = Args::new(&args);
        a.geti(0);
        assert_eq!(a.next_tag('f'), '[');
        assert_eq!(a.remain(), 8);
        a.skip();
        assert_eq!(a.getf(0.0), 1.0);
        assert_eq!(a.getf(0.0), 2.0);
        assert_eq!(a.next_tag('f'), ']');
    }

    #[test]
    fn out_of_range_floats_become_int_min_as_on_x86() {
        let args = vec![OscArg::Float(1e30), OscArg::Float(f32::NAN), OscArg::Float(-2.9)];
        let mut a = Args::new(&args);
        assert_eq!(a.geti(0), i32::MIN);
        assert_eq!(a.geti(0), i32::MIN);
        assert_eq!(a.geti(0), -2);
    }

    #[test]
    fn first_i32_reads_as_geti_does() {
        let cases = [
            vec![OscArg::Str("3".into())],
            vec![OscArg::Blob(vec![1, 2, 3])],
            vec![OscArg::Nil],
            vec![OscArg::True],
            vec![OscArg::Long((1 << 40) + 1)],
            vec![OscArg::Double(1e300)],
            vec![OscArg::Float(f32::NAN)],
            vec![OscArg::Array(vec![OscArg::Int(4)])],
            vec![],
        ];
        for args in cases {
            assert_eq!(first_i32(&args, 0), Args::new(&args).geti(0), "{args:?}");
        }
    }

    #[test]
    fn bus_map_strings_parse_like_atoi() {
        assert_eq!(atoi("12"), 12);
        assert_eq!(atoi("3x"), 3);
        assert_eq!(atoi(""), 0);
        assert_eq!(atoi("-1"), -1);
    }
}
