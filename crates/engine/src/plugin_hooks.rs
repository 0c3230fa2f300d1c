//! What the engine needs from the server's UGen plugin host, which it
//! does not depend on: the handlers of plugin commands (`/cmd`) and of
//! plugins' buffer generators (`/b_gen`), set at boot.

use magnetar_protocol::ArgBlock;
use magnetar_ugens::World;
use std::sync::OnceLock;

/// Why a plugin's command or buffer generator did not run, as the plugin
/// host reports it. Each reason's text is the `/fail` message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PluginFailure {
    /// `/cmd` of a name no plugin defined.
    #[error("no plugin command named {0}")]
    NoCommand(String),
    /// The plugin's command threw a C++ exception (stopped at the boundary).
    #[error("plugin command {0} threw an exception")]
    CommandThrew(String),
    /// A `/b_gen` generator asked to run on a buffer the world lacks.
    #[error("buffer number {0} out of range")]
    BufferOutOfRange(usize),
    /// The plugin's `/b_gen` generator threw a C++ exception.
    #[error("{0} threw an exception")]
    GeneratorThrew(String),
}

/// What an asynchronous command a plugin command ran in place (offline)
/// leaves: its completion message to perform, then its name to answer
/// `/done` with.
pub type AsyncOutcome = (Option<Vec<u8>>, Option<String>);

/// Runs plugin command `name` with its OSC arguments (from their type tag
/// string on); returns what its asynchronous commands left, in order, or
/// why it failed.
pub type PluginCommandHandler = fn(&str, &[u8], &mut World) -> Result<Vec<AsyncOutcome>, PluginFailure>;

static HANDLER: OnceLock<PluginCommandHandler> = OnceLock::new();

/// Installs the handler of `/cmd`; a second call is ignored.
pub fn set_plugin_command_handler(f: PluginCommandHandler) {
    let _ = HANDLER.set(f);
}

pub(crate) fn plugin_command_handler() -> Option<PluginCommandHandler> {
    HANDLER.get().copied()
}

/// Runs the `/b_gen` generator `name` a plugin defined on buffer `index`
/// of the world (off the audio thread, on the buffer's own copy), with the
/// generator's OSC arguments (from their type tag string on). None when no
/// plugin defined `name`; else whether it ran, or why not.
pub type BufGenHandler = fn(&str, &mut World, usize, &[u8]) -> Option<Result<(), PluginFailure>>;

static BUF_GEN: OnceLock<BufGenHandler> = OnceLock::new();

/// Installs the handler of plugins' `/b_gen` generators; a second call is ignored.
pub fn set_buf_gen_handler(f: BufGenHandler) {
    let _ = BUF_GEN.set(f);
}

/// Runs plugin generator `name` (see [`BufGenHandler`]).
pub(crate) fn plugin_buf_gen(name: &str, world: &mut World, index: usize, args: &ArgBlock) -> Option<Result<(), PluginFailure>> {
    let handler = BUF_GEN.get()?;
    handler(name, world, index, args.as_bytes())
}
