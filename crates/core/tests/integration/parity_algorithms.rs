//! Every parity algorithm (`--parity-algorithm`) against the reference (Zielonka) and the
//! brute-force oracle on random games (fixed seeds and a fresh one, printed), on every
//! lower-bound family at several sizes (Oink's bundled solutions, the winners Oink recorded
//! at every size, and each other), on the shared data's parity games (Oink's solutions),
//! and on the SYNTCOMP games where a folder of them is present; at one thread and with
//! every round forced parallel on two (Zielonka's attractors, fixpoint iteration's rounds).
//! Every answer passes the parity certificate. Also: tangle searches cut at every point
//! and resumed, cancel and deadline, and the algorithm named in the summary.

use crate::oink_support;
use crate::parity_support::{certify_parity, winners};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egsolve_core::check::{ParityClaim, check_parity};
use egsolve_core::format::{Game, ReadOptions, read_path};
use egsolve_core::generate::families::Family;
use egsolve_core::generate::{ParityGame, random_parity};
use egsolve_core::solve::parity::graph::Graph;
use egsolve_core::solve::parity::pace::Pacer;
use egsolve_core::solve::parity::tangle::{Mode, Search};
use egsolve_core::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
use egsolve_core::solve::{Control, Interrupted, Solution, SolveError};
use oink_support::{oink_winners, shared_parity_games};

/// How the threads are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Threads {
    /// One thread.
    One,
    /// Two threads, every attractor or fixpoint round in parallel (even the smallest game),
    /// the portfolio's searches racing from the start.
    Forced,
}

/// The algorithms that use threads (the others run the same either way).
fn threaded(algorithm: ParityAlgorithm) -> bool {
    matches!(
        algorithm,
        ParityAlgorithm::Zielonka | ParityAlgorithm::FixpointIteration | ParityAlgorithm::Auto
    )
}

/// Every (algorithm, threads) pair worth running.
fn runs() -> Vec<(ParityAlgorithm, Threads)> {
    let mut runs = Vec::new();
    for algorithm in ParityAlgorithm::ALL {
        runs.push((algorithm, Threads::One));
        if threaded(algorithm) {
            runs.push((algorithm, Threads::Forced));
        }
    }
    runs
}

fn options(algorithm: ParityAlgorithm, threads: Threads) -> ParityOptions {
    match threads {
        Threads::One => ParityOptions::of(algorithm, 1),
        Threads::Forced => ParityOptions {
            algorithm,
            threads: 2,
            parallel_from_vertices: 0,
            parallel_round_from: 1,
            race_after: Duration::ZERO,
        },
    }
}

/// Solves `game`, within `limit` if given (`None` when it ran past it).
fn solve_within(
    game: &Game,
    algorithm: ParityAlgorithm,
    threads: Threads,
    limit: Option<Duration>,
) -> Option<Solution> {
    let parity = game.parity.as_ref().expect("a parity game");
    let control = Control::new().with_deadline(limit.map(|l| Instant::now() + l));
    match solve_with(
        &game.arena,
        &parity.compressed.priority,
        &options(algorithm, threads),
        &control,
    ) {
        Ok(solution) => {
            assert!(!solution.credits_computed);
            assert_eq!(solution.stats.backend, "parity");
            Some(solution)
        }
        Err(SolveError::Interrupted(Interrupted::TimedOut)) if limit.is_some() => None,
        Err(e) => panic!("{algorithm} ({threads:?}): {e}"),
    }
}

fn solve(game: &Game, algorithm: ParityAlgorithm, threads: Threads) -> Solution {
    solve_within(game, algorithm, threads, None).expect("no limit")
}

/// Every run on `game` against `expected` (or, without it, Zielonka's winners), certified.
fn check_every_algorithm(game: &Game, expected: Option<&[u8]>, what: &str) {
    let reference = solve(game, ParityAlgorithm::Zielonka, Threads::One);
    certify_parity(game, &reference, &format!("{what}: zielonka"));
    let expected = expected.map_or_else(|| winners(&reference), <[u8]>::to_vec);
    for (algorithm, threads) in runs() {
        let answer = solve(game, algorithm, threads);
        let what = format!("{what}: {algorithm} ({threads:?})");
        assert_eq!(winners(&answer), expected, "{what}");
        certify_parity(game, &answer, &what);
    }
}

/// Fixed seeds and a fresh one (`$EGSOLVE_SEED` replays one), printed so that a failure
/// names its seed.
fn fresh_seed() -> u64 {
    let fresh = std::env::var("EGSOLVE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("fresh seed {fresh} (replay: EGSOLVE_SEED={fresh})");
    fresh
}

/// A random game whose shape comes from `seed` too: up to `max_n` vertices, 2, about n/2
/// or about 2n priorities, out-degree up to 1–4.
fn random_shape(seed: u64, max_n: u32) -> ParityGame {
    let mix = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16;
    let n = 1 + (mix % u64::from(max_n)) as u32;
    let max_priority = match (mix >> 20) % 3 {
        0 => 2,
        1 => u64::from(n / 2 + 1),
        _ => 2 * u64::from(n),
    };
    let degree = 1 + ((mix >> 24) % 4) as u32;
    random_parity(n, max_priority, degree, seed)
}

#[test]
fn tiny_random_games_agree_with_the_oracle() {
    let fresh = fresh_seed();
    let seeds = (0..800u64).chain(fresh..fresh.wrapping_add(300));
    for seed in seeds {
        let generated = random_shape(seed, 8);
        let game = generated.to_game();
        let parity = game.parity.as_ref().unwrap();
        let Some(expected) =
            egsolve_core::oracle::parity_winners(&game.arena, &parity.priorities, 1 << 16)
        else {
            continue;
        };
        check_every_algorithm(
            &game,
            Some(&expected),
            &format!("seed {seed}: {generated:?}"),
        );
    }
}

#[test]
fn random_games_agree_with_zielonka() {
    let fresh = fresh_seed();
    let shapes = [(10_000u64, 300u64, 40u32), (20_000, 60, 400)];
    for (base, count, max_n) in shapes {
        let fixed = base..base + count;
        let fresh = fresh.wrapping_add(base)..fresh.wrapping_add(base + count / 3);
        for seed in fixed.chain(fresh) {
            let game = random_shape(seed, max_n).to_game();
            check_every_algorithm(
                &game,
                None,
                &format!("seed {seed} (up to {max_n} vertices)"),
            );
        }
    }
}

/// Games of 2,000–4,000 vertices with 5–300 priorities, parallel on two threads where the
/// algorithm has rounds: still the reference's winners.
#[test]
fn larger_random_games_agree_with_zielonka() {
    let fresh = fresh_seed();
    for seed in [31, 32, 33, fresh] {
        let n = 2_000 + (seed % 3) as u32 * 1_000;
        let max_priority = [5, 40, 300][(seed % 3) as usize];
        let game = random_parity(n, max_priority, 3, seed).to_game();
        let what = format!("seed {seed}, {n} vertices, priorities 0..={max_priority}");
        let reference = solve(&game, ParityAlgorithm::Zielonka, Threads::One);
        for (algorithm, threads) in runs() {
            // Fixpoint iteration is exponential in the priorities on random games (Oink's
            // too): it runs where there are few.
            if algorithm == ParityAlgorithm::FixpointIteration && max_priority > 5 {
                continue;
            }
            let answer = solve(&game, algorithm, threads);
            let what = format!("{what}: {algorithm} ({threads:?})");
            assert_eq!(winners(&answer), winners(&reference), "{what}");
            certify_parity(&game, &answer, &what);
        }
    }
}

/// Who wins, as Oink's solutions say for every size of its full set: `(|W0|, |W1|)`.
fn recorded_winners(family: Family, n: u32) -> (usize, usize) {
    let v = family.vertex_count(n) as usize;
    let even = n % 2 == 0;
    match family {
        Family::TwoCounters => (v / 2, v / 2),
        Family::CounterRr
        | Family::CounterCore
        | Family::CounterOrtl
        | Family::CounterQpt
        | Family::CounterRob
        | Family::CounterSymsi => (v, 0),
        Family::CounterDp if even => (v, 0),
        Family::CounterDp => (0, v),
        Family::CounterM if even => (0, v),
        Family::CounterM => (v, 0),
    }
}

/// The sizes each algorithm is run at on `family`: the polynomial ones far, the
/// exponential ones (on that family) only where they answer within the limit.
fn family_sizes(family: Family, algorithm: ParityAlgorithm) -> &'static [u32] {
    use ParityAlgorithm::*;
    match (family, algorithm) {
        (Family::TwoCounters, Auto | RecursiveTangleLearning) => &[1, 2, 3, 5, 8, 12],
        (Family::TwoCounters, _) => &[1, 2, 3, 4],
        // Quadratic in `n`: 30 is 2,943 vertices.
        (Family::CounterRob, Auto | TangleLearning | RecursiveTangleLearning) => &[1, 2, 5, 12, 30],
        (Family::CounterRob, _) => &[1, 2, 3, 5],
        (Family::CounterQpt, FixpointIteration) => &[1, 2, 5, 30, 200],
        (Family::CounterQpt, _) => &[1, 2, 5, 30, 200, 2_000],
        (Family::CounterOrtl, Auto | TangleLearning | RecursiveTangleLearning) => {
            &[1, 2, 5, 30, 200, 1_000]
        }
        (Family::CounterM | Family::CounterRr, Auto | TangleLearning | RecursiveTangleLearning) => {
            &[1, 2, 5, 30, 200, 2_000]
        }
        (_, Auto | RecursiveTangleLearning) => &[1, 2, 5, 30, 200, 2_000],
        (_, TangleLearning) => &[1, 2, 5, 30, 200],
        (_, _) => &[1, 2, 3, 5, 8],
    }
}

/// Every algorithm on every family at several sizes: the winners Oink recorded, certified.
/// The exponential ones run under a limit and must answer at least the sizes up to 3.
#[test]
fn every_algorithm_solves_every_family() {
    let limit = Duration::from_secs(5);
    for family in Family::ALL {
        for (algorithm, threads) in runs() {
            for &n in family_sizes(family, algorithm) {
                let game = family.generate(n).to_game();
                let what = format!("{family} n={n}: {algorithm} ({threads:?})");
                let Some(answer) = solve_within(&game, algorithm, threads, Some(limit)) else {
                    assert!(n > 3, "{what}: over {limit:?}");
                    eprintln!("{what}: over {limit:?}, larger sizes skipped");
                    break;
                };
                let w = winners(&answer);
                let w1 = w.iter().filter(|&&x| x == 1).count();
                assert_eq!((w.len() - w1, w1), recorded_winners(family, n), "{what}");
                certify_parity(&game, &answer, &what);
            }
        }
    }
}

/// Oink's own files (`tests/data/families/`, its ids and solutions), every algorithm.
#[test]
fn every_algorithm_matches_oinks_bundled_family_solutions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/families");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pg") {
            continue;
        }
        let game = read_path(&path, &ReadOptions::default()).unwrap();
        let expected = oink_winners(&path.with_extension("paritysol"), game.arena.vertex_count());
        check_every_algorithm(&game, Some(&expected), &path.display().to_string());
        checked += 1;
    }
    assert!(checked >= 27, "{checked} bundled games");
}

#[test]
fn every_algorithm_matches_oink_on_the_shared_parity_games() {
    for (name, game, expected) in shared_parity_games() {
        for (algorithm, threads) in runs() {
            let answer = solve(&game, algorithm, threads);
            let what = format!("{name}: {algorithm} ({threads:?})");
            assert_eq!(winners(&answer), expected, "{what}");
            certify_parity(&game, &answer, &what);
        }
    }
}

/// The SYNTCOMP games of Oink's `examples/` with Oink's solutions (`<stem>.sol` beside
/// `<stem>.pg`), where a folder of them is present (`EGSOLVE_SYNTCOMP_DIR`, or
/// `/work/scratch/games/syntcomp`): the portfolio and the tangle learners, certified.
#[test]
fn syntcomp_games_match_oink_where_present() {
    let dir = std::env::var_os("EGSOLVE_SYNTCOMP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/scratch/games/syntcomp"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipped: no SYNTCOMP folder at {}", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pg"))
        .collect();
    files.sort();
    for path in &files {
        let game = read_path(path, &ReadOptions::default()).unwrap();
        let expected = oink_winners(&path.with_extension("paritysol"), game.arena.vertex_count());
        for algorithm in [
            ParityAlgorithm::Auto,
            ParityAlgorithm::TangleLearning,
            ParityAlgorithm::RecursiveTangleLearning,
        ] {
            let answer = solve(&game, algorithm, Threads::One);
            let what = format!("{}: {algorithm}", path.display());
            assert_eq!(winners(&answer), expected, "{what}");
            certify_parity(&game, &answer, &what);
        }
    }
    println!("{} SYNTCOMP games", files.len());
}

/// Tangle searches cut after every few work units must still end with the right answer: a
/// cut decomposition keeps a consistent state and resumes; two searches taking turns on
/// one shared state (`Search::swap_shared`; the portfolio now gives each search its own)
/// too, whichever solves a dominion.
#[test]
fn tangle_searches_survive_cuts() {
    let control = Control::new();
    for seed in 40_000..40_150u64 {
        let game = random_shape(seed, 150).to_game();
        let priorities = &game.parity.as_ref().unwrap().compressed.priority;
        let graph = Graph::new(&game.arena, priorities);
        let reference = winners(&solve(&game, ParityAlgorithm::Zielonka, Threads::One));
        let check = |winner: &[u8], strategy: &[u32], what: &str| {
            assert_eq!(winner, reference, "seed {seed}: {what}");
            let claim = ParityClaim { winner, strategy };
            let parity = game.parity.as_ref().unwrap();
            let report = check_parity(&game.arena, &parity.priorities, claim).unwrap();
            assert!(
                report.passed(),
                "seed {seed}: {what}: {:?}",
                report.violations
            );
        };
        for mode in [Mode::Recursive, Mode::Flat] {
            let mut search = Search::new(graph);
            let slice = 1 + seed % 7;
            while !search.is_solved() {
                let _ = search.iterate(mode, &mut Pacer::work_slice(&control, slice));
            }
            check(
                &search.shared.winner,
                &search.shared.strategy,
                &format!("{mode:?}"),
            );
        }
        let mut flat = Search::new(graph);
        let mut recursive = Search::sharing(graph);
        let mut turn = 0u64;
        while !flat.is_solved() {
            let mut pacer = Pacer::work_slice(&control, 1 + (seed + turn) % 11);
            if turn % 3 == 0 {
                let _ = flat.iterate(Mode::Flat, &mut pacer);
            } else {
                Search::swap_shared(&mut flat, &mut recursive);
                let _ = recursive.iterate(Mode::Recursive, &mut pacer);
                Search::swap_shared(&mut flat, &mut recursive);
            }
            turn += 1;
        }
        check(&flat.shared.winner, &flat.shared.strategy, "shared");
    }
}

/// A search whose run must end (here: its race is lost before it starts) stops inside its
/// first step, a region's attractor over the whole game, at one of the checks
/// `CHECK_EVERY` units apart, not at the step's end; and is not run again.
#[test]
fn a_halted_tangle_search_stops_inside_a_step() {
    use egsolve_core::solve::parity::pace::{CHECK_EVERY, Stop};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    // One cycle of player 0's vertices, the top one of priority 2: the first region is the
    // top vertex's attractor, the whole cycle (a step of about 4 units a vertex).
    let n = 200_000u32;
    let game = ParityGame {
        owners: vec![egsolve_core::arena::Player::Zero; n as usize],
        priorities: (0..n).map(|v| u64::from(v == 0) * 2).collect(),
        successors: (0..n).map(|v| vec![(v + 1) % n]).collect(),
    }
    .to_game();
    let priorities = &game.parity.as_ref().unwrap().compressed.priority;
    let graph = Graph::new(&game.arena, priorities);
    let control = Control::new();
    for mode in [Mode::Flat, Mode::Recursive] {
        // The race is still on: the first step runs whole.
        let open = Arc::new(AtomicBool::new(false));
        let mut whole = Search::new(graph);
        whole
            .iterate(mode, &mut Pacer::racing(&control, &open, false))
            .unwrap();
        assert!(whole.is_solved(), "{mode:?}: player 0 wins the whole cycle");
        let step = whole.shared.stats.work;
        assert!(step >= 4 * u64::from(n), "{mode:?}: {step} units");
        // Lost before it starts: it stops a few checks into the attractor, after the
        // context's set-up (two units a vertex, counted before the attractor's first check).
        let lost = Arc::new(AtomicBool::new(true));
        let mut halted = Search::new(graph);
        let mut racing = Pacer::racing(&control, &lost, false);
        assert_eq!(halted.iterate(mode, &mut racing), Err(Stop::Overtaken));
        let spent = halted.shared.stats.work;
        assert!(
            spent <= 2 * u64::from(n) + 2 * CHECK_EVERY,
            "{mode:?}: {spent} units of {step}"
        );
        assert!(!halted.is_solved());
        let again = halted.iterate(mode, &mut Pacer::new(&control));
        assert!(
            matches!(again, Err(Stop::Broken(_))),
            "{mode:?}: a halted search is not run again: {again:?}"
        );
    }
}

/// One-vertex games, and a vertex with parallel edges (counted per edge on both sides).
#[test]
fn degenerate_games() {
    for (one, priority) in [(false, 0u64), (false, 1), (true, 0), (true, 7)] {
        let owner = if one {
            egsolve_core::arena::Player::One
        } else {
            egsolve_core::arena::Player::Zero
        };
        let game = ParityGame {
            owners: vec![owner],
            priorities: vec![priority],
            successors: vec![vec![0, 0]],
        }
        .to_game();
        check_every_algorithm(&game, Some(&[(priority % 2) as u8]), "one vertex");
    }
    use egsolve_core::arena::Player::{One, Zero};
    let parallel = ParityGame {
        owners: vec![One, Zero, Zero],
        priorities: vec![2, 1, 4],
        successors: vec![vec![1, 1, 2], vec![0, 0], vec![2, 0, 2]],
    }
    .to_game();
    check_every_algorithm(&parallel, None, "parallel edges");
}

/// A cancelled solve and one past its deadline stop with the matching error; a solve
/// publishes progress.
#[test]
fn every_algorithm_stops_when_cancelled_or_out_of_time() {
    let game = Family::TwoCounters.generate(6).to_game();
    let priorities = &game.parity.as_ref().unwrap().compressed.priority;
    for algorithm in ParityAlgorithm::ALL {
        let cancelled = Control::new();
        cancelled.cancel();
        let late = Control::new().with_deadline(Some(Instant::now()));
        for (control, expected) in [
            (cancelled, Interrupted::Cancelled),
            (late, Interrupted::TimedOut),
        ] {
            let options = ParityOptions::of(algorithm, 1);
            let result = solve_with(&game.arena, priorities, &options, &control);
            assert_eq!(
                result.err(),
                Some(SolveError::Interrupted(expected)),
                "{algorithm}"
            );
        }
        let control = Control::new();
        let options = ParityOptions::of(algorithm, 1);
        solve_with(&game.arena, priorities, &options, &control).unwrap();
        assert!(control.progress().snapshot().round > 0, "{algorithm}");
    }
}

/// The portfolio's race on two threads stops when cancelled or out of time while both
/// searches run (two-counters: the flat search is exponential there, so neither has
/// answered after 30 ms), well before either would answer.
#[test]
fn a_racing_portfolio_stops_when_cancelled_or_out_of_time() {
    let game = Family::TwoCounters.generate(64).to_game();
    let priorities = &game.parity.as_ref().unwrap().compressed.priority;
    let options = ParityOptions {
        race_after: Duration::ZERO,
        ..ParityOptions::of(ParityAlgorithm::Auto, 2)
    };
    let cancelled = Control::new();
    let started = Instant::now();
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(30));
            cancelled.cancel();
        });
        solve_with(&game.arena, priorities, &options, &cancelled)
    });
    assert_eq!(
        result.err(),
        Some(SolveError::Interrupted(Interrupted::Cancelled))
    );
    // Recursive tangle learning alone takes over 100 ms on this game, flat far longer.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let late = Control::new().with_deadline(Some(Instant::now() + Duration::from_millis(30)));
    let result = solve_with(&game.arena, priorities, &options, &late);
    assert_eq!(
        result.err(),
        Some(SolveError::Interrupted(Interrupted::TimedOut))
    );
}

/// In a race, the side that answers stops the other: on `counter-ortl` (recursive tangle
/// learning quadratic) the flat search answers and the recursive one is stopped; on
/// two-counters (flat tangle learning exponential) the other way round. What the portfolio
/// reports says so.
#[test]
fn the_race_is_won_by_the_faster_search_and_the_loser_stops() {
    use egsolve_core::solve::parity::{Rounds, portfolio};
    let cases = [
        (Family::CounterOrtl, 3_000, "auto(tangle-learning)"),
        (Family::TwoCounters, 12, "auto(recursive-tangle-learning)"),
    ];
    for (family, n, expected) in cases {
        let game = family.generate(n).to_game();
        let priorities = &game.parity.as_ref().unwrap().compressed.priority;
        let graph = Graph::new(&game.arena, priorities);
        let control = Control::new();
        for race_after in [None, Some(Duration::ZERO)] {
            let mut pacer = Pacer::new(&control);
            let (solved, spent) =
                portfolio::solve(graph, Rounds::SEQUENTIAL, &mut pacer, race_after).unwrap();
            let what = format!("{family} n={n}, race after {race_after:?}");
            assert_eq!(spent.raced, race_after.is_some(), "{what}");
            assert_eq!(spent.answered_by(), expected, "{what}: {spent:?}");
            let w1 = solved.winner.iter().filter(|&&w| w == 1).count();
            assert_eq!(
                (solved.winner.len() - w1, w1),
                recorded_winners(family, n),
                "{what}"
            );
            let claim = ParityClaim {
                winner: &solved.winner,
                strategy: &solved.strategy,
            };
            let parity = game.parity.as_ref().unwrap();
            let report = check_parity(&game.arena, &parity.priorities, claim).unwrap();
            assert!(report.passed(), "{what}: {:?}", report.violations);
        }
    }
}

/// The answer names the algorithm that answered, through `solve_game` (what the CLI and
/// the service run) and in the JSON summary; summaries written before the field existed
/// still read.
#[test]
fn the_summary_names_the_algorithm() {
    use egsolve_core::output::Summary;
    use egsolve_core::solve::cpu::CpuAlgorithm;
    use egsolve_core::solve::{Backend, SolveOptions, solve_game};
    let game = random_parity(200, 6, 3, 7).to_game();
    let view = game.parity.as_ref().map(|p| p.view());
    let answer = |options: SolveOptions| {
        solve_game(&game.arena, view, &options, &Control::new()).expect("solves")
    };
    for algorithm in ParityAlgorithm::ALL {
        let solution = answer(SolveOptions {
            backend: Backend::Parity,
            parity_algorithm: algorithm,
            ..SolveOptions::default()
        });
        let named = &solution.stats.algorithm;
        if algorithm == ParityAlgorithm::Auto {
            assert!(
                [
                    "auto(tangle-learning)",
                    "auto(recursive-tangle-learning)",
                    "auto(tangle-learning+recursive-tangle-learning)"
                ]
                .contains(&named.as_str()),
                "{named}"
            );
        } else {
            assert_eq!(named, algorithm.name());
        }
        let summary = Summary::new(&game.arena, &solution, 0);
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["algorithm"], named.as_str());
    }
    // The default for a parity game is the portfolio.
    assert!(
        answer(SolveOptions::default())
            .stats
            .algorithm
            .starts_with("auto(")
    );
    // Energy backends on the reduction.
    let energy = |backend: Backend, cpu: CpuAlgorithm| {
        let mut options = SolveOptions {
            backend,
            credits: true,
            ..SolveOptions::default()
        };
        options.cpu.algorithm = cpu;
        answer(options).stats.algorithm
    };
    assert_eq!(
        energy(Backend::Auto, CpuAlgorithm::Frontier),
        "accelerated-lifting"
    );
    assert_eq!(
        energy(Backend::Reference, CpuAlgorithm::Frontier),
        "worklist"
    );
    assert_eq!(
        energy(Backend::Cpu, CpuAlgorithm::Frontier),
        "frontier-lifting"
    );
    assert_eq!(energy(Backend::Cpu, CpuAlgorithm::Sweep), "sweep-lifting");
    // A summary stored before the field existed.
    let solution = answer(SolveOptions::default());
    let mut old = serde_json::to_value(Summary::new(&game.arena, &solution, 0)).unwrap();
    old.as_object_mut().unwrap().remove("algorithm");
    let read: Summary = serde_json::from_value(old).unwrap();
    assert_eq!(read.algorithm, "");
    assert_eq!(
        "fixpoint-iteration".parse::<ParityAlgorithm>(),
        Ok(ParityAlgorithm::FixpointIteration)
    );
    assert!(
        "fpi"
            .parse::<ParityAlgorithm>()
            .unwrap_err()
            .contains("zielonka")
    );
}
