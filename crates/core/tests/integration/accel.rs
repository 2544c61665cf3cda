//! The accelerated solver (`auto`) against the reference worklist: identical credits on
//! random games (plain, climbing families, parity-reduced with many priorities, large
//! weights), on all shared data, and player 1's strategy certificate.

use crate::accel_support::{self, random_game};

use egsolve_core::arena::{Arena, Player};
use egsolve_core::check::{Claim, check};
use egsolve_core::generate::climbing as families;
use egsolve_core::solve::accel;
use egsolve_core::solve::engine::{LiftCall, LiftEngine, LiftRun, WorklistEngine};
use egsolve_core::solve::strategy::Player1Source;
use egsolve_core::solve::{Control, SolveError, TOP, reference};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The seeds of a test's random games: `0..default` (`0..ACCEL_SEEDS` for longer local
/// runs), then a fresh one.
fn seeds(default: u64) -> impl Iterator<Item = u64> {
    let count = std::env::var("ACCEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    let fresh: u64 = rand::rng().random();
    (0..count).chain([fresh])
}

fn describe(arena: &Arena) -> String {
    let mut s = String::new();
    for v in 0..arena.vertex_count() as u32 {
        s += &format!("{v} {:?}:", arena.owner(v));
        for (u, w) in arena.successors(v) {
            s += &format!(" {u}({w})");
        }
        s += "\n";
    }
    s
}

/// Whether some cycle of `G_σ1` restricted to `W1` has weight `>= 0` (Floyd–Warshall on
/// longest walks; small games only).
fn nonnegative_cycle_in_w1(arena: &Arena, credit: &[u64], strategy: &[u32]) -> bool {
    let n = arena.vertex_count();
    const NONE: i128 = i128::MIN;
    // Walk value (weight, length) flattened as weight * (n + 1) + length.
    let scale = n as i128 + 1;
    let mut best = vec![vec![NONE; n]; n];
    for v in 0..n as u32 {
        if credit[v as usize] != TOP {
            continue;
        }
        for (u, w) in arena.successors(v) {
            if credit[u as usize] != TOP {
                continue;
            }
            let value = w as i128 * scale + 1;
            let slot = &mut best[v as usize][u as usize];
            if arena.owner(v) == Player::One {
                // Player 1 moves to its strategy's successor by the cheapest parallel edge.
                if strategy[v as usize] == u {
                    *slot = if *slot == NONE {
                        value
                    } else {
                        (*slot).min(value)
                    };
                }
            } else {
                *slot = (*slot).max(value);
            }
        }
    }
    for k in 0..n {
        for i in 0..n {
            if best[i][k] == NONE {
                continue;
            }
            for j in 0..n {
                if best[k][j] != NONE {
                    let through = best[i][k] + best[k][j];
                    if through > best[i][j] {
                        best[i][j] = through;
                    }
                }
            }
        }
        if (0..n).any(|i| best[i][i] != NONE && best[i][i] > 0) {
            return true;
        }
    }
    false
}

/// The worklist engine without its record of why vertices reached ⊤: player 1's strategy
/// then comes from the evaluations' ranks and the layered construction alone.
struct Unrecorded;

impl LiftEngine for Unrecorded {
    fn name(&self) -> &'static str {
        "worklist, unrecorded"
    }
    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        let call = LiftCall {
            topping: None,
            ..call
        };
        WorklistEngine.lift(call, values)
    }
}

/// Solves with phases of `budget` lifts, asserts the answer and both strategies (see
/// above), and returns the solve's figures.
fn assert_same_with_budget(arena: &Arena, budget: u64, context: &str) -> accel::AccelStats {
    assert_same_with_engine(arena, &mut WorklistEngine, budget, context)
}

/// [`assert_same_with_budget`] lifting with `engine`.
fn assert_same_with_engine(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    budget: u64,
    context: &str,
) -> accel::AccelStats {
    let context = &format!("{context}, {}", engine.name());
    let expected = reference::solve(arena, &Control::new()).expect("reference solves");
    let (got, stats) =
        accel::solve_with_budget(arena, engine, budget, &Control::new()).expect("accel solves");
    assert_eq!(
        got.credit,
        expected.credit,
        "{context}\n{}",
        describe(arena)
    );
    assert_certified(arena, &got, context);
    assert_ne!(
        stats.player1,
        Player1Source::LayersRecordRejected,
        "{context}: the evaluations' record of player 1's moves failed its check\n{}",
        describe(arena)
    );
    // Player 1's strategy: inside W1 and no nonnegative cycle.
    for v in 0..arena.vertex_count() as u32 {
        if arena.owner(v) == Player::One && got.credit[v as usize] == TOP {
            let s = got.strategy[v as usize];
            assert!(
                arena.successors(v).any(|(u, _)| u == s),
                "{context}: bad move at {v}"
            );
            assert_eq!(
                got.credit[s as usize], TOP,
                "{context}: move at {v} leaves W1"
            );
        }
    }
    if arena.vertex_count() <= 80 {
        assert!(
            !nonnegative_cycle_in_w1(arena, &got.credit, &got.strategy),
            "{context}: W1 strategy\n{}",
            describe(arena)
        );
    }
    stats
}

/// The project's certificate checker accepts the solution (player 1's strategy included).
fn assert_certified(arena: &Arena, solution: &egsolve_core::solve::Solution, context: &str) {
    let claim = Claim {
        credit: &solution.credit,
        strategy: &solution.strategy,
    };
    let report = check(arena, claim).expect("checkable");
    assert!(
        report.passed(),
        "{context}: certificate rejected: {:?}",
        report.violations
    );
}

fn assert_same(arena: &Arena, context: &str) {
    for budget in [1, 3, 17] {
        let _ = assert_same_with_budget(arena, budget, &format!("{context}, budget {budget}"));
    }
    let _ = assert_same_with_engine(arena, &mut Unrecorded, 3, &format!("{context}, budget 3"));
}

#[test]
fn tiny_random_games_match_reference() {
    for seed in seeds(3000) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.random_range(1..=6);
        let arena = random_game(&mut rng, n, 3, -4..=4);
        assert_same(&arena, &format!("seed {seed}"));
    }
}

#[test]
fn small_random_games_match_reference() {
    for seed in seeds(400) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.random_range(5..=60);
        let weights = match seed % 3 {
            0 => -3..=3,
            1 => -20..=10,
            _ => -1_000_000_000_000..=1_000_000_000_000,
        };
        let arena = random_game(&mut rng, n, 4, weights);
        assert_same(&arena, &format!("seed {seed}"));
    }
}

#[test]
fn evaluations_jump_on_small_games() {
    // The comparisons above must exercise both kinds of jump, not only lifting.
    let (mut evaluations, mut topped, mut raised, mut from_evaluations) = (0, 0, 0, 0);
    let (mut recorded, mut partly, mut layers) = (0, 0, 0);
    let (mut lifted, mut unproven) = (0, 0);
    for seed in 0..200u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.random_range(5..=40);
        let arena = random_game(&mut rng, n, 3, -20..=10);
        let stats = assert_same_with_budget(&arena, 2, &format!("seed {seed}, budget 2"));
        evaluations += stats.evaluations;
        topped += stats.topped;
        raised += stats.raised;
        from_evaluations += stats.player1.without_dual_game() as u64;
        recorded += (stats.player1 == Player1Source::Recorded) as u64;
        // Longer phases let lifting top vertices before an evaluation: the lifts' record
        // then gives the moves, and without it the layered construction builds them.
        let context = format!("seed {seed}, budget 50");
        let stats = assert_same_with_budget(&arena, 50, &context);
        lifted += (stats.player1 == Player1Source::Lifted) as u64;
        let stats = assert_same_with_engine(&arena, &mut Unrecorded, 50, &context);
        layers += (stats.player1 == Player1Source::Layers) as u64;
        // Larger games leave a few vertices of W1 for lifting after an evaluation.
        let larger = random_game(&mut rng, 200, 3, -10..=5);
        let context = format!("seed {seed}, 200 vertices");
        let stats = assert_same_with_engine(&larger, &mut Unrecorded, 100, &context);
        partly += (stats.player1 == Player1Source::RecordedAndLayers) as u64;
        let stats = assert_same_with_budget(&larger, 100, &context);
        lifted += (stats.player1 == Player1Source::Lifted) as u64;
        unproven += matches!(
            stats.player1,
            Player1Source::Layers | Player1Source::RecordedAndLayers
        ) as u64;
    }
    assert!(
        evaluations > 200 && topped > 100 && raised > 100,
        "{evaluations} {topped} {raised}"
    );
    assert!(
        from_evaluations > 150,
        "player 1's strategy came from evaluations {from_evaluations} / 200 times"
    );
    // Every way to it is taken (each solve certified above): the moves the evaluations
    // recorded; the lifts' record; without it, the layered construction completing the
    // evaluations' moves where a vertex reached ⊤ another way before a later evaluation,
    // and alone where that happened before the first.
    assert!(
        recorded > 150 && lifted > 30 && partly > 5 && layers > 5,
        "recorded {recorded}, lifted {lifted} (unproven {unproven}), recorded and layers \
         {partly}, layers {layers} / 200"
    );
}

#[test]
fn climbing_families_match_reference() {
    assert_same(&families::player1_cycle(2, 1000), "player1_cycle(2, 1000)");
    assert_same(&families::player1_cycle(9, 5000), "player1_cycle(9, 5000)");
    assert_same(
        &families::circle_then_escape(3, 5000),
        "circle_then_escape(3, 5000)",
    );
    for seed in seeds(60) {
        for priorities in [3, 5, 7] {
            let arena = families::random_parity(40, 3, priorities, seed).expect("fits");
            assert_same(
                &arena,
                &format!("random_parity(40, 3, {priorities}, seed {seed})"),
            );
        }
    }
}

#[test]
fn climbing_families_have_the_known_answers() {
    // Answers known by construction, far beyond what lifting reaches.
    let big = 1_000_000_000_000i64;
    let arena = families::player1_cycle(12, big);
    let solution = accel::solve(&arena, &Control::new()).expect("solves");
    assert!(solution.credit[..12].iter().all(|&c| c == TOP));
    assert_eq!(solution.credit[12], 0);
    let arena = families::circle_then_escape(4, big);
    let solution = accel::solve(&arena, &Control::new()).expect("solves");
    for c in 0..4 {
        assert_eq!(
            solution.credit[3 * c..3 * c + 3],
            [big as u64, big as u64 + 1, 0]
        );
    }
}

#[test]
fn shared_data_matches_independent_answers() {
    for (name, path, answer) in accel_support::shared_games() {
        let (arena, expected) = accel_support::load(&path, &answer);
        let solution =
            egsolve_core::solve::solve(&arena, egsolve_core::solve::Backend::Auto, &Control::new())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        match expected {
            accel_support::Expected::Credits(credits) => {
                assert_eq!(solution.credit, credits, "{name}");
            }
            accel_support::Expected::Winners(w0) => {
                assert_eq!(w0.len(), arena.vertex_count(), "{name}");
                let got: Vec<bool> = solution.credit.iter().map(|&c| c != TOP).collect();
                let wrong = (0..w0.len()).filter(|&v| got[v] != w0[v]).count();
                assert_eq!(wrong, 0, "{name}: {wrong} vertices with the wrong winner");
            }
        }
        assert_certified(&arena, &solution, &name);
    }
}

#[test]
fn medium_games_match_reference() {
    for seed in seeds(6) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let arena = random_game(&mut rng, 400, 4, -6..=5);
        assert_same(&arena, &format!("random 400, seed {seed}"));
        let arena = families::random_parity(300, 4, 4, seed).expect("fits");
        assert_same(&arena, &format!("random_parity(300, 4, 4, seed {seed})"));
    }
}

#[test]
fn tiny_games_match_the_brute_force_oracle() {
    let mut compared = 0;
    for seed in seeds(1500) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.random_range(1..=6);
        let weights = if seed % 2 == 0 {
            -5..=3
        } else {
            -1_000_000_000_000..=1_000_000_000_000
        };
        let arena = random_game(&mut rng, n, 3, weights);
        let Some(expected) = egsolve_core::oracle::credits(&arena, 200_000) else {
            continue;
        };
        for budget in [1, 2, 1024] {
            let (got, _) =
                accel::solve_with_budget(&arena, &mut WorklistEngine, budget, &Control::new())
                    .expect("accel solves");
            assert_eq!(
                got.credit,
                expected,
                "seed {seed}, budget {budget}\n{}",
                describe(&arena)
            );
        }
        compared += 1;
    }
    assert!(
        compared > 1000,
        "only {compared} games were small enough for the oracle"
    );
}
