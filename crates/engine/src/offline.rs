//! Both sides of the engine run in step on one thread, for non-real-time
//! rendering (and tests): each command's stage 2 is done by the control side
//! ([`ControlEngine`]) and its result installed on the audio side
//! ([`Engine`]) at once, as scsynth runs every stage in place offline. The
//! real-time server runs the same two types on two threads.

use crate::buffer_cmds::BufferCommands;
use crate::failure::{CommandFailure, FailReason};
use crate::control::ControlEngine;
use crate::engine::{Engine, EngineOptions};
use crate::graph_def::DefError;
use magnetar_protocol::commands::{Command, CommandError};
use magnetar_protocol::{CommandKind, Prepared, PreparedMessage, Reply};
use std::ops::{Deref, DerefMut};

/// An engine whose control side and audio side take turns on one thread.
/// It reads as its audio side ([`Engine`]: world, tree, blocks); the
/// `perform_*` methods route each command to the side that does it.
pub struct OfflineEngine {
    pub control: ControlEngine,
    pub engine: Engine,
}

impl Deref for OfflineEngine {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.engine
    }
}

impl DerefMut for OfflineEngine {
    fn deref_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }
}

impl OfflineEngine {
    pub fn new(options: EngineOptions) -> OfflineEngine {
        let control = ControlEngine::new(&options, BufferCommands::new(None));
        OfflineEngine { control, engine: Engine::new(options) }
    }

    /// Compiles and installs every def in a SynthDef file's bytes: the
    /// name of each def installed, or why it was not.
    pub fn add_synthdefs(&mut self, bytes: &[u8]) -> Result<Vec<Result<String, DefError>>, magnetar_synthdef::SynthDefError> {
        let compiled = self.control.compile(bytes)?;
        let mut results = Vec::with_capacity(compiled.len());
        for c in compiled {
            match c {
                Ok(g) => {
                    let name = g.name.clone();
                    let defs = vec![std::sync::Arc::new(g)];
                    let scratch = self.control.grow_scratch(&defs);
                    let refused = self.install(defs, scratch);
                    results.push(if refused.is_empty() { Ok(name) } else { Err(DefError::TooManyDefs { def: name }) });
                }
                Err(e) => results.push(Err(e)),
            }
        }
        Ok(results)
    }

    /// Installs defs on the audio side, after the larger scratch areas the
    /// control side made for them, if any; returns the names of the defs
    /// `-d` left out.
    fn install(&mut self, mut defs: Vec<std::sync::Arc<crate::GraphDef>>, scratch: Option<(Vec<f32>, Vec<f32>)>) -> Vec<String> {
        if let Some((scratch, lanes)) = scratch {
            self.engine.swap_scratch(scratch);
            self.engine.swap_lane_scratch(lanes);
        }
        let (mut replaced, mut refused) = (Vec::new(), Vec::new());
        self.engine.install_defs(&mut defs, &mut replaced, &mut refused);
        refused.iter().map(|d| d.name.clone()).collect()
    }

    /// Performs a prepared packet (a bundle's elements in order), adding
    /// the failures.
    pub fn perform_prepared(&mut self, packet: &Prepared, failures: &mut Vec<CommandFailure>) {
        packet.for_each_message(&mut |m| failures.extend(self.perform(m).err()));
    }

    /// Performs one prepared command message on the side that does it.
    pub fn perform(&mut self, m: &PreparedMessage) -> Result<(), CommandFailure> {
        match m.kind {
            // Nothing waits offline: `/sync` is done at once.
            Some(CommandKind::Sync) => Ok(()),
            Some(kind) if kind.runs_in_stage2() => self.stage2(kind, &m.cmd),
            _ => {
                let r = self.engine.perform(m);
                self.plugin_outcomes();
                r
            }
        }
    }

    /// Stage 2 on the control side, then stage 3 (the install, the
    /// completion message) and the replies on the audio side.
    fn stage2(&mut self, kind: CommandKind, cmd: &Result<Command, CommandError>) -> Result<(), CommandFailure> {
        let name = kind.name();
        match kind {
            CommandKind::DRecv | CommandKind::DLoad | CommandKind::DLoadDir => {
                let loaded = self.control.load_defs(kind, cmd);
                let refused = self.install(loaded.defs, loaded.scratch);
                self.completion(loaded.completion.as_deref());
                let mut errors: Vec<String> = loaded.result.err().into_iter().map(|e| e.to_string()).collect();
                errors.extend(refused.into_iter().map(|def| DefError::TooManyDefs { def }.to_string()));
                if errors.is_empty() {
                    Ok(())
                } else {
                    Err(CommandFailure::new(name, FailReason::Rejected(errors.join("; "))))
                }
            }
            _ => match self.control.perform_buffer(cmd, &mut self.engine.world) {
                Ok(done) => {
                    let done_reply = done.done_reply(name);
                    self.engine.replies.extend(done.replies);
                    // The completion message runs a stage before /done is sent.
                    self.completion(done.completion.as_deref());
                    self.engine.replies.extend(done_reply);
                    Ok(())
                }
                Err(f) => Err(CommandFailure::new(name, f)),
            },
        }
    }

    /// Performs a completion message; its failures are printed, as the
    /// command that carried it succeeds or fails on its own.
    fn completion(&mut self, bytes: Option<&[u8]>) {
        let Some(bytes) = bytes.filter(|b| !b.is_empty()) else { return };
        let mut failures = Vec::new();
        match Prepared::decode(bytes) {
            Ok(p) => self.perform_prepared(&p, &mut failures),
            Err(e) => failures.push(CommandFailure::new(
                "completion message",
                FailReason::Rejected(format!("could not be decoded: {e}")),
            )),
        }
        for f in failures {
            eprintln!("{f}");
        }
    }

    /// What a plugin command's asynchronous commands left: each one's
    /// completion message, then its `/done`.
    fn plugin_outcomes(&mut self) {
        if self.engine.plugin_outcomes.is_empty() {
            return;
        }
        for (completion, done) in std::mem::take(&mut self.engine.plugin_outcomes) {
            self.completion(completion.as_deref());
            if let Some(name) = done {
                self.engine.replies.push(Reply::done(name));
            }
        }
    }

    /// Serves what the disk units asked for, through the files the control
    /// side keeps open (after each block and each bundle).
    pub fn serve_disk(&mut self) {
        crate::disk_io::serve_pending(&mut self.engine.world, &self.control.buffers.shared_files());
    }
}
