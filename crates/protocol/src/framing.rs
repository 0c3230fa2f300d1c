//! TCP framing: every packet, in both directions, is preceded by its length
//! as a big-endian int32 (scsynth's TCP protocol).

use std::io::{self, Read};

/// Why a stream of frames cannot go on; the connection is closed.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("invalid packet length {len} (allowed: 0 to {max} bytes)")]
    BadLength { len: i32, max: usize },
    #[error("connection closed inside a packet ({got} of {expected} bytes)")]
    Truncated { expected: usize, got: usize },
    #[error("receive failed: {0}")]
    Io(#[from] io::Error),
}

/// Reads one length-prefixed packet of at most `max` bytes; `Ok(None)` is a
/// clean end of the stream between packets. Memory grows with the bytes
/// that arrive, not with the length a frame claims.
pub fn read_frame<R: Read>(stream: &mut R, max: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut header = [0u8; 4];
    let mut got = 0;
    while got < header.len() {
        match stream.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated { expected: header.len(), got }),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A client that resets instead of closing has still just left.
            Err(e) if got == 0 && e.kind() == io::ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    let len = i32::from_be_bytes(header);
    let expected = usize::try_from(len).ok().filter(|&n| n <= max).ok_or(FrameError::BadLength { len, max })?;
    let mut data = Vec::with_capacity(expected.min(1 << 16));
    stream.take(expected as u64).read_to_end(&mut data)?;
    if data.len() < expected {
        return Err(FrameError::Truncated { expected, got: data.len() });
    }
    Ok(Some(data))
}

/// Appends `packet` to `out` with its length in front.
pub fn write_frame(out: &mut Vec<u8>, packet: &[u8]) {
    out.extend_from_slice(&(packet.len() as i32).to_be_bytes());
    out.extend_from_slice(packet);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_in_order_and_a_clean_end_is_none() {
        let mut bytes = Vec::new();
        write_frame(&mut bytes, b"/status\0,\0\0\0");
        write_frame(&mut bytes, b"");
        let mut r = bytes.as_slice();
        assert_eq!(read_frame(&mut r, 64).unwrap().unwrap(), b"/status\0,\0\0\0");
        assert_eq!(read_frame(&mut r, 64).unwrap().unwrap(), b"");
        assert!(read_frame(&mut r, 64).unwrap().is_none());
    }

    #[test]
    fn a_lying_length_is_an_error_without_allocating_it() {
        let mut r: &[u8] = &[0x7f, 0xff, 0xff, 0xff, 1, 2];
        assert!(matches!(read_frame(&mut r, 1 << 30), Err(FrameError::BadLength { .. })));
        let mut r: &[u8] = &[0, 0, 0, 100, 1, 2];
        assert!(matches!(read_frame(&mut r, 1 << 30), Err(FrameError::Truncated { expected: 100, got: 2 })));
        let mut r: &[u8] = &[0xff, 0xff, 0xff, 0xfc];
        assert!(matches!(read_frame(&mut r, 64), Err(FrameError::BadLength { len: -4, .. })));
        let mut r: &[u8] = &[0, 0];
        assert!(matches!(read_frame(&mut r, 64), Err(FrameError::Truncated { expected: 4, got: 2 })));
    }
}
