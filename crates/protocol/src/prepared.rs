//! Packets as the server performs them: every message decoded once into
//! its typed command, when the packet is decoded (on the control thread in
//! real time, as the score is read offline), so that performing it looks no
//! name up and reads no argument. Arguments are read as scsynth reads them
//! ([`crate::commands`]); a command whose arguments scsynth refuses keeps
//! its `/fail` text, answered in its place among the others. The OSC
//! message itself stays where it was decoded: what the engine needs of it
//! (the name of a command not found, say) is in the decoding, so the engine
//! never sees an OSC type.

use crate::commands::{parse_command, Command, CommandError};
use crate::kind::CommandKind;
use crate::osc::{self, DecodeError, OscBundle, OscMessage, OscPacket, PacketBuilder};
use crate::wire::decode_command;

/// What the audio side needs to know of a message's arguments before it
/// hands the message on, read when the message is prepared (on the control
/// thread in real time), so that the audio side reads no argument itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Operand {
    #[default]
    None,
    /// The buffer an asynchronous buffer command works on, from its typed
    /// decoding (a first argument that is not a number reads as 0, as in
    /// scsynth); absent when negative or when the arguments were refused
    /// (the command then fails without touching a buffer).
    Buffer(usize),
}

impl Operand {
    fn of(kind: Option<CommandKind>, cmd: &Result<Command, CommandError>) -> Operand {
        match kind {
            Some(k) if k.runs_in_stage2() && k.is_buffer() => {
                cmd.as_ref().ok().and_then(stage2_buffer).and_then(|b| usize::try_from(b).ok()).map_or(Operand::None, Operand::Buffer)
            }
            _ => Operand::None,
        }
    }

    /// The buffer of an asynchronous buffer command.
    pub fn buffer(self) -> Option<usize> {
        match self {
            Operand::Buffer(b) => Some(b),
            _ => None,
        }
    }
}

/// The buffer a stage-2 buffer command works on, as its decoding read it
/// (the real-time server's control side uses it to bring the buffer's
/// contents to the command).
pub fn stage2_buffer(cmd: &Command) -> Option<i32> {
    use Command as C;
    match cmd {
        C::BAlloc { buffer, .. }
        | C::BAllocRead { buffer, .. }
        | C::BAllocReadChannel { buffer, .. }
        | C::BRead { buffer, .. }
        | C::BReadChannel { buffer, .. }
        | C::BWrite { buffer, .. }
        | C::BFree { buffer, .. }
        | C::BClose { buffer, .. }
        | C::BGen { buffer, .. }
        | C::BZero { buffer, .. } => Some(*buffer),
        _ => None,
    }
}

/// One message, the command it names (`kind` `None`: a command the server
/// does not know, which fails with "Command not found" when performed, in
/// its place among the others) and its typed decoding, which is all the
/// audio side receives of it.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedMessage {
    pub kind: Option<CommandKind>,
    /// The command, or why it is not one (for a command not found, the
    /// address as the message gave it).
    pub cmd: Result<Command, CommandError>,
    /// What the audio side needs from the arguments, already read.
    pub operand: Operand,
}

impl PreparedMessage {
    pub fn new(msg: &OscMessage) -> PreparedMessage {
        let kind = CommandKind::of(&msg.address);
        let cmd = parse_command(msg);
        let operand = Operand::of(kind, &cmd);
        PreparedMessage { kind, cmd, operand }
    }

    /// The command's name, as `/fail` and `/done` give it.
    pub fn name(&self) -> &str {
        match (self.kind, &self.cmd) {
            (Some(k), _) => k.name(),
            (None, Err(e)) => e.command(),
            (None, Ok(c)) => c.name(),
        }
    }
}

/// A decoded packet with its commands found.
// A message holds its common commands' lists in place; boxing it would
// allocate once per message.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Prepared {
    Message(PreparedMessage),
    /// A bundle: its OSC time tag and its elements, in order.
    Bundle { time: u64, items: Vec<Prepared> },
}

impl Prepared {
    /// Calls `f` on each message in order: the message itself, or a
    /// bundle's elements, nested bundles too.
    pub fn for_each_message(&self, f: &mut impl FnMut(&PreparedMessage)) {
        match self {
            Prepared::Message(m) => f(m),
            Prepared::Bundle { items, .. } => items.iter().for_each(|p| p.for_each_message(f)),
        }
    }

    /// Prepares a packet already decoded (tests, tools, fuzzing).
    pub fn new(packet: &OscPacket) -> Prepared {
        match packet {
            OscPacket::Message(m) => Prepared::Message(PreparedMessage::new(m)),
            OscPacket::Bundle(b) => Prepared::bundle(b),
        }
    }

    pub fn bundle(b: &OscBundle) -> Prepared {
        Prepared::Bundle { time: b.time, items: b.packets.iter().map(Prepared::new).collect() }
    }

    /// Decodes packet bytes (a client's packet, a score's bundle, a
    /// completion message) and finds their commands: the common commands
    /// are read straight from the bytes, the others through an
    /// `OscMessage`; either way the packet decodes, or fails, as
    /// [`osc::decode`] decodes it.
    pub fn decode(bytes: &[u8]) -> Result<Prepared, DecodeError> {
        osc::decode_into(bytes, &mut Preparing)
    }
}

/// The builder that prepares a packet's messages as it is decoded.
struct Preparing;

impl PacketBuilder for Preparing {
    type Packet = Prepared;

    fn message(&mut self, bytes: &[u8], base: usize) -> Result<Prepared, DecodeError> {
        if let Some((kind, cmd)) = decode_command(bytes) {
            let operand = Operand::of(Some(kind), &cmd);
            return Ok(Prepared::Message(PreparedMessage { kind: Some(kind), cmd, operand }));
        }
        osc::decode_message_at(bytes, base).map(|m| Prepared::Message(PreparedMessage::new(&m)))
    }

    fn bundle(&mut self, time: u64, items: Vec<Prepared>) -> Prepared {
        Prepared::Bundle { time, items }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osc::OscArg;

    fn operand(address: &str, args: Vec<OscArg>) -> Operand {
        PreparedMessage::new(&OscMessage::new(address, args)).operand
    }

    #[test]
    fn an_asynchronous_buffer_command_carries_its_buffer_read_as_the_command_reads_it() {
        assert_eq!(operand("/b_read", vec![OscArg::Int(3), OscArg::Str("a.wav".into())]), Operand::Buffer(3));
        assert_eq!(operand("/b_gen", vec![OscArg::Float(2.0), OscArg::Str("sine1".into())]), Operand::Buffer(2));
        // Not a number: buffer 0, as scsynth reads it.
        assert_eq!(operand("/b_zero", vec![OscArg::Str("x".into())]), Operand::Buffer(0));
        assert_eq!(operand("/b_free", vec![OscArg::Int(-1)]), Operand::None);
        // Refused (the path is not a string): the command fails touching no buffer.
        assert_eq!(operand("/b_read", vec![OscArg::Int(3), OscArg::Int(5)]), Operand::None);
        // Performed in place: the audio side reads it itself, as the command.
        assert_eq!(operand("/b_set", vec![OscArg::Int(3)]), Operand::None);
    }

    fn cmd(address: &str, args: Vec<OscArg>) -> Command {
        PreparedMessage::new(&OscMessage::new(address, args)).cmd.unwrap()
    }

    #[test]
    fn disk_stats_are_reset_only_when_asked_with_one() {
        let reset = |args| matches!(cmd("/magnetar_diskStats", args), Command::MagnetarDiskStats { reset: true });
        assert!(reset(vec![OscArg::Int(1)]));
        assert!(!reset(vec![OscArg::Int(2)]));
        assert!(!reset(vec![]));
    }

    #[test]
    fn a_command_not_found_keeps_its_name_for_the_failure() {
        let m = PreparedMessage::new(&OscMessage::new("/no_such_command", vec![OscArg::Int(1)]));
        assert_eq!((m.kind, m.name()), (None, "/no_such_command"));
    }

    #[test]
    fn a_packet_prepares_the_same_from_its_bytes_as_from_its_decoding() {
        let bundle = OscPacket::Bundle(OscBundle {
            time: 7,
            packets: vec![
                OscPacket::Message(OscMessage::new("/n_set", vec![OscArg::Int(1000), OscArg::Str("freq".into()), OscArg::Float(440.0)])),
                OscPacket::Message(OscMessage::new("/b_zero", vec![OscArg::Int(2)])),
                OscPacket::Message(OscMessage::new("/no_such_command", vec![])),
            ],
        });
        assert_eq!(Prepared::decode(&bundle.encode()).unwrap(), Prepared::new(&bundle));
    }
}
