//! Builds the per-period slice tables handed to `Process::process` without
//! allocating on the real-time thread.

use super::{PeriodIo, Process};

/// Period timing passed through to [`PeriodIo`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeriodTimes {
    pub start_ns: u64,
    pub next_ns: u64,
    pub output_latency_ns: u64,
}

/// Storage for the tables of channel slices, sized once at start; each period
/// fills and empties it, so pushing never reallocates.
pub(crate) struct SliceTables {
    inputs: Vec<&'static [f32]>,
    outputs: Vec<&'static mut [f32]>,
}

impl SliceTables {
    pub(crate) fn new(num_inputs: usize, num_outputs: usize) -> Self {
        SliceTables { inputs: Vec::with_capacity(num_inputs), outputs: Vec::with_capacity(num_outputs) }
    }

    /// Calls `p` with channel buffers given as raw pointers.
    ///
    /// # Safety
    /// Each input pointer must be valid for reads of `nframes` samples and each
    /// output pointer valid for writes of `nframes` samples, with no other live
    /// reference to them, for the duration of this call. At most the capacities
    /// given to [`SliceTables::new`] pointers may be passed.
    pub(crate) unsafe fn run(
        &mut self,
        p: &mut dyn Process,
        inputs: impl Iterator<Item = *const f32>,
        outputs: impl Iterator<Item = *mut f32>,
        nframes: usize,
        times: PeriodTimes,
    ) {
        let in_cap = self.inputs.capacity();
        let out_cap = self.outputs.capacity();
        for ptr in inputs.take(in_cap) {
            // SAFETY: the caller guarantees `ptr` is readable for `nframes` samples
            // during this call; the table is emptied before returning.
            self.inputs.push(unsafe { std::slice::from_raw_parts(ptr, nframes) });
        }
        for ptr in outputs.take(out_cap) {
            // SAFETY: the caller guarantees `ptr` is exclusively writable for
            // `nframes` samples during this call; the table is emptied before returning.
            self.outputs.push(unsafe { std::slice::from_raw_parts_mut(ptr, nframes) });
        }
        {
            // The second cast shortens the elements' lifetime, which clippy
            // does not count as a change of type.
            #[allow(clippy::unnecessary_cast)]
            let outs = self.outputs.as_mut_slice() as *mut [&'static mut [f32]] as *mut [&mut [f32]];
            // SAFETY: shortening the element lifetime is sound here because the
            // table is cleared right after the call and never read through again,
            // so nothing `process` stores into it can outlive its referent.
            let outs: &mut [&mut [f32]] = unsafe { &mut *outs };
            let mut io = PeriodIo {
                inputs: &self.inputs,
                outputs: outs,
                nframes,
                period_start_ns: times.start_ns,
                next_period_ns: times.next_ns,
                output_latency_ns: times.output_latency_ns,
            };
            // The syscall guard (MAGNETAR_RT_GUARD): loaded on the driver's
            // thread at its first period, judging this callback's calls only.
            magnetar_rt::sysguard::install_on_this_thread(magnetar_rt::sysguard::Role::Audio);
            let _inside = magnetar_rt::sysguard::enter(magnetar_rt::sysguard::Role::Audio);
            magnetar_rt::sysguard::probe();
            p.process(&mut io);
        }
        self.inputs.clear();
        self.outputs.clear();
    }
}
