//! scsynth's argument iterator (`sc_msg_iter`): typed reads with defaults,
//! numbers converted between int and float, arrays seen as `[` and `]`
//! markers taking no bytes, and "bytes remaining" counted as on the wire, so
//! that a loop over argument groups stops exactly where scsynth's stops.
//! [`crate::parse_command`] reads every command through it.

use crate::osc::OscArg;
use smallvec::SmallVec;

/// One argument, arrays flattened into markers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Token<'a> {
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
    fn tag(self) -> char {
        match self {
            Token::Int(_) => 'i',
            Token::Float(_) => 'f',
            Token::Double(_) => 'd',
            Token::Long(_) => 'h',
            Token::Str(_) => 's',
            Token::Blob(_) => 'b',
            Token::Open => '[',
            Token::Close => ']',
            Token::Other(c) => c,
        }
    }

    /// The argument's size on the wire (a string with its terminator and
    /// padding, a blob with its length and padding).
    pub(crate) fn wire_size(self) -> usize {
        match self {
            Token::Int(_) | Token::Float(_) => 4,
            Token::Double(_) | Token::Long(_) => 8,
            Token::Str(s) => (s.len() + 4) & !3,
            Token::Blob(b) => 4 + ((b.len() + 3) & !3),
            Token::Open | Token::Close => 0,
            Token::Other('t') => 8,
            Token::Other('c' | 'r' | 'm') => 4,
            Token::Other(_) => 0,
        }
    }
}

/// Arguments as a list of tokens; messages of up to this many need no
/// allocation to read.
pub(crate) type TokenList<'a> = SmallVec<[Token<'a>; 16]>;

fn flatten<'a>(args: &'a [OscArg], out: &mut TokenList<'a>) {
    for arg in args {
        if let OscArg::Array(inner) = arg {
            out.push(Token::Open);
            flatten(inner, out);
            out.push(Token::Close);
        } else {
            out.push(token(arg));
        }
    }
}

/// A message's arguments read in order, as scsynth reads them.
pub struct ScArgs<'a> {
    tokens: Tokens<'a>,
    pos: usize,
    remain: usize,
}

/// The arguments as read: the message's own list when it holds no array
/// (most do, and then reading allocates nothing), flattened otherwise, or
/// read straight from the message's bytes.
// An `ScArgs` lives on the stack while one message is read: the list held
// in place is what spares the allocation.
#[allow(clippy::large_enum_variant)]
enum Tokens<'a> {
    Flat(&'a [OscArg]),
    Listed(TokenList<'a>),
}

fn token(arg: &OscArg) -> Token<'_> {
    match arg {
        OscArg::Int(v) => Token::Int(*v),
        OscArg::Float(v) => Token::Float(*v),
        OscArg::Double(v) => Token::Double(*v),
        OscArg::Long(v) => Token::Long(*v),
        OscArg::Str(s) => Token::Str(s),
        OscArg::Blob(b) => Token::Blob(b),
        // Only reached for a flat list, which holds no array.
        OscArg::Array(_) => Token::Open,
        other => Token::Other(other.type_tag()),
    }
}

impl<'a> ScArgs<'a> {
    pub fn new(args: &'a [OscArg]) -> ScArgs<'a> {
        let tokens = if args.iter().any(|a| matches!(a, OscArg::Array(_))) {
            let mut tokens = TokenList::new();
            flatten(args, &mut tokens);
            Tokens::Listed(tokens)
        } else {
            Tokens::Flat(args)
        };
        let mut a = ScArgs { tokens, pos: 0, remain: 0 };
        a.remain = (0..a.len()).filter_map(|i| a.token(i)).map(|t| t.wire_size()).sum();
        a
    }

    /// The arguments as tokens already read from a message's bytes.
    pub(crate) fn from_tokens(tokens: TokenList<'a>) -> ScArgs<'a> {
        let remain = tokens.iter().map(|t| t.wire_size()).sum();
        ScArgs { tokens: Tokens::Listed(tokens), pos: 0, remain }
    }

    fn len(&self) -> usize {
        match &self.tokens {
            Tokens::Flat(args) => args.len(),
            Tokens::Listed(tokens) => tokens.len(),
        }
    }

    fn token(&self, i: usize) -> Option<Token<'a>> {
        match &self.tokens {
            Tokens::Flat(args) => args.get(i).map(token),
            Tokens::Listed(tokens) => tokens.get(i).copied(),
        }
    }

    /// Bytes of argument data not read yet.
    pub fn remain(&self) -> usize {
        self.remain
    }

    /// Whether any argument, even one that takes no bytes, is left.
    pub fn has_more(&self) -> bool {
        self.pos < self.len()
    }

    /// The next argument's type tag, or `default` past the end.
    pub fn next_tag(&self, default: char) -> char {
        self.token(self.pos).map_or(default, |t| t.tag())
    }

    fn advance(&mut self) -> Option<Token<'a>> {
        let t = self.token(self.pos)?;
        self.pos += 1;
        self.remain -= t.wire_size();
        Some(t)
    }

    /// Passes over one argument.
    pub fn skip(&mut self) {
        self.advance();
    }

    /// An integer: floats truncated (out of range gives `i32::MIN`, as x86
    /// converts), anything else, or nothing, gives `default`; the argument
    /// is consumed whatever it is.
    pub fn geti(&mut self, default: i32) -> i32 {
        match self.advance() {
            Some(Token::Int(v)) => v,
            Some(Token::Float(v)) => float_to_i32(f64::from(v)),
            Some(Token::Double(v)) => float_to_i32(v),
            Some(Token::Long(v)) => v as i32,
            _ => default,
        }
    }

    /// A float: numbers converted, anything else (consumed) gives `default`.
    pub fn getf(&mut self, default: f32) -> f32 {
        match self.advance() {
            Some(Token::Int(v)) => v as f32,
            Some(Token::Float(v)) => v,
            Some(Token::Double(v)) => v as f32,
            Some(Token::Long(v)) => v as f32,
            _ => default,
        }
    }

    /// The next argument as both `geti(0)` and `getf(0.0)` read it, and
    /// whether it took bytes on the wire; consumed.
    pub fn get_number(&mut self) -> (i32, f32, bool) {
        let before = self.remain;
        let pos = self.pos;
        let int = self.geti(0);
        self.pos = pos;
        self.remain = before;
        let float = self.getf(0.0);
        (int, float, self.remain < before)
    }

    /// The arguments not read yet, as OSC arguments again: arrays nested
    /// as they came (a close marker without its open one is dropped, an
    /// open one without its close is closed at the end), and arguments
    /// with no value (`T`, `F`, `N`, `I`, ...) left out.
    pub fn rest(&self) -> Vec<OscArg> {
        let mut stack: Vec<Vec<OscArg>> = vec![Vec::new()];
        for t in (self.pos..self.len()).filter_map(|i| self.token(i)) {
            let arg = match t {
                Token::Int(v) => OscArg::Int(v),
                Token::Float(v) => OscArg::Float(v),
                Token::Double(v) => OscArg::Double(v),
                Token::Long(v) => OscArg::Long(v),
                Token::Str(s) => OscArg::Str(s.to_owned()),
                Token::Blob(b) => OscArg::Blob(b.to_vec()),
                Token::Open => {
                    stack.push(Vec::new());
                    continue;
                }
                Token::Close if stack.len() == 1 => continue,
                Token::Close => OscArg::Array(stack.pop().unwrap_or_default()),
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

    /// A string, or `None` (the argument is consumed all the same).
    pub fn gets(&mut self) -> Option<&'a str> {
        match self.advance() {
            Some(Token::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// A blob, taken only when the next argument is one.
    pub fn getb(&mut self) -> Option<&'a [u8]> {
        match self.token(self.pos) {
            Some(Token::Blob(b)) => {
                self.advance();
                Some(b)
            }
            _ => None,
        }
    }
}

/// A float converted to int the way scsynth's C cast does on x86: out of
/// range or NaN gives `i32::MIN` (the "integer indefinite" value).
pub fn float_to_i32(v: f64) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&v) {
        v as i32
    } else {
        i32::MIN
    }
}

/// C's `atoi`: optional blanks and sign, then leading digits (none gives 0).
pub fn atoi(s: &str) -> i32 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + i64::from(b - b'0')).min(i64::from(i32::MAX) + 1);
    }
    (if neg { -v } else { v }) as i32
}

/// Arguments as a plugin reads them with scsynth's argument iterator: the
/// argument part of an OSC message (the type tag string from its comma on,
/// then the values), as `/cmd`, `/u_cmd` and a plugin's `/b_gen` generator
/// receive it. The typed command keeps the arguments as they came; this is
/// their encoding for the plugin host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgBlock(Vec<u8>);

impl ArgBlock {
    /// The block holding `args` (nested arrays kept as `[` `]` tags).
    pub fn of(args: &[OscArg]) -> ArgBlock {
        let bytes = crate::osc::OscMessage::new("/", args.to_vec()).encode();
        // The address "/" takes the first four bytes.
        ArgBlock(bytes.get(4..).map(<[u8]>::to_vec).unwrap_or_default())
    }

    /// The bytes, from the type tag string on.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_convert_default_and_count_bytes() {
        let args = vec![OscArg::Float(3.7), OscArg::Int(2), OscArg::Str("x".into())];
        let mut a = ScArgs::new(&args);
        assert_eq!(a.remain(), 12);
        assert_eq!(a.geti(0), 3);
        assert_eq!(a.getf(0.0), 2.0);
        assert_eq!(a.next_tag('f'), 's');
        assert_eq!(a.gets(), Some("x"));
        assert_eq!(a.geti(7), 7);
        assert_eq!(a.remain(), 0);
        let args = vec![OscArg::Float(1e30), OscArg::Double(f64::NAN), OscArg::Float(-2.9)];
        let mut a = ScArgs::new(&args);
        assert_eq!([a.geti(0), a.geti(0), a.geti(0)], [i32::MIN, i32::MIN, -2]);
    }

    #[test]
    fn arrays_are_markers_without_bytes() {
        let args = vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(1.0)]), OscArg::Nil];
        let mut a = ScArgs::new(&args);
        a.geti(0);
        assert_eq!((a.next_tag('f'), a.remain()), ('[', 4));
        a.skip();
        assert_eq!(a.getf(0.0), 1.0);
        assert_eq!((a.next_tag('f'), a.remain(), a.has_more()), (']', 0, true));
        a.skip();
        assert_eq!(a.next_tag('f'), 'N');
        a.skip();
        assert!(!a.has_more());
    }

    #[test]
    fn the_rest_is_given_back_with_arrays_nested() {
        let inner = vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(2.0)])];
        let args = vec![OscArg::Int(0), OscArg::Str("gen".into()), OscArg::Array(inner.clone()), OscArg::True];
        let mut a = ScArgs::new(&args);
        a.geti(0);
        a.gets();
        assert_eq!(a.rest(), vec![OscArg::Array(inner)]);
        a.skip();
        // Inside the array: its close marker has no open one left, and is dropped.
        assert_eq!(a.rest(), vec![OscArg::Int(1), OscArg::Array(vec![OscArg::Float(2.0)])]);
    }

    #[test]
    fn atoi_reads_leading_digits() {
        assert_eq!([atoi("12"), atoi("3x"), atoi(""), atoi("-1"), atoi(" +7")], [12, 3, 0, -1, 7]);
    }

    #[test]
    fn arg_block_is_the_message_after_its_address() {
        let block = super::ArgBlock::of(&[OscArg::Int(7), OscArg::Str("ab".into())]);
        assert_eq!(block.as_bytes(), b",is\0\0\0\0\x07ab\0\0");
        assert_eq!(super::ArgBlock::of(&[]).as_bytes(), b",\0\0\0");
    }
}
