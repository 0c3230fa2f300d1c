//! Packets as the engine performs them: every message decoded once into
//! its typed command, when the packet is decoded (on the control thread in
//! real time, as the score is read offline), so that performing it looks no
//! name up and reads no argument. Arguments are read as scsynth reads them
//! (`magnetar_protocol::commands`); a command whose arguments scsynth
//! refuses keeps its `/fail` text, answered in its place among the others.
//! What a performed message owns goes back to be freed where it was made.

use magnetar_protocol::commands::{parse_command, Command, CommandError};
use magnetar_protocol::osc::{OscBundle, OscMessage, OscPacket};
use magnetar_protocol::CommandKind;

/// One message, the command it names (`kind` `None`: a command the server
/// does not know, which fails with "Command not found" when performed, in
/// its place among the others) and its typed decoding.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedMessage {
    pub kind: Option<CommandKind>,
    pub cmd: Result<Command, CommandError>,
    pub msg: OscMessage,
}

impl PreparedMessage {
    pub fn new(msg: OscMessage) -> PreparedMessage {
        PreparedMessage { kind: CommandKind::of(&msg.address), cmd: parse_command(&msg), msg }
    }

    /// The command's name, as `/fail` and `/done` give it.
    pub fn name(&self) -> &str {
        match self.kind {
            Some(k) => k.name(),
            None => self.msg.address.as_name().unwrap_or(""),
        }
    }
}

/// A decoded packet with its commands found.
#[derive(Clone, Debug, PartialEq)]
pub enum Prepared {
    Message(PreparedMessage),
    /// A bundle: its OSC time tag and its elements, in order.
    Bundle { time: u64, items: Vec<Prepared> },
}

impl Prepared {
    pub fn new(packet: OscPacket) -> Prepared {
        match packet {
            OscPacket::Message(m) => Prepared::Message(PreparedMessage::new(m)),
            OscPacket::Bundle(b) => Prepared::bundle(b),
        }
    }

    pub fn bundle(b: OscBundle) -> Prepared {
        Prepared::Bundle { time: b.time, items: b.packets.into_iter().map(Prepared::new).collect() }
    }

    /// Decodes packet bytes (a completion message, say) and finds their commands.
    pub fn decode(bytes: &[u8]) -> Result<Prepared, magnetar_protocol::osc::DecodeError> {
        magnetar_protocol::osc::decode(bytes).map(Prepared::new)
    }
}
