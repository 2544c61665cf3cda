//! The GPU parity solver's host logic and kernel steps: the CPU mirror of the kernel
//! (`egsolve_gpu::parity::host`) driven by the same orchestration as the device, against
//! Zielonka's winners and the parity certificate, on random games of few and many
//! priorities; and, where a GPU is, the device's answers equal to the mirror's winners and
//! certified (listed as ignored, with the reason, elsewhere).

use crate::parity_support::{certify_parity, winners};

use egsolve_core::format::Game;
use egsolve_core::generate::random_parity;
use egsolve_core::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
use egsolve_core::solve::{Control, Solution};
use egsolve_gpu::devices::driver_ready;
use egsolve_gpu::parity::host::HostFixpoint;
use egsolve_gpu::parity::{FixpointLayout, solve_on};

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let missing = driver_ready().err().map(|e| format!("a GPU: {e}"));
    vec![
        egsolve_test_support::needing(
            "the_kernels_cpu_mirror_answers_as_zielonka_with_certified_strategies",
            None,
            the_kernels_cpu_mirror_answers_as_zielonka_with_certified_strategies,
        ),
        egsolve_test_support::needing(
            "the_cpu_mirror_restarts_less_than_the_papers_loop",
            None,
            the_cpu_mirror_restarts_less_than_the_papers_loop,
        ),
        egsolve_test_support::needing_hardware(
            "the_device_answers_as_the_cpu_mirror_where_a_gpu_is",
            missing,
            the_device_answers_as_the_cpu_mirror_where_a_gpu_is,
        ),
    ]
}

/// The games: (vertices, highest priority, largest degree, seed).
const GAMES: [(u32, u64, u32, u64); 8] = [
    (1, 0, 1, 1),
    (12, 3, 2, 2),
    (60, 7, 3, 3),
    (200, 2, 4, 4),
    (200, 40, 3, 5),
    (300, 100, 4, 6),
    (1000, 12, 2, 7),
    (2000, 6, 5, 8),
];

fn reference(game: &Game, algorithm: ParityAlgorithm) -> Solution {
    let priorities = &game.parity.as_ref().unwrap().view().priorities.to_vec();
    solve_with(
        &game.arena,
        priorities,
        &ParityOptions::of(algorithm, 1),
        &Control::new(),
    )
    .expect("solves")
}

fn mirror(game: &Game) -> Solution {
    let priorities = game.parity.as_ref().unwrap().view().priorities;
    let layout = FixpointLayout::new(&game.arena, priorities);
    let machine = HostFixpoint::new(&game.arena, &layout);
    solve_on(&layout, machine, &Control::new()).expect("solves")
}

fn the_kernels_cpu_mirror_answers_as_zielonka_with_certified_strategies() {
    for (n, top, degree, seed) in GAMES {
        let game = random_parity(n, top, degree, seed).to_game();
        let what = format!("random_parity({n}, {top}, {degree}, {seed})");
        let answer = mirror(&game);
        assert_eq!(
            winners(&answer),
            winners(&reference(&game, ParityAlgorithm::Zielonka)),
            "{what}"
        );
        assert_eq!(answer.stats.algorithm, "gpu-fixpoint");
        assert!(!answer.credits_computed);
        certify_parity(&game, &answer, &what);
    }
}

/// Evaluating a level to its own fixpoint before restarting the lower ones (the kernel's
/// refinement) never restarts more often than the CPU's loop, which restarts after every
/// pass that found distractions; on a game of many priorities, strictly less often.
fn the_cpu_mirror_restarts_less_than_the_papers_loop() {
    let mut fewer = 0;
    for (n, top, degree, seed) in GAMES {
        let game = random_parity(n, top, degree, seed).to_game();
        let ours = mirror(&game).stats.rounds;
        let papers = reference(&game, ParityAlgorithm::FixpointIteration)
            .stats
            .rounds;
        assert!(
            ours <= papers,
            "random_parity({n}, {top}, {degree}, {seed}): {ours} > {papers}"
        );
        fewer += usize::from(ours < papers);
    }
    assert!(fewer >= 1, "no game restarted less");
}

fn the_device_answers_as_the_cpu_mirror_where_a_gpu_is() {
    let mut games: Vec<Game> = GAMES
        .iter()
        .map(|&(n, top, degree, seed)| random_parity(n, top, degree, seed).to_game())
        .collect();
    // Large but of few priorities: on random games of many, fixpoint iteration restarts
    // for minutes (BENCHMARKS.md).
    games.push(random_parity(1 << 17, 5, 3, 9).to_game());
    for (i, game) in games.iter().enumerate() {
        let priorities = game.parity.as_ref().unwrap().view().priorities;
        let answer = egsolve_gpu::parity::solve(&game.arena, priorities, None, &Control::new())
            .expect("the device solves");
        assert_eq!(answer.stats.backend, "gpu");
        assert_eq!(
            winners(&answer),
            winners(&reference(game, ParityAlgorithm::Zielonka)),
            "game {i}"
        );
        certify_parity(game, &answer, &format!("game {i} on the device"));
    }
}
