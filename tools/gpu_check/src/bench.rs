//! The benchmark half of `gpu_check`: every figure is measured in this run, on this
//! machine, next to its baseline (copy bandwidth for rounds; the CPU backend on all of the
//! machine's cores and the reference solver for solves).

use std::time::{Duration, Instant};

use crate::bandwidth::copy_bandwidth;
use egsolve_core::arena::Arena;
use egsolve_core::solve::cpu::{CpuOptions, lift_from};
use egsolve_core::solve::{Backend, Control, energy, solve};
use egsolve_gpu::VertexOrder;
use egsolve_gpu::{GpuEngine, GpuOptions};

use super::games;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Runs every benchmark; `max_edges` caps the generated sizes, `cpu_limit` the seconds the
/// reference may take per game.
pub fn run(max_edges: u64, cpu_limit: f64, data: Option<std::path::PathBuf>) {
    let bandwidth = match copy_bandwidth(0, 1 << 30, 10) {
        Ok(b) => b,
        Err(e) => return println!("bench: {e}"),
    };
    println!(
        "copy bandwidth (1 GiB D2D, read+write, median of 10): {:.0} GB/s",
        bandwidth / 1e9
    );

    println!("\n== per-round overhead, tiny frontiers (ring: one vertex per round) ==");
    tiny_rounds(
        &games::ring(1000, 200),
        "persistent, 1-block tier",
        GpuOptions::default(),
    );
    tiny_rounds(
        &games::ring(1000, 200),
        "persistent, full grid only",
        GpuOptions {
            no_small_tier: true,
            ..GpuOptions::default()
        },
    );
    tiny_rounds(
        &games::ring(1000, 10),
        "host-driven (1 round/launch)",
        GpuOptions {
            rounds_per_launch: Some(1),
            ..GpuOptions::default()
        },
    );

    println!("\n== full-frontier rounds and end-to-end solves on random games ==");
    // Large games that lifting finishes (mostly gains, 3% of edges −3: small credits), and
    // one hard game (uniform weights ±10: W1 vertices climb to ⊤ one step at a time).
    let shapes: &[(&str, u64, u32, f64)] = &[
        ("gains, 1% losses", 1_000_000, 4, 0.01),
        ("gains, 3% losses", 10_000_000, 4, 0.03),
        ("gains, 1% losses", 10_000_000, 16, 0.01),
        ("gains, 3% losses", 100_000_000, 4, 0.03),
        ("uniform ±10 (hard)", 1_000_000, 4, -1.0),
    ];
    for &(label, m, avg, negative) in shapes {
        if m > max_edges {
            continue;
        }
        let n = (m / avg as u64) as u32;
        let t = Instant::now();
        let arena = if negative < 0.0 {
            games::random(1000 + m, n, avg, -10, 10, false)
        } else {
            games::mostly_gains(1000 + m + avg as u64, n, avg, negative, 3, 10)
        };
        println!(
            "\n-- {label}: n={n} m={} avg degree {avg} (generated in {:.1} s) --",
            arena.edge_count(),
            t.elapsed().as_secs_f64()
        );
        if m >= 10_000_000 {
            full_rounds(&arena, bandwidth);
        }
        end_to_end(&arena, cpu_limit);
    }
    if let Some(dir) = data {
        println!("\n== shared data, end to end ==");
        for case in games::shared_data(&dir)
            .into_iter()
            .filter(|c| c.arena.edge_count() >= 100_000)
        {
            println!(
                "\n-- {} n={} m={} --",
                case.name,
                case.arena.vertex_count(),
                case.arena.edge_count()
            );
            end_to_end(&case.arena, cpu_limit);
        }
    }
}

fn tiny_rounds(arena: &Arena, label: &str, options: GpuOptions) {
    let bound = energy::bound(arena).expect("small bound");
    let result = GpuEngine::upload(arena, Some(bound), &options).and_then(|mut engine| {
        engine
            .lift_from(None, &options, &Control::new())
            .map_err(|e| match e {
                egsolve_gpu::GpuSolveError::Gpu(g) => g,
                other => panic!("{other}"),
            })
    });
    match result {
        Ok(run) => println!(
            "{label:<32} rounds {:>8}  launches {:>6}  solve {:>9.2} ms  {:>6.2} µs/round",
            run.rounds,
            run.launches,
            run.timings.solve * 1e3,
            run.timings.solve * 1e6 / run.rounds as f64
        ),
        Err(e) => println!("{label}: {e}"),
    }
}

/// The full-round table (every lane count, dense and list frontiers, each layout) of the
/// "gains, 3% losses" game of `edges` edges at average degree `degree`, against the copy
/// bandwidth measured first: one kernel variant per process (`EGSOLVE_NVRTC_EXTRA_OPTIONS`).
pub fn full_rounds_table(edges: u64, degree: u32) {
    let bandwidth = match copy_bandwidth(0, 1 << 30, 10) {
        Ok(b) => b,
        Err(e) => return println!("bench: {e}"),
    };
    println!("copy bandwidth {:.0} GB/s", bandwidth / 1e9);
    let n = (edges / degree as u64) as u32;
    let arena = games::mostly_gains(1000 + edges + degree as u64, n, degree, 0.03, 3, 10);
    full_rounds(&arena, bandwidth);
}

/// Three full rounds (one launch each) of the "gains, 3% losses" game of `edges` edges at
/// degree 4, for a profiler (`ncu --launch-skip 1 --launch-count 1`): nothing else runs a
/// kernel in this mode.
pub fn full_rounds_only(edges: u64, lanes: Option<u32>, wide: bool, order: VertexOrder) {
    let arena = games::mostly_gains(1000 + edges + 4, (edges / 4) as u32, 4, 0.03, 3, 10);
    let bound = energy::bound(&arena).expect("bound fits");
    let options = GpuOptions {
        lanes,
        wide,
        order,
        ..GpuOptions::default()
    };
    let mut engine = match GpuEngine::upload(&arena, Some(bound), &options) {
        Ok(e) => e,
        Err(e) => return println!("upload: {e}"),
    };
    let blocks = engine.full_blocks();
    for _ in 0..3 {
        match engine.time_launch(blocks, 1, true) {
            Ok(ms) => println!(
                "full round h={} widths {:?}: {ms:.3} ms",
                engine.lanes(),
                engine.widths()
            ),
            Err(e) => return println!("round: {e}"),
        }
    }
}

fn full_rounds(arena: &Arena, bandwidth: f64) {
    let bound = energy::bound(arena).expect("bound fits");
    for (wide, order) in [
        (false, VertexOrder::PlayersFirst),
        (false, VertexOrder::Input),
        (true, VertexOrder::PlayersFirst),
    ] {
        let options = GpuOptions {
            wide,
            order,
            ..GpuOptions::default()
        };
        let mut engine = match GpuEngine::upload(arena, Some(bound), &options) {
            Ok(e) => e,
            Err(e) => return println!("upload: {e}"),
        };
        let (n, m) = (arena.vertex_count() as f64, arena.edge_count() as f64);
        // Bytes a lift round over every vertex must move at least: per edge the target
        // (4), the weight and the successor's energy; per vertex its frontier entry or
        // stamp (4), two offsets (8) and its energy read and written.
        let (weight_bits, value_bits) = engine.widths();
        let (wb, vb) = (weight_bits as f64 / 8.0, value_bits as f64 / 8.0);
        let bytes = (4.0 + wb + vb) * m + (12.0 + 2.0 * vb) * n;
        // The same with each successor-energy gather charged the 32-byte sector it moves
        // (random targets: one sector per gather), the traffic the caches really serve.
        let sector_bytes = (4.0 + wb + 32.0) * m + (12.0 + 2.0 * vb) * n;
        let order_name = match order {
            VertexOrder::PlayersFirst => "players first",
            VertexOrder::Input => "input order",
        };
        println!(
            "layout: {weight_bits}-bit weights, {value_bits}-bit energies, {order_name} ({:.0} bytes per edge + {:.0} per vertex counted)",
            4.0 + wb + vb,
            12.0 + 2.0 * vb
        );
        let auto = engine.lanes();
        for dense in [true, false] {
            for h in [1u32, 2, 4, 8, 16, 32] {
                if engine.set_lanes(h).is_err() {
                    continue;
                }
                let blocks = engine.full_blocks();
                let mut times = Vec::new();
                for _ in 0..6 {
                    match engine.time_launch(blocks, 1, dense) {
                        Ok(ms) => times.push(ms),
                        Err(e) => return println!("round: {e}"),
                    }
                }
                times.remove(0);
                let ms = median(times);
                println!(
                    "full round w{weight_bits}/v{value_bits} {} {} h={h:<2}{} {blocks:>4} blocks {:>8.3} ms  {:>6.2} Gedges/s  {:>6.0} GB/s (with sectors {:>5.1}%) = {:>5.1}% of copy bandwidth",
                    if order == VertexOrder::Input {
                        "input"
                    } else {
                        "p0-1 "
                    },
                    if dense { "dense " } else { "lists " },
                    if h == auto { "*" } else { " " },
                    ms,
                    m / ms / 1e6,
                    bytes / ms / 1e6,
                    100.0 * sector_bytes / (ms / 1e3) / bandwidth,
                    100.0 * bytes / (ms / 1e3) / bandwidth
                );
            }
        }
    }
}

fn end_to_end(arena: &Arena, cpu_limit: f64) {
    let bound = match energy::bound(arena) {
        Ok(b) => b,
        Err(e) => return println!("{e}"),
    };
    let mut gpu_credit = None;
    let mut gpu_total = f64::NAN;
    let mut gpu_solve = f64::NAN;
    for (label, lanes, wide, order) in [
        ("gpu auto", None, false, GpuOptions::default().order),
        (
            "gpu vertex-parallel h=1",
            Some(1u32),
            false,
            GpuOptions::default().order,
        ),
        ("gpu players first", None, false, VertexOrder::PlayersFirst),
        ("gpu input order", None, false, VertexOrder::Input),
        ("gpu input order h=1", Some(1u32), false, VertexOrder::Input),
        ("gpu 64-bit layout", None, true, GpuOptions::default().order),
    ] {
        let options = GpuOptions {
            lanes,
            wide,
            order,
            ..GpuOptions::default()
        };
        let t = Instant::now();
        let run = GpuEngine::upload(arena, Some(bound), &options)
            .map_err(|e| e.to_string())
            .and_then(|mut e| {
                let h = e.lanes();
                let deadline = Instant::now() + Duration::from_secs_f64(cpu_limit);
                e.lift_from(
                    None,
                    &options,
                    &Control::new().with_deadline(Some(deadline)),
                )
                .map(|r| (h, r))
                .map_err(|e| e.to_string())
            });
        let total = t.elapsed().as_secs_f64();
        match run {
            Ok((h, run)) => {
                let t = run.timings;
                // Every variant against the first (compared with the CPU below).
                let same = match &gpu_credit {
                    None => "",
                    Some(first) if *first == run.credit => "  = first",
                    Some(_) => "  DIFFERS from the first",
                };
                println!(
                    "{label:<24} h={h:<2} prepare {:>7.1} ms  upload {:>7.1} ms  solve {:>9.1} ms  download {:>6.1} ms  total {:>9.1} ms  rounds {:>7}  lifts {:>11}  launches {:>5}{same}",
                    t.prepare * 1e3,
                    t.upload * 1e3,
                    t.solve * 1e3,
                    t.download * 1e3,
                    total * 1e3,
                    run.rounds,
                    run.lifts,
                    run.launches
                );
                if gpu_credit.is_none() {
                    gpu_total = total;
                    gpu_solve = run.timings.solve;
                    gpu_credit = Some(run.credit);
                }
            }
            Err(e) => println!("{label}: {e}"),
        }
    }
    // The CPU backend on every core of this machine: the same work as the GPU's solve
    // (lifting from 0 to the least fixpoint, credits only).
    let cpu = CpuOptions::default();
    let threads = cpu.effective_threads();
    let control =
        Control::new().with_deadline(Some(Instant::now() + Duration::from_secs_f64(cpu_limit)));
    let mut best: Option<(f64, egsolve_core::solve::cpu::CpuLifted)> = None;
    for _ in 0..3 {
        let t = Instant::now();
        match lift_from(arena, bound, vec![0; arena.vertex_count()], &cpu, &control) {
            Ok(lifted) => {
                let seconds = t.elapsed().as_secs_f64();
                if best.as_ref().is_none_or(|(b, _)| seconds < *b) {
                    best = Some((seconds, lifted));
                }
                if seconds > 1.0 {
                    break;
                }
            }
            Err(e) => {
                println!(
                    "cpu backend ({threads} threads) stopped after {:.1} s ({e}) → gpu auto: > {:.1}× faster solve only",
                    t.elapsed().as_secs_f64(),
                    t.elapsed().as_secs_f64() / gpu_solve
                );
                break;
            }
        }
    }
    if let Some((seconds, lifted)) = best {
        println!(
            "cpu backend ({threads} threads) solve {:>9.1} ms  rounds {:>7}  lifts {:>11}  (best of up to 3) → gpu auto: {:.1}× faster solve only, {:.1}× counting prepare+upload+download; answers {}",
            seconds * 1e3,
            lifted.rounds,
            lifted.lifts,
            seconds / gpu_solve,
            seconds / gpu_total,
            match &gpu_credit {
                None => "not compared (no GPU answer)",
                Some(g) if *g == lifted.values => "identical",
                Some(_) => "DIFFER",
            }
        );
    }
    let control =
        Control::new().with_deadline(Some(Instant::now() + Duration::from_secs_f64(cpu_limit)));
    let t = Instant::now();
    match solve(arena, Backend::Reference, &control) {
        Ok(s) => {
            let cpu = s.stats.solve_seconds;
            let same = gpu_credit.as_ref().is_some_and(|g| *g == s.credit);
            println!(
                "reference (1 CPU thread)    solve {:>9.1} ms  lifts {:>11}  → gpu auto: {:.1}× faster counting prepare+upload+download, {:.1}× solve only; answers {}",
                cpu * 1e3,
                s.stats.lifts,
                cpu / gpu_total,
                cpu / gpu_solve,
                match &gpu_credit {
                    None => "not compared (no GPU answer)",
                    Some(_) if same => "identical",
                    Some(_) => "DIFFER",
                }
            );
        }
        Err(e) => println!(
            "reference (1 CPU thread)    stopped after {:.1} s ({e}) → gpu auto: > {:.1}× faster counting prepare+upload+download, > {:.1}× solve only",
            t.elapsed().as_secs_f64(),
            t.elapsed().as_secs_f64() / gpu_total,
            t.elapsed().as_secs_f64() / gpu_solve
        ),
    }
}
