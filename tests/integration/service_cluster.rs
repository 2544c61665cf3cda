//! Several hosts on one PostgreSQL queue, as real processes: `egsolve serve --no-worker`
//! (API hosts) and `egsolve worker` (solving hosts) on a throwaway PostgreSQL server, each
//! with its own data directory (its cache), as separate machines would be.
//!
//! - a worker killed with SIGKILL mid-solve: the job finishes on another worker within the
//!   lease plus one solve, once, with the CLI's answer;
//! - a worker frozen with SIGSTOP past its lease, then resumed: its attempt is taken over
//!   and it records nothing (it stops, or the fence refuses its result);
//! - a solve many leases long keeps its claim (first attempt, no lease lost);
//! - a job cancelled on an API host stops on the worker that runs it (its slot takes the
//!   next job at once);
//! - PostgreSQL restarted while jobs run: workers and API reconnect, every job succeeds;
//! - 3 workers and 2 API processes, 300 jobs from 20 concurrent clients, each submitted to
//!   one API host and awaited on the other: none lost, none completed twice, all right.
//!
//! Without PostgreSQL (and `CI` unset) the tests print why and pass; under `CI` they fail.

use crate::service_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egsolve_service::JobState;
use service_support::postgres::PgServer;
use service_support::*;

/// A child process, killed when dropped.
struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal}");
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The cluster's shared settings.
struct Cluster {
    url: String,
    lease_ms: u64,
    dir: tempfile::TempDir,
    count: std::sync::atomic::AtomicU32,
}

impl Cluster {
    fn new(url: String, lease_ms: u64) -> Cluster {
        Cluster {
            url,
            lease_ms,
            dir: tempfile::tempdir().unwrap(),
            count: Default::default(),
        }
    }

    /// A cluster on a database of the shared PostgreSQL server (none where there is no
    /// server), and a client.
    fn shared(lease_ms: u64) -> Option<(Cluster, reqwest::Client)> {
        let pg = PgServer::shared()?;
        let cluster = Cluster::new(pg.create_database(), lease_ms);
        Some((cluster, reqwest::Client::new()))
    }

    /// A fresh data directory and log file for a process.
    fn place(&self) -> (PathBuf, PathBuf) {
        let n = self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let data = self.dir.path().join(format!("host{n}"));
        (data, self.dir.path().join(format!("host{n}.log")))
    }

    fn command(&self, subcommand: &str, data: &Path, log: &Path) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_egsolve"));
        command
            .arg(subcommand)
            .args(["--database", &self.url, "--data-dir"])
            .arg(data)
            .args(["--lease-ms", &self.lease_ms.to_string()])
            .env("EGSOLVE_LOG", "info")
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap());
        command
    }

    /// An API-only host; its base URL.
    fn api(&self) -> (Proc, String) {
        let (data, log) = self.place();
        let mut child = self
            .command("serve", &data, &log)
            .args(["--no-worker", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("egsolve serve starts");
        let base = listening_address(&mut child);
        (Proc { child, log }, base)
    }

    /// An API host and two registered workers, one of them running a [`SLOW`] job for the
    /// reference solver.
    async fn slow_job(&self, http: &reqwest::Client) -> SlowJob {
        let (_api, base) = self.api();
        let workers = [self.worker(), self.worker()];
        wait_registered(http, &base, 3).await;
        let body = slow_cycle(SLOW);
        let id = submit(http, &base, body.clone(), "?backend=reference").await;
        let running = wait_running(http, &base, &id).await;
        SlowJob {
            _api,
            base,
            workers,
            body,
            id,
            running,
        }
    }

    /// A worker host with one CPU slot of one thread.
    fn worker(&self) -> Proc {
        let (data, log) = self.place();
        let child = self
            .command("worker", &data, &log)
            .args(["--cpu-workers", "1", "--cpu-threads", "1"])
            .stdout(Stdio::null())
            .spawn()
            .expect("egsolve worker starts");
        Proc { child, log }
    }
}

async fn json(http: &reqwest::Client, url: &str) -> Option<serde_json::Value> {
    let reply = http.get(url).send().await.ok()?;
    if !reply.status().is_success() {
        return None;
    }
    reply.json().await.ok()
}

/// Waits until `count` processes are registered (each started and heartbeating).
async fn wait_registered(http: &reqwest::Client, base: &str, count: usize) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(list) = json(http, &format!("{base}/v1/workers")).await {
            if list["workers"].as_array().map_or(0, Vec::len) >= count {
                return list;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{count} processes never registered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn submit(http: &reqwest::Client, base: &str, body: Vec<u8>, query: &str) -> String {
    for _ in 0..100 {
        if let Ok(reply) = http
            .post(format!("{base}/v1/jobs{query}"))
            .body(body.clone())
            .send()
            .await
        {
            if reply.status() == 202 {
                let job: serde_json::Value = reply.json().await.unwrap();
                return job["id"].as_str().unwrap().to_string();
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("submission to {base} never accepted");
}

/// Long-polls (tolerating a restarting database) until the job satisfies `done`.
async fn wait_for(
    http: &reqwest::Client,
    base: &str,
    id: &str,
    limit: Duration,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + limit;
    let mut last = serde_json::Value::Null;
    while Instant::now() < deadline {
        match json(http, &format!("{base}/v1/jobs/{id}?wait=2")).await {
            Some(view) if done(&view) => return view,
            Some(view) => last = view,
            None => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    panic!("job {id} did not get there within {limit:?}: {last}");
}

/// Polls (no long poll: a notification delayed on a loaded machine must not let the short
/// running window pass unseen) until the job runs. Panics, saying so, if it finished first.
async fn wait_running(http: &reqwest::Client, base: &str, id: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = serde_json::Value::Null;
    while Instant::now() < deadline {
        if let Some(view) = json(http, &format!("{base}/v1/jobs/{id}")).await {
            match view["state"].as_str() {
                Some("running") => return view,
                Some("queued") => {}
                _ => panic!("job {id} finished before it was seen running: {view}"),
            }
            last = view;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("job {id} never ran within 60 s: {last}");
}

fn finished(view: &serde_json::Value) -> bool {
    matches!(
        view["state"].as_str(),
        Some("succeeded" | "failed" | "cancelled")
    )
}

async fn result_text(http: &reqwest::Client, base: &str, id: &str) -> String {
    for _ in 0..50 {
        if let Ok(reply) = http
            .get(format!("{base}/v1/jobs/{id}/result?format=text"))
            .send()
            .await
        {
            if reply.status() == 200 {
                return reply.text().await.unwrap();
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("no result for {id} from {base}");
}

/// The store's view of every job (for completion counts).
async fn records(url: &str) -> Vec<egsolve_service::JobRecord> {
    let cache = tempfile::tempdir().unwrap();
    let mut config = egsolve_service::ServeConfig::for_tests(cache.path());
    config.database = Some(url.to_string());
    egsolve_service::stored_jobs(&config).await.unwrap()
}

/// What `egsolve solve --output text` prints for `body`: the credits from the CLI's default
/// backend, an independent check of the service's reference solve (credits are unique, so
/// every backend prints the same text; the reference would take the slow jobs' seconds again).
fn cli_answer(body: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.mpg");
    std::fs::write(&file, body).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args(["solve", "--output", "text"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

/// The worker process whose id (`HOST-PID-RANDOM`) names `worker`.
fn holder<'a>(workers: &'a [Proc], worker: &str) -> &'a Proc {
    workers
        .iter()
        .find(|w| worker.contains(&format!("-{}-", w.pid())))
        .unwrap_or_else(|| panic!("no worker process is {worker}"))
}

/// A job the reference solver takes a few seconds on (n² lifts): long enough to be seen
/// running, then killed or frozen, on a loaded 2-core machine.
const SLOW: u32 = 16_000;

/// What [`Cluster::slow_job`] starts: the API host (kept running) and its base URL, the
/// workers, the job's arena and id, and its view once running.
struct SlowJob {
    _api: Proc,
    base: String,
    workers: [Proc; 2],
    body: Vec<u8>,
    id: String,
    running: serde_json::Value,
}

impl SlowJob {
    /// Long-polls until the job is finished (at most two minutes); its view.
    async fn finished(&self, http: &reqwest::Client) -> serde_json::Value {
        let limit = Duration::from_secs(120);
        wait_for(http, &self.base, &self.id, limit, finished).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_s_job_finishes_once_on_another() {
    let Some((cluster, http)) = Cluster::shared(1500) else {
        return;
    };
    let job = cluster.slow_job(&http).await;
    let victim = holder(&job.workers, job.running["worker"].as_str().unwrap());
    victim.signal("-KILL");
    let killed = Instant::now();

    let done = job.finished(&http).await;
    let took = killed.elapsed();
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["attempts"], 2, "{done}");
    assert_ne!(done["worker"], job.running["worker"], "{done}");
    // Within the lease plus one solve (the solve as measured by the second attempt, plus
    // slack for a loaded machine: the heartbeat period and the claim).
    let solve = Duration::from_secs_f64(done["durations_ms"]["solve"].as_f64().unwrap() / 1e3);
    let bound = Duration::from_millis(cluster.lease_ms) + solve * 2 + Duration::from_secs(5);
    assert!(took <= bound, "re-run took {took:?}, bound {bound:?}");

    assert_eq!(
        result_text(&http, &job.base, &job.id).await,
        cli_answer(&job.body)
    );
    let stored = records(&cluster.url).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].state, stored[0].completions),
        (JobState::Succeeded, 1)
    );
}

/// A solve many leases long keeps its claim: the heartbeat renews it all along, so the job
/// succeeds on its first attempt and its worker never hears it lost one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_solve_many_leases_long_keeps_its_claim() {
    let Some((cluster, http)) = Cluster::shared(300) else {
        return;
    };
    let job = cluster.slow_job(&http).await;
    let done = job.finished(&http).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["attempts"], 1, "{done}");
    let solve_ms = done["durations_ms"]["solve"].as_f64().unwrap();
    assert!(
        solve_ms >= 3.0 * cluster.lease_ms as f64,
        "the solve ({solve_ms} ms) outlasts several leases"
    );
    for worker in &job.workers {
        assert!(
            !worker.log().contains("no longer this worker's"),
            "{}",
            worker.log()
        );
    }
    let stored = records(&cluster.url).await;
    assert_eq!(
        (stored[0].state, stored[0].attempts, stored[0].completions),
        (JobState::Succeeded, 1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_worker_past_its_lease_records_nothing() {
    let Some((cluster, http)) = Cluster::shared(1000) else {
        return;
    };
    let job = cluster.slow_job(&http).await;
    let frozen_id = job.running["worker"].as_str().unwrap().to_string();
    let frozen = holder(&job.workers, &frozen_id);
    frozen.signal("-STOP");
    let done = job.finished(&http).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["attempts"], 2, "{done}");
    frozen.signal("-CONT");

    // Resumed, the frozen worker learns its attempt is gone: its heartbeat stops the solve,
    // or, if the solve ends first, the fence refuses the result.
    let deadline = Instant::now() + Duration::from_secs(60);
    let noticed = |log: &str| {
        ["no longer this worker's", "late result refused"]
            .into_iter()
            .find(|line| log.contains(line))
    };
    while noticed(&frozen.log()).is_none() {
        assert!(
            Instant::now() < deadline,
            "the resumed worker never noticed: {}",
            frozen.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("the resumed worker: {:?}", noticed(&frozen.log()));
    let stored = records(&cluster.url).await;
    assert_eq!(
        (stored[0].state, stored[0].attempts, stored[0].completions),
        (JobState::Succeeded, 2, 1)
    );
    assert_ne!(stored[0].worker.as_deref(), Some(frozen_id.as_str()));
    assert_eq!(
        result_text(&http, &job.base, &job.id).await,
        cli_answer(&job.body)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_an_api_host_stops_the_solve_on_its_worker_within_a_second() {
    let Some((cluster, http)) = Cluster::shared(3000) else {
        return;
    };
    let (_api, base) = cluster.api();
    let _worker = cluster.worker();
    wait_registered(&http, &base, 2).await;
    // Far too long to finish by itself while the test runs.
    let id = submit(&http, &base, slow_cycle(60_000), "?backend=reference").await;
    let running = wait_running(&http, &base, &id).await;
    let worker_id = running["worker"].as_str().unwrap().to_string();
    let reply = http
        .delete(format!("{base}/v1/jobs/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let cancelled = Instant::now();
    // The worker's only slot is free again: it no longer holds the job, and a new job runs.
    loop {
        let listing = json(&http, &format!("{base}/v1/workers")).await.unwrap();
        let holds = listing["workers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["id"] == worker_id.as_str())
            .any(|w| !w["jobs"].as_array().unwrap().is_empty());
        if !holds {
            break;
        }
        assert!(cancelled.elapsed() < Duration::from_secs(5), "{listing}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let next = submit(&http, &base, small_arena(30, 5), "").await;
    let done = wait_for(&http, &base, &next, Duration::from_secs(30), finished).await;
    assert_eq!(done["state"], "succeeded");
    assert_eq!(
        done["worker"],
        worker_id.as_str(),
        "the same worker, free again"
    );
    let took = cancelled.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "the slot was freed after {took:?}"
    );
    let view = json(&http, &format!("{base}/v1/jobs/{id}")).await.unwrap();
    assert_eq!(view["state"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_job_succeeds_across_a_postgres_restart() {
    let Some(pg) = PgServer::dedicated() else {
        return;
    };
    let cluster = Cluster::new(pg.create_database(), 3000);
    let http = reqwest::Client::new();
    let (_api, base) = cluster.api();
    let _workers = [cluster.worker(), cluster.worker()];
    wait_registered(&http, &base, 3).await;

    let mut jobs = Vec::new();
    for seed in 0..3 {
        let body = slow_cycle(9000 + seed);
        jobs.push((
            submit(&http, &base, body.clone(), "?backend=reference").await,
            body,
        ));
    }
    for seed in 0..6 {
        let body = small_arena(80, seed);
        jobs.push((submit(&http, &base, body.clone(), "").await, body));
    }
    wait_for(&http, &base, &jobs[0].0, Duration::from_secs(60), |v| {
        v["state"] != "queued"
    })
    .await;
    pg.restart();
    for (id, body) in &jobs {
        let done = wait_for(&http, &base, id, Duration::from_secs(120), finished).await;
        assert_eq!(done["state"], "succeeded", "{done}");
        assert_eq!(result_text(&http, &base, id).await, cli_answer(body));
    }
    // Submissions work again too.
    let after = submit(&http, &base, small_arena(50, 99), "").await;
    let done = wait_for(&http, &base, &after, Duration::from_secs(60), finished).await;
    assert_eq!(done["state"], "succeeded");
    for record in records(&cluster.url).await {
        assert_eq!(record.completions, 1, "{}", record.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_and_two_apis_run_300_jobs_from_20_clients_once_each() {
    let Some((cluster, http)) = Cluster::shared(5000) else {
        return;
    };
    let (_api1, base1) = cluster.api();
    let (_api2, base2) = cluster.api();
    let _workers = [cluster.worker(), cluster.worker(), cluster.worker()];
    let listing = wait_registered(&http, &base1, 5).await;
    let apis = listing["workers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["api"] == true)
        .count();
    assert_eq!(apis, 2, "{listing}");

    let bases = Arc::new([base1.clone(), base2.clone()]);
    let mut clients = Vec::new();
    for client in 0..20u64 {
        let (http, bases) = (http.clone(), bases.clone());
        clients.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for k in 0..15u64 {
                let seed = client * 1000 + k;
                let body = small_arena(60, seed);
                let (here, there) = (&bases[(seed % 2) as usize], &bases[1 - (seed % 2) as usize]);
                let id = submit(&http, here, body.clone(), "").await;
                // Awaited and fetched on the other API host.
                let done = wait_for(&http, there, &id, Duration::from_secs(120), finished).await;
                assert_eq!(done["state"], "succeeded", "{done}");
                let text = result_text(&http, there, &id).await;
                assert_eq!(parse_text_result(&text), expected_answer(&body), "job {id}");
                ids.push(id);
            }
            ids
        }));
    }
    let mut all = std::collections::BTreeSet::new();
    for client in clients {
        all.extend(client.await.unwrap());
    }
    assert_eq!(all.len(), 300);
    let stored = records(&cluster.url).await;
    assert_eq!(stored.len(), 300, "none lost, none duplicated");
    for record in &stored {
        assert!(all.contains(&record.id.to_string()));
        assert_eq!(record.state, JobState::Succeeded, "{}", record.id);
        assert_eq!(record.completions, 1, "job {} completed twice", record.id);
    }
    let workers: std::collections::BTreeSet<_> =
        stored.iter().filter_map(|r| r.worker.clone()).collect();
    assert!(workers.len() >= 2, "the work was shared: {workers:?}");
}

/// Winners and credits from the reference solver, in-process.
fn expected_answer(body: &[u8]) -> Vec<(u8, Option<u64>)> {
    let game = egsolve_core::format::read(body, &Default::default()).unwrap();
    let solution = egsolve_core::solve::solve(
        &game.arena,
        egsolve_core::solve::Backend::Reference,
        &egsolve_core::solve::Control::new(),
    )
    .unwrap();
    solution
        .credit
        .iter()
        .map(|&c| {
            if c == u64::MAX {
                (1, None)
            } else {
                (0, Some(c))
            }
        })
        .collect()
}
