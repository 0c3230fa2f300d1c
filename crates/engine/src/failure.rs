//! Why a command failed, as values: the audio side hands these on, and the
//! control side (or `offline`) turns them into the console line and the
//! `/fail` reply. Each reason's text (its `Display`) is the `/fail`
//! message, word for word what clients and the compatibility tests read.

use crate::buffer_cmds::BufFail;
use crate::limits::MAX_SATELLITE_NESTING;
use crate::plugin_hooks::PluginFailure;
use magnetar_protocol::printed::terminal_safe;
use magnetar_protocol::Reply;
use std::borrow::Cow;

/// What went wrong with a command the engine performs.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FailReason {
    #[error("Command not found")]
    CommandNotFound,
    /// Arguments the command's decoding refused (its text).
    #[error("{0}")]
    Rejected(String),
    /// A stage-2 command reached the audio side (a bug of the caller).
    #[error("is performed by the control side, not the audio side")]
    NotOnAudioSide,
    #[error("Node {0} not found")]
    NodeNotFound(i32),
    /// `/n_order` found none of the nodes it was to move.
    #[error("Node not found")]
    NoNodeFound,
    #[error("Group {0} not found")]
    GroupNotFound(i32),
    /// A node placed before or after the root group would belong to no
    /// group: counted, never run, never listed and never freed (scsynth
    /// follows the root's missing parent and crashes).
    #[error("Can't place a node before or after the root group")]
    RootHasNoSiblings,
    #[error("Can't replace the root group")]
    ReplaceRoot,
    #[error("the root group can't have satellites")]
    RootSatellite,
    #[error("satellites nest at most {MAX_SATELLITE_NESTING} deep")]
    SatellitesTooDeep,
    #[error("add action {0} is not one of 0-4 (or 5-6 for satellites)")]
    AddAction(i32),
    /// `/n_order` takes the first four add actions only.
    #[error("add action {0} is not one of 0-3")]
    OrderAction(i32),
    #[error("Node id {0} is reserved")]
    ReservedNodeId(i32),
    #[error("duplicate node ID")]
    DuplicateNodeId,
    #[error("too many nodes")]
    TooManyNodes,
    /// `/s_new` (and `/d_free` without a name).
    #[error("SynthDef not found")]
    SynthDefNotFound,
    /// `/d_free` of a name no def has.
    #[error("SynthDef {0} not found")]
    NamedSynthDefNotFound(String),
    #[error("out of real time memory")]
    OutOfRealTimeMemory,
    /// A control bus index outside the buses.
    #[error("index out of range")]
    IndexOutOfRange,
    /// `/s_get`, `/s_getn` of a group.
    #[error("Node {0} is a group, not a synth")]
    IsAGroup(i32),
    /// `/u_cmd` of a group.
    #[error("Node {0} is not a synth")]
    NotASynth(i32),
    #[error("Unit index {0} out of range")]
    UnitIndex(i32),
    /// scsynth fails it too: the units do not exist before the synth's
    /// first block.
    #[error("the synth has not computed its first block yet")]
    NotBuilt,
    #[error("unit {unit} has no command {name}")]
    NoUnitCommand { unit: i32, name: String },
    /// What the plugin host said about a plugin's command.
    #[error(transparent)]
    Plugin(#[from] PluginFailure),
    /// A buffer command's failure (with the buffer number scsynth sends).
    #[error(transparent)]
    Buffer(#[from] BufFail),
}

/// A command that did not succeed: what `/fail` says, and the console line.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandFailure {
    /// The command's name (or the address that named no command).
    pub command: Cow<'static, str>,
    pub reason: FailReason,
}

impl CommandFailure {
    pub fn new(command: impl Into<Cow<'static, str>>, reason: impl Into<FailReason>) -> CommandFailure {
        CommandFailure { command: command.into(), reason: reason.into() }
    }

    /// The `/fail` message.
    pub fn message(&self) -> String {
        self.reason.to_string()
    }

    /// The integer arguments `/fail` carries after the message (the buffer
    /// number, where scsynth sends one).
    pub fn args(&self) -> Vec<i32> {
        match &self.reason {
            FailReason::Buffer(f) => f.buffer.into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The `/fail` reply.
    pub fn to_reply(&self) -> Reply {
        Reply::Fail { command: self.command.clone(), message: self.message(), args: self.args() }
    }
}

impl std::fmt::Display for CommandFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let command = terminal_safe(&self.command);
        let text = self.message();
        let message = terminal_safe(&text);
        if text == "Command not found" {
            write!(f, "FAILURE IN SERVER: {command} {message}")
        } else {
            write!(f, "FAILURE IN SERVER {command} {message}")
        }
    }
}
