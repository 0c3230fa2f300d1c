//! Commands read straight from a message's bytes, with no [`OscMessage`]
//! in between: the message is checked as [`crate::osc::decode`] checks it,
//! its arguments become tokens borrowed from the bytes (each string's UTF-8
//! checked here, once), and the command is read from them by the same code
//! as [`crate::parse_command`]. A message this reader is not sure of (a
//! malformed one, an unknown command, a type tag outside the usual few, the
//! plug-in commands, padding that is not zeros) is left to the general
//! decoder, so that every message decodes, or fails, exactly as it does
//! through an `OscMessage`.
//!
//! [`OscMessage`]: crate::osc::OscMessage

use crate::commands::{parse_args, Command, CommandError};
use crate::kind::CommandKind;
use crate::osc::MAX_NESTING;
use crate::sc_args::{ScArgs, Token, TokenList};

/// The command a message's bytes hold, read as [`crate::parse_command`]
/// reads the decoded message; `None` when the message is for the general
/// decoder (see the module documentation).
pub fn decode_command(bytes: &[u8]) -> Option<(CommandKind, Result<Command, CommandError>)> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut r = Wire { buf: bytes, pos: 0 };
    let kind = if bytes[0] == 0 {
        CommandKind::from_number(r.i32()?)?
    } else {
        CommandKind::from_name(std::str::from_utf8(r.string()?).ok()?)?
    };
    if matches!(kind, CommandKind::Cmd | CommandKind::UCmd | CommandKind::NCmd) {
        return None;
    }
    let mut tokens = TokenList::new();
    if r.pos < bytes.len() {
        if bytes[r.pos] != b',' {
            return None;
        }
        let tags = r.string()?.get(1..)?;
        r.tokens(tags, &mut tokens)?;
        if r.pos != bytes.len() {
            return None;
        }
    }
    let cmd = parse_args(kind, &mut ScArgs::from_tokens(tokens))?;
    Some((kind, cmd))
}

/// A cursor over a message's bytes; every read gives `None` where the
/// general decoder would report an error (or might: padding is not read).
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Wire<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }

    fn word(&mut self) -> Option<[u8; 4]> {
        self.take(4)?.try_into().ok()
    }

    fn i32(&mut self) -> Option<i32> {
        self.word().map(i32::from_be_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A string's bytes up to its NUL, when its padding is all NULs (the
    /// general decoder takes other padding too, and ends the string where
    /// scsynth does).
    fn string(&mut self) -> Option<&'a [u8]> {
        let rest = self.buf.get(self.pos..)?;
        let nul = rest.iter().position(|&b| b == 0)?;
        let total = (nul + 4) & !3;
        if rest.get(nul..total)?.iter().any(|&b| b != 0) {
            return None;
        }
        self.pos += total;
        rest.get(..nul)
    }

    /// The arguments the type tags announce, arrays as open and close
    /// markers, as [`ScArgs`] reads them from a decoded message.
    fn tokens(&mut self, tags: &[u8], out: &mut TokenList<'a>) -> Option<()> {
        let mut depth = 0usize;
        for &tag in tags {
            out.push(match tag {
                b'i' => Token::Int(self.i32()?),
                b'f' => Token::Float(f32::from_bits(self.word().map(u32::from_be_bytes)?)),
                b's' | b'S' => Token::Str(std::str::from_utf8(self.string()?).ok()?),
                b'b' => {
                    let n = usize::try_from(self.i32()?).ok()?;
                    let padded = self.take(n.checked_add(3)? & !3)?;
                    Token::Blob(padded.get(..n)?)
                }
                b'h' => Token::Long(self.u64()? as i64),
                b'd' => Token::Double(f64::from_bits(self.u64()?)),
                b'[' => {
                    depth += 1;
                    if depth >= MAX_NESTING {
                        return None;
                    }
                    Token::Open
                }
                b']' => {
                    depth = depth.checked_sub(1)?;
                    Token::Close
                }
                _ => return None,
            });
        }
        (depth == 0).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::parse_command;
    use crate::osc::{decode_message, Address, OscArg, OscMessage};

    /// Every message the reader takes reads as the general decoder reads it.
    fn same_as_general(bytes: &[u8]) -> bool {
        let general = decode_message(bytes).ok().map(|m| (CommandKind::of(&m.address), parse_command(&m)));
        match decode_command(bytes) {
            Some((kind, cmd)) => {
                assert_eq!(general, Some((Some(kind), cmd)), "{bytes:?}");
                true
            }
            None => false,
        }
    }

    fn s(v: &str) -> OscArg {
        OscArg::Str(v.into())
    }

    #[test]
    fn common_commands_read_as_through_a_decoded_message() {
        let (i, f) = (OscArg::Int, OscArg::Float);
        let messages = [
            OscMessage::new("/n_set", vec![i(1000), s("freq"), f(440.0), i(2), f(0.5)]),
            OscMessage::new("/n_setn", vec![i(1000), s("lv"), i(4), f(1.0), s("c3"), s("zz"), f(0.25)]),
            OscMessage::new("/c_set", vec![i(100), f(1.0), i(101), f(0.5), i(7)]),
            OscMessage::new("/c_setn", vec![i(102), i(4), f(0.1), f(0.2)]),
            OscMessage::new("/s_new", vec![s("sine"), i(-1), i(0), i(1), s("lv"), OscArg::Array(vec![f(1.0), s("c4")])]),
            OscMessage::new("/s_new", vec![i(3)]),
            OscMessage::new("/n_set", vec![s("hu"), i(1), s("a_control_name_longer_than_a_slot"), OscArg::Double(0.5)]),
            OscMessage::new("/b_alloc", vec![i(1), i(1024), i(2), OscArg::Blob(vec![1, 2, 3]), OscArg::Long(7)]),
            OscMessage::new(Address::Number(15), vec![i(1000), i(0), f(1.0)]),
            OscMessage::new("/n_free", vec![]),
            OscMessage::new("/sync", vec![i(1)]),
        ];
        for m in &messages {
            assert!(same_as_general(&m.encode()), "{m:?}");
        }
        // No type tags and no arguments.
        assert!(same_as_general(b"/status\0"));
    }

    #[test]
    fn messages_it_is_not_sure_of_go_to_the_general_decoder() {
        let bytes = |m: OscMessage| m.encode();
        // Unknown command, plug-in command, a tag outside the usual few.
        assert!(!same_as_general(&bytes(OscMessage::new("/nope", vec![]))));
        assert!(!same_as_general(&bytes(OscMessage::new("/cmd", vec![s("x")]))));
        assert!(!same_as_general(&bytes(OscMessage::new("/n_set", vec![OscArg::Int(1), OscArg::Nil]))));
        // Malformed: truncated, trailing bytes, bad UTF-8, unbalanced array.
        let good = bytes(OscMessage::new("/n_set", vec![OscArg::Int(1), s("freq"), OscArg::Float(1.0)]));
        assert!(!same_as_general(&good[..good.len() - 4]));
        assert!(!same_as_general(&[good.as_slice(), &[0; 4]].concat()));
        let mut bad = good.clone();
        let at = bad.windows(4).position(|w| w == b"freq").unwrap();
        bad[at] = 0xff;
        assert!(!same_as_general(&bad));
        assert!(!same_as_general(b"/n_set\0\0,[i\0\0\0\0\x01"));
        assert!(!same_as_general(b"/n_set\0\0,]\0\0"));
        // Padding that is not zeros (the general decoder takes it).
        let mut padded = good.clone();
        padded[at + 5] = b'x';
        assert!(!same_as_general(&padded));
        assert!(decode_message(&padded).is_ok());
    }

    #[test]
    fn any_cut_or_changed_byte_reads_as_the_general_decoder_reads_it() {
        let m = OscMessage::new(
            "/s_new",
            vec![s("sine"), OscArg::Int(1), OscArg::Int(0), OscArg::Int(1), s("lv"), OscArg::Array(vec![OscArg::Float(1.0)])],
        );
        let good = m.encode();
        for cut in 0..good.len() {
            same_as_general(&good[..cut]);
        }
        for at in 0..good.len() {
            for v in [0u8, 1, b'[', b']', b'i', b's', b'b', 0x80, 0xff] {
                let mut b = good.clone();
                b[at] = v;
                same_as_general(&b);
            }
        }
    }
}
