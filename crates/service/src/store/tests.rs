//! The store's claims, leases and fence on both engines, driven directly (no server): a job
//! is claimed by one worker at a time; a lease that expires puts it back in the queue with
//! the next attempt; a late worker's renewal reports the job lost and its result is refused,
//! so the job completes exactly once, and a renewal racing the job's own completion is no
//! lost lease; a job that loses `max_attempts` leases ends `failed` (`worker-lost`). A
//! batch's jobs, inserted many rows a statement, read back in order as they started.

use std::time::Duration;

use egsolve_test_support::postgres::PgServer;
use egsolve_test_support::small_arena;

use super::claim::{Candidate, ClaimRequest, Placement};
use super::{NewJob, Store};
use crate::job::{BackendChoice, InputFormat, JobId, JobOptions, JobState, ReturnKind};

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    /// The embedded SQLite store in the test's directory.
    Sqlite,
    /// A fresh database on the test binary's throwaway PostgreSQL server.
    Postgres,
}

async fn open(engine: Engine, dir: &std::path::Path) -> Store {
    let mut config = crate::ServeConfig::for_tests(dir);
    if engine == Engine::Postgres {
        let server = PgServer::shared().expect("checked before the case");
        config.database = Some(server.create_database());
    }
    Store::open_configured(config.database.as_deref(), dir, false)
        .await
        .unwrap()
}

fn request(worker: &str, lease_ms: u64) -> ClaimRequest {
    ClaimRequest {
        worker: worker.into(),
        lease_ms,
        free_gpus: 0,
        largest_free_gpu_memory: 0,
        free_cpus: 1,
        largest_gpu_memory: None,
        small_edges: 0,
        max_wait_ms: 0,
    }
}

/// A scheduler with one free CPU slot: places the first candidate only.
fn on_cpu() -> impl FnMut(&Candidate) -> Option<Placement<()>> {
    let mut free = true;
    move |_| {
        std::mem::take(&mut free).then(|| Placement {
            slot: (),
            backend: "reference".into(),
            device: "cpu".into(),
        })
    }
}

/// Stores `body` as an arena and queues a job on it.
/// Stores the arena `body` (its file and its row); its hash.
async fn stored_arena(store: &Store, body: &[u8]) -> String {
    use sha2::Digest;
    let hash = hex::encode(sha2::Sha256::digest(body));
    std::fs::write(store.arena_path(&hash), body).unwrap();
    store
        .insert_arena(&hash, body.len() as u64, None)
        .await
        .unwrap();
    hash
}

/// A job's options: `backend`, `priority` and `credits`, a minute's limit, credits returned.
fn job_options(backend: BackendChoice, priority: i64, credits: bool) -> JobOptions {
    JobOptions {
        backend,
        priority,
        time_limit_secs: 60,
        format: InputFormat::Auto,
        return_kind: ReturnKind::Credits,
        credits,
    }
}

/// Alice's queued job `id` on the stored arena `hash`.
fn alices_job<'a>(
    id: JobId,
    options: &'a JobOptions,
    hash: &'a str,
    parsed: Option<(crate::job::ArenaStats, f64)>,
    gpu_memory: u64,
) -> NewJob<'a> {
    NewJob {
        id,
        owner: "alice",
        options,
        arena_hash: hash,
        upload_ms: 0.0,
        parsed,
        gpu_memory,
        member: None,
    }
}

async fn queue(store: &Store, body: &[u8], priority: i64) -> (JobId, String) {
    let hash = stored_arena(store, body).await;
    let options = job_options(BackendChoice::Reference, priority, false);
    let id = JobId::now_v7();
    let need = crate::admission::gpu_need_unparsed(body.len() as u64);
    store
        .insert_job(&alices_job(id, &options, &hash, None, need))
        .await
        .unwrap();
    (id, hash)
}

/// The arena `body` (stored as `hash`) solved by the reference solver, its result file
/// written: the result's key and summary.
fn solved_result(store: &Store, body: &[u8], hash: &str) -> (String, crate::job::ResultSummary) {
    let game = egsolve_core::format::read(body, &Default::default()).unwrap();
    let control = egsolve_core::solve::Control::new();
    let backend = egsolve_core::solve::Backend::Reference;
    let solution = egsolve_core::solve::solve(&game.arena, backend, &control).unwrap();
    let key = crate::result_file::key(hash, InputFormat::Auto, BackendChoice::Auto);
    crate::result_file::write(&store.result_path(&key), &solution).unwrap();
    let summary = egsolve_core::output::Summary::new(&game.arena, &solution, 0);
    (key, summary)
}

/// A success on the CPU in `solve_ms`, with the result `key` and its `summary`.
fn on_cpu_in<'a>(
    key: &'a str,
    summary: &'a crate::job::ResultSummary,
    solve_ms: f64,
) -> super::claim::Success<'a> {
    super::claim::Success {
        result_key: key,
        summary,
        solve_ms,
        device: "cpu",
    }
}

async fn late_attempts_are_refused_by_the_fence(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(engine, dir.path()).await;
    let body = small_arena(30, 7);
    let (id, hash) = queue(&store, &body, 0).await;

    let first = store
        .claim(&request("worker-a", 300), on_cpu())
        .await
        .unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].job.id, first[0].attempt), (id, 1));
    assert!(
        store
            .claim(&request("worker-b", 300), on_cpu())
            .await
            .unwrap()
            .is_empty(),
        "a held job is claimed by nobody else"
    );
    // worker-a goes silent past its lease: the job is queued again, then worker-b's.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.reap_expired(3).await.unwrap(), (1, 0));
    let second = store
        .claim(&request("worker-b", 5000), on_cpu())
        .await
        .unwrap();
    assert_eq!((second[0].job.id, second[0].attempt), (id, 2));
    let progress = Default::default();
    assert_eq!(
        store
            .renew("worker-a", 300, &[(id, 1, progress)])
            .await
            .unwrap(),
        vec![id],
        "worker-a learns the job is no longer its own"
    );
    assert!(
        store
            .renew("worker-b", 5000, &[(id, 2, progress)])
            .await
            .unwrap()
            .is_empty()
    );

    // Both solve it; worker-b records first, worker-a's late result is refused.
    let (key, summary) = solved_result(&store, &body, &hash);
    let success = on_cpu_in(&key, &summary, 1.0);
    assert!(store.succeed(id, 2, "worker-b", &success).await.unwrap());
    // worker-b's heartbeat listed the job before it finished and renews after: a job it
    // finished itself is not a lost lease; worker-a's attempt still is.
    assert!(
        store
            .renew("worker-b", 5000, &[(id, 2, progress)])
            .await
            .unwrap()
            .is_empty(),
        "a renewal racing the job's own completion loses nothing"
    );
    assert_eq!(
        store
            .renew("worker-a", 300, &[(id, 1, progress)])
            .await
            .unwrap(),
        vec![id]
    );
    assert!(!store.succeed(id, 1, "worker-a", &success).await.unwrap());
    assert!(!store.succeed(id, 2, "worker-a", &success).await.unwrap());
    let job = store.job(id).await.unwrap().unwrap();
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!((job.attempts, job.completions), (2, 1));
    assert_eq!(job.worker.as_deref(), Some("worker-b"));
    assert_eq!(
        store.reusable_results(&[&key]).await.unwrap().remove(&key),
        Some(summary)
    );
    store.close().await;
}

async fn jobs_losing_every_attempt_fail_as_worker_lost(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(engine, dir.path()).await;
    let (low, _) = queue(&store, &small_arena(20, 1), 0).await;
    let (high, _) = queue(&store, &small_arena(20, 2), 5).await;
    for attempt in 1..=2 {
        let claimed = store
            .claim(&request("doomed", 300), on_cpu())
            .await
            .unwrap();
        let ids: Vec<JobId> = claimed.iter().map(|c| c.job.id).collect();
        assert_eq!(ids, [high], "priority first, one slot");
        assert_eq!(claimed[0].attempt, attempt);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let expected = if attempt < 2 { (1, 0) } else { (0, 1) };
        assert_eq!(store.reap_expired(2).await.unwrap(), expected);
    }
    let job = store.job(high).await.unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    let failure = job.failure.unwrap();
    assert_eq!(failure.kind, "worker-lost");
    assert!(failure.message.contains("doomed"), "{}", failure.message);
    assert_eq!(
        store
            .renew("doomed", 300, &[(high, 2, Default::default())])
            .await
            .unwrap(),
        vec![high],
        "a job failed as worker-lost is a lost lease, though its worker's name is on it"
    );
    let next = store
        .claim(&request("healthy", 5000), on_cpu())
        .await
        .unwrap();
    assert_eq!(next[0].job.id, low);
    store.close().await;
}

/// An `auto` job on a parity game without credits is the parity solver's answer, a CPU job:
/// a claim with only a free GPU slot leaves it queued; one with a CPU slot takes it, marked
/// as such. The same game asking for credits (the reduction on the GPU) is a GPU candidate,
/// and so is a job whose game is not parsed yet.
async fn parity_answers_are_claimed_for_cpu_slots_only(engine: Engine) {
    use crate::job::ArenaStats;
    let dir = tempfile::tempdir().unwrap();
    let store = open(engine, dir.path()).await;
    let stats = |parity| ArenaStats {
        vertices: 3,
        edges: 3,
        bound: 9,
        parity,
    };
    let mut ids = Vec::new();
    for (k, (credits, parsed)) in [(false, Some(true)), (true, Some(true)), (false, None)]
        .into_iter()
        .enumerate()
    {
        let body = format!("parity 2;\n0 1 0 1;\n1 2 1 2;\n2 {k} 0 0;\n");
        let hash = stored_arena(&store, body.as_bytes()).await;
        let options = job_options(BackendChoice::Auto, 0, credits);
        let id = JobId::now_v7();
        let parsed = parsed.map(|parity| (stats(parity), 1.0));
        let need = crate::admission::gpu_need(3, 3);
        store
            .insert_job(&alices_job(id, &options, &hash, parsed, need))
            .await
            .unwrap();
        ids.push(id);
    }
    let on_gpu = ClaimRequest {
        free_gpus: 1,
        largest_free_gpu_memory: 1 << 40,
        free_cpus: 0,
        largest_gpu_memory: Some(1 << 40),
        ..request("gpu-host", 5000)
    };
    let mut offered = Vec::new();
    let claimed = store
        .claim(&on_gpu, |candidate| {
            offered.push((candidate.id, candidate.parity_answer));
            None::<Placement<()>>
        })
        .await
        .unwrap();
    assert!(claimed.is_empty());
    assert_eq!(
        offered,
        [(ids[1], false), (ids[2], false)],
        "a GPU slot is offered the credits job and the unparsed one"
    );
    let mut offered = Vec::new();
    store
        .claim(&request("cpu-host", 5000), |candidate| {
            offered.push((candidate.id, candidate.parity_answer));
            None::<Placement<()>>
        })
        .await
        .unwrap();
    assert_eq!(offered.first(), Some(&(ids[0], true)), "{offered:?}");
    store.close().await;
}

/// A batch's jobs go in as multi-row inserts, a run of one kind at a time: the kinds
/// interleaved, one run longer than an insert takes, and every job reads back in the
/// archive's order, started the way it was given (queued; reusing a result; solved).
async fn a_batch_reads_back_in_order_however_its_jobs_started(engine: Engine) {
    use super::submissions::ROWS_PER_INSERT;
    use super::{BatchStart, Reuse};
    let dir = tempfile::tempdir().unwrap();
    let store = open(engine, dir.path()).await;
    let body = small_arena(20, 3);
    let hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(&body))
    };
    std::fs::write(store.arena_path(&hash), &body).unwrap();
    let (key, summary) = solved_result(&store, &body, &hash);
    let success = on_cpu_in(&key, &summary, 1.5);
    let reuse = Reuse {
        key: &key,
        summary: &summary,
    };
    // Twenty alternating, a run of solved ones past one insert's rows, then all three in turn.
    let long_run = 20..20 + ROWS_PER_INSERT + 10;
    let start = |i: usize| {
        let kinds = [
            BatchStart::Queued,
            BatchStart::Reused(reuse),
            BatchStart::Solved(success),
        ];
        match i {
            0..20 => kinds[i % 2],
            _ if long_run.contains(&i) => kinds[2],
            _ => kinds[i % 3],
        }
    };
    let members = long_run.end + 40;
    let batch = JobId::now_v7();
    let options = job_options(BackendChoice::Auto, 0, false);
    let names: Vec<String> = (0..members).map(|i| format!("m{i}.gm")).collect();
    let ids: Vec<JobId> = names.iter().map(|_| JobId::now_v7()).collect();
    let jobs: Vec<_> = (0..members)
        .map(|i| {
            let job = NewJob {
                member: Some((batch, names[i].as_str())),
                ..alices_job(ids[i], &options, &hash, None, 0)
            };
            (job, start(i))
        })
        .collect();
    let arenas = vec![(hash.as_str(), body.len() as u64); members];
    store.insert_batch(&arenas, &jobs).await.unwrap();

    let read = store.batch_jobs(batch).await.unwrap();
    assert_eq!(read.iter().map(|j| j.id).collect::<Vec<_>>(), ids);
    for (i, job) in read.iter().enumerate() {
        let member = job.batch.as_ref().unwrap();
        assert_eq!(
            (member.batch, member.name.as_str()),
            (batch, names[i].as_str())
        );
        let (state, device, result_key) = match start(i) {
            BatchStart::Queued => (JobState::Queued, None, None),
            BatchStart::Reused(_) => (JobState::Succeeded, Some("cache"), Some(key.as_str())),
            BatchStart::Solved(_) => (JobState::Succeeded, Some("cpu"), Some(key.as_str())),
        };
        assert_eq!(job.state, state, "member {i}");
        assert_eq!(job.device.as_deref(), device, "member {i}");
        assert_eq!(job.result_key.as_deref(), result_key, "member {i}");
        assert_eq!(
            job.reused,
            matches!(start(i), BatchStart::Reused(_)),
            "member {i}"
        );
        // The solve's own figures, and the times: a queued job has not started; one that
        // starts finished started and finished at its creation.
        let solved = matches!(start(i), BatchStart::Solved(_));
        assert_eq!(job.solve_ms, solved.then_some(1.5), "member {i}");
        let started = (state == JobState::Succeeded).then_some(job.created_at);
        assert_eq!(
            (job.started_at, job.finished_at),
            (started, started),
            "member {i}"
        );
        let backend = (state == JobState::Succeeded).then_some(summary.backend.as_str());
        assert_eq!(job.backend_used.as_deref(), backend, "member {i}");
    }
    store.close().await;
}

/// Each case on both stores: `sqlite::CASE` and `postgres::CASE` (skipped, with the reason
/// printed, where no PostgreSQL server can start and `CI` is unset).
macro_rules! on_both_stores {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(super::Engine::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    if egsolve_test_support::postgres::PgServer::shared().is_none() {
                        return;
                    }
                    super::$case(super::Engine::Postgres).await
                }
            )*
        }
    };
}

/// The claim compares the GPU estimate the job's row holds (admission's, written when it
/// was queued) with the free devices: a `gpu` job goes to a GPU slot only where it fits,
/// and to a CPU slot where it fits none of the host's GPUs.
async fn the_claim_compares_the_stored_gpu_estimate(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(engine, dir.path()).await;
    let body = small_arena(20, 4);
    let hash = stored_arena(&store, &body).await;
    let options = job_options(BackendChoice::Gpu, 0, false);
    let id = JobId::now_v7();
    store
        .insert_job(&alices_job(id, &options, &hash, None, 5000))
        .await
        .unwrap();
    let on_gpu = |free_memory: u64| ClaimRequest {
        free_gpus: 1,
        largest_free_gpu_memory: free_memory,
        free_cpus: 0,
        largest_gpu_memory: Some(1 << 40),
        ..request("gpu-host", 5000)
    };
    for (free_memory, offered) in [(4999, None), (5000, Some(5000))] {
        let mut seen = None;
        store
            .claim(&on_gpu(free_memory), |candidate| {
                seen = Some(candidate.memory_estimate);
                None::<Placement<()>>
            })
            .await
            .unwrap();
        assert_eq!(seen, offered, "a GPU with {free_memory} bytes free");
    }
    let small_gpus = ClaimRequest {
        largest_gpu_memory: Some(4999),
        ..request("small-gpu-host", 5000)
    };
    let claimed = store.claim(&small_gpus, on_cpu()).await.unwrap();
    assert_eq!(
        claimed.len(),
        1,
        "too large for every GPU here: a CPU slot runs it"
    );
    store.close().await;
}

on_both_stores!(
    the_claim_compares_the_stored_gpu_estimate,
    late_attempts_are_refused_by_the_fence,
    jobs_losing_every_attempt_fail_as_worker_lost,
    parity_answers_are_claimed_for_cpu_slots_only,
    a_batch_reads_back_in_order_however_its_jobs_started,
);
