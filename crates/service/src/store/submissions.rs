//! New jobs: one submitted alone ([`Store::insert_job`], [`Store::insert_reused_job`]) or
//! the many of a batch in one transaction ([`Store::insert_batch`]: queued, reusing a
//! result, or solved while the batch was received), and a batch's jobs read back
//! ([`Store::batch_jobs`]). Every insert binds one [`NewJob`] through the same SQL, so a
//! batch's queued and reused rows are the rows single submissions make, plus their batch
//! and name; a solved one is its queued row plus what a worker's success records (backend,
//! device, result, solve time), started and finished at the insert.

use sqlx::{Database, Encode, Row, Type};

use super::chunks::{ChunkWriter, Table};
use super::claim::Success;
use super::{Dialect, JOB_COLUMNS, Store, StoreError, StoreEvent, decode_job, now_ms, with_pool};
use crate::job::{ArenaStats, JobId, JobOptions, JobRecord, ResultSummary};

/// A job about to be recorded.
#[derive(Debug, Clone, Copy)]
pub struct NewJob<'a> {
    /// Its id.
    pub id: JobId,
    /// The submitter.
    pub owner: &'a str,
    /// Its options.
    pub options: &'a JobOptions,
    /// The stored arena (a row of `arenas` already, or one [`Store::insert_batch`] adds).
    pub arena_hash: &'a str,
    /// The upload's time, milliseconds.
    pub upload_ms: f64,
    /// The parsed arena's figures and the parse's milliseconds, when the upload parsed it.
    pub parsed: Option<(ArenaStats, f64)>,
    /// Admission's GPU memory estimate.
    pub gpu_memory: u64,
    /// The batch and the name in it, for a job of a batch.
    pub member: Option<(JobId, &'a str)>,
}

/// An identical finished job's result, which a new job takes instead of running.
#[derive(Debug, Clone, Copy)]
pub struct Reuse<'a> {
    /// The result's key.
    pub key: &'a str,
    /// Its summary.
    pub summary: &'a ResultSummary,
}

/// How a batch's job starts.
#[derive(Debug, Clone, Copy)]
pub enum BatchStart<'a> {
    /// In the queue.
    Queued,
    /// Succeeded with an identical finished job's result.
    Reused(Reuse<'a>),
    /// Succeeded: solved while the batch was received (its result file written and synced
    /// at [`Store::result_path`]).
    Solved(Success<'a>),
}

// Each placeholder appears once, in order (the creation time bound once per column that
// takes it), so that SQLite's form of a multi-row insert can use anonymous `?`s
// ([`multi_row`]).
const INSERT_QUEUED: &str = "INSERT INTO jobs (id, owner, state, priority, backend, \
     time_limit_secs, format, return_kind, arena_hash, created_at, queued_at, upload_ms, \
     vertices, edges, bound, parse_ms, credits, parity, gpu_memory, batch, member) VALUES \
     ($1, $2, 'queued', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
     $18, $19, $20) RETURNING seq";

const INSERT_REUSED: &str = "INSERT INTO jobs (id, owner, state, priority, backend, \
     time_limit_secs, format, return_kind, arena_hash, created_at, queued_at, started_at, \
     finished_at, completions, backend_used, device, vertices, edges, bound, result_key, \
     reused, credits, batch, member) VALUES ($1, $2, 'succeeded', $3, $4, $5, $6, $7, $8, $9, \
     $10, $11, $12, 1, $13, 'cache', $14, $15, $16, $17, 1, $18, $19, $20) RETURNING seq";

const INSERT_SOLVED: &str = "INSERT INTO jobs (id, owner, state, priority, backend, \
     time_limit_secs, format, return_kind, arena_hash, created_at, queued_at, started_at, \
     finished_at, attempts, completions, upload_ms, vertices, edges, bound, parse_ms, credits, \
     parity, gpu_memory, batch, member, backend_used, device, result_key, solve_ms) VALUES \
     ($1, $2, 'succeeded', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 1, 1, $13, $14, $15, $16, \
     $17, $18, $19, $20, $21, $22, $23, $24, $25, $26) RETURNING seq";

/// The creation time, and how many of an insert's columns take it: created and queued; and
/// for a job that starts finished, started and finished too.
#[derive(Debug, Clone, Copy)]
struct Stamp(i64, usize);

impl Stamp {
    fn queued(now: i64) -> Stamp {
        Stamp(now, 2)
    }

    fn finished(now: i64) -> Stamp {
        Stamp(now, 4)
    }
}

impl BatchStart<'_> {
    /// Which kind of start, for grouping rows that one statement inserts.
    fn kind(&self) -> u8 {
        match self {
            BatchStart::Queued => 0,
            BatchStart::Reused(_) => 1,
            BatchStart::Solved(_) => 2,
        }
    }

    /// The one-row insert of a job that starts this way.
    fn insert_sql(&self) -> &'static str {
        match self {
            BatchStart::Queued => INSERT_QUEUED,
            BatchStart::Reused(_) => INSERT_REUSED,
            BatchStart::Solved(_) => INSERT_SOLVED,
        }
    }
}

/// `insert` (a one-row `INSERT … VALUES (…) RETURNING seq`, each placeholder once and in
/// order) as a statement that inserts `rows` rows, so that binding the rows one after
/// another fills them in order: on PostgreSQL its tuple repeated, each copy's placeholders
/// `$n` shifted past the copies before it; on SQLite with anonymous `?`s, because SQLite
/// (and sqlx's binding) looks each numbered placeholder up among those before it: 285 jobs
/// in statements of 500 rows took 91–94 ms that way, against 28–30 with a statement each.
fn multi_row(insert: &str, rows: usize, dialect: Dialect) -> String {
    let (head, tail) = insert.split_once("VALUES ").expect("an insert has VALUES");
    let tuple = tail
        .split_once(" RETURNING")
        .map_or(tail, |(tuple, _)| tuple);
    let placeholders = || {
        tuple.split('$').skip(1).map(|after| {
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            (
                digits,
                after[..digits]
                    .parse::<usize>()
                    .expect("a numbered placeholder"),
            )
        })
    };
    let per_row = placeholders().map(|(_, n)| n).max().unwrap_or(0);
    let mut sql = format!("{head}VALUES ");
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        let mut parts = tuple.split('$');
        sql.push_str(parts.next().unwrap_or_default());
        for (after, (digits, n)) in parts.zip(placeholders()) {
            match dialect {
                Dialect::Postgres => sql.push_str(&format!("${}", n + row * per_row)),
                Dialect::Sqlite => sql.push('?'),
            }
            sql.push_str(&after[digits..]);
        }
    }
    sql
}

/// Rows per multi-row insert of [`Store::insert_batch`] (at most 26 parameters each, 13,000
/// a statement: below both engines' limits on bound parameters, 32,766 and 65,535).
pub(super) const ROWS_PER_INSERT: usize = 500;

/// `items` with each key (the first field) once, in their first order.
fn unique<'a, T>(items: impl Iterator<Item = (&'a str, T)>) -> Vec<(&'a str, T)> {
    let mut seen = std::collections::HashSet::new();
    items.filter(|(key, _)| seen.insert(*key)).collect()
}

pub(super) const INSERT_ARENA: &str = "INSERT INTO arenas (hash, bytes, created_at, source) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO UPDATE SET created_at = excluded.created_at, \
     source = COALESCE(excluded.source, arenas.source)";

type Query<'q, DB> = sqlx::query::Query<'q, DB, <DB as Database>::Arguments>;

impl NewJob<'_> {
    /// The columns every insert shares: id to arena hash, then the creation time as often as
    /// `stamp` says.
    fn bind_common<'q, DB: Database>(&self, query: Query<'q, DB>, stamp: Stamp) -> Query<'q, DB>
    where
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
    {
        let o = self.options;
        let query = query
            .bind(self.id.to_string())
            .bind(self.owner.to_string())
            .bind(o.priority)
            .bind(o.backend.name().to_string())
            .bind(o.time_limit_secs as i64)
            .bind(o.format.name().to_string())
            .bind(o.return_kind.name().to_string())
            .bind(self.arena_hash.to_string());
        let Stamp(now, columns) = stamp;
        (0..columns).fold(query, |query, _| query.bind(now))
    }

    fn bind_member<'q, DB: Database>(&self, query: Query<'q, DB>) -> Query<'q, DB>
    where
        Option<String>: Encode<'q, DB> + Type<DB>,
    {
        query
            .bind(self.member.map(|(batch, _)| batch.to_string()))
            .bind(self.member.map(|(_, name)| name.to_string()))
    }

    fn bind_queued<'q, DB: Database>(&self, query: Query<'q, DB>, stamp: Stamp) -> Query<'q, DB>
    where
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
        f64: Encode<'q, DB> + Type<DB>,
        Option<i64>: Encode<'q, DB> + Type<DB>,
        Option<f64>: Encode<'q, DB> + Type<DB>,
        Option<String>: Encode<'q, DB> + Type<DB>,
    {
        let arena = self.parsed.map(|(a, _)| a);
        let query = self
            .bind_common(query, stamp)
            .bind(self.upload_ms)
            .bind(arena.map(|a| a.vertices as i64))
            .bind(arena.map(|a| a.edges as i64))
            .bind(arena.map(|a| a.bound.to_string()))
            .bind(self.parsed.map(|(_, ms)| ms))
            .bind(i64::from(self.options.credits))
            .bind(arena.map(|a| i64::from(a.parity)))
            .bind(self.gpu_memory.min(i64::MAX as u64) as i64);
        self.bind_member(query)
    }

    fn bind_reused<'q, DB: Database>(
        &self,
        query: Query<'q, DB>,
        now: i64,
        reuse: Reuse<'_>,
    ) -> Query<'q, DB>
    where
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
        Option<String>: Encode<'q, DB> + Type<DB>,
    {
        let summary = reuse.summary;
        let query = self
            .bind_common(query, Stamp::finished(now))
            .bind(summary.backend.clone())
            .bind(summary.vertices as i64)
            .bind(summary.edges as i64)
            .bind(summary.bound.to_string())
            .bind(reuse.key.to_string())
            .bind(i64::from(self.options.credits));
        self.bind_member(query)
    }
}

impl Store {
    /// Inserts a queued job; returns its sequence number.
    pub async fn insert_job(&self, job: &NewJob<'_>) -> Result<i64, StoreError> {
        let now = now_ms();
        let seq: i64 = with_pool!(self, pool => job
            .bind_queued(sqlx::query(INSERT_QUEUED), Stamp::queued(now))
            .fetch_one(pool)
            .await?
            .try_get(0)?);
        // No announcement here: the submitting process hands the job to its own scheduler
        // (with the game it parsed); other hosts hear the database's notification.
        Ok(seq)
    }

    /// Inserts a job already succeeded with an earlier identical job's result.
    pub async fn insert_reused_job(
        &self,
        job: &NewJob<'_>,
        reuse: Reuse<'_>,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        with_pool!(self, pool => job
            .bind_reused(sqlx::query(INSERT_REUSED), now, reuse)
            .fetch_one(pool)
            .await
            .map(drop)?);
        self.announce(StoreEvent::Changed(job.id));
        Ok(())
    }

    /// Records a batch in one transaction: each arena (`(hash, bytes)`, stored at
    /// [`Store::arena_path`]; on PostgreSQL with its chunks), then each job, queued or
    /// succeeded already (with an identical job's result, or its own: the result row, and on
    /// PostgreSQL its chunks, go in first). One commit for all: a batch of hundreds of small
    /// games costs one durable write, not hundreds.
    pub async fn insert_batch(
        &self,
        arenas: &[(&str, u64)],
        jobs: &[(NewJob<'_>, BatchStart<'_>)],
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let begin = self.dialect().begin_relaxed();
        let start = std::time::Instant::now();
        let mut marks = [0.0f64; 3];
        let mut mark = |i: usize| marks[i] = start.elapsed().as_secs_f64() * 1e3;
        with_pool!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            mark(0);
            // The arenas and the results the jobs name, each in a few multi-row inserts
            // (one statement each cost ~40 µs on SQLite: 20 ms of a 285-member batch); a key
            // appears once per statement (PostgreSQL refuses to update a row twice in one).
            for rows in unique(arenas.iter().copied()).chunks(ROWS_PER_INSERT) {
                let mut insert = sqlx::QueryBuilder::new("INSERT INTO arenas (hash, bytes, created_at) ");
                insert.push_values(rows, |mut row, &(hash, bytes)| {
                    row.push_bind(hash.to_string()).push_bind(bytes as i64).push_bind(now);
                });
                insert.push(" ON CONFLICT (hash) DO UPDATE SET created_at = excluded.created_at");
                insert.build().persistent(false).execute(&mut *tx).await?;
            }
            for &(hash, _) in arenas {
                tx.store_chunks_if_absent(Table::Arenas, hash, &self.arena_path(hash))
                    .await?;
            }
            let solved = jobs.iter().filter_map(|(_, start)| match start {
                BatchStart::Solved(solved) => Some((solved.result_key, solved.summary)),
                _ => None,
            });
            for rows in unique(solved).chunks(ROWS_PER_INSERT) {
                let mut insert = sqlx::QueryBuilder::new("INSERT INTO results (key, summary, created_at) ");
                insert.push_values(rows, |mut row, &(key, summary)| {
                    let summary = serde_json::to_string(summary).expect("summary serializes");
                    row.push_bind(key.to_string()).push_bind(summary).push_bind(now);
                });
                insert.push(" ON CONFLICT (key) DO UPDATE SET summary = excluded.summary");
                insert.build().persistent(false).execute(&mut *tx).await?;
                for &(key, _) in rows {
                    tx.store_chunks_if_absent(Table::Results, key, &self.result_path(key))
                        .await?;
                }
            }
            // The jobs in the archive's order (their `seq`), each run of one kind in
            // multi-row inserts of that kind's statement (one statement per job cost ~40 µs
            // on SQLite: 11 ms of a 285-member batch).
            for run in jobs.chunk_by(|(_, a), (_, b)| a.kind() == b.kind()) {
                for rows in run.chunks(ROWS_PER_INSERT) {
                    let sql = multi_row(rows[0].1.insert_sql(), rows.len(), self.dialect());
                    // Not kept prepared: each row count is a statement of its own.
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
                    for (job, start) in rows {
                        query = match *start {
                            BatchStart::Queued => job.bind_queued(query, Stamp::queued(now)),
                            BatchStart::Reused(reuse) => job.bind_reused(query, now, reuse),
                            // The queued row's columns, then where and how it was solved.
                            BatchStart::Solved(solved) => job
                                .bind_queued(query, Stamp::finished(now))
                                .bind(solved.summary.backend.clone())
                                .bind(solved.device.to_string())
                                .bind(solved.result_key.to_string())
                                .bind(solved.solve_ms),
                        };
                    }
                    query.execute(&mut *tx).await?;
                }
            }
            mark(1);
            tx.commit().await?;
            mark(2);
        });
        tracing::debug!(
            begun_ms = marks[0],
            inserts_ms = marks[1] - marks[0],
            commit_ms = marks[2] - marks[1],
            jobs = jobs.len(),
            "batch inserted"
        );
        for (job, start) in jobs {
            if !matches!(start, BatchStart::Queued) {
                self.announce(StoreEvent::Changed(job.id));
            }
        }
        Ok(())
    }

    /// The jobs of batch `batch`, in the archive's order (empty for an unknown batch).
    pub async fn batch_jobs(&self, batch: JobId) -> Result<Vec<JobRecord>, StoreError> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE batch = $1 ORDER BY seq");
        with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(batch.to_string())
            .fetch_all(pool)
            .await?
            .iter()
            .map(decode_job)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_row_shifts_each_copy_or_makes_its_placeholders_anonymous() {
        let sql = "INSERT INTO t (a, b, c) VALUES ($1, 'x', $2 + $3) RETURNING seq";
        assert_eq!(
            multi_row(sql, 3, Dialect::Postgres),
            "INSERT INTO t (a, b, c) VALUES ($1, 'x', $2 + $3), ($4, 'x', $5 + $6), \
             ($7, 'x', $8 + $9)"
        );
        assert_eq!(
            multi_row(sql, 2, Dialect::Sqlite),
            "INSERT INTO t (a, b, c) VALUES (?, 'x', ? + ?), (?, 'x', ? + ?)"
        );
        assert_eq!(
            multi_row(sql, 1, Dialect::Postgres),
            "INSERT INTO t (a, b, c) VALUES ($1, 'x', $2 + $3)"
        );
    }

    /// Anonymous placeholders are filled in the order they appear, so each job insert must
    /// name its placeholders once each, in order; and a full statement stays within both
    /// engines' limits.
    #[test]
    fn every_job_insert_names_its_placeholders_once_in_order() {
        for insert in [INSERT_QUEUED, INSERT_REUSED, INSERT_SOLVED] {
            let numbers: Vec<usize> = insert
                .split('$')
                .skip(1)
                .map(|after| {
                    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
                    digits.parse().unwrap()
                })
                .collect();
            assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>(), "{insert}");
            let sql = multi_row(insert, ROWS_PER_INSERT, Dialect::Postgres);
            assert!(!sql.contains("RETURNING"));
            assert!(numbers.len() * ROWS_PER_INSERT <= 32_766);
            assert_eq!(sql.matches("), (").count(), ROWS_PER_INSERT - 1);
            assert_eq!(
                multi_row(insert, ROWS_PER_INSERT, Dialect::Sqlite)
                    .matches('?')
                    .count(),
                numbers.len() * ROWS_PER_INSERT
            );
        }
    }
}
