//! Graceful shutdown, as the deploy files rely on it (`KillSignal=SIGTERM`,
//! `terminationGracePeriodSeconds`, `stop_grace_period`): SIGTERM during a running solve makes
//! `egsolve serve` exit promptly, the job is put back in the queue in the store (not lost, not
//! completed), and a server started again on the same data directory runs it to completion.
//! Open long polls are answered at once; a request still open when the configured grace time
//! (`--shutdown-grace-secs`) ends is dropped and the server exits anyway.

use crate::packaging_support;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use egsolve_service::JobState;
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

fn job_record(data_dir: &std::path::Path, id: uuid::Uuid) -> egsolve_service::JobRecord {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let config = egsolve_service::ServeConfig::for_tests(data_dir);
    runtime
        .block_on(egsolve_service::stored_jobs(&config))
        .expect("read the jobs")
        .into_iter()
        .find(|job| job.id == id)
        .expect("job exists")
}

/// Writes the climbing game into `dir` and returns its bytes.
fn climbing_game(dir: &Path) -> Vec<u8> {
    // A negative cycle of player-1 vertices behind a large M: every vertex climbs to ⊤ one
    // step at a time, so the reference solver takes seconds; player 1 wins all but the sink.
    let game = dir.join("climb.mpg");
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
    std::fs::read(&game).expect("read the game")
}

/// Submits `arena` to the reference backend; the job's id.
fn submit(addr: SocketAddr, arena: &[u8]) -> uuid::Uuid {
    let (status, body) = http(addr, "POST", "/v1/jobs?backend=reference", arena);
    assert_eq!(status, 202, "submit: {body}");
    let job: serde_json::Value = serde_json::from_str(&body).expect("job json");
    job["id"].as_str().expect("id").parse().expect("uuid")
}

/// Waits until job `id` is running with lifts published.
fn wait_until_solving(addr: SocketAddr, id: uuid::Uuid) {
    let started = Instant::now();
    loop {
        let job = get_json(addr, &format!("/v1/jobs/{id}"));
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
}

#[test]
fn sigterm_requeues_the_running_job_and_a_restart_finishes_it() {
    let data = tempfile::tempdir().expect("tempdir");
    let arena = climbing_game(data.path());
    let data_dir = data.path().join("store");
    let mut server = Server::start(&data_dir, &["--cpu-workers", "1"]);
    let id = submit(server.addr, &arena);
    wait_until_solving(server.addr, id);

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
    assert_eq!(summary["initial"]["winner"], 1, "{summary}");

    server.sigterm();
    let (exit, _) = server
        .wait_exit(EXIT_LIMIT)
        .expect("the restarted server exits on SIGTERM");
    assert!(exit.success(), "exit status {exit}");
    let finished = job_record(&data_dir, id);
    assert_eq!(finished.state, JobState::Succeeded);
    assert_eq!(finished.completions, 1, "completed exactly once");
}

#[test]
fn sigterm_answers_long_polls_at_once_and_drops_requests_open_past_the_grace_time() {
    const GRACE: Duration = Duration::from_secs(2);
    let data = tempfile::tempdir().expect("tempdir");
    let arena = climbing_game(data.path());
    let data_dir = data.path().join("store");
    let grace = GRACE.as_secs().to_string();
    let mut server = Server::start(
        &data_dir,
        &["--cpu-workers", "1", "--shutdown-grace-secs", &grace],
    );
    let addr = server.addr;
    let running = submit(addr, &arena);
    wait_until_solving(addr, running);
    // One CPU worker is busy, so this one waits in the queue; nothing will change its state.
    let queued = submit(addr, &arena);
    let poll = std::thread::spawn(move || {
        let answer = http(addr, "GET", &format!("/v1/jobs/{queued}?wait=60"), b"");
        (answer, Instant::now())
    });
    // An upload that stalls after its first bytes keeps a request open.
    let mut stalled = TcpStream::connect(addr).expect("connect");
    let head = format!("POST /v1/jobs HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 1000000\r\n\r\n");
    stalled.write_all(head.as_bytes()).expect("send head");
    stalled.write_all(&arena[..100]).expect("send some body");
    std::thread::sleep(Duration::from_millis(500));

    server.sigterm();
    let signalled = Instant::now();
    let ((status, body), answered) = poll.join().expect("poll thread");
    assert_eq!(status, 200, "{body}");
    let view: serde_json::Value = serde_json::from_str(&body).expect("job json");
    assert_eq!(view["state"], "queued", "{view}");
    let poll_took = answered.duration_since(signalled);
    assert!(
        poll_took < Duration::from_millis(1500),
        "the long poll took {poll_took:?} after SIGTERM; it should be answered at once"
    );

    let (exit, took) = server
        .wait_exit(EXIT_LIMIT)
        .unwrap_or_else(|| panic!("egsolve serve did not exit within {EXIT_LIMIT:?} of SIGTERM"));
    let logs = server.take_logs();
    assert!(exit.success(), "exit status {exit}; logs:\n{logs}");
    eprintln!("long poll answered {poll_took:?} and the server exited {took:?} after SIGTERM");
    assert!(
        took >= GRACE - Duration::from_millis(300),
        "the stalled upload should hold the exit for the grace time ({GRACE:?}), took {took:?}"
    );
    assert!(
        took < GRACE + Duration::from_secs(6),
        "exit {took:?} after SIGTERM with a {GRACE:?} grace time"
    );
    assert!(logs.contains("grace time over"), "logs:\n{logs}");
    drop(stalled);

    let interrupted = job_record(&data_dir, running);
    assert_eq!(interrupted.state, JobState::Queued);
    assert_eq!(interrupted.attempts, 1);
    let waiting = job_record(&data_dir, queued);
    assert_eq!(waiting.state, JobState::Queued);
    assert_eq!(waiting.attempts, 0, "the queued job never started");
}
