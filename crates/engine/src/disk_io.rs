//! Serving the disk units' requests: moving a half of a streaming buffer
//! between the buffer and the file `/b_read` or `/b_write` left open for it,
//! as scsynth's disk thread does.
//!
//! Non-real-time rendering serves each block's requests as soon as the block
//! is computed (scsynth reads them inside the unit's calc function, which
//! gives the same buffer contents since a refilled half is not played before
//! the other half), so renders do not depend on timing.

use magnetar_soundfile::{SoundFileReader, SoundFileWriter};
use magnetar_ugens::disk::{DiskOp, DiskRequest};
use magnetar_ugens::SndBuf;

use crate::buffer_cmds::OpenSoundFile;

/// Reads frames into `dst` until it is full or the file ends; returns the
/// frames read. A read error ends the read as the end of the file would.
fn read_until_full(reader: &mut SoundFileReader, dst: &mut [f32], channels: usize) -> usize {
    let mut pos = 0;
    while pos < dst.len() {
        match reader.read_f32(&mut dst[pos..]) {
            Ok(0) | Err(_) => break,
            Ok(got) => pos += got * channels,
        }
    }
    pos / channels
}

/// Where a request lands in `buf`, or `None` if the buffer changed shape
/// since the unit asked (scsynth skips such requests too).
fn span(buf: &SndBuf, req: &DiskRequest) -> Option<std::ops::Range<usize>> {
    let (pos, frames) = (req.pos as u64, req.frames as u64);
    if pos > u64::from(buf.frames) || pos + frames > u64::from(buf.frames) || buf.channels != req.channels {
        return None;
    }
    let ch = buf.channels as usize;
    let start = req.pos as usize * ch;
    Some(start..start + req.frames as usize * ch)
}

/// Performs one request on `buf` with the file left open for it (if any).
pub fn serve(file: Option<&mut OpenSoundFile>, buf: &mut SndBuf, req: &DiskRequest) {
    let Some(range) = span(buf, req) else {
        return;
    };
    let channels = buf.channels as usize;
    // A file whose channels differ from the buffer's cannot be streamed
    // frame for frame; it reads as no file.
    let reader = match file {
        Some(OpenSoundFile::Reading(r)) if r.channels() as usize == channels => Some(r),
        Some(OpenSoundFile::Writing(w)) => {
            if req.op == DiskOp::Write {
                write_quietly(w, &buf.data[range.clone()]);
            }
            None
        }
        _ => None,
    };
    let dst = &mut buf.data[range];
    match req.op {
        DiskOp::Write => {}
        DiskOp::Read => {
            let count = reader.map_or(0, |r| read_until_full(r, dst, channels));
            if count < req.frames as usize {
                dst[count * channels..].fill(0.0);
                buf.disk_mask = (req.pos as usize + count) as i32;
            }
        }
        DiskOp::ReadLoop => {
            let Some(reader) = reader else {
                dst.fill(0.0);
                return;
            };
            let mut done = read_until_full(reader, dst, channels) * channels;
            while done < dst.len() {
                let got = match reader.seek(0) {
                    Ok(()) => read_until_full(reader, &mut dst[done..], channels),
                    Err(_) => 0,
                };
                if got == 0 {
                    // An empty file (scsynth would loop for ever): silence.
                    dst[done..].fill(0.0);
                    break;
                }
                done += got * channels;
            }
        }
    }
}

/// Appends samples to a recording; like scsynth, a failed write is not reported.
fn write_quietly(writer: &mut SoundFileWriter, samples: &[f32]) {
    let _ = writer.write_f32(samples);
}

/// Serves every request the disk units queued, in the order they asked
/// (non-real-time rendering: after each block and each bundle).
pub fn serve_pending(engine: &mut crate::Engine) {
    let mut requests = std::mem::take(&mut engine.world.disk_requests);
    for req in requests.drain(..) {
        let index = req.bufnum as usize;
        let Some(buf) = engine.world.buffers.get_mut(index) else {
            continue;
        };
        serve(engine.buffer_commands.open_file_mut(index), buf, &req);
    }
    engine.world.disk_requests = requests;
}
