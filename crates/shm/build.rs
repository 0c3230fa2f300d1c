//! Compiles the boost.interprocess side of the segment. The layout must be
//! the one SuperCollider's clients (sclang, supriya) were built against, so
//! it is built with the system's boost headers (Debian: libboost-dev).

fn main() {
    println!("cargo:rerun-if-changed=cpp/server_shm.cpp");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file("cpp/server_shm.cpp")
        .warnings(true)
        .compile("magnetar_server_shm");
    // shm_open lives in librt on older glibc; pthread for boost's locks.
    println!("cargo:rustc-link-lib=dylib=rt");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
