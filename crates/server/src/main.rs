//! `magnetar`: a SuperCollider-compatible synthesis server.

mod cli;
#[allow(dead_code)]
mod driver;
#[allow(dead_code)]
mod net;
mod nrt;
mod realtime;

use cli::{Cli, USAGE};

// Counts heap operations on threads that arm a guard (the audio thread does,
// in periods without commands), so that tests can prove it never allocates.
#[global_allocator]
static ALLOC: magnetar_rt::guard::CountingAlloc<std::alloc::System> =
    magnetar_rt::guard::CountingAlloc::new(std::alloc::System);

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
    if cli.nrt.is_some() {
        match nrt::render(&cli) {
            Ok(_) => std::process::exit(0),
            Err(e) => {
                eprintln!("NRT synthesis failed: {e}");
                std::process::exit(1);
            }
        }
    }
    std::process::exit(realtime::run(&cli));
}
