//! The `/b_gen` generators plugins define (`DefineBufGen`), and
//! `BufAlloc`, which those generators call to give a buffer a new size.
//!
//! magnetar runs `/b_gen` off the audio thread on a copy of the buffer
//! (scsynth's stage 2 runs generators on its non-real-time mirror), then
//! installs the result on the audio thread; a plugin's generator runs at
//! the same place. Its `SndBuf` is the buffer's entry in the C world's
//! non-real-time mirror, pointing at that copy. `BufAlloc` takes new
//! zeroed memory there (as scsynth's does, from the system heap, off the
//! audio thread); after the generator returns, the new contents become the
//! buffer's own and the memory `BufAlloc` took is given back.

use crate::ffi::{self, SndBuf};
use crate::print;
use magnetar_ugens::world::SpectrumForm;
use std::cell::{Cell, RefCell};
use std::os::raw::{c_char, c_int};

thread_local! {
    /// Whether a plugin's generator is running on this thread.
    static IN_GEN: Cell<bool> = const { Cell::new(false) };
    /// What `BufAlloc` took during the running generator.
    static TAKEN: RefCell<Vec<*mut f32>> = const { RefCell::new(Vec::new()) };
}

/// `fBufAlloc`: `channels` × `frames` zeroed samples for `buf`, its sizes
/// and sample rate set; 0, or 1 (scsynth's `kSCErr_Failed`) when the size
/// is not positive or the memory is not there. Only a generator may call
/// it (the interface says so): elsewhere (on the audio thread, say) it
/// refuses, where scsynth would race the buffer's users.
pub(crate) unsafe extern "C" fn buf_alloc(buf: *mut SndBuf, channels: c_int, frames: c_int, sample_rate: f64) -> c_int {
    let samples = i64::from(channels) * i64::from(frames);
    if buf.is_null() || !IN_GEN.with(Cell::get) || channels < 1 || frames < 1 || samples > i64::from(i32::MAX) {
        return 1;
    }
    // SAFETY: plain calloc, as scsynth's zalloc; freed in `run`.
    let data = unsafe { libc::calloc(samples as usize, std::mem::size_of::<f32>()) } as *mut f32;
    if data.is_null() {
        return 1;
    }
    TAKEN.with(|t| t.borrow_mut().push(data));
    // SAFETY: `buf` is the SndBuf the generator was given (the interface's contract).
    let b = unsafe { &mut *buf };
    b.data = data;
    b.channels = channels;
    b.frames = frames;
    b.samples = samples as c_int;
    b.mask = crate::unit::buf_mask(samples as usize);
    b.mask1 = b.mask.wrapping_sub(1);
    b.samplerate = sample_rate;
    b.sampledur = if sample_rate != 0.0 { 1.0 / sample_rate } else { 0.0 };
    0
}

/// Why a plugin's `/b_gen` generator did not run.
#[derive(Debug, thiserror::Error)]
pub enum BufGenError {
    #[error("buffer number {0} out of range")]
    BufferOutOfRange(usize),
    /// The generator threw a C++ exception (stopped at the boundary).
    #[error("{0} threw an exception")]
    Threw(String),
}

/// Runs `/b_gen` generator `name`, if a plugin defined it, on buffer
/// `index` of `world` with its OSC arguments `args` (from the type tag
/// string on). Call off the audio thread.
pub fn run(name: &str, world: &mut magnetar_ugens::World, index: usize, args: &[u8]) -> Option<Result<(), BufGenError>> {
    let func = *crate::host()?.buf_gens.get(name)?;
    if index >= world.buffers.len() {
        return Some(Err(BufGenError::BufferOutOfRange(index)));
    }
    // Generators run off the audio thread, where the FFT plans may be made.
    crate::prepare_fft();
    let cworld = crate::unit::sync_world(world, true);
    // SAFETY: the C world's non-real-time mirror holds one entry per buffer of `world`.
    let cbuf = unsafe { (*cworld).snd_bufs_non_real_time_mirror.add(index) };
    // SAFETY: as above.
    let before = unsafe { *cbuf };
    let size = c_int::try_from(args.len()).unwrap_or(c_int::MAX);
    IN_GEN.with(|g| g.set(true));
    let was = print::set_in_unit(false);
    // SAFETY: the plugin's generator with this thread's C world, the
    // buffer's mirror entry and `size` bytes of arguments; the shim stops
    // an exception.
    let threw = unsafe { ffi::mg_call_buf_gen(func, cworld, cbuf, args.as_ptr() as *const c_char, size) };
    print::set_in_unit(was);
    IN_GEN.with(|g| g.set(false));
    // SAFETY: as above.
    let after = unsafe { *cbuf };
    let buf = &mut world.buffers[index];
    let samples = (after.channels.max(0) as usize) * (after.frames.max(0) as usize);
    if after.data != before.data {
        // New memory (BufAlloc): its contents become the buffer's.
        buf.data = if after.data.is_null() || samples == 0 {
            Vec::new()
        } else {
            // SAFETY: the generator's buffer holds `channels` × `frames` samples.
            unsafe { std::slice::from_raw_parts(after.data, samples) }.to_vec()
        };
        buf.channels = after.channels.max(0) as u32;
        buf.frames = after.frames.max(0) as u32;
        buf.spectrum = SpectrumForm::None;
        buf.prepared = None;
    } else if samples <= buf.data.len() && (after.channels, after.frames) != (before.channels, before.frames) {
        // Same memory, fewer samples.
        buf.data.truncate(samples);
        buf.channels = after.channels.max(0) as u32;
        buf.frames = after.frames.max(0) as u32;
    }
    buf.sample_rate = after.samplerate;
    for p in TAKEN.with(|t| std::mem::take(&mut *t.borrow_mut())) {
        // SAFETY: taken by `buf_alloc` (calloc) during this call, copied above.
        unsafe { libc::free(p as *mut libc::c_void) };
    }
    // The mirror entry is made again from the buffer before its next use;
    // it must not keep the pointer freed above.
    // SAFETY: as above.
    unsafe { *cbuf = SndBuf::EMPTY };
    if threw != 0 {
        print::line(&format!("plugins: /b_gen {name} threw an exception\n"));
        return Some(Err(BufGenError::Threw(name.to_string())));
    }
    Some(Ok(()))
}
