//! Links the system libsndfile, found through pkg-config when it is there.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=SNDFILE_LIB_DIR");

    if let Ok(dir) = std::env::var("SNDFILE_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=sndfile");
        return;
    }

    let probe = Command::new("pkg-config")
        .args(["--libs-only-L", "--libs-only-l", "sndfile"])
        .output();
    let flags = match probe {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        // Without pkg-config the library usually sits on the default search path.
        _ => String::new(),
    };

    let mut linked = false;
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={lib}");
            linked |= lib == "sndfile";
        }
    }
    if !linked {
        println!("cargo:rustc-link-lib=dylib=sndfile");
    }
}
