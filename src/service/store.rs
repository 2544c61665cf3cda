//! The persistent job store: one SQLite database (sqlx, WAL, `synchronous = FULL` by default) in the
//! data directory, plus the arena and result files beside it. It owns the job state machine's
//! transitions — each is one guarded `UPDATE`, so a transition that no longer applies (a job
//! cancelled meanwhile, a stale attempt) does nothing — and the on-disk layout:
//!
//! - `jobs.db` — tables `jobs`, `arenas`, `results` (schema in `migrations/`, embedded);
//! - `arenas/<sha256>` — decompressed arena bytes, stored once per content hash;
//! - `results/<key>` — solved results (see [`super::result_file`]), once per arena + format;
//! - `tmp/` — uploads in progress (emptied at start-up).
//!
//! It knows nothing about HTTP or scheduling.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::Row;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};

use super::job::{
    ArenaStats, BackendChoice, Failure, InputFormat, JobId, JobOptions, JobRecord, JobState,
    ResultSummary, ReturnKind,
};

/// Store failures (all are server-side problems).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused a query.
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
}

/// Handle to the store; cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    /// Connection pool (SQLite serializes writers itself; a few readers run beside them).
    pool: SqlitePool,
    /// The data directory.
    root: PathBuf,
}

/// Binds the columns every inserted job starts with, in the order both inserts list them:
/// id, owner, priority, backend, time limit, input format, return kind, arena hash.
fn bind_job_columns<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    id: JobId,
    owner: &'q str,
    options: &JobOptions,
    arena_hash: &'q str,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    query
        .bind(id.to_string())
        .bind(owner)
        .bind(options.priority)
        .bind(options.backend.name())
        .bind(options.time_limit_secs as i64)
        .bind(options.format.name())
        .bind(options.return_kind.name())
        .bind(arena_hash)
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

const JOB_COLUMNS: &str = "seq, id, owner, state, priority, backend, time_limit_secs, format, \
     return_kind, arena_hash, created_at, started_at, finished_at, attempts, completions, \
     backend_used, device, vertices, edges, bound, result_key, reused, error_type, \
     error_message, error_line, error_column, upload_ms, parse_ms, solve_ms";

impl Store {
    /// Opens (creating if needed) the store in `root` and applies migrations.
    pub async fn open(root: &Path, sync_commits: bool) -> Result<Store, StoreError> {
        for dir in ["arenas", "results", "tmp"] {
            std::fs::create_dir_all(root.join(dir))?;
        }
        for entry in std::fs::read_dir(root.join("tmp"))? {
            let _ = std::fs::remove_file(entry?.path());
        }
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
        let migrator = Migrator::with_migrations(vec![Migration::new(
            1,
            "jobs".into(),
            MigrationType::Simple,
            sqlx::SqlStr::from_static(include_str!("migrations/0001_jobs.sql")),
            false,
        )]);
        migrator.run(&pool).await?;
        Ok(Store {
            pool,
            root: root.to_owned(),
        })
    }

    /// Closes the pool (waits for connections to finish).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Directory for uploads in progress.
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// Directory of stored arenas.
    pub fn arenas_dir(&self) -> PathBuf {
        self.root.join("arenas")
    }

    /// Path of the arena with content hash `hash`.
    pub fn arena_path(&self, hash: &str) -> PathBuf {
        self.root.join("arenas").join(hash)
    }

    /// Path of the result with key `key`.
    pub fn result_path(&self, key: &str) -> PathBuf {
        self.root.join("results").join(key)
    }

    /// Records an arena (idempotent: identical bytes are stored once). Refreshes its
    /// timestamp, so that [`Store::expire`] never removes an arena a submission is about to
    /// reference (it only removes arenas untouched for a whole TTL).
    pub async fn insert_arena(&self, hash: &str, bytes: u64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO arenas (hash, bytes, created_at) VALUES (?, ?, ?) \
             ON CONFLICT(hash) DO UPDATE SET created_at = excluded.created_at",
        )
        .bind(hash)
        .bind(bytes as i64)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The decompressed size of a stored arena.
    pub async fn arena_bytes(&self, hash: &str) -> Result<Option<u64>, StoreError> {
        let row = sqlx::query("SELECT bytes FROM arenas WHERE hash = ?")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row
            .map(|r| r.try_get::<i64, _>(0))
            .transpose()?
            .map(|b| b as u64))
    }

    /// Inserts a queued job.
    pub async fn insert_job(
        &self,
        id: JobId,
        owner: &str,
        options: &JobOptions,
        arena_hash: &str,
        upload_ms: f64,
        parsed: Option<(ArenaStats, f64)>,
    ) -> Result<i64, StoreError> {
        let arena = parsed.map(|(a, _)| a);
        let query = sqlx::query(
            "INSERT INTO jobs (id, owner, state, priority, backend, time_limit_secs, format, \
             return_kind, arena_hash, created_at, upload_ms, vertices, edges, bound, parse_ms) \
             VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        );
        let row = bind_job_columns(query, id, owner, options, arena_hash)
            .bind(now_ms())
            .bind(upload_ms)
            .bind(arena.map(|a| a.vertices as i64))
            .bind(arena.map(|a| a.edges as i64))
            .bind(arena.map(|a| a.bound.to_string()))
            .bind(parsed.map(|(_, ms)| ms))
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get(0)?)
    }

    /// Inserts a job already succeeded with an earlier identical job's result.
    pub async fn insert_reused_job(
        &self,
        id: JobId,
        owner: &str,
        options: &JobOptions,
        arena_hash: &str,
        result_key: &str,
        summary: &ResultSummary,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let query = sqlx::query(
            "INSERT INTO jobs (id, owner, state, priority, backend, time_limit_secs, format, \
             return_kind, arena_hash, created_at, started_at, finished_at, completions, \
             backend_used, device, vertices, edges, bound, result_key, reused) \
             VALUES (?, ?, 'succeeded', ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 'cache', ?, ?, ?, ?, 1)",
        );
        bind_job_columns(query, id, owner, options, arena_hash)
            .bind(now)
            .bind(now)
            .bind(now)
            .bind(&summary.backend)
            .bind(summary.vertices as i64)
            .bind(summary.edges as i64)
            .bind(summary.bound.to_string())
            .bind(result_key)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// One job.
    pub async fn job(&self, id: JobId) -> Result<Option<JobRecord>, StoreError> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| decode_job(&r)).transpose()
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
            "SELECT {JOB_COLUMNS} FROM jobs WHERE (?1 IS NULL OR owner = ?1) \
             AND (?2 IS NULL OR state = ?2) AND (?3 IS NULL OR seq < ?3) \
             ORDER BY seq DESC LIMIT ?4"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(owner)
            .bind(state.map(|s| s.name()))
            .bind(before)
            .bind(limit as i64)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_job).collect()
    }

    /// Every job in `state`, oldest first (start-up recovery).
    pub async fn jobs_in_state(&self, state: JobState) -> Result<Vec<JobRecord>, StoreError> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE state = ? ORDER BY seq");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(state.name())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_job).collect()
    }

    /// Queued + running jobs of `owner`.
    pub async fn active_count(&self, owner: &str) -> Result<u64, StoreError> {
        let row = sqlx::query(
            "SELECT COUNT(*) FROM jobs WHERE owner = ? AND state IN ('queued', 'running')",
        )
        .bind(owner)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get::<i64, _>(0)? as u64)
    }

    /// Job counts per state.
    pub async fn counts_by_state(&self) -> Result<Vec<(JobState, u64)>, StoreError> {
        let rows = sqlx::query("SELECT state, COUNT(*) FROM jobs GROUP BY state")
            .fetch_all(&self.pool)
            .await?;
        let mut counts: Vec<(JobState, u64)> = JobState::ALL.iter().map(|&s| (s, 0)).collect();
        for row in rows {
            let state: String = row.try_get(0)?;
            let n: i64 = row.try_get(1)?;
            if let Some(entry) = counts.iter_mut().find(|(s, _)| s.name() == state) {
                entry.1 = n as u64;
            }
        }
        Ok(counts)
    }

    /// Moves every `running` job back to `queued` (after a crash); returns how many.
    pub async fn requeue_running(&self) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "UPDATE jobs SET state = 'queued', started_at = NULL, backend_used = NULL, \
             device = NULL WHERE state = 'running'",
        )
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Moves one `running` job back to `queued` (graceful shutdown).
    pub async fn requeue(&self, id: JobId) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE jobs SET state = 'queued', started_at = NULL, backend_used = NULL, \
             device = NULL WHERE id = ? AND state = 'running'",
        )
        .bind(id.to_string())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// `queued → running`; returns the attempt number, or `None` if the job is no longer
    /// queued (cancelled meanwhile).
    pub async fn start(
        &self,
        id: JobId,
        backend: &str,
        device: &str,
    ) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query(
            "UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = ?, \
             backend_used = ?, device = ? WHERE id = ? AND state = 'queued' RETURNING attempts",
        )
        .bind(now_ms())
        .bind(backend)
        .bind(device)
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.try_get(0)).transpose()?)
    }

    /// Records parse results of a running job.
    pub async fn record_parse(
        &self,
        id: JobId,
        stats: ArenaStats,
        parse_ms: f64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE jobs SET vertices = ?, edges = ?, bound = ?, parse_ms = ? WHERE id = ?",
        )
        .bind(stats.vertices as i64)
        .bind(stats.edges as i64)
        .bind(stats.bound.to_string())
        .bind(parse_ms)
        .bind(id.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// `running → succeeded` for attempt `attempt`, storing the result summary; the result
    /// file must already be on disk and synced. Returns false if the transition no longer
    /// applies (cancelled, or a stale attempt).
    pub async fn succeed(
        &self,
        id: JobId,
        attempt: i64,
        result_key: &str,
        summary: &ResultSummary,
        solve_ms: f64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let summary_json = serde_json::to_string(summary).expect("summary serializes");
        sqlx::query(
            "INSERT INTO results (key, summary, created_at) VALUES (?, ?, ?) \
             ON CONFLICT (key) DO UPDATE SET summary = excluded.summary",
        )
        .bind(result_key)
        .bind(summary_json)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        let done = sqlx::query(
            "UPDATE jobs SET state = 'succeeded', finished_at = ?, completions = completions + 1, \
             result_key = ?, solve_ms = ? WHERE id = ? AND state = 'running' AND attempts = ?",
        )
        .bind(now_ms())
        .bind(result_key)
        .bind(solve_ms)
        .bind(id.to_string())
        .bind(attempt)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// `queued|running → failed`.
    pub async fn fail(&self, id: JobId, failure: &Failure) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE jobs SET state = 'failed', finished_at = ?, error_type = ?, error_message = ?, \
             error_line = ?, error_column = ? WHERE id = ? AND state IN ('queued', 'running')",
        )
        .bind(now_ms())
        .bind(&failure.kind)
        .bind(&failure.message)
        .bind(failure.line.map(|l| l as i64))
        .bind(failure.column.map(|c| c as i64))
        .bind(id.to_string())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// `queued|running → cancelled`; false if the job had already finished.
    pub async fn cancel(&self, id: JobId) -> Result<bool, StoreError> {
        // One guarded statement, not a read-then-write transaction: in WAL mode a deferred
        // transaction whose read snapshot is overtaken by a worker's write cannot upgrade
        // to a write lock (SQLITE_BUSY_SNAPSHOT, not retried by the busy timeout).
        let done = sqlx::query(
            "UPDATE jobs SET state = 'cancelled', finished_at = ? \
             WHERE id = ? AND state IN ('queued', 'running')",
        )
        .bind(now_ms())
        .bind(id.to_string())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A stored result's summary, for reuse.
    pub async fn result_summary(&self, key: &str) -> Result<Option<ResultSummary>, StoreError> {
        let row = sqlx::query("SELECT summary FROM results WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            let text: String = r.try_get(0)?;
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(e.to_string()))
        })
        .transpose()
    }

    /// Deletes finished jobs older than `cutoff_ms`, then results and arenas no job uses
    /// any more (rows and files). Returns the number of jobs removed.
    pub async fn expire(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        let jobs = sqlx::query(
            "DELETE FROM jobs WHERE state IN ('succeeded', 'failed', 'cancelled') \
             AND finished_at < ?",
        )
        .bind(cutoff_ms)
        .execute(&self.pool)
        .await?
        .rows_affected();
        let results = sqlx::query(
            "DELETE FROM results WHERE key NOT IN \
             (SELECT result_key FROM jobs WHERE result_key IS NOT NULL) RETURNING key",
        )
        .fetch_all(&self.pool)
        .await?;
        for row in results {
            let key: String = row.try_get(0)?;
            let _ = std::fs::remove_file(self.result_path(&key));
        }
        let arenas = sqlx::query(
            "DELETE FROM arenas WHERE hash NOT IN (SELECT arena_hash FROM jobs) \
             AND created_at < ? RETURNING hash",
        )
        .bind(cutoff_ms)
        .fetch_all(&self.pool)
        .await?;
        for row in arenas {
            let hash: String = row.try_get(0)?;
            let _ = std::fs::remove_file(self.arena_path(&hash));
        }
        Ok(jobs)
    }
}

fn parse_state(s: &str) -> Result<JobState, StoreError> {
    JobState::from_str(s).map_err(StoreError::Corrupt)
}

fn decode_job(row: &SqliteRow) -> Result<JobRecord, StoreError> {
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
    let backend: String = row.try_get("backend")?;
    let format: String = row.try_get("format")?;
    let return_kind: String = row.try_get("return_kind")?;
    Ok(JobRecord {
        seq: row.try_get("seq")?,
        id: JobId::parse_str(&id).map_err(|_| corrupt("id"))?,
        owner: row.try_get("owner")?,
        state: parse_state(&row.try_get::<String, _>("state")?)?,
        options: JobOptions {
            backend: BackendChoice::parse(&backend).ok_or_else(|| corrupt("backend"))?,
            priority: row.try_get("priority")?,
            time_limit_secs: row.try_get::<i64, _>("time_limit_secs")? as u64,
            format: InputFormat::parse(&format).ok_or_else(|| corrupt("format"))?,
            return_kind: ReturnKind::parse(&return_kind).ok_or_else(|| corrupt("return"))?,
        },
        arena_hash: row.try_get("arena_hash")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        attempts: row.try_get("attempts")?,
        completions: row.try_get("completions")?,
        backend_used: row.try_get("backend_used")?,
        device: row.try_get("device")?,
        arena,
        result_key: row.try_get("result_key")?,
        reused: row.try_get::<i64, _>("reused")? != 0,
        failure,
        upload_ms: row.try_get("upload_ms")?,
        parse_ms: row.try_get("parse_ms")?,
        solve_ms: row.try_get("solve_ms")?,
    })
}
