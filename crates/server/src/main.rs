//! `magnetar`: a SuperCollider-compatible synthesis server.

use magnetar_server::cli::{Cli, USAGE};
use magnetar_engine::plugin_hooks::PluginFailure;
use magnetar_server::{nrt, realtime};

mod c_heap;

// The audio thread allocates from the real-time pool; every other thread,
// and the audio thread if the pool ever runs dry, from the system heap,
// whose use on a thread that arms a guard is counted (the audio thread arms
// one every period, so tests can prove it never touches the system heap).
// C and C++ code (plugins) reaches the same heap through `c_heap`'s
// `malloc`, counted the same way.
#[global_allocator]
static ALLOC: magnetar_mem::RoutingAlloc<magnetar_rt::guard::CountingAlloc<c_heap::GlibcHeap>> =
    magnetar_mem::RoutingAlloc::new(magnetar_rt::guard::CountingAlloc::new(c_heap::GlibcHeap));

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cli = match Cli::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ERROR: {e}");
            eprint!("{USAGE}");
            std::process::exit(1);
        }
    };
    // Every parallel group that may spread does, however it compares with
    // one thread (tests of the threaded path, and measurements of it).
    if std::env::var_os("MAGNETAR_SPREAD").is_some_and(|v| v == "always") {
        cli.engine.parallel_measured = false;
    }
    // Every parallel group on one thread, with the threads started all the
    // same (measurements of the one-thread way against -T 1).
    if std::env::var_os("MAGNETAR_SPREAD").is_some_and(|v| v == "never") {
        cli.engine.parallel_never = true;
    }
    // Scalar lane kernels only (same output): lets tests compare both.
    if std::env::var_os("MAGNETAR_SCALAR_KERNELS").is_some_and(|v| v == "1") {
        magnetar_ugens::vector::set_scalar_only(true);
    }
    if cli.nrt.is_some() {
        c_heap::fixed_mmap_threshold();
    }
    load_plugins(&cli);
    // The DSP threads' timeline (README: tracing).
    let tracing = std::env::var_os("MAGNETAR_TRACE").filter(|p| !p.is_empty());
    if let Some(path) = &tracing {
        let max_events = std::env::var("MAGNETAR_TRACE_EVENTS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1_000_000);
        if let Err(e) = magnetar_rt::trace::start(std::path::Path::new(path), cli.nrt.is_some(), max_events) {
            eprintln!("WARNING: MAGNETAR_TRACE: cannot write {}: {e}", std::path::Path::new(path).display());
        }
    }
    let finish_trace = || {
        if let Some(Err(e)) = magnetar_rt::trace::finish() {
            eprintln!("WARNING: MAGNETAR_TRACE: {e}");
        }
    };
    if cli.nrt.is_some() {
        let rendered = nrt::render(&cli);
        finish_trace();
        let code = match rendered {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("NRT synthesis failed: {e}");
                1
            }
        };
        finish_plugins();
        std::process::exit(code);
    }
    // Syscall guard on the audio thread and DSP helpers (README).
    let guard = magnetar_rt::sysguard::mode_from_env();
    let probe = std::env::var_os("MAGNETAR_RT_GUARD_PROBE").is_some_and(|v| v == "1");
    if let Err(e) = magnetar_rt::sysguard::configure(guard, probe) {
        eprintln!("MAGNETAR_RT_GUARD: {e}");
    }
    let code = realtime::run(&cli);
    finish_trace();
    finish_plugins();
    if magnetar_rt::sysguard::active() {
        eprintln!("{}", magnetar_rt::sysguard::report());
    }
    std::process::exit(code);
}

/// Loads the UGen plugins (README: plugins) and lets every unit registry
/// the engine builds include their units.
fn load_plugins(cli: &Cli) {
    let options = magnetar_plugin::Options {
        ugen_plugins_path: cli.ugen_plugin_path.clone(),
        prefer: cli.prefer_plugins.as_deref().map(magnetar_plugin::Prefer::parse).unwrap_or_default(),
        disabled: !cli.plugins,
    };
    magnetar_plugin::load(&options);
    magnetar_ugens::registry::set_extension(magnetar_plugin::install);
    magnetar_ugens::registry::set_foreign_prepare(magnetar_plugin::prepare_fft);
    magnetar_engine::plugin_hooks::set_plugin_command_handler(plugin_command);
    magnetar_engine::plugin_hooks::set_buf_gen_handler(plugin_buf_gen);
}

/// The plugin host's `/cmd`, its errors as the engine reports them.
fn plugin_command(
    name: &str,
    args: &[u8],
    world: &mut magnetar_ugens::World,
) -> Result<Vec<magnetar_engine::plugin_hooks::AsyncOutcome>, PluginFailure> {
    use magnetar_plugin::PluginCommandError as E;
    magnetar_plugin::run_plugin_command(name, args, world).map_err(|e| match e {
        E::Unknown(name) => PluginFailure::NoCommand(name),
        E::Threw(name) => PluginFailure::CommandThrew(name),
    })
}

/// The plugin host's `/b_gen` generators, their errors as the engine reports them.
fn plugin_buf_gen(name: &str, world: &mut magnetar_ugens::World, index: usize, args: &[u8]) -> Option<Result<(), PluginFailure>> {
    use magnetar_plugin::BufGenError as E;
    let result = magnetar_plugin::run_buf_gen(name, world, index, args)?;
    Some(result.map_err(|e| match e {
        E::BufferOutOfRange(index) => PluginFailure::BufferOutOfRange(index),
        E::Threw(name) => PluginFailure::GeneratorThrew(name),
    }))
}

/// Prints what plugin units queued and lets libraries stop their threads.
fn finish_plugins() {
    magnetar_plugin::flush_prints();
    magnetar_plugin::unload_all();
}
