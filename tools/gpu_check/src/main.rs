//! `gpu_check`: the GPU backend's differential check and benchmark, run on the device
//! machine from the carried release build (scripts/gpu-check.sh).
//!
//! - `gpu_check check [--seed S] [--data DIR]`: random games of many shapes and the shared
//!   data; every GPU variant (lanes 1..32, single-block tier off, host-driven rounds,
//!   `lift_from` a point below the fixpoint, the accelerated driver) must give exactly the
//!   reference credits (and the expected answers shipped with the data); the accelerated
//!   rows' strategies must pass `check`. Prints a pass/fail table; exits 1 on any failure.
//! - `gpu_check sweep [--data DIR] [--edges M]`: the accelerated driver on the device with
//!   several lifting-phase lengths, against plain device lifting and the CPU `auto` solver,
//!   on the shared data and generated games (see [`accel`]).
//! - `gpu_check warm [--runs R] [--lift-percent P] [--release] FILE...`: `--backend gpu` and `auto`
//!   solving each file several times in one process (the service's case), every run's
//!   phases (see [`warm`]).
//! - `gpu_check race [--runs R] [--threads T,U] FILE...`: parity games' GPU route alone,
//!   the CPU portfolio alone and the service's race, in one warm process (see [`race`]).
//! - `gpu_check full [--edges M] [--degree D]`: the full-round table alone (every lane
//!   count and layout) for one generated game, to compare kernel builds
//!   (`EGSOLVE_NVRTC_EXTRA_OPTIONS`) one process each.
//! - `gpu_check bench [--max-edges M]`: copy bandwidth, per-round overhead on tiny
//!   frontiers, full-frontier round throughput, and end-to-end solves against the reference
//!   solver, all in one run.

mod accel;
mod bandwidth;
mod bench;
mod games;
mod race;
mod warm;

egsolve_alloc::global_allocator!();

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egsolve_core::arena::{Arena, Player};
use egsolve_core::solve::{Backend, Control, TOP, energy, solve};
use egsolve_gpu::compile::{kernels, nvrtc_version};
use egsolve_gpu::{GpuEngine, GpuOptions, GpuSolveError, list_devices};
use games::{Case, Expected};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The value of `--name` parsed, or `default` when absent; a value that does not parse stops
/// the program with the flag named.
fn parsed<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    arg(args, name).map_or(default, |s| {
        s.parse()
            .unwrap_or_else(|_| panic!("{name}: cannot read {s:?}"))
    })
}

fn main() {
    // `EGSOLVE_LOG=debug` shows the solver's own trace (phase by phase) beside the tables.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("EGSOLVE_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("check");
    println!(
        "devices: {}",
        serde_json::to_string(&list_devices()).expect("serialisable")
    );
    match nvrtc_version() {
        Ok((a, b)) => println!("nvrtc: {a}.{b}"),
        Err(e) => println!("nvrtc: {e}"),
    }
    match kernels(0) {
        Ok(k) => {
            println!("device 0: {}, {} SMs", k.arch, k.multiprocessors);
            for (w, v) in [(16, 32), (64, 64)] {
                match k.lift(w, v) {
                    Ok(l) => println!(
                        "kernels w{w} v{v}: {} and loaded in {:.1} ms",
                        if l.cached {
                            "read from the disk cache"
                        } else {
                            "compiled"
                        },
                        l.load_seconds * 1e3
                    ),
                    Err(e) => println!("kernels w{w} v{v}: {e}"),
                }
            }
        }
        Err(e) => println!("kernels: {e}"),
    }
    let ok = match mode {
        "check" => check(&args),
        "bench" => {
            let max_edges = parsed(&args, "--max-edges", 100_000_000u64);
            let cpu_limit = parsed(&args, "--cpu-limit", 60.0);
            bench::run(
                max_edges,
                cpu_limit,
                arg(&args, "--data").map(PathBuf::from),
            );
            true
        }
        "sweep" => {
            let edges = parsed(&args, "--edges", 10_000_000u64);
            accel::sweep(arg(&args, "--data").map(PathBuf::from), edges);
            true
        }
        "race" => {
            let files: Vec<PathBuf> = args
                .iter()
                .skip(2)
                .filter(|a| !a.starts_with("--") && a.parse::<usize>().is_err() && !a.contains(','))
                .map(PathBuf::from)
                .collect();
            let threads: Vec<usize> = arg(&args, "--threads")
                .unwrap_or_else(|| "4".into())
                .split(',')
                .map(|t| t.parse().expect("--threads: numbers, comma-separated"))
                .collect();
            race::race(&files, parsed(&args, "--runs", 5), &threads);
            true
        }
        "warm" => {
            let files: Vec<PathBuf> = args
                .iter()
                .skip(2)
                .filter(|a| !a.starts_with("--") && a.parse::<usize>().is_err())
                .map(PathBuf::from)
                .collect();
            let lift_percent = arg(&args, "--lift-percent").and_then(|p| p.parse().ok());
            let release = args.iter().any(|a| a == "--release");
            warm::warm(&files, parsed(&args, "--runs", 4), lift_percent, release);
            true
        }
        "full" => {
            let edges = parsed(&args, "--edges", 10_000_000u64);
            let degree = parsed(&args, "--degree", 4);
            bench::full_rounds_table(edges, degree);
            true
        }
        "rounds" => {
            let edges = parsed(&args, "--edges", 10_000_000u64);
            let lanes = arg(&args, "--lanes").map(|s| s.parse().expect("lanes"));
            bench::full_rounds_only(
                edges,
                lanes,
                args.iter().any(|a| a == "--wide"),
                if args.iter().any(|a| a == "--input-order") {
                    egsolve_gpu::VertexOrder::Input
                } else {
                    egsolve_gpu::VertexOrder::PlayersFirst
                },
            );
            true
        }
        other => {
            eprintln!("unknown mode {other}: expected check, sweep, warm, bench, full or rounds");
            false
        }
    };
    std::process::exit(i32::from(!ok));
}

/// One row of the table.
struct Row {
    case: String,
    n: usize,
    m: usize,
    variant: String,
    rounds: u64,
    lifts: u64,
    gpu_ms: f64,
    ref_ms: f64,
    result: String,
}

fn random_cases(seed: u64) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |name: String, arena: Arena| {
        cases.push(Case {
            name,
            arena,
            expected: None,
        });
    };
    for (i, &(n, avg, lo, hi)) in [
        (5u32, 2u32, -3i64, 3i64),
        (20, 2, -5, 5),
        (100, 3, -10, 10),
        (1000, 4, -10, 8),
        (5000, 2, -3, 3),
    ]
    .iter()
    .enumerate()
    {
        add(
            format!("random n={n} d={avg} w={lo}..{hi}"),
            games::random(seed + i as u64, n, avg, lo, hi, false),
        );
    }
    // (name, seed offset, vertices, average degree, weights, owners sorted)
    let shaped = [
        ("random sorted-owners n=3000", 10, 3000, 3, (-6, 5), true),
        ("random nonneg n=2000", 11, 2000, 3, (0, 9), false),
        (
            "random mostly-positive n=4000 d=4",
            12,
            4000,
            4,
            (-3, 12),
            false,
        ),
        ("random nonneg n=300000 d=4", 13, 300_000, 4, (0, 20), false),
    ];
    for (name, offset, n, avg, (lo, hi), sorted) in shaped {
        add(
            name.into(),
            games::random(seed + offset, n, avg, lo, hi, sorted),
        );
    }
    add(
        "skewed hubs n=5000 w=2".into(),
        games::skewed(seed + 20, 5000, 3000, 2),
    );
    add(
        "skewed hubs n=2000".into(),
        games::skewed(seed + 21, 2000, 1500, 5),
    );
    add(
        "bipartite n=4000 d=3 w=2".into(),
        games::bipartite(seed + 30, 2000, 3, 2),
    );
    add(
        "dense d=64 n=1000".into(),
        games::random(seed + 40, 1000, 64, -20, 18, false),
    );
    add(
        "heavy weights n=2000".into(),
        games::heavy(seed + 50, 2000, 3),
    );
    add("ring n=300 laps=40".into(), games::ring(300, 40));
    add("single vertex".into(), games::ring(1, 0));
    cases
}

fn variants(m: usize) -> Vec<(String, u32, GpuOptions)> {
    let mut out = vec![("auto".to_string(), 0, GpuOptions::default())];
    let lanes: &[u32] = if m > 100_000 {
        &[1, 32]
    } else {
        &[1, 2, 4, 8, 16, 32]
    };
    for &h in lanes {
        out.push((format!("h={h}"), h, GpuOptions::default()));
    }
    out.push((
        "lists only".into(),
        0,
        GpuOptions {
            no_dense: true,
            ..GpuOptions::default()
        },
    ));
    out.push((
        "64-bit layout".into(),
        0,
        GpuOptions {
            wide: true,
            ..GpuOptions::default()
        },
    ));
    out.push((
        "players first".into(),
        0,
        GpuOptions {
            order: egsolve_gpu::VertexOrder::PlayersFirst,
            ..GpuOptions::default()
        },
    ));
    out.push((
        "players first h=1".into(),
        1,
        GpuOptions {
            order: egsolve_gpu::VertexOrder::PlayersFirst,
            ..GpuOptions::default()
        },
    ));
    out.push((
        "full-grid only".into(),
        0,
        GpuOptions {
            no_small_tier: true,
            ..GpuOptions::default()
        },
    ));
    if m < 100_000 {
        out.push((
            "host-driven".into(),
            0,
            GpuOptions {
                rounds_per_launch: Some(1),
                ..GpuOptions::default()
            },
        ));
    }
    out
}

fn check(args: &[String]) -> bool {
    let seed = arg(args, "--seed")
        .map(|s| s.parse().expect("seed"))
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(1)
        });
    println!("seed: {seed} (rerun with --seed {seed})");
    let mut cases = random_cases(7);
    cases.extend(random_cases(seed).into_iter().map(|mut c| {
        c.name = format!("{} seed={seed}", c.name);
        c
    }));
    if let Some(dir) = arg(args, "--data") {
        cases.extend(games::shared_data(&PathBuf::from(dir)));
    }
    println!(
        "{:<62} {:>8} {:>9} {:<15} {:>8} {:>10} {:>9} {:>9}  result",
        "case", "n", "m", "variant", "rounds", "lifts", "gpu ms", "ref ms"
    );
    let (mut checks, mut failures, mut skipped) = (0, 0, 0);
    for case in &cases {
        let mut rows = Vec::new();
        check_case(case, &mut rows);
        for r in &rows {
            checks += 1;
            if r.result.starts_with("skip") {
                skipped += 1;
            } else if !r.result.starts_with("pass") {
                failures += 1;
            }
            println!(
                "{:<62} {:>8} {:>9} {:<15} {:>8} {:>10} {:>9.2} {:>9.1}  {}",
                r.case.chars().take(62).collect::<String>(),
                r.n,
                r.m,
                r.variant,
                r.rounds,
                r.lifts,
                r.gpu_ms,
                r.ref_ms,
                r.result
            );
        }
    }
    println!(
        "\n{checks} checks: {} passed, {failures} failed, {skipped} skipped (ran past 5 s)",
        checks - failures - skipped
    );
    failures == 0
}

fn compare(got: &[u64], want: &[u64]) -> String {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None if got.len() == want.len() => "pass".into(),
        None => format!("FAIL: {} values for {} vertices", got.len(), want.len()),
        Some(v) => {
            let wrong = got.iter().zip(want).filter(|(a, b)| a != b).count();
            format!(
                "FAIL: {wrong} wrong, first v={v} got {} want {}",
                energy::display(got[v]),
                energy::display(want[v])
            )
        }
    }
}

fn check_case(case: &Case, rows: &mut Vec<Row>) {
    let arena = &case.arena;
    let (n, m) = (arena.vertex_count(), arena.edge_count());
    let row = |variant: &str, rounds, lifts, gpu_ms, ref_ms, result: String| Row {
        case: case.name.clone(),
        n,
        m,
        variant: variant.to_string(),
        rounds,
        lifts,
        gpu_ms,
        ref_ms,
        result,
    };
    let bound = match energy::bound(arena) {
        Ok(b) => b,
        Err(e) => return rows.push(row("-", 0, 0, 0.0, 0.0, format!("FAIL: {e}"))),
    };
    let start = Instant::now();
    let limited = Control::new().with_deadline(Some(Instant::now() + Duration::from_secs(10)));
    let reference = solve(arena, Backend::Reference, &limited)
        .ok()
        .map(|s| s.credit);
    let ref_ms = start.elapsed().as_secs_f64() * 1e3;
    let truth: Vec<u64> = match (&reference, &case.expected) {
        (Some(r), _) => r.clone(),
        (None, Some(Expected::Credits(c))) => c.clone(),
        (None, Some(Expected::Winners(_)) | None) => Vec::new(),
    };
    if let (Some(r), Some(expected)) = (&reference, &case.expected) {
        rows.push(row(
            "reference vs data",
            0,
            0,
            0.0,
            ref_ms,
            agree(r, expected),
        ));
    }
    let mut engine = match GpuEngine::upload(arena, Some(bound), &GpuOptions::default()) {
        Ok(e) => e,
        Err(e) => return rows.push(row("upload", 0, 0, 0.0, ref_ms, format!("FAIL: {e}"))),
    };
    let auto_lanes = engine.lanes();
    let mut gpu_answer: Option<Vec<u64>> = None;
    let mut timed_out = false;
    for (name, lanes, options) in variants(m) {
        if timed_out {
            rows.push(row(
                &name,
                0,
                0,
                0.0,
                ref_ms,
                "skip (an earlier variant ran past 5 s)".into(),
            ));
            continue;
        }
        if let Err(e) = engine.set_lanes(if lanes == 0 { auto_lanes } else { lanes }) {
            rows.push(row(&name, 0, 0, 0.0, ref_ms, format!("FAIL: {e}")));
            continue;
        }
        let t = Instant::now();
        let control = Control::new().with_deadline(Some(t + Duration::from_secs(5)));
        match engine.lift_from(None, &options, &control) {
            Ok(run) => {
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let mut result = if truth.is_empty() {
                    match (&case.expected, &gpu_answer) {
                        (Some(e), _) => agree(&run.credit, e),
                        // The reference ran out of time: the variants must agree with each
                        // other and each answer must be a progress measure.
                        (None, Some(first)) => {
                            compare(&run.credit, first).replace("pass", "pass (vs auto; ref >10 s)")
                        }
                        (None, None) => "pass (ref >10 s)".into(),
                    }
                } else {
                    compare(&run.credit, &truth)
                };
                if let Some(v) = broken_vertex(arena, &run.credit, bound) {
                    result = format!("FAIL: not a progress measure at v={v}");
                }
                let label = if lanes == 0 && name == "auto" {
                    format!("auto h={auto_lanes}")
                } else {
                    name.clone()
                };
                rows.push(row(&label, run.rounds, run.lifts, ms, ref_ms, result));
                gpu_answer.get_or_insert(run.credit);
            }
            Err(GpuSolveError::Interrupted(_)) => {
                timed_out = true;
                rows.push(row(&name, 0, 0, 0.0, ref_ms, "skip: ran past 5 s".into()));
            }
            Err(e) => rows.push(row(&name, 0, 0, 0.0, ref_ms, format!("FAIL: {e}"))),
        }
    }
    let _ = engine.set_lanes(auto_lanes);
    drop(engine);
    // The accelerated driver on the device (the backend's default), and the same driver
    // evaluating after nearly every launch (many value round trips).
    let accelerated = accel::rows(case, &truth, ref_ms, &mut *rows);
    // lift_from: start halfway below the fixpoint (⊤ vertices from M/2) and at the fixpoint.
    let Some(answer) = gpu_answer.or(accelerated) else {
        return;
    };
    if timed_out {
        return;
    }
    let want = if truth.is_empty() {
        answer.clone()
    } else {
        truth.clone()
    };
    let mut engine = match GpuEngine::upload(arena, Some(bound), &GpuOptions::default()) {
        Ok(e) => e,
        Err(e) => return rows.push(row("upload", 0, 0, 0.0, ref_ms, format!("FAIL: {e}"))),
    };
    for (name, start) in [
        (
            "lift_from half",
            want.iter()
                .map(|&c| if c == TOP { bound / 2 } else { c / 2 })
                .collect::<Vec<_>>(),
        ),
        ("lift_from f*", want.clone()),
    ] {
        let t = Instant::now();
        let control = Control::new().with_deadline(Some(t + Duration::from_secs(5)));
        match engine.lift_from(Some(&start), &GpuOptions::default(), &control) {
            Ok(run) => {
                let ms = t.elapsed().as_secs_f64() * 1e3;
                rows.push(row(
                    name,
                    run.rounds,
                    run.lifts,
                    ms,
                    ref_ms,
                    compare(&run.credit, &want),
                ));
            }
            Err(GpuSolveError::Interrupted(_)) => {
                rows.push(row(name, 0, 0, 0.0, ref_ms, "skip: ran past 5 s".into()));
            }
            Err(e) => rows.push(row(name, 0, 0, 0.0, ref_ms, format!("FAIL: {e}"))),
        }
    }
}

/// Whether credits agree with a shipped answer (credits exactly, or winners).
fn agree(credit: &[u64], expected: &Expected) -> String {
    match expected {
        Expected::Credits(c) => compare(credit, c),
        Expected::Winners(w) => {
            let bad = credit
                .iter()
                .zip(w)
                .filter(|&(&c, &p)| (c != TOP) != (p == Player::Zero))
                .count();
            if bad == 0 && credit.len() == w.len() {
                "pass".into()
            } else {
                format!("FAIL: {bad} winners differ")
            }
        }
    }
}

/// A vertex whose progress-measure condition fails under `credit`, if any (the O(m)
/// certificate of FORMATS.md: player 0 needs one good edge, player 1 all).
fn broken_vertex(arena: &Arena, credit: &[u64], bound: u64) -> Option<u32> {
    (0..arena.vertex_count() as u32).find(|&v| {
        let fv = credit[v as usize];
        if fv != TOP && fv > bound {
            return true;
        }
        let mut ok = arena
            .successors(v)
            .map(|(u, w)| fv >= energy::minus(credit[u as usize], w, bound));
        match arena.owner(v) {
            Player::Zero => !ok.any(|b| b),
            Player::One => !ok.all(|b| b),
        }
    })
}
