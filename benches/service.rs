//! Service benchmark (a program, `cargo bench -p egsolve --bench service`): a real server on loopback.
//!
//! 1. Idle latency: one client, submit → long-poll → fetch the JSON result of a fresh
//!    1,000-vertex random arena, one job at a time (p50, p99).
//! 2. Throughput: 1,000 such jobs from 32 concurrent clients (jobs/s, p50/p99 latency).
//! 3. Overhead on the largest shared file (IEEE1394, 571,378 vertices): read + solve +
//!    JSON output in-process against submit → wait → download of the JSON result through
//!    the service, same process, same machine, median of 3; then what a user runs, as
//!    processes: `egsolve solve FILE -o OUT` against `egsolve submit FILE --wait -o OUT`
//!    (strategies included in both), 11 interleaved runs each, medians and minima.
//!
//! 4. The data path on a 10^7-edge game, `.mpg` and `egb`: the CLI's whole process against a
//!    service job, interleaved, with the server's phases (see [`datapath`]).
//!
//! Each arena is distinct (different seed, or a distinguishing comment line), so no result
//! is reused from the cache. Parts 1–3 run twice: with `sync_commits` on (the default:
//! every job-table commit fsynced) and off. `BREAKDOWN=1` prints per-job phase times;
//! `ONLY=overhead` runs part 3 alone, `ONLY=datapath` part 4 alone.

#[path = "service/datapath.rs"]
mod datapath;
#[path = "../tests/service_support/http.rs"]
mod http;

use egsolve_test_support as data;
use egsolve_test_support::record;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egsolve_core::generate::{RandomParams, random};
use egsolve_core::solve::{Backend, Control};
use egsolve_service::ServeConfig;
use http::{InProcess, get_json, get_ok, ms, percentile, post_job, with_latencies};

const IEEE: &str = "energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz";

fn arena_text(seed: u64) -> Vec<u8> {
    arena_with_weights(seed, -10)
}

/// Nonnegative weights: every credit is 0 and the solve is trivial, so these measure the
/// service itself.
fn easy_arena_text(seed: u64) -> Vec<u8> {
    arena_with_weights(seed, 0)
}

/// 1,000 vertices, out-degrees 1..=4, weights `min_weight..=10`.
fn arena_with_weights(seed: u64, min_weight: i64) -> Vec<u8> {
    let params = RandomParams {
        min_weight,
        ..RandomParams::default()
    };
    let mut out = Vec::new();
    egsolve_core::format::write_mpg(&random(params, seed), &mut out).unwrap();
    out
}

/// Submit → long-poll → download; returns the latency and the job's own solve time.
async fn job_roundtrip(http: &reqwest::Client, base: &str, body: Vec<u8>) -> (Duration, Duration) {
    let start = Instant::now();
    let job = post_job(http, base, "", body).await;
    let submitted = start.elapsed();
    let id = job["id"].as_str().unwrap().to_string();
    let mut state = job["state"].as_str().unwrap().to_string();
    let mut solve_ms = 0.0;
    while state == "queued" || state == "running" {
        let view = get_json(http, &format!("{base}/v1/jobs/{id}?wait=30")).await;
        state = view["state"].as_str().unwrap().to_string();
        solve_ms = view["durations_ms"]["solve"].as_f64().unwrap_or(0.0);
    }
    assert_eq!(state, "succeeded");
    let waited = start.elapsed();
    let bytes = get_ok(http, &format!("{base}/v1/jobs/{id}/result")).await;
    assert!(bytes.len() > 1000);
    if std::env::var_os("BREAKDOWN").is_some() {
        let view = get_json(http, &format!("{base}/v1/jobs/{id}")).await;
        eprintln!(
            "submitted {:.2} ms, finished {:.2} ms, result {:.2} ms; job {} {} {} {}",
            ms(submitted),
            ms(waited),
            ms(start.elapsed()),
            view["durations_ms"],
            view["created_at"],
            view["started_at"],
            view["finished_at"]
        );
    }
    (start.elapsed(), Duration::from_secs_f64(solve_ms / 1e3))
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out).unwrap();
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn direct_solve(path: &Path) -> Duration {
    let start = Instant::now();
    let game = egsolve_core::format::read_path(path, &Default::default()).unwrap();
    let solution = egsolve_core::solve::solve(&game.arena, Backend::Auto, &Control::new()).unwrap();
    let mut sink = std::io::sink();
    egsolve_core::output::write_json(&mut sink, &game.arena, &solution, 0, Default::default())
        .unwrap();
    start.elapsed()
}

// The in-process servers run on the allocator `egsolve serve` runs on (and the CLI
// baseline's processes), not the system's: the comparison is of the service's work.
egsolve_alloc::global_allocator!();

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // The servers' own log (their phases at `debug`) when `EGSOLVE_LOG` asks for it.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("EGSOLVE_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    }
    let only = std::env::var("ONLY").unwrap_or_default();
    if only != "datapath" {
        for sync_commits in [true, false] {
            run(sync_commits).await;
        }
    }
    if only.is_empty() || only == "datapath" {
        datapath::data_path().await;
    }
}

async fn run(sync_commits: bool) {
    let data = data::shared_data();
    let dir = tempfile::tempdir().unwrap();
    let config = ServeConfig {
        per_user_job_limit: 100_000,
        sync_commits,
        ..ServeConfig::for_tests(dir.path())
    };
    let server = InProcess::start(config).await;
    let base = server.base.clone();
    let http = reqwest::Client::new();
    let cores = std::thread::available_parallelism()
        .map(std::num::NonZero::get)
        .unwrap_or(1);
    println!(
        "service benchmark: {cores} cores, sync_commits={sync_commits}, commit {}",
        std::env::var("GIT_COMMIT").unwrap_or_else(|_| "(set GIT_COMMIT)".into())
    );

    let only_overhead = std::env::var("ONLY").is_ok_and(|v| v == "overhead");
    // Warm-up (connections, page cache, SQLite).
    for seed in 0..20 {
        job_roundtrip(&http, &base, arena_text(1_000_000 + seed)).await;
    }

    if !only_overhead {
        idle_latency_and_throughput(&http, &base, sync_commits).await;
    }

    // 3. Overhead on the largest shared file.
    overhead_on_the_largest_file(&http, &base, &data, sync_commits).await;

    server.stop().await.unwrap();
}

async fn idle_latency_and_throughput(http: &reqwest::Client, base: &str, sync_commits: bool) {
    // 1. Idle latency.
    let mut latencies = Vec::new();
    let mut overheads = Vec::new();
    for seed in 0..300 {
        let (latency, solve) = job_roundtrip(http, base, arena_text(seed)).await;
        latencies.push(latency);
        overheads.push(latency.saturating_sub(solve));
    }
    latencies.sort();
    overheads.sort();
    record::record(
        "service",
        with_latencies(
            serde_json::json!({
                "measurement": "idle_latency",
                "sync_commits": sync_commits,
                "jobs": latencies.len(),
                "outside_solver_p50_ms": ms(percentile(&overheads, 0.5)),
                "outside_solver_p99_ms": ms(percentile(&overheads, 0.99)),
            }),
            &latencies,
        ),
    );
    println!(
        "idle submit→result, 1,000-vertex arenas, n=300: p50 {:.2} ms, p99 {:.2} ms (goal p50 <= 10 ms)",
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99))
    );
    println!(
        "  of which outside the solver (latency minus the job's solve time): p50 {:.2} ms, p99 {:.2} ms",
        ms(percentile(&overheads, 0.5)),
        ms(percentile(&overheads, 0.99))
    );

    // 2. Throughput.
    for (family, make) in [
        ("random weights -10..10", arena_text as fn(u64) -> Vec<u8>),
        ("nonnegative weights (trivial solves)", easy_arena_text),
    ] {
        throughput(http, base, family, make, sync_commits).await;
    }
}

async fn overhead_on_the_largest_file(
    http: &reqwest::Client,
    base: &str,
    data: &Path,
    sync_commits: bool,
) {
    let path = data.join(IEEE);
    let plain = gunzip(&std::fs::read(&path).unwrap());
    let mut direct = Vec::new();
    let mut served = Vec::new();
    for rep in 0..3 {
        direct.push(direct_solve(&path));
        let mut body = plain.clone();
        body.extend_from_slice(format!("\n# benchmark repetition {rep}\n").as_bytes());
        let body = gzip(&body);
        served.push(job_roundtrip(http, base, body).await.0);
    }
    direct.sort();
    served.sort();
    let (d, s) = (direct[1], served[1]);
    record::record(
        "service",
        serde_json::json!({
            "measurement": "overhead_in_process",
            "sync_commits": sync_commits,
            "direct_ms": ms(d),
            "served_ms": ms(s),
            "overhead_percent": (s.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0,
        }),
    );
    println!(
        "largest shared file (IEEE1394, 571,378 vertices), median of 3: direct read+solve+json {:.0} ms, service submit→result {:.0} ms, overhead {:+.1}% (goal <= 10%)",
        ms(d),
        ms(s),
        (s.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0
    );

    // What a user runs: `egsolve solve FILE -o OUT` against `egsolve submit FILE --wait -o
    // OUT` (strategies asked for, as `solve` writes them), both writing the JSON to a file.
    let dir = tempfile::tempdir().unwrap();
    let run = run_egsolve;
    let mut direct = Vec::new();
    let mut served = Vec::new();
    for rep in 0..CLI_REPEATS {
        let out = dir.path().join("direct.json");
        direct.push(solve_to(&path, &[], &out));
        let mut body = plain.clone();
        body.extend_from_slice(format!("\n# CLI repetition {rep}\n").as_bytes());
        let file = dir.path().join(format!("ieee-{rep}.mpg.gz"));
        std::fs::write(&file, gzip(&body)).unwrap();
        let out = dir.path().join("served.json");
        served.push(run(&[
            "submit",
            file.to_str().unwrap(),
            "--server",
            base,
            "--return",
            "strategies",
            "--wait",
            "-o",
            out.to_str().unwrap(),
        ]));
    }
    direct.sort();
    served.sort();
    let (d, s) = (direct[CLI_REPEATS / 2], served[CLI_REPEATS / 2]);
    record::record(
        "service",
        serde_json::json!({
            "measurement": "overhead_cli",
            "sync_commits": sync_commits,
            "runs": CLI_REPEATS,
            "direct_median_ms": ms(d),
            "direct_min_ms": ms(direct[0]),
            "served_median_ms": ms(s),
            "served_min_ms": ms(served[0]),
            "overhead_median_percent": (s.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0,
            "overhead_min_percent": (served[0].as_secs_f64() / direct[0].as_secs_f64() - 1.0) * 100.0,
        }),
    );
    println!(
        "largest shared file, CLI to CLI, {CLI_REPEATS} interleaved runs: `egsolve solve -o` median {:.0} ms (min {:.0}), `egsolve submit --wait -o` median {:.0} ms (min {:.0}), overhead of the medians {:+.1}%, of the minima {:+.1}% (goal <= 10%)",
        ms(d),
        ms(direct[0]),
        ms(s),
        ms(served[0]),
        (s.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0,
        (served[0].as_secs_f64() / direct[0].as_secs_f64() - 1.0) * 100.0
    );
}

/// Runs of each side in the CLI-to-CLI comparison (odd, for a median).
const CLI_REPEATS: usize = 11;

async fn throughput(
    http: &reqwest::Client,
    base: &str,
    family: &str,
    make: fn(u64) -> Vec<u8>,
    sync_commits: bool,
) {
    let base = base.to_string();
    let bodies: Vec<Vec<u8>> = (0..1000).map(|i| make(10_000 + i)).collect();
    let bodies = Arc::new(std::sync::Mutex::new(bodies));
    let start = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..32 {
        let http = http.clone();
        let base = base.clone();
        let bodies = bodies.clone();
        clients.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let body = bodies.lock().unwrap().pop();
                let Some(body) = body else { break };
                mine.push(job_roundtrip(&http, &base, body).await.0);
            }
            mine
        }));
    }
    let mut latencies = Vec::new();
    for client in clients {
        latencies.extend(client.await.unwrap());
    }
    let wall = start.elapsed();
    latencies.sort();
    record::record(
        "service",
        with_latencies(
            serde_json::json!({
                "measurement": "throughput",
                "sync_commits": sync_commits,
                "family": family,
                "jobs": latencies.len(),
                "jobs_per_s": 1000.0 / wall.as_secs_f64(),
            }),
            &latencies,
        ),
    );
    println!(
        "throughput, 1,000 jobs from 32 clients, {family}: {:.0} jobs/s ({:.2} s), latency p50 {:.1} ms, p99 {:.1} ms (goal >= 200 jobs/s)",
        1000.0 / wall.as_secs_f64(),
        wall.as_secs_f64(),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99))
    );
}

/// `egsolve solve FILE EXTRA… -o OUT` (see [`run_egsolve`]).
fn solve_to(file: &Path, extra: &[&str], out: &Path) -> Duration {
    let mut args = vec!["solve", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(["-o", out.to_str().unwrap()]);
    run_egsolve(&args)
}

/// Runs the `egsolve` binary with `args` (stderr discarded), asserting success; its wall time.
fn run_egsolve(args: &[&str]) -> Duration {
    let start = Instant::now();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "egsolve {args:?}");
    start.elapsed()
}
