//! Compiles the C++ side of the plugin host: the calls into plugin code
//! (so that a C++ exception stops there instead of unwinding into Rust),
//! `Print`'s variadic entry, the message iterator plugin commands read,
//! the FFT helpers (FFTW, single precision, as scsynth) and the layout
//! figures the Rust structs are checked against. It is built with the
//! plugin interface headers of SuperCollider 3.13 (Debian:
//! supercollider-dev), the headers the plugins were built with.

fn main() {
    println!("cargo:rerun-if-changed=cpp/host_shim.cpp");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file("cpp/host_shim.cpp")
        .include("/usr/include/SuperCollider/plugin_interface")
        .include("/usr/include/SuperCollider/common")
        .include("/usr/include/SuperCollider/server")
        .warnings(true)
        .compile("magnetar_plugin_shim");
    println!("cargo:rustc-link-lib=dylib=fftw3f");
    println!("cargo:rustc-link-lib=dylib=dl");
}
