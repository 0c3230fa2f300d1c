//! `MagnetarConv(in, bufnum)` and `MagnetarConvTD(in, bufnum)`: zero-latency
//! convolution with the impulse response prepared in `bufnum` by
//! `/b_gen bufnum "MagnetarConvPrepare" source [size ...]` (see `nupc`).
//!
//! Level 0 runs in the unit every block. Every later level runs as a
//! periodic task of the server (`MagnetarConv`: the task threads in real
//! time, in step in non-real-time rendering) or in slices in the unit itself
//! (`MagnetarConvTD`: the transform with the first slice of multiply-adds,
//! the inverse with the last, like scsynth's PartConv spreads its work).
//!
//! A level of period `k` gathers input segment `s` in its slot `s % 2`,
//! hands it over when the segment is complete, and plays the result of
//! segment `s − 1` from that block on: it is due then, `k` blocks after its
//! release. A result not done by then is a deadline miss: those `k` blocks
//! of that level are silent, and the next segment, whose slot the task
//! still holds, is dropped (it enters the level as silence). The unit never
//! waits.
//!
//! The response is the buffer's, as it is now: when a command changes the
//! buffer's contents, the server remakes its shared spectra off the audio
//! thread and swaps them in at a block start (`SndBuf::prepared`); the
//! instance takes them at its next block, level 0 at once and each later
//! level from its next release (a segment is convolved with the response
//! of the block it was released in). Contents that are not a response of
//! the instance's layout (zeroed, freed, prepared for another length or
//! other sizes) silence it until the buffer holds one again; the input
//! history is kept meanwhile.

use super::nupc::{Layout, LevelWork, PreparedResponse};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::periodic::{PeriodicWork, TaskHandle, TaskTable};
use magnetar_rt::fallible::filled;
use std::sync::Arc;

/// What a level's task and the unit exchange: a segment and the response
/// to convolve it with in, a result out.
pub struct LevelIo {
    input: Vec<f32>,
    output: Vec<f32>,
    /// Set by the unit at the release (a reference count, no copy); the
    /// last reference is never dropped here (`nupc::release_unused_spectra`).
    h: Option<Arc<PreparedResponse>>,
}

impl LevelIo {
    fn new(m: usize) -> LevelIo {
        LevelIo { input: filled(0.0, m), output: filled(0.0, m), h: None }
    }

    /// Hands `h` over with the segment; an atomic count when it changed.
    fn set_response(&mut self, h: &Option<Arc<PreparedResponse>>) {
        let same = match (&self.h, h) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.h = h.clone();
        }
    }
}

/// A level as a periodic task.
pub struct LevelTask(LevelWork);

impl PeriodicWork for LevelTask {
    type Io = LevelIo;
    fn run(&mut self, io: &mut LevelIo, seq: usize) {
        self.0.run(&io.input, &mut io.output, seq, io.h.as_deref());
    }
}

enum Runner {
    Task(TaskHandle<LevelTask>),
    Sliced {
        work: LevelWork,
        io: [LevelIo; 2],
        /// Release each slot holds, and the last one finished.
        slot_seq: [usize; 2],
        done: usize,
        /// The release being computed, and its next step.
        busy: Option<(usize, usize)>,
    },
}

impl Runner {
    fn slot_free(&self, seq: usize) -> bool {
        match self {
            Runner::Task(t) => t.slot_free(seq),
            Runner::Sliced { slot_seq, done, .. } => slot_seq[seq % 2] <= *done,
        }
    }

    fn input(&mut self, seq: usize) -> Option<&mut [f32]> {
        match self {
            Runner::Task(t) => t.io_mut(seq).map(|io| &mut io.input[..]),
            Runner::Sliced { io, slot_seq, done, .. } => {
                (slot_seq[seq % 2] <= *done).then(|| &mut io[seq % 2].input[..])
            }
        }
    }

    /// Gives the segment being released the response `h` (the slot is the
    /// unit's until the release).
    fn set_response(&mut self, seq: usize, h: &Option<Arc<PreparedResponse>>) {
        let io = match self {
            Runner::Task(t) => t.io_mut(seq),
            Runner::Sliced { io, slot_seq, done, .. } => (slot_seq[seq % 2] <= *done).then(|| &mut io[seq % 2]),
        };
        if let Some(io) = io {
            io.set_response(h);
        }
    }

    fn release(&mut self, seq: usize) -> bool {
        match self {
            Runner::Task(t) => t.release(seq),
            Runner::Sliced { slot_seq, done, busy, .. } => {
                if slot_seq[seq % 2] > *done {
                    return false;
                }
                slot_seq[seq % 2] = seq;
                *busy = Some((seq, 0));
                true
            }
        }
    }

    fn output(&self, seq: usize) -> Option<&[f32]> {
        match self {
            Runner::Task(t) => t.io(seq).map(|io| &io.output[..]),
            Runner::Sliced { io, slot_seq, done, .. } => {
                (slot_seq[seq % 2] == seq && *done >= seq).then(|| &io[seq % 2].output[..])
            }
        }
    }

    /// One block's slice of the release in progress (sliced levels only).
    fn step(&mut self, steps: usize) {
        if let Runner::Sliced { work, io, done, busy, .. } = self {
            if let Some((seq, step)) = *busy {
                let slot = &mut io[seq % 2];
                work.run_step(&slot.input, &mut slot.output, seq, step, steps, slot.h.as_deref());
                if step + 1 == steps {
                    *done = seq;
                    *busy = None;
                } else {
                    *busy = Some((seq, step + 1));
                }
            }
        }
    }

    fn count_miss(&self) {
        if let Runner::Task(t) = self {
            t.table().count_miss();
        }
    }
}

struct Secondary {
    /// Period in blocks.
    k: usize,
    /// Blocks this level runs ahead of the instance's block count.
    phase: usize,
    runner: Runner,
    /// Whether the segment being gathered has its slot.
    writing: bool,
    /// The release each slot was last handed over with.
    released: [usize; 2],
    /// The release whose result is playing (0: none), and the block of it.
    play: usize,
    play_pos: usize,
}

struct Conv {
    n: usize,
    bufnum: usize,
    /// The layout the instance was built for.
    layout: Layout,
    /// The response it convolves with: its buffer's, when that is one of
    /// `layout` (None: silent).
    current: Option<Arc<PreparedResponse>>,
    /// The address of the buffer's response last looked at (0: none), so
    /// that a change is looked at once.
    seen: usize,
    /// Blocks since an instant shared by every instance (each level adds
    /// its phase).
    block: usize,
    head: LevelWork,
    head_out: Vec<f32>,
    input: Vec<f32>,
    levels: Vec<Secondary>,
}

/// The two units: `SLICED` false runs the levels after the first as tasks.
pub struct MagnetarConvUnit<const SLICED: bool> {
    conv: Option<Conv>,
}

pub type MagnetarConv = MagnetarConvUnit<false>;
pub type MagnetarConvTd = MagnetarConvUnit<true>;

impl<const SLICED: bool> Construct for MagnetarConvUnit<SLICED> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        io.out(0)[0] = 0.0;
        let conv = Conv::open(io, cx, SLICED);
        if conv.is_none() {
            cx.set_done(true);
        }
        MagnetarConvUnit { conv }
    }
}

impl Conv {
    fn open(io: &Wires<'_>, cx: &mut UnitCtx<'_>, sliced: bool) -> Option<Conv> {
        let bufnum = io.in0(1) as i32 as u32 as usize;
        let n = cx.world.block_size;
        let tasks: Option<Arc<TaskTable>> = cx.world.tasks.clone();
        let instance = cx.world.staggered_units;
        cx.world.staggered_units = instance.wrapping_add(1);
        let buf = cx.world.buf(bufnum).filter(|b| b.is_allocated())?;
        let layout = match &buf.prepared {
            Some(p) => p.layout.clone(),
            // Contents whose response is on its way (written by `/b_setn`
            // in this very bundle, say): silent until it comes.
            None => Layout::read(&buf.data)?,
        };
        if layout.block != n {
            return None;
        }
        let current = buf.prepared.clone();
        let seen = address(buf.prepared.as_ref());
        let head = LevelWork::new(&layout.levels[0], layout.spectra_at(0));
        let kmax = layout.levels.last().map_or(1, |l| l.size / n);
        let block = (cx.world.buf_counter as u32 as usize) % kmax;
        // Instance `instance` runs each level that many blocks out of phase (modulo its
        // period), so the releases of many instances spread over the period
        // instead of all falling in one block. A level's output does not
        // depend on its phase (each segment's result is due 2M − N samples
        // after the segment's start, wherever that is).
        let mut levels = Vec::with_capacity(layout.levels.len());
        for (l, level) in layout.levels.iter().enumerate().skip(1) {
            let work = LevelWork::new(level, layout.spectra_at(l));
            let k = level.size / n;
            let m = level.size;
            let runner = match (sliced, tasks.as_ref()) {
                (false, Some(t)) => match TaskTable::register(t, k, LevelTask(work), [LevelIo::new(m), LevelIo::new(m)]) {
                    Ok(h) => Runner::Task(h),
                    // No room in the class: this level is sliced instead.
                    Err(_) => Runner::Sliced {
                        work: LevelWork::new(level, layout.spectra_at(l)),
                        io: [LevelIo::new(m), LevelIo::new(m)],
                        slot_seq: [0; 2],
                        done: 0,
                        busy: None,
                    },
                },
                _ => Runner::Sliced { work, io: [LevelIo::new(m), LevelIo::new(m)], slot_seq: [0; 2], done: 0, busy: None },
            };
            levels.push(Secondary { k, phase: instance % k, runner, writing: true, released: [0; 2], play: 0, play_pos: 0 });
        }
        Some(Conv { n, bufnum, layout, current, seen, block, head, head_out: vec![0.0; n], input: vec![0.0; n], levels })
    }

    /// Follows the buffer's response `now` (an atomic count, and a look at
    /// the layout, only when it changed).
    fn follow(&mut self, now: Option<&Arc<PreparedResponse>>) {
        let at = address(now);
        if at != self.seen {
            self.seen = at;
            self.current = now.filter(|p| p.layout == self.layout).cloned();
        }
    }

    fn next(&mut self, input: &[f32], out: &mut [f32]) {
        let n = self.n;
        if input.len() >= n {
            self.input.copy_from_slice(&input[..n]);
        } else {
            self.input.fill(input.first().copied().unwrap_or(0.0));
        }
        let g = self.block;
        self.head.run(&self.input, &mut self.head_out, g + 1, self.current.as_deref());
        out[..n].copy_from_slice(&self.head_out);
        for level in &mut self.levels {
            let k = level.k;
            let gl = g + level.phase;
            let pos = gl % k;
            let seq = gl / k + 1;
            if pos == 0 {
                level.writing = level.runner.slot_free(seq);
            }
            if level.writing {
                if let Some(dst) = level.runner.input(seq) {
                    dst[pos * n..(pos + 1) * n].copy_from_slice(&self.input);
                }
            }
            if pos == k - 1 {
                // The result of the segment before is due now.
                level.play = 0;
                if seq > 1 {
                    let due = seq - 1;
                    if level.runner.output(due).is_some() {
                        level.play = due;
                        level.play_pos = 0;
                    } else if level.released[due % 2] == due {
                        level.runner.count_miss();
                    }
                }
                if level.writing {
                    level.runner.set_response(seq, &self.current);
                    if level.runner.release(seq) {
                        level.released[seq % 2] = seq;
                    }
                }
                level.writing = false;
            }
            level.runner.step(k);
            if level.play != 0 {
                if let Some(res) = level.runner.output(level.play) {
                    let at = level.play_pos * n;
                    for (o, r) in out[..n].iter_mut().zip(&res[at..at + n]) {
                        *o += *r;
                    }
                }
                level.play_pos += 1;
                if level.play_pos == k {
                    level.play = 0;
                }
            }
        }
        self.block = g + 1;
    }
}

impl<const SLICED: bool> Unit for MagnetarConvUnit<SLICED> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(conv) = self.conv.as_mut() else {
            io.out(0).fill(0.0);
            return;
        };
        conv.follow(cx.world.buf(conv.bufnum).and_then(|b| b.prepared.as_ref()));
        let input = io.inp(0);
        let audio = io.in_rate(0) == Rate::Audio;
        let out = io.out(0);
        if audio {
            conv.next(input, out);
        } else {
            conv.next(&input[..1], out);
        }
    }
}

/// Where a response lives (0: none), to notice that a buffer's changed.
fn address(p: Option<&Arc<PreparedResponse>>) -> usize {
    p.map_or(0, |p| Arc::as_ptr(p) as usize)
}
