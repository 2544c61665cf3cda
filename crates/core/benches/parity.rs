//! Benchmark: parity games of many priorities (issue 17).
//!
//! `cargo bench -p egsolve-core --bench parity [-- --large]` prints two markdown tables.
//!
//! 1. **The native parity solver** on random games (`egsolve gen parity`: 100 priorities,
//!    out-degree 1–3) of 10^5 vertices (and 10^6 with `--large`), one thread and all cores,
//!    median of 3 wall-clock runs. Baseline, measured in the same run: one pass over every
//!    edge of the game (what a single attractor costs at least); the ratio (one-thread wall
//!    time over it) says how many such passes the solve is worth. The one-thread solve's CPU
//!    time (mean of the 3 runs) is shown too, since wall time on a loaded machine overstates it. Goals: 10^5 vertices ≤ 0.2 s and 10^6 ≤ 2 s on one
//!    core. The certificate's time (`check`) is shown too.
//! 2. **Compression on games the reduction solves**: every shared parity game, its read
//!    (parse + compression + reduction) and `auto` solve, and the priority compression
//!    alone, as a share of read + solve (the issue allows 5 %). The native solver's time on
//!    the same game is shown beside it.
//!
//! Wall-clock figures on a shared machine: note the load average printed first.

use egsolve_test_support as common;
use egsolve_test_support::bench;

use std::time::Instant;

use egsolve_core::arena::{Arena, VertexId};
use egsolve_core::check::{ParityClaim, check_parity};
use egsolve_core::format::{ReadOptions, read_path};
use egsolve_core::generate::random_parity;
use egsolve_core::solve::parity::{ParityOptions, solve_with};
use egsolve_core::solve::{Backend, Control, SolveOptions, solve_game};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Median seconds of 3 runs of `f`, and its last result.
fn time<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let start = Instant::now();
        last = Some(f());
        times.push(start.elapsed().as_secs_f64());
    }
    (median(times), last.expect("ran"))
}

/// CPU seconds this thread has run (Linux; 0 elsewhere): on a loaded machine the wall clock
/// overstates a one-thread solve, this does not.
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// The baseline: one pass over every edge (successor ids summed), as an attractor makes.
fn edge_pass(arena: &Arena) -> u64 {
    let mut sum = 0u64;
    for v in 0..arena.vertex_count() as VertexId {
        for (u, _) in arena.successors(v) {
            sum = sum.wrapping_add(u64::from(u));
        }
    }
    std::hint::black_box(sum)
}

fn winners(solution: &egsolve_core::solve::Solution) -> Vec<u8> {
    (0..solution.credit.len() as VertexId)
        .map(|v| solution.winner(v).index())
        .collect()
}

fn random_games(sizes: &[u32]) {
    println!(
        "| game | vertices | edges | distinct priorities | edge pass s | 1 thread s | 1 thread CPU s | ratio | all cores s | frames | check s |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &n in sizes {
        for seed in [1u64, 2, 3] {
            let game = random_parity(n, 99, 3, seed).to_game();
            let parity = game.parity.as_ref().expect("a parity game");
            let priorities = &parity.compressed.priority;
            let (pass, _) = time(|| edge_pass(&game.arena));
            let solve = |threads| {
                let options = ParityOptions::with_threads(threads);
                solve_with(&game.arena, priorities, &options, &Control::new()).expect("solves")
            };
            let cpu_start = thread_cpu_seconds();
            let (one, sequential) = time(|| solve(1));
            let one_cpu = (thread_cpu_seconds() - cpu_start) / 3.0;
            let (all, parallel) = time(|| solve(0));
            assert_eq!(
                winners(&sequential),
                winners(&parallel),
                "thread counts agree"
            );
            let (check, report) = time(|| {
                let claim = ParityClaim {
                    winner: &winners(&sequential),
                    strategy: &sequential.strategy,
                };
                check_parity(&game.arena, &parity.priorities, claim).expect("sizes match")
            });
            assert!(report.passed(), "{:?}", report.violations);
            println!(
                "| random seed {seed} | {n} | {} | {} | {pass:.4} | {one:.4} | {one_cpu:.4} | {:.1} | {all:.4} | {} | {check:.4} |",
                game.arena.edge_count(),
                parity.compressed.input_distinct,
                one / pass,
                sequential.stats.rounds,
            );
        }
    }
}

fn shared_games() {
    let mut files = common::shared_files("parity", ".gm.gz");
    files.extend(common::shared_files("parity", ".gm.zst"));
    println!(
        "| game | vertices | priorities → compressed | read s | auto solve s | compression s | share of read + solve | native s |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for path in files {
        let (read, game) = time(|| read_path(&path, &ReadOptions::default()).expect("reads"));
        let parity = game.parity.as_ref().expect("a parity game");
        let (compression, _) = time(|| egsolve_core::parity::compress(&parity.priorities));
        let options = SolveOptions {
            backend: Backend::Auto,
            ..SolveOptions::default()
        };
        let (solve, reduced) = time(|| {
            solve_game(&game.arena, Some(parity.view()), &options, &Control::new()).expect("solves")
        });
        let (native, answer) = time(|| {
            let options = ParityOptions::with_threads(1);
            solve_with(
                &game.arena,
                &parity.compressed.priority,
                &options,
                &Control::new(),
            )
            .expect("solves")
        });
        assert_eq!(winners(&reduced), winners(&answer), "{}", path.display());
        let name = path.file_name().expect("a file").to_string_lossy();
        println!(
            "| {name} | {} | {} → {} | {read:.4} | {solve:.4} | {compression:.5} | {:.2} % | {native:.4} |",
            game.arena.vertex_count(),
            parity.compressed.input_distinct,
            parity.compressed.distinct,
            100.0 * compression / (read + solve),
        );
    }
}

fn main() {
    let large = std::env::args().any(|a| a == "--large");
    println!(
        "cores: {}, load average: {}",
        std::thread::available_parallelism().map_or(1, usize::from),
        bench::load_average()
    );
    println!();
    random_games(if large {
        &[100_000, 1_000_000]
    } else {
        &[100_000]
    });
    println!();
    shared_games();
}
