//! Why a SynthDef file was rejected, with the def and the byte offset.

use std::fmt;

/// Names the def an error belongs to, once its name has been read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefLabel(pub Option<String>);

impl fmt::Display for DefLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(name) => write!(f, "synthdef {name:?}"),
            None => f.write_str("synthdef file"),
        }
    }
}

/// A SynthDef file that cannot be used. `offset` is the byte position in the
/// file (or message) where the offending item starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SynthDefError {
    #[error("not a SynthDef file: it starts with {found:?} instead of \"SCgf\" (byte {offset})")]
    BadMagic { found: String, offset: usize },

    #[error(
        "SynthDef file version {version} is not supported; versions 0, 1 and 2 are (byte {offset})"
    )]
    UnsupportedVersion { version: i32, offset: usize },

    #[error("{def}: the data ends inside {what}: {needed} bytes needed, {available} left (byte {offset})")]
    Truncated {
        def: DefLabel,
        what: String,
        needed: u64,
        available: usize,
        offset: usize,
    },

    #[error("{def}: {what} is negative ({value}) (byte {offset})")]
    NegativeCount {
        def: DefLabel,
        what: String,
        value: i32,
        offset: usize,
    },

    #[error("{def}: {what} has unknown rate {rate}; rates are 0 to 3 (byte {offset})")]
    UnknownRate {
        def: DefLabel,
        what: String,
        rate: u8,
        offset: usize,
    },

    #[error("{def}: {what} is {len} bytes long; at most {max} are allowed (byte {offset})")]
    NameTooLong {
        def: DefLabel,
        what: String,
        len: usize,
        max: usize,
        offset: usize,
    },

    #[error("{def}: {what} is not valid UTF-8 (byte {offset})")]
    NameNotUtf8 {
        def: DefLabel,
        what: String,
        offset: usize,
    },

    #[error("{def}: control {name:?} points at parameter {index}, but the def has {count} parameters (byte {offset})")]
    ParamIndexOutOfRange {
        def: DefLabel,
        name: String,
        index: i32,
        count: u32,
        offset: usize,
    },

    #[error("{def}: input {input} of unit {unit} ({ugen}) refers to constant {constant}, but the def has {count} constants (byte {offset})")]
    MissingConstant {
        def: DefLabel,
        unit: u32,
        ugen: String,
        input: u32,
        constant: i32,
        count: u32,
        offset: usize,
    },

    #[error("{def}: input {input} of unit {unit} ({ugen}) refers to unit {from}, which does not come before it (byte {offset})")]
    UnitNotBefore {
        def: DefLabel,
        unit: u32,
        ugen: String,
        input: u32,
        from: i32,
        offset: usize,
    },

    #[error("{def}: input {input} of unit {unit} ({ugen}) refers to output {output} of unit {from} ({from_ugen}), which has {count} outputs (byte {offset})")]
    MissingOutput {
        def: DefLabel,
        unit: u32,
        ugen: String,
        input: u32,
        from: u32,
        from_ugen: String,
        output: i32,
        count: u32,
        offset: usize,
    },
}

impl SynthDefError {
    /// The byte offset in the parsed data where the problem starts.
    pub fn offset(&self) -> usize {
        match self {
            SynthDefError::BadMagic { offset, .. }
            | SynthDefError::UnsupportedVersion { offset, .. }
            | SynthDefError::Truncated { offset, .. }
            | SynthDefError::NegativeCount { offset, .. }
            | SynthDefError::UnknownRate { offset, .. }
            | SynthDefError::NameTooLong { offset, .. }
            | SynthDefError::NameNotUtf8 { offset, .. }
            | SynthDefError::ParamIndexOutOfRange { offset, .. }
            | SynthDefError::MissingConstant { offset, .. }
            | SynthDefError::UnitNotBefore { offset, .. }
            | SynthDefError::MissingOutput { offset, .. } => *offset,
        }
    }

    /// The name of the def being read, if the error came after its name.
    pub fn def_name(&self) -> Option<&str> {
        match self {
            SynthDefError::BadMagic { .. } | SynthDefError::UnsupportedVersion { .. } => None,
            SynthDefError::Truncated { def, .. }
            | SynthDefError::NegativeCount { def, .. }
            | SynthDefError::UnknownRate { def, .. }
            | SynthDefError::NameTooLong { def, .. }
            | SynthDefError::NameNotUtf8 { def, .. }
            | SynthDefError::ParamIndexOutOfRange { def, .. }
            | SynthDefError::MissingConstant { def, .. }
            | SynthDefError::UnitNotBefore { def, .. }
            | SynthDefError::MissingOutput { def, .. } => def.0.as_deref(),
        }
    }
}
