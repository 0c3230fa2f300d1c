//! A bounds-checked big-endian cursor that knows which def it is inside.

use crate::error::{DefLabel, SynthDefError};

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The def being read, for error messages; `None` until its name is known.
    pub(crate) def: Option<String>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], pos: usize) -> Self {
        Reader {
            bytes,
            pos,
            def: None,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    pub(crate) fn label(&self) -> DefLabel {
        DefLabel(self.def.clone())
    }

    /// Fails unless `count` items of at least `min_size` bytes each can still
    /// follow, so that a forged count never drives an allocation.
    pub(crate) fn ensure(
        &self,
        count: u64,
        min_size: u64,
        what: impl FnOnce() -> String,
    ) -> Result<(), SynthDefError> {
        let needed = count.saturating_mul(min_size);
        if needed > self.remaining() as u64 {
            return Err(self.truncated(needed, what()));
        }
        Ok(())
    }

    fn truncated(&self, needed: u64, what: String) -> SynthDefError {
        SynthDefError::Truncated {
            def: self.label(),
            what,
            needed,
            available: self.remaining(),
            offset: self.pos,
        }
    }

    pub(crate) fn take(
        &mut self,
        len: usize,
        what: impl FnOnce() -> String,
    ) -> Result<&'a [u8], SynthDefError> {
        if len > self.remaining() {
            return Err(self.truncated(len as u64, what()));
        }
        let slice = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(slice)
    }

    fn array<const N: usize>(
        &mut self,
        what: impl FnOnce() -> String,
    ) -> Result<[u8; N], SynthDefError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: impl FnOnce() -> String) -> Result<u8, SynthDefError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn i16(&mut self, what: impl FnOnce() -> String) -> Result<i16, SynthDefError> {
        Ok(i16::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn i32(&mut self, what: impl FnOnce() -> String) -> Result<i32, SynthDefError> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn f32(&mut self, what: impl FnOnce() -> String) -> Result<f32, SynthDefError> {
        Ok(f32::from_be_bytes(self.array(what)?))
    }

    /// A signed integer of 2 or 4 bytes, widened to `i32`.
    pub(crate) fn int(
        &mut self,
        wide: bool,
        what: impl FnOnce() -> String,
    ) -> Result<i32, SynthDefError> {
        if wide {
            self.i32(what)
        } else {
            self.i16(what).map(i32::from)
        }
    }

    /// A signed count of 2 or 4 bytes that must not be negative.
    pub(crate) fn count(
        &mut self,
        wide: bool,
        what: impl Fn() -> String,
    ) -> Result<u32, SynthDefError> {
        let offset = self.pos;
        let value = self.int(wide, &what)?;
        u32::try_from(value).map_err(|_| SynthDefError::NegativeCount {
            def: self.label(),
            what: what(),
            value,
            offset,
        })
    }

    /// A length-prefixed string of at most `max` bytes.
    pub(crate) fn pstring(
        &mut self,
        max: usize,
        what: impl Fn() -> String,
    ) -> Result<String, SynthDefError> {
        let offset = self.pos;
        let len = usize::from(self.u8(&what)?);
        let bytes = self.take(len, &what)?;
        if len > max {
            return Err(SynthDefError::NameTooLong {
                def: self.label(),
                what: what(),
                len,
                max,
                offset,
            });
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(SynthDefError::NameNotUtf8 {
                def: self.label(),
                what: what(),
                offset,
            }),
        }
    }
}
