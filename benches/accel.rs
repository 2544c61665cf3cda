//! Benchmark of the accelerated solver (`auto`) against plain lifting (the reference
//! worklist), one core: every shared game, the climbing families, and a family where no
//! jump applies. Prints time, lifts and evaluations, and the ratio, measured in this run.
//!
//! `cargo bench --bench accel [-- FILTER] [--reference-limit SECONDS]`: the reference is run
//! with that deadline (default 20 s); where it does not finish, its time is shown as `>`.

#[path = "../tests/accel_support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use egsolve::arena::Arena;
use egsolve::solve::accel::{self, WorklistEngine, families};
use egsolve::solve::{Control, reference};

struct Row {
    name: String,
    n: usize,
    m: usize,
}

fn measure(row: Row, arena: &Arena, reference_limit: f64) {
    let start = Instant::now();
    let (solution, stats) =
        accel::solve_with(arena, &mut WorklistEngine, &Control::new()).expect("accel solves");
    let accel_total = start.elapsed().as_secs_f64();
    let control = Control::new().with_deadline(Some(
        Instant::now() + Duration::from_secs_f64(reference_limit),
    ));
    let start = Instant::now();
    let reference = reference::solve(arena, &control);
    let reference_seconds = start.elapsed().as_secs_f64();
    let (reference_text, ratio, agree) = match &reference {
        Ok(r) => (
            format!("{:>9.3}s {:>12}", r.stats.solve_seconds, r.stats.lifts),
            format!(
                "{:>8.1}x",
                r.stats.solve_seconds / solution.stats.solve_seconds.max(1e-9)
            ),
            if r.credit == solution.credit {
                "same"
            } else {
                "DIFFERENT"
            },
        ),
        Err(_) => (
            format!(
                ">{:>8.1}s {:>12}",
                reference_seconds,
                format!(">{}", control.progress().snapshot().lifts)
            ),
            format!(
                ">{:>7.0}x",
                reference_seconds / solution.stats.solve_seconds.max(1e-9)
            ),
            "-",
        ),
    };
    println!(
        "{:<58} {:>7} {:>8} | ref {} | auto {:>8.3}s (+strat {:>6.3}s) {:>10} lifts {:>4} evals {:>7.3}s eval | {} {} p1:{}",
        row.name,
        row.n,
        row.m,
        reference_text,
        solution.stats.solve_seconds,
        accel_total - solution.stats.solve_seconds,
        stats.lifts,
        stats.evaluations,
        stats.evaluation_seconds,
        ratio,
        agree,
        if stats.strategy_from_evaluations {
            "eval"
        } else {
            "dual"
        },
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut reference_limit = 20.0;
    let mut filter = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--reference-limit" {
            reference_limit = args[i + 1].parse().expect("seconds");
            i += 2;
        } else {
            filter = Some(args[i].clone());
            i += 1;
        }
    }
    let wanted = |name: &str| filter.as_ref().is_none_or(|f| name.contains(f.as_str()));
    println!(
        "one core; reference = plain worklist (Algorithm 1), auto = accelerated + worklist engine"
    );
    for (name, path, answer) in support::shared_games() {
        if !wanted(&name) {
            continue;
        }
        let (arena, _) = support::load(&path, &answer);
        let row = Row {
            name,
            n: arena.vertex_count(),
            m: arena.edge_count(),
        };
        measure(row, &arena, reference_limit);
    }
    let mut families: Vec<(String, Arena)> = vec![
        (
            "family player1_cycle(8, 1e6)".into(),
            families::player1_cycle(8, 1_000_000),
        ),
        (
            "family player1_cycle(64, 1e5)".into(),
            families::player1_cycle(64, 100_000),
        ),
        (
            "family circle_then_escape(1000, 1e5)".into(),
            families::circle_then_escape(1000, 100_000),
        ),
        (
            "family circle_then_escape(10, 1e12)".into(),
            families::circle_then_escape(10, 1_000_000_000_000),
        ),
    ];
    for (p, seed) in [(4u32, 1u64), (6, 2), (8, 3)] {
        if let Some(a) = families::random_parity(2000, 4, p, seed) {
            families.push((format!("family random_parity(2000, 4, {p}, {seed})"), a));
        }
    }
    // Small random weights: lifting climbs (W1 vertices rise one small step at a time).
    families.push((
        "family random_weights(200000, -3..=4, seed 7)".into(),
        small_weights(200_000, 7, -3, 4),
    ));
    // Mostly positive weights: lifting converges after a few passes, no jump applies.
    for seed in [8u64, 9] {
        families.push((
            format!("nojump random_weights(400000, -2..=8, seed {seed})"),
            small_weights(400_000, seed, -2, 8),
        ));
    }
    for (name, arena) in families {
        if !wanted(&name) {
            continue;
        }
        let row = Row {
            name,
            n: arena.vertex_count(),
            m: arena.edge_count(),
        };
        measure(row, &arena, reference_limit);
    }
}

fn small_weights(n: u32, seed: u64, low: i64, high: i64) -> Arena {
    use egsolve::arena::{EdgeList, Player};
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let owners = (0..n)
        .map(|_| {
            if rng.random_bool(0.5) {
                Player::One
            } else {
                Player::Zero
            }
        })
        .collect();
    let mut edges = EdgeList::default();
    for v in 0..n {
        for _ in 0..rng.random_range(1..=4) {
            edges.push(v, rng.random_range(0..n), rng.random_range(low..=high));
        }
    }
    Arena::from_edges(owners, edges, None).expect("valid arena")
}
