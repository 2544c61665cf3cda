//! Player 1's strategy from the lifts' record of why each vertex reached ⊤
//! (`solve::strategy::topping`, checked by `solve::strategy`): taken when its
//! check passes, left to the layered construction when a cycle through a vertex topped past
//! the bound is not negative, and certified by the checker either way, on the worklist and
//! on the CPU backend's rounds at several thread counts.

use egsolve_core::arena::{Arena, EdgeList, Player};
use egsolve_core::check::{Claim, check};
use egsolve_core::generate::{RandomParams, random};
use egsolve_core::solve::accel;
use egsolve_core::solve::control::Budget;
use egsolve_core::solve::cpu::{CpuAlgorithm, CpuOptions, lift::CpuLift};
use egsolve_core::solve::energy::bound;
use egsolve_core::solve::engine::{LiftCall, LiftEngine, WorklistEngine};
use egsolve_core::solve::strategy::{Player1Source, ToppedBy, Topping};
use egsolve_core::solve::{Backend, Control, Solution, TOP, Threads};

fn certified(arena: &Arena, solution: &Solution, context: &str) {
    let claim = Claim {
        credit: &solution.credit,
        strategy: &solution.strategy,
    };
    let report = check(arena, claim).expect("checkable");
    assert!(report.passed(), "{context}: {:?}", report.violations);
}

/// `v1` (player 1) may move to `w` (+10) or to `x` (0); `w` (player 1) returns to `v1`
/// (−5); `x` loops (−1). Lifting tops `w` past the bound through `v1` while `v1` is finite,
/// then `v1` through `w` at ⊤: the record's moves close the cycle `v1 w` of weight +5. The
/// check must see it and leave the moves to the layered construction, which moves `v1` to
/// `x`.
#[test]
fn a_nonnegative_cycle_through_a_root_is_not_certified() {
    let mut edges = EdgeList::with_capacity(4);
    edges.push(0, 1, 10);
    edges.push(0, 2, 0);
    edges.push(1, 0, -5);
    edges.push(2, 2, -1);
    let arena = Arena::from_edges(vec![Player::One; 3], edges, None).expect("an arena");
    let topping = Topping::new(3);
    let mut values = vec![0; 3];
    let m = bound(&arena).expect("fits");
    let run = WorklistEngine
        .lift(
            LiftCall {
                arena: &arena,
                bound: m,
                topping: Some(&topping),
                budget: Budget::UNLIMITED,
                threads: &Threads::one(),
                control: &Control::new(),
            },
            &mut values,
        )
        .expect("lifts");
    assert!(run.finished);
    assert_eq!(values, vec![TOP; 3]);
    assert_eq!(topping.cause(1), ToppedBy::PastBound);
    assert_eq!(topping.cause(0), ToppedBy::TopSuccessors);
    assert_eq!(topping.edge(0), 0, "v1 recorded its move to w");
    let (solution, stats) =
        accel::solve_with_budget(&arena, &mut WorklistEngine, u64::MAX, &Control::new())
            .expect("solves");
    assert_eq!(stats.evaluations, 0, "lifting alone solved it");
    assert_eq!(stats.player1, Player1Source::Layers);
    assert_eq!(solution.strategy[0], 2, "v1 moves to x");
    certified(&arena, &solution, "three vertices");
}

/// Games that lifting alone solves (no evaluation) take player 1's strategy from the
/// record on every thread count (most of them; the rest from the construction or the dual
/// game), certified by the checker either way. Fixed seeds and a fresh one.
#[test]
fn recorded_moves_are_certified_without_a_construction() {
    let fresh: u64 = rand::random();
    let mut lifted = 0;
    let mut sources = std::collections::BTreeMap::new();
    for seed in (0..60u64).chain([fresh]) {
        let arena = random(
            RandomParams {
                vertices: 50 + (seed % 5) as u32 * 100,
                min_degree: 1,
                max_degree: 3,
                min_weight: -3,
                max_weight: 6,
                player1_percent: 50,
            },
            seed,
        );
        for threads in [1, 2, 3] {
            let options = CpuOptions {
                threads,
                algorithm: CpuAlgorithm::Frontier,
                sequential_below_edges: 0,
            };
            let mut engine = CpuLift::new(&options);
            let (solution, stats) =
                accel::solve_with_budget(&arena, &mut engine, u64::MAX, &Control::new())
                    .expect("solves");
            let context = format!("seed {seed}, {threads} threads: {:?}", stats.player1);
            certified(&arena, &solution, &context);
            lifted += (stats.player1 == Player1Source::Lifted) as u32;
            *sources
                .entry(format!("{:?}", stats.player1))
                .or_insert(0u32) += 1;
        }
    }
    let nonempty = 183 - sources.get("Empty").copied().unwrap_or(0);
    assert!(
        lifted > 50 && lifted * 10 >= nonempty * 6,
        "{lifted} of {nonempty} from the record: {sources:?}"
    );
}

/// The plain backends take player 1's strategy from their lifts' record: on a parity
/// game's reduction with one odd vertex on a ring (lifting tops everything, no evaluation),
/// the reference's moves are the worklist's recorded ones, and every backend's answer is
/// certified without the dual game.
#[test]
fn plain_backends_take_the_record() {
    // A ring of `n` player-1 vertices, vertex 0 of weight −1 (odd priority), the rest 0,
    // each with a chord to its successor's successor; player 1 wins everywhere.
    let n = 500u32;
    let mut edges = EdgeList::with_capacity(2 * n as usize);
    for v in 0..n {
        let w = if v == 0 { -1 } else { 0 };
        edges.push(v, (v + 1) % n, w);
        edges.push(v, (v + 2) % n, w);
    }
    let arena = Arena::from_edges(vec![Player::One; n as usize], edges, None).expect("arena");
    let topping = Topping::new(n as usize);
    let mut values = vec![0; n as usize];
    let m = bound(&arena).expect("fits");
    let (control, one) = (Control::new(), Threads::one());
    let budget = Budget::UNLIMITED;
    let lifted = WorklistEngine.lift(
        LiftCall {
            arena: &arena,
            bound: m,
            topping: Some(&topping),
            budget,
            threads: &one,
            control: &control,
        },
        &mut values,
    );
    assert!(lifted.expect("lifts").finished);
    for backend in [Backend::Reference, Backend::Cpu, Backend::Auto] {
        let solution = egsolve_core::solve::solve(&arena, backend, &control).expect("solves");
        assert!(solution.credit.iter().all(|&c| c == TOP));
        certified(&arena, &solution, backend.name());
        assert_eq!(
            solution.stats.strategy_lifts,
            0,
            "{}: no dual game",
            backend.name()
        );
        if backend == Backend::Reference {
            for v in 0..n {
                let e = topping.edge(v) as usize;
                assert_eq!(
                    solution.strategy[v as usize],
                    arena.succ_targets()[e],
                    "at {v}"
                );
            }
        }
    }
}
