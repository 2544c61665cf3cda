//! Graceful shutdown, as the deploy files rely on it (`KillSignal=SIGTERM`,
//! `terminationGracePeriodSeconds`, `stop_grace_period`): SIGTERM during a running solve makes
//! `egsolve serve` exit promptly, the job is put back in the queue in the store (not lost, not
//! completed), and a server started again on the same data directory runs it to completion.

mod packaging_support;

use std::time::{Duration, Instant};

use egsolve::service::job::JobState;
use egsolve::service::store::Store;
use packaging_support::{Server, get_json, http, run_egsolve};

/// Cycle length and exit weight of the climbing game: long enough that the solve is still
/// running when the signal comes, short enough to finish after the restart in a few seconds.
const CLIMB_LENGTH: u32 = 3000;
const CLIMB_EXIT: u64 = 20;
/// How long the server may take to exit after SIGTERM with no request open. The deploy files
/// allow 90 s, which also covers long polls (at most 60 s) still being answered.
const EXIT_LIMIT: Duration = Duration::from_secs(15);
/// How long the whole job may take after the restart.
const FINISH_LIMIT: Duration = Duration::from_secs(40);

fn job_record(data_dir: &std::path::Path, id: uuid::Uuid) -> egsolve::service::job::JobRecord {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store = Store::open(data_dir, true).await.expect("open the store");
        let record = store
            .job(id)
            .await
            .expect("read the job")
            .expect("job exists");
        store.close().await;
        record
    })
}

#[test]
fn sigterm_requeues_the_running_job_and_a_restart_finishes_it() {
    let data = tempfile::tempdir().expect("tempdir");
    // A negative cycle of player-1 vertices behind a large M: every vertex climbs to ⊤ one
    // step at a time, so the reference solver takes seconds; player 1 wins all but the sink.
    let game = data.path().join("climb.mpg");
    let (status, _, stderr) = run_egsolve(&[
        "gen",
        "climb",
        "--length",
        &CLIMB_LENGTH.to_string(),
        "--exit",
        &CLIMB_EXIT.to_string(),
        "-o",
        game.to_str().expect("utf-8 path"),
    ]);
    assert!(status.success(), "egsolve gen climb: {stderr}");
    let arena = std::fs::read(&game).expect("read the game");
    let data_dir = data.path().join("store");
    let mut server = Server::start(&data_dir, &["--cpu-workers", "1"]);
    let (status, body) = http(server.addr, "POST", "/v1/jobs?backend=reference", &arena);
    assert_eq!(status, 202, "submit: {body}");
    let job: serde_json::Value = serde_json::from_str(&body).expect("job json");
    let id: uuid::Uuid = job["id"].as_str().expect("id").parse().expect("uuid");

    // Wait until the solve is under way (running, with lifts published).
    let started = Instant::now();
    loop {
        let job = get_json(server.addr, &format!("/v1/jobs/{id}"));
        let lifts = job["progress"]["lifts"].as_u64().unwrap_or(0);
        if job["state"] == "running" && lifts > 0 {
            break;
        }
        assert!(
            job["state"] == "queued" || job["state"] == "running",
            "the job should still be solving when SIGTERM comes: {job}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the job never started: {job}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    server.sigterm();
    let (exit, took) = server
        .wait_exit(EXIT_LIMIT)
        .unwrap_or_else(|| panic!("egsolve serve did not exit within {EXIT_LIMIT:?} of SIGTERM"));
    let logs = server.take_logs();
    assert!(
        exit.success(),
        "exit status {exit} after SIGTERM; logs:\n{logs}"
    );
    assert!(
        logs.contains("re-queueing running jobs"),
        "no shutdown line in the logs:\n{logs}"
    );
    eprintln!("egsolve serve exited {took:?} after SIGTERM");

    let stopped = job_record(&data_dir, id);
    assert_eq!(
        stopped.state,
        JobState::Queued,
        "after SIGTERM the job must be queued again"
    );
    assert_eq!(stopped.attempts, 1, "one interrupted attempt");
    assert_eq!(
        stopped.completions, 0,
        "an interrupted job has not completed"
    );

    let mut server = Server::start(&data_dir, &["--cpu-workers", "1"]);
    let restarted = Instant::now();
    let done = loop {
        let job = get_json(server.addr, &format!("/v1/jobs/{id}?wait=5"));
        match job["state"].as_str() {
            Some("queued" | "running") => {}
            _ => break job,
        }
        assert!(
            restarted.elapsed() < FINISH_LIMIT,
            "the job did not finish within {FINISH_LIMIT:?} of the restart: {job}"
        );
    };
    eprintln!("finished {:?} after the restart", restarted.elapsed());
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(
        done["attempts"], 2,
        "interrupted once, then run again: {done}"
    );
    let summary = &done["summary"];
    assert_eq!(summary["w1"], u64::from(CLIMB_LENGTH), "{summary}");
    assert_eq!(
        summary["w0"], 1,
        "only the sink is won by player 0: {summary}"
    );
    assert_eq!(summary["vertex0"]["winner"], 1, "{summary}");

    server.sigterm();
    let (exit, _) = server
        .wait_exit(EXIT_LIMIT)
        .expect("the restarted server exits on SIGTERM");
    assert!(exit.success(), "exit status {exit}");
    let finished = job_record(&data_dir, id);
    assert_eq!(finished.state, JobState::Succeeded);
    assert_eq!(finished.completions, 1, "completed exactly once");
}
