//! Audio-thread time per block and total CPU of the convolution units, for
//! `bench/conv_bench.py`: `channels` instances of one unit run block after
//! block at the real-time pace (the calling thread under SCHED_FIFO 50, as
//! the audio thread), with the server's task threads serving MagnetarConv's
//! later levels.
//!
//! ```text
//! cargo run --release -p magnetar-engine --example conv_bench -- \
//!     UNIT BLOCK IR_SECONDS CHANNELS SECONDS CPUS [SIZE ...]
//! ```
//! UNIT is MagnetarConv, MagnetarConvTD or PartConv (SIZE = its FFT size;
//! for the others the partition sizes, none = tuned). Prints one JSON line;
//! `start_us` and `start_cpu_us` are the wall and thread CPU time the
//! constructors took per instance (what `/s_new` pays).

use magnetar_engine::tasks::TaskThreads;
use magnetar_ugens::convolution::{prepare_magnetar_conv, prepare_part_conv};
use magnetar_ugens::registry::Registry;
use magnetar_ugens::world::{SndBuf, SynthCtx, World};
use magnetar_ugens::unit::NO_UNIT;
use magnetar_ugens::{Rate, UnitCtx, UnitSpec, WireRef, Wires};
use std::time::{Duration, Instant};

const SR: f64 = 48_000.0;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU time of the calling thread, in seconds: what starting instances
/// costs, whatever else the machine runs meanwhile.
fn thread_cpu_seconds() -> f64 {
    // SAFETY: clock_gettime writes into the struct we own.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 7 {
        eprintln!("usage: conv_bench UNIT BLOCK IR_SECONDS CHANNELS SECONDS CPUS [SIZE ...]");
        std::process::exit(2);
    }
    let unit = a[1].as_str();
    let block: usize = a[2].parse().expect("block");
    let ir_seconds: f64 = a[3].parse().expect("ir seconds");
    let channels: usize = a[4].parse().expect("channels");
    let seconds: f64 = a[5].parse().expect("seconds");
    let cpus: usize = a[6].parse().expect("cpus");
    let sizes: Vec<f32> = a[7..].iter().map(|s| s.parse().expect("size")).collect();

    let tasks = TaskThreads::new(true, cpus);
    let mut world = World::new(SR, block, 128, 4096, 16, 2, 2, 1);
    world.tasks = Some(std::sync::Arc::clone(&tasks.table));
    let n = (ir_seconds * SR) as usize;
    let mut ir = SndBuf::new(n as u32, 1, SR);
    let mut s = 1u32;
    for (i, v) in ir.data.iter_mut().enumerate() {
        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
        *v = ((s >> 8) as f32 / 16_777_216.0 - 0.5) * (-4.0 * i as f32 / n as f32).exp();
    }
    world.buffers[0] = ir;
    let layout = if unit == "PartConv" {
        let fft = sizes.first().copied().unwrap_or(2048.0) as usize;
        let parts = (2 * n).div_ceil(fft);
        world.buffers[1] = SndBuf::new((fft * parts) as u32, 1, SR);
        prepare_part_conv(&mut world.buffers, 1, &[0.0, fft as f32]).expect("PreparePartConv");
        format!("uniform {} x {parts}, latency {}", fft / 2, fft / 2)
    } else {
        let mut args = vec![0.0];
        args.extend(&sizes);
        let l = prepare_magnetar_conv(&mut world.buffers, 1, &args, block, SR, tasks.table.cpus()).expect("prepare");
        l.levels.iter().map(|v| format!("{}x{}", v.size, v.count)).collect::<Vec<_>>().join(" ")
    };

    let registry = Registry::with_all();
    let ctor = registry.get(unit).expect("unit");
    let nin = if unit == "PartConv" { 3 } else { 2 };
    let mut synth = SynthCtx::default();
    // Per channel: input block, constants, output block.
    let mut wires: Vec<Vec<f32>> = Vec::new();
    let mut refs: Vec<(Vec<WireRef>, Vec<WireRef>)> = Vec::new();
    let mut units = Vec::new();
    let mut done = vec![false];
    // Instance start cost: the constructors alone, as `/s_new` pays it.
    let mut start_ns = 0u128;
    let mut start_cpu = 0.0;
    for c in 0..channels {
        let mut w = vec![0.0f32; block + 2 + block];
        let inp = vec![
            WireRef { offset: 0, rate: Rate::Audio, from_unit: NO_UNIT },
            WireRef { offset: block as u32, rate: Rate::Scalar, from_unit: NO_UNIT },
            WireRef { offset: block as u32 + 1, rate: Rate::Scalar, from_unit: NO_UNIT },
        ][..nin]
            .to_vec();
        if unit == "PartConv" {
            w[block] = sizes.first().copied().unwrap_or(2048.0);
            w[block + 1] = 1.0;
        } else {
            w[block] = 1.0;
        }
        let out = vec![WireRef { offset: block as u32 + 2, rate: Rate::Audio, from_unit: 0 }];
        let spec = UnitSpec { name: unit, rate: Rate::Audio, special_index: 0, num_inputs: nin, num_outputs: 1, lanes: 1 };
        let rate = world.full_rate;
        // SAFETY: `w` holds every wire named, without overlap.
        let mut io = unsafe { Wires::new(w.as_mut_ptr(), std::ptr::null_mut(), &inp, &out, block, 1) };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        let (t, c0) = (Instant::now(), thread_cpu_seconds());
        units.push(ctor(&spec, &mut io, &mut cx));
        start_ns += t.elapsed().as_nanos();
        start_cpu += thread_cpu_seconds() - c0;
        let _ = c;
        wires.push(w);
        refs.push((inp, out));
    }
    let _ = magnetar_rt::thread::set_fifo_priority(50);
    let blocks = (seconds * SR / block as f64) as usize;
    let period = Duration::from_secs_f64(block as f64 / SR);
    let mut times = Vec::with_capacity(blocks);
    let mut s = 7u32;
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut origin = start;
    // Periods the pacing lost (the thread woke more than a period late, as
    // a driver's xrun): the schedule restarts from now instead of catching up.
    let mut late = 0u64;
    let misses0 = tasks.deadline_misses();
    for b in 0..blocks {
        let mut due = origin + period * b as u32;
        if Instant::now() > due + period {
            late += 1;
            origin = Instant::now() - period * b as u32;
            due = origin + period * b as u32;
        }
        while Instant::now() < due {
            std::thread::sleep(due.saturating_duration_since(Instant::now()).min(Duration::from_micros(200)));
        }
        for w in wires.iter_mut() {
            for v in &mut w[..block] {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                *v = (s >> 8) as f32 / 16_777_216.0 - 0.5;
            }
        }
        let t = Instant::now();
        world.buf_counter += 1;
        for ((u, w), (inp, out)) in units.iter_mut().zip(wires.iter_mut()).zip(&refs) {
            let rate = world.full_rate;
            // SAFETY: as above.
            let mut io = unsafe { Wires::new(w.as_mut_ptr(), std::ptr::null_mut(), inp, out, block, block) };
            let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
            u.next(&mut io, &mut cx);
        }
        times.push(t.elapsed().as_nanos() as u64);
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let misses = tasks.deadline_misses() - misses0;
    times.sort_unstable();
    let mean = times.iter().sum::<u64>() as f64 / times.len() as f64;
    let p999 = times[((times.len() as f64 * 0.999) as usize).min(times.len() - 1)];
    let max = *times.last().unwrap_or(&0);
    println!(
        "{{\"unit\":\"{unit}\",\"block\":{block},\"ir\":{ir_seconds},\"channels\":{channels},\"layout\":\"{layout}\",\
         \"mean_us\":{:.2},\"p999_us\":{:.2},\"max_us\":{:.2},\"cpu_pct\":{:.1},\"period_us\":{:.1},\"misses\":{misses},\"late\":{late},\
         \"start_us\":{:.1},\"start_cpu_us\":{:.1}}}",
        mean / 1e3,
        p999 as f64 / 1e3,
        max as f64 / 1e3,
        100.0 * cpu / wall,
        period.as_secs_f64() * 1e6,
        start_ns as f64 / 1e3 / channels.max(1) as f64,
        start_cpu * 1e6 / channels.max(1) as f64
    );
    drop(units);
}
