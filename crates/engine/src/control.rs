//! The control side of the engine: everything that may allocate or block
//! before a command's result reaches the audio side. It owns the unit
//! registry and the SynthDef compiler, reads SynthDef files, and performs
//! the file-backed and preparing buffer commands (`/b_alloc*`, `/b_read*`,
//! `/b_write`, `/b_gen`, `/b_zero`, `/b_close`, `/b_free`: scsynth's
//! stage 2) on a world of its own choosing: the real-time server's mirror
//! of the audio side's buffers, or the engine's own world when both roles
//! run in step (`offline`).
//!
//! The audio side ([`crate::Engine`]) has none of this: it renders blocks
//! and installs what the control side prepared, so a file read or a def
//! compilation cannot be reached from it.

use crate::buffer_cmds::{BufDone, BufFail, BufferCommands, PathRefused};
use crate::engine::EngineOptions;
use crate::graph_def::{DefError, GraphDef};
use magnetar_protocol::commands::{Command, CommandError};
use magnetar_protocol::CommandKind;
use magnetar_ugens::{Registry, World, MAX_LANES};
use std::path::PathBuf;
use std::sync::Arc;

/// Why `/d_recv`, `/d_load` or `/d_loadDir` left a file or a def out; the
/// text is the `/fail` message's (or its part, see [`DefLoadErrors`]).
#[derive(Debug, thiserror::Error)]
pub enum DefLoadError {
    #[error("wrong argument type: /d_recv needs a blob of SynthDef data")]
    NotABlob,
    #[error("wrong argument type: the path must be a string")]
    NotAPath,
    /// Outside the directory `-P` allows.
    #[error(transparent)]
    Refused(#[from] PathRefused),
    /// `/d_load`'s pattern matched no file.
    #[error("no SynthDef file matches '{}'", .0.display())]
    NoMatch(PathBuf),
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    /// A file (or `/d_recv`'s data) that does not parse.
    #[error("{origin}: {error}")]
    File { origin: String, error: magnetar_synthdef::SynthDefError },
    /// A def that does not compile.
    #[error(transparent)]
    Def(#[from] DefError),
}

/// Every reason a load left something out, in order: one `/fail`, its
/// message the reasons joined by `; `.
#[derive(Debug)]
pub struct DefLoadErrors(pub Vec<DefLoadError>);

impl std::fmt::Display for DefLoadErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DefLoadErrors {}

/// What `/d_recv`, `/d_load` or `/d_loadDir` prepared for the audio side.
pub struct LoadedDefs {
    /// The defs compiled, to install at a block start.
    pub defs: Vec<Arc<GraphDef>>,
    /// Larger scratch areas (one synth's audio wires, and the lanes of
    /// synths run side by side) when a def needs more than the audio side
    /// has; swapped in before the defs are installed.
    pub scratch: Option<(Vec<f32>, Vec<f32>)>,
    /// Why files or defs were not loaded (every reason).
    pub result: Result<(), DefLoadErrors>,
    /// The command's completion message, as received.
    pub completion: Option<Vec<u8>>,
}

/// The control side's engine (see the module's documentation).
pub struct ControlEngine {
    registry: Registry,
    block_size: usize,
    /// `-w`: defs needing more interconnect buffers are refused.
    max_wire_bufs: usize,
    /// Threads that run synths side by side at once (`-T`): each has its
    /// own share of the lane scratch.
    lane_threads: usize,
    /// The scratch the audio side has, or will have once the defs already
    /// prepared are installed.
    scratch_len: usize,
    /// The buffer commands and the files they leave open.
    pub buffers: BufferCommands,
}

impl ControlEngine {
    /// The control side of an engine booted with `options`; `buffers` keeps
    /// the open files (and the `-P` restriction).
    pub fn new(options: &EngineOptions, buffers: BufferCommands) -> ControlEngine {
        ControlEngine {
            registry: Registry::with_all(),
            block_size: options.block_size,
            max_wire_bufs: options.num_wire_bufs,
            lane_threads: options.threads.max(1),
            scratch_len: 0,
            buffers,
        }
    }

    /// Parses a SynthDef file and compiles every def in it; a def that uses
    /// an unknown UGen, or needs more than `-w` wire buffers, fails alone.
    pub fn compile(&self, bytes: &[u8]) -> Result<Vec<Result<GraphDef, DefError>>, magnetar_synthdef::SynthDefError> {
        compile_synthdefs_limited(bytes, &self.registry, self.block_size, self.max_wire_bufs)
    }

    /// New scratch areas when `defs` need more than the audio side has.
    pub fn grow_scratch(&mut self, defs: &[Arc<GraphDef>]) -> Option<(Vec<f32>, Vec<f32>)> {
        let need = defs.iter().map(|d| d.scratch_len).max().unwrap_or(0);
        (need > self.scratch_len).then(|| {
            self.scratch_len = need;
            (vec![0.0; need], vec![0.0; need * MAX_LANES * self.lane_threads])
        })
    }

    /// Stage 2 of `/d_recv`, `/d_load` and `/d_loadDir` (`kind`), decoded
    /// as `cmd`: reads the files (under `-P`), compiles their defs, and
    /// sizes the scratch for them.
    pub fn load_defs(&mut self, kind: CommandKind, cmd: &Result<Command, CommandError>) -> LoadedDefs {
        let mut sources: Vec<(String, Vec<u8>)> = Vec::new();
        let mut errors = Vec::new();
        let mut completion = None;
        match cmd {
            Ok(Command::DRecv { data, completion: c }) => {
                sources.push(("/d_recv".into(), data.clone()));
                completion.clone_from(c);
            }
            Ok(Command::DLoad { path, completion: c }) | Ok(Command::DLoadDir { path, completion: c }) => {
                let (files, refused) = crate::commands::def_files(&self.buffers, path, kind == CommandKind::DLoadDir);
                errors.extend(refused);
                for f in files {
                    match std::fs::read(&f) {
                        Ok(bytes) => sources.push((f.display().to_string(), bytes)),
                        Err(error) => errors.push(DefLoadError::Read { path: f, error }),
                    }
                }
                completion.clone_from(c);
            }
            _ if kind == CommandKind::DRecv => {
                errors.push(DefLoadError::NotABlob);
            }
            _ => errors.push(DefLoadError::NotAPath),
        }
        let mut defs = Vec::new();
        for (origin, bytes) in sources {
            match self.compile(&bytes) {
                Ok(list) => {
                    for r in list {
                        match r {
                            Ok(g) => defs.push(Arc::new(g)),
                            Err(e) => errors.push(e.into()),
                        }
                    }
                }
                Err(error) => errors.push(DefLoadError::File { origin, error }),
            }
        }
        let scratch = self.grow_scratch(&defs);
        let result = if errors.is_empty() { Ok(()) } else { Err(DefLoadErrors(errors)) };
        LoadedDefs { defs, scratch, result, completion }
    }

    /// Stage 2 of a buffer command, decoded as `cmd`, on `world`'s buffers:
    /// the real-time server's mirror (holding the contents the command
    /// works on), or the engine's own world offline.
    pub fn perform_buffer(&mut self, cmd: &Result<Command, CommandError>, world: &mut World) -> Result<BufDone, BufFail> {
        self.buffers.perform(cmd, world)
    }
}

/// Parses a SynthDef file and compiles every def in it (variants too);
/// a def that uses an unknown UGen fails alone.
pub fn compile_synthdefs(
    bytes: &[u8],
    registry: &Registry,
    block_size: usize,
) -> Result<Vec<Result<GraphDef, DefError>>, magnetar_synthdef::SynthDefError> {
    compile_synthdefs_limited(bytes, registry, block_size, usize::MAX)
}

/// [`compile_synthdefs`] for a server started with `-w max_wire_bufs`: a def
/// that needs more interconnect buffers than that is refused, as scsynth
/// refuses it once running (`wire_bufs`).
pub fn compile_synthdefs_limited(
    bytes: &[u8],
    registry: &Registry,
    block_size: usize,
    max_wire_bufs: usize,
) -> Result<Vec<Result<GraphDef, DefError>>, magnetar_synthdef::SynthDefError> {
    let defs = magnetar_synthdef::parse(bytes)?;
    let mut out = Vec::new();
    for def in defs {
        for def in def.with_variants() {
            let needed = crate::wire_bufs::wire_buffers_needed(&def);
            if needed > max_wire_bufs {
                out.push(Err(DefError::TooManyWireBufs { def: def.name.clone(), needed, max: max_wire_bufs }));
                continue;
            }
            // A def whose units cannot run as given (as they declare) is
            // refused here, off the audio thread.
            out.push(GraphDef::compile(&def, registry, block_size));
        }
    }
    Ok(out)
}
