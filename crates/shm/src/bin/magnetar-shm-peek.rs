//! Reads a server's shared memory segment as sclang does, for tests and
//! for looking at a running server (magnetar's or scsynth's):
//!
//! `magnetar-shm-peek PORT buses FIRST COUNT` prints the control buses, one a line;
//! `magnetar-shm-peek PORT scope INDEX` prints `channels max_frames frames`
//! then the samples of the last published region, one a line.

use magnetar_shm::Client;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| args.get(i).and_then(|s| s.parse::<usize>().ok());
    let (Some(port), Some(what)) = (num(0), args.get(1)) else {
        eprintln!("usage: magnetar-shm-peek PORT buses FIRST COUNT | PORT scope INDEX");
        return ExitCode::from(2);
    };
    let client = match Client::open(port as u16) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return ExitCode::FAILURE;
        }
    };
    match (what.as_str(), num(2), num(3)) {
        ("buses", Some(first), Some(count)) => {
            for v in client.control_buses(first, count) {
                println!("{v:?}");
            }
        }
        ("scope", Some(index), _) => match client.scope(index as u32) {
            Some(s) => {
                println!("{} {} {}", s.channels, s.max_frames, s.frames);
                for v in s.data {
                    println!("{v:?}");
                }
            }
            None => println!("0 0 0"),
        },
        _ => {
            eprintln!("usage: magnetar-shm-peek PORT buses FIRST COUNT | PORT scope INDEX");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
