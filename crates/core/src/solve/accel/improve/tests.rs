//! Strategy improvement against the reference worklist and the brute-force oracle: from
//! below (lifting's partial values) it reaches exactly the least fixpoint, a spent share
//! leaves sound values, and the driver with it solves every game as the reference does.

use super::*;
use crate::generate::climbing;
use crate::generate::{RandomParams, random};
use crate::solve::accel::{Schedule, solve_scheduled};
use crate::solve::control::Budget;
use crate::solve::energy;
use crate::solve::engine::WorklistEngine;
use crate::solve::worklist::{self, Primal};

/// Strategy improvement of `arena` from all zeros, at most `limit` lifts, never
/// interrupted: the values and the outcome.
fn improve_from_zero(arena: &Arena, limit: u64) -> (Vec<u64>, Improved) {
    let bound = energy::bound(arena).expect("fits");
    let mut values = vec![0; arena.vertex_count()];
    let control = Control::new();
    let improved = improve(arena, &mut values, bound, &mut Vec::new(), limit, &control)
        .expect("not interrupted");
    (values, improved)
}

/// The least fixpoint by the reference worklist, and `lifts` lifts of it from 0.
fn lifted(arena: &Arena, lifts: u64) -> (Vec<u64>, Vec<u64>) {
    let bound = energy::bound(arena).expect("fits");
    let game = Primal {
        arena,
        bound,
        topping: None,
    };
    let n = arena.vertex_count();
    let exact = worklist::solve(&game, &Control::new())
        .expect("lifts")
        .values;
    let budget = Budget { lifts, until: None };
    let (partial, _) =
        worklist::solve_budgeted(&game, vec![0; n], budget, &Control::new()).expect("lifts");
    (exact, partial.values)
}

/// A random game for `seed`: 1 to 40 vertices, small to huge weights, few to many
/// player-1 vertices.
fn game(seed: u64) -> Arena {
    let (min_weight, max_weight) = match seed % 5 {
        0 => (-3, 3),
        1 => (-20, 10),
        2 => (-1000, 1000),
        3 => (-6, 6),
        _ => (-1_000_000_000, 1_000_000_000),
    };
    random(
        RandomParams {
            vertices: 1 + (seed % 40) as u32,
            min_degree: 1,
            max_degree: 1 + (seed % 4) as u32,
            min_weight,
            max_weight,
            player1_percent: [10, 50, 90][(seed % 3) as usize],
        },
        seed,
    )
}

fn seeds(count: u64) -> impl Iterator<Item = u64> {
    let fresh = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    eprintln!("fresh seed {fresh}");
    (0..count).chain([fresh])
}

#[test]
fn from_below_it_reaches_the_least_fixpoint() {
    let (mut rounds, mut topped, mut raised) = (0, 0, 0);
    for seed in seeds(1500) {
        let arena = game(seed);
        let n = arena.vertex_count() as u64;
        let bound = energy::bound(&arena).expect("fits");
        let (exact, start) = lifted(&arena, (seed % 5) * n / 2);
        let mut values = start.clone();
        let mut sigma = Vec::new();
        let improved = improve(
            &arena,
            &mut values,
            bound,
            &mut sigma,
            u64::MAX,
            &Control::new(),
        )
        .expect("not interrupted");
        assert!(improved.solved, "seed {seed}");
        assert_eq!(values, exact, "seed {seed}: from {start:?}");
        rounds = rounds.max(improved.rounds);
        topped += improved.topped;
        raised += improved.raised;
    }
    assert!(
        topped > 0 && raised > topped,
        "{topped} topped, {raised} raised"
    );
    eprintln!("at most {rounds} rounds");
}

#[test]
fn tiny_games_match_the_oracle() {
    let mut compared = 0;
    for seed in seeds(3000) {
        let arena = game(seed);
        if arena.vertex_count() > 7 {
            continue;
        }
        let Some(expected) = crate::oracle::credits(&arena, 100_000) else {
            continue;
        };
        let (values, improved) = improve_from_zero(&arena, u64::MAX);
        assert!(improved.solved);
        assert_eq!(values, expected, "seed {seed}");
        compared += 1;
    }
    assert!(compared > 100, "{compared} compared");
}

#[test]
fn a_spent_share_keeps_sound_values() {
    let mut stopped = 0;
    for seed in 0..400u64 {
        let arena = game(seed);
        let n = arena.vertex_count();
        let (exact, _) = lifted(&arena, 0);
        for limit in [1, 2 * n as u64, 10 * n as u64] {
            let (values, improved) = improve_from_zero(&arena, limit);
            stopped += !improved.solved as usize;
            for v in 0..n {
                assert!(
                    values[v] <= exact[v],
                    "seed {seed}, limit {limit}, vertex {v}"
                );
            }
            if improved.solved {
                assert_eq!(values, exact, "seed {seed}, limit {limit}");
            }
        }
    }
    assert!(stopped > 0);
}

#[test]
fn climbing_families_are_solved_in_few_rounds() {
    for big in [10, 1_000, 1_000_000_000] {
        for arena in [
            climbing::circle_then_escape(5, big),
            climbing::player1_cycle(7, big),
        ] {
            let (exact, _) = if big <= 1_000 {
                lifted(&arena, 0)
            } else {
                (Vec::new(), Vec::new())
            };
            let (values, improved) = improve_from_zero(&arena, u64::MAX);
            assert!(improved.solved && improved.rounds <= 4, "{improved:?}");
            if !exact.is_empty() {
                assert_eq!(values, exact, "big {big}");
            }
        }
    }
    // circle_then_escape's known answer: `big` at each `v`, `big + 1` at each `x`.
    let arena = climbing::circle_then_escape(3, 1_000_000_000_000);
    let (values, _) = improve_from_zero(&arena, u64::MAX);
    let mut finite: Vec<u64> = values.iter().copied().filter(|&c| c != 0).collect();
    finite.sort();
    finite.dedup();
    assert_eq!(finite, vec![1_000_000_000_000, 1_000_000_000_001]);
}

/// The driver with strategy improvement in place of evaluations (as on small games under
/// the measured schedule), on counted phases: the reference's credits, and a certified
/// strategy for each player.
#[test]
fn the_driver_with_improvement_matches_the_reference() {
    let mut runs = 0;
    for seed in seeds(600) {
        let arena = game(seed);
        let (exact, _) = lifted(&arena, 0);
        for budget in [1, 7, 1 << 12] {
            let (solution, stats) = FORCED
                .with(|forced| {
                    forced.set(true);
                    let out = solve_scheduled(
                        &arena,
                        &mut WorklistEngine,
                        Schedule::Lifts(budget),
                        &Control::new(),
                    );
                    forced.set(false);
                    out
                })
                .expect("solves");
            assert_eq!(solution.credit, exact, "seed {seed}, budget {budget}");
            runs += stats.improvements;
            let claim = crate::check::Claim {
                credit: &solution.credit,
                strategy: &solution.strategy,
            };
            let report = crate::check::check(&arena, claim).expect("checks");
            assert!(
                report.passed(),
                "seed {seed}, budget {budget}: {:?}",
                report.violations
            );
        }
    }
    assert!(runs > 30, "{runs} runs");
}
