//! Errors returned by the control-side calls (construction, root registration).

use thiserror::Error;

/// What went wrong when building a collector or registering roots.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GcError {
    /// A configuration value is out of range; the message names the field.
    #[error("invalid collector configuration: {0}")]
    InvalidConfig(&'static str),
    /// The system allocator refused one of the start-up allocations.
    #[error("could not reserve {bytes} bytes for the {what}")]
    OutOfMemory { what: &'static str, bytes: usize },
    /// A helper thread could not be started.
    #[error("could not start the {0} thread")]
    ThreadSpawn(&'static str),
    /// All root-region slots are taken, or the roots would not fit the roots snapshot.
    #[error("root regions exceed the configured limit ({limit} bytes or {max_regions} regions)")]
    TooManyRoots { limit: usize, max_regions: usize },
    /// A root region was not word aligned or had a null start.
    #[error("root region must be non-null and word aligned")]
    BadRootRegion,
}
