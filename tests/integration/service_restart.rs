//! Nothing accepted is lost: the real binary is killed with SIGKILL while jobs are queued and
//! running, and stopped with SIGTERM while a job runs; after each restart every job finishes,
//! and the store shows each reached `succeeded` exactly once. Jobs use the reference solver,
//! for which the weight −1 cycle is slow (about n² lifts).

use crate::service_support;

use std::process::{Child, Command};

use egsolve_service::JobState;
use service_support::http::{get_json, post_job};
use service_support::*;

fn sigterm(child: &mut Child) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful shutdown exits 0, got {status}");
}

async fn submit(http: &reqwest::Client, base: &str, body: Vec<u8>) -> String {
    let job = post_job(http, base, "?backend=reference", body).await;
    job["id"].as_str().unwrap().to_string()
}

async fn job(http: &reqwest::Client, base: &str, id: &str, wait: u64) -> serde_json::Value {
    get_json(http, &format!("{base}/v1/jobs/{id}?wait={wait}")).await
}

async fn wait_running(http: &reqwest::Client, base: &str, id: &str) {
    for _ in 0..100 {
        if job(http, base, id, 1).await["state"] == "running" {
            return;
        }
    }
    panic!("job {id} never started: {}", job(http, base, id, 0).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_and_stopped_servers_lose_no_job_and_complete_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();

    // Phase 1: a slow job running, small ones queued behind it (one CPU worker); SIGKILL.
    let (mut child, base) = spawn_server_binary(dir.path());
    // About 4·10^8 lifts (seconds on any machine): it must still be running when polled, after
    // each restart too (it starts again from nothing), and it runs to the end once.
    let slow = submit(&http, &base, slow_cycle(20_000)).await;
    let mut queued = Vec::new();
    for seed in 0..5 {
        queued.push(submit(&http, &base, small_arena(40, seed)).await);
    }
    wait_running(&http, &base, &slow).await;
    child.kill().unwrap(); // SIGKILL: no shutdown code runs
    child.wait().unwrap();

    // Phase 2: restart; the slow job runs again. SIGTERM while it runs.
    let (mut child, base) = spawn_server_binary(dir.path());
    wait_running(&http, &base, &slow).await;
    let second_slow = submit(&http, &base, slow_cycle(4000)).await;
    sigterm(&mut child);

    // Phase 3: restart; everything finishes.
    let (mut child, base) = spawn_server_binary(dir.path());
    let mut all = queued.clone();
    all.push(slow.clone());
    all.push(second_slow.clone());
    for id in &all {
        let mut state = String::new();
        for _ in 0..60 {
            let view = job(&http, &base, id, 5).await;
            state = view["state"].as_str().unwrap().to_string();
            if state != "queued" && state != "running" {
                break;
            }
        }
        assert_eq!(state, "succeeded", "job {id}");
    }
    let slow_view = job(&http, &base, &slow, 0).await;
    assert!(slow_view["attempts"].as_u64().unwrap() >= 3, "{slow_view}");
    sigterm(&mut child);

    // The store: every job succeeded exactly once.
    let config = egsolve_service::ServeConfig::for_tests(dir.path());
    let jobs = egsolve_service::stored_jobs(&config).await.unwrap();
    assert_eq!(jobs.len(), all.len());
    for record in jobs {
        assert_eq!(record.state, JobState::Succeeded, "{}", record.id);
        assert_eq!(
            record.completions, 1,
            "job {} completed {} times",
            record.id, record.completions
        );
    }
}
