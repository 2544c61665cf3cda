//! The persistent job store, on one of two engines behind one handle ([`Store`]):
//!
//! - **SQLite** (the default; one host, no setup): `jobs.db` in the data directory (sqlx,
//!   WAL, `synchronous = FULL` by default), arenas and results as files beside it;
//! - **PostgreSQL** (`--database postgres://…`; any number of hosts): the same tables, plus
//!   arena and result bytes in chunks ([`blobs`]), state-change notifications
//!   (`LISTEN egsolve`, [`notify`]) and the worker registry ([`workers`]). The data directory
//!   is then only this host's cache of those bytes.
//!
//! Both engines run the same SQL (sqlx accepts `$N` parameters on both) except where a
//! dialect differs ([`Dialect`]): the clock and the claim's row locks. The store owns the
//! job state machine's transitions — each is one guarded `UPDATE`, so a transition that no
//! longer applies (a job cancelled meanwhile, a stale attempt, a lease another worker took
//! over) does nothing — and claims and leases ([`claim`]). It knows nothing about HTTP or
//! scheduling.
//!
//! Local layout (both engines): `arenas/<sha256>`, `results/<key>`, `tmp/` (uploads in
//! progress, emptied at start-up), and for SQLite `jobs.db`.

pub mod blobs;
mod chunks;
pub mod claim;
mod group_commit;
pub mod migrate;
pub mod notify;
mod results;
mod schema;
mod submissions;
#[cfg(test)]
mod tests;
pub mod workers;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ColumnIndex, Decode, Row, Type};
use tokio::sync::broadcast;

use super::job::{
    ArenaStats, BackendChoice, BatchMember, Failure, InputFormat, JobId, JobOptions, JobRecord,
    JobState, ResultSummary, ReturnKind,
};
pub use notify::StoreEvent;
pub use submissions::{BatchStart, NewJob, Reuse};

/// Store failures (all are server-side problems).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused a query or could not be reached.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// The schema could not be brought up to date.
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A file operation failed.
    #[error("data directory error: {0}")]
    Io(#[from] std::io::Error),
    /// A stored row does not decode.
    #[error("corrupt job row: {0}")]
    Corrupt(String),
    /// Stored bytes are missing (an arena or result row without its content).
    #[error("stored bytes missing: {0}")]
    Missing(String),
}

impl StoreError {
    /// Whether retrying may succeed (the database is restarting or unreachable).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Database(e) => {
                matches!(
                    e,
                    sqlx::Error::Io(_)
                        | sqlx::Error::PoolTimedOut
                        | sqlx::Error::Protocol(_)
                        | sqlx::Error::Tls(_)
                        | sqlx::Error::WorkerCrashed
                ) || e.as_database_error().is_some_and(|d| {
                    // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
                    // 08xxx connection exceptions, 40001 serialization failure, SQLite BUSY.
                    d.code().is_some_and(|c| {
                        c.starts_with("57P") || c.starts_with("08") || c == "40001" || c == "5"
                    })
                })
            }
            _ => false,
        }
    }
}

/// Which engine, with its pool.
#[derive(Debug, Clone)]
pub(crate) enum Pool {
    /// The embedded single-host store.
    Sqlite(SqlitePool),
    /// The shared store of several hosts.
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to the engine's pool: the same SQL text for both, each
/// arm compiled for its own driver.
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            $crate::store::Pool::Sqlite($pool) => $body,
            $crate::store::Pool::Postgres($pool) => $body,
        }
    };
}
pub(crate) use with_pool;

/// Where the engines' SQL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite 3.
    Sqlite,
    /// PostgreSQL 13+.
    Postgres,
}

impl Dialect {
    /// The statement that opens a write transaction: SQLite's takes the write lock at once
    /// (a deferred transaction that reads first cannot upgrade past a concurrent writer).
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// [`Dialect::begin`] for a transaction whose commit need not wait for its WAL flush
    /// (PostgreSQL's `synchronous_commit = off`, set in the same round trip), for commits
    /// whose loss in a database crash is harmless: a claim (the job runs again; the worker's
    /// later writes are fenced out), a lease renewal, or an arena whose job's synchronous
    /// commit — before the `202` — flushes the log up to it anyway.
    pub fn begin_relaxed(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN; SET LOCAL synchronous_commit = off",
        }
    }

    /// The database's clock in milliseconds since the epoch. Leases and queue waits are
    /// measured on it, so hosts with skewed clocks agree.
    pub fn now_ms(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
            Dialect::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
        }
    }
}

/// Handle to the store; cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    /// The engine and its connection pool.
    pub(crate) pool: Pool,
    /// The data directory (SQLite: the store itself; Postgres: this host's cache).
    root: PathBuf,
    /// State changes: written by this store (SQLite) or heard from the database (Postgres).
    events: broadcast::Sender<StoreEvent>,
    /// Successes waiting for their group's commit ([`Store::succeed`]).
    successes: Arc<group_commit::GroupCommit<group_commit::SuccessRow>>,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The columns of a job row, in [`decode_job`]'s names.
const JOB_COLUMNS: &str = "seq, id, owner, state, priority, backend, time_limit_secs, format, \
     return_kind, arena_hash, created_at, started_at, finished_at, attempts, completions, \
     backend_used, device, vertices, edges, bound, result_key, reused, error_type, \
     error_message, error_line, error_column, upload_ms, parse_ms, solve_ms, worker, \
     progress_round, progress_frontier, progress_lifts, credits, parity, batch, member";

/// Creates the local directories and empties `tmp/`.
fn prepare_dirs(root: &Path) -> Result<(), StoreError> {
    for dir in ["arenas", "results", "tmp"] {
        std::fs::create_dir_all(root.join(dir))?;
    }
    for entry in std::fs::read_dir(root.join("tmp"))? {
        let _ = std::fs::remove_file(entry?.path());
    }
    Ok(())
}

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `root` and applies migrations.
    pub async fn open(root: &Path, sync_commits: bool) -> Result<Store, StoreError> {
        prepare_dirs(root)?;
        let options = SqliteConnectOptions::new()
            .filename(root.join("jobs.db"))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(if sync_commits {
                SqliteSynchronous::Full
            } else {
                SqliteSynchronous::Normal
            })
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        schema::sqlite_migrator().run(&pool).await?;
        Ok(Store {
            pool: Pool::Sqlite(pool),
            root: root.to_owned(),
            events: broadcast::channel(1024).0,
            successes: Arc::default(),
        })
    }

    /// Connects to the PostgreSQL database at `url` (applying migrations; concurrent
    /// starts are serialized by sqlx's migration lock), with `cache` as this host's copy of
    /// arena and result bytes, and starts listening for state changes.
    pub async fn open_postgres(url: &str, cache: &Path) -> Result<Store, StoreError> {
        Store::open_postgres_with(url, cache, true).await
    }

    /// [`Store::open_postgres`]; with `sync_commits` off, no commit waits for its WAL flush
    /// (safe against crashes of egsolve; a PostgreSQL crash may lose the last commits).
    pub async fn open_postgres_with(
        url: &str,
        cache: &Path,
        sync_commits: bool,
    ) -> Result<Store, StoreError> {
        prepare_dirs(cache)?;
        let mut options = PgConnectOptions::from_str(url)?.application_name("egsolve");
        if !sync_commits {
            options = options.options([("synchronous_commit", "off")]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        schema::postgres_migrator().run(&pool).await?;
        let events = broadcast::channel(1024).0;
        notify::listen(pool.clone(), events.clone());
        Ok(Store {
            pool: Pool::Postgres(pool),
            root: cache.to_owned(),
            events,
            successes: Arc::default(),
        })
    }

    /// The store a configuration names: PostgreSQL when `database` is a `postgres://` URL,
    /// else SQLite in `data_dir`.
    pub async fn open_configured(
        database: Option<&str>,
        data_dir: &Path,
        sync_commits: bool,
    ) -> Result<Store, StoreError> {
        match database {
            Some(url) if is_postgres_url(url) => {
                Store::open_postgres_with(url, data_dir, sync_commits).await
            }
            _ => Store::open(data_dir, sync_commits).await,
        }
    }

    /// The engine's SQL dialect.
    pub fn dialect(&self) -> Dialect {
        match self.pool {
            Pool::Sqlite(_) => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Whether other hosts share this store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        self.dialect() == Dialect::Postgres
    }

    /// The engine's name (`sqlite`, `postgres`).
    pub fn engine(&self) -> &'static str {
        match self.dialect() {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }

    /// State changes from now on (see [`StoreEvent`]).
    pub fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.events.subscribe()
    }

    /// Tells this process's subscribers about a change it committed. PostgreSQL hears its
    /// own notifications (the `jobs` triggers), so only SQLite sends them here.
    pub(crate) fn announce(&self, event: StoreEvent) {
        if self.dialect() == Dialect::Sqlite {
            let _ = self.events.send(event);
        }
    }

    /// Closes the pool (waits for connections to finish).
    pub async fn close(&self) {
        with_pool!(self, pool => pool.close().await);
    }

    /// Directory for uploads in progress.
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// Directory of stored (or, with PostgreSQL, cached) arenas.
    pub fn arenas_dir(&self) -> PathBuf {
        self.root.join("arenas")
    }

    /// Local path of the arena with content hash `hash` (see [`Store::local_arena`]).
    pub fn arena_path(&self, hash: &str) -> PathBuf {
        self.root.join("arenas").join(hash)
    }

    /// Local path of the result with key `key` (see [`Store::local_result`]).
    pub fn result_path(&self, key: &str) -> PathBuf {
        self.root.join("results").join(key)
    }

    /// One job.
    pub async fn job(&self, id: JobId) -> Result<Option<JobRecord>, StoreError> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1");
        with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?
            .map(|r| decode_job(&r))
            .transpose())
    }

    /// Jobs newest first, of `owner` (all when `None`), optionally in `state`, with
    /// `seq < before` (the cursor), at most `limit`.
    pub async fn list_jobs(
        &self,
        owner: Option<&str>,
        state: Option<JobState>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<JobRecord>, StoreError> {
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE ($1 IS NULL OR owner = $1) \
             AND ($2 IS NULL OR state = $2) AND ($3 IS NULL OR seq < $3) \
             ORDER BY seq DESC LIMIT $4"
        );
        with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(owner)
            .bind(state.map(super::job::JobState::name))
            .bind(before)
            .bind(limit as i64)
            .fetch_all(pool)
            .await?
            .iter()
            .map(decode_job)
            .collect())
    }

    /// Queued + running jobs of `owner`.
    pub async fn active_count(&self, owner: &str) -> Result<u64, StoreError> {
        let n: i64 = with_pool!(self, pool => sqlx::query(
            "SELECT COUNT(*) FROM jobs WHERE owner = $1 AND state IN ('queued', 'running')",
        )
        .bind(owner)
        .fetch_one(pool)
        .await?
        .try_get(0)?);
        Ok(n as u64)
    }

    /// Job counts per state.
    pub async fn counts_by_state(&self) -> Result<Vec<(JobState, u64)>, StoreError> {
        let rows: Vec<(String, i64)> = with_pool!(self, pool => {
            let rows = sqlx::query("SELECT state, COUNT(*) FROM jobs GROUP BY state")
                .fetch_all(pool)
                .await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, StoreError>>()?
        });
        let mut counts: Vec<(JobState, u64)> = JobState::ALL.iter().map(|&s| (s, 0)).collect();
        for (state, n) in rows {
            if let Some(entry) = counts.iter_mut().find(|(s, _)| s.name() == state) {
                entry.1 = n as u64;
            }
        }
        Ok(counts)
    }

    /// Jobs waiting in the queue (every host's).
    pub async fn queue_depth(&self) -> Result<u64, StoreError> {
        let n: i64 = with_pool!(self, pool => sqlx::query(
            "SELECT COUNT(*) FROM jobs WHERE state = 'queued'",
        )
        .fetch_one(pool)
        .await?
        .try_get(0)?);
        Ok(n as u64)
    }

    /// Jobs ahead of a queued job (higher priority, or equal and submitted earlier).
    pub async fn queue_position(&self, priority: i64, seq: i64) -> Result<u64, StoreError> {
        let n: i64 = with_pool!(self, pool => sqlx::query(
            "SELECT COUNT(*) FROM jobs WHERE state = 'queued' \
             AND (priority > $1 OR (priority = $1 AND seq < $2))",
        )
        .bind(priority)
        .bind(seq)
        .fetch_one(pool)
        .await?
        .try_get(0)?);
        Ok(n as u64)
    }

    /// Records parse results of a running job.
    pub async fn record_parse(
        &self,
        id: JobId,
        stats: ArenaStats,
        gpu_memory: u64,
        parse_ms: f64,
    ) -> Result<(), StoreError> {
        with_pool!(self, pool => sqlx::query(
            "UPDATE jobs SET vertices = $1, edges = $2, bound = $3, parse_ms = $4, parity = $6, \
             gpu_memory = $7 WHERE id = $5",
        )
        .bind(stats.vertices as i64)
        .bind(stats.edges as i64)
        .bind(stats.bound.to_string())
        .bind(parse_ms)
        .bind(id.to_string())
        .bind(stats.parity as i64)
        .bind(gpu_memory.min(i64::MAX as u64) as i64)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(())
    }

    /// `queued|running → cancelled`; false if the job had already finished. The worker
    /// running it notices (a notification at once, its heartbeat within a second).
    pub async fn cancel(&self, id: JobId) -> Result<bool, StoreError> {
        // One guarded statement, not a read-then-write transaction: in WAL mode a deferred
        // transaction whose read snapshot is overtaken by a worker's write cannot upgrade
        // to a write lock (SQLITE_BUSY_SNAPSHOT, not retried by the busy timeout).
        let done = with_pool!(self, pool => sqlx::query(
            "UPDATE jobs SET state = 'cancelled', finished_at = $1, lease_expires_at = NULL \
             WHERE id = $2 AND state IN ('queued', 'running')",
        )
        .bind(now_ms())
        .bind(id.to_string())
        .execute(pool)
        .await?
        .rows_affected());
        self.announce(StoreEvent::Cancelled(id));
        Ok(done == 1)
    }

    /// A stored result's summary, for reuse.
    pub async fn result_summary(&self, key: &str) -> Result<Option<ResultSummary>, StoreError> {
        let text: Option<String> = with_pool!(self, pool => sqlx::query(
            "SELECT summary FROM results WHERE key = $1",
        )
        .bind(key)
        .fetch_optional(pool)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?);
        text.map(|t| serde_json::from_str(&t).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()
    }

    /// Deletes finished jobs older than `cutoff_ms`, then results and arenas no job uses
    /// any more (rows, stored chunks and local files). Returns the number of jobs removed.
    pub async fn expire(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        let (jobs, results, arenas): (u64, Vec<String>, Vec<String>) = with_pool!(self, pool => {
            let jobs = sqlx::query(
                "DELETE FROM jobs WHERE state IN ('succeeded', 'failed', 'cancelled') \
                 AND finished_at < $1",
            )
            .bind(cutoff_ms)
            .execute(pool)
            .await?
            .rows_affected();
            let results = sqlx::query(
                "DELETE FROM results WHERE key NOT IN \
                 (SELECT result_key FROM jobs WHERE result_key IS NOT NULL) RETURNING key",
            )
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
            let arenas = sqlx::query(
                "DELETE FROM arenas WHERE hash NOT IN (SELECT arena_hash FROM jobs) \
                 AND created_at < $1 RETURNING hash",
            )
            .bind(cutoff_ms)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
            (jobs, results, arenas)
        });
        for key in results {
            let _ = std::fs::remove_file(self.result_path(&key));
        }
        for hash in arenas {
            let _ = std::fs::remove_file(self.arena_path(&hash));
        }
        if self.is_shared() {
            // Other hosts may have expired rows this host still caches: drop cached files
            // untouched for as long as the TTL (they are fetched again if still needed).
            let age = Duration::from_millis((now_ms() - cutoff_ms).max(0) as u64);
            for dir in [self.arenas_dir(), self.root.join("results")] {
                blobs::forget_older_than(&dir, age);
            }
        }
        Ok(jobs)
    }
}

fn parse_state(s: &str) -> Result<JobState, StoreError> {
    JobState::from_str(s).map_err(StoreError::Corrupt)
}

/// A job row as a record (either engine's row type).
pub(crate) fn decode_job<R: Row>(row: &R) -> Result<JobRecord, StoreError>
where
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> f64: Decode<'r, R::Database> + Type<R::Database>,
    &'static str: ColumnIndex<R>,
{
    let corrupt = |what: &str| StoreError::Corrupt(what.to_string());
    let id: String = row.try_get("id")?;
    let bound: Option<String> = row.try_get("bound")?;
    let vertices: Option<i64> = row.try_get("vertices")?;
    let edges: Option<i64> = row.try_get("edges")?;
    let arena = match (vertices, edges, bound) {
        (Some(v), Some(e), Some(b)) => Some(ArenaStats {
            vertices: v as u64,
            edges: e as u64,
            bound: b.parse().map_err(|_| corrupt("bound"))?,
            parity: row.try_get::<Option<i64>, _>("parity")? == Some(1),
        }),
        _ => None,
    };
    let error_type: Option<String> = row.try_get("error_type")?;
    let failure = match error_type {
        Some(kind) => Some(Failure {
            kind,
            message: row
                .try_get::<Option<String>, _>("error_message")?
                .unwrap_or_default(),
            line: row
                .try_get::<Option<i64>, _>("error_line")?
                .map(|l| l as u64),
            column: row
                .try_get::<Option<i64>, _>("error_column")?
                .map(|c| c as u64),
        }),
        None => None,
    };
    let state = parse_state(&row.try_get::<String, _>("state")?)?;
    let lifts: Option<i64> = row.try_get("progress_lifts")?;
    let progress = match (state, lifts) {
        (JobState::Running, Some(lifts)) => Some(egsolve_core::solve::ProgressSnapshot {
            round: row
                .try_get::<Option<i64>, _>("progress_round")?
                .unwrap_or(0) as u64,
            frontier: row
                .try_get::<Option<i64>, _>("progress_frontier")?
                .unwrap_or(0) as u64,
            lifts: lifts as u64,
        }),
        _ => None,
    };
    let backend: String = row.try_get("backend")?;
    let format: String = row.try_get("format")?;
    let return_kind: String = row.try_get("return_kind")?;
    Ok(JobRecord {
        seq: row.try_get("seq")?,
        id: JobId::parse_str(&id).map_err(|_| corrupt("id"))?,
        owner: row.try_get("owner")?,
        state,
        options: JobOptions {
            backend: BackendChoice::parse(&backend).ok_or_else(|| corrupt("backend"))?,
            priority: row.try_get("priority")?,
            time_limit_secs: row.try_get::<i64, _>("time_limit_secs")? as u64,
            format: InputFormat::parse(&format).ok_or_else(|| corrupt("format"))?,
            return_kind: ReturnKind::parse(&return_kind).ok_or_else(|| corrupt("return"))?,
            credits: row.try_get::<i64, _>("credits")? != 0,
        },
        arena_hash: row.try_get("arena_hash")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        attempts: row.try_get("attempts")?,
        completions: row.try_get("completions")?,
        backend_used: row.try_get("backend_used")?,
        device: row.try_get("device")?,
        worker: row.try_get("worker")?,
        arena,
        result_key: row.try_get("result_key")?,
        reused: row.try_get::<i64, _>("reused")? != 0,
        failure,
        upload_ms: row.try_get("upload_ms")?,
        parse_ms: row.try_get("parse_ms")?,
        solve_ms: row.try_get("solve_ms")?,
        progress,
        batch: match (
            row.try_get::<Option<String>, _>("batch")?,
            row.try_get("member")?,
        ) {
            (Some(batch), Some(name)) => Some(BatchMember {
                batch: JobId::parse_str(&batch).map_err(|_| corrupt("batch"))?,
                name,
            }),
            _ => None,
        },
    })
}
