//! Text scsynth prints on its standard output, which clients parse: numbers
//! as C's `printf("%g")` writes them, and `/dumpOSC`'s form of a packet.
//!
//! One deliberate difference: control characters inside strings are
//! printed escaped (`\x1b`), so that a packet cannot drive the terminal the
//! server runs in; scsynth prints them raw.

use crate::osc::{Address, OscArg, OscMessage, OscPacket};
use std::fmt::Write;

/// C's `printf("%.<precision>g", x)`: `precision` significant digits,
/// trailing zeros dropped, exponent form below 1e-4 and from 10^precision.
pub fn c_g(x: f64, precision: usize) -> String {
    let precision = precision.max(1);
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // The exponent after rounding to `precision` digits decides the form.
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form has an 'e'");
    let exp: i32 = exp.parse().expect("exponent is a number");
    if exp < -4 || exp >= precision as i32 {
        let mantissa = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `s` with control characters written as `\xNN` (`\u{NNNN}` above 0xff).
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !c.is_control() {
            out.push(c);
        } else if (c as u32) <= 0xff {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// What `/dumpOSC 1` prints for a packet, without the final newline; `None`
/// for a `/status` message, which scsynth leaves out (status polls would
/// drown everything else).
pub fn dump_osc_text(packet: &OscPacket) -> Option<String> {
    let mut out = String::new();
    dump_packet(packet, 0, &mut out).then_some(out)
}

fn dump_packet(packet: &OscPacket, indent: usize, out: &mut String) -> bool {
    match packet {
        OscPacket::Message(m) => dump_message(m, out),
        OscPacket::Bundle(b) => {
            let _ = write!(out, "[ \"#bundle\", {}, ", b.time);
            for (i, p) in b.packets.iter().enumerate() {
                out.push('\n');
                out.push_str(&"  ".repeat(indent + 1));
                let printed = dump_packet(p, indent + 1, out);
                if printed && i + 1 < b.packets.len() {
                    out.push(',');
                }
            }
            out.push('\n');
            out.push_str(&"  ".repeat(indent));
            out.push(']');
            true
        }
    }
}

/// One argument as scsynth's dump walks it: the text it prints, the bytes
/// it occupies in the packet, and whether it opens an array.
enum Token<'a> {
    Arg(&'a OscArg),
    Open,
    Close,
}

fn flatten<'a>(args: &'a [OscArg], out: &mut Vec<Token<'a>>) {
    for a in args {
        if let OscArg::Array(items) = a {
            out.push(Token::Open);
            flatten(items, out);
            out.push(Token::Close);
        } else {
            out.push(Token::Arg(a));
        }
    }
}

fn wire_size(arg: &OscArg) -> usize {
    match arg {
        OscArg::Int(_) | OscArg::Float(_) | OscArg::Char(_) | OscArg::Rgba(_) | OscArg::Midi(_) => 4,
        OscArg::Long(_) | OscArg::Double(_) | OscArg::Time(_) => 8,
        OscArg::Str(s) => (s.len() + 4) & !3,
        OscArg::Blob(b) => 4 + ((b.len() + 3) & !3),
        OscArg::True | OscArg::False | OscArg::Nil | OscArg::Inf | OscArg::Array(_) => 0,
    }
}

/// Returns false (having printed nothing) for `/status`.
fn dump_message(m: &OscMessage, out: &mut String) -> bool {
    match &m.address {
        Address::Name(name) => {
            if name == "/status" || name == "status" {
                return false;
            }
            let _ = write!(out, "[ \"{}\",", terminal_safe(name));
        }
        Address::Number(n) => {
            let _ = write!(out, "[ {n},");
        }
    }
    let mut tokens = Vec::new();
    flatten(&m.args, &mut tokens);
    // scsynth walks the arguments while bytes remain: tags without data
    // (T, F, N, I, brackets) after the last data-carrying argument are not
    // printed, and a comma follows each item that leaves bytes behind it.
    let mut remain: usize = tokens.iter().map(|t| if let Token::Arg(a) = t { wire_size(a) } else { 0 }).sum();
    for t in &tokens {
        if remain == 0 {
            break;
        }
        let opens = matches!(t, Token::Open);
        match t {
            Token::Open => out.push_str(" ["),
            Token::Close => out.push_str(" ]"),
            Token::Arg(a) => {
                remain -= wire_size(a);
                match a {
                    OscArg::Int(v) => {
                        let _ = write!(out, " {v}");
                    }
                    OscArg::Float(v) => {
                        let _ = write!(out, " {}", c_g(*v as f64, 6));
                    }
                    OscArg::Double(v) => {
                        let _ = write!(out, " {}", c_g(*v, 6));
                    }
                    OscArg::Str(s) => {
                        let _ = write!(out, " \"{}\"", terminal_safe(s));
                    }
                    OscArg::Blob(b) => {
                        let _ = write!(out, " DATA[{}]", b.len());
                    }
                    OscArg::Midi(b) => {
                        // scsynth prints the bytes as (signed) chars widened to int.
                        let h = |x: u8| x as i8 as i32 as u32;
                        let _ = write!(out, " MIDI[0x{:02x} 0x{:02x} 0x{:02x} 0x{:02x}]", h(b[0]), h(b[1]), h(b[2]), h(b[3]));
                    }
                    OscArg::Char(c) => {
                        let mut buf = [0u8; 4];
                        let _ = write!(out, " {}", terminal_safe(c.encode_utf8(&mut buf)));
                    }
                    OscArg::Time(t) => {
                        let _ = write!(out, " {}", *t as i64);
                    }
                    OscArg::True => out.push_str(" true"),
                    OscArg::False => out.push_str(" false"),
                    OscArg::Inf => out.push_str(" infinitum"),
                    OscArg::Nil => out.push_str(" nil"),
                    // Tags scsynth's dump does not know: it names the tag and stops.
                    OscArg::Long(_) | OscArg::Rgba(_) | OscArg::Array(_) => {
                        let tag = a.type_tag();
                        let _ = write!(out, " !unknown tag '{tag}' 0x{:02x} !", tag as u32);
                        break;
                    }
                }
            }
        }
        if remain > 0 && !opens {
            out.push(',');
        }
    }
    out.push_str(" ]");
    true
}

/// What `/dumpOSC 2` prints for a packet's bytes, without the final
/// newline: its size, then 16 bytes a row in hex with their printable
/// characters.
pub fn hex_dump_text(data: &[u8]) -> String {
    let mut out = format!("size {}\n", data.len());
    let padded = (data.len() + 15) & !15;
    let mut ascii = String::with_capacity(16);
    for i in 0..padded {
        if i & 15 == 0 {
            let _ = write!(out, "{i:4}   ");
            ascii.clear();
        }
        match data.get(i) {
            Some(&b) => {
                let _ = write!(out, "{b:02x} ");
                ascii.push(if (0x20..0x7f).contains(&b) { b as char } else { '.' });
            }
            None => out.push_str("   "),
        }
        if i & 15 == 15 {
            let _ = writeln!(out, "  |{ascii}|");
        } else if i & 3 == 3 {
            out.push(' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osc::OscBundle;

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
            assert_eq!(c_g(x, 6), want, "{x}");
        }
        assert_eq!(c_g(0.1f32 as f64, 14), "0.10000000149012");
        assert_eq!(c_g(440.0, 14), "440");
        assert_eq!(c_g(1e20, 14), "1e+20");
    }

    #[test]
    fn dump_reads_as_scsynths() {
        let m = OscMessage::new(
            "/s_new",
            vec!["default".into(), 1000.into(), 0.into(), 1.into(), "freq".into(), OscArg::Float(440.5)],
        );
        let text = dump_osc_text(&m.clone().into()).unwrap();
        assert_eq!(text, "[ \"/s_new\", \"default\", 1000, 0, 1, \"freq\", 440.5 ]");
        assert_eq!(dump_osc_text(&OscMessage::new("/sync", vec![]).into()).unwrap(), "[ \"/sync\", ]");
        assert_eq!(dump_osc_text(&OscMessage::new("/status", vec![]).into()), None);
        let b = OscBundle::new(5, vec![m.into(), OscMessage::new("/status", vec![]).into(), OscMessage::new("/n_free", vec![1.into()]).into()]);
        assert_eq!(
            dump_osc_text(&b.into()).unwrap(),
            "[ \"#bundle\", 5, \n  [ \"/s_new\", \"default\", 1000, 0, 1, \"freq\", 440.5 ],\n  \n  [ \"/n_free\", 1 ]\n]"
        );
    }

    #[test]
    fn dump_escapes_control_characters() {
        let m = OscMessage::new("/b_read", vec![OscArg::Str("a\x1b[2Jb".into())]);
        assert_eq!(dump_osc_text(&m.into()).unwrap(), "[ \"/b_read\", \"a\\x1b[2Jb\" ]");
    }

    #[test]
    fn dump_of_arrays_and_data_free_tags_follows_the_bytes() {
        let m = OscMessage::new("/x", vec![OscArg::Array(vec![1.into(), 2.into()]), OscArg::True]);
        // The last int leaves no bytes: the closing bracket and `true` are not reached.
        assert_eq!(dump_osc_text(&m.into()).unwrap(), "[ \"/x\", [ 1, 2 ]");
    }

    #[test]
    fn hex_dump_rows() {
        let text = hex_dump_text(b"/sync\0\0\0");
        assert_eq!(text, format!("size 8\n   0   2f 73 79 6e  63 00 00 00  {}  |/sync...|\n", " ".repeat(25)));
    }
}
