//! `gpu_check race [--runs R] [--threads T,U] FILE...`: where a raced parity job's time
//! goes, in one warm process (the service's case). For each parity game, each run solves
//! it three ways: the GPU route alone (the race's GPU side: the energy reduction on the
//! device, strategies on the race's host pool), the CPU parity portfolio alone on `T` threads, and
//! the race as the service runs it (`solve_game_detached`, the CPU side on `T` threads).
//! Each line prints the wall time, which side answered, and how long the loser took to
//! stop after the answer (the next run starts only then, so losers never overlap it).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egsolve_core::solve::{self, Backend, Control, GpuOptions, Solution, SolveOptions, race};

/// Runs every variant `runs` times on each of `files`, the CPU sides on each of `threads`.
pub fn race(files: &[PathBuf], runs: usize, threads: &[usize]) {
    println!(
        "gpu host threads: {} alone, {} beside a race",
        egsolve_gpu::host_pool().count(),
        egsolve_gpu::race_host_pool().count()
    );
    for path in files {
        let Some((name, game)) = super::warm::read_game(path) else {
            continue;
        };
        if game.parity.is_none() {
            println!("{name}: not a parity game");
            continue;
        }
        let game = Arc::new(game);
        // The first GPU solve compiles or loads the kernels this game's widths need.
        let _ = gpu_alone(&game.arena);
        for run in 1..=runs {
            let (seconds, solution) = gpu_alone(&game.arena);
            line(&name, "gpu", run, seconds, solution, Duration::ZERO);
            for &t in threads {
                let (seconds, solution) = cpu_alone(&game, t);
                line(
                    &name,
                    &format!("cpu t{t}"),
                    run,
                    seconds,
                    solution,
                    Duration::ZERO,
                );
                let (seconds, solution, loser) = raced(&game, t);
                line(&name, &format!("race t{t}"), run, seconds, solution, loser);
            }
        }
    }
}

fn gpu_alone(arena: &egsolve_core::arena::Arena) -> (f64, Result<Solution, solve::SolveError>) {
    let started = Instant::now();
    // As the race asks it (winners only, host passes on the race's pool).
    let options = GpuOptions {
        winners_only: true,
        beside_race: true,
        ..GpuOptions::default()
    };
    let solution = egsolve_gpu::SOLVER.solve(arena, &options, &Control::new());
    (started.elapsed().as_secs_f64(), solution)
}

fn cpu_alone(
    game: &egsolve_core::format::Game,
    threads: usize,
) -> (f64, Result<Solution, solve::SolveError>) {
    let mut options = SolveOptions {
        backend: Backend::Parity,
        ..SolveOptions::default()
    };
    options.cpu.threads = threads;
    let view = game.parity.as_ref().map(|p| p.view());
    let started = Instant::now();
    let solution = solve::solve_game(&game.arena, view, &options, &Control::new());
    (started.elapsed().as_secs_f64(), solution)
}

/// The race as the service runs it; also how long the loser ran on after the answer.
fn raced(
    game: &Arc<egsolve_core::format::Game>,
    threads: usize,
) -> (f64, Result<Solution, solve::SolveError>, Duration) {
    let mut options = SolveOptions {
        device: Some(egsolve_gpu::SOLVER),
        ..SolveOptions::default()
    };
    options.cpu.threads = threads;
    let view = game
        .parity
        .as_ref()
        .map(|p| p.view())
        .expect("a parity game");
    let asked = Instant::now();
    let races = race::races(&game.arena, view, &options).is_some();
    println!(
        "  races(): {races} in {:.3} ms",
        asked.elapsed().as_secs_f64() * 1e3
    );
    let started = Instant::now();
    let solution = solve::solve_game_detached(game, &options, &Control::new());
    let seconds = started.elapsed().as_secs_f64();
    let answered = Instant::now();
    while race::detached_loser_running() {
        std::thread::sleep(Duration::from_micros(200));
    }
    (seconds, solution, answered.elapsed())
}

fn line(
    name: &str,
    variant: &str,
    run: usize,
    seconds: f64,
    solution: Result<Solution, solve::SolveError>,
    loser: Duration,
) {
    match solution {
        Ok(s) => {
            let p = &s.stats.phases;
            println!(
                "{name} {variant} run {run}: wall {:.2} ms by {} | solve {:.2} strategies {:.2} \
                 upload {:.2} lifting {:.2} evaluation {:.2} download {:.2} strategy0 {:.2} \
                 strategy1 {:.2} | loser stopped {:.1} ms later",
                seconds * 1e3,
                s.stats.backend,
                s.stats.solve_seconds * 1e3,
                s.stats.strategy_seconds * 1e3,
                p.gpu_upload * 1e3,
                p.lifting * 1e3,
                p.evaluation * 1e3,
                p.gpu_download * 1e3,
                p.strategy0 * 1e3,
                p.strategy1 * 1e3,
                loser.as_secs_f64() * 1e3,
            );
        }
        Err(e) => println!("{name} {variant} run {run}: FAIL: {e}"),
    }
}
