#![no_main]
// See crates/fuzzing: the entry point is shared with the corpus replay test.
libfuzzer_sys::fuzz_target!(|data: &[u8]| magnetar_fuzzing::tcp_stream(data));
