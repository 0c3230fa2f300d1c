//! Builds `tests/c/gc_check.c` against the static library with the system C compiler and
//! runs it: the C interface works end to end from a C program.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn c_program_links_the_static_library_and_passes_its_checks() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // `cargo test` does not rebuild the staticlib, so build it here, into a target directory
    // of its own (next to the test's) so that it does not wait on the running build's lock.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().join("gc-c-abi");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "-p", "magnetar-gc", "--lib", "--target-dir"])
        .arg(&target)
        .current_dir(&manifest)
        .status()
        .unwrap();
    assert!(built.success(), "building the static library failed");
    let lib = target.join("debug/libmagnetar_gc.a");
    let out = target.join("gc_check");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .arg("-std=c11")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(manifest.join("include"))
        .arg(manifest.join("tests/c/gc_check.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .expect("a C compiler (cc) is needed for this test");
    assert!(status.success(), "compiling gc_check.c failed");
    let run = Command::new(&out).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "gc_check failed:\n{stdout}{stderr}");
    assert!(stdout.contains("cycles"), "{stdout}");
}
