//! MagnetarConv against plain convolution, at every kind of layout.

use super::nupc::{prepare_magnetar_conv, Layout};
use super::nupc_tune::{candidate_sizes, tune};
use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::{SndBuf, World};
use magnetar_rt::periodic::TaskTable;

fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Decaying noise, like a room's response.
fn response(len: usize) -> Vec<f32> {
    noise(len, 7).iter().enumerate().map(|(i, v)| v * (-3.0 * i as f32 / len as f32).exp()).collect()
}

fn direct(x: &[f32], h: &[f32], len: usize) -> Vec<f64> {
    (0..len)
        .map(|t| (0..h.len().min(t + 1)).map(|j| h[j] as f64 * x[t - j] as f64).sum())
        .collect()
}

fn snr_db(got: &[f32], want: &[f64]) -> f64 {
    let sig: f64 = want.iter().map(|v| v * v).sum();
    let err: f64 = got.iter().zip(want).map(|(g, w)| (*g as f64 - w).powi(2)).sum();
    10.0 * (sig / err.max(1e-300)).log10()
}

/// Renders `blocks` blocks of `x` through the unit `name` with `h` prepared as `sizes`.
fn render(name: &str, block: usize, x: &[f32], h: &[f32], sizes: &[f32], tasks: bool) -> (Vec<f32>, Layout) {
    render_nth(name, block, x, h, sizes, tasks, 0, true)
}

/// As `render`, for the unit built after `before` others (its phase), on a
/// prepared buffer (`prepared`) or one filled with the same values by hand
/// (as `/b_setn` would, the server then remaking its response).
#[allow(clippy::too_many_arguments)]
fn render_nth(
    name: &str,
    block: usize,
    x: &[f32],
    h: &[f32],
    sizes: &[f32],
    tasks: bool,
    before: usize,
    prepared: bool,
) -> (Vec<f32>, Layout) {
    let blocks = x.len() / block;
    let mut harness = UnitHarness::new(name, Rate::Audio)
        .inputs([TestInput::Audio(x.to_vec()), TestInput::Const(1.0)]);
    harness.world = World::new(48_000.0, block, 128, 4096, 16, 2, 2, 1);
    if tasks {
        harness.world.tasks = Some(TaskTable::new(12, 4, true).0);
    }
    let mut ir = SndBuf::new(h.len() as u32, 1, 48_000.0);
    ir.data.copy_from_slice(h);
    harness.world.buffers[0] = ir;
    let mut args = vec![0.0];
    args.extend_from_slice(sizes);
    let layout = prepare_magnetar_conv(&mut harness.world.buffers, 1, &args, block, 48_000.0, 1).unwrap();
    if !prepared {
        let mut by_hand = SndBuf::new(layout.buffer_len() as u32, 1, 48_000.0);
        by_hand.data.copy_from_slice(&harness.world.buffers[1].data);
        super::nupc::refresh_prepared(&mut by_hand);
        assert!(by_hand.prepared.is_some());
        harness.world.buffers[1] = by_hand;
    }
    harness.world.staggered_units = before;
    (harness.run(blocks).remove(0), layout)
}

#[test]
fn layouts_start_each_level_where_its_deadline_allows() {
    let l = Layout::from_sizes(64, 200_000, &[512, 4096, 32768]).unwrap();
    let got: Vec<_> = l.levels.iter().map(|v| (v.size, v.count, v.offset)).collect();
    assert_eq!(got[..3], [(64, 15, 0), (512, 14, 960), (4096, 14, 8128)]);
    assert_eq!(got[3].2, 2 * 32768 - 64);
    assert!(got[3].2 + got[3].0 * got[3].1 >= 200_000);
    assert!(Layout::from_sizes(64, 1000, &[96]).is_err());
    assert!(Layout::from_sizes(64, 1000, &[512, 256]).is_err());
}

#[test]
fn magnetar_conv_equals_plain_convolution_with_no_latency_at_every_layout() {
    for &(block, ir_len) in &[(32usize, 4800usize), (64, 4800), (256, 9000), (1024, 12_000)] {
        let h = response(ir_len);
        let x = noise(block * ((ir_len * 2) / block + 8), 3);
        let want = direct(&x, &h, x.len());
        let cands = candidate_sizes(block, ir_len);
        // Every single later size, all sizes, and doubling pairs: the shapes the tuner picks from.
        let mut layouts: Vec<Vec<usize>> = vec![vec![], cands[1..].to_vec()];
        layouts.extend(cands[1..].iter().map(|&m| vec![m]));
        layouts.extend(cands[1..].windows(2).map(|w| w.to_vec()));
        layouts.push(tune(block, ir_len, 48_000.0, 12, 1).unwrap().sizes());
        layouts.push(tune(block, ir_len, 48_000.0, 12, 2).unwrap().sizes());
        for sizes in layouts {
            let sizes_f: Vec<f32> = sizes.iter().map(|&v| v as f32).collect();
            for (name, tasks) in [("MagnetarConv", true), ("MagnetarConvTD", false)] {
                let (out, layout) = render(name, block, &x, &h, &sizes_f, tasks);
                let snr = snr_db(&out, &want);
                assert!(snr >= 120.0, "{name} block {block} IR {ir_len} sizes {sizes:?} ({layout:?}): SNR {snr:.1} dB");
            }
        }
    }
}

#[test]
fn an_unprepared_buffer_leaves_the_unit_silent() {
    let mut harness = UnitHarness::new("MagnetarConv", Rate::Audio)
        .inputs([TestInput::Audio(noise(640, 1)), TestInput::Const(0.0)]);
    harness.world.buffers[0] = SndBuf::new(4096, 1, 48_000.0);
    harness.world.buffers[0].data.copy_from_slice(&noise(4096, 2));
    let out = harness.run(10).remove(0);
    assert!(out.iter().all(|v| *v == 0.0));
}

#[test]
fn every_instance_phase_gives_the_same_convolution() {
    let (block, ir_len) = (64, 9000);
    let h = response(ir_len);
    let x = noise(block * ((ir_len * 2) / block + 8), 4);
    let want = direct(&x, &h, x.len());
    let sizes = [256.0, 1024.0, 4096.0];
    for before in [1, 2, 3, 5, 17, 63, 64, 1000] {
        for (name, tasks) in [("MagnetarConv", true), ("MagnetarConvTD", false)] {
            for prepared in [true, false] {
                let (out, _) = render_nth(name, block, &x, &h, &sizes, tasks, before, prepared);
                let snr = snr_db(&out, &want);
                assert!(snr >= 120.0, "{name}, instance {before}, prepared {prepared}: SNR {snr:.1} dB");
            }
        }
    }
}

#[test]
fn instances_read_the_prepared_spectra_in_place_and_the_last_user_lets_them_go() {
    use std::sync::Arc;
    let mut world = World::new(48_000.0, 64, 128, 4096, 4, 2, 2, 1);
    let mut ir = SndBuf::new(20_000, 1, 48_000.0);
    ir.data.copy_from_slice(&response(20_000));
    world.buffers[0] = ir;
    prepare_magnetar_conv(&mut world.buffers, 1, &[0.0, 512.0, 4096.0], 64, 48_000.0, 1).unwrap();
    let spectra = world.buffers[1].prepared.clone().expect("a prepared buffer shares its spectra");
    // This handle, the buffer's and the list that frees them off the audio thread.
    assert_eq!(Arc::strong_count(&spectra), 3);
    let layout = Layout::read(&world.buffers[1].data).unwrap();
    // Plans are made once per size, by the preparation, and shared.
    for level in &layout.levels {
        let plans = super::nupc::planned(level.size).expect("planned when prepared");
        assert!(std::ptr::eq(plans, super::nupc::plans(level.size).unwrap()));
    }
    let mut harness = UnitHarness::new("MagnetarConv", Rate::Audio).inputs([TestInput::Audio(noise(640, 1)), TestInput::Const(1.0)]);
    harness.world = world;
    harness.world.tasks = Some(TaskTable::new(12, 4, true).0);
    let mut run = harness.run_full(10);
    assert!(run.outputs[0].iter().any(|v| *v != 0.0));
    assert_eq!(Arc::strong_count(&spectra), 3, "the unit let its references go");
    run.world.buffers[1] = SndBuf::default();
    drop(spectra);
    // Only the list holds them now: freed by the thread that sweeps it.
    assert!(super::nupc::release_unused_spectra() >= 1);
}

/// Each layout is the best for its CPUs, by the same measured costs. A
/// smaller head with two CPUs is not promised: when a period class or the
/// total over the CPUs binds, a layout with a larger head may fit more
/// instances, and which one wins depends on the costs this machine measured.
#[test]
fn with_task_threads_on_another_cpu_the_tuner_picks_what_fits_two_cpus_best() {
    use super::nupc_tune::tune_with_cost;
    for &(block, ir_len) in &[(64usize, 48_000usize), (64, 240_000), (256, 48_000), (256, 576_000)] {
        let (one, c1) = tune_with_cost(block, ir_len, 48_000.0, 12, 1).unwrap();
        let (two, c2) = tune_with_cost(block, ir_len, 48_000.0, 12, 2).unwrap();
        // The one-CPU layout is among those the two-CPU search weighs.
        assert!(c2.score(2) <= c1.score(2), "block {block} IR {ir_len}: {two:?} {c2:?} against {one:?} {c1:?}");
        // On one CPU the total decides.
        assert!(c1.score(1) <= c2.score(1), "block {block} IR {ir_len}: {c1:?} against {c2:?}");
    }
}

#[test]
fn the_tuner_picks_the_layout_that_fits_the_most_instances_among_all_it_may_pick() {
    use super::nupc_tune::{layout_cost, tune_with_cost};
    for &(block, ir_len) in &[(64usize, 48_000usize), (64, 240_000), (256, 48_000), (256, 576_000)] {
        let later = &candidate_sizes(block, ir_len)[1..];
        for cpus in [1, 2] {
            let (layout, cost) = tune_with_cost(block, ir_len, 48_000.0, 12, cpus).unwrap();
            // The cost the tuner reports is the layout's (up to the order of the sums).
            let own = layout_cost(block, ir_len, 48_000.0, &layout.sizes()).expect("the tuned layout meets its deadlines");
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
            assert!(close(own.head, cost.head) && close(own.tasks, cost.tasks) && close(own.class, cost.class), "{own:?} against {cost:?}");
            // Every subset of the later sizes, in order: every layout there is.
            for mask in 0u32..1 << later.len() {
                let sizes: Vec<usize> = later.iter().enumerate().filter(|(b, _)| mask & 1 << b != 0).map(|(_, &m)| m).collect();
                let Some(other) = layout_cost(block, ir_len, 48_000.0, &sizes) else { continue };
                assert!(
                    cost.score(cpus) <= other.score(cpus) * (1.0 + 1e-9),
                    "block {block} IR {ir_len} on {cpus} CPUs: {:?} ({cost:?}) against {sizes:?} ({other:?})",
                    layout.sizes()
                );
            }
        }
    }
}
