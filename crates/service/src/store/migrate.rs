//! Moving a single-host SQLite store into an empty PostgreSQL store (`egsolve migrate`):
//! arenas and results with their bytes (from the data directory's files into chunks), then
//! every job with its id, sequence number (list cursors stay valid), history and result.
//! Jobs that were running go back to the queue. Each arena and result is one transaction;
//! the jobs are one transaction, so a failed copy leaves no job behind and can be re-run.

use sqlx::Row;

use super::chunks::{ChunkWriter, Table};
use super::{JOB_COLUMNS, Pool, Store, StoreError, decode_job};
use crate::job::JobState;

/// What a copy moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Copied {
    /// Arenas (rows and bytes).
    pub arenas: u64,
    /// Results (rows and bytes).
    pub results: u64,
    /// Jobs.
    pub jobs: u64,
    /// Jobs that were running and are queued again.
    pub requeued: u64,
}

impl Store {
    /// Stores the arena `hash` from the file `named` by reference, whose copy was never
    /// written; logs why not where the file no longer has those bytes.
    async fn read_named_again(&self, hash: &str, named: String) {
        let (hash, tmp_dir, dest) = (hash.to_string(), self.tmp_dir(), self.arena_path(hash));
        let read = tokio::task::spawn_blocking(move || {
            let root = std::path::Path::new(&named)
                .parent()
                .map(std::path::Path::to_path_buf);
            let roots: Vec<_> = root.into_iter().collect();
            crate::import::read_again(&roots, &named, &hash, &tmp_dir, &dest).map_err(|e| (hash, e))
        })
        .await;
        if let Ok(Err((hash, e))) = read {
            tracing::warn!(arena = %hash, "{e}");
        }
    }

    /// Copies this SQLite store into the PostgreSQL store `target`, which must hold no job.
    pub async fn copy_into(&self, target: &Store) -> Result<Copied, StoreError> {
        let (Pool::Sqlite(source), Pool::Postgres(dest)) = (&self.pool, &target.pool) else {
            return Err(StoreError::Corrupt(
                "a copy goes from a SQLite store into a PostgreSQL store".into(),
            ));
        };
        let existing: i64 = sqlx::query("SELECT COUNT(*) FROM jobs")
            .fetch_one(dest)
            .await?
            .try_get(0)?;
        if existing > 0 {
            return Err(StoreError::Corrupt(format!(
                "the target database already holds {existing} jobs: migrate into an empty database"
            )));
        }
        let mut copied = Copied::default();
        let arenas = sqlx::query("SELECT hash, bytes, created_at, source FROM arenas")
            .fetch_all(source)
            .await?;
        for row in arenas {
            let hash: String = row.try_get(0)?;
            let path = self.arena_path(&hash);
            let named: Option<String> = row.try_get(3)?;
            if let (false, Some(named)) = (path.exists(), named) {
                // Read into memory and never copied (the server stopped first): the file it
                // was named by, if its bytes are still the arena's.
                self.read_named_again(&hash, named).await;
            }
            if !path.exists() {
                tracing::warn!(arena = %hash, "arena file missing: its jobs are copied without it");
            }
            let mut tx = dest.begin().await?;
            sqlx::query(
                "INSERT INTO arenas (hash, bytes, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (hash) DO NOTHING",
            )
            .bind(&hash)
            .bind(row.try_get::<i64, _>(1)?)
            .bind(row.try_get::<i64, _>(2)?)
            .execute(&mut *tx)
            .await?;
            if path.exists() {
                tx.store_chunks_if_absent(Table::Arenas, &hash, &path)
                    .await?;
            }
            tx.commit().await?;
            copied.arenas += 1;
        }
        let results = sqlx::query("SELECT key, summary, created_at FROM results")
            .fetch_all(source)
            .await?;
        for row in results {
            let key: String = row.try_get(0)?;
            let path = self.result_path(&key);
            if !path.exists() {
                tracing::warn!(result = %key, "result file missing: not copied");
                continue;
            }
            let mut tx = dest.begin().await?;
            sqlx::query(
                "INSERT INTO results (key, summary, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(&key)
            .bind(row.try_get::<String, _>(1)?)
            .bind(row.try_get::<i64, _>(2)?)
            .execute(&mut *tx)
            .await?;
            tx.store_chunks_if_absent(Table::Results, &key, &path)
                .await?;
            tx.commit().await?;
            copied.results += 1;
        }
        let sql = format!("SELECT {JOB_COLUMNS}, gpu_memory FROM jobs ORDER BY seq");
        let jobs = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(source)
            .await?;
        let mut tx = dest.begin().await?;
        for row in &jobs {
            let mut job = decode_job(row)?;
            if job.state == JobState::Running {
                job.state = JobState::Queued;
                job.started_at = None;
                job.backend_used = None;
                job.device = None;
                copied.requeued += 1;
            }
            let result_key = job
                .result_key
                .clone()
                .filter(|_| job.state == JobState::Succeeded);
            sqlx::query(
                "INSERT INTO jobs (seq, id, owner, state, priority, backend, time_limit_secs, \
                 format, return_kind, arena_hash, created_at, queued_at, started_at, finished_at, \
                 attempts, completions, backend_used, device, vertices, edges, bound, result_key, \
                 reused, error_type, error_message, error_line, error_column, upload_ms, \
                 parse_ms, solve_ms, worker, credits, parity, gpu_memory, batch, member) \
                 OVERRIDING SYSTEM VALUE \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $14, $15, \
                 $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, \
                 $32, $33, $34, $35)",
            )
            .bind(job.seq)
            .bind(job.id.to_string())
            .bind(&job.owner)
            .bind(job.state.name())
            .bind(job.options.priority)
            .bind(job.options.backend.name())
            .bind(job.options.time_limit_secs as i64)
            .bind(job.options.format.name())
            .bind(job.options.return_kind.name())
            .bind(&job.arena_hash)
            .bind(job.created_at)
            .bind(job.started_at)
            .bind(job.finished_at)
            .bind(job.attempts)
            .bind(job.completions)
            .bind(&job.backend_used)
            .bind(&job.device)
            .bind(job.arena.map(|a| a.vertices as i64))
            .bind(job.arena.map(|a| a.edges as i64))
            .bind(job.arena.map(|a| a.bound.to_string()))
            .bind(result_key)
            .bind(i64::from(job.reused))
            .bind(job.failure.as_ref().map(|f| f.kind.clone()))
            .bind(job.failure.as_ref().map(|f| f.message.clone()))
            .bind(job.failure.as_ref().and_then(|f| f.line).map(|l| l as i64))
            .bind(
                job.failure
                    .as_ref()
                    .and_then(|f| f.column)
                    .map(|c| c as i64),
            )
            .bind(job.upload_ms)
            .bind(job.parse_ms)
            .bind(job.solve_ms)
            .bind(&job.worker)
            .bind(i64::from(job.options.credits))
            .bind(job.arena.map(|a| i64::from(a.parity)))
            .bind(row.try_get::<Option<i64>, _>("gpu_memory")?)
            .bind(job.batch.as_ref().map(|b| b.batch.to_string()))
            .bind(job.batch.as_ref().map(|b| b.name.clone()))
            .execute(&mut *tx)
            .await?;
            copied.jobs += 1;
        }
        // New jobs continue the sequence after the copied ones.
        sqlx::query(
            "SELECT setval(pg_get_serial_sequence('jobs', 'seq'), \
             COALESCE((SELECT MAX(seq) FROM jobs), 0) + 1, false)",
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(copied)
    }
}
