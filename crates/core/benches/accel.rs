//! Benchmark of the accelerated solver (`auto`) against plain lifting (the reference
//! worklist), one core: every shared game, the climbing families, and games where no jump
//! applies. Prints time, lifts and evaluations, and the ratio, all measured in this run.
//!
//! `cargo bench -p egsolve-core --bench accel [-- FILTER] [--reference-limit SECONDS] [--repeat K]`: the
//! reference runs with that deadline (default 20 s; where it does not finish its time and
//! lifts are shown as lower bounds `>`), K times if it takes under 1 s; `auto` runs K times
//! (default 3); best times shown. Times are credits only (`solve_seconds`); `+p1` is the extra time for both
//! strategies (player 1's from the evaluations, or the dual game where marked `dual`).

use egsolve_test_support::record;
#[path = "../tests/accel_support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use egsolve_core::arena::{Arena, EdgeList, Player};
use egsolve_core::generate::climbing as families;
use egsolve_core::solve::accel::{self, AccelStats};
use egsolve_core::solve::engine::WorklistEngine;
use egsolve_core::solve::strategy::Player1Source;
use egsolve_core::solve::{Control, Solution, reference};
use rand::{Rng, SeedableRng};

struct Options {
    reference_limit: f64,
    repeat: usize,
    filter: Option<String>,
}

/// Best of `repeat` accelerated solves (first budget `first_budget`, default if `None`).
fn best_auto(
    arena: &Arena,
    repeat: usize,
    first_budget: Option<u64>,
) -> (Solution, AccelStats, f64) {
    let mut best: Option<(Solution, AccelStats, f64)> = None;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let (solution, stats) = match first_budget {
            Some(b) => accel::solve_with_budget(arena, &mut WorklistEngine, b, &Control::new()),
            None => accel::solve_with(arena, &mut WorklistEngine, &Control::new()),
        }
        .expect("accel solves");
        let total = start.elapsed().as_secs_f64();
        if best
            .as_ref()
            .is_none_or(|b| solution.stats.solve_seconds < b.0.stats.solve_seconds)
        {
            best = Some((solution, stats, total));
        }
    }
    best.expect("at least one run")
}

fn measure(name: &str, arena: &Arena, options: &Options, first_budget: Option<u64>) {
    let (solution, stats, total) = best_auto(arena, options.repeat, first_budget);
    let auto_seconds = solution.stats.solve_seconds;
    let deadline = Instant::now() + Duration::from_secs_f64(options.reference_limit);
    let control = Control::new().with_deadline(Some(deadline));
    let start = Instant::now();
    let mut reference = reference::solve(arena, &control);
    let reference_seconds = start.elapsed().as_secs_f64();
    // Short reference runs are repeated too (best of K), for a fair ratio.
    if reference_seconds < 1.0 {
        for _ in 1..options.repeat {
            let again = reference::solve(arena, &Control::new()).expect("reference solves");
            if let Ok(best) = &reference {
                if again.stats.solve_seconds < best.stats.solve_seconds {
                    reference = Ok(again);
                }
            }
        }
    }
    let (reference_text, ratio, agree) = match &reference {
        Ok(r) => (
            format!("{:>9.3}s {:>11}", r.stats.solve_seconds, r.stats.lifts),
            format!("{:>9.1}x", r.stats.solve_seconds / auto_seconds.max(1e-9)),
            if r.credit == solution.credit {
                "same"
            } else {
                "DIFFERENT"
            },
        ),
        Err(_) => (
            format!(
                ">{:>8.1}s {:>11}",
                reference_seconds,
                format!(">{}", control.progress().snapshot().lifts)
            ),
            format!(">{:>8.0}x", reference_seconds / auto_seconds.max(1e-9)),
            "-",
        ),
    };
    let (reference_s, reference_lifts, reference_finished) = match &reference {
        Ok(r) => (r.stats.solve_seconds, r.stats.lifts, true),
        Err(_) => (
            reference_seconds,
            control.progress().snapshot().lifts,
            false,
        ),
    };
    record::record(
        "accel",
        serde_json::json!({
            "game": name,
            "vertices": arena.vertex_count(),
            "edges": arena.edge_count(),
            "auto_s": auto_seconds,
            "auto_strategies_s": total - auto_seconds,
            "auto_lifts": stats.lifts,
            "evaluations": stats.evaluations,
            "evaluation_s": stats.evaluation_seconds,
            "reference_s": reference_s,
            "reference_lifts": reference_lifts,
            "reference_finished": reference_finished,
            "reference_limit_s": options.reference_limit,
            "agree": agree,
        }),
    );
    println!(
        "{name:<62} {:>7} {:>8} | ref {reference_text} | auto {auto_seconds:>8.4}s +p1 {:>6.3}s {:>9} lifts {:>3} evals ({:>7.4}s) | {ratio} {agree} {}",
        arena.vertex_count(),
        arena.edge_count(),
        total - auto_seconds,
        stats.lifts,
        stats.evaluations,
        stats.evaluation_seconds,
        match stats.player1 {
            Player1Source::Empty => "p1:none",
            Player1Source::Lifted => "p1:lifted",
            Player1Source::Recorded => "p1:rec",
            Player1Source::RecordedAndLayers => "p1:rec+layers",
            Player1Source::Layers => "p1:layers",
            Player1Source::LayersRecordRejected => "p1:layers (record rejected)",
            Player1Source::DualGame => "p1:dual",
        },
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut options = Options {
        reference_limit: 20.0,
        repeat: 3,
        filter: None,
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--reference-limit" => {
                options.reference_limit = args[i + 1].parse().expect("seconds");
                i += 2;
            }
            "--repeat" => {
                options.repeat = args[i + 1].parse().expect("count");
                i += 2;
            }
            _ => {
                options.filter = Some(args[i].clone());
                i += 1;
            }
        }
    }
    let wanted = |name: &str| {
        options
            .filter
            .as_ref()
            .is_none_or(|f| name.contains(f.as_str()))
    };
    println!(
        "one core; ref = plain worklist (Algorithm 1); auto = lifting (worklist engine) + strategy evaluations; \
         columns: vertices edges | ref time lifts | auto time, strategies, lifts, evaluations (their time) | ref/auto"
    );
    for (name, path, answer) in support::shared_games() {
        if wanted(&name) {
            let (arena, _) = support::load(&path, &answer);
            measure(&name, &arena, &options, None);
        }
    }
    type Make = Box<dyn Fn() -> Arena>;
    let mut games: Vec<(String, Make, Option<u64>)> = vec![
        (
            "climb player1_cycle(8, 1e6)".into(),
            Box::new(|| families::player1_cycle(8, 1_000_000)),
            None,
        ),
        (
            "climb player1_cycle(64, 1e5)".into(),
            Box::new(|| families::player1_cycle(64, 100_000)),
            None,
        ),
        (
            "climb circle_then_escape(1000, 1e5)".into(),
            Box::new(|| families::circle_then_escape(1000, 100_000)),
            None,
        ),
        (
            "climb circle_then_escape(10, 1e12)".into(),
            Box::new(|| families::circle_then_escape(10, 1_000_000_000_000)),
            None,
        ),
        (
            "climb random_weights(200000, -3..=4)".into(),
            Box::new(|| random_weights(200_000, 7, -3, 4)),
            None,
        ),
    ];
    for (vertices, priorities, seed) in [
        (2000u32, 4u32, 1u64),
        (2000, 6, 2),
        (2000, 8, 3),
        (1000, 11, 4),
    ] {
        games.push((
            format!("climb random_parity({vertices}, 4, {priorities}, {seed})"),
            Box::new(move || families::random_parity(vertices, 4, priorities, seed).expect("fits")),
            None,
        ));
    }
    // No jump applies: mostly positive weights, lifting converges in a few passes. With
    // the default first budget (n lifts) no evaluation starts; with a first budget of n/64
    // evaluations start early and find little, which shows what the budget policy costs.
    for seed in [8u64, 9] {
        games.push((
            format!("nojump random_weights(400000, -2..=8, seed {seed})"),
            Box::new(move || random_weights(400_000, seed, -2, 8)),
            None,
        ));
        games.push((
            format!("nojump random_weights(400000, -2..=8, seed {seed}) first budget n/64"),
            Box::new(move || random_weights(400_000, seed, -2, 8)),
            Some(400_000 / 64),
        ));
    }
    for (name, make, first_budget) in games {
        if wanted(&name) {
            measure(&name, &make(), &options, first_budget);
        }
    }
}

/// Random game: owners fair coins, out-degree 1..=4, weights uniform in `low..=high`.
fn random_weights(n: u32, seed: u64, low: i64, high: i64) -> Arena {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let owners = (0..n)
        .map(|_| Player::one_if(rng.random_bool(0.5)))
        .collect();
    let mut edges = EdgeList::default();
    for v in 0..n {
        for _ in 0..rng.random_range(1..=4) {
            edges.push(v, rng.random_range(0..n), rng.random_range(low..=high));
        }
    }
    Arena::from_edges(owners, edges, None).expect("valid arena")
}
