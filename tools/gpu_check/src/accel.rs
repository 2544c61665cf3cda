//! The accelerated driver with the device as lifting engine, in `gpu_check`:
//! - [`rows`]: differential rows for `check` (the backend's default, certified with
//!   `check`; and lift budgets of 2, an evaluation after nearly every launch);
//! - [`sweep`]: times lifting-phase lengths against plain device lifting and CPU `auto`
//!   (on one thread, the worklist, and as shipped: every core).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egsolve_core::arena::Arena;
use egsolve_core::check::{Claim, check};
use egsolve_core::generate::{self, RandomParams};
use egsolve_core::solve::cpu::CpuOptions;
use egsolve_core::solve::{Control, SolveError, accel, energy};
use egsolve_gpu::lift::GpuLift;
use egsolve_gpu::{self as gpu, GpuEngine, GpuOptions};

use super::games::{self, Case};
use super::{Row, agree, compare};

/// Rows for the accelerated driver with the device as lifting engine: the default
/// (`gpu::solve`, strategies certified with `check`) and lift budgets of 2 (an evaluation
/// after nearly every launch). Returns the default's credits.
pub fn rows(case: &Case, truth: &[u64], ref_ms: f64, rows: &mut Vec<Row>) -> Option<Vec<u64>> {
    let arena = &case.arena;
    let (n, m) = (arena.vertex_count(), arena.edge_count());
    let judge = |credit: &[u64]| {
        if !truth.is_empty() {
            compare(credit, truth)
        } else if let Some(e) = &case.expected {
            agree(credit, e)
        } else {
            "pass (unchecked: ref >10 s, no data)".into()
        }
    };
    let mut row = |variant: &str, rounds, lifts, gpu_ms, result: String| {
        rows.push(Row {
            case: case.name.clone(),
            n,
            m,
            variant: variant.to_string(),
            rounds,
            lifts,
            gpu_ms,
            ref_ms,
            result,
        });
    };
    let t = Instant::now();
    let control = Control::new().with_deadline(Some(t + Duration::from_secs(30)));
    let answer = match gpu::solve(arena, &GpuOptions::default(), &control) {
        Ok(solution) => {
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let mut result = judge(&solution.credit);
            let claim = Claim {
                credit: &solution.credit,
                strategy: &solution.strategy,
            };
            match check(arena, claim) {
                Ok(report) if report.passed() => {}
                Ok(report) => result = format!("FAIL: check: {}", report.violations[0]),
                Err(e) => result = format!("FAIL: check: {e}"),
            }
            let s = &solution.stats;
            row("accel", s.rounds, s.lifts, ms, result);
            Some(solution.credit)
        }
        Err(e) => {
            row("accel", 0, 0, 0.0, format!("FAIL: {e}"));
            None
        }
    };
    let t = Instant::now();
    let control = Control::new().with_deadline(Some(t + Duration::from_secs(30)));
    let options = GpuOptions {
        lift_percent: Some(0),
        ..GpuOptions::default()
    };
    let bound = energy::bound(arena).ok()?;
    let stressed = GpuEngine::upload(arena, Some(bound), &options)
        .map_err(SolveError::from)
        .and_then(|engine| {
            let mut lift = GpuLift::new(engine, &options);
            accel::solve_with_budget(arena, &mut lift, 2, &control)
        });
    match stressed {
        Ok((solution, stats)) => {
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let label = format!("accel b=2 e={}", stats.evaluations);
            row(
                &label,
                solution.stats.rounds,
                solution.stats.lifts,
                ms,
                judge(&solution.credit),
            );
        }
        Err(SolveError::Interrupted(_)) => {
            row("accel b=2", 0, 0, 0.0, "skip: ran past 30 s".into());
        }
        Err(e) => row("accel b=2", 0, 0, 0.0, format!("FAIL: {e}")),
    }
    answer
}

/// The generated games of the sweep: two random games of about `edges` edges (player 1
/// owning 10 % and 50 % of the vertices), a climb to ⊤ and a ladder.
fn generated(edges: u64) -> Vec<Case> {
    let vertices = (edges / 4).clamp(1, u32::MAX as u64 / 4) as u32;
    let random = |percent: u8, seed: u64| {
        generate::random(
            RandomParams {
                vertices,
                min_degree: 4,
                max_degree: 4,
                min_weight: -10,
                max_weight: 10,
                player1_percent: percent,
            },
            seed,
        )
    };
    let case = |name: String, arena: Arena| Case {
        name,
        arena,
        expected: None,
    };
    vec![
        case(
            format!("gen random n={vertices} d=4 p1=10% s3"),
            random(10, 3),
        ),
        case(
            format!("gen random n={vertices} d=4 p1=50% s5"),
            random(50, 5),
        ),
        case(
            "gen climb 10000 exit 1000".into(),
            generate::climb(10_000, 1000),
        ),
        case("gen ladder 100000".into(), generate::ladder(100_000, 1)),
    ]
}

/// Times the accelerated driver on the device with lifting phases of 10 %, 25 % and
/// 100 % of an evaluation and with the CPU driver's lift budgets (`b`), against plain
/// device lifting (10 s at most) and the CPU `auto` solver; credits are compared with
/// `auto`'s. Median of 3 where a run takes under a second.
pub fn sweep(data: Option<PathBuf>, edges: u64) {
    let mut cases = generated(edges);
    if let Some(dir) = data {
        cases.extend(games::shared_data(&dir));
    }
    println!(
        "{:<48} {:>9} {:>9} {:<10} {:>9} {:>6} {:>7} {:>9} {:>9}  result",
        "case", "n", "m", "variant", "ms", "evals", "phases", "lift ms", "eval ms"
    );
    for case in &cases {
        sweep_case(case);
    }
}

fn median_ms(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2] * 1e3
}

fn sweep_case(case: &Case) {
    let arena = &case.arena;
    let name: String = case.name.chars().take(48).collect();
    let (n, m) = (arena.vertex_count(), arena.edge_count());
    let print = |variant: &str,
                 ms: f64,
                 evals: u64,
                 phases: u64,
                 lift_ms: f64,
                 eval_ms: f64,
                 result: &str| {
        println!(
            "{name:<48} {n:>9} {m:>9} {variant:<10} {ms:>9.1} {evals:>6} {phases:>7} {lift_ms:>9.1} {eval_ms:>9.1}  {result}"
        );
    };
    let limit =
        |s: u64| Control::new().with_deadline(Some(Instant::now() + Duration::from_secs(s)));
    let Ok(bound) = energy::bound(arena) else {
        return print("-", 0.0, 0, 0, 0.0, 0.0, "FAIL: bound");
    };
    // auto on the worklist (one thread): the answer every variant is compared with.
    let mut times = Vec::new();
    let mut cpu = None;
    while times.len() < 3 {
        let t = Instant::now();
        match accel::solve_with(
            arena,
            &mut egsolve_core::solve::engine::WorklistEngine,
            &limit(60),
        ) {
            Ok((solution, stats)) => {
                times.push(t.elapsed().as_secs_f64());
                cpu = Some((solution.credit, stats));
            }
            Err(e) => return print("auto 1t", 0.0, 0, 0, 0.0, 0.0, &format!("FAIL: {e}")),
        }
        if times[0] > 1.0 {
            break;
        }
    }
    let (want, stats) = cpu.expect("ran");
    let judged = match &case.expected {
        Some(e) => agree(&want, e),
        None => "pass".into(),
    };
    print(
        "auto 1t",
        median_ms(times),
        stats.evaluations,
        0,
        0.0,
        stats.evaluation_seconds * 1e3,
        &judged,
    );
    // `--backend auto` as shipped: lifting on every core from 2^19 edges, strategies on
    // every core (the worklist above is `--threads 1`).
    let mut times = Vec::new();
    let all_cores = CpuOptions::default();
    loop {
        let t = Instant::now();
        match egsolve_core::solve::auto::solve(arena, &all_cores, &limit(60)) {
            Ok(solution) => {
                times.push(t.elapsed().as_secs_f64());
                if times.len() == 3 || times[0] > 1.0 {
                    print(
                        "auto all",
                        median_ms(times),
                        0,
                        0,
                        0.0,
                        0.0,
                        &compare(&solution.credit, &want),
                    );
                    break;
                }
            }
            Err(e) => {
                print("auto all", 0.0, 0, 0, 0.0, 0.0, &format!("FAIL: {e}"));
                break;
            }
        }
    }
    for percent in [10u32, 25, 100, 0] {
        let options = GpuOptions {
            lift_percent: Some(percent),
            ..GpuOptions::default()
        };
        let variant = if percent == 0 {
            "gpu b".to_string()
        } else {
            format!("gpu {percent}%")
        };
        let mut times = Vec::new();
        loop {
            let t = Instant::now();
            let solved = GpuEngine::upload(arena, Some(bound), &options)
                .map_err(SolveError::from)
                .and_then(|engine| gpu::lift::solve(arena, engine, &options, &limit(30)));
            match solved {
                Ok((solution, stats, lift)) => {
                    times.push(t.elapsed().as_secs_f64());
                    if times.len() == 3 || times[0] > 1.0 {
                        print(
                            &variant,
                            median_ms(times),
                            stats.evaluations,
                            lift.phases,
                            lift.seconds * 1e3,
                            stats.evaluation_seconds * 1e3,
                            &compare(&solution.credit, &want),
                        );
                        break;
                    }
                }
                Err(e) => {
                    print(&variant, 0.0, 0, 0, 0.0, 0.0, &format!("FAIL/skip: {e}"));
                    break;
                }
            }
        }
    }
    let t = Instant::now();
    let plain = GpuEngine::upload(arena, Some(bound), &GpuOptions::default())
        .map_err(Into::into)
        .and_then(|mut engine| engine.lift_from(None, &GpuOptions::default(), &limit(10)));
    match plain {
        Ok(run) => print(
            "gpu plain",
            t.elapsed().as_secs_f64() * 1e3,
            0,
            run.launches,
            run.timings.solve * 1e3,
            0.0,
            &compare(&run.credit, &want),
        ),
        Err(e) => print("gpu plain", 0.0, 0, 0, 0.0, 0.0, &format!("skip: {e}")),
    }
}
