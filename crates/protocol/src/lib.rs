//! magnetar protocol: the OSC wire format, scsynth's command set as typed
//! values, packets decoded into those commands for the engine ([`prepared`]),
//! the replies the server sends, and the non-real-time score format.
//!
//! ```
//! use magnetar_protocol::{decode, parse_command, Command, OscArg, OscMessage, OscPacket};
//!
//! let bytes = OscMessage::new("/n_free", vec![OscArg::Int(1000), OscArg::Int(1001)]).encode();
//! let OscPacket::Message(msg) = decode(&bytes)? else { unreachable!() };
//! assert_eq!(parse_command(&msg)?, Command::NFree { nodes: vec![1000.into(), 1001.into()] });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod commands;
pub mod control_sets;
pub mod sc_args;
pub mod framing;
pub mod kind;
pub mod osc;
pub mod prepared;
pub mod printed;
pub mod replies;
pub mod score;
pub mod wire;

pub use commands::{
    command_name, command_number, parse_command, AddAction, BusMap, BusMapRange, BusRanges, Command, CommandError,
    Completion, ControlFill, ControlId, ControlRef, ControlSets, ControlValue, IndexValues, NewGroup, NodeRef, Number, ValueFill,
};
pub use kind::CommandKind;
pub use sc_args::ArgBlock;
pub use osc::{decode, encode, Address, DecodeError, DecodeErrorKind, OscArg, OscBundle, OscMessage, OscPacket};
/// Bundles nested in bundles at most (deeper is a decode error).
pub use osc::MAX_NESTING as MAX_OSC_NESTING;
pub use prepared::{Operand, Prepared, PreparedMessage};
pub use replies::{BufferInfo, NodeState, QueryTreeNode, QueryTreeReply, Reply, StatusExtension};
pub use score::{ScoreError, ScoreReader, ScoreWriter};
pub use wire::decode_command;
