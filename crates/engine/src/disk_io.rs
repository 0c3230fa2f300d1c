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

use crate::buffer_cmds::{file_of, lock_file, OpenSoundFile};

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

/// Where a request lands in `buf` (a range of its samples), or `None` if the
/// buffer changed shape since the unit asked (scsynth skips such requests too).
pub fn span(buf: &SndBuf, req: &DiskRequest) -> Option<std::ops::Range<usize>> {
    let (pos, frames) = (req.pos as u64, req.frames as u64);
    if pos > u64::from(buf.frames) || pos + frames > u64::from(buf.frames) || buf.channels != req.channels {
        return None;
    }
    let ch = buf.channels as usize;
    let start = req.pos as usize * ch;
    Some(start..start + req.frames as usize * ch)
}

/// Performs one request on `half`, the samples of the buffer it names (see
/// [`span`]), with the file left open for the buffer, if any. Returns the
/// buffer frame at which the file ended during a plain read (scsynth's
/// `mask`), if it did.
pub fn serve(file: Option<&mut OpenSoundFile>, half: &mut [f32], req: &DiskRequest) -> Option<i32> {
    let channels = req.channels as usize;
    if channels == 0 || half.len() != req.frames as usize * channels {
        return None;
    }
    // A file whose channels differ from the buffer's cannot be streamed
    // frame for frame; it reads as no file.
    let reader = match file {
        Some(OpenSoundFile::Reading(r)) if r.channels() as usize == channels => Some(r),
        Some(OpenSoundFile::Writing(w)) => {
            if req.op == DiskOp::Write {
                write_quietly(w, half);
            }
            None
        }
        _ => None,
    };
    match req.op {
        DiskOp::Write => None,
        DiskOp::Read => {
            let count = reader.map_or(0, |r| read_until_full(r, half, channels));
            if count < req.frames as usize {
                half[count * channels..].fill(0.0);
                Some((req.pos as usize + count) as i32)
            } else {
                None
            }
        }
        DiskOp::ReadLoop => {
            let Some(reader) = reader else {
                half.fill(0.0);
                return None;
            };
            let mut done = read_until_full(reader, half, channels) * channels;
            while done < half.len() {
                let got = match reader.seek(0) {
                    Ok(()) => read_until_full(reader, &mut half[done..], channels),
                    Err(_) => 0,
                };
                if got == 0 {
                    // An empty file (scsynth would loop for ever): silence.
                    half[done..].fill(0.0);
                    break;
                }
                done += got * channels;
            }
            None
        }
    }
}

/// Appends samples to a recording; like scsynth, a failed write is not reported.
fn write_quietly(writer: &mut SoundFileWriter, samples: &[f32]) {
    let _ = writer.write_f32(samples);
}

/// Serves every request the disk units queued, in the order they asked
/// (non-real-time rendering: after each block and each bundle).
pub fn serve_pending(world: &mut magnetar_ugens::World, files: &crate::buffer_cmds::OpenFiles) {
    let mut requests = std::mem::take(&mut world.disk_requests);
    for req in requests.drain(..) {
        let index = req.bufnum as usize;
        let Some(buf) = world.buffers.get_mut(index) else {
            continue;
        };
        let Some(range) = span(buf, &req) else {
            continue;
        };
        let file = file_of(files, index);
        let mut file = file.as_ref().map(lock_file);
        if let Some(end) = serve(file.as_mut().and_then(|f| f.as_mut()), &mut buf.data[range], &req) {
            buf.disk_mask = end;
        }
    }
    world.disk_requests = requests;
}
