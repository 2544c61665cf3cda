//! The worker registry: each serving or working process writes its row (host, slots) with
//! every heartbeat, so `GET /v1/workers` on any host lists every live worker with its GPUs
//! and the jobs it runs (read from the jobs' leases). Rows of workers that stopped are
//! deleted by them; rows of workers that died stop being listed once their heartbeat is
//! stale, and are deleted later.

use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::{Store, StoreError, with_pool};
use crate::job::JobId;

/// A `workers` row as read: id, host, api, started_at, heartbeat_at, slots (JSON).
type WorkerRow = (String, String, i64, i64, i64, String);

/// What a worker process serves, as registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerSlots {
    /// Its GPUs.
    pub gpus: Vec<RegisteredGpu>,
    /// Jobs its CPU pool runs at once (0: it runs no jobs, an API-only process).
    pub cpu_workers: usize,
    /// Threads of each CPU solve.
    pub cpu_threads: usize,
    /// The binary's version.
    pub version: String,
}

/// A GPU of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegisteredGpu {
    /// CUDA ordinal on its host.
    pub ordinal: u32,
    /// Marketing name.
    pub name: String,
    /// Device memory, when known.
    pub memory_bytes: Option<u64>,
}

/// A registered process.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerRecord {
    /// Its id (the lease owner of its jobs).
    pub id: String,
    /// Its host name.
    pub host: String,
    /// Whether it also serves the HTTP API.
    pub api: bool,
    /// When it started, ms since the epoch.
    pub started_at: i64,
    /// Its last heartbeat, ms since the epoch (the database's clock).
    pub heartbeat_at: i64,
    /// Its slots.
    pub slots: WorkerSlots,
    /// The jobs it holds: (id, device).
    pub jobs: Vec<(JobId, String)>,
}

impl Store {
    /// Writes this process's row with a fresh heartbeat.
    pub async fn register_worker(
        &self,
        id: &str,
        host: &str,
        api: bool,
        started_at: i64,
        slots: &WorkerSlots,
    ) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO workers (id, host, api, started_at, heartbeat_at, gpus, slots) \
             VALUES ($1, $2, $3, $4, {now}, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET heartbeat_at = {now}, gpus = excluded.gpus, \
             slots = excluded.slots",
            now = self.dialect().now_ms()
        );
        let slots_gpus = slots.gpus.len() as i64;
        let slots = serde_json::to_string(slots).expect("slots serialize");
        with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(host)
            .bind(i64::from(api))
            .bind(started_at)
            .bind(slots_gpus)
            .bind(slots)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(())
    }

    /// Whether a worker with a heartbeat at most `stale_ms` old serves a GPU.
    pub async fn live_gpus(&self, stale_ms: u64) -> Result<bool, StoreError> {
        let sql = format!(
            "SELECT COUNT(*) FROM workers WHERE gpus > 0 AND heartbeat_at >= {} - $1",
            self.dialect().now_ms()
        );
        let n: i64 = with_pool!(self, pool => sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(stale_ms.min(i64::MAX as u64) as i64)
            .fetch_one(pool)
            .await?
            .try_get(0)?);
        Ok(n > 0)
    }

    /// Removes this process's row (it stops).
    pub async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        with_pool!(self, pool => sqlx::query("DELETE FROM workers WHERE id = $1")
            .bind(id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(())
    }

    /// Workers whose heartbeat is at most `stale_ms` old, by host and start, each with the
    /// jobs it holds; rows ten times staler are deleted.
    pub async fn live_workers(&self, stale_ms: u64) -> Result<Vec<WorkerRecord>, StoreError> {
        let now = self.dialect().now_ms();
        let forget = format!("DELETE FROM workers WHERE heartbeat_at < {now} - $1");
        let list = format!(
            "SELECT id, host, api, started_at, heartbeat_at, slots FROM workers \
             WHERE heartbeat_at >= {now} - $1 ORDER BY host, started_at, id"
        );
        let stale = stale_ms.min(i64::MAX as u64 / 10) as i64;
        let (rows, jobs): (Vec<WorkerRow>, Vec<(String, String, String)>) = with_pool!(self, pool => {
            sqlx::query(sqlx::AssertSqlSafe(forget))
                .bind(stale * 10)
                .execute(pool)
                .await?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(list))
                .bind(stale)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| {
                    Ok((
                        r.try_get(0)?,
                        r.try_get(1)?,
                        r.try_get(2)?,
                        r.try_get(3)?,
                        r.try_get(4)?,
                        r.try_get(5)?,
                    ))
                })
                .collect::<Result<_, StoreError>>()?;
            let jobs = sqlx::query(
                "SELECT id, worker, COALESCE(device, '') FROM jobs \
                 WHERE state = 'running' AND worker IS NOT NULL ORDER BY seq",
            )
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_, StoreError>>()?;
            (rows, jobs)
        });
        rows.into_iter()
            .map(|(id, host, api, started_at, heartbeat_at, slots)| {
                let slots: WorkerSlots = serde_json::from_str(&slots)
                    .map_err(|e| StoreError::Corrupt(format!("worker slots: {e}")))?;
                let held = jobs
                    .iter()
                    .filter(|(_, worker, _)| *worker == id)
                    .filter_map(|(job, _, device)| {
                        Some((JobId::parse_str(job).ok()?, device.clone()))
                    })
                    .collect();
                Ok(WorkerRecord {
                    id,
                    host,
                    api: api != 0,
                    started_at,
                    heartbeat_at,
                    slots,
                    jobs: held,
                })
            })
            .collect()
    }
}
