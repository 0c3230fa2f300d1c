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

#[cfg(test)]
mod tests {
    use super::c_g;

    #[test]
    fn g_format_matches_c_for_the_usual_cases() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (0.5, "0.5"),
            (440.0, "440"),
            (-3.25, "-3.25"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1.0 / 3.0, "0.333333"),
            (999999.5, "1e+06"),
            (0.000099999996, "0.0001"),
            (f64::INFINITY, "inf"),
            (1e100, "1e+100"),
        ];
        for (x, want) in cases {
            assert_eq!(c_g(x), want, "{x}");
        }
    }
}
