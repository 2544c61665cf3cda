//! Parity games on every path: priority compression + the energy reduction (`auto`), and
//! the native parity solver (sequential and with parallel attractor rounds forced). Each
//! answer's winners are compared with Oink's (every game in `../shared/data/parity/`), with
//! the brute-force oracle (tiny random games with up to 20 priorities) or with the other
//! path (generated games with 50–200 priorities), and every answer passes `check` — the
//! parity certificate, plus the energy certificate where there are credits.

use crate::oink_support;
use crate::parity_support::{certify_parity, winners};

use egsolve_test_support as common;

use egsolve_core::check::{Claim, ParityClaim, check, check_parity};
use egsolve_core::format::{Game, ReadOptions, read_path};
use egsolve_core::generate::parity::clustered_parity;
use egsolve_core::generate::{ParityGame, random_parity};
use egsolve_core::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
use egsolve_core::solve::{Backend, Control, Solution, SolveOptions, solve_game};
use oink_support::{oink_winners, shared_parity_games};
use proptest::prelude::*;

/// How the native solver is run.
#[derive(Debug, Clone, Copy)]
enum Native {
    /// One thread.
    Sequential,
    /// Two threads, every round in parallel (even the smallest game).
    Parallel,
}

fn native(game: &Game, how: Native) -> Solution {
    let parity = game.parity.as_ref().expect("a parity game");
    // Zielonka, whose parallel attractor rounds these tests force; every algorithm is
    // tested in `parity_algorithms.rs`.
    let options = match how {
        Native::Sequential => ParityOptions::of(ParityAlgorithm::Zielonka, 1),
        Native::Parallel => ParityOptions {
            algorithm: ParityAlgorithm::Zielonka,
            threads: 2,
            parallel_from_vertices: 0,
            parallel_round_from: 1,
            ..ParityOptions::default()
        },
    };
    let solution = solve_with(
        &game.arena,
        &parity.compressed.priority,
        &options,
        &Control::new(),
    )
    .expect("the parity solver answers");
    assert!(!solution.credits_computed);
    solution
}

/// `solve_game` with `backend`, asking for the reduction's credits (`--credits`: the path a
/// user gets who wants credits; without it `auto` answers with the parity solver, see
/// `auto_answers_parity_games_with_the_parity_solver_unless_credits_are_asked_for`).
fn solve(game: &Game, backend: Backend) -> Solution {
    let options = SolveOptions {
        backend,
        credits: true,
        ..SolveOptions::default()
    };
    let view = game.parity.as_ref().map(|p| p.view());
    solve_game(&game.arena, view, &options, &Control::new()).expect("solves")
}

/// Every certificate that applies: the parity one always, the energy one with credits.
fn certify(game: &Game, solution: &Solution, what: &str) {
    certify_parity(game, solution, what);
    if solution.credits_computed {
        let claim = Claim {
            credit: &solution.credit,
            strategy: &solution.strategy,
        };
        let report = check(&game.arena, claim).unwrap();
        assert!(
            report.passed(),
            "{what}: energy certificate: {:?}",
            report.violations
        );
    }
}

#[test]
fn every_shared_parity_game_matches_oink_on_every_path() {
    for (name, game, expected) in shared_parity_games() {
        let parity = game.parity.as_ref().unwrap();
        assert!(
            parity.reduction_fits(),
            "{name}: the shared games all reduce"
        );

        let reduced = solve(&game, Backend::Auto);
        assert!(reduced.credits_computed, "{name}");
        // Strategy improvement joins where the phasing (timed) calls for it: on a loaded
        // machine it may on any of these games.
        let algorithm = &reduced.stats.algorithm;
        assert!(
            algorithm == "accelerated-lifting"
                || algorithm == "accelerated-lifting+strategy-improvement",
            "{name}: {algorithm}"
        );
        assert_eq!(
            winners(&reduced),
            expected,
            "{name}: compression + reduction"
        );
        assert_eq!(reduced.parity, Some(parity.summary()));
        certify(&game, &reduced, &format!("{name}, reduction"));

        for how in [Native::Sequential, Native::Parallel] {
            let answer = native(&game, how);
            assert_eq!(winners(&answer), expected, "{name}: native, {how:?}");
            certify(&game, &answer, &format!("{name}, native {how:?}"));
        }
        let forced = solve(&game, Backend::Parity);
        assert_eq!(forced.stats.backend, "parity", "{name}");
        assert!(forced.stats.algorithm.starts_with("auto"), "{name}");
        assert_eq!(winners(&forced), expected, "{name}: --backend parity");
    }
}

/// A small parity game: (priority, owner is player 1, successors) per vertex.
fn tiny_game() -> impl Strategy<Value = ParityGame> {
    (1usize..=7).prop_flat_map(|n| {
        prop::collection::vec(
            (
                0u64..20,
                any::<bool>(),
                prop::collection::vec(0..n as u32, 1..=3),
            ),
            n,
        )
        .prop_map(|nodes| ParityGame {
            owners: nodes
                .iter()
                .map(|(_, one, _)| {
                    if *one {
                        egsolve_core::arena::Player::One
                    } else {
                        egsolve_core::arena::Player::Zero
                    }
                })
                .collect(),
            priorities: nodes.iter().map(|(p, _, _)| *p).collect(),
            successors: nodes.into_iter().map(|(_, _, s)| s).collect(),
        })
    })
}

#[test]
fn tiny_random_games_agree_with_the_brute_force_oracle() {
    common::proptest_seeded(300, &[1, 2, 3], tiny_game(), |generated| {
        let game = generated.to_game();
        let parity = game.parity.as_ref().unwrap();
        let expected =
            egsolve_core::oracle::parity_winners(&game.arena, &parity.priorities, 1 << 16)
                .expect("tiny games are enumerable");
        for how in [Native::Sequential, Native::Parallel] {
            let answer = native(&game, how);
            prop_assert_eq!(
                &winners(&answer),
                &expected,
                "native {:?}: {:?}",
                how,
                generated
            );
            certify(&game, &answer, "tiny game, native");
        }
        // Up to 20 priorities on at most 7 vertices always reduce.
        prop_assert!(parity.reduction_fits());
        let reduced = solve(&game, Backend::Reference);
        prop_assert_eq!(&winners(&reduced), &expected, "reduction: {:?}", generated);
        certify(&game, &reduced, "tiny game, reduction");
        Ok(())
    });
}

/// Fixed seeds and a fresh one (`$EGSOLVE_SEED` replays one), printed so that a failure
/// names its seed.
fn seeds(fixed: &[u64]) -> Vec<u64> {
    let fresh = std::env::var("EGSOLVE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("fresh seed {fresh} (replay: EGSOLVE_SEED={fresh})");
    fixed.iter().copied().chain([fresh]).collect()
}

/// Native and reduction agree where both apply, with 50–200 priorities: small random games
/// (the reduction still fits with about one vertex per priority) and clustered games of 2,000
/// vertices (per-SCC compression makes it fit; at 10^4 some fresh seeds keep the energy
/// solvers busy for minutes). Clustered games of 10^5 vertices also reduce,
/// but the energy solvers need minutes on them (the native solver: 0.1 s), so there the
/// native answers (sequential and parallel) are compared with each other and certified.
#[test]
fn many_priorities_native_and_reduction_agree() {
    for seed in seeds(&[11, 12, 13]) {
        let what = format!("seed {seed}");
        let max_priority = 50 + seed % 151;
        let small = random_parity(60, max_priority, 3, seed).to_game();
        let clustered = clustered_parity(200, 10, 3, max_priority, seed).to_game();
        for (k, game) in [&small, &clustered].into_iter().enumerate() {
            let parity = game.parity.as_ref().unwrap();
            let what = format!("{what}, game {k} ({} vertices)", game.arena.vertex_count());
            // 60 draws from 51 to 201 values: about 35 to 52 distinct.
            assert!(parity.compressed.input_distinct >= 25, "{what}");
            assert!(parity.reduction_fits(), "{what}: {:?}", parity.summary());
            assert_eq!(parity.compressed.per_scc, k > 0, "{what}");
            let reduced = solve(game, Backend::Auto);
            assert!(reduced.credits_computed, "{what}");
            certify(game, &reduced, &format!("{what}, reduction"));
            for how in [Native::Sequential, Native::Parallel] {
                let answer = native(game, how);
                assert_eq!(winners(&answer), winners(&reduced), "{what}: {how:?}");
                certify(game, &answer, &format!("{what}, native {how:?}"));
            }
        }
        let large = clustered_parity(10_000, 10, 2, 200 - seed % 151, seed).to_game();
        let parity = large.parity.as_ref().unwrap();
        assert!(parity.compressed.input_distinct >= 40, "{what}");
        assert!(
            parity.reduction_fits() && parity.compressed.per_scc,
            "{what}"
        );
        let sequential = native(&large, Native::Sequential);
        certify(&large, &sequential, &format!("{what}, 10^5 clustered"));
        let parallel = native(&large, Native::Parallel);
        assert_eq!(
            winners(&parallel),
            winners(&sequential),
            "{what}: 10^5 clustered"
        );
        certify(
            &large,
            &parallel,
            &format!("{what}, 10^5 clustered, parallel"),
        );
    }
}

/// Random games of 10^4 and 10^5 vertices with 50–200 priorities are beyond the reduction:
/// `auto` answers them with the parity solver, sequentially or with parallel rounds, and
/// every answer is certified.
#[test]
fn random_games_beyond_the_reduction_are_solved_natively() {
    for seed in seeds(&[21, 22]) {
        for n in [10_000, 100_000] {
            let max_priority = 50 + (seed * 7 + u64::from(n)) % 151;
            let game = random_parity(n, max_priority, 3, seed).to_game();
            let parity = game.parity.as_ref().unwrap();
            let what = format!("seed {seed}, {n} vertices, priorities 0..={max_priority}");
            assert!(!parity.reduction_fits(), "{what}");
            let auto = solve(&game, Backend::Auto);
            assert_eq!(auto.stats.backend, "parity", "{what}");
            assert!(!auto.credits_computed);
            certify(&game, &auto, &what);
            let parallel = native(&game, Native::Parallel);
            assert_eq!(winners(&parallel), winners(&auto), "{what}: parallel");
            certify(&game, &parallel, &format!("{what}, parallel"));
            let err = solve_game(
                &game.arena,
                Some(parity.view()),
                &SolveOptions {
                    backend: Backend::Cpu,
                    ..SolveOptions::default()
                },
                &Control::new(),
            )
            .unwrap_err();
            assert!(err.to_string().contains("--backend parity"), "{err}");
        }
    }
}

/// The certificate rejects answers that are wrong in each way it checks.
#[test]
fn the_parity_certificate_rejects_wrong_answers() {
    let game = random_parity(300, 60, 3, 5).to_game();
    let parity = game.parity.as_ref().unwrap();
    let answer = native(&game, Native::Sequential);
    let right = winners(&answer);
    let reject = |winner: &[u8], strategy: &[u32], why: &str| {
        let claim = ParityClaim { winner, strategy };
        let report = check_parity(&game.arena, &parity.priorities, claim).unwrap();
        assert!(!report.passed(), "{why} was accepted");
    };
    // A vertex won by its owner: drop its move, or move to the other region.
    let owned = (0..300u32)
        .find(|&v| game.arena.owner(v).index() == right[v as usize])
        .unwrap();
    let mut strategy = answer.strategy.clone();
    strategy[owned as usize] = egsolve_core::solve::NO_MOVE;
    reject(&right, &strategy, "a missing move");
    // Flip one winner: its region is no longer closed or its strategy leaves it.
    for v in [0u32, 17, owned] {
        let mut flipped = right.clone();
        flipped[v as usize] ^= 1;
        reject(&flipped, &answer.strategy, &format!("vertex {v} flipped"));
    }
    // Swap both regions wholesale (moves made up inside them): closed, but the cycles lose.
    let swapped: Vec<u8> = right.iter().map(|w| 1 - w).collect();
    let made_up: Vec<u32> = (0..300u32)
        .map(|v| {
            if game.arena.owner(v).index() == swapped[v as usize] {
                game.arena
                    .successors(v)
                    .map(|(u, _)| u)
                    .find(|&u| swapped[u as usize] == swapped[v as usize])
                    .unwrap_or(egsolve_core::solve::NO_MOVE)
            } else {
                egsolve_core::solve::NO_MOVE
            }
        })
        .collect();
    reject(&swapped, &made_up, "swapped regions");
}

/// `auto` without `credits` answers every shared parity game with the parity solver
/// (winners and strategies, no credits), with Oink's winners, certified.
#[test]
fn auto_answers_parity_games_with_the_parity_solver_unless_credits_are_asked_for() {
    for (name, game, expected) in shared_parity_games() {
        let view = game.parity.as_ref().map(|p| p.view());
        let natural = solve_game(&game.arena, view, &SolveOptions::default(), &Control::new())
            .expect("solves");
        assert!(!natural.credits_computed, "{name}");
        assert_eq!(natural.stats.backend, "parity", "{name}");
        assert!(natural.stats.algorithm.starts_with("auto("), "{name}");
        assert_eq!(winners(&natural), expected, "{name}");
        certify(&game, &natural, &format!("{name}, natural"));
    }
}

/// Stand-ins for the GPU in `auto`'s race (`solve::race`): a device that answers at once
/// with a solution computed beforehand, one that never answers until it is cancelled, one
/// that cannot take the game, and one that solves the reduction with the CPU's energy
/// solver (a real second opinion). Each counts its calls and whether it saw a cancel.
mod race_devices {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use egsolve_core::arena::Arena;
    use egsolve_core::solve::{
        self, Backend, Control, DeviceSolver, GpuOptions, Interrupted, Solution, SolveError,
    };

    #[derive(Debug)]
    pub enum Behaviour {
        /// Hands back the stored solution at once.
        Instant(Mutex<Option<Box<Solution>>>),
        /// Waits for the race's cancel flag, then says it was cancelled.
        Blocks,
        /// Cannot take the game (as a device short of memory).
        Refuses,
        /// Solves the reduction on the CPU (`auto`), under the race's control.
        Solves,
    }

    #[derive(Debug)]
    pub struct Device {
        pub behaviour: Behaviour,
        pub calls: AtomicUsize,
        pub saw_cancel: AtomicBool,
        /// Calls that asked for winners only (as the race does).
        pub winners_only: AtomicUsize,
        /// Calls that said they race a CPU side (host passes on the cores it leaves).
        pub beside_race: AtomicUsize,
    }

    impl Device {
        pub fn leak(behaviour: Behaviour) -> &'static Device {
            Box::leak(Box::new(Device {
                behaviour,
                calls: AtomicUsize::new(0),
                saw_cancel: AtomicBool::new(false),
                winners_only: AtomicUsize::new(0),
                beside_race: AtomicUsize::new(0),
            }))
        }
    }

    impl DeviceSolver for Device {
        fn solve(
            &self,
            arena: &Arena,
            options: &GpuOptions,
            control: &Control,
        ) -> Result<Solution, SolveError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if options.winners_only {
                self.winners_only.fetch_add(1, Ordering::SeqCst);
            }
            if options.beside_race {
                self.beside_race.fetch_add(1, Ordering::SeqCst);
            }
            match &self.behaviour {
                Behaviour::Instant(solution) => {
                    let mut solution = solution.lock().unwrap().take().expect("one call");
                    solution.stats.backend = "gpu".into();
                    Ok(*solution)
                }
                Behaviour::Blocks => loop {
                    if let Err(e) = control.checkpoint() {
                        self.saw_cancel.store(true, Ordering::SeqCst);
                        return Err(e.into());
                    }
                    std::thread::sleep(Duration::from_millis(1));
                },
                Behaviour::Refuses => Err(SolveError::Unavailable {
                    backend: "gpu",
                    reason: "out of device memory".into(),
                }),
                Behaviour::Solves => {
                    let mut answer = solve::solve(arena, Backend::Auto, control);
                    if let Err(SolveError::Interrupted(Interrupted::Cancelled)) = answer {
                        self.saw_cancel.store(true, Ordering::SeqCst);
                    }
                    if let Ok(solution) = &mut answer {
                        solution.stats.backend = "gpu".into();
                    }
                    answer
                }
            }
        }

        fn available(&self) -> bool {
            true
        }
    }
}

fn race_options(device: &'static race_devices::Device) -> SolveOptions {
    SolveOptions {
        device: Some(device),
        // The energy route whatever `EGSOLVE_RACE_GPU` says: the tests count its calls.
        race_gpu_route: egsolve_core::solve::race::GpuRoute::Energy,
        ..SolveOptions::default()
    }
}

/// `auto` races a device on every shared parity game of at least `RACE_FROM_VERTICES`
/// vertices, with Oink's winners whoever answers (the device here solves the reduction on
/// the CPU, so either side may win), in the parity solver's shape (no credits), certified;
/// smaller games never reach the device.
#[test]
fn auto_races_the_device_on_large_parity_games_and_answers_right_whoever_wins() {
    use egsolve_core::solve::race::RACE_FROM_VERTICES;
    use race_devices::{Behaviour, Device};
    use std::sync::atomic::Ordering;
    let (mut raced, mut not_raced) = (0, 0);
    for (name, game, expected) in shared_parity_games() {
        let device = Device::leak(Behaviour::Solves);
        let view = game.parity.as_ref().map(|p| p.view());
        let answer =
            solve_game(&game.arena, view, &race_options(device), &Control::new()).expect("solves");
        let large = game.arena.vertex_count() >= RACE_FROM_VERTICES;
        assert_eq!(
            device.calls.load(Ordering::SeqCst),
            usize::from(large),
            "{name}"
        );
        // The race asks the device for winners only (read on its own threads), saying that
        // it races (its host passes on the cores the CPU side leaves).
        assert_eq!(
            device.winners_only.load(Ordering::SeqCst),
            usize::from(large),
            "{name}"
        );
        assert_eq!(
            device.beside_race.load(Ordering::SeqCst),
            usize::from(large),
            "{name}"
        );
        if large {
            raced += 1;
            assert!(
                ["gpu", "parity"].contains(&answer.stats.backend.as_str()),
                "{name}"
            );
        } else {
            not_raced += 1;
            assert_eq!(answer.stats.backend, "parity", "{name}");
        }
        assert!(!answer.credits_computed, "{name}: winners only");
        assert!(answer.credit.iter().all(|&c| c == 0 || c == u64::MAX));
        assert_eq!(winners(&answer), expected, "{name}");
        assert_eq!(answer.parity, Some(game.parity.as_ref().unwrap().summary()));
        certify(&game, &answer, &format!("{name}, race"));
    }
    assert!(
        raced >= 4 && not_raced >= 4,
        "{raced} raced, {not_raced} not"
    );
}

/// The race's three outcomes on BRP (2.2 M vertices): a device that answers at once wins,
/// and its answer (computed as the reduction's credits) comes back as winners only; a
/// device that never answers is cancelled once the parity solver answers; a device that
/// refuses the game leaves the answer to the parity solver. Credits asked for, or the
/// `parity` backend, never race.
#[test]
fn the_race_takes_the_first_answer_and_cancels_the_other() {
    use race_devices::{Behaviour, Device};
    use std::sync::Mutex;
    use std::sync::atomic::Ordering;
    let path = common::shared_files("parity", ".gm.zst")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("BRP"))
        .expect("BRP is shared");
    let game = read_path(&path, &ReadOptions::default()).unwrap();
    let view = game.parity.as_ref().map(|p| p.view());
    let sol = path.with_file_name(
        path.file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".gm.", ".sol."),
    );
    let expected = oink_winners(&sol, game.arena.vertex_count());
    let reduction = solve(&game, Backend::Auto);

    let instant = Device::leak(Behaviour::Instant(Mutex::new(Some(Box::new(reduction)))));
    let answer = solve_game(&game.arena, view, &race_options(instant), &Control::new()).unwrap();
    assert_eq!(answer.stats.backend, "gpu", "the device answered first");
    assert!(!answer.credits_computed);
    assert_eq!(winners(&answer), expected);
    certify(&game, &answer, "race won by the device");

    for (behaviour, cancelled) in [(Behaviour::Blocks, true), (Behaviour::Refuses, false)] {
        let device = Device::leak(behaviour);
        let answer = solve_game(&game.arena, view, &race_options(device), &Control::new())
            .expect("the parity solver answers");
        assert_eq!(answer.stats.backend, "parity");
        assert_eq!(winners(&answer), expected);
        assert_eq!(device.calls.load(Ordering::SeqCst), 1);
        assert_eq!(device.saw_cancel.load(Ordering::SeqCst), cancelled);
    }

    let unused = Device::leak(Behaviour::Blocks);
    for options in [
        SolveOptions {
            credits: true,
            ..race_options(unused)
        },
        SolveOptions {
            backend: Backend::Parity,
            ..race_options(unused)
        },
    ] {
        let answer = solve_game(&game.arena, view, &options, &Control::new()).unwrap();
        assert_eq!(winners(&answer), expected);
    }
    assert_eq!(unused.calls.load(Ordering::SeqCst), 0, "no race");
}

/// Cancelling a racing solve stops both sides: the caller's flag reaches the device's.
#[test]
fn cancelling_a_race_stops_both_sides() {
    use race_devices::{Behaviour, Device};
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};
    // Three priorities: the reduction fits, so `auto` races.
    let game = random_parity(1 << 17, 2, 3, 5).to_game();
    assert!(game.parity.as_ref().unwrap().reduction_fits());
    let view = game.parity.as_ref().map(|p| p.view());
    let device = Device::leak(Behaviour::Blocks);
    let control = Control::new();
    control.cancel();
    let start = Instant::now();
    let answer = solve_game(&game.arena, view, &race_options(device), &control);
    assert!(
        matches!(answer, Err(egsolve_core::solve::SolveError::Interrupted(_))),
        "{:?}",
        answer.as_ref().map(|s| &s.stats)
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(
        device.saw_cancel.load(Ordering::SeqCst),
        "the device stopped"
    );
}
