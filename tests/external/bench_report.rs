//! `scripts/bench-report`'s rendering half (`scripts/bench_report`, Python + matplotlib) on a
//! small fixture results directory: the markdown tables it splices into a report between
//! marker comments, the four SVG plots, sections without results left as they were, and a
//! clear error for a report without a section's markers.
//!
//! Needs Python with matplotlib: `$EGSOLVE_BENCH_PYTHON`, else the venv the script makes
//! (`~/.cache/egsolve-bench-venv`), else `python3`. `.ci/run` makes that venv; with `CI` set
//! a missing matplotlib fails the checks, otherwise they are listed as ignored with the reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Python that can import matplotlib, or why there is none.
fn python() -> Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("EGSOLVE_BENCH_PYTHON") {
        candidates.push(p.into());
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".cache/egsolve-bench-venv/bin/python"));
    }
    candidates.push("python3".into());
    for candidate in candidates {
        let works = Command::new(&candidate)
            .args(["-c", "import matplotlib"])
            .output()
            .is_ok_and(|o| o.status.success());
        if works {
            return Ok(candidate);
        }
    }
    Err(
        "a Python with matplotlib (set EGSOLVE_BENCH_PYTHON, or run .ci/run or \
         scripts/bench-report once to make ~/.cache/egsolve-bench-venv)"
            .into(),
    )
}

/// Every check, listed as ignored with the reason where no Python with matplotlib is (a
/// failure under `CI`).
type Check = (&'static str, fn(&Path));

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let checks: [Check; 3] = [
        (
            "renders_every_table_and_plot_from_a_results_directory",
            renders_every_table_and_plot_from_a_results_directory,
        ),
        (
            "sections_without_results_keep_their_text_and_missing_markers_fail",
            sections_without_results_keep_their_text_and_missing_markers_fail,
        ),
        (
            "device_logs_are_taken_in_with_their_commit_and_machine_and_failed_runs_refused",
            device_logs_are_taken_in_with_their_commit_and_machine_and_failed_runs_refused,
        ),
    ];
    let python = python();
    checks
        .into_iter()
        .map(|(name, check)| {
            let python = python.clone();
            egsolve_test_support::needing(name, python.clone().err(), move || {
                check(&python.expect("checked"));
            })
        })
        .collect()
}

/// Copies the fixture to a temporary directory (the report and results are rewritten).
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = repo().join("tests/fixtures/bench_report");
    for sub in ["results", "gpu"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        for entry in std::fs::read_dir(source.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.path().join(sub).join(path.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(source.join("report.md"), dir.path().join("report.md")).unwrap();
    dir
}

fn render(python: &Path, dir: &Path, extra: &[&str]) -> Output {
    Command::new(python)
        .arg(repo().join("scripts/bench_report"))
        .arg("render")
        .args(["--results", dir.join("results").to_str().unwrap()])
        .args(["--gpu-results", dir.join("gpu").to_str().unwrap()])
        .args(["--report", dir.join("report.md").to_str().unwrap()])
        .args(["--plots", dir.join("plots").to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

fn section<'a>(report: &'a str, name: &str) -> &'a str {
    let begin = format!("<!-- bench-report:{name} -->");
    let end = format!("<!-- /bench-report:{name} -->");
    let start = report.find(&begin).expect("begin marker kept") + begin.len();
    let stop = report.find(&end).expect("end marker kept");
    &report[start..stop]
}

fn renders_every_table_and_plot_from_a_results_directory(python: &Path) {
    let dir = fixture();
    let out = render(python, dir.path(), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();

    assert!(report.starts_with("# Fixture report\n\nProse before the first table stays."));
    assert!(
        report
            .trim_end()
            .ends_with("Prose after the last table stays.")
    );
    assert!(
        !report.contains("OLD "),
        "every section replaced:\n{report}"
    );

    let parse = section(&report, "parse");
    // One row per input and step, MB/s per thread count (the most threads in bold), the
    // baselines of the same run beside it (a baseline with no rate, JSON null, shown as –,
    // not inf or a crash); the speed-up at the most threads, with two decimals.
    assert!(
        parse.contains("| input | step | MB | baselines, MB/s | 1 thread | 2 threads | speed-up |")
    );
    assert!(parse.contains(
        "| BRP counting | parse+build | 46.6 | sequential 195, scan – | 186 | **330** | 1.70× |"
    ));
    // The input named once, on its first step; a thread count not measured is left blank.
    assert!(parse.contains("|  | stream | 46.6 |  |  | **233** |  |"));
    assert!(parse.contains("commit `fixture1`"));
    assert!(parse.contains("load average 1.00 1.00 1.00 before / 1.10 1.00 1.00 after"));

    let cpu = section(&report, "cpu");
    // ref / 1t = 1.101 / 1.045, 1t / 2t = 1.045 / 1.192; timeouts as lower bounds.
    assert!(
        cpu.contains(
            "| Hanoi 10 | 177,144 | 1.101 | 1.045 | 1.192 | 2.500 | 1.05× | 0.88× | 22.0 |"
        )
    );
    assert!(
        cpu.contains("| Onebit inevitably_sent | 870,976 | > 5 | > 5 | > 5 | > 5 | – | – | – |")
    );
    assert!(cpu.contains("| 1.09× | 1.39× | 17.6 |"));

    let auto = section(&report, "auto");
    assert!(auto.contains("| Onebit inevitably_sent | 870,976 | > 5.0 | 40,000,000 | 0.058 |"));
    assert!(auto.contains("| > 86× |"));
    assert!(auto.contains("| climb player1_cycle(8, 1e6) | 16 | 0.200 |"));

    let gpu = section(&report, "gpu-vs-cpu");
    // The bench's own ratios, not ones recomputed from rounded milliseconds.
    assert!(gpu.contains("| 1.0 / 8.1 / 0.9 / 1.9 | 12.6 | 22.9 | **25.4×** | 1.8× | 314.8 |"));
    assert!(gpu.contains("| 63.0 | 221.2 | **24.2×** | 3.5× | 2601.8 |"));
    assert!(gpu.contains("2.05 µs") && gpu.contains("2989 GB/s"));
    assert!(
        gpu.contains("commit `fixturegpu`, Test GPU, 16 CPU cores, load average 0.50 0.40 0.30")
    );

    let sweep = section(&report, "gpu-sweep");
    assert!(
        sweep.contains("| game | edges | auto 1t ms | auto all ms | gpu 25% ms | gpu plain ms |")
    );
    assert!(
        sweep.contains("| 8591.1 | 4628.8 | 4677.6 | – |"),
        "skipped run shown as –"
    );
    assert!(sweep.contains("| Hanoi 10 | 177,144 | 22.0 | 21.7 | 28.9 | 27.7 |"));
    // A log whose run recorded no load average says so.
    assert!(sweep.contains("Test GPU, 16 CPU cores, load not recorded, log"));

    let shared = section(&report, "gpu-shared");
    // Sorted by edges; a failed run (timeout) is "–" and not counted against certification.
    assert!(shared.contains("| rngame n1000 | 3,558 | – | 0.7 | – | – | all |"));
    assert!(shared.contains("| Hanoi 10 | 177,144 | 40.2 | 20.1 | – | 30.5 | all |"));
    assert!(shared.find("rngame").unwrap() < shared.find("Hanoi 10").unwrap());

    let service = section(&report, "service");
    assert!(service.contains("| 5.43 / 7.18 ms | 4.34 / 7.69 ms | p50 ≤ 10 ms |"));
    assert!(service.contains("279 jobs/s") && service.contains("404 jobs/s"));
    assert!(service.contains("+9.3 % (+7.5 %)"));

    let cluster = section(&report, "cluster");
    assert!(cluster.contains("| 7.38 jobs/s = 1.80× one worker | ≥ 1.8× at 2 |"));
    assert!(cluster.contains("postgres, p50 / p99 | 12.50 / 20.25 ms | p50 ≤ 15 ms |"));
    // Re-runs sorted; the worst against the lease.
    assert!(cluster.contains("| 2100 / 2500 / 3000 ms = 1.50× the lease at most | ≤ 2× |"));

    let anchors = section(&report, "anchors");
    assert!(anchors.contains(
        "| Hanoi 10 | 1.435 | 0.209 | 0.142 | 2.58 | 0.001 | 1.234 | – | 0.022 | 0.020 | 0.030 |"
    ));
    assert!(anchors.contains("| Onebit inevitably_sent | — | — | 6.9 | 93 | 0.008 | > 10 |"));

    for (plot, label) in [
        ("solve-time-vs-edges.svg", "cpu frontier, 2 threads"),
        ("speedup-vs-threads.svg", "Hanoi 10 (auto, GPU machine)"),
        ("gpu-vs-cpu.svg", "gpu plain"),
        ("service-latency.svg", "idle, one client, sync_commits on"),
        ("service-latency.svg", "postgres store (cluster bench)"),
    ] {
        let svg = std::fs::read_to_string(dir.path().join("plots").join(plot)).unwrap();
        assert!(
            svg.starts_with("<?xml") && svg.contains("<svg"),
            "{plot} is an SVG"
        );
        assert!(svg.contains(label), "{plot} has the series '{label}'");
        assert!(svg.trim_end().ends_with("</svg>"), "{plot} is complete");
    }
}

fn sections_without_results_keep_their_text_and_missing_markers_fail(python: &Path) {
    let dir = fixture();
    std::fs::remove_file(dir.path().join("results/service.jsonl")).unwrap();
    std::fs::remove_file(dir.path().join("gpu/sweep.log")).unwrap();
    let out = render(python, dir.path(), &["--no-plots"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert_eq!(section(&report, "service").trim(), "OLD SERVICE TABLE");
    assert_eq!(section(&report, "gpu-sweep").trim(), "OLD SWEEP TABLE");
    assert!(section(&report, "cpu").contains("| Hanoi 10 |"));
    assert!(
        !dir.path().join("plots").exists(),
        "--no-plots writes no plot"
    );

    let without = report.replace("<!-- /bench-report:cpu -->", "");
    std::fs::write(dir.path().join("report.md"), without).unwrap();
    let out = render(python, dir.path(), &["--no-plots"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("<!-- bench-report:cpu -->"),
        "names the marker: {stderr}"
    );
}

fn device_logs_are_taken_in_with_their_commit_and_machine_and_failed_runs_refused(python: &Path) {
    let dir = fixture();
    let take = |from: &Path, to: &Path| {
        Command::new(python)
            .arg(repo().join("scripts/bench_report"))
            .args(["take-gpu", "--commit", "abc1234"])
            .args([
                "--from",
                from.to_str().unwrap(),
                "--to",
                to.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    // A destination that already names an earlier sweep log keeps it.
    let to = dir.path().join("taken");
    std::fs::create_dir(&to).unwrap();
    std::fs::write(
        to.join("meta.json"),
        r#"{"sweep_log": "docs/bench/results/old/sweep.log", "sweep_commit": "old", "bench_load": "9.00 9.00 9.00"}"#,
    )
    .unwrap();
    let from = dir.path().join("device");
    std::fs::create_dir(&from).unwrap();
    for name in ["bench.log", "phases.jsonl", "machine.log"] {
        std::fs::copy(dir.path().join("gpu").join(name), from.join(name)).unwrap();
    }
    let out = take(&from, &to);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(to.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["bench_commit"], "abc1234");
    assert_eq!(meta["phases_commit"], "abc1234");
    assert_eq!(
        meta["bench_machine"],
        "NVIDIA H100 80GB HBM3, driver 580.159.04, 16 CPU cores"
    );
    assert_eq!(meta["phases_cores"], 16);
    // The load average of the device run's machine.log replaces the earlier run's.
    assert_eq!(meta["bench_load"], "0.20 0.05 0.01");
    assert_eq!(meta["phases_load"], "0.20 0.05 0.01");
    assert_eq!(meta["sweep_log"], "docs/bench/results/old/sweep.log");
    assert_eq!(meta["sweep_commit"], "old");
    assert!(to.join("bench.log").is_file() && to.join("phases.jsonl").is_file());

    // A log without measurements (gpu_check on a machine without a driver) is refused.
    std::fs::write(
        from.join("bench.log"),
        "devices: []\nbench: no CUDA driver: libcuda.so.1 was not found\n",
    )
    .unwrap();
    let out = take(&from, &to);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no measurements in it"));
}
