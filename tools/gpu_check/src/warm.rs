//! `gpu_check warm [--runs R] FILE...`: the service's case. Each game is read once, then
//! solved `R` times (default 4) by `--backend gpu` and by `auto` on every core, all in
//! this one process, so only the first gpu run pays for the CUDA context and the kernels.
//! Prints every run's solve seconds, strategy seconds and the GPU's phases (upload,
//! lifting, download, player 0's moves), and whether the gpu run's credits and player 0's
//! moves equal `auto`'s (player 1's may differ: each is certified by `egsolve check`), then
//! the evaluations' parts (graph, components, cycle test, attractor, Bellman–Ford) and the
//! page faults the run took (pages the kernel mapped in fresh).

use std::path::PathBuf;
use std::time::Instant;

use egsolve_core::format::{ReadOptions, read_path};
use egsolve_core::solve::{Backend, Control, Solution, SolveOptions, solve_with};

/// Solves each of `files` `runs` times per backend and prints one line per run; the gpu
/// backend's lifting phases are `lift_percent` of an evaluation's time where given (its
/// default otherwise). With `release`, the allocator hands freed memory back to the kernel
/// before each run, as the service does when it has no job running.
pub fn warm(files: &[PathBuf], runs: usize, lift_percent: Option<u32>, release: bool) {
    for path in files {
        let Some((name, game)) = read_game(path) else {
            continue;
        };
        let arena = &game.arena;
        let mut reference: Option<Solution> = None;
        for run in 1..=runs {
            for backend in [Backend::Auto, Backend::Gpu] {
                if release {
                    egsolve_alloc::release_free_memory();
                }
                let faults_before = minor_faults();
                let started = Instant::now();
                let mut options = SolveOptions {
                    backend,
                    device: Some(egsolve_gpu::SOLVER),
                    ..SolveOptions::default()
                };
                options.gpu.lift_percent = lift_percent;
                let solution = match solve_with(arena, &options, &Control::new()) {
                    Ok(solution) => solution,
                    Err(e) => {
                        println!("{name} {backend:?} run {run}: FAIL: {e}");
                        continue;
                    }
                };
                let wall = started.elapsed().as_secs_f64();
                let faults = minor_faults().saturating_sub(faults_before);
                let s = &solution.stats;
                let p = &s.phases;
                let verdict = match &reference {
                    None => "reference".to_string(),
                    Some(auto) => {
                        let credits = auto.credit == solution.credit;
                        let moves0 = (0..arena.vertex_count()).all(|v| {
                            auto.credit[v] == egsolve_core::solve::TOP
                                || auto.strategy[v] == solution.strategy[v]
                        });
                        format!(
                            "credits {} p0 moves {}",
                            if credits { "same" } else { "DIFFER" },
                            if moves0 { "same" } else { "DIFFER" }
                        )
                    }
                };
                println!(
                    "{name} {backend:?} run {run}: wall {wall:.4} solve {:.4} strategies {:.4} \
                     | context {:.4} kernels {:.4} upload {:.4} lifting {:.4} evaluation {:.4} \
                     download {:.4} strategy0 {:.4} strategy1 {:.4} | lifts {} evals {} | {verdict} \
                     | graph {:.4} components {:.4} cycle_test {:.4} attractor {:.4} \
                     bellman_ford {:.4} | faults {faults}",
                    s.solve_seconds,
                    s.strategy_seconds,
                    p.gpu_context,
                    p.gpu_kernels,
                    p.gpu_upload,
                    p.lifting,
                    p.evaluation,
                    p.gpu_download,
                    p.strategy0,
                    p.strategy1,
                    s.lifts,
                    s.evaluations,
                    p.graph,
                    p.components,
                    p.cycle_test,
                    p.attractor,
                    p.bellman_ford,
                );
                if reference.is_none() && backend == Backend::Auto {
                    reference = Some(solution);
                }
            }
        }
    }
}

/// The game at `path` with a short name for the tables, or `None` after printing why it
/// could not be read.
pub fn read_game(path: &std::path::Path) -> Option<(String, egsolve_core::format::Game)> {
    let name: String = path
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(40).collect())
        .unwrap_or_default();
    match read_path(path, &ReadOptions::default()) {
        Ok(game) => Some((name, game)),
        Err(e) => {
            println!("{name}: FAIL: {e}");
            None
        }
    }
}

/// The process's minor page faults so far (`/proc/self/stat`, field 10; 0 where unreadable):
/// each run prints how many pages it faulted in, fresh memory the kernel had to map.
fn minor_faults() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after_name
        .split_whitespace()
        .nth(7)
        .and_then(|field| field.parse().ok())
        .unwrap_or(0)
}
