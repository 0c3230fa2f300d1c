//! Header (container) and sample formats, named as SuperCollider names them.

use std::ffi::c_int;

use crate::sys;
use crate::SoundFileError;

/// A sound file's container, as `/b_write` and `-N` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeaderFormat {
    Aiff,
    Wav,
    WavEx,
    /// Sun/NeXT `.au`.
    Next,
    Ircam,
    Raw,
    Mat4,
    Mat5,
    Paf,
    Svx,
    Nist,
    Voc,
    W64,
    Pvf,
    Xi,
    Htk,
    Sds,
    Avr,
    Sd2,
    Flac,
    Ogg,
    Caf,
    Rf64,
    Mpeg,
}

impl HeaderFormat {
    /// The header a name selects, ignoring case, with scsynth's table
    /// (`AIFC` is written as AIFF; `RIFF`/`WAVE` as WAV; `Sun` as NeXT).
    pub fn from_sc_name(name: &str) -> Result<HeaderFormat, SoundFileError> {
        const NAMES: &[(&str, HeaderFormat)] = &[
            ("aiff", HeaderFormat::Aiff),
            ("aifc", HeaderFormat::Aiff),
            ("riff", HeaderFormat::Wav),
            ("wavex", HeaderFormat::WavEx),
            ("wave", HeaderFormat::Wav),
            ("wav", HeaderFormat::Wav),
            ("sun", HeaderFormat::Next),
            ("ircam", HeaderFormat::Ircam),
            ("next", HeaderFormat::Next),
            ("raw", HeaderFormat::Raw),
            ("mat4", HeaderFormat::Mat4),
            ("mat5", HeaderFormat::Mat5),
            ("paf", HeaderFormat::Paf),
            ("svx", HeaderFormat::Svx),
            ("nist", HeaderFormat::Nist),
            ("voc", HeaderFormat::Voc),
            ("w64", HeaderFormat::W64),
            ("pvf", HeaderFormat::Pvf),
            ("xi", HeaderFormat::Xi),
            ("htk", HeaderFormat::Htk),
            ("sds", HeaderFormat::Sds),
            ("avr", HeaderFormat::Avr),
            ("sd2", HeaderFormat::Sd2),
            ("flac", HeaderFormat::Flac),
            ("ogg", HeaderFormat::Ogg),
            ("caf", HeaderFormat::Caf),
            ("rf64", HeaderFormat::Rf64),
            ("mpeg", HeaderFormat::Mpeg),
        ];
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, f)| f)
            .ok_or_else(|| SoundFileError::UnknownHeaderFormat(name.to_owned()))
    }

    pub(crate) fn to_sf(self) -> c_int {
        match self {
            HeaderFormat::Aiff => sys::SF_FORMAT_AIFF,
            HeaderFormat::Wav => sys::SF_FORMAT_WAV,
            HeaderFormat::WavEx => sys::SF_FORMAT_WAVEX,
            HeaderFormat::Next => sys::SF_FORMAT_AU,
            HeaderFormat::Ircam => sys::SF_FORMAT_IRCAM,
            HeaderFormat::Raw => sys::SF_FORMAT_RAW,
            HeaderFormat::Mat4 => sys::SF_FORMAT_MAT4,
            HeaderFormat::Mat5 => sys::SF_FORMAT_MAT5,
            HeaderFormat::Paf => sys::SF_FORMAT_PAF,
            HeaderFormat::Svx => sys::SF_FORMAT_SVX,
            HeaderFormat::Nist => sys::SF_FORMAT_NIST,
            HeaderFormat::Voc => sys::SF_FORMAT_VOC,
            HeaderFormat::W64 => sys::SF_FORMAT_W64,
            HeaderFormat::Pvf => sys::SF_FORMAT_PVF,
            HeaderFormat::Xi => sys::SF_FORMAT_XI,
            HeaderFormat::Htk => sys::SF_FORMAT_HTK,
            HeaderFormat::Sds => sys::SF_FORMAT_SDS,
            HeaderFormat::Avr => sys::SF_FORMAT_AVR,
            HeaderFormat::Sd2 => sys::SF_FORMAT_SD2,
            HeaderFormat::Flac => sys::SF_FORMAT_FLAC,
            HeaderFormat::Ogg => sys::SF_FORMAT_OGG,
            HeaderFormat::Caf => sys::SF_FORMAT_CAF,
            HeaderFormat::Rf64 => sys::SF_FORMAT_RF64,
            HeaderFormat::Mpeg => sys::SF_FORMAT_MPEG,
        }
    }

    pub(crate) fn from_sf(format: c_int) -> Option<HeaderFormat> {
        const ALL: &[HeaderFormat] = &[
            HeaderFormat::Aiff,
            HeaderFormat::Wav,
            HeaderFormat::WavEx,
            HeaderFormat::Next,
            HeaderFormat::Ircam,
            HeaderFormat::Raw,
            HeaderFormat::Mat4,
            HeaderFormat::Mat5,
            HeaderFormat::Paf,
            HeaderFormat::Svx,
            HeaderFormat::Nist,
            HeaderFormat::Voc,
            HeaderFormat::W64,
            HeaderFormat::Pvf,
            HeaderFormat::Xi,
            HeaderFormat::Htk,
            HeaderFormat::Sds,
            HeaderFormat::Avr,
            HeaderFormat::Sd2,
            HeaderFormat::Flac,
            HeaderFormat::Ogg,
            HeaderFormat::Caf,
            HeaderFormat::Rf64,
            HeaderFormat::Mpeg,
        ];
        let major = format & sys::SF_FORMAT_TYPEMASK;
        ALL.iter().copied().find(|h| h.to_sf() == major)
    }
}

/// How samples are encoded, as `/b_write` and `-N` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleFormat {
    Uint8,
    Int8,
    Int16,
    Int24,
    Int32,
    Float,
    Double,
    Mulaw,
    Alaw,
    Vorbis,
    Opus,
    Mp1,
    Mp2,
    Mp3,
}

impl SampleFormat {
    /// The encoding a name selects, ignoring case (`ulaw` is `mulaw`).
    pub fn from_sc_name(name: &str) -> Result<SampleFormat, SoundFileError> {
        const NAMES: &[(&str, SampleFormat)] = &[
            ("uint8", SampleFormat::Uint8),
            ("int8", SampleFormat::Int8),
            ("int16", SampleFormat::Int16),
            ("int24", SampleFormat::Int24),
            ("int32", SampleFormat::Int32),
            ("float", SampleFormat::Float),
            ("double", SampleFormat::Double),
            ("mulaw", SampleFormat::Mulaw),
            ("ulaw", SampleFormat::Mulaw),
            ("alaw", SampleFormat::Alaw),
            ("vorbis", SampleFormat::Vorbis),
            ("opus", SampleFormat::Opus),
            ("mp1", SampleFormat::Mp1),
            ("mp2", SampleFormat::Mp2),
            ("mp3", SampleFormat::Mp3),
        ];
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, f)| f)
            .ok_or_else(|| SoundFileError::UnknownSampleFormat(name.to_owned()))
    }

    pub(crate) fn to_sf(self) -> c_int {
        match self {
            SampleFormat::Uint8 => sys::SF_FORMAT_PCM_U8,
            SampleFormat::Int8 => sys::SF_FORMAT_PCM_S8,
            SampleFormat::Int16 => sys::SF_FORMAT_PCM_16,
            SampleFormat::Int24 => sys::SF_FORMAT_PCM_24,
            SampleFormat::Int32 => sys::SF_FORMAT_PCM_32,
            SampleFormat::Float => sys::SF_FORMAT_FLOAT,
            SampleFormat::Double => sys::SF_FORMAT_DOUBLE,
            SampleFormat::Mulaw => sys::SF_FORMAT_ULAW,
            SampleFormat::Alaw => sys::SF_FORMAT_ALAW,
            SampleFormat::Vorbis => sys::SF_FORMAT_VORBIS,
            SampleFormat::Opus => sys::SF_FORMAT_OPUS,
            SampleFormat::Mp1 => sys::SF_FORMAT_MPEG_LAYER_I,
            SampleFormat::Mp2 => sys::SF_FORMAT_MPEG_LAYER_II,
            SampleFormat::Mp3 => sys::SF_FORMAT_MPEG_LAYER_III,
        }
    }

    pub(crate) fn from_sf(format: c_int) -> Option<SampleFormat> {
        const ALL: &[SampleFormat] = &[
            SampleFormat::Uint8,
            SampleFormat::Int8,
            SampleFormat::Int16,
            SampleFormat::Int24,
            SampleFormat::Int32,
            SampleFormat::Float,
            SampleFormat::Double,
            SampleFormat::Mulaw,
            SampleFormat::Alaw,
            SampleFormat::Vorbis,
            SampleFormat::Opus,
            SampleFormat::Mp1,
            SampleFormat::Mp2,
            SampleFormat::Mp3,
        ];
        let minor = format & sys::SF_FORMAT_SUBMASK;
        ALL.iter().copied().find(|s| s.to_sf() == minor)
    }
}
