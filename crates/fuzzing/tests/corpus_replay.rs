//! Every input the fuzzers kept (`fuzz/corpus/<target>/`) and every input
//! that once broke a target (`fuzz/regressions/<target>/`), run again
//! through the same entry points: a change that makes any of them panic,
//! abort or hang fails here, in plain `cargo test`.

use std::path::Path;
use std::time::{Duration, Instant};

/// One input may take this long at most (the fuzz script gives libFuzzer
/// the same bound); a slower one is a hang to fix.
const PER_INPUT: Duration = Duration::from_secs(10);

fn replay(kind: &str) {
    // MAGNETAR_FUZZ_DIR=dir replays dir/<target>/ instead (seeds, say).
    let root = match std::env::var_os("MAGNETAR_FUZZ_DIR") {
        Some(dir) => Path::new(&dir).to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz").join(kind),
    };
    let mut total = 0;
    for &(name, target) in magnetar_fuzzing::TARGETS {
        for file in magnetar_fuzzing::corpus_files(&root.join(name)) {
            let data = std::fs::read(&file).unwrap();
            if std::env::var_os("MAGNETAR_FUZZ_VERBOSE").is_some() {
                eprintln!("{}", file.display());
            }
            let start = Instant::now();
            target(&data);
            let took = start.elapsed();
            assert!(took < PER_INPUT, "{} took {took:?}", file.display());
            total += 1;
        }
    }
    println!("replayed {total} {kind} inputs");
}

#[test]
fn every_kept_fuzz_input_runs_cleanly() {
    replay("corpus");
}

#[test]
fn every_input_that_once_broke_a_target_runs_cleanly() {
    replay("regressions");
}

#[test]
fn seeds_reach_the_engine() {
    // The sandbox's def plays: a sanity check that the targets do real work.
    magnetar_fuzzing::synthdef(&magnetar_fuzzing::sine_def());
    let defs = magnetar_synthdef::parse(&magnetar_fuzzing::sine_def()).unwrap();
    assert_eq!(defs[0].name, "tone");
}
