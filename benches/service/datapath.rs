//! Part 4 of the service benchmark: the data path on a 10^7-edge game (issue 39's:
//! `gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3`,
//! 133 MB as `.mpg`, 72 MB as `egb`). For each file, interleaved runs of the CLI's whole
//! process (`egsolve solve FILE --output binary -o OUT`, the baseline, measured in the same
//! run) and of a service job (POST the file, or for `egb` also a job naming it by reference
//! → long poll → `GET …/result?format=binary` to a file, or for the job by reference also
//! the result written by the server, `POST …/result/export`) on a fresh in-process server each
//! time (so nothing is reused), with the server's
//! phases (`/metrics` sums: receive, hash, fsync, parse, stats, store, queue wait, solve,
//! result write) and the client's (post, wait, result), and the CPU time of both sides (the
//! CLI's process; the bench's own process, server and client, for the service job), which
//! bounds the service job's time on this machine's cores. Last, the `egb` job as a user sends
//! it: `egsolve submit --wait` (a process of its own) to a running `egsolve serve` process
//! ([`as_a_user`]). Goal on the 2-core build machine:
//! service ≤ 1.5× the CLI. `DATAPATH_REPS` (default 3) sets the runs; `DATAPATH_VERTICES`
//! a smaller game.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use egsolve_service::ServeConfig;
use egsolve_test_support::bench;
use egsolve_test_support::record;

use super::http::{InProcess, get_json, post_job, uncompressed_client};
use super::{ms, run_egsolve, solve_to};

/// Runs part 4 and prints its figures.
pub async fn data_path() {
    let dir = tempfile::tempdir().unwrap();
    let vertices = std::env::var("DATAPATH_VERTICES").unwrap_or_else(|_| "2500000".into());
    let reps: usize = std::env::var("DATAPATH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mpg = dir.path().join("game.mpg");
    let egb = dir.path().join("game.egb");
    generate(&vertices, 3, "mpg", &mpg);
    run_egsolve(&[
        "convert",
        mpg.to_str().unwrap(),
        "--to",
        "egb",
        "-o",
        egb.to_str().unwrap(),
    ]);
    println!(
        "data path, {vertices} vertices × 4 edges ({:.0} MB .mpg, {:.0} MB egb), {reps} interleaved runs; load {}",
        file_mb(&mpg),
        file_mb(&egb),
        bench::load_average()
    );
    for (name, file, by_reference, exported) in [
        ("mpg", &mpg, false, false),
        ("egb", &egb, false, false),
        ("egb by reference", &egb, true, false),
        ("egb by reference, result by reference", &egb, true, true),
    ] {
        let mut cli = Vec::new();
        let mut cli_cpu = Vec::new();
        let mut served = Vec::new();
        let mut phases: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for _ in 0..reps {
            let out = dir.path().join("cli.bin");
            let cpu_before = cpu_seconds(libc::RUSAGE_CHILDREN);
            cli.push(solve_to(file, &["--output", "binary"], &out));
            cli_cpu.push(Duration::from_secs_f64(
                cpu_seconds(libc::RUSAGE_CHILDREN) - cpu_before,
            ));
            let (total, parts) = service_job(file, dir.path(), by_reference, exported).await;
            served.push(total);
            for (phase, seconds) in parts {
                phases.entry(phase).or_default().push(seconds);
            }
            let same = std::fs::read(&out).unwrap()
                == std::fs::read(dir.path().join("served.bin")).unwrap();
            assert!(same, "the service's binary result is the CLI's");
        }
        let (c, s) = (median(&mut cli), median(&mut served));
        let breakdown = phase_medians(&phases);
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let (c_cpu, s_cpu) = (median(&mut cli_cpu), median_of(&phases["cpu"]));
        println!(
            "  {name}: CLI `solve --output binary` median {:.0} ms, service POST → binary result median {:.0} ms: {:.2}× (goal ≤ 1.5×)\n    CPU time, medians: CLI process {:.0} ms, service job (server and client, one process) {:.0} ms; on {cores} cores the service job cannot take less than {:.0} ms = {:.2}× the CLI's median\n    phases, ms (medians): {}",
            ms(c),
            ms(s),
            s.as_secs_f64() / c.as_secs_f64(),
            ms(c_cpu),
            ms(s_cpu),
            ms(s_cpu) / cores as f64,
            s_cpu.as_secs_f64() / cores as f64 / c.as_secs_f64(),
            breakdown
        );
        record::record(
            "service",
            serde_json::json!({
                "measurement": "data_path",
                "input": name,
                "vertices": vertices,
                "runs": reps,
                "cli_median_ms": ms(c),
                "service_median_ms": ms(s),
                "ratio": s.as_secs_f64() / c.as_secs_f64(),
                "cli_cpu_median_ms": ms(c_cpu),
                "service_cpu_median_ms": ms(s_cpu),
                "phases_ms": phases.iter().map(|(k, v)| (k.clone(), v.iter().map(|s| s * 1e3).collect::<Vec<_>>())).collect::<BTreeMap<_, _>>(),
            }),
        );
    }
    as_a_user(&vertices, dir.path(), reps).await;
}

/// The `egb` job as a user sends it (the issue's own measurement): `egsolve submit FILE
/// --wait --result-format binary -o OUT`, a process of its own, to an `egsolve serve` process
/// started once and warmed by one job, interleaved with the CLI's whole process on the same
/// file. Each run has a game of its own (another seed, same size): the server stores an
/// arena once and reuses a finished identical job's result, which would spare it the work.
/// The cases above start a fresh in-process server for every job and send from inside the
/// bench.
async fn as_a_user(vertices: &str, scratch: &Path, reps: usize) {
    use std::io::BufRead;
    let bin = env!("CARGO_BIN_EXE_egsolve");
    let data = tempfile::tempdir().unwrap();
    let mut server = Serving(
        std::process::Command::new(bin)
            .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line.trim().rsplit(' ').next().unwrap().to_owned();
    let game = |seed: usize| scratch.join(format!("user-{seed}.egb"));
    let generate = |seed: usize| {
        let file = game(seed);
        generate(vertices, 100 + seed as u64, "egb", &file);
        // On the disk before it is sent, as a user's file written long before would be (a
        // file still being written back slows the server's fsync beside it).
        std::fs::File::open(&file).unwrap().sync_all().unwrap();
    };
    let served = scratch.join("served.bin");
    let submit = |game: &Path| {
        let _ = std::fs::remove_file(&served);
        run_egsolve(&[
            "submit",
            game.to_str().unwrap(),
            "--server",
            &base,
            "--wait",
            "--result-format",
            "binary",
            "-o",
            served.to_str().unwrap(),
        ])
    };
    (0..=reps).for_each(generate);
    submit(&game(reps));
    let (mut cli, mut user) = (Vec::new(), Vec::new());
    let mut phases: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let http = uncompressed_client();
    let out = scratch.join("cli.bin");
    let server_pid = server.0.id();
    let (mut cli_cpu, mut user_cpu) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        let cpu_before = cpu_seconds(libc::RUSAGE_CHILDREN);
        cli.push(solve_to(&game(rep), &["--output", "binary"], &out));
        let cpu_between = cpu_seconds(libc::RUSAGE_CHILDREN);
        cli_cpu.push(cpu_between - cpu_before);
        let before = phase_sums(&http, &base).await;
        let server_before = process_cpu_seconds(server_pid);
        user.push(submit(&game(rep)));
        let server_cpu = process_cpu_seconds(server_pid) - server_before;
        user_cpu.push(server_cpu + cpu_seconds(libc::RUSAGE_CHILDREN) - cpu_between);
        for (phase, spent) in spent_since(&before, phase_sums(&http, &base).await) {
            phases.entry(phase).or_default().push(spent);
        }
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&served).unwrap(),
            "the service's binary result is the CLI's"
        );
    }
    drop(server);
    let (c, s) = (median(&mut cli), median(&mut user));
    println!(
        "  egb, `egsolve submit --wait` to a running `egsolve serve`, a new game each run: CLI median {:.0} ms, submit median {:.0} ms: {:.2}× (goal ≤ 1.5×); sorted, ms: CLI {:?}, submit {:?}",
        ms(c),
        ms(s),
        s.as_secs_f64() / c.as_secs_f64(),
        cli.iter().map(|d| ms(*d).round()).collect::<Vec<_>>(),
        user.iter().map(|d| ms(*d).round()).collect::<Vec<_>>(),
    );
    let (c_cpu, s_cpu) = (median_of(&cli_cpu), median_of(&user_cpu));
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!(
        "    CPU time, medians: CLI process {:.0} ms, server and `submit` processes {:.0} ms (a 10-ms clock); on {cores} cores the job cannot take less than {:.0} ms = {:.2}× the CLI's median\n    server phases, ms (medians): {}",
        ms(c_cpu),
        ms(s_cpu),
        ms(s_cpu) / cores as f64,
        s_cpu.as_secs_f64() / cores as f64 / c.as_secs_f64(),
        phase_medians(&phases)
    );
    record::record(
        "service",
        serde_json::json!({
            "measurement": "data_path",
            "input": "egb, submit to a running server",
            "vertices": vertices,
            "runs": reps,
            "cli_median_ms": ms(c),
            "service_median_ms": ms(s),
            "ratio": s.as_secs_f64() / c.as_secs_f64(),
        }),
    );
}

/// The benchmark's game family (`gen random`, four edges per vertex) of `vertices` vertices,
/// seeded, as `to` (`mpg` or `egb`) to `out`.
fn generate(vertices: &str, seed: u64, to: &str, out: &Path) {
    let seed = seed.to_string();
    run_egsolve(&[
        "gen",
        "random",
        "--vertices",
        vertices,
        "--degree",
        "4..4",
        "--weights=-10..10",
        "--player1",
        "10",
        "--seed",
        &seed,
        "--to",
        to,
        "-o",
        out.to_str().unwrap(),
    ]);
}

fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).unwrap().len() as f64 / 1e6
}

/// CPU time (user and system, seconds) of `who`: this process (`RUSAGE_SELF`: the
/// in-process server and its client) or its waited-for children (`RUSAGE_CHILDREN`: the
/// CLI's processes).
fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(who, &mut usage), 0, "getrusage");
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// CPU time (user and system, seconds) of the running process `pid` so far, from
/// `/proc/PID/stat` (in clock ticks: 10 ms here).
fn process_cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command's name in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: `sysconf` reads a constant of the system.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// The median of `seconds`.
fn median_of(seconds: &[f64]) -> Duration {
    let mut runs: Vec<Duration> = seconds
        .iter()
        .map(|&s| Duration::from_secs_f64(s))
        .collect();
    median(&mut runs)
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// POSTs `{"path": path}` to `url` as `content_type`.
async fn post_path(
    http: &reqwest::Client,
    url: &str,
    content_type: &str,
    path: &Path,
) -> reqwest::Response {
    let body = serde_json::json!({ "path": path }).to_string();
    let request = http.post(url).header("content-type", content_type);
    request.body(body).send().await.unwrap()
}

/// One job on a fresh server: the whole time, and the phases (client's and server's). By
/// reference, the server's import root is the file's folder and the POST names the file;
/// `exported`: the server writes the result into `scratch`, its export root.
async fn service_job(
    file: &Path,
    scratch: &Path,
    by_reference: bool,
    exported: bool,
) -> (Duration, Vec<(String, f64)>) {
    let data = tempfile::tempdir().unwrap();
    let mut config = ServeConfig::for_tests(data.path());
    if by_reference {
        config.import_roots = vec![file.parent().unwrap().to_owned()];
    }
    if exported {
        config.export_roots = vec![scratch.to_owned()];
    }
    let server = InProcess::start(config).await;
    let base = server.base.clone();
    // Uncompressed answers, as `curl` without `--compressed` (loopback gains nothing).
    let http = uncompressed_client();
    while http.get(format!("{base}/healthz")).send().await.is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = phase_sums(&http, &base).await;
    let (start, cpu_start) = (Instant::now(), cpu_seconds(libc::RUSAGE_SELF));
    let mut job = if by_reference {
        let url = format!("{base}/v1/jobs?return=strategies");
        let reply = post_path(&http, &url, "application/vnd.egsolve.reference+json", file).await;
        assert_eq!(reply.status(), 202);
        reply.json().await.unwrap()
    } else {
        // The file streamed from disk, as `curl --data-binary @FILE` or `egsolve submit`
        // sends it.
        let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(
            tokio::fs::File::open(file).await.unwrap(),
            1 << 20,
        ));
        post_job(&http, &base, "?return=strategies", body).await
    };
    let posted = start.elapsed();
    let id = job["id"].as_str().unwrap().to_string();
    while matches!(job["state"].as_str(), Some("queued" | "running")) {
        job = get_json(&http, &format!("{base}/v1/jobs/{id}?wait=30")).await;
    }
    assert_eq!(job["state"], "succeeded", "{job}");
    let waited = start.elapsed();
    let served = scratch.join("served.bin");
    if exported {
        // Written by the server, as `egsolve result -o FILE --by-reference` has it (into a
        // new file: an export does not replace one unless asked to).
        let _ = std::fs::remove_file(&served);
        let url = format!("{base}/v1/jobs/{id}/result/export");
        let reply = post_path(&http, &url, "application/json", &served).await;
        assert_eq!(reply.status(), 201);
    } else {
        // Written to the file as it arrives, as `egsolve result -o` does.
        let result = format!("{base}/v1/jobs/{id}/result?format=binary");
        let mut response = http.get(result).send().await.unwrap();
        let mut out = tokio::fs::File::create(&served).await.unwrap();
        while let Some(chunk) = response.chunk().await.unwrap() {
            tokio::io::AsyncWriteExt::write_all(&mut out, &chunk)
                .await
                .unwrap();
        }
        tokio::io::AsyncWriteExt::flush(&mut out).await.unwrap();
    }
    let total = start.elapsed();
    let cpu = cpu_seconds(libc::RUSAGE_SELF) - cpu_start;
    let after = phase_sums(&http, &base).await;
    server.stop().await.unwrap();
    let mut phases = vec![
        ("client post".to_string(), posted.as_secs_f64()),
        ("client wait".to_string(), (waited - posted).as_secs_f64()),
        ("client result".to_string(), (total - waited).as_secs_f64()),
        ("cpu".to_string(), cpu),
    ];
    phases.extend(spent_since(&before, after));
    (total, phases)
}

/// The server's phases that took time between two [`phase_sums`] (seconds; `upload`, the
/// sum of others, left out).
fn spent_since(before: &BTreeMap<String, f64>, after: BTreeMap<String, f64>) -> Vec<(String, f64)> {
    after
        .into_iter()
        .map(|(phase, sum)| {
            let spent = sum - before.get(&phase).copied().unwrap_or(0.0);
            (phase, spent)
        })
        .filter(|(phase, spent)| *spent > 0.0 && phase != "upload")
        .collect()
}

/// `phase median-ms, …` of each phase's seconds over the runs.
fn phase_medians(phases: &BTreeMap<String, Vec<f64>>) -> String {
    phases
        .iter()
        .filter(|(phase, _)| *phase != "cpu")
        .map(|(phase, seconds)| format!("{phase} {:.0}", ms(median_of(seconds))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A server process, stopped when dropped (also when a run's check fails).
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The server's phase duration sums from `/metrics`, by phase (backends added up).
async fn phase_sums(http: &reqwest::Client, base: &str) -> BTreeMap<String, f64> {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut sums = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("egsolve_phase_duration_seconds_sum{phase=\"") else {
            continue;
        };
        let (phase, rest) = rest.split_once('"').unwrap();
        let value: f64 = rest.rsplit(' ').next().unwrap().parse().unwrap();
        *sums.entry(phase.to_string()).or_insert(0.0) += value;
    }
    sums
}
