//! Text the server prints for units (`Poll`), formatted as scsynth prints it.

use magnetar_ugens::PollLine;

/// `label: value` (`Dpoll` adds ` block offset: N`), the value as C's `%g` writes a float: six significant digits, trailing zeros
/// dropped, exponent form below 1e-4 and from 1e6.
pub fn poll_line(p: &PollLine) -> String {
    match p.block_offset {
        None => format!("{}: {}", p.label, c_g(p.value as f64)),
        Some(offset) => format!("{}: {} block offset: {offset}", p.label, c_g(p.value as f64)),
    }
}

/// C's `printf("%g", x)`.
pub fn c_g(x: f64) -> String {
    magnetar_protocol::printed::c_g(x, 6)
}
