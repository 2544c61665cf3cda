//! The service hands a solve's memory back to the kernel once its workers have had no job
//! for a while (`egsolve_alloc::release_free_memory`, by the service's `idle_release`, 2 s
//! by default): the real binary —
//! jemalloc, which otherwise keeps freed blocks for the next solve — solves a game of 500,000
//! vertices, and its resident memory then falls back near where it was before the job,
//! far below its peak. Linux only (`/proc/<pid>/status`).

use crate::service_support;

use std::process::Command;
use std::time::{Duration, Instant};

use service_support::http::{get_json, post_job};
use service_support::spawn_server_binary;

/// `VmRSS` and `VmHWM` (resident now, and at its peak) of process `pid`, in kB.
fn resident_kb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("Linux /proc");
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_goes_back_to_the_kernel_when_no_job_runs() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game.mpg");
    let generated = Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args(["gen", "random", "--vertices", "500000", "--degree", "4..4"])
        .args(["--weights=-10..10", "--player1", "50", "--seed", "7", "-o"])
        .arg(&game)
        .status()
        .unwrap();
    assert!(generated.success());
    let body = std::fs::read(&game).unwrap();
    let data = dir.path().join("data");
    let (mut child, base) = spawn_server_binary(&data);
    let pid = child.id();
    let (before, _) = resident_kb(pid);

    let http = reqwest::Client::new();
    let id = post_job(&http, &base, "?backend=auto", body).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let job = get_json(&http, &format!("{base}/v1/jobs/{id}?wait=5")).await;
        match job["state"].as_str() {
            Some("succeeded") => break,
            Some("failed" | "cancelled" | "expired") => panic!("the job ended: {job}"),
            _ => assert!(Instant::now() < deadline, "the job did not finish: {job}"),
        }
    }
    // The memory goes back once the workers have been idle for 2 s.
    let (mut after, mut peak) = resident_kb(pid);
    let released = Instant::now() + Duration::from_secs(10);
    while after - before.min(after) > (peak - before) / 3 && Instant::now() < released {
        tokio::time::sleep(Duration::from_millis(100)).await;
        (after, peak) = resident_kb(pid);
    }
    let _ = child.kill();
    let _ = child.wait();
    eprintln!("resident kB: before the job {before}, peak {peak}, after it {after}");
    assert!(
        peak > before + 50_000,
        "the solve used memory: peak {peak} kB against {before} before"
    );
    assert!(
        after - before.min(after) <= (peak - before) / 3,
        "freed memory went back: {after} kB after the job, {before} before, peak {peak}"
    );
}
