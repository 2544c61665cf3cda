//! The accelerated driver with lifting engines other than the worklist, as the GPU backend
//! plugs in its device (which cannot run here): an engine that lifts in synchronous rounds
//! grouped into "launches", restarts each call with every vertex in the frontier, checks its
//! budget only between launches (so it overshoots it) and stops early on a time limit must
//! still give the reference credits; an engine error ends the solve with that error. The
//! CPU backend as engine (what `auto` uses on several threads) at every budget, thread
//! count and round size, and `auto` itself on a game large enough to use it.

use crate::accel_support::random_game;
use egsolve_core::arena::{Arena, Player};
use egsolve_core::generate::RandomParams;
use egsolve_core::solve::TOP;
use egsolve_core::solve::accel;
use egsolve_core::solve::control::Budget;
use egsolve_core::solve::energy::{bound, minus};
use egsolve_core::solve::engine::{EngineSearches, LiftCall, LiftEngine, LiftRun};
use egsolve_core::solve::strategy::NO_EDGE;
use egsolve_core::solve::{Control, SolveError, Threads, reference};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Synchronous frontier rounds (the GPU kernel's order of lifts, sequentially): each round
/// lifts its frontier from the values before the round; `rounds_per_launch` rounds per
/// "launch", the budget checked after each.
struct RoundsEngine {
    rounds_per_launch: u64,
    calls: u64,
}

fn lifted(arena: &Arena, values: &[u64], v: u32, m: u64) -> u64 {
    let options = arena
        .successors(v)
        .map(|(u, w)| minus(values[u as usize], w, m));
    match arena.owner(v) {
        Player::Zero => options.min().expect("a successor"),
        Player::One => options.max().expect("a successor"),
    }
}

impl LiftEngine for RoundsEngine {
    fn name(&self) -> &'static str {
        "rounds"
    }

    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        let LiftCall {
            arena,
            bound: m,
            budget,
            control,
            ..
        } = call;
        self.calls += 1;
        let n = arena.vertex_count();
        let mut frontier: Vec<u32> = (0..n as u32).collect();
        let mut run = LiftRun::default();
        let mut queued = vec![false; n];
        while !frontier.is_empty() {
            control.checkpoint()?;
            for _ in 0..self.rounds_per_launch {
                let before = values.clone();
                let mut next = Vec::new();
                run.lifts += frontier.len() as u64;
                run.rounds += 1;
                for &v in &frontier {
                    let new = lifted(arena, &before, v, m);
                    if new <= values[v as usize] {
                        continue;
                    }
                    values[v as usize] = new;
                    for (p, w) in arena.predecessors(v) {
                        if !queued[p as usize] && values[p as usize] < minus(new, w, m) {
                            queued[p as usize] = true;
                            next.push(p);
                        }
                    }
                }
                for &p in &next {
                    queued[p as usize] = false;
                }
                frontier = next;
                if frontier.is_empty() {
                    break;
                }
            }
            if run.lifts >= budget.lifts || budget.expired() {
                break;
            }
        }
        run.finished = frontier.is_empty();
        Ok(run)
    }
}

#[test]
fn a_round_engine_that_overshoots_its_budget_gives_the_reference_credits() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let mut evaluations = 0;
    for i in 0..150u64 {
        let n = rng.random_range(1..=60);
        let arena = random_game(&mut rng, n, 3, -6..=6);
        let want = reference::solve(&arena, &Control::new()).expect("solves");
        for (budget, per_launch) in [(1, 1), (2, 7), (1000, 3)] {
            let mut engine = RoundsEngine {
                rounds_per_launch: per_launch,
                calls: 0,
            };
            let (got, stats) =
                accel::solve_with_budget(&arena, &mut engine, budget, &Control::new())
                    .expect("solves");
            assert_eq!(got.credit, want.credit, "game {i}, budget {budget}");
            assert_eq!(engine.calls, stats.evaluations + 1, "one call per phase");
            evaluations += stats.evaluations;
        }
    }
    assert!(evaluations > 100, "the driver evaluated ({evaluations})");
}

#[test]
fn an_engine_error_ends_the_solve_with_that_error() {
    struct Failing;
    impl LiftEngine for Failing {
        fn name(&self) -> &'static str {
            "failing"
        }
        fn lift(&mut self, _: LiftCall<'_>, _: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
            Err(SolveError::Unavailable {
                backend: "gpu",
                reason: "the device fell off the bus".into(),
            })
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let arena = random_game(&mut rng, 20, 3, -4..=4);
    assert!(bound(&arena).is_ok());
    match accel::solve_with(&arena, &mut Failing, &Control::new()) {
        Err(SolveError::Unavailable { backend, reason }) => {
            assert_eq!(backend, "gpu");
            assert!(reason.contains("fell off"));
        }
        other => panic!("expected the engine's error, got {:?}", other.map(|_| ())),
    }
}

/// Seeds for the random tests: fixed ones, plus one fresh seed per run (printed, so a
/// failure can be replayed).
fn seeds(fixed: &[u64]) -> Vec<u64> {
    let fresh = rand::rng().random::<u64>();
    eprintln!("fresh seed: {fresh}");
    fixed.iter().copied().chain([fresh]).collect()
}

#[test]
fn the_cpu_backend_as_engine_gives_the_reference_credits_at_every_budget() {
    use egsolve_core::solve::cpu::CpuOptions;
    use egsolve_core::solve::cpu::lift::CpuLift;
    for seed in seeds(&[5, 77]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut evaluations = 0;
        for i in 0..60u64 {
            let n = rng.random_range(1..=80);
            let arena = random_game(&mut rng, n, 4, -6..=6);
            let want = reference::solve(&arena, &Control::new()).expect("solves");
            for threads in [1, 2, 4] {
                for sequential_below_edges in [0, 1 << 15] {
                    let options = CpuOptions {
                        threads,
                        sequential_below_edges,
                        ..CpuOptions::default()
                    };
                    for budget in [1, 3, 1000] {
                        let mut engine = CpuLift::new(&options);
                        let (got, stats) =
                            accel::solve_with_budget(&arena, &mut engine, budget, &Control::new())
                                .expect("solves");
                        assert_eq!(
                            got.credit, want.credit,
                            "seed {seed} game {i}: {threads} threads, budget {budget}"
                        );
                        evaluations += stats.evaluations;
                    }
                }
            }
        }
        assert!(
            evaluations > 50,
            "seed {seed}: the driver evaluated ({evaluations})"
        );
    }
}

#[test]
fn a_budgeted_cpu_lift_stops_below_the_fixpoint_and_resumes_to_it() {
    use egsolve_core::solve::cpu::{CpuOptions, lift_budgeted, lift_from};
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    // Uniform weights: W1 vertices climb to ⊤ one step at a time, so lifting takes long.
    let arena = random_game(&mut rng, 300, 3, -9..=9);
    let m = bound(&arena).expect("bound");
    let n = arena.vertex_count();
    for threads in [1, 2] {
        let options = CpuOptions {
            threads,
            ..CpuOptions::default()
        };
        let full = lift_from(&arena, m, vec![0; n], &options, &Control::new()).expect("lifts");
        assert!(full.finished && full.lifts > 2 * n as u64, "a long climb");
        let budget = Budget {
            lifts: n as u64,
            until: None,
        };
        let pool = Threads::new(threads);
        let control = Control::new();
        let call = LiftCall {
            arena: &arena,
            bound: m,
            topping: None,
            budget,
            threads: &pool,
            control: &control,
        };
        let part = lift_budgeted(call, vec![0; n], &options).expect("lifts");
        assert!(!part.finished, "{threads} threads: stopped at the budget");
        assert!(part.lifts >= n as u64 && part.lifts < full.lifts);
        // The frontier it stopped with, against one some rounds before (what the driver
        // reads to lift on instead of evaluating); a finished run has none.
        let tail = part.tail.expect("a stopped run's frontier tail");
        assert!(
            tail.now > 0 && tail.earlier > 0 && tail.rounds >= 1,
            "{tail:?}"
        );
        assert_eq!(full.tail, None);
        assert!(part.values.iter().zip(&full.values).all(|(a, b)| a <= b));
        let rest = lift_from(&arena, m, part.values, &options, &Control::new()).expect("lifts");
        assert_eq!(rest.tail, None);
        assert_eq!(
            rest.values, full.values,
            "{threads} threads: resumed to the fixpoint"
        );
    }
}

#[test]
fn auto_on_several_threads_solves_large_games_like_the_reference_and_certifies() {
    use egsolve_core::solve::auto::{PARALLEL_FROM_EDGES, solve as solve_auto};
    use egsolve_core::solve::cpu::CpuOptions;
    for seed in seeds(&[21]) {
        let params = RandomParams {
            vertices: 180_000,
            min_degree: 2,
            max_degree: 4,
            min_weight: -8,
            max_weight: 8,
            player1_percent: 30,
        };
        let arena = egsolve_core::generate::random(params, seed);
        assert!(
            arena.edge_count() >= PARALLEL_FROM_EDGES,
            "the parallel engine runs"
        );
        let want = reference::solve(&arena, &Control::new()).expect("solves");
        let options = CpuOptions {
            threads: 2,
            ..CpuOptions::default()
        };
        let got = solve_auto(&arena, &options, &Control::new()).expect("solves");
        assert_eq!(got.credit, want.credit, "seed {seed}");
        let report = egsolve_core::check::check(
            &arena,
            egsolve_core::check::Claim {
                credit: &got.credit,
                strategy: &got.strategy,
            },
        )
        .expect("one entry per vertex");
        assert!(report.passed(), "seed {seed}: {report:?}");
    }
}

/// The worklist, answering player 1's strategy for each evaluation as the GPU engine does
/// from the values it holds: the edge maximising `(f(u) ⊖ w, −w)` (the first of equal keys)
/// at player-1 vertices with a finite value, `NO_EDGE` elsewhere (the driver keeps its own
/// edge there). Chosen after each lift, from the values it returns.
#[derive(Default)]
struct ChoosingEngine {
    chosen: Vec<u32>,
    answered: u64,
    /// The driver's requests for player 1's recorded moves (answered with none, so the
    /// host classifies its record).
    record_asked: u64,
}

impl LiftEngine for ChoosingEngine {
    fn name(&self) -> &'static str {
        "choosing"
    }

    fn records_topping(&self) -> bool {
        egsolve_core::solve::engine::WorklistEngine.records_topping()
    }

    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        let run = egsolve_core::solve::engine::WorklistEngine.lift(call, values)?;
        let (arena, m) = (call.arena, call.bound);
        let weights = arena.succ_weights();
        let targets = arena.succ_targets();
        self.chosen = (0..arena.vertex_count() as u32)
            .map(|v| {
                if arena.owner(v) != Player::One || values[v as usize] == TOP {
                    return NO_EDGE;
                }
                let key = |e: usize| {
                    let w = weights.get(e);
                    (minus(values[targets[e] as usize], w, m), -w)
                };
                // The first edge of the largest key.
                arena
                    .succ_range(v)
                    .fold(None::<usize>, |best, e| match best {
                        Some(b) if key(b) >= key(e) => Some(b),
                        _ => Some(e),
                    })
                    .expect("a successor") as u32
            })
            .collect();
        Ok(run)
    }
    fn searches(&mut self) -> Option<&mut dyn EngineSearches> {
        Some(self)
    }
}

impl EngineSearches for ChoosingEngine {
    fn player1_edges(&mut self) -> Result<Option<Vec<u32>>, SolveError> {
        self.answered += 1;
        Ok(Some(self.chosen.clone()))
    }

    fn recorded_moves(
        &mut self,
        _arena: &Arena,
        _topping: &egsolve_core::solve::strategy::topping::Topping,
        _evaluated: bool,
        _threads: &Threads,
    ) -> Result<Option<egsolve_core::solve::strategy::RecordedMoves>, SolveError> {
        self.record_asked += 1;
        Ok(None)
    }
}

/// Player 1's strategy answered by the engine (merged into the driver's edges at every
/// evaluation after the first) gives the reference credits, and the same solution,
/// strategies included, as the host's own choice, at budgets that evaluate often; fixed
/// seeds and a fresh one.
#[test]
fn player_1s_strategy_from_the_engine_gives_the_hosts_solution() {
    for seed in seeds(&[3, 19]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut answered, mut evaluations, mut merged) = (0, 0, 0);
        for i in 0..80u64 {
            let n = rng.random_range(1..=70);
            let arena = random_game(&mut rng, n, 4, -6..=6);
            let want = reference::solve(&arena, &Control::new()).expect("solves");
            for budget in [1, 4, 1000] {
                let mut engine = ChoosingEngine::default();
                let (got, stats) =
                    accel::solve_with_budget(&arena, &mut engine, budget, &Control::new())
                        .expect("solves");
                let (host, _) = accel::solve_with_budget(
                    &arena,
                    &mut egsolve_core::solve::engine::WorklistEngine,
                    budget,
                    &Control::new(),
                )
                .expect("solves");
                assert_eq!(
                    got.credit, want.credit,
                    "seed {seed} game {i}, budget {budget}"
                );
                assert_eq!(
                    got.strategy, host.strategy,
                    "seed {seed} game {i}, budget {budget}"
                );
                assert_eq!(engine.answered, stats.evaluations);
                answered += engine.answered;
                evaluations += stats.evaluations;
                // A second evaluation merges the engine's edges into the driver's.
                merged += (stats.evaluations >= 2) as u64;
            }
        }
        assert!(
            answered > 100 && evaluations == answered && merged > 10,
            "seed {seed}: {answered} answers, {evaluations} evaluations, {merged} merged"
        );
    }
}

/// The engine is asked for player 1's recorded moves only where player 1 wins somewhere
/// (elsewhere there are none to classify), once per solve, and the answer is the host's
/// either way; fixed seeds and a fresh one.
#[test]
fn recorded_moves_are_asked_for_only_where_player_1_wins() {
    for seed in seeds(&[5, 23]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut asked, mut w1_empty) = (0, 0);
        for i in 0..120u64 {
            let n = rng.random_range(1..=60);
            // Weights leaning positive leave W1 empty in many games.
            let low = rng.random_range(-6..=0);
            let arena = random_game(&mut rng, n, 3, low..=6);
            let mut engine = ChoosingEngine::default();
            let (got, _) = accel::solve_with_budget(&arena, &mut engine, 1000, &Control::new())
                .expect("solves");
            let (host, _) = accel::solve_with_budget(
                &arena,
                &mut egsolve_core::solve::engine::WorklistEngine,
                1000,
                &Control::new(),
            )
            .expect("solves");
            assert_eq!(
                (&got.credit, &got.strategy),
                (&host.credit, &host.strategy),
                "seed {seed} game {i}"
            );
            let player1_wins = got.credit.contains(&TOP);
            assert_eq!(
                engine.record_asked, player1_wins as u64,
                "seed {seed} game {i}"
            );
            asked += engine.record_asked;
            w1_empty += (!player1_wins) as u64;
        }
        assert!(
            asked > 10 && w1_empty > 10,
            "seed {seed}: asked in {asked} games, W1 empty in {w1_empty}"
        );
    }
}
