//! Non-real-time rendering: a score file in, a sound file out, with
//! bundles performed at exactly the sample positions scsynth uses.

use crate::cli::Cli;
use magnetar_engine::{EngineOptions, OfflineEngine};
use magnetar_protocol::Prepared;
use magnetar_protocol::score::{ScoreError, ScoreReader};
use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileError, SoundFileReader, SoundFileWriter};
use std::io::{IsTerminal, Write};

#[derive(Debug, thiserror::Error)]
pub enum NrtError {
    #[error("couldn't read command file '{path}': {source}")]
    Score { path: String, source: std::io::Error },
    #[error("command file is empty")]
    EmptyScore,
    #[error("{0}")]
    BadScore(#[from] ScoreError),
    #[error("packet time stamps out of order at score byte {offset}: {time:.6} s comes after {prev:.6} s")]
    OutOfOrder { offset: usize, time: f64, prev: f64 },
    #[error("{0}")]
    SoundFile(#[from] SoundFileError),
}

/// Renders the score named in `cli.nrt`. Returns the number of frames written.
pub fn render(cli: &Cli) -> Result<u64, NrtError> {
    let nrt = cli.nrt.as_ref().expect("render is only called in NRT mode");
    let verbose = cli.verbosity >= 0;
    let score_bytes = match &nrt.score {
        Some(path) => std::fs::read(path).map_err(|source| NrtError::Score { path: path.clone(), source })?,
        None => {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)
                .map_err(|source| NrtError::Score { path: "<stdin>".into(), source })?;
            v
        }
    };

    let header = HeaderFormat::from_sc_name(&nrt.header_format)?;
    let sample = SampleFormat::from_sc_name(&nrt.sample_format)?;

    let mut options: EngineOptions = cli.engine.clone();
    options.sample_rate = nrt.sample_rate;

    let mut input = match &nrt.input {
        Some(path) => {
            let r = SoundFileReader::open(path)?;
            if r.channels() as usize != options.num_input_channels {
                eprintln!("WARNING: input file channels didn't match number of inputs specified in options.");
            }
            options.num_input_channels = r.channels() as usize;
            if r.sample_rate() != nrt.sample_rate {
                eprintln!("WARNING: input file sample rate does not equal output sample rate.");
            }
            Some(r)
        }
        None => None,
    };

    magnetar_engine::flush_denormals_on_this_thread();
    magnetar_rt::trace::set_role(magnetar_rt::trace::Role::Nrt, 0);
    // Both sides of the engine, in step: each command's stage 2 on the
    // control side, its result installed on the audio side at once.
    let mut engine = OfflineEngine::new(options);
    // `-P` holds for a score's file commands as for a client's.
    if let Some(dir) = &cli.restricted_path {
        engine.control.buffers = magnetar_engine::buffer_cmds::BufferCommands::new(Some(dir.into()));
    }
    engine.control.buffers.set_memory_limit(cli.buffer_memory_limit());
    let bs = engine.world.block_size;
    let n_out = engine.world.num_output_channels;
    let n_in = engine.world.num_input_channels;

    let mut writer = SoundFileWriter::create(&nrt.output, header, sample, n_out as u32, nrt.sample_rate)?;

    let mut reader = ScoreReader::from_bytes(&score_bytes);
    // Each bundle's commands are found once, as it is read (the same
    // preparation the real-time control thread does).
    let prepare = |data: &[u8]| {
        Prepared::decode(data).map(|p| match p {
            Prepared::Bundle { time, .. } => Some((time, p)),
            Prepared::Message(_) => None,
        })
    };
    let Some(first) = reader.next_with(prepare) else { return Err(NrtError::EmptyScore) };
    let (mut sched_time, mut bundle, _) = first?;
    let mut failures = Vec::new();
    let mut prev_time = sched_time;
    let last_time = last_time_tag(&score_bytes).unwrap_or(sched_time);

    // scsynth's clock: the block increment is truncated to whole time-tag
    // units, so block starts drift slightly below exact multiples; bundle
    // placement depends on that, so it is kept.
    let osc_to_seconds = 1.0 / 2f64.powi(32);
    let osc_to_samples = nrt.sample_rate * osc_to_seconds;
    let osc_inc = (bs as f64 / osc_to_samples) as i64;
    let mut osc_time: i64 = 0;
    if verbose {
        println!("start time {}", fmt_g(sched_time as f64 * osc_to_seconds));
    }

    let progress = std::io::stderr().is_terminal() && verbose;
    let mut last_percent = u32::MAX;
    let chunk_blocks = 8192usize.div_ceil(bs);
    let mut out_buf = vec![0f32; chunk_blocks * bs * n_out];
    let mut in_buf = vec![0f32; bs * n_in.max(1)];
    let mut frames_written: u64 = 0;
    let mut run = true;
    let mut result = Ok(());

    while run {
        let mut blocks_done = 0;
        while blocks_done < chunk_blocks && run {
            let counter = engine.world.buf_counter;
            if let Some(inp) = input.as_mut() {
                in_buf.fill(0.0);
                let _ = inp.read_f32(&mut in_buf[..bs * n_in])?;
                for ch in 0..n_in {
                    let bus = n_out + ch;
                    let dst = &mut engine.world.audio_bus[bus * bs..(bus + 1) * bs];
                    for (k, d) in dst.iter_mut().enumerate() {
                        *d = in_buf[k * n_in + ch];
                    }
                    engine.world.audio_touched[bus] = counter;
                }
            }

            let next_time = osc_time + osc_inc;
            let commands_started = magnetar_rt::trace::now();
            let mut commands = 0;
            while sched_time as i64 <= next_time {
                commands += 1;
                // Same arithmetic as scsynth: difference as f32, rounded.
                let diff = ((sched_time as i64 - osc_time) as f32 as f64 * osc_to_samples + 0.5) as f32;
                let floor = diff.floor();
                engine.sample_offset = (floor as i32).clamp(0, bs as i32 - 1);
                engine.subsample_offset = diff - floor;
                engine.perform_prepared(&bundle, &mut failures);
                for r in failures.drain(..) {
                    eprintln!("{r}");
                }
                // A synth freed by the bundle may leave DiskOut's last frames to write.
                engine.serve_disk();
                // No client listens in NRT mode: replies go nowhere, text is printed.
                engine.replies.clear();
                engine.tree_queries.clear();
                engine.events.clear();
                engine.removed_defs.clear();
                engine.freed_defs.clear();
                for text in engine.log.drain(..) {
                    print!("{text}");
                }
                match reader.next_with(prepare) {
                    None => {
                        run = false;
                        break;
                    }
                    Some(Err(e)) => {
                        result = Err(NrtError::from(e));
                        run = false;
                        break;
                    }
                    Some(Ok((t, b, offset))) => {
                        if verbose {
                            println!("nextOSCPacket {}", fmt_g(t as f64 * osc_to_seconds));
                        }
                        if t < prev_time {
                            result = Err(NrtError::OutOfOrder {
                                offset,
                                time: t as f64 * osc_to_seconds,
                                prev: prev_time as f64 * osc_to_seconds,
                            });
                            run = false;
                            break;
                        }
                        prev_time = t;
                        sched_time = t;
                        bundle = b;
                    }
                }
            }
            if result.is_err() {
                break;
            }
            if commands > 0 {
                magnetar_rt::trace::span(magnetar_rt::trace::Kind::Commands, commands_started, commands, 0);
            }

            engine.run_block();
            // Completion messages of asynchronous commands plugin units
            // started in the block (scsynth performs them inside the unit's
            // call; here they follow the block).
            for completion in magnetar_plugin::take_unit_completions() {
                let mut failures = Vec::new();
                match Prepared::decode(&completion) {
                    Ok(p) => engine.perform_prepared(&p, &mut failures),
                    Err(e) => eprintln!("bad completion message: {e}"),
                }
                for f in failures {
                    eprintln!("{f}");
                }
                engine.replies.clear();
                engine.tree_queries.clear();
            }
            engine.serve_disk();
            if cli.verbosity >= -1 {
                for p in &engine.world.polls {
                    println!("{}", crate::post::poll_line(p));
                }
            }
            // What the block printed (`/n_trace`).
            for text in engine.log.drain(..) {
                print!("{text}");
            }
            engine.world.polls.clear();
            engine.world.triggers.clear();
            engine.events.clear();
            for f in engine.unit_failures.drain(..) {
                eprintln!("FAILURE IN SERVER /s_new {}", f.message());
            }

            let frame0 = blocks_done * bs;
            for ch in 0..n_out {
                let touched = engine.world.audio_touched[ch] == counter;
                let src = &engine.world.audio_bus[ch * bs..(ch + 1) * bs];
                for k in 0..bs {
                    out_buf[(frame0 + k) * n_out + ch] = if touched { src[k] } else { 0.0 };
                }
            }
            blocks_done += 1;
            engine.advance_block_counter();
            osc_time = next_time;
        }
        let frames = blocks_done * bs;
        writer.write_f32(&out_buf[..frames * n_out])?;
        frames_written += frames as u64;
        if progress && last_time > 0 {
            let pct = ((osc_time as f64 / last_time as f64) * 100.0).clamp(0.0, 100.0) as u32;
            if pct != last_percent {
                last_percent = pct;
                let bar = (pct / 5) as usize;
                eprint!("\r[{}{}] {:3}%", "#".repeat(bar), " ".repeat(20 - bar), pct);
                let _ = std::io::stderr().flush();
            }
        }
    }
    if progress {
        eprintln!();
    }
    writer.close()?;
    result.map(|()| frames_written)
}

/// The time tag of the last bundle, from the length prefixes alone (for the
/// progress display; errors are reported by the real reader).
fn last_time_tag(bytes: &[u8]) -> Option<u64> {
    let mut pos = 0usize;
    let mut last = None;
    while pos + 4 <= bytes.len() {
        let len = i32::from_be_bytes(bytes[pos..pos + 4].try_into().ok()?);
        if len < 16 || pos + 4 + len as usize > bytes.len() {
            break;
        }
        let tag = &bytes[pos + 12..pos + 20];
        last = Some(u64::from_be_bytes(tag.try_into().ok()?));
        pos += 4 + len as usize;
    }
    last
}

/// printf's `%g` for the progress lines scsynth prints.
fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let s = format!("{:.6}", x);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
