//! Reads command arguments the way scsynth's argument iterator does: typed
//! reads with defaults, numbers converted between int and float, arrays seen
//! as `[` and `]` markers, and "bytes remaining" counted as on the wire, so
//! that loops over argument groups stop exactly where scsynth's stop.

use magnetar_protocol::osc::OscArg;

/// One flattened argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Token<'a> {
    Int(i32),
    Float(f32),
    Double(f64),
    Long(i64),
    Str(&'a str),
    Blob(&'a [u8]),
    Open,
    Close,
    Other(char),
}

impl Token<'_> {
    fn tag(&self) -> char {
        match self {
            Token::Int(_) => 'i',
            Token::Float(_) => 'f',
            Token::Double(_) => 'd',
            Token::Long(_) => 'h',
            Token::Str(_) => 's',
            Token::Blob(_) => 'b',
            Token::Open => '[',
            Token::Close => ']',
            Token::Other(c) => *c,
        }
    }

    /// Size of the value on the wire, in bytes.
    fn wire_size(&self) -> usize {
        match self {
            Token::Int(_) | Token::Float(_) => 4,
            Token::Double(_) | Token::Long(_) => 8,
            Token::Str(s) => (s.len() + 4) & !3,
            Token::Blob(b) => 4 + ((b.len() + 3) & !3),
            Token::Open | Token::Close => 0,
            Token::Other(c) => match c {
                't' => 8,
                'c' | 'r' | 'm' => 4,
                _ => 0,
            },
        }
    }
}

fn flatten<'a>(args: &'a [OscArg], out: &mut Vec<Token<'a>>) {
    for a in args {
        match a {
            OscArg::Int(v) => out.push(Token::Int(*v)),
            OscArg::Float(v) => out.push(Token::Float(*v)),
            OscArg::Double(v) => out.push(Token::Double(*v)),
            OscArg::Long(v) => out.push(Token::Long(*v)),
            OscArg::Str(s) => out.push(Token::Str(s)),
            OscArg::Blob(b) => out.push(Token::Blob(b)),
            OscArg::Array(inner) => {
                out.push(Token::Open);
                flatten(inner, out);
                out.push(Token::Close);
            }
            other => out.push(Token::Other(other.type_tag())),
        }
    }
}

pub struct Args<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    remain: usize,
}

impl<'a> Args<'a> {
    pub fn new(args: &'a [OscArg]) -> Args<'a> {
        let mut tokens = Vec::with_capacity(args.len());
        flatten(args, &mut tokens);
        let remain = tokens.iter().map(Token::wire_size).sum();
        Args { tokens, pos: 0, remain }
    }

    /// Bytes of argument data not yet read.
    pub fn remain(&self) -> usize {
        self.remain
    }

    /// Whether any argument (even a zero-size marker) is left.
    pub fn has_more(&self) -> bool {
        self.pos < self.tokens.len()
    }

    /// The type tag of the next argument, or `default` when none is left.
    pub fn next_tag(&self, default: char) -> char {
        self.tokens.get(self.pos).map(Token::tag).unwrap_or(default)
    }

    fn advance(&mut self) -> Option<Token<'a>> {
        let t = self.tokens.get(self.pos)?.clone();
        self.pos += 1;
        self.remain -= t.wire_size();
        Some(t)
    }

    /// The arguments not read yet, as OSC arguments again (arrays nested
    /// as they came; a marker without its pair is dropped).
    pub fn rest(&self) -> Vec<OscArg> {
        let mut stack: Vec<Vec<OscArg>> = vec![Vec::new()];
        for t in self.tokens.iter().skip(self.pos) {
            let arg = match t {
                Token::Int(v) => OscArg::Int(*v),
                Token::Float(v) => OscArg::Float(*v),
                Token::Double(v) => OscArg::Double(*v),
                Token::Long(v) => OscArg::Long(*v),
                Token::Str(s) => OscArg::Str((*s).to_string()),
                Token::Blob(b) => OscArg::Blob(b.to_vec()),
                Token::Open => {
                    stack.push(Vec::new());
                    continue;
                }
                Token::Close => match stack.len() {
                    1 => continue,
                    _ => OscArg::Array(stack.pop().unwrap_or_default()),
                },
                Token::Other(_) => continue,
            };
            if let Some(top) = stack.last_mut() {
                top.push(arg);
            }
        }
        while stack.len() > 1 {
            let inner = stack.pop().unwrap_or_default();
            if let Some(top) = stack.last_mut() {
                top.push(OscArg::Array(inner));
            }
        }
        stack.pop().unwrap_or_default()
    }

    /// Skips one argument (an array marker, for instance).
    pub fn skip(&mut self) {
        self.advance();
    }

    pub fn geti(&mut self, default: i32) -> i32 {
        match self.advance() {
            Some(Token::Int(v)) => v,
            Some(Token::Float(v)) => float_to_i32(v as f64),
            Some(Token::Double(v)) => float_to_i32(v),
            Some(Token::Long(v)) => v as i32,
            _ => default,
        }
    }

    pub fn getf(&mut self, default: f32) -> f32 {
        match self.advance() {
            Some(Token::Int(v)) => v as f32,
            Some(Token::Float(v)) => v,
            Some(Token::Double(v)) => v as f32,
            Some(Token::Long(v)) => v as f32,
            _ => default,
        }
    }

    /// The next argument if it is a string; otherwise `None`, and the
    /// argument is consumed all the same.
    pub fn gets(&mut self) -> Option<&'a str> {
        match self.advance() {
            Some(Token::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The next argument if it is a blob (a completion message).
    pub fn getb(&mut self) -> Option<&'a [u8]> {
        match self.tokens.get(self.pos) {
            Some(Token::Blob(_)) => match self.advance() {
                Some(Token::Blob(b)) => Some(b),
                _ => None,
            },
            _ => None,
        }
    }

    /// scsynth's optional trailing completion message: taken if the next
    /// argument is a blob, skipped otherwise.
    pub fn completion(&mut self) -> Option<&'a [u8]> {
        if self.next_tag('\0') == 'b' {
            self.getb()
        } else {
            None
        }
    }
}

/// The first argument read as `geti(default)` reads it, without building an
/// argument reader (the audio thread uses it to find the buffer an
/// asynchronous command will touch, and must agree with the command).
pub fn first_i32(args: &[OscArg], default: i32) -> i32 {
    match args.first() {
        Some(OscArg::Int(v)) => *v,
        Some(OscArg::Float(v)) => float_to_i32(f64::from(*v)),
        Some(OscArg::Double(v)) => float_to_i32(*v),
        Some(OscArg::Long(v)) => *v as i32,
        _ => default,
    }
}

/// A float converted to int the way scsynth's C cast does on x86: out of
/// range or NaN gives `i32::MIN` (the "integer indefinite" value), so a huge
/// count sent as a float loops zero times there, and here.
pub fn float_to_i32(v: f64) -> i32 {
    if !(-2_147_483_648.0..2_147_483_648.0).contains(&v) {
        i32::MIN
    } else {
        v as i32
    }
}

/// `atoi` on the digits after a bus-map prefix ("c12" → 12), as scsynth.
pub fn atoi(s: &str) -> i32 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        v = (v * 10 + (b - b'0') as i64).min(i32::MAX as i64 + 1);
    }
    (if neg { -v } else { v }) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_gives_back_what_was_not_read_with_arrays_nested() {
        let inner = vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(2.0)])];
        let args = vec![OscArg::Int(0), OscArg::Str("gen".into()), OscArg::Array(inner.clone()), OscArg::Float(3.0)];
        let mut a = Args::new(&args);
        assert_eq!(a.geti(-1), 0);
        assert_eq!(a.gets(), Some("gen"));
        assert_eq!(a.rest(), vec![OscArg::Array(inner), OscArg::Float(3.0)]);
        a.skip();
        // Inside the array: its close marker has no open one left, and is dropped.
        assert_eq!(a.rest(), vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(2.0)]), OscArg::Float(3.0)]);
    }

    #[test]
    fn numbers_convert_and_missing_values_take_defaults() {
        let args = vec![OscArg::Float(3.7), OscArg::Int(2), OscArg::Str("x".into())];
        let mut a = Args::new(&args);
        assert_eq!(a.remain(), 12);
        assert_eq!(a.geti(0), 3);
        assert_eq!(a.getf(0.0), 2.0);
        assert_eq!(a.next_tag('f'), 's');
        assert_eq!(a.gets(), Some("x"));
        assert_eq!(a.geti(7), 7);
        assert_eq!(a.remain(), 0);
    }

    #[test]
    fn arrays_appear_as_markers_that_take_no_bytes() {
        let args = vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(1.0), OscArg::Float(2.0)])];
        let mut a = Args::new(&args);
        a.geti(0);
        assert_eq!(a.next_tag('f'), '[');
        assert_eq!(a.remain(), 8);
        a.skip();
        assert_eq!(a.getf(0.0), 1.0);
        assert_eq!(a.getf(0.0), 2.0);
        assert_eq!(a.next_tag('f'), ']');
    }

    #[test]
    fn out_of_range_floats_become_int_min_as_on_x86() {
        let args = vec![OscArg::Float(1e30), OscArg::Float(f32::NAN), OscArg::Float(-2.9)];
        let mut a = Args::new(&args);
        assert_eq!(a.geti(0), i32::MIN);
        assert_eq!(a.geti(0), i32::MIN);
        assert_eq!(a.geti(0), -2);
    }

    #[test]
    fn first_i32_reads_as_geti_does() {
        let cases = [
            vec![OscArg::Str("3".into())],
            vec![OscArg::Blob(vec![1, 2, 3])],
            vec![OscArg::Nil],
            vec![OscArg::True],
            vec![OscArg::Long((1 << 40) + 1)],
            vec![OscArg::Double(1e300)],
            vec![OscArg::Float(f32::NAN)],
            vec![OscArg::Array(vec![OscArg::Int(4)])],
            vec![],
        ];
        for args in cases {
            assert_eq!(first_i32(&args, 0), Args::new(&args).geti(0), "{args:?}");
        }
    }

    #[test]
    fn bus_map_strings_parse_like_atoi() {
        assert_eq!(atoi("12"), 12);
        assert_eq!(atoi("3x"), 3);
        assert_eq!(atoi(""), 0);
        assert_eq!(atoi("-1"), -1);
    }
}
