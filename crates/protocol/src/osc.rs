//! OSC 1.0 wire format: messages, bundles, and the argument types scsynth
//! clients send.
//!
//! Decoding is strict about structure (every length is checked against the
//! bytes actually present before anything is allocated, bundle elements must
//! fit inside their bundle) and never panics. Errors carry the byte offset of
//! the problem. Padding bytes are not checked, as scsynth does not check them:
//! sclang leaves garbage after blobs. A string ends, as in scsynth, after the
//! first 4-byte word whose last byte is NUL.
//!
//! Two scsynth conventions are supported beyond plain OSC:
//! - a message whose first byte is 0 has a 4-byte big-endian integer in place
//!   of the address pattern ([`Address::Number`]); scsynth uses it as an index
//!   into its command table;
//! - `#bundle` packets nest, and a bundle with time tag 0 or 1 means "now".
//!
//! Messages without a type tag string (pre-1.0 style) are accepted only when
//! they carry no arguments: scsynth interprets the raw words of such a message
//! by the types each command expects, which a typed argument list cannot
//! represent, so arguments without tags are reported as
//! [`DecodeErrorKind::MissingTypeTags`].

use thiserror::Error;

/// Nesting limit for bundles and `[`...`]` arrays, so hostile input cannot
/// exhaust the stack.
pub const MAX_NESTING: usize = 32;

const BUNDLE_TAG: &[u8; 8] = b"#bundle\0";

/// One OSC argument.
#[derive(Debug, Clone, PartialEq)]
pub enum OscArg {
    /// `i`: 32-bit integer.
    Int(i32),
    /// `f`: 32-bit float.
    Float(f32),
    /// `s` (and `S`, the alternate symbol tag, which decodes to this too).
    Str(String),
    /// `b`: blob.
    Blob(Vec<u8>),
    /// `h`: 64-bit integer.
    Long(i64),
    /// `d`: 64-bit float.
    Double(f64),
    /// `t`: NTP time tag (32.32 fixed point seconds since 1900).
    Time(u64),
    /// `c`: a character sent as 32 bits.
    Char(char),
    /// `r`: 32-bit RGBA colour.
    Rgba(u32),
    /// `m`: MIDI message: port id, status, data1, data2.
    Midi([u8; 4]),
    /// `T`
    True,
    /// `F`
    False,
    /// `N`
    Nil,
    /// `I`: impulse / infinitum.
    Inf,
    /// `[` ... `]`
    Array(Vec<OscArg>),
}

impl OscArg {
    /// Integer value the way scsynth reads an int argument: floats are
    /// truncated toward zero (saturating at the i32 range); 64-bit values are
    /// accepted too.
    pub fn as_i32(&self) -> Option<i32> {
        match *self {
            OscArg::Int(v) => Some(v),
            OscArg::Float(v) => Some(v as i32),
            OscArg::Double(v) => Some(v as i32),
            OscArg::Long(v) => Some(v as i32),
            _ => None,
        }
    }

    /// Float value the way scsynth reads a float argument: ints and doubles
    /// are converted.
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            OscArg::Float(v) => Some(v),
            OscArg::Int(v) => Some(v as f32),
            OscArg::Double(v) => Some(v as f32),
            OscArg::Long(v) => Some(v as f32),
            _ => None,
        }
    }

    /// Double value (scsynth's `getd`): floats and ints are widened.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            OscArg::Double(v) => Some(v),
            OscArg::Float(v) => Some(v as f64),
            OscArg::Int(v) => Some(v as f64),
            OscArg::Long(v) => Some(v as f64),
            _ => None,
        }
    }

    /// String contents of an `s`/`S` argument.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            OscArg::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Bytes of a blob argument.
    pub fn as_blob(&self) -> Option<&[u8]> {
        match self {
            OscArg::Blob(b) => Some(b),
            _ => None,
        }
    }

    /// The type tag character this argument is encoded with (`[` for arrays).
    pub fn type_tag(&self) -> char {
        match self {
            OscArg::Int(_) => 'i',
            OscArg::Float(_) => 'f',
            OscArg::Str(_) => 's',
            OscArg::Blob(_) => 'b',
            OscArg::Long(_) => 'h',
            OscArg::Double(_) => 'd',
            OscArg::Time(_) => 't',
            OscArg::Char(_) => 'c',
            OscArg::Rgba(_) => 'r',
            OscArg::Midi(_) => 'm',
            OscArg::True => 'T',
            OscArg::False => 'F',
            OscArg::Nil => 'N',
            OscArg::Inf => 'I',
            OscArg::Array(_) => '[',
        }
    }

    /// A short name of the argument's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            OscArg::Int(_) => "integer",
            OscArg::Float(_) => "float",
            OscArg::Str(_) => "string",
            OscArg::Blob(_) => "blob",
            OscArg::Long(_) => "64-bit integer",
            OscArg::Double(_) => "double",
            OscArg::Time(_) => "time tag",
            OscArg::Char(_) => "char",
            OscArg::Rgba(_) => "colour",
            OscArg::Midi(_) => "MIDI message",
            OscArg::True => "true",
            OscArg::False => "false",
            OscArg::Nil => "nil",
            OscArg::Inf => "infinitum",
            OscArg::Array(_) => "array",
        }
    }
}

impl From<i32> for OscArg {
    fn from(v: i32) -> Self {
        OscArg::Int(v)
    }
}
impl From<f32> for OscArg {
    fn from(v: f32) -> Self {
        OscArg::Float(v)
    }
}
impl From<f64> for OscArg {
    fn from(v: f64) -> Self {
        OscArg::Double(v)
    }
}
impl From<i64> for OscArg {
    fn from(v: i64) -> Self {
        OscArg::Long(v)
    }
}
impl From<&str> for OscArg {
    fn from(v: &str) -> Self {
        OscArg::Str(v.to_owned())
    }
}
impl From<String> for OscArg {
    fn from(v: String) -> Self {
        OscArg::Str(v)
    }
}
impl From<Vec<u8>> for OscArg {
    fn from(v: Vec<u8>) -> Self {
        OscArg::Blob(v)
    }
}
impl From<bool> for OscArg {
    fn from(v: bool) -> Self {
        if v {
            OscArg::True
        } else {
            OscArg::False
        }
    }
}

/// The address of a message: an OSC address pattern, or scsynth's integer
/// command number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Address {
    /// An address pattern such as `/s_new`.
    Name(String),
    /// A 4-byte big-endian integer whose first byte is 0. scsynth looks the
    /// command up by the last byte alone.
    Number(i32),
}

impl Address {
    /// The name, if this is a named address.
    pub fn as_name(&self) -> Option<&str> {
        match self {
            Address::Name(s) => Some(s),
            Address::Number(_) => None,
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Name(s) => f.write_str(s),
            Address::Number(n) => write!(f, "command number {n}"),
        }
    }
}

impl From<&str> for Address {
    fn from(s: &str) -> Self {
        Address::Name(s.to_owned())
    }
}
impl From<String> for Address {
    fn from(s: String) -> Self {
        Address::Name(s)
    }
}
impl From<i32> for Address {
    fn from(n: i32) -> Self {
        Address::Number(n)
    }
}

/// An OSC message.
#[derive(Debug, Clone, PartialEq)]
pub struct OscMessage {
    pub address: Address,
    pub args: Vec<OscArg>,
}

impl OscMessage {
    pub fn new(address: impl Into<Address>, args: Vec<OscArg>) -> Self {
        OscMessage { address: address.into(), args }
    }

    /// The wire bytes of this message.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len_hint());
        self.encode_into(&mut out);
        out
    }

    /// Appends the wire bytes of this message to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match &self.address {
            Address::Name(name) => write_string(out, name),
            Address::Number(n) => out.extend_from_slice(&n.to_be_bytes()),
        }
        let mut tags = String::with_capacity(self.args.len() + 2);
        tags.push(',');
        for arg in &self.args {
            push_tags(&mut tags, arg);
        }
        write_string(out, &tags);
        for arg in &self.args {
            write_arg(out, arg);
        }
    }

    fn encoded_len_hint(&self) -> usize {
        16 + self.args.len() * 8
    }
}

/// An OSC bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct OscBundle {
    /// NTP time tag; 0 or 1 means "immediately".
    pub time: u64,
    pub packets: Vec<OscPacket>,
}

impl OscBundle {
    pub fn new(time: u64, packets: Vec<OscPacket>) -> Self {
        OscBundle { time, packets }
    }

    /// The wire bytes of this bundle.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends the wire bytes of this bundle to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(BUNDLE_TAG);
        out.extend_from_slice(&self.time.to_be_bytes());
        for p in &self.packets {
            let len_at = out.len();
            out.extend_from_slice(&[0; 4]);
            p.encode_into(out);
            let len = (out.len() - len_at - 4) as u32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
}

/// A message or a bundle.
#[derive(Debug, Clone, PartialEq)]
pub enum OscPacket {
    Message(OscMessage),
    Bundle(OscBundle),
}

impl OscPacket {
    /// The wire bytes of this packet.
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }

    /// Appends the wire bytes of this packet to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            OscPacket::Message(m) => m.encode_into(out),
            OscPacket::Bundle(b) => b.encode_into(out),
        }
    }
}

impl From<OscMessage> for OscPacket {
    fn from(m: OscMessage) -> Self {
        OscPacket::Message(m)
    }
}
impl From<OscBundle> for OscPacket {
    fn from(b: OscBundle) -> Self {
        OscPacket::Bundle(b)
    }
}

/// The wire bytes of a packet.
pub fn encode(packet: &OscPacket) -> Vec<u8> {
    let mut out = Vec::new();
    packet.encode_into(&mut out);
    out
}

/// Whether `bytes` starts like a bundle (`#bundle\0`), as scsynth checks.
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && &bytes[..8] == BUNDLE_TAG
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// Writes a NUL-terminated, 4-byte padded OSC string. A string holding a NUL
/// is cut there, since the wire format cannot carry it.
fn write_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let bytes = match bytes.iter().position(|&b| b == 0) {
        Some(i) => &bytes[..i],
        None => bytes,
    };
    out.extend_from_slice(bytes);
    let total = pad4(bytes.len() + 1);
    out.resize(out.len() + total - bytes.len(), 0);
}

fn push_tags(tags: &mut String, arg: &OscArg) {
    if let OscArg::Array(items) = arg {
        tags.push('[');
        for a in items {
            push_tags(tags, a);
        }
        tags.push(']');
    } else {
        tags.push(arg.type_tag());
    }
}

fn write_arg(out: &mut Vec<u8>, arg: &OscArg) {
    match arg {
        OscArg::Int(v) => out.extend_from_slice(&v.to_be_bytes()),
        OscArg::Float(v) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
        OscArg::Str(s) => write_string(out, s),
        OscArg::Blob(b) => {
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
            out.resize(out.len() + pad4(b.len()) - b.len(), 0);
        }
        OscArg::Long(v) => out.extend_from_slice(&v.to_be_bytes()),
        OscArg::Double(v) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
        OscArg::Time(v) => out.extend_from_slice(&v.to_be_bytes()),
        OscArg::Char(c) => out.extend_from_slice(&(*c as u32).to_be_bytes()),
        OscArg::Rgba(v) => out.extend_from_slice(&v.to_be_bytes()),
        OscArg::Midi(m) => out.extend_from_slice(m),
        OscArg::True | OscArg::False | OscArg::Nil | OscArg::Inf => {}
        OscArg::Array(items) => {
            for a in items {
                write_arg(out, a);
            }
        }
    }
}

/// What is wrong with a packet.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    #[error("packet is empty")]
    Empty,
    #[error("truncated: {what} needs {needed} bytes, only {available} left")]
    Truncated { what: &'static str, needed: usize, available: usize },
    #[error("string is not NUL-terminated before the end of the data")]
    UnterminatedString,
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    #[error("unknown type tag '{0}'")]
    UnknownTypeTag(char),
    #[error("message has arguments but no type tag string (it must start with ',')")]
    MissingTypeTags,
    #[error("unbalanced '[' / ']' in the type tag string")]
    UnbalancedArray,
    #[error("arrays or bundles nested deeper than {MAX_NESTING}")]
    TooDeep,
    #[error("blob size {0} is negative")]
    NegativeBlobSize(i32),
    #[error("bundle element size {size} runs past the end of the bundle ({available} bytes left)")]
    ElementPastEnd { size: i64, available: usize },
    #[error("bundle element size {0} is negative")]
    NegativeElementSize(i32),
    #[error("bundle element size {0} is not a multiple of 4")]
    ElementSizeNotAligned(i32),
    #[error("bundle element is empty")]
    EmptyElement,
    #[error("{0} bytes left over after the last argument")]
    TrailingBytes(usize),
    #[error("'c' argument {0:#x} is not a valid character")]
    InvalidChar(u32),
    #[error("message is {0} bytes long, not a multiple of 4")]
    Unaligned(usize),
}

/// A decoding failure: what went wrong and the byte offset (from the start of
/// the outermost packet) where it was found.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("malformed OSC at byte {offset}: {kind}")]
pub struct DecodeError {
    pub offset: usize,
    pub kind: DecodeErrorKind,
}

/// Decodes one packet (a message or a bundle) that fills `bytes` exactly.
pub fn decode(bytes: &[u8]) -> Result<OscPacket, DecodeError> {
    decode_into(bytes, &mut OscPackets)
}

/// Decodes a message (not a bundle) that fills `bytes` exactly.
pub fn decode_message(bytes: &[u8]) -> Result<OscMessage, DecodeError> {
    decode_message_at(bytes, 0)
}

/// Decodes a message (not a bundle) that fills `bytes` exactly and lies
/// `base` bytes into its packet (the offset errors report).
pub fn decode_message_at(bytes: &[u8], base: usize) -> Result<OscMessage, DecodeError> {
    Reader { buf: bytes, pos: 0, base }.message()
}

/// What a packet decodes into: [`decode_into`] checks the bundle structure
/// (the same checks, in the same order, as [`decode`]) and hands each
/// message's bytes to the builder, so that a builder may read a message
/// straight from its bytes (or decode it with [`decode_message_at`]).
pub trait PacketBuilder {
    type Packet;
    /// One message: `bytes` is the whole message, `base` its offset in the
    /// outermost packet.
    fn message(&mut self, bytes: &[u8], base: usize) -> Result<Self::Packet, DecodeError>;
    /// A bundle of already built elements.
    fn bundle(&mut self, time: u64, items: Vec<Self::Packet>) -> Self::Packet;
}

/// The builder of [`decode`]: messages and bundles as [`OscPacket`]s.
struct OscPackets;

impl PacketBuilder for OscPackets {
    type Packet = OscPacket;

    fn message(&mut self, bytes: &[u8], base: usize) -> Result<OscPacket, DecodeError> {
        decode_message_at(bytes, base).map(OscPacket::Message)
    }

    fn bundle(&mut self, time: u64, packets: Vec<OscPacket>) -> OscPacket {
        OscPacket::Bundle(OscBundle { time, packets })
    }
}

/// Decodes one packet that fills `bytes` exactly into what `builder` makes
/// of its messages and bundles; fails where [`decode`] fails, with the same
/// error.
pub fn decode_into<B: PacketBuilder>(bytes: &[u8], builder: &mut B) -> Result<B::Packet, DecodeError> {
    decode_at(bytes, 0, 0, builder)
}

fn decode_at<B: PacketBuilder>(bytes: &[u8], base: usize, depth: usize, builder: &mut B) -> Result<B::Packet, DecodeError> {
    if bytes.is_empty() {
        return Err(DecodeError { offset: base, kind: DecodeErrorKind::Empty });
    }
    let mut r = Reader { buf: bytes, pos: 0, base };
    if bytes[0] == b'#' && is_bundle(bytes) {
        r.bundle(depth, builder)
    } else if bytes[0] == b'#' && bytes.len() < 8 && BUNDLE_TAG.starts_with(bytes) {
        Err(r.err_at(0, DecodeErrorKind::Truncated { what: "bundle header", needed: 16, available: bytes.len() }))
    } else {
        builder.message(bytes, base)
    }
}

/// How many elements a bundle's body (after its header) seems to hold, for
/// the capacity of their list: counted while the sizes look sound (the
/// decoding proper checks them).
fn bundle_elements_hint(body: &[u8]) -> usize {
    let (mut at, mut n) = (0usize, 0usize);
    while let Some(size) = body.get(at..at + 4) {
        let size = u32::from_be_bytes([size[0], size[1], size[2], size[3]]) as usize;
        if size == 0 || size > body.len() - at - 4 {
            break;
        }
        at += 4 + size;
        n += 1;
    }
    n
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Offset of `buf` within the outermost packet, for error reporting.
    base: usize,
}

impl<'a> Reader<'a> {
    fn err(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError { offset: self.base + self.pos, kind }
    }

    fn err_at(&self, pos: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError { offset: self.base + pos, kind }
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.err(DecodeErrorKind::Truncated { what, needed: n, available: self.remaining() }));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }

    /// Reads an OSC string; returns its bytes up to the first NUL.
    ///
    /// The string ends where scsynth's `OSCstrskip` ends it: after the first
    /// 4-byte word (counted from the string's start) whose last byte is NUL.
    /// Bytes between the first NUL and that point are padding and are ignored
    /// whatever they hold, as scsynth ignores them.
    fn raw_string(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let start = self.pos;
        let rest = &self.buf[start..];
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return Err(self.err(DecodeErrorKind::UnterminatedString));
        };
        let mut total = pad4(nul + 1);
        while total <= rest.len() && rest[total - 1] != 0 {
            total += 4;
        }
        if total > rest.len() {
            return Err(self.err_at(
                start + rest.len(),
                DecodeErrorKind::Truncated { what, needed: total - rest.len(), available: 0 },
            ));
        }
        self.pos = start + total;
        Ok(&rest[..nul])
    }

    fn string(&mut self, what: &'static str) -> Result<String, DecodeError> {
        let start = self.pos;
        let raw = self.raw_string(what)?;
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(self.err_at(start + e.valid_up_to(), DecodeErrorKind::InvalidUtf8)),
        }
    }

    fn bundle<B: PacketBuilder>(&mut self, depth: usize, builder: &mut B) -> Result<B::Packet, DecodeError> {
        if depth >= MAX_NESTING {
            return Err(self.err(DecodeErrorKind::TooDeep));
        }
        self.take(8, "bundle header")?;
        let time = self.u64("bundle time tag")?;
        let mut packets = Vec::with_capacity(bundle_elements_hint(&self.buf[self.pos..]));
        while self.remaining() > 0 {
            let size_at = self.pos;
            let size = self.u32("bundle element size")? as i32;
            if size < 0 {
                return Err(self.err_at(size_at, DecodeErrorKind::NegativeElementSize(size)));
            }
            if size == 0 {
                return Err(self.err_at(size_at, DecodeErrorKind::EmptyElement));
            }
            let size_u = size as usize;
            if size_u > self.remaining() {
                return Err(self.err_at(
                    size_at,
                    DecodeErrorKind::ElementPastEnd { size: size as i64, available: self.remaining() },
                ));
            }
            if size_u & 3 != 0 {
                return Err(self.err_at(size_at, DecodeErrorKind::ElementSizeNotAligned(size)));
            }
            let start = self.pos;
            let elem = &self.buf[start..start + size_u];
            packets.push(decode_at(elem, self.base + start, depth + 1, builder)?);
            self.pos += size_u;
        }
        Ok(builder.bundle(time, packets))
    }

    fn message(&mut self) -> Result<OscMessage, DecodeError> {
        if self.buf.is_empty() {
            return Err(self.err(DecodeErrorKind::Empty));
        }
        if self.buf.len() & 3 != 0 {
            return Err(self.err_at(0, DecodeErrorKind::Unaligned(self.buf.len())));
        }
        let address = if self.buf[0] == 0 {
            Address::Number(self.u32("command number")? as i32)
        } else {
            Address::Name(self.string("address")?)
        };
        if self.remaining() == 0 {
            // Pre-1.0 style message with no type tags and no arguments.
            return Ok(OscMessage { address, args: Vec::new() });
        }
        if self.buf[self.pos] != b',' {
            return Err(self.err(DecodeErrorKind::MissingTypeTags));
        }
        let tags_at = self.pos;
        let tags = self.raw_string("type tag string")?;
        let mut tag_iter = TagCursor { tags: &tags[1..], at: 0, base: tags_at + 1 };
        let args = self.args(&mut tag_iter, 0)?;
        if tag_iter.at != tag_iter.tags.len() {
            // A ']' with no matching '['.
            return Err(self.err_at(tag_iter.base + tag_iter.at, DecodeErrorKind::UnbalancedArray));
        }
        if self.remaining() != 0 {
            return Err(self.err(DecodeErrorKind::TrailingBytes(self.remaining())));
        }
        Ok(OscMessage { address, args })
    }

    fn args(&mut self, tags: &mut TagCursor<'_>, depth: usize) -> Result<Vec<OscArg>, DecodeError> {
        let mut args = Vec::new();
        while let Some(tag) = tags.peek() {
            let tag_pos = tags.base + tags.at;
            let arg = match tag {
                b']' => {
                    if depth == 0 {
                        return Err(self.err_at(tag_pos, DecodeErrorKind::UnbalancedArray));
                    }
                    return Ok(args);
                }
                b'[' => {
                    if depth + 1 >= MAX_NESTING {
                        return Err(self.err_at(tag_pos, DecodeErrorKind::TooDeep));
                    }
                    tags.at += 1;
                    let inner = self.args(tags, depth + 1)?;
                    if tags.peek() != Some(b']') {
                        return Err(self.err_at(tag_pos, DecodeErrorKind::UnbalancedArray));
                    }
                    OscArg::Array(inner)
                }
                b'i' => OscArg::Int(self.u32("int argument")? as i32),
                b'f' => OscArg::Float(f32::from_bits(self.u32("float argument")?)),
                b's' | b'S' => OscArg::Str(self.string("string argument")?),
                b'b' => {
                    let size_at = self.pos;
                    let size = self.u32("blob size")? as i32;
                    if size < 0 {
                        return Err(self.err_at(size_at, DecodeErrorKind::NegativeBlobSize(size)));
                    }
                    let n = size as usize;
                    // The padding bytes are skipped unread, as scsynth skips them
                    // (sclang leaves garbage there).
                    let padded = self.take(pad4(n), "blob data")?;
                    OscArg::Blob(padded[..n].to_vec())
                }
                b'h' => OscArg::Long(self.u64("int64 argument")? as i64),
                b'd' => OscArg::Double(f64::from_bits(self.u64("double argument")?)),
                b't' => OscArg::Time(self.u64("time tag argument")?),
                b'c' => {
                    let at = self.pos;
                    let v = self.u32("char argument")?;
                    match char::from_u32(v) {
                        Some(c) => OscArg::Char(c),
                        None => return Err(self.err_at(at, DecodeErrorKind::InvalidChar(v))),
                    }
                }
                b'r' => OscArg::Rgba(self.u32("colour argument")?),
                b'm' => {
                    let b = self.take(4, "MIDI argument")?;
                    OscArg::Midi([b[0], b[1], b[2], b[3]])
                }
                b'T' => OscArg::True,
                b'F' => OscArg::False,
                b'N' => OscArg::Nil,
                b'I' => OscArg::Inf,
                other => {
                    return Err(self.err_at(tag_pos, DecodeErrorKind::UnknownTypeTag(other as char)));
                }
            };
            tags.at += 1;
            args.push(arg);
        }
        if depth > 0 {
            return Err(self.err_at(tags.base + tags.at, DecodeErrorKind::UnbalancedArray));
        }
        Ok(args)
    }
}

struct TagCursor<'a> {
    tags: &'a [u8],
    at: usize,
    base: usize,
}

impl TagCursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.tags.get(self.at).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind_of_arg() -> Vec<OscArg> {
        vec![
            OscArg::Int(-7),
            OscArg::Float(0.5),
            OscArg::Str("hello".into()),
            OscArg::Blob(vec![1, 2, 3]),
            OscArg::Long(-1 << 40),
            OscArg::Double(std::f64::consts::PI),
            OscArg::Time(0x0102_0304_0506_0708),
            OscArg::Char('x'),
            OscArg::Rgba(0xff00_80ff),
            OscArg::Midi([0, 0x90, 60, 100]),
            OscArg::True,
            OscArg::False,
            OscArg::Nil,
            OscArg::Inf,
            OscArg::Array(vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Str("in".into())]), OscArg::Float(2.0)]),
            OscArg::Array(vec![]),
        ]
    }

    #[test]
    fn every_type_tag_survives_a_round_trip() {
        for arg in every_kind_of_arg() {
            let msg = OscMessage::new("/x", vec![arg.clone()]);
            let bytes = msg.encode();
            assert_eq!(bytes.len() % 4, 0);
            assert_eq!(decode(&bytes).unwrap(), OscPacket::Message(msg), "{arg:?}");
        }
        let all = OscMessage::new("/all", every_kind_of_arg());
        assert_eq!(decode(&all.encode()).unwrap(), OscPacket::Message(all));
    }

    #[test]
    fn spec_example_message_decodes() {
        // "/foo" ,iisff 1000 -1 "hello" 1.234 5.678 from the OSC 1.0 spec examples.
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"/foo\0\0\0\0");
        bytes.extend_from_slice(b",iisff\0\0");
        bytes.extend_from_slice(&[0x00, 0x00, 0x03, 0xe8]);
        bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        bytes.extend_from_slice(b"hello\0\0\0");
        bytes.extend_from_slice(&[0x3f, 0x9d, 0xf3, 0xb6]);
        bytes.extend_from_slice(&[0x40, 0xb5, 0xb2, 0x2d]);
        let p = decode(&bytes).unwrap();
        let OscPacket::Message(m) = p else { panic!("not a message") };
        assert_eq!(m.address, Address::Name("/foo".into()));
        assert_eq!(m.args[0], OscArg::Int(1000));
        assert_eq!(m.args[1], OscArg::Int(-1));
        assert_eq!(m.args[2], OscArg::Str("hello".into()));
        assert!((m.args[3].as_f32().unwrap() - 1.234).abs() < 1e-6);
        assert!((m.args[4].as_f32().unwrap() - 5.678).abs() < 1e-6);
        // Our encoder writes the same bytes.
        assert_eq!(m.encode(), bytes);
    }

    #[test]
    fn spec_example_oscillator_message_decodes() {
        // "/oscillator/4/frequency" ,f 440.0
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"/oscillator/4/frequency\0");
        bytes.extend_from_slice(b",f\0\0");
        bytes.extend_from_slice(&[0x43, 0xdc, 0x00, 0x00]);
        let OscPacket::Message(m) = decode(&bytes).unwrap() else { panic!() };
        assert_eq!(m.args, vec![OscArg::Float(440.0)]);
    }

    #[test]
    fn hand_written_bundle_with_nested_bundle_decodes() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"#bundle\0");
        bytes.extend_from_slice(&[0, 0, 0, 2, 0x80, 0, 0, 0]);
        // element 1: "/a" ,i 5
        bytes.extend_from_slice(&12u32.to_be_bytes());
        bytes.extend_from_slice(b"/a\0\0,i\0\0\0\0\0\x05");
        // element 2: bundle time 1 with "/b" and no tags
        bytes.extend_from_slice(&24u32.to_be_bytes());
        bytes.extend_from_slice(b"#bundle\0\0\0\0\0\0\0\0\x01");
        bytes.extend_from_slice(&4u32.to_be_bytes());
        bytes.extend_from_slice(b"/b\0\0");
        let OscPacket::Bundle(b) = decode(&bytes).unwrap() else { panic!() };
        assert_eq!(b.time, (2u64 << 32) | 0x8000_0000);
        assert_eq!(b.packets.len(), 2);
        assert_eq!(b.packets[0], OscPacket::Message(OscMessage::new("/a", vec![OscArg::Int(5)])));
        let OscPacket::Bundle(inner) = &b.packets[1] else { panic!() };
        assert_eq!(inner.time, 1);
        assert_eq!(inner.packets, vec![OscPacket::Message(OscMessage::new("/b", vec![]))]);
        assert_eq!(encode(&OscPacket::Bundle(b)).len(), bytes.len() + 4); // we always add ","
    }

    #[test]
    fn integer_address_is_recognised_by_its_leading_zero_byte() {
        let bytes = [0, 0, 0, 9, b',', b'i', 0, 0, 0, 0, 0, 1];
        let OscPacket::Message(m) = decode(&bytes).unwrap() else { panic!() };
        assert_eq!(m.address, Address::Number(9));
        assert_eq!(m.encode(), bytes);
    }

    #[test]
    fn untyped_message_without_arguments_is_accepted() {
        let OscPacket::Message(m) = decode(b"/status\0").unwrap() else { panic!() };
        assert_eq!(m.address, Address::Name("/status".into()));
        assert!(m.args.is_empty());
    }

    #[test]
    fn untyped_arguments_are_reported() {
        let e = decode(b"/n_free\0\0\0\0\x05").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::MissingTypeTags);
        assert_eq!(e.offset, 8);
    }

    #[test]
    fn every_truncation_of_a_message_errors_cleanly() {
        let msg = OscMessage::new("/all", every_kind_of_arg());
        let bytes = msg.encode();
        for n in 0..bytes.len() {
            match decode(&bytes[..n]) {
                Err(_) => {}
                // The bare address is itself a valid (untyped, argument-less) message.
                Ok(OscPacket::Message(m)) if n == 8 && m.args.is_empty() => {}
                Ok(p) => panic!("prefix of {n} bytes decoded as {p:?}"),
            }
        }
    }

    #[test]
    fn every_truncation_of_a_bundle_errors_or_drops_whole_elements() {
        let bundle = OscBundle::new(
            5,
            vec![
                OscMessage::new("/one", vec![OscArg::Int(1), OscArg::Blob(vec![9; 5])]).into(),
                OscBundle::new(6, vec![OscMessage::new("/two", vec![OscArg::Str("s".into())]).into()]).into(),
            ],
        );
        let bytes = encode(&bundle.clone().into());
        for n in 0..bytes.len() {
            // A prefix ending exactly on an element boundary is a valid shorter bundle.
            if let Ok(OscPacket::Bundle(b)) = decode(&bytes[..n]) {
                assert!(b.packets.len() < 2, "prefix of {n} bytes decoded whole");
            }
        }
        assert_eq!(decode(&bytes).unwrap(), OscPacket::Bundle(bundle));
    }

    #[test]
    fn bundle_element_size_past_end_names_its_offset() {
        let mut bytes = OscBundle::new(1, vec![OscMessage::new("/a", vec![]).into()]).encode();
        bytes[16..20].copy_from_slice(&1000u32.to_be_bytes());
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.offset, 16);
        assert!(matches!(e.kind, DecodeErrorKind::ElementPastEnd { size: 1000, .. }));
    }

    #[test]
    fn huge_blob_size_is_rejected_without_allocating() {
        let mut bytes = b"/d_recv\0,b\0\0".to_vec();
        bytes.extend_from_slice(&0x7fff_fff0u32.to_be_bytes());
        let e = decode(&bytes).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }));
        assert_eq!(e.offset, 16);
    }

    #[test]
    fn garbage_padding_after_strings_and_blobs_is_ignored_as_scsynth_does() {
        // sclang's blob writer zeroes the wrong word, leaving garbage after
        // the blob's bytes; scsynth skips padding unread.
        let mut bytes = b"/d_recv\0,bs\0".to_vec();
        bytes.extend_from_slice(&5u32.to_be_bytes());
        bytes.extend_from_slice(b"SCgf\x01\xaa\xbb\xcc");
        bytes.extend_from_slice(b"ab\0x"); // 'x' ends the word: the string runs on
        bytes.extend_from_slice(b"yz\0\0");
        let OscPacket::Message(m) = decode(&bytes).unwrap() else { panic!("not a message") };
        assert_eq!(m.args, vec![OscArg::Blob(b"SCgf\x01".to_vec()), OscArg::Str("ab".into())]);

        // Garbage before the word's last byte: the string ends with that word.
        let OscPacket::Message(m) = decode(b"/ab\0,si\0a\0x\0\0\0\0\x07").unwrap() else { panic!() };
        assert_eq!(m.args, vec![OscArg::Str("a".into()), OscArg::Int(7)]);
        assert_eq!(m.address, Address::Name("/ab".into()));
    }

    #[test]
    fn string_whose_padding_never_ends_in_nul_is_truncated() {
        // ",i\0x": the tag word's last byte is not NUL, so (as in scsynth) the
        // type tags run on into the next word, whose last byte is 1 either,
        // and then past the end of the packet.
        let e = decode(b"/ab\0,i\0x\0\0\0\x01").unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { what: "type tag string", .. }), "{e}");
        assert_eq!(e.offset, 12);
    }

    #[test]
    fn unknown_type_tag_is_named() {
        let e = decode(b"/a\0\0,q\0\0").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::UnknownTypeTag('q'));
        assert_eq!(e.offset, 5);
    }

    #[test]
    fn unbalanced_brackets_are_rejected() {
        assert_eq!(decode(b"/a\0\0,[i\0\0\0\0\x01").unwrap_err().kind, DecodeErrorKind::UnbalancedArray);
        assert_eq!(decode(b"/a\0\0,]\0\0").unwrap_err().kind, DecodeErrorKind::UnbalancedArray);
    }

    #[test]
    fn deeply_nested_input_is_refused_not_overflowed() {
        let mut tags = String::from(",");
        tags.push_str(&"[".repeat(1000));
        tags.push_str(&"]".repeat(1000));
        let mut bytes = Vec::new();
        write_string(&mut bytes, "/a");
        write_string(&mut bytes, &tags);
        assert_eq!(decode(&bytes).unwrap_err().kind, DecodeErrorKind::TooDeep);

        let mut b = OscPacket::Message(OscMessage::new("/x", vec![]));
        for _ in 0..100 {
            b = OscPacket::Bundle(OscBundle::new(1, vec![b]));
        }
        assert_eq!(decode(&encode(&b)).unwrap_err().kind, DecodeErrorKind::TooDeep);
    }

    #[test]
    fn random_bytes_never_panic() {
        // xorshift so the test is deterministic and needs no crate.
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let seeds = [
            OscMessage::new("/all", every_kind_of_arg()).encode(),
            OscBundle::new(3, vec![OscMessage::new("/s_new", vec!["x".into(), 1.into()]).into()]).encode(),
        ];
        for round in 0..20_000 {
            let mut bytes = if round % 2 == 0 {
                let n = (next() % 64) as usize;
                (0..n).map(|_| next() as u8).collect::<Vec<u8>>()
            } else {
                seeds[round % 4 / 2].clone()
            };
            if !bytes.is_empty() {
                for _ in 0..(next() % 4) {
                    let i = (next() as usize) % bytes.len();
                    bytes[i] = next() as u8;
                }
            }
            let _ = decode(&bytes);
        }
    }

    #[test]
    fn accessors_convert_like_scsynth() {
        assert_eq!(OscArg::Float(3.9).as_i32(), Some(3));
        assert_eq!(OscArg::Float(-3.9).as_i32(), Some(-3));
        assert_eq!(OscArg::Int(4).as_f32(), Some(4.0));
        assert_eq!(OscArg::Str("a".into()).as_i32(), None);
        assert_eq!(OscArg::Str("a".into()).as_str(), Some("a"));
        assert_eq!(OscArg::Int(1).as_str(), None);
    }
}
