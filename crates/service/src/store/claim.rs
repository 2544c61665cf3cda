//! Claims, leases and fenced writes: how any number of workers (threads of one process on
//! SQLite, processes on many hosts on PostgreSQL) share one queue without losing a job or
//! running one twice to completion.
//!
//! - **Claim**: a worker with free slots reads the first queued jobs its slots could take
//!   (priority, then FIFO), locking them with `FOR UPDATE SKIP LOCKED` on PostgreSQL so
//!   concurrent claimers skip each other's rows, lets the scheduler pick a slot for each,
//!   and moves the picked ones to `running` with `attempts + 1`, its worker id and a lease.
//! - **Lease**: a running job belongs to its worker until `lease_expires_at` (the
//!   database's clock). The worker's heartbeat renews it ([`Store::renew`]); a renewal that
//!   matches no row tells the worker the job is no longer its own (cancelled, or taken over).
//! - **Expiry**: [`Store::reap_expired`] puts jobs whose lease ran out back in the queue (the
//!   next claim is attempt + 1), or fails them once `max_attempts` were lost that way.
//! - **Fence**: every write a worker makes about its job (success, failure, re-queue) is
//!   guarded by (id, attempt, worker, `running`), in one transaction with the result, so a
//!   late worker whose lease was taken over can neither overwrite nor duplicate a result.

use sqlx::Row;

use super::chunks::{ChunkWriter, Table};
use super::group_commit::SuccessRow;
use super::{Dialect, Store, StoreError, StoreEvent, now_ms, with_pool};
use crate::job::{BackendChoice, Failure, JobId, ResultSummary};
use egsolve_core::solve::ProgressSnapshot;

/// What a claiming worker's free slots could take (the SQL filter; the scheduler's
/// [`pick_slot`](crate::scheduler::pick_slot) makes the final choice).
#[derive(Debug, Clone)]
pub struct ClaimRequest {
    /// The claiming worker's id (the lease owner).
    pub worker: String,
    /// Lease length, milliseconds.
    pub lease_ms: u64,
    /// Free GPU slots.
    pub free_gpus: usize,
    /// Memory of the largest free GPU.
    pub largest_free_gpu_memory: u64,
    /// Free CPU slots.
    pub free_cpus: usize,
    /// Memory of the largest GPU of the worker, free or not (`None`: no GPU).
    pub largest_gpu_memory: Option<u64>,
    /// While GPUs are busy, `auto` jobs with at most this many edges may run on the CPU.
    pub small_edges: u64,
    /// While GPUs are busy, `auto` jobs that waited this long may run on the CPU.
    pub max_wait_ms: u64,
}

/// A queued job as a claim sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The id.
    pub id: JobId,
    /// Requested backend.
    pub backend: BackendChoice,
    /// Edge count when known, else an estimate from the arena size.
    pub edges_estimate: u64,
    /// Device memory the solve needs (estimate).
    pub memory_estimate: u64,
    /// How long it has been queued, milliseconds (the database's clock).
    pub waited_ms: u64,
    /// `auto` on a parity game without credits (a CPU job; see `QueuedJob::parity_answer`).
    pub parity_answer: bool,
}

/// Where a claimed job runs: the slot, and the backend and device names it records.
#[derive(Debug, Clone)]
pub struct Placement<T> {
    /// The caller's slot.
    pub slot: T,
    /// Backend name recorded in the job.
    pub backend: String,
    /// Device name recorded in the job (`cpu`, `gpu:N`).
    pub device: String,
}

/// A job this worker now holds.
#[derive(Debug, Clone)]
pub struct Claimed<T> {
    /// The job as it was queued.
    pub job: Candidate,
    /// Its attempt number (the fence of every later write).
    pub attempt: i64,
    /// Where it runs.
    pub placement: Placement<T>,
}

/// Device memory the job's solve needs: admission's one estimate, stored with the job
/// (`admission::gpu_need`, or `gpu_need_unparsed` before the parse).
const MEMORY_SQL: &str = "j.gpu_memory";
const EDGES_SQL: &str = "COALESCE(j.edges, a.bytes / 8)";
/// `auto` on a parity game without credits: the parity solver's answer, on a CPU slot.
const PARITY_ANSWER_SQL: &str =
    "(j.backend = 'auto' AND COALESCE(j.parity, 0) = 1 AND j.credits = 0)";

/// The running job's fence: its row, its attempt, its worker, still running.
const FENCE: &str = "id = $1 AND attempts = $2 AND worker = $3 AND state = 'running'";

/// A job that this attempt of this worker finished: its answer, or its own error (not a
/// lease that ran out).
const FINISHED_BY_THIS_ATTEMPT: &str = "SELECT 1 FROM jobs WHERE id = $1 AND attempts = $2 AND worker = $3 \
     AND (state = 'succeeded' OR (state = 'failed' AND error_type <> 'worker-lost'))";

/// Columns cleared whenever a job leaves `running`.
const LEAVE_RUNNING: &str = "lease_expires_at = NULL, progress_round = NULL, progress_frontier = NULL, progress_lifts = NULL";

fn clamp(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// What a succeeded attempt records ([`Store::succeed`]).
#[derive(Debug, Clone, Copy)]
pub struct Success<'a> {
    /// The result's content key (the local result file's name).
    pub result_key: &'a str,
    /// The result's summary.
    pub summary: &'a ResultSummary,
    /// The solve's time.
    pub solve_ms: f64,
    /// Where the answer was computed (`cpu`, `gpu:N`).
    pub device: &'a str,
}

impl Store {
    /// Claims queued jobs for free slots: `pick` is asked, in queue order, for a placement of
    /// each candidate (and records what it gave away); each placed job moves to `running`
    /// under a lease of `request.worker`. Returns the jobs claimed.
    pub async fn claim<T>(
        &self,
        request: &ClaimRequest,
        mut pick: impl FnMut(&Candidate) -> Option<Placement<T>>,
    ) -> Result<Vec<Claimed<T>>, StoreError> {
        let free = request.free_gpus + request.free_cpus;
        if free == 0 {
            return Ok(Vec::new());
        }
        let dialect = self.dialect();
        let now = dialect.now_ms();
        let lock = match dialect {
            Dialect::Sqlite => "",
            Dialect::Postgres => "FOR UPDATE OF j SKIP LOCKED",
        };
        let select = format!(
            "SELECT j.id, j.backend, {EDGES_SQL} AS edges_estimate, \
             {MEMORY_SQL} AS memory_estimate, {now} - j.queued_at AS waited, \
             CASE WHEN {PARITY_ANSWER_SQL} THEN CAST(1 AS BIGINT) ELSE CAST(0 AS BIGINT) END \
             AS parity_answer \
             FROM jobs j JOIN arenas a ON a.hash = j.arena_hash \
             WHERE j.state = 'queued' AND ( \
               ($1 > 0 AND j.backend IN ('auto', 'gpu') AND NOT {PARITY_ANSWER_SQL} \
                 AND {MEMORY_SQL} <= $2) \
               OR ($3 > 0 AND (j.backend IN ('cpu', 'reference', 'parity') OR {PARITY_ANSWER_SQL} \
                 OR (j.backend = 'auto' AND \
                 ({MEMORY_SQL} > $4 OR {EDGES_SQL} <= $5 OR j.queued_at <= {now} - $6)) \
                 OR (j.backend = 'gpu' AND $4 >= 0 AND {MEMORY_SQL} > $4)))) \
             ORDER BY j.priority DESC, j.seq LIMIT $7 {lock}"
        );
        let update = format!(
            "UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = $1, \
             backend_used = $2, device = $3, worker = $4, lease_expires_at = {now} + $5, \
             progress_round = NULL, progress_frontier = NULL, progress_lifts = NULL \
             WHERE id = $6 AND state = 'queued' RETURNING attempts"
        );
        let limit = (free * 4 + 8) as i64;
        let mut claimed = Vec::new();
        // PostgreSQL: one transaction holds the candidates' row locks until the claims
        // commit. SQLite: `BEGIN IMMEDIATE` takes the write lock first (a deferred
        // read-then-write transaction could not upgrade past a concurrent writer).
        with_pool!(self, pool => {
            let mut tx = pool.begin_with(dialect.begin_relaxed()).await?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(select))
                .bind(request.free_gpus as i64)
                .bind(clamp(request.largest_free_gpu_memory))
                .bind(request.free_cpus as i64)
                .bind(request.largest_gpu_memory.map_or(-1, clamp))
                .bind(clamp(request.small_edges))
                .bind(clamp(request.max_wait_ms))
                .bind(limit)
                .fetch_all(&mut *tx)
                .await?;
            for row in rows {
                let id: String = row.try_get(0)?;
                let backend: String = row.try_get(1)?;
                let job = Candidate {
                    id: JobId::parse_str(&id)
                        .map_err(|_| StoreError::Corrupt("id".into()))?,
                    backend: BackendChoice::parse(&backend)
                        .ok_or_else(|| StoreError::Corrupt("backend".into()))?,
                    edges_estimate: row.try_get::<i64, _>(2)?.max(0) as u64,
                    memory_estimate: row.try_get::<i64, _>(3)?.max(0) as u64,
                    waited_ms: row.try_get::<Option<i64>, _>(4)?.unwrap_or(0).max(0) as u64,
                    parity_answer: row.try_get::<i64, _>(5)? == 1,
                };
                let Some(placement) = pick(&job) else { continue };
                let attempt: Option<i64> = sqlx::query(sqlx::AssertSqlSafe(update.as_str()))
                    .bind(now_ms())
                    .bind(&placement.backend)
                    .bind(&placement.device)
                    .bind(&request.worker)
                    .bind(clamp(request.lease_ms))
                    .bind(job.id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?
                    .map(|r| r.try_get(0))
                    .transpose()?;
                if let Some(attempt) = attempt {
                    claimed.push(Claimed { job, attempt, placement });
                }
            }
            tx.commit().await?;
        });
        for c in &claimed {
            self.announce(StoreEvent::Changed(c.job.id));
        }
        Ok(claimed)
    }

    /// Renews the leases of `worker`'s running jobs (id, attempt, progress) and records
    /// their progress. Returns the jobs that are no longer this worker's: cancelled, failed
    /// as `worker-lost`, or re-queued after their lease expired. Their solves should stop.
    /// A job this worker finished itself (succeeded, or failed with its own error) after
    /// the caller listed it is not lost: the heartbeat reads the held jobs, then renews,
    /// and a solve may end in between.
    pub async fn renew(
        &self,
        worker: &str,
        lease_ms: u64,
        jobs: &[(JobId, i64, ProgressSnapshot)],
    ) -> Result<Vec<JobId>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "UPDATE jobs SET lease_expires_at = {} + $4, progress_round = $5, \
             progress_frontier = $6, progress_lifts = $7 WHERE {FENCE}",
            self.dialect().now_ms()
        );
        let mut lost = Vec::new();
        let begin = self.dialect().begin_relaxed();
        with_pool!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            for (id, attempt, progress) in jobs {
                let done = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .bind(id.to_string())
                    .bind(*attempt)
                    .bind(worker)
                    .bind(clamp(lease_ms))
                    .bind(clamp(progress.round))
                    .bind(clamp(progress.frontier))
                    .bind(clamp(progress.lifts))
                    .execute(&mut *tx)
                    .await?;
                if done.rows_affected() == 0 {
                    let finished = sqlx::query(FINISHED_BY_THIS_ATTEMPT)
                        .bind(id.to_string())
                        .bind(*attempt)
                        .bind(worker)
                        .fetch_optional(&mut *tx)
                        .await?;
                    if finished.is_none() {
                        lost.push(*id);
                    }
                }
            }
            tx.commit().await?;
        });
        Ok(lost)
    }

    /// Jobs whose lease expired (their worker died, froze or lost the database): back to
    /// the queue, or `failed` (`worker-lost`) when `max_attempts` attempts were started.
    /// Returns (re-queued, failed).
    pub async fn reap_expired(&self, max_attempts: u32) -> Result<(u64, u64), StoreError> {
        let now = self.dialect().now_ms();
        let fail = format!(
            "UPDATE jobs SET state = 'failed', finished_at = $1, error_type = 'worker-lost', \
             error_message = $2 || COALESCE(worker, 'unknown'), {LEAVE_RUNNING} \
             WHERE state = 'running' AND lease_expires_at < {now} AND attempts >= $3 RETURNING id"
        );
        let requeue = format!(
            "UPDATE jobs SET state = 'queued', queued_at = {now}, started_at = NULL, \
             backend_used = NULL, device = NULL, {LEAVE_RUNNING} \
             WHERE state = 'running' AND lease_expires_at < {now} RETURNING id"
        );
        let message = format!(
            "the worker running this job stopped renewing its lease on each of {max_attempts} \
             attempts (a crash, a freeze or a lost database connection): check the workers' \
             logs; the last worker was "
        );
        let (failed, requeued): (Vec<String>, Vec<String>) = with_pool!(self, pool => {
            let failed = sqlx::query(sqlx::AssertSqlSafe(fail))
                .bind(now_ms())
                .bind(&message)
                .bind(max_attempts as i64)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?;
            let requeued = sqlx::query(sqlx::AssertSqlSafe(requeue))
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?;
            (failed, requeued)
        });
        for id in failed.iter().filter_map(|s| JobId::parse_str(s).ok()) {
            tracing::warn!(job = %id, "job failed: its workers' leases expired {max_attempts} times");
            self.announce(StoreEvent::Changed(id));
        }
        for id in requeued.iter().filter_map(|s| JobId::parse_str(s).ok()) {
            tracing::warn!(job = %id, "lease expired: the job is queued again");
            self.announce(StoreEvent::Queued(id));
        }
        Ok((requeued.len() as u64, failed.len() as u64))
    }

    /// Moves every `running` job back to `queued` (a single-host store after a crash);
    /// returns how many.
    pub async fn requeue_running(&self) -> Result<u64, StoreError> {
        let sql = format!(
            "UPDATE jobs SET state = 'queued', queued_at = {}, started_at = NULL, \
             backend_used = NULL, device = NULL, {LEAVE_RUNNING} WHERE state = 'running'",
            self.dialect().now_ms()
        );
        let done = with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done)
    }

    /// Moves this worker's running attempt back to `queued` (graceful shutdown).
    pub async fn requeue(&self, id: JobId, attempt: i64, worker: &str) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE jobs SET state = 'queued', queued_at = {}, started_at = NULL, \
             backend_used = NULL, device = NULL, {LEAVE_RUNNING} WHERE {FENCE}",
            self.dialect().now_ms()
        );
        let done = with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .bind(attempt)
            .bind(worker)
            .execute(pool)
            .await?
            .rows_affected());
        if done == 1 {
            self.announce(StoreEvent::Queued(id));
        }
        Ok(done == 1)
    }

    /// This worker's running attempt → `failed`.
    pub async fn fail_attempt(
        &self,
        id: JobId,
        attempt: i64,
        worker: &str,
        failure: &Failure,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE jobs SET state = 'failed', finished_at = $4, error_type = $5, \
             error_message = $6, error_line = $7, error_column = $8, {LEAVE_RUNNING} WHERE {FENCE}"
        );
        let done = with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .bind(attempt)
            .bind(worker)
            .bind(now_ms())
            .bind(&failure.kind)
            .bind(&failure.message)
            .bind(failure.line.map(|l| l as i64))
            .bind(failure.column.map(|c| c as i64))
            .execute(pool)
            .await?
            .rows_affected());
        self.announce(StoreEvent::Changed(id));
        Ok(done == 1)
    }

    /// This worker's running attempt → `succeeded`, with the result's summary (and, on
    /// PostgreSQL, its bytes from the local result file, unless that result is stored
    /// already), fenced on (id, attempt, worker): false, and nothing written, when the
    /// attempt is no longer this worker's. The local result file must be synced.
    ///
    /// Successes are committed in groups (`group_commit`): the many small jobs of a
    /// batch finish on every core at once, and one commit (one log flush) for all that are
    /// waiting, instead of one each, keeps the store from being their bottleneck.
    pub async fn succeed(
        &self,
        id: JobId,
        attempt: i64,
        worker: &str,
        success: &Success<'_>,
    ) -> Result<bool, StoreError> {
        let row = SuccessRow {
            id,
            attempt,
            worker: worker.to_string(),
            result_key: success.result_key.to_string(),
            summary_json: serde_json::to_string(success.summary).expect("summary serializes"),
            backend: success.summary.backend.clone(),
            solve_ms: success.solve_ms,
            device: success.device.to_string(),
        };
        let done = self
            .successes
            .submit(row, |rows| async move { self.succeed_group(&rows).await })
            .await?;
        if done {
            self.announce(StoreEvent::Changed(id));
        } else {
            tracing::warn!(
                job = %id,
                attempt,
                "late result refused: this attempt is no longer this worker's (cancelled, or its lease expired and another attempt took over)"
            );
        }
        Ok(done)
    }

    /// Records `rows` in one transaction, each under its own savepoint: a row whose fence
    /// fails is rolled back alone. Each row's outcome, in order. (Successes are committed
    /// in groups: see [`super::group_commit`].)
    async fn succeed_group(&self, rows: &[SuccessRow]) -> Result<Vec<bool>, StoreError> {
        // The backend and device where the answer was computed (the claim recorded the
        // slot's; a race, or a GPU job the device could not take, may have answered
        // elsewhere).
        let fenced = format!(
            "UPDATE jobs SET state = 'succeeded', finished_at = $4, completions = completions + 1, \
             result_key = $5, solve_ms = $6, backend_used = $7, device = $8, {LEAVE_RUNNING} \
             WHERE {FENCE}"
        );
        let begin = self.dialect().begin();
        let mut outcomes = Vec::with_capacity(rows.len());
        with_pool!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            for row in rows {
                sqlx::query("SAVEPOINT one_success").execute(&mut *tx).await?;
                // The result row first: the job row references it.
                sqlx::query(
                    "INSERT INTO results (key, summary, created_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (key) DO UPDATE SET summary = excluded.summary",
                )
                .bind(&row.result_key)
                .bind(&row.summary_json)
                .bind(now_ms())
                .execute(&mut *tx)
                .await?;
                let done = sqlx::query(sqlx::AssertSqlSafe(fenced.as_str()))
                    .bind(row.id.to_string())
                    .bind(row.attempt)
                    .bind(&row.worker)
                    .bind(now_ms())
                    .bind(&row.result_key)
                    .bind(row.solve_ms)
                    .bind(&row.backend)
                    .bind(&row.device)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if done == 1 {
                    let path = self.result_path(&row.result_key);
                    tx.store_chunks_if_absent(Table::Results, &row.result_key, &path)
                        .await?;
                    sqlx::query("RELEASE SAVEPOINT one_success").execute(&mut *tx).await?;
                } else {
                    sqlx::query("ROLLBACK TO SAVEPOINT one_success").execute(&mut *tx).await?;
                    sqlx::query("RELEASE SAVEPOINT one_success").execute(&mut *tx).await?;
                }
                outcomes.push(done == 1);
            }
            tx.commit().await?;
        });
        Ok(outcomes)
    }
}
