//! The CPU backend against the reference solver: random games of many shapes with 1, 2 and
//! 4 threads (frontier rounds forced parallel and left automatic) and the sweep; strategies
//! checked edge by edge; cancellation and deadlines within 100 ms.

use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use egsolve_core::arena::{Arena, EdgeList, Player, VertexId};
use egsolve_core::solve::cpu::{self, CpuAlgorithm, CpuOptions};
use egsolve_core::solve::energy::{bound, minus};
use egsolve_core::solve::{Control, Interrupted, NO_MOVE, Solution, SolveError, TOP, reference};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A family of random games.
#[derive(Debug, Clone, Copy)]
struct Shape {
    vertices: usize,
    /// Successors per vertex: 1..=max_degree.
    max_degree: usize,
    /// Weights in -max_weight..=max_weight, shifted by `bias`.
    max_weight: i64,
    bias: i64,
    /// Fraction of player-1 vertices.
    player1: f64,
    /// Successors drawn from a window of this many vertices around the source (0: anywhere):
    /// local edges make long chains and many separate player-1 regions.
    locality: usize,
}

fn random_game(shape: Shape, seed: u64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = shape.vertices;
    let owners: Vec<Player> = (0..n)
        .map(|_| Player::one_if(rng.random_bool(shape.player1)))
        .collect();
    let mut edges = EdgeList::default();
    for v in 0..n {
        for _ in 0..rng.random_range(1..=shape.max_degree) {
            let u = draw_successor(&mut rng, shape, v);
            let w = rng.random_range(-shape.max_weight..=shape.max_weight) + shape.bias;
            edges.push(v as VertexId, u as VertexId, w);
        }
    }
    Arena::from_edges(owners, edges, None).expect("every vertex has a successor")
}

fn draw_successor(rng: &mut ChaCha8Rng, shape: Shape, v: usize) -> usize {
    let n = shape.vertices;
    if shape.locality == 0 {
        rng.random_range(0..n)
    } else {
        let offset = rng.random_range(0..shape.locality.min(n));
        (v + n - shape.locality.min(n) / 2 + offset) % n
    }
}

/// The least fixpoint by plain Kleene iteration (lift every vertex until nothing changes):
/// obviously right, slow, independent of any backend's bookkeeping.
fn kleene(arena: &Arena) -> Vec<u64> {
    let m = bound(arena).unwrap();
    let mut f = vec![0u64; arena.vertex_count()];
    let mut changed = true;
    while changed {
        changed = false;
        for v in 0..arena.vertex_count() as VertexId {
            let needs = arena.successors(v).map(|(u, w)| minus(f[u as usize], w, m));
            let lifted = match arena.owner(v) {
                Player::Zero => needs.min().unwrap(),
                Player::One => needs.max().unwrap(),
            };
            if lifted > f[v as usize] {
                f[v as usize] = lifted;
                changed = true;
            }
        }
    }
    f
}

/// Whether sweeping every vertex per round finishes quickly: sweeps need up to ~`M` rounds.
fn small_enough_to_sweep(arena: &Arena) -> bool {
    (arena.vertex_count() as u64).saturating_mul(bound(arena).unwrap()) <= 5_000_000
}

/// The expected credits: the reference solver's, cross-checked against Kleene iteration on
/// small games (self-loops included: they once broke the reference's counters).
fn oracle(arena: &Arena) -> Vec<u64> {
    let expected = reference::solve(arena, &Control::new()).unwrap().credit;
    if small_enough_to_sweep(arena) {
        assert_eq!(
            expected,
            kleene(arena),
            "the reference disagrees with Kleene iteration"
        );
    }
    expected
}

fn shapes() -> Vec<(Shape, usize)> {
    let s = |vertices, max_degree, max_weight, bias, player1, locality| Shape {
        vertices,
        max_degree,
        max_weight,
        bias,
        player1,
        locality,
    };
    // (shape, how many seeds)
    vec![
        (s(1, 1, 3, 0, 0.5, 0), 8),
        (s(2, 2, 3, 0, 0.5, 0), 20),
        (s(5, 3, 4, 0, 0.5, 0), 40),
        (s(12, 3, 10, 1, 0.4, 0), 40),
        (s(30, 6, 1_000, 0, 0.5, 0), 25),
        (s(60, 2, 5, -1, 0.3, 0), 25),
        (s(200, 4, 20, 2, 0.5, 8), 10),
        (s(500, 12, 3, 0, 0.5, 0), 4),
        (s(1_000, 3, 1_000_000, 0, 0.5, 16), 3),
        (s(2_000, 2, 10, 1, 0.2, 6), 2),
        (s(1_500, 24, 20, 2, 0.5, 0), 1),
        (s(20_000, 4, 3, 2, 0.3, 0), 1),
        (s(100_000, 3, 3, 2, 0.2, 0), 1),
        (s(20_000, 2, 2, 1, 0.3, 12), 1),
        // Weights stored as i64 and values as u64 cells (M ≥ u32::MAX), then i32 weights
        // with u64 cells: the backend's other storage widths.
        (s(30, 6, 3_000_000_000, 0, 0.5, 0), 10),
        (s(2_000, 3, 40_000_000, 1, 0.4, 0), 2),
    ]
}

/// Rounds (of the one-thread frontier run) above which the configurations that pay a
/// fork/join per round (parallel rounds forced for every frontier, the parallel sweep) are
/// left out. They take about as many rounds, at ~20 µs each on 2 cores against ~15 ns per
/// lift of a sequential round: a fresh seed that draws a cycle of weight near 0 under a large
/// bound (10^7 rounds, under a second sequentially) once kept this test busy for over 15
/// minutes in CI. The fixed seeds need at most 34,838 (`Shape` of 1,000 vertices, weights to
/// 10^6); those above this bound (that shape, and 20,000 vertices of weights to 2) still run
/// every other configuration. At 50,000 this test took 33 s alone on the 2-core build
/// machine (19 s at 5,000), for no code path that a game of 5,000 rounds leaves untried.
const FORK_PER_ROUND_UP_TO_ROUNDS: u64 = 5_000;

/// Every configuration compared with the reference: threads 1, 2, 4, with parallel rounds
/// left automatic, forced for every round, or taking over from runs of sequential rounds
/// at tiny frontiers (so the two kinds alternate often); the sweep on small games. Games
/// that need many rounds skip the configurations that fork per round
/// ([`FORK_PER_ROUND_UP_TO_ROUNDS`]).
fn configurations(arena: &Arena) -> Vec<CpuOptions> {
    let zeros = vec![0; arena.vertex_count()];
    let one_thread = CpuOptions {
        threads: 1,
        ..CpuOptions::default()
    };
    let sequential = cpu::lift_from(
        arena,
        bound(arena).unwrap(),
        zeros,
        &one_thread,
        &Control::new(),
    );
    let few_rounds = sequential.unwrap().rounds <= FORK_PER_ROUND_UP_TO_ROUNDS;
    let mut all = Vec::new();
    for threads in [1, 2, 4] {
        all.push(CpuOptions {
            threads,
            ..CpuOptions::default()
        });
        if threads > 1 {
            let forced: &[usize] = if few_rounds { &[0, 64] } else { &[64] };
            for &sequential_below_edges in forced {
                all.push(CpuOptions {
                    threads,
                    sequential_below_edges,
                    ..CpuOptions::default()
                });
            }
        }
    }
    if small_enough_to_sweep(arena) {
        let threads: &[usize] = if few_rounds { &[1, 2] } else { &[1] };
        for &threads in threads {
            all.push(CpuOptions {
                threads,
                algorithm: CpuAlgorithm::Sweep,
                ..CpuOptions::default()
            });
        }
    }
    all
}

/// Each strategy edge satisfies the edge condition: player 0's on `W0` keeps the credit
/// sufficient, player 1's on `W1` stays in `W1`; other entries are `NO_MOVE`.
fn check_strategies(arena: &Arena, solution: &Solution) -> Result<(), String> {
    let m = solution.stats.bound;
    for v in 0..arena.vertex_count() as VertexId {
        let (owner, credit, chosen) = (
            arena.owner(v),
            solution.credit[v as usize],
            solution.strategy[v as usize],
        );
        let wins = (owner == Player::Zero) == (credit != TOP);
        if !wins {
            if chosen != NO_MOVE {
                return Err(format!("vertex {v}: a move where its owner loses"));
            }
            continue;
        }
        let ok = arena.successors(v).any(|(u, w)| {
            u == chosen
                && match owner {
                    Player::Zero => credit >= minus(solution.credit[u as usize], w, m),
                    Player::One => solution.credit[u as usize] == TOP,
                }
        });
        if !ok {
            return Err(format!(
                "vertex {v}: strategy move to {chosen} breaks the edge condition"
            ));
        }
    }
    Ok(())
}

/// Compares every configuration with the reference on one game.
fn check_game(arena: &Arena, what: &str) {
    let control = Control::new();
    let expected = oracle(arena);
    let m = bound(arena).unwrap();
    for options in configurations(arena) {
        let solution = cpu::solve(arena, &options, &control).expect("cpu solves");
        assert!(
            solution.credit == expected,
            "{what}, {options:?}: credits differ from the oracle"
        );
        if let Err(e) = check_strategies(arena, &solution) {
            panic!("{what}, {options:?}: {e}");
        }
        let lifted =
            cpu::lift_from(arena, m, vec![0; arena.vertex_count()], &options, &control).unwrap();
        assert_eq!(
            lifted.values, expected,
            "{what}, {options:?}: lift_from differs"
        );
    }
}

#[test]
fn random_games_match_the_reference_for_every_thread_count() {
    let fresh = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    for (index, (shape, seeds)) in shapes().into_iter().enumerate() {
        let fixed = (0..seeds as u64).map(|s| s * 7919 + index as u64);
        for seed in fixed.chain([fresh ^ index as u64]) {
            let arena = random_game(shape, seed);
            check_game(
                &arena,
                &format!("{shape:?} seed {seed} (fresh seed of this run: {fresh})"),
            );
        }
    }
}

/// A cycle of weight -1 under a bound of 2·10^6 takes ~4·10^6 rounds: checked on every
/// configuration except those that fork per round, which would take minutes.
#[test]
fn games_of_many_rounds_skip_the_fork_per_round_configurations() {
    let k = 1_000_000;
    let mut edges = EdgeList::default();
    edges.push(0, 1, k);
    edges.push(1, 0, -k - 1);
    edges.push(2, 2, -k);
    let arena = Arena::from_edges(vec![Player::Zero; 3], edges, None).unwrap();
    let chosen = configurations(&arena);
    assert!(
        chosen
            .iter()
            .all(|o| o.threads == 1 || o.sequential_below_edges > 0)
    );
    assert!(
        chosen
            .iter()
            .any(|o| o.threads == 4 && o.sequential_below_edges == 64)
    );
    check_game(&arena, "a cycle of weight -1 under a large bound");
}

/// Lifting from a start below the least fixpoint (half of every finite credit, 0 under ⊤)
/// reaches the same fixpoint.
#[test]
fn lift_from_a_partial_start_reaches_the_same_fixpoint() {
    let shape = Shape {
        vertices: 3_000,
        max_degree: 4,
        max_weight: 30,
        bias: 1,
        player1: 0.5,
        locality: 10,
    };
    for seed in 0..4 {
        let arena = random_game(shape, seed);
        let expected = oracle(&arena);
        let start: Vec<u64> = expected
            .iter()
            .map(|&c| if c == TOP { 0 } else { c / 2 })
            .collect();
        for options in configurations(&arena) {
            let m = bound(&arena).unwrap();
            let lifted =
                cpu::lift_from(&arena, m, start.clone(), &options, &Control::new()).unwrap();
            assert_eq!(lifted.values, expected, "seed {seed}, {options:?}");
            assert!(lifted.working_set_bytes > arena.heap_bytes());
        }
    }
}

/// A player-0 vertex whose cheapest move is its own negative self-loop (the counter must
/// account for the loop's own raise), and a player-1 vertex with the same.
#[test]
fn self_loops_that_are_the_cheapest_move() {
    let mut edges = EdgeList::default();
    edges.push(0, 0, -1);
    edges.push(0, 1, -5);
    edges.push(1, 1, 0);
    edges.push(2, 2, -2);
    edges.push(2, 1, 3);
    let arena =
        Arena::from_edges(vec![Player::Zero, Player::Zero, Player::One], edges, None).unwrap();
    for options in configurations(&arena) {
        let solution = cpu::solve(&arena, &options, &Control::new()).unwrap();
        // Vertex 0 pays 5 to reach the 0-cycle at 1; vertex 2's opponent loops on -2 forever.
        assert_eq!(solution.credit, vec![5, 0, TOP], "{options:?}");
        check_strategies(&arena, &solution).unwrap();
    }
}

/// A two-vertex cycle of weight −1 each way behind `M ≈ 10^15`: it climbs one unit per
/// round for ~10^15 rounds. `copies` disjoint copies make every round as large as wanted.
fn endless_climb(copies: usize) -> Arena {
    let n = 2 * copies + 1;
    let mut edges = EdgeList::default();
    for c in 0..copies as VertexId {
        edges.push(2 * c, 2 * c + 1, -1);
        edges.push(2 * c + 1, 2 * c, -1);
    }
    let huge = n as VertexId - 1;
    edges.push(huge, huge, -1_000_000_000_000_000);
    Arena::from_edges(vec![Player::Zero; n], edges, None).unwrap()
}

/// Starts a solve on another thread, cancels it after `after`, and returns how long it took
/// to come back and what it returned.
fn cancel_after(
    arena: Arena,
    options: CpuOptions,
    after: Duration,
) -> (Duration, Result<Solution, SolveError>) {
    let control = Control::new();
    let (done, finished) = mpsc::channel();
    let worker = {
        let control = control.clone();
        std::thread::spawn(move || done.send(cpu::solve(&arena, &options, &control)).unwrap())
    };
    std::thread::sleep(after);
    assert!(
        control.progress().snapshot().round > 0,
        "the solve made progress before the cancel"
    );
    let cancelled = Instant::now();
    control.cancel();
    let result = finished
        .recv_timeout(Duration::from_secs(5))
        .expect("the solve stops");
    let elapsed = cancelled.elapsed();
    worker.join().unwrap();
    (elapsed, result)
}

#[test]
fn cancelling_a_long_solve_returns_cancelled_within_100ms() {
    let cases = [
        (
            1,
            CpuOptions {
                threads: 1,
                ..CpuOptions::default()
            },
        ),
        (
            1,
            CpuOptions {
                threads: 2,
                ..CpuOptions::default()
            },
        ),
        (
            100_000,
            CpuOptions {
                threads: 1,
                ..CpuOptions::default()
            },
        ),
        (
            100_000,
            CpuOptions {
                threads: 2,
                ..CpuOptions::default()
            },
        ),
        (
            100_000,
            CpuOptions {
                threads: 2,
                algorithm: CpuAlgorithm::Sweep,
                ..CpuOptions::default()
            },
        ),
    ];
    for (copies, options) in cases {
        let (elapsed, result) =
            cancel_after(endless_climb(copies), options, Duration::from_millis(150));
        assert!(
            matches!(result, Err(SolveError::Interrupted(Interrupted::Cancelled))),
            "{copies} copies, {options:?}: {result:?}"
        );
        assert!(
            elapsed < Duration::from_millis(100),
            "{copies} copies, {options:?}: stopped after {elapsed:?}"
        );
    }
}

#[test]
fn a_deadline_times_out() {
    let control = Control::new().with_deadline(Some(Instant::now() + Duration::from_millis(50)));
    let options = CpuOptions {
        threads: 2,
        ..CpuOptions::default()
    };
    let started = Instant::now();
    let result = cpu::solve(&endless_climb(1_000), &options, &control);
    assert!(
        matches!(result, Err(SolveError::Interrupted(Interrupted::TimedOut))),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(150),
        "stopped after {:?}",
        started.elapsed()
    );
}

#[test]
fn options_parse_and_name_the_algorithms() {
    assert_eq!("sweep".parse::<CpuAlgorithm>(), Ok(CpuAlgorithm::Sweep));
    assert_eq!(
        "frontier".parse::<CpuAlgorithm>(),
        Ok(CpuAlgorithm::Frontier)
    );
    assert!("naive".parse::<CpuAlgorithm>().is_err());
    assert!(CpuOptions::default().effective_threads() >= 1);
    assert_eq!(
        CpuOptions {
            threads: 3,
            ..CpuOptions::default()
        }
        .effective_threads(),
        3
    );
    let solution = egsolve_core::solve::solve(
        &endless_climb(0),
        egsolve_core::solve::Backend::Cpu,
        &Control::new(),
    )
    .unwrap();
    assert_eq!(solution.credit, vec![TOP]);
}
