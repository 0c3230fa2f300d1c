//! The `/b_*` commands: allocating, reading, writing, editing and querying
//! buffers, with scsynth's argument defaults, range clamping, replies and
//! failures.
//!
//! scsynth runs most of these in stages across its real-time and disk
//! threads; here each command runs to the end at once (as scsynth does in
//! non-real-time mode) and returns what the client should be told. Where
//! scsynth would touch memory outside a buffer (negative buffer offsets, a
//! channel layout that does not fit the buffer) the command fails instead.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use magnetar_protocol::replies::{BufferInfo, Reply};
use magnetar_protocol::ArgBlock;
use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileError, SoundFileReader, SoundFileWriter};
use magnetar_ugens::{SndBuf, World};

use magnetar_protocol::commands::{Command, CommandError, Number, ValueFill};
use crate::bufgen::{buffer_gen, BufGenError};

use crate::limits::{MAX_BUFFER_SAMPLES, MAX_CHANNEL_SELECTION, MAX_SYMLINKS};

/// What a successful command asks the engine to tell the client and do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BufDone {
    /// The buffer number the /done reply gives after the command name;
    /// `None` if the command sends no /done (e.g. /b_set).
    pub done_buffer: Option<i32>,
    /// Completion message (raw OSC packet bytes) the engine must perform
    /// afterwards, before sending the /done.
    pub completion: Option<Vec<u8>>,
    /// Replies such as /b_info, /b_set, /b_setn.
    pub replies: Vec<Reply>,
}

impl BufDone {
    fn none() -> BufDone {
        BufDone::default()
    }

    fn done(bufnum: i32, completion: Option<Vec<u8>>) -> BufDone {
        BufDone { done_buffer: Some(bufnum), completion, replies: Vec::new() }
    }

    fn reply(reply: Reply) -> BufDone {
        BufDone { done_buffer: None, completion: None, replies: vec![reply] }
    }

    /// The `/done` reply for command `command`, if the command sends one.
    pub fn done_reply(&self, command: &'static str) -> Option<Reply> {
        self.done_buffer.map(|b| Reply::Done { command: command.into(), args: vec![b] })
    }
}

/// A command that failed: the text of the /fail reply and the buffer
/// number that follows it, where scsynth sends one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct BufFail {
    pub message: String,
    pub buffer: Option<i32>,
}

impl BufFail {
    fn plain(message: impl Into<String>) -> BufFail {
        BufFail { message: message.into(), buffer: None }
    }

    fn for_buffer(message: impl Into<String>, bufnum: i32) -> BufFail {
        BufFail { message: message.into(), buffer: Some(bufnum) }
    }
}

/// A path `-P` refuses: the `/fail` text names it, the restricted
/// directory, and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("File '{path}' is outside the restricted path '{}': {why}", restricted.display())]
pub struct PathRefused {
    pub path: String,
    pub restricted: PathBuf,
    pub why: &'static str,
}

/// Why `/b_alloc*` made no buffer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AllocError {
    #[error("cannot allocate {frames} frames of {channels} channels")]
    Empty { frames: i64, channels: i64 },
    #[error("memory allocation failed: {frames} frames of {channels} channels is more than {max} samples")]
    TooLarge { frames: i64, channels: i64, max: i64 },
    #[error("memory allocation failed: {frames} frames of {channels} channels")]
    NoMemory { frames: i64, channels: i64 },
}

/// A sound file left open by `/b_read` or `/b_write` with the leave-open
/// flag, for DiskIn or DiskOut to stream through the buffer.
#[derive(Debug)]
pub enum OpenSoundFile {
    /// Positioned after the frames the command read.
    Reading(SoundFileReader),
    /// Positioned after the frames the command wrote.
    Writing(SoundFileWriter),
}

impl OpenSoundFile {
    fn path(&self) -> &str {
        match self {
            OpenSoundFile::Reading(r) => r.path(),
            OpenSoundFile::Writing(w) => w.path(),
        }
    }

    /// Closes the file; a writer finalises its header.
    fn close(self) -> Result<(), SoundFileError> {
        match self {
            OpenSoundFile::Reading(_) => Ok(()),
            OpenSoundFile::Writing(w) => w.close(),
        }
    }
}

/// The directory that file commands are confined to (`-P`).
#[derive(Debug)]
struct RestrictedPath {
    given: PathBuf,
    /// `given` with symlinks resolved; `None` if it does not exist, in which
    /// case nothing inside it can be opened either.
    canonical: Option<PathBuf>,
}

/// One file left open, with its own lock: a disk thread holds it across a
/// read or write of this file only. `None` once the file was closed while a
/// disk thread still held on to it.
pub type SharedFile = Arc<Mutex<Option<OpenSoundFile>>>;

/// The files left open, by buffer index. Shared with the disk threads that
/// stream through them; only non-real-time threads take the lock, and only
/// to look up, add or remove a file, never across I/O (see [`SharedFile`]).
pub type OpenFiles = Arc<Mutex<HashMap<usize, SharedFile>>>;

/// Performs the `/b_*` commands and keeps the files they leave open.
#[derive(Debug)]
pub struct BufferCommands {
    restricted: Option<RestrictedPath>,
    files: OpenFiles,
    /// The largest buffer `/b_alloc*` makes, in samples.
    max_samples: i64,
    /// At most this many samples in all buffers together after a
    /// `/b_alloc*` (`--buffer-memory`); scsynth has no such bound.
    max_total_samples: Option<i64>,
}

/// What an in-place command that changes a buffer's contents (`/b_set`,
/// `/b_setn`, `/b_fill`) does about the convolution response prepared from
/// them (`SndBuf::prepared`), which must follow the contents (see
/// `convolution::nupc_unit`). Stage-2 commands remake it at once.
#[derive(Debug, Default)]
pub enum ResponseRefresh {
    /// Remade at once: non-real-time rendering.
    #[default]
    Inline,
    /// On the audio thread: the buffer numbers are listed (room reserved
    /// for every buffer, each listed once) for the server to remake the
    /// responses off the audio thread.
    Deferred(Vec<usize>),
}

impl ResponseRefresh {
    /// Deferred, with room for `buffers` buffers.
    pub fn deferred(buffers: usize) -> ResponseRefresh {
        ResponseRefresh::Deferred(Vec::with_capacity(buffers))
    }

    /// After an in-place command changed buffer `bufnum`'s contents.
    pub fn changed(&mut self, world: &mut World, bufnum: i32) {
        let Some((index, buf)) = usize::try_from(bufnum).ok().and_then(|b| world.buffers.get_mut(b).map(|buf| (b, buf)))
        else {
            return;
        };
        match self {
            ResponseRefresh::Inline => magnetar_ugens::convolution::refresh_prepared(buf),
            ResponseRefresh::Deferred(stale) => {
                // Within the room reserved: at most one entry per buffer.
                if magnetar_ugens::convolution::may_hold_response(buf) && !stale.contains(&index) && stale.len() < stale.capacity() {
                    stale.push(index);
                }
            }
        }
    }

    /// A buffer whose response an in-place command left stale (deferred
    /// mode; None otherwise, or when all are taken).
    pub fn pop(&mut self) -> Option<usize> {
        match self {
            ResponseRefresh::Deferred(stale) => stale.pop(),
            ResponseRefresh::Inline => None,
        }
    }
}

/// Frames from `offset` to the end of a file of `total` frames: scsynth's
/// clamping of the start and count of a read. `zero_means_all` is the
/// `/b_allocRead*` rule (a count of 0 reads to the end); `/b_read*` reads to
/// the end only for negative counts.
fn file_range(total: i64, offset: i32, count: i32, zero_means_all: bool) -> (i64, i64) {
    let offset = i64::from(offset).clamp(0, total);
    let count = i64::from(count);
    let to_end = total - offset;
    let all = if zero_means_all { count <= 0 } else { count < 0 };
    if all || count + offset > total {
        (offset, to_end)
    } else {
        (offset, count)
    }
}

/// A zeroed buffer of `frames` × `channels`, or why there is none.
fn alloc_buffer(frames: i64, channels: i64, sample_rate: f64, max_samples: i64) -> Result<SndBuf, AllocError> {
    if frames < 1 || channels < 1 {
        return Err(AllocError::Empty { frames, channels });
    }
    let samples = frames.saturating_mul(channels);
    if samples > max_samples {
        return Err(AllocError::TooLarge { frames, channels, max: max_samples });
    }
    let samples = samples as usize;
    let mut data = Vec::new();
    data.try_reserve_exact(samples).map_err(|_| AllocError::NoMemory { frames, channels })?;
    data.resize(samples, 0.0);
    Ok(SndBuf { data, channels: channels as u32, frames: frames as u32, sample_rate, ..SndBuf::default() })
}

/// Megabytes of `samples` 32-bit samples, rounded up.
fn mb(samples: i64) -> i64 {
    (samples.saturating_mul(4) + (1 << 20) - 1) >> 20
}

/// Empties a buffer the way scsynth's free does: no data, no frames, no
/// channels, but the sample rate stays as it was.
fn empty_buffer(buf: &mut SndBuf) {
    *buf = SndBuf { sample_rate: buf.sample_rate, ..SndBuf::default() };
}

/// Where a file command starts and how much it moves: the first frame in
/// the file, the number of frames, the first frame in the buffer.
#[derive(Clone, Copy, Debug)]
struct FileRange {
    offset: i32,
    frames: i32,
    buf_offset: i32,
}

/// The channel indices of a `*Channel` command, as many as are kept.
fn channel_selection(channels: &[i32]) -> Vec<i32> {
    channels.iter().take(MAX_CHANNEL_SELECTION).copied().collect()
}

/// Reads `frames` frames from `offset` into `out` (interleaved, exactly
/// `frames × file channels` long). A file shorter than its header says
/// leaves the rest of `out` as it was.
fn read_frames(reader: &mut SoundFileReader, offset: i64, out: &mut [f32]) -> Result<(), SoundFileError> {
    reader.seek(offset as u64)?;
    let channels = reader.channels() as usize;
    let mut pos = 0;
    while pos < out.len() {
        let got = reader.read_f32(&mut out[pos..])?;
        if got == 0 {
            break;
        }
        pos += got * channels;
    }
    Ok(())
}

/// Copies the selected file channels into `dst` (interleaved with
/// `selection.len()` channels); an index below 0 gives a silent channel,
/// as in scsynth.
fn copy_channels(dst: &mut [f32], src: &[f32], src_channels: usize, selection: &[i32]) {
    let dst_channels = selection.len();
    for (dst_frame, src_frame) in dst.chunks_exact_mut(dst_channels).zip(src.chunks_exact(src_channels)) {
        for (d, &c) in dst_frame.iter_mut().zip(selection) {
            *d = usize::try_from(c).ok().and_then(|c| src_frame.get(c)).copied().unwrap_or(0.0);
        }
    }
}

/// scsynth's clamping of a `[start, start + n)` sample range in /b_setn and
/// /b_fill: `None` if it misses the buffer entirely.
fn clamp_sample_range(start: i32, n: i32, num_samples: usize) -> Option<(usize, usize)> {
    if num_samples == 0 {
        return None;
    }
    let last = i64::from(start) + i64::from(n) - 1;
    let num = num_samples as i64;
    if last < 0 || i64::from(start) >= num {
        return None;
    }
    let first = i64::from(start).clamp(0, num - 1);
    let last = last.clamp(0, num - 1);
    // A negative count leaves the range empty (scsynth's loop runs zero times).
    (first <= last).then_some((first as usize, last as usize))
}

impl BufferCommands {
    pub fn new(restricted_path: Option<PathBuf>) -> Self {
        let restricted = restricted_path.map(|given| {
            let canonical = given.canonicalize().ok();
            RestrictedPath { given, canonical }
        });
        BufferCommands {
            restricted,
            files: OpenFiles::default(),
            max_samples: MAX_BUFFER_SAMPLES,
            max_total_samples: None,
        }
    }

    /// After a stage-2 command that may have changed buffer `bufnum`'s
    /// contents: its convolution response is remade here (off the audio thread).
    fn contents_changed(&mut self, world: &mut World, bufnum: i32) {
        if let Some(buf) = usize::try_from(bufnum).ok().and_then(|b| world.buffers.get_mut(b)) {
            magnetar_ugens::convolution::refresh_prepared(buf);
        }
    }

    /// Caps the memory of all buffers together at `bytes` (`None`: no cap,
    /// as scsynth). A `/b_alloc`, `/b_allocRead` or `/b_allocReadChannel`
    /// that would pass it answers `/fail` and leaves the buffer as it was.
    pub fn set_memory_limit(&mut self, bytes: Option<u64>) {
        self.max_total_samples = bytes.map(|b| i64::try_from(b / 4).unwrap_or(i64::MAX));
    }

    /// Refuses a buffer of `samples` samples in place of buffer `index` if
    /// all buffers would then hold more than the cap.
    fn check_total(&self, world: &World, index: usize, samples: i64, bufnum: i32) -> Result<(), BufFail> {
        let Some(cap) = self.max_total_samples else {
            return Ok(());
        };
        let others: i64 =
            world.buffers.iter().enumerate().filter(|&(i, _)| i != index).map(|(_, b)| b.samples() as i64).sum();
        if others.saturating_add(samples) > cap {
            return Err(BufFail::for_buffer(
                format!(
                    "out of buffer memory: {} MB more would pass the limit of {} MB for all buffers (--buffer-memory); {} MB are in use",
                    mb(samples),
                    mb(cap),
                    mb(others)
                ),
                bufnum,
            ));
        }
        Ok(())
    }

    /// Buffers of at most `samples` samples (the fuzz targets keep them
    /// small; the server allows `i32::MAX`, as scsynth does).
    pub fn with_max_samples(mut self, samples: i64) -> Self {
        self.max_samples = samples.min(MAX_BUFFER_SAMPLES);
        self
    }

    /// The open files, for the threads that stream through them.
    pub fn shared_files(&self) -> OpenFiles {
        Arc::clone(&self.files)
    }

    /// The table of open files, locked. A thread that panicked while holding
    /// it left the table itself intact, so the lock is taken over.
    fn open_files(&self) -> MutexGuard<'_, HashMap<usize, SharedFile>> {
        lock_files(&self.files)
    }

    /// Takes buffer `index`'s file out of the table, waiting for a disk
    /// thread's read or write of it in flight, if any, to finish.
    fn remove_file(&self, index: usize) -> Option<OpenSoundFile> {
        let shared = self.open_files().remove(&index)?;
        let file = lock_file(&shared).take();
        file
    }

    fn insert_file(&self, index: usize, file: OpenSoundFile) {
        self.open_files().insert(index, share_file(file));
    }

    /// Whether a file is open for buffer `bufnum`.
    pub fn has_open_file(&self, bufnum: usize) -> bool {
        self.open_files().contains_key(&bufnum)
    }

    /// Closes every open file (at shutdown), finalising written headers.
    /// Returns the errors of files that could not be closed cleanly.
    pub fn close_all(&mut self) -> Vec<SoundFileError> {
        let files: Vec<SharedFile> = self.open_files().drain().map(|(_, f)| f).collect();
        let files: Vec<OpenSoundFile> = files.iter().filter_map(|f| lock_file(f).take()).collect();
        files.into_iter().filter_map(|f| f.close().err()).collect()
    }

    /// Performs one /b_* command as decoded when its message was prepared:
    /// a command whose arguments were refused fails with the refusal's text.
    pub fn perform(&mut self, cmd: &Result<Command, CommandError>, world: &mut World) -> Result<BufDone, BufFail> {
        match cmd {
            Ok(cmd) => self.perform_command(cmd, world),
            Err(e) => Err(BufFail::plain(e.message())),
        }
    }

    /// Performs one decoded /b_* command. Returns what to tell the client.
    pub fn perform_command(&mut self, cmd: &Command, world: &mut World) -> Result<BufDone, BufFail> {
        use Command as C;
        let changes_contents = match cmd {
            C::BAlloc { buffer, .. }
            | C::BAllocRead { buffer, .. }
            | C::BAllocReadChannel { buffer, .. }
            | C::BRead { buffer, .. }
            | C::BReadChannel { buffer, .. }
            | C::BFree { buffer, .. }
            | C::BZero { buffer, .. }
            | C::BSet { buffer, .. }
            | C::BSetn { buffer, .. }
            | C::BFill { buffer, .. }
            | C::BGen { buffer, .. } => Some(*buffer),
            _ => None,
        };
        let result = self.perform_decoded(cmd, world);
        // Even a failed `/b_set` or `/b_setn` keeps the values before the bad one.
        if let Some(buffer) = changes_contents {
            self.contents_changed(world, buffer);
        }
        result
    }

    fn perform_decoded(&mut self, cmd: &Command, world: &mut World) -> Result<BufDone, BufFail> {
        use Command as C;
        match cmd {
            C::BAlloc { buffer, frames, channels, completion, sample_rate } => {
                self.alloc(world, *buffer, *frames, *channels, completion.clone(), *sample_rate)
            }
            C::BAllocRead { buffer, path, start_frame, frames, completion } => {
                self.alloc_read(world, *buffer, path, *start_frame, *frames, Vec::new(), completion.clone())
            }
            C::BAllocReadChannel { buffer, path, start_frame, frames, channels, completion } => self.alloc_read(
                world,
                *buffer,
                path,
                *start_frame,
                *frames,
                channel_selection(channels),
                completion.clone(),
            ),
            C::BRead { buffer, path, start_frame, frames, buffer_start_frame, leave_open, completion } => {
                let file = FileRange { offset: *start_frame, frames: *frames, buf_offset: *buffer_start_frame };
                self.read(world, *buffer, path, file, *leave_open, Vec::new(), completion.clone())
            }
            C::BReadChannel { buffer, path, start_frame, frames, buffer_start_frame, leave_open, channels, completion } => {
                let file = FileRange { offset: *start_frame, frames: *frames, buf_offset: *buffer_start_frame };
                self.read(world, *buffer, path, file, *leave_open, channel_selection(channels), completion.clone())
            }
            C::BWrite { buffer, path, header_format, sample_format, frames, start_frame, leave_open, completion } => {
                let file = FileRange { offset: 0, frames: *frames, buf_offset: *start_frame };
                self.write(world, *buffer, path, (header_format.as_str(), sample_format.as_str()), file, *leave_open, completion.clone())
            }
            C::BClose { buffer, completion } => self.close(world, *buffer, completion.clone()),
            C::BFree { buffer, completion } => self.free(world, *buffer, completion.clone()),
            C::BZero { buffer, completion } => zero(world, *buffer, completion.clone()),
            C::BSet { buffer, samples } => set(world, *buffer, samples),
            C::BSetn { buffer, args } => setn(world, *buffer, args),
            C::BFill { buffer, fills } => fill(world, *buffer, fills),
            C::BGen { buffer, command, args, rest } => gen(world, *buffer, command, args, || ArgBlock::of(rest)),
            C::BSetSampleRate { buffer, sample_rate } => set_sample_rate(world, *buffer, *sample_rate),
            C::BQuery { buffers } => query(world, buffers),
            C::BGet { buffer, indices } => get(world, *buffer, indices),
            C::BGetn { buffer, ranges } => getn(world, *buffer, ranges),
            other => Err(BufFail::plain(format!("{} is not a buffer command", other.name()))),
        }
    }

    /// A path another file command (`/d_load`, `/d_loadDir`) may use, under
    /// the same `-P` restriction as the buffer commands.
    pub fn restrict(&self, path: &str) -> Result<PathBuf, PathRefused> {
        self.restricted_path(path)
    }

    /// The path a file command uses: as given without `-P`; inside the
    /// restricted directory with it. Unlike scsynth, which silently drops
    /// `..` and re-roots absolute paths, paths that would lead elsewhere are
    /// refused, including through symlinks.
    fn resolve_path(&self, path: &str, bufnum: i32) -> Result<PathBuf, BufFail> {
        self.restricted_path(path).map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))
    }

    fn restricted_path(&self, path: &str) -> Result<PathBuf, PathRefused> {
        let Some(restricted) = &self.restricted else {
            return Ok(PathBuf::from(path));
        };
        let refuse = |why: &'static str| PathRefused { path: path.to_string(), restricted: restricted.given.clone(), why };
        let requested = Path::new(path);
        if requested.components().any(|c| c == Component::ParentDir) {
            return Err(refuse("'..' is not allowed"));
        }
        let candidate = if requested.is_absolute() {
            let inside = requested.starts_with(&restricted.given)
                || restricted.canonical.as_ref().is_some_and(|c| requested.starts_with(c));
            if !inside {
                return Err(refuse("absolute paths must lie inside it"));
            }
            requested.to_path_buf()
        } else {
            restricted.given.join(requested)
        };
        // Where the path really leads, following every symlink on the way,
        // a dangling one at the end included (creating the file would
        // follow it).
        let Some(base) = &restricted.canonical else {
            return Err(refuse("the restricted directory does not exist"));
        };
        match real_path(&candidate, 0) {
            Some(real) if real.starts_with(base) => Ok(candidate),
            _ => Err(refuse("it leads out of the directory")),
        }
    }

    fn alloc(
        &mut self,
        world: &mut World,
        bufnum: i32,
        frames: i32,
        channels: i32,
        completion: Option<Vec<u8>>,
        rate: f32,
    ) -> Result<BufDone, BufFail> {
        let rate = if rate > 0.0 { f64::from(rate) } else { world.sample_rate };
        let index = buffer_index(world, bufnum, true)?;
        self.check_total(world, index, i64::from(frames).max(0).saturating_mul(i64::from(channels).max(0)), bufnum)?;
        let buf =
            alloc_buffer(i64::from(frames), i64::from(channels), rate, self.max_samples).map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        world.buffers[index] = buf;
        Ok(BufDone::done(bufnum, completion))
    }

    #[allow(clippy::too_many_arguments)]
    fn alloc_read(
        &mut self,
        world: &mut World,
        bufnum: i32,
        path: &str,
        file_offset: i32,
        frames: i32,
        selection: Vec<i32>,
        completion: Option<Vec<u8>>,
    ) -> Result<BufDone, BufFail> {
        let index = buffer_index(world, bufnum, true)?;
        let path = self.resolve_path(path, bufnum)?;
        let mut reader = SoundFileReader::open(&path).map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        let (offset, frames) = file_range(reader.frames() as i64, file_offset, frames, true);
        let file_channels = reader.channels();
        if let Some(&bad) = selection.iter().find(|&&c| c >= file_channels as i32) {
            return Err(BufFail::for_buffer(
                format!(
                    "Channel index out of range: channel {bad} requested, file '{}' has {file_channels} channels",
                    reader.path()
                ),
                bufnum,
            ));
        }
        let channels = if selection.is_empty() { file_channels as usize } else { selection.len() };
        self.check_total(world, index, frames.max(0).saturating_mul(channels as i64), bufnum)?;
        let mut buf = match alloc_buffer(frames, channels as i64, reader.sample_rate(), self.max_samples) {
            Ok(buf) => buf,
            Err(_) => {
                // Nothing to read (an empty file, or an offset at its end):
                // scsynth frees the old contents and still reports /done.
                empty_buffer(&mut world.buffers[index]);
                return Ok(BufDone::done(bufnum, completion));
            }
        };
        let read = if selection.is_empty() {
            read_frames(&mut reader, offset, &mut buf.data)
        } else {
            let mut all = vec![0.0; frames as usize * file_channels as usize];
            read_frames(&mut reader, offset, &mut all).map(|()| {
                copy_channels(&mut buf.data, &all, file_channels as usize, &selection);
            })
        };
        read.map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        buf.path = Some(reader.path().to_owned());
        world.buffers[index] = buf;
        Ok(BufDone::done(bufnum, completion))
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        world: &mut World,
        bufnum: i32,
        path: &str,
        file: FileRange,
        leave_open: bool,
        selection: Vec<i32>,
        completion: Option<Vec<u8>>,
    ) -> Result<BufDone, BufFail> {
        let FileRange { offset: file_offset, frames, buf_offset } = file;
        let index = buffer_index(world, bufnum, true)?;
        let path = self.resolve_path(path, bufnum)?;
        let buf_offset = non_negative_offset(buf_offset, bufnum)?;
        let buf = &world.buffers[index];
        contents_present(buf, bufnum)?;
        let frames_to_end = i64::from(buf.frames) - buf_offset as i64;
        if frames_to_end <= 0 {
            // scsynth does not even open the file when nothing fits.
            return Ok(BufDone::done(bufnum, completion));
        }
        let mut reader = SoundFileReader::open(&path).map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        let file_channels = reader.channels();
        if selection.is_empty() {
            if file_channels != buf.channels {
                return Err(BufFail::for_buffer(
                    format!(
                        "Channel mismatch. File '{}' has {file_channels} channels. Buffer has {} channels.",
                        reader.path(),
                        buf.channels
                    ),
                    bufnum,
                ));
            }
        } else {
            if let Some(&bad) = selection.iter().find(|&&c| c >= file_channels as i32) {
                return Err(BufFail::for_buffer(
                    format!(
                        "Channel index out of range: channel {bad} requested, file '{}' has {file_channels} channels",
                        reader.path()
                    ),
                    bufnum,
                ));
            }
            if selection.len() != buf.channels as usize {
                return Err(BufFail::for_buffer(
                    format!(
                        "Channel mismatch. {} channels selected from file '{}'. Buffer has {} channels.",
                        selection.len(),
                        reader.path(),
                        buf.channels
                    ),
                    bufnum,
                ));
            }
        }
        let (offset, frames) = file_range(reader.frames() as i64, file_offset, frames, false);
        let frames = frames.min(frames_to_end) as usize;
        let channels = buf.channels as usize;
        let buf = &mut world.buffers[index];
        let dst = &mut buf.data[buf_offset * channels..(buf_offset + frames) * channels];
        let read = if frames == 0 {
            // scsynth still seeks, so a file left open streams from there.
            reader.seek(offset as u64)
        } else if selection.is_empty() {
            read_frames(&mut reader, offset, dst)
        } else {
            let mut all = vec![0.0; frames * file_channels as usize];
            read_frames(&mut reader, offset, &mut all).map(|()| {
                copy_channels(dst, &all, file_channels as usize, &selection);
            })
        };
        read.map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        buf.sample_rate = reader.sample_rate();
        buf.path = Some(reader.path().to_owned());
        if leave_open {
            // Streaming starts afresh: no end of file seen yet.
            buf.disk_mask = -1;
            buf.disk_mask1 = -1;
        }
        let previous = self.remove_file(index);
        if leave_open {
            self.insert_file(index, OpenSoundFile::Reading(reader));
        }
        close_quietly(previous);
        Ok(BufDone::done(bufnum, completion))
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        world: &mut World,
        bufnum: i32,
        path: &str,
        (header, sample): (&str, &str),
        file: FileRange,
        leave_open: bool,
        completion: Option<Vec<u8>>,
    ) -> Result<BufDone, BufFail> {
        let FileRange { frames, buf_offset, .. } = file;
        let header = HeaderFormat::from_sc_name(header).map_err(|e| BufFail::plain(e.to_string()))?;
        let sample = SampleFormat::from_sc_name(sample).map_err(|e| BufFail::plain(e.to_string()))?;
        let index = buffer_index(world, bufnum, true)?;
        let path = self.resolve_path(path, bufnum)?;
        let buf_offset = non_negative_offset(buf_offset, bufnum)?;
        // Writing over the file this buffer holds open: close it first, so
        // that its header is not finalised over the new file afterwards.
        let open = self.open_files().get(&index).cloned();
        if open.is_some_and(|f| lock_file(&f).as_ref().is_some_and(|f| Path::new(f.path()) == path)) {
            close_quietly(self.remove_file(index));
        }
        let buf = &mut world.buffers[index];
        contents_present(buf, bufnum)?;
        let frames_to_end = (i64::from(buf.frames) - buf_offset as i64).max(0);
        let mut writer = SoundFileWriter::create(&path, header, sample, buf.channels, buf.sample_rate)
            .map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        let frames = i64::from(frames);
        let frames = if frames < 0 || frames > i64::from(buf.frames) { i64::from(buf.frames) } else { frames };
        let frames = frames.min(frames_to_end) as usize;
        let channels = buf.channels as usize;
        if frames > 0 {
            writer
                .write_f32(&buf.data[buf_offset * channels..(buf_offset + frames) * channels])
                .map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        }
        let previous = self.remove_file(index);
        close_quietly(previous);
        if leave_open {
            buf.path = Some(writer.path().to_owned());
            self.insert_file(index, OpenSoundFile::Writing(writer));
        } else {
            writer.close().map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        }
        Ok(BufDone::done(bufnum, completion))
    }

    fn close(&mut self, world: &mut World, bufnum: i32, completion: Option<Vec<u8>>) -> Result<BufDone, BufFail> {
        let index = buffer_index(world, bufnum, true)?;
        if let Some(file) = self.remove_file(index) {
            file.close().map_err(|e| BufFail::for_buffer(e.to_string(), bufnum))?;
        }
        Ok(BufDone::done(bufnum, completion))
    }

    fn free(&mut self, world: &mut World, bufnum: i32, completion: Option<Vec<u8>>) -> Result<BufDone, BufFail> {
        let index = buffer_index(world, bufnum, true)?;
        close_quietly(self.remove_file(index));
        empty_buffer(&mut world.buffers[index]);
        Ok(BufDone::done(bufnum, completion))
    }
}

/// Performs one of the `/b_*` commands that edit or query a buffer in
/// place (`/b_set`, `/b_setn`, `/b_fill`, `/b_get`, `/b_getn`, `/b_query`,
/// `/b_setSampleRate`): no file, no new memory, so the audio side performs
/// them itself. The others are stage-2 work ([`BufferCommands::perform_command`]).
pub fn perform_in_place(cmd: &Command, world: &mut World) -> Result<BufDone, BufFail> {
    use Command as C;
    match cmd {
        C::BSet { buffer, samples } => set(world, *buffer, samples),
        C::BSetn { buffer, args } => setn(world, *buffer, args),
        C::BFill { buffer, fills } => fill(world, *buffer, fills),
        C::BSetSampleRate { buffer, sample_rate } => set_sample_rate(world, *buffer, *sample_rate),
        C::BQuery { buffers } => query(world, buffers),
        C::BGet { buffer, indices } => get(world, *buffer, indices),
        C::BGetn { buffer, ranges } => getn(world, *buffer, ranges),
        other => Err(BufFail::plain(format!("{} is not a buffer command performed in place", other.name()))),
    }
}

/// Locks a table of open files (see [`BufferCommands::shared_files`]).
pub fn lock_files(files: &OpenFiles) -> MutexGuard<'_, HashMap<usize, SharedFile>> {
    files.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Buffer `index`'s open file, if any: the table is locked only to look it up.
pub fn file_of(files: &OpenFiles, index: usize) -> Option<SharedFile> {
    lock_files(files).get(&index).cloned()
}

/// Locks one open file. A thread that panicked while holding it left at
/// worst a file positioned mid-read, so the lock is taken over.
pub fn lock_file(file: &SharedFile) -> MutexGuard<'_, Option<OpenSoundFile>> {
    file.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An open file, ready for the table.
pub fn share_file(file: OpenSoundFile) -> SharedFile {
    Arc::new(Mutex::new(Some(file)))
}

/// Closes a file the client no longer refers to; scsynth ignores errors here.
fn close_quietly(file: Option<OpenSoundFile>) {
    if let Some(file) = file {
        // The file is being replaced or freed; nobody is left to tell.
        let _ = file.close();
    }
}

/// The index of buffer `bufnum`. scsynth quietly uses buffer 0 for numbers
/// out of range; this refuses them.
fn buffer_index(world: &World, bufnum: i32, with_bufnum: bool) -> Result<usize, BufFail> {
    let count = world.buffers.len();
    match usize::try_from(bufnum) {
        Ok(i) if i < count => Ok(i),
        _ => {
            let message = format!("buffer number {bufnum} out of range (the server has {count} buffers)");
            Err(if with_bufnum { BufFail::for_buffer(message, bufnum) } else { BufFail::plain(message) })
        }
    }
}

fn non_negative_offset(offset: i32, bufnum: i32) -> Result<usize, BufFail> {
    usize::try_from(offset).map_err(|_| BufFail::for_buffer(format!("buffer start frame {offset} is negative"), bufnum))
}

fn zero(world: &mut World, bufnum: i32, completion: Option<Vec<u8>>) -> Result<BufDone, BufFail> {
    let index = buffer_index(world, bufnum, true)?;
    world.buffers[index].data.fill(0.0);
    Ok(BufDone::done(bufnum, completion))
}

fn index_out_of_range(index: i32, bufnum: i32, samples: usize) -> BufFail {
    { let _ = (index, bufnum, samples); BufFail::plain("index out of range") }
}

/// Pairs of sample index and value; values before a bad index are kept, as
/// in scsynth.
fn set(world: &mut World, bufnum: i32, samples: &[(i32, f32)]) -> Result<BufDone, BufFail> {
    let index = buffer_index(world, bufnum, false)?;
    let data = &mut world.buffers[index].data;
    for &(i, value) in samples {
        match usize::try_from(i).ok().and_then(|i| data.get_mut(i)) {
            Some(sample) => *sample = value,
            None => return Err(index_out_of_range(i, bufnum, data.len())),
        }
    }
    Ok(BufDone::none())
}

/// Groups of start, count and values. As in scsynth, a group that misses
/// the buffer leaves its values to be read as the next group's start and
/// count, and a group that overlaps an end is clipped to the buffer.
fn setn(world: &mut World, bufnum: i32, args: &[Number]) -> Result<BufDone, BufFail> {
    let index = buffer_index(world, bufnum, false)?;
    let data = &mut world.buffers[index].data;
    let mut args = Numbers::new(args);
    while args.remain() {
        let start = args.next().map_or(0, |n| n.int);
        let n = args.next().map_or(0, |n| n.int);
        let Some((first, last)) = clamp_sample_range(start, n, data.len()) else {
            continue;
        };
        for sample in &mut data[first..=last] {
            if !args.remain() {
                break;
            }
            *sample = args.next().map_or(0.0, |n| n.float);
        }
    }
    Ok(BufDone::none())
}

/// `/b_setn`'s arguments read in order, each as an int or a float as the
/// group needs it.
struct Numbers<'a> {
    args: &'a [Number],
    /// Arguments left that take bytes on the wire.
    sized: usize,
}

impl<'a> Numbers<'a> {
    fn new(args: &'a [Number]) -> Numbers<'a> {
        Numbers { args, sized: args.iter().filter(|n| n.sized).count() }
    }

    /// Whether bytes remain, as scsynth's loop asks.
    fn remain(&self) -> bool {
        self.sized > 0
    }

    fn next(&mut self) -> Option<Number> {
        let (&first, rest) = self.args.split_first()?;
        self.args = rest;
        self.sized -= usize::from(first.sized);
        Some(first)
    }
}

/// Triples of start, count and value, clipped to the buffer.
fn fill(world: &mut World, bufnum: i32, fills: &[ValueFill]) -> Result<BufDone, BufFail> {
    let index = buffer_index(world, bufnum, false)?;
    let data = &mut world.buffers[index].data;
    for &ValueFill { start, count: n, value } in fills {
        if let Some((first, last)) = clamp_sample_range(start, n, data.len()) {
            data[first..=last].fill(value);
        }
    }
    Ok(BufDone::none())
}

/// `/b_gen`: `rest` gives the arguments as they came, for a generator a
/// plugin defined.
fn gen(world: &mut World, bufnum: i32, command: &str, values: &[f32], rest: impl FnOnce() -> ArgBlock) -> Result<BufDone, BufFail> {
    let index = buffer_index(world, bufnum, true)?;
    if command == "MagnetarConvPrepare" {
        // Extension: makes the buffer (allocated or not) the prepared response.
        let (block, rate) = (world.block_size, world.sample_rate);
        // The tuner weighs the head against the tasks by where they run.
        let cpus = world.tasks.as_ref().map_or(1, |t| t.cpus());
        return match magnetar_ugens::convolution::prepare_magnetar_conv(&mut world.buffers, index, values, block, rate, cpus) {
            Ok(_) => Ok(BufDone::done(bufnum, None)),
            Err(e) => Err(BufFail::for_buffer(e.to_string(), bufnum)),
        };
    }
    if !crate::bufgen::BUILTIN.contains(&command) {
        // A generator a plugin defined (`DefineBufGen`): it reads its own
        // arguments, and may give the buffer a new size (`BufAlloc`).
        if let Some(result) = crate::plugin_hooks::plugin_buf_gen(command, world, index, &rest()) {
            return match result {
                Ok(()) => Ok(BufDone::done(bufnum, None)),
                Err(e) => Err(BufFail::for_buffer(e.to_string(), bufnum)),
            };
        }
    }
    match buffer_gen(&mut world.buffers, index, command, values) {
        // scsynth's generators do nothing to a buffer without samples and
        // still report /done.
        Ok(()) | Err(BufGenError::NotAllocated(_)) => Ok(BufDone::done(bufnum, None)),
        Err(e @ BufGenError::UnknownCommand(_)) => Err(BufFail::plain(e.to_string())),
        Err(e) => Err(BufFail::for_buffer(e.to_string(), bufnum)),
    }
}

fn set_sample_rate(world: &mut World, bufnum: i32, rate: f32) -> Result<BufDone, BufFail> {
    let index = buffer_index(world, bufnum, false)?;
    world.buffers[index].sample_rate = if rate > 0.0 { f64::from(rate) } else { world.sample_rate };
    Ok(BufDone::none())
}

/// One /b_info reply: bufnum, frames, channels, sample rate for each
/// buffer asked about.
fn query(world: &mut World, buffers: &[i32]) -> Result<BufDone, BufFail> {
    let mut info = Vec::with_capacity(buffers.len());
    for &bufnum in buffers {
        let buf = &world.buffers[buffer_index(world, bufnum, false)?];
        info.push(BufferInfo {
            buffer: bufnum,
            frames: buf.frames as i32,
            channels: buf.channels as i32,
            sample_rate: buf.sample_rate as f32,
        });
    }
    Ok(BufDone::reply(Reply::BufferInfo(info)))
}

/// Replies /b_set with index/value pairs; a bad index fails the whole
/// request with no reply.
fn get(world: &mut World, bufnum: i32, indices: &[i32]) -> Result<BufDone, BufFail> {
    let data = &world.buffers[buffer_index(world, bufnum, false)?].data;
    let mut samples = Vec::with_capacity(indices.len());
    for &i in indices {
        let value = usize::try_from(i)
            .ok()
            .and_then(|i| data.get(i))
            .ok_or_else(|| index_out_of_range(i, bufnum, data.len()))?;
        samples.push((i, *value));
    }
    Ok(BufDone::reply(Reply::BufferSet { buffer: bufnum, samples }))
}

/// Replies /b_setn with start, count and values per range; a range that is
/// not wholly inside the buffer fails the whole request.
fn getn(world: &mut World, bufnum: i32, ranges: &[(i32, i32)]) -> Result<BufDone, BufFail> {
    let data = &world.buffers[buffer_index(world, bufnum, false)?].data;
    let mut values = Vec::with_capacity(ranges.len());
    for &(start, n) in ranges {
        let last = i64::from(start) + i64::from(n) - 1;
        if start < 0 || last >= data.len() as i64 || i64::from(start) > last {
            return Err(BufFail::plain("index out of range"));
        }
        values.push((start, data[start as usize..=last as usize].to_vec()));
    }
    Ok(BufDone::reply(Reply::BufferSetn { buffer: bufnum, ranges: values }))
}

/// A command that reads or writes a buffer's samples needs them all: a world
/// holding only the buffer's shape (the control thread's copy between
/// commands) gets a `/fail` rather than a read past its data.
fn contents_present(buf: &SndBuf, bufnum: i32) -> Result<(), BufFail> {
    let needed = buf.frames as usize * buf.channels as usize;
    if buf.data.len() < needed {
        return Err(BufFail::for_buffer(format!("buffer {bufnum}'s contents are not available"), bufnum));
    }
    Ok(())
}

/// The path `path` leads to, with every symlink resolved, whether or not the
/// file at the end exists: an existing path is canonicalised; a missing one
/// is its parent's real path joined with its name, unless it is a dangling
/// symlink, which is followed to its target. None for a loop of symlinks or
/// a path that cannot be looked at.
fn real_path(path: &Path, followed: usize) -> Option<PathBuf> {
    if followed > MAX_SYMLINKS {
        return None;
    }
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = std::fs::read_link(path).ok()?;
            let next = match path.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            real_path(&next, followed + 1)
        }
        // There but not resolvable (no permission, say): refused.
        Ok(_) => None,
        Err(_) => {
            let name = path.file_name()?;
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            Some(real_path(parent, followed)?.join(name))
        }
    }
}
