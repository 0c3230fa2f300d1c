//! Non-real-time score files: a sequence of `[int32 big-endian length][OSC
//! bundle of that many bytes]`, the format `scsynth -N` reads.
//!
//! How scsynth treats a score (and what a renderer built on this reader should
//! mirror):
//! - Time tags are relative to the start of the render, in seconds:
//!   `seconds = tag / 2^32` (tag 0 is the first sample). There is no
//!   "immediately" value here: 0 and 1 are ordinary (very early) times.
//! - A bundle is performed at the control block whose span contains its time;
//!   its messages get the sample offset of that time within the block.
//! - Bundles must come in non-decreasing time order; a bundle earlier than the
//!   previous one stops the render with an error.
//! - Every packet must be a bundle; a bare message aborts the render ("not a
//!   bundle"). The elements of a bundle are performed as messages: a nested
//!   bundle is not unpacked there (scsynth would look up a command named
//!   `#bundle` and fail it).
//! - The render ends after the last bundle has been performed, so the final
//!   bundle's time sets the length of the output (conventionally it holds
//!   `/nrt_end` or an empty message list).
//! - An empty file is an error. A file whose last length field is cut short
//!   (1 to 3 bytes left) ends scsynth's score quietly; this reader reports
//!   it as truncated.
//! - A length above 2^30 is refused.

use crate::osc::{self, DecodeError, OscBundle, OscPacket};
use std::io::{self, Read, Write};
use thiserror::Error;

/// scsynth refuses score packets longer than this.
pub const MAX_PACKET_LEN: usize = 1 << 30;

/// Seconds of a score time tag.
pub fn tag_to_seconds(tag: u64) -> f64 {
    tag as f64 / 4_294_967_296.0
}

/// The score time tag for `seconds` after the start (rounded to nearest).
pub fn seconds_to_tag(seconds: f64) -> u64 {
    (seconds * 4_294_967_296.0).round() as u64
}

/// A problem in a score file, with the byte offset of the packet (its length
/// field) or of the problem inside it.
#[derive(Debug, Error)]
pub enum ScoreError {
    #[error("score byte {offset}: packet length {length} is not valid (must be 16..=2^30 and a multiple of 4)")]
    BadLength { offset: usize, length: i64 },
    #[error("score byte {offset}: packet claims {length} bytes but the file ends after {available}")]
    Truncated { offset: usize, length: usize, available: usize },
    #[error("score byte {offset}: packet is not a bundle (every score packet must start with #bundle)")]
    NotABundle { offset: usize },
    #[error("score packet at byte {offset}: {source}")]
    BadContents { offset: usize, source: DecodeError },
    #[error("reading score at byte {offset}: {source}")]
    Io { offset: usize, source: io::Error },
}

impl ScoreError {
    /// Byte offset of the problem within the score file.
    pub fn offset(&self) -> usize {
        match self {
            ScoreError::BadLength { offset, .. }
            | ScoreError::Truncated { offset, .. }
            | ScoreError::NotABundle { offset }
            | ScoreError::Io { offset, .. } => *offset,
            ScoreError::BadContents { source, .. } => source.offset,
        }
    }
}

/// Reads bundles from a score, yielding `(time tag, bundle, byte offset of the
/// packet's length field)`. Stops at the first error (the iterator then ends).
pub struct ScoreReader<R: Read> {
    input: R,
    offset: usize,
    done: bool,
}

impl<'a> ScoreReader<&'a [u8]> {
    /// A reader over an in-memory score.
    pub fn from_bytes(bytes: &'a [u8]) -> Self {
        ScoreReader::new(bytes)
    }
}

impl<R: Read> ScoreReader<R> {
    pub fn new(input: R) -> Self {
        ScoreReader { input, offset: 0, done: false }
    }

    /// Byte offset of the next packet.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Reads up to `buf.len()` bytes; returns how many arrived before EOF.
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    fn next_packet(&mut self) -> Option<Result<(u64, OscBundle, usize), ScoreError>> {
        self.next_packet_with(|data| match osc::decode(data)? {
            OscPacket::Bundle(b) => Ok(Some((b.time, b))),
            OscPacket::Message(_) => Ok(None),
        })
    }

    /// The next bundle as `decode` makes it of the packet's bytes (`None`
    /// for a packet that is no bundle), with its time tag and the byte
    /// offset of its length field; errors as the iterator's. After an error
    /// the reader gives nothing more.
    pub fn next_with<T>(
        &mut self,
        decode: impl FnOnce(&[u8]) -> Result<Option<(u64, T)>, DecodeError>,
    ) -> Option<Result<(u64, T, usize), ScoreError>> {
        if self.done {
            return None;
        }
        let item = self.next_packet_with(decode);
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }

    fn next_packet_with<T>(
        &mut self,
        decode: impl FnOnce(&[u8]) -> Result<Option<(u64, T)>, DecodeError>,
    ) -> Option<Result<(u64, T, usize), ScoreError>> {
        let at = self.offset;
        let mut len_bytes = [0u8; 4];
        let got = match self.fill(&mut len_bytes) {
            Ok(n) => n,
            Err(source) => return Some(Err(ScoreError::Io { offset: at, source })),
        };
        if got == 0 {
            return None;
        }
        if got < 4 {
            // scsynth would quietly stop here; a cut-off length field means the
            // file was truncated, which the user should hear about.
            return Some(Err(ScoreError::Truncated { offset: at, length: 4, available: got }));
        }
        let length = i32::from_be_bytes(len_bytes);
        if length < 16 || length as usize > MAX_PACKET_LEN || length % 4 != 0 {
            return Some(Err(ScoreError::BadLength { offset: at, length: length as i64 }));
        }
        let length = length as usize;
        // Read in chunks so a lying length costs at most what the file holds.
        let mut data = Vec::with_capacity(length.min(1 << 16));
        let mut chunk = [0u8; 8192];
        while data.len() < length {
            let want = (length - data.len()).min(chunk.len());
            match self.fill(&mut chunk[..want]) {
                Ok(n) => {
                    data.extend_from_slice(&chunk[..n]);
                    if n < want {
                        return Some(Err(ScoreError::Truncated { offset: at, length, available: data.len() }));
                    }
                }
                Err(source) => return Some(Err(ScoreError::Io { offset: at + 4 + data.len(), source })),
            }
        }
        self.offset = at + 4 + length;
        if !osc::is_bundle(&data) {
            return Some(Err(ScoreError::NotABundle { offset: at + 4 }));
        }
        match decode(&data) {
            Ok(Some((time, b))) => Some(Ok((time, b, at))),
            Ok(None) => Some(Err(ScoreError::NotABundle { offset: at + 4 })),
            Err(mut source) => {
                source.offset += at + 4;
                Some(Err(ScoreError::BadContents { offset: at, source }))
            }
        }
    }
}

impl<R: Read> Iterator for ScoreReader<R> {
    type Item = Result<(u64, OscBundle, usize), ScoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_packet();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Writes bundles in score format.
pub struct ScoreWriter<W: Write> {
    output: W,
    scratch: Vec<u8>,
}

impl<W: Write> ScoreWriter<W> {
    pub fn new(output: W) -> Self {
        ScoreWriter { output, scratch: Vec::new() }
    }

    /// Appends one bundle (length prefix, then the bundle bytes).
    pub fn write_bundle(&mut self, bundle: &OscBundle) -> io::Result<()> {
        self.scratch.clear();
        bundle.encode_into(&mut self.scratch);
        let len = i32::try_from(self.scratch.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bundle longer than 2^31 bytes"))?;
        self.output.write_all(&len.to_be_bytes())?;
        self.output.write_all(&self.scratch)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.output.flush()
    }

    pub fn into_inner(self) -> W {
        self.output
    }
}

/// Encodes a whole score into bytes.
pub fn encode_score<'a>(bundles: impl IntoIterator<Item = &'a OscBundle>) -> Vec<u8> {
    let mut w = ScoreWriter::new(Vec::new());
    for b in bundles {
        // Writing to a Vec cannot fail short of a >2 GiB bundle.
        if w.write_bundle(b).is_err() {
            break;
        }
    }
    w.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::osc::{OscArg, OscMessage};

    fn sample_score() -> Vec<OscBundle> {
        vec![
            OscBundle::new(
                0,
                vec![OscMessage::new("/g_new", vec![OscArg::Int(1), OscArg::Int(0), OscArg::Int(0)]).into()],
            ),
            OscBundle::new(
                seconds_to_tag(0.5),
                vec![OscMessage::new(
                    "/s_new",
                    vec!["sine".into(), 1000.into(), 0.into(), 1.into(), "freq".into(), 440.0f32.into()],
                )
                .into()],
            ),
            OscBundle::new(seconds_to_tag(2.0), vec![OscMessage::new("/n_free", vec![1000.into()]).into()]),
            OscBundle::new(seconds_to_tag(3.0), vec![]),
        ]
    }

    #[test]
    fn score_round_trips_through_writer_and_reader() {
        let score = sample_score();
        let bytes = encode_score(&score);
        let read: Vec<_> = ScoreReader::from_bytes(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(read.len(), score.len());
        let mut expected_offset = 0;
        for ((time, bundle, offset), original) in read.iter().zip(&score) {
            assert_eq!(*time, original.time);
            assert_eq!(bundle, original);
            assert_eq!(*offset, expected_offset);
            expected_offset += 4 + original.encode().len();
        }
        assert_eq!(tag_to_seconds(read[1].0), 0.5);
    }

    #[test]
    fn empty_score_yields_nothing() {
        assert_eq!(ScoreReader::from_bytes(&[]).count(), 0);
    }

    #[test]
    fn truncated_last_bundle_names_its_offset() {
        let score = sample_score();
        let bytes = encode_score(&score);
        let last_at = bytes.len() - 4 - score[3].encode().len();
        let cut = &bytes[..bytes.len() - 3];
        let results: Vec<_> = ScoreReader::from_bytes(cut).collect();
        assert_eq!(results.len(), 4);
        let err = results[3].as_ref().unwrap_err();
        assert!(matches!(err, ScoreError::Truncated { .. }), "{err}");
        assert_eq!(err.offset(), last_at);
    }

    #[test]
    fn short_trailing_length_field_is_reported_as_truncation() {
        let mut bytes = encode_score(&sample_score());
        let at = bytes.len();
        bytes.extend_from_slice(&[0, 0]);
        let results: Vec<_> = ScoreReader::from_bytes(&bytes).collect();
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 4);
        let err = results[4].as_ref().unwrap_err();
        assert!(matches!(err, ScoreError::Truncated { .. }), "{err}");
        assert_eq!(err.offset(), at);
    }

    #[test]
    fn bare_message_is_not_a_bundle() {
        let mut bytes = encode_score(&sample_score()[..1]);
        let msg = OscMessage::new("/n_free", vec![1.into()]).encode();
        let at = bytes.len();
        bytes.extend_from_slice(&(msg.len() as i32).to_be_bytes());
        bytes.extend_from_slice(&msg);
        let results: Vec<_> = ScoreReader::from_bytes(&bytes).collect();
        let err = results[1].as_ref().unwrap_err();
        assert!(matches!(err, ScoreError::NotABundle { .. }));
        assert_eq!(err.offset(), at + 4);
    }

    #[test]
    fn negative_or_huge_length_is_a_bad_length() {
        let mut bytes = encode_score(&sample_score()[..2]);
        let at = bytes.len();
        bytes.extend_from_slice(&(-8i32).to_be_bytes());
        let err = ScoreReader::from_bytes(&bytes).nth(2).unwrap().unwrap_err();
        assert!(matches!(err, ScoreError::BadLength { length: -8, .. }));
        assert_eq!(err.offset(), at);

        let huge = i32::MAX.to_be_bytes();
        let err = ScoreReader::from_bytes(&huge).next().unwrap().unwrap_err();
        assert!(matches!(err, ScoreError::BadLength { .. }));
    }

    #[test]
    fn corrupt_bundle_contents_name_the_byte_in_the_file() {
        let score = sample_score();
        let mut bytes = encode_score(&score);
        // Second packet: corrupt the type tag of the /s_new message.
        let second_at = 4 + score[0].encode().len();
        let inner = &bytes[second_at..];
        let pos = inner.windows(7).position(|w| w == b",siiisf").unwrap();
        bytes[second_at + pos + 1] = b'?';
        let results: Vec<_> = ScoreReader::from_bytes(&bytes).collect();
        assert!(results[0].is_ok());
        let err = results[1].as_ref().unwrap_err();
        assert!(matches!(err, ScoreError::BadContents { .. }));
        assert_eq!(err.offset(), second_at + pos + 1);
        assert_eq!(results.len(), 2, "reading stops at the first error");
    }
}
