//! Every part of the accelerated solver that runs on several threads (graph build,
//! components, cycle tests, reachability, attractors, Bellman–Ford, player 1's layered
//! strategy, player 0's strategy) against the same solve on one thread and the reference:
//! identical credits, identical strategies (the choices do not depend on the threads, given
//! the same lifting: an engine that lifts with the sequential worklist but lends the solve
//! several threads), and a certificate that `check` accepts. The CPU backend's parallel
//! rounds as engine lift in another order, so they reach other intermediate values (hence
//! other, equally certified, player-1 strategies): with them credits and certificates are
//! compared. The parallel paths are forced on tiny games with a parallel threshold of 0;
//! evaluations are forced with small lift budgets.

use egsolve_core::arena::Arena;
use egsolve_core::check::{Claim, check};
use egsolve_core::generate::climbing as families;
use egsolve_core::generate::{RandomParams, random};
use egsolve_core::solve::accel;
use egsolve_core::solve::cpu::CpuOptions;
use egsolve_core::solve::cpu::lift::CpuLift;
use egsolve_core::solve::engine::{LiftCall, LiftEngine, LiftRun};
use egsolve_core::solve::{Backend, Control, Solution, SolveError, Threads, reference, solve};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seeds for the random tests: fixed ones, plus one fresh seed per run (printed, so a
/// failure can be replayed with `EGSOLVE_SEED`).
fn seeds(fixed: &[u64]) -> Vec<u64> {
    let fresh = std::env::var("EGSOLVE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random::<u64>());
    eprintln!("fresh seed: {fresh}");
    fixed.iter().copied().chain([fresh]).collect()
}

fn certified(arena: &Arena, solution: &Solution, context: &str) {
    let report = check(
        arena,
        Claim {
            credit: &solution.credit,
            strategy: &solution.strategy,
        },
    )
    .expect("checkable");
    assert!(report.passed(), "{context}: {report:?}");
}

/// The sequential worklist's lifting, with `threads` threads lent to everything else.
struct WorklistOnThreads(usize);

impl LiftEngine for WorklistOnThreads {
    fn name(&self) -> &'static str {
        "worklist-on-threads"
    }
    fn threads(&self) -> usize {
        self.0
    }
    fn parallel_from(&self) -> usize {
        0
    }
    fn records_topping(&self) -> bool {
        true
    }
    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        egsolve_core::solve::engine::WorklistEngine.lift(call, values)
    }
}

/// The accelerated solver lifting with the worklist, every other part on `threads`.
fn solve_on(arena: &Arena, threads: usize, budget: u64) -> (Solution, accel::AccelStats) {
    accel::solve_with_budget(
        arena,
        &mut WorklistOnThreads(threads),
        budget,
        &Control::new(),
    )
    .expect("solves")
}

/// The accelerated solver with the CPU backend's rounds on `threads`, all parallel.
fn solve_on_cpu_rounds(arena: &Arena, threads: usize, budget: u64) -> Solution {
    let options = CpuOptions {
        threads,
        sequential_below_edges: 0,
        ..CpuOptions::default()
    };
    let mut engine = CpuLift::new(&options);
    accel::solve_with_budget(arena, &mut engine, budget, &Control::new())
        .expect("solves")
        .0
}

fn same_on_every_thread_count(arena: &Arena, context: &str) -> accel::AccelStats {
    let want = reference::solve(arena, &Control::new()).expect("reference solves");
    let mut total = accel::AccelStats::default();
    for budget in [1, 5] {
        let (one, stats) = solve_on(arena, 1, budget);
        assert_eq!(
            one.credit, want.credit,
            "{context}, budget {budget}, 1 thread"
        );
        certified(arena, &one, context);
        total.evaluations += stats.evaluations;
        total.topped += stats.topped;
        total.raised += stats.raised;
        for threads in [2, 3, 4] {
            let (many, _) = solve_on(arena, threads, budget);
            assert_eq!(
                many.credit, want.credit,
                "{context}, budget {budget}, {threads} threads"
            );
            assert_eq!(
                many.strategy, one.strategy,
                "{context}, budget {budget}: the strategies on {threads} threads"
            );
            let rounds = solve_on_cpu_rounds(arena, threads, budget);
            assert_eq!(
                rounds.credit, want.credit,
                "{context}, budget {budget}, cpu rounds on {threads} threads"
            );
            certified(arena, &rounds, context);
        }
    }
    total
}

fn random_game(rng: &mut ChaCha8Rng, n: u32, degree: u32, weights: i64) -> Arena {
    random(
        RandomParams {
            vertices: n,
            min_degree: 1,
            max_degree: degree,
            min_weight: -weights,
            max_weight: weights,
            player1_percent: 50,
        },
        rng.random(),
    )
}

#[test]
fn random_games_on_several_threads_match_one_thread_and_the_reference() {
    for seed in seeds(&[1, 2, 3]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut evaluations, mut topped, mut raised) = (0, 0, 0);
        for i in 0..40 {
            let n = rng.random_range(1..=300);
            let degree = rng.random_range(1..=4);
            let weights = [3, 10, 1000][i % 3];
            let arena = random_game(&mut rng, n, degree, weights);
            let stats = same_on_every_thread_count(&arena, &format!("seed {seed} game {i}"));
            evaluations += stats.evaluations;
            topped += stats.topped;
            raised += stats.raised;
        }
        assert!(
            evaluations > 40 && topped > 0 && raised > 0,
            "seed {seed}: the parallel evaluations ran ({evaluations} {topped} {raised})"
        );
    }
}

#[test]
fn climbing_and_parity_families_on_several_threads() {
    same_on_every_thread_count(&families::player1_cycle(4, 1000), "player1_cycle");
    same_on_every_thread_count(&families::circle_then_escape(3, 500), "circle_then_escape");
    for seed in seeds(&[7, 8]) {
        for priorities in [3, 6] {
            let arena = families::random_parity(200, 3, priorities, seed).expect("fits");
            same_on_every_thread_count(&arena, &format!("parity seed {seed} p{priorities}"));
        }
    }
}

/// The backends that do not evaluate (reference, cpu) get player 1's strategy from their
/// lifts' record or the layered construction, certified; the construction alone (credits
/// without a record) gives the same strategy on every thread count, certified too.
#[test]
fn backends_without_evaluations_get_certified_player1_strategies() {
    let mut from_layers = 0;
    for seed in seeds(&[11, 12]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for i in 0..30 {
            let n = rng.random_range(2..=200);
            let arena = random_game(&mut rng, n, 3, 5);
            let context = format!("seed {seed} game {i}");
            let want = solve(&arena, Backend::Reference, &Control::new()).expect("solves");
            certified(&arena, &want, &context);
            let mut built = Vec::new();
            for threads in [1, 3] {
                let credits = want.credit.clone();
                let stats = want.stats.clone();
                let pool = Threads::new(threads).with_parallel_from(0);
                let got = Solution::from_credits(&arena, credits, stats, &pool, &Control::new())
                    .expect("strategies");
                certified(&arena, &got, &format!("{context}: {threads} threads"));
                built.push(got);
            }
            assert_eq!(
                built[0].strategy, built[1].strategy,
                "{context}: 1 and 3 threads"
            );
            from_layers += (built[0].stats.strategy_lifts == 0) as u32;
        }
    }
    assert!(from_layers > 40, "layers served {from_layers} of 60 games");
}
