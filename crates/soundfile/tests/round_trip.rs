//! Files written here read back as the samples that went in, within each
//! encoding's precision, and failures name the file and the cause.

use std::path::PathBuf;

use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileError, SoundFileReader, SoundFileWriter};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("soundfile-tests");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// Two channels of distinct, in-range material.
fn test_signal(frames: usize) -> Vec<f32> {
    let mut v = Vec::with_capacity(frames * 2);
    for i in 0..frames {
        let t = i as f32 / frames as f32;
        v.push((t * 2.0 * std::f32::consts::PI * 3.0).sin() * 0.9);
        v.push(t * 1.8 - 0.9);
    }
    v
}

fn write_file(path: &PathBuf, header: HeaderFormat, sample: SampleFormat, channels: u32, data: &[f32]) {
    let mut w = SoundFileWriter::create(path, header, sample, channels, 48000.0).expect("create");
    w.write_f32(data).expect("write");
    w.close().expect("close");
}

fn read_all(path: &PathBuf) -> (SoundFileReader, Vec<f32>) {
    let mut r = SoundFileReader::open(path).expect("open");
    let mut out = vec![0.0; r.frames() as usize * r.channels() as usize];
    let got = r.read_f32(&mut out).expect("read");
    assert_eq!(got as u64, r.frames());
    (r, out)
}

#[test]
fn every_common_header_and_encoding_round_trips_within_its_precision() {
    let headers = [(HeaderFormat::Wav, "wav"), (HeaderFormat::Aiff, "aiff"), (HeaderFormat::Caf, "caf")];
    let samples = [
        (SampleFormat::Int16, 1.0 / 32768.0),
        (SampleFormat::Int24, 1.0 / 8_388_608.0),
        (SampleFormat::Int32, 1.0e-7),
        (SampleFormat::Float, 0.0),
        (SampleFormat::Double, 0.0),
    ];
    let data = test_signal(1000);
    for (header, ext) in headers {
        for (sample, tolerance) in samples {
            let path = scratch(&format!("rt-{sample:?}.{ext}"));
            write_file(&path, header, sample, 2, &data);
            let (r, back) = read_all(&path);
            assert_eq!(r.channels(), 2, "{header:?}/{sample:?}");
            assert_eq!(r.frames(), 1000, "{header:?}/{sample:?}");
            assert_eq!(r.sample_rate(), 48000.0, "{header:?}/{sample:?}");
            assert_eq!(r.header_format(), Some(header));
            assert_eq!(r.sample_format(), Some(sample));
            for (i, (a, b)) in data.iter().zip(&back).enumerate() {
                assert!(
                    (a - b).abs() <= tolerance,
                    "{header:?}/{sample:?} sample {i}: wrote {a}, read {b}"
                );
            }
        }
    }
}

#[test]
fn float_files_keep_samples_outside_unit_range() {
    let path = scratch("loud.wav");
    let data = [2.5f32, -3.0, 100.0, -0.25];
    write_file(&path, HeaderFormat::Wav, SampleFormat::Float, 1, &data);
    let (_, back) = read_all(&path);
    assert_eq!(back, data);
}

#[test]
fn integer_files_clip_loud_samples_instead_of_wrapping() {
    let path = scratch("clipped.aiff");
    write_file(&path, HeaderFormat::Aiff, SampleFormat::Int16, 1, &[1.5, -1.5, 0.5]);
    let (_, back) = read_all(&path);
    assert!(back[0] > 0.999, "positive overload should saturate, got {}", back[0]);
    assert!(back[1] <= -0.999, "negative overload should saturate, got {}", back[1]);
    assert!((back[2] - 0.5).abs() < 1.0 / 32768.0);
}

#[test]
fn seek_moves_reading_to_the_given_frame() {
    let path = scratch("seek.wav");
    let data: Vec<f32> = (0..100).map(|i| i as f32 / 128.0).collect();
    write_file(&path, HeaderFormat::Wav, SampleFormat::Float, 1, &data);
    let mut r = SoundFileReader::open(&path).unwrap();
    r.seek(90).unwrap();
    let mut out = [0.0f32; 20];
    assert_eq!(r.read_f32(&mut out).unwrap(), 10, "only 10 frames remain after frame 90");
    assert_eq!(&out[..10], &data[90..]);
    assert_eq!(r.read_f32(&mut out).unwrap(), 0, "end of file reads nothing");
}

#[test]
fn opening_a_missing_file_names_the_path_and_the_cause() {
    let err = SoundFileReader::open("/no/such/dir/missing.wav").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, SoundFileError::Open { .. }));
    assert!(msg.contains("/no/such/dir/missing.wav"), "{msg}");
    assert!(msg.contains("could not be opened"), "{msg}");
    assert!(msg.to_lowercase().contains("no such file"), "libsndfile's reason missing: {msg}");
}

#[test]
fn creating_in_a_missing_directory_fails_with_the_path() {
    let err = SoundFileWriter::create("/no/such/dir/out.wav", HeaderFormat::Wav, SampleFormat::Int16, 1, 44100.0)
        .unwrap_err();
    assert!(err.to_string().contains("/no/such/dir/out.wav"), "{err}");
}

#[test]
fn an_encoding_the_header_cannot_hold_is_refused_at_create() {
    // WAV has no signed 8-bit encoding; scsynth's `int8` + `wav` fails the same way.
    let path = scratch("int8.wav");
    let err = SoundFileWriter::create(&path, HeaderFormat::Wav, SampleFormat::Int8, 1, 44100.0).unwrap_err();
    assert!(matches!(err, SoundFileError::Open { .. }), "{err}");
}

#[test]
fn a_partial_frame_is_refused() {
    let path = scratch("partial.wav");
    let mut w = SoundFileWriter::create(&path, HeaderFormat::Wav, SampleFormat::Float, 2, 44100.0).unwrap();
    assert!(matches!(w.write_f32(&[0.0, 0.1, 0.2]), Err(SoundFileError::PartialFrame { .. })));
}

#[test]
fn dropping_a_writer_finishes_the_file() {
    let path = scratch("dropped.caf");
    {
        let mut w = SoundFileWriter::create(&path, HeaderFormat::Caf, SampleFormat::Int24, 1, 22050.0).unwrap();
        w.write_f32(&[0.25; 64]).unwrap();
    }
    let r = SoundFileReader::open(&path).unwrap();
    assert_eq!(r.frames(), 64);
    assert_eq!(r.sample_rate(), 22050.0);
}

#[test]
fn format_names_are_read_as_supercollider_reads_them() {
    assert_eq!(HeaderFormat::from_sc_name("WAV").unwrap(), HeaderFormat::Wav);
    assert_eq!(HeaderFormat::from_sc_name("wave").unwrap(), HeaderFormat::Wav);
    assert_eq!(HeaderFormat::from_sc_name("RIFF").unwrap(), HeaderFormat::Wav);
    assert_eq!(HeaderFormat::from_sc_name("aiff").unwrap(), HeaderFormat::Aiff);
    assert_eq!(HeaderFormat::from_sc_name("AIFC").unwrap(), HeaderFormat::Aiff);
    assert_eq!(HeaderFormat::from_sc_name("Sun").unwrap(), HeaderFormat::Next);
    assert_eq!(HeaderFormat::from_sc_name("next").unwrap(), HeaderFormat::Next);
    assert_eq!(HeaderFormat::from_sc_name("caf").unwrap(), HeaderFormat::Caf);
    assert_eq!(HeaderFormat::from_sc_name("w64").unwrap(), HeaderFormat::W64);
    assert_eq!(SampleFormat::from_sc_name("INT16").unwrap(), SampleFormat::Int16);
    assert_eq!(SampleFormat::from_sc_name("float").unwrap(), SampleFormat::Float);
    assert_eq!(SampleFormat::from_sc_name("ulaw").unwrap(), SampleFormat::Mulaw);
    assert_eq!(SampleFormat::from_sc_name("mulaw").unwrap(), SampleFormat::Mulaw);
}

#[test]
fn unknown_format_names_are_errors_that_quote_the_name() {
    let err = HeaderFormat::from_sc_name("mp4").unwrap_err();
    assert!(err.to_string().contains("'mp4'"), "{err}");
    let err = SampleFormat::from_sc_name("int12").unwrap_err();
    assert!(err.to_string().contains("'int12'"), "{err}");
    assert!(SampleFormat::from_sc_name("").is_err());
}
