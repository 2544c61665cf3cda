//! Player 1's recorded moves classified on the device (`kernels/lift.cu` `recorded_moves`,
//! `GpuEngine::recorded_moves`) against the host's classification of the same record
//! (`strategy::RecordedMoves::of_record`), and the driver's answers from them certified.
//! Without a GPU the check is listed as ignored, with the reason.

use egsolve_core::arena::Arena;
use egsolve_core::check::{Claim, check};
use egsolve_core::generate::random_parity;
use egsolve_core::solve::accel::{solve_with, solve_with_budget};
use egsolve_core::solve::control::Control;
use egsolve_core::solve::strategy::{Player1Source, RecordedMoves, Topping};
use egsolve_core::solve::threads::Threads;
use egsolve_gpu::lift::{GpuLift, fill_topping};
use egsolve_gpu::{GpuEngine, GpuOptions, devices::driver_ready};

use egsolve_core::generate::random_varied;

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let missing = driver_ready().err().map(|e| format!("a GPU: {e}"));
    vec![egsolve_test_support::needing_hardware(
        "device_recorded_moves_equal_the_hosts_where_a_gpu_is",
        missing,
        device_recorded_moves_equal_the_hosts_where_a_gpu_is,
    )]
}

/// Random energy games and parity games' reductions (fixed seeds and a fresh one), at both
/// layouts' widths.
fn game(seed: u64) -> Arena {
    if seed % 2 == 0 {
        random_varied(seed, [50, 3_000, 40_000, 250_000][(seed / 2 % 4) as usize])
    } else {
        let n = [60, 5_000, 80_000, 300_000][(seed / 2 % 4) as usize];
        random_parity(n, 4 + seed % 9, 1 + (seed % 4) as u32, seed)
            .to_game()
            .arena
    }
}

/// Where a GPU is, lifting from 0 to the fixpoint in one run with the record kept, the
/// device's classification equals the host's of the same record (moves, roots as a set,
/// broken and lifted); the driver, which takes the device's in a solve without
/// evaluations, answers with strategies the checker passes, most of them certified from
/// the record.
fn device_recorded_moves_equal_the_hosts_where_a_gpu_is() {
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    // The staging buffers allocated, so the moves of the games of 2^18 vertices or more
    // come back through them, into the room given (below).
    drop(egsolve_gpu::compile::kernels(0).expect("kernels").staging());
    let (mut with_roots, mut broken, mut from_lifts) = (0, 0, 0);
    let (mut compared, mut skipped) = (0, 0);
    for seed in (0..24u64).chain([fresh]) {
        let arena = game(seed);
        let n = arena.vertex_count();
        eprintln!("seed {seed}: {n} vertices, {} edges", arena.edge_count());
        let options = GpuOptions {
            wide: seed % 3 == 0,
            ..GpuOptions::default()
        };
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let mut engine = GpuEngine::upload(&arena, Some(bound), &options).expect("uploads");
        assert!(
            engine.start_topping().expect("clears"),
            "seed {seed}: recorded"
        );
        // Plain lifting from 0, for a few seconds at most (on some parity games it climbs
        // for minutes: the driver's evaluations are what solves those).
        let run = engine
            .lift_budgeted(None, Vec::new(), u64::MAX, 5.0, &options, &Control::new())
            .expect("lifts");
        if !run.finished {
            eprintln!("seed {seed}: not lifted to the fixpoint in 5 s; not compared");
            skipped += 1;
        } else {
            // Every other game's moves come back into a room of the right size whose bytes
            // are not zero (as one mapped ahead holds): every word must be overwritten.
            let room = match seed % 4 {
                0 | 1 => Vec::new(),
                _ => {
                    let mut room = vec![0xA5A5_A5A5u32; n];
                    room.clear();
                    room
                }
            };
            let device = engine
                .recorded_moves(room)
                .expect("classifies")
                .expect("a record");
            let words = engine
                .download_topping()
                .expect("downloads")
                .expect("a record");
            let topping = Topping::new(n);
            fill_topping(&arena, &words, &topping);
            let host = RecordedMoves::of_record(&arena, &run.credit, &topping, &Threads::one());
            assert_eq!(device.broken, host.broken, "seed {seed}: broken");
            if !host.broken {
                let mut roots = device.roots.clone();
                roots.sort_unstable();
                assert_eq!(roots, host.roots, "seed {seed}: roots");
                assert!(device.moves == host.moves, "seed {seed}: moves");
                assert_eq!(device.lifted, host.lifted, "seed {seed}: lifted");
            }
            compared += 1;
            with_roots += (!host.roots.is_empty()) as u32;
            broken += host.broken as u32;
        }
        // The driver: lifting alone in one phase where that reached the fixpoint above (no
        // evaluations: the device's classification is taken), else as `auto` runs it.
        let engine = GpuEngine::upload(&arena, Some(bound), &options).expect("uploads");
        let mut lift = GpuLift::new(engine, &options);
        let (solution, stats) = match run.finished {
            true => solve_with_budget(&arena, &mut lift, u64::MAX, &Control::new()),
            false => solve_with(&arena, &mut lift, &Control::new()),
        }
        .expect("solves");
        let claim = Claim {
            credit: &solution.credit,
            strategy: &solution.strategy,
        };
        let report = check(&arena, claim).expect("checkable");
        assert!(report.passed(), "seed {seed}");
        from_lifts += (stats.player1 == Player1Source::Lifted) as u32;
    }
    eprintln!(
        "{compared} compared ({skipped} not lifted in time), {with_roots} with roots, \
         {broken} broken; {from_lifts} of 25 solves certified from the record"
    );
    assert!(compared >= 16 && with_roots > 3 && from_lifts * 2 > compared);
}
