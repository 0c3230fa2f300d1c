//! `magnetar`: a SuperCollider-compatible synthesis server.

use magnetar_server::cli::{Cli, USAGE};
use magnetar_server::{nrt, realtime};

// The audio thread allocates from the real-time pool; every other thread,
// and the audio thread if the pool ever runs dry, from the system heap,
// whose use on a thread that arms a guard is counted (the audio thread arms
// one every period, so tests can prove it never touches the system heap).
#[global_allocator]
static ALLOC: magnetar_mem::RoutingAlloc<magnetar_rt::guard::CountingAlloc<std::alloc::System>> =
    magnetar_mem::RoutingAlloc::new(magnetar_rt::guard::CountingAlloc::new(std::alloc::System));

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cli = match Cli::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ERROR: {e}");
            eprint!("{USAGE}");
            std::process::exit(1);
        }
    };
    // Scalar lane kernels only (same output): lets tests compare both.
    if std::env::var_os("MAGNETAR_SCALAR_KERNELS").is_some_and(|v| v == "1") {
        magnetar_ugens::vector::set_scalar_only(true);
    }
    if cli.nrt.is_some() {
        match nrt::render(&cli) {
            Ok(_) => std::process::exit(0),
            Err(e) => {
                eprintln!("NRT synthesis failed: {e}");
                std::process::exit(1);
            }
        }
    }
    // Syscall guard on the audio thread and DSP helpers (README).
    let guard = magnetar_rt::sysguard::mode_from_env();
    let probe = std::env::var_os("MAGNETAR_RT_GUARD_PROBE").is_some_and(|v| v == "1");
    if let Err(e) = magnetar_rt::sysguard::configure(guard, probe) {
        eprintln!("MAGNETAR_RT_GUARD: {e}");
    }
    let code = realtime::run(&cli);
    if magnetar_rt::sysguard::active() {
        eprintln!("{}", magnetar_rt::sysguard::report());
    }
    std::process::exit(code);
}
