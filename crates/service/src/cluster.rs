//! One serving or working process as a member of the cluster that shares a store (a cluster
//! of one on SQLite): [`Node::start`] opens the store, starts the scheduler and its workers,
//! and two tasks beside them —
//!
//! - the **heartbeat** (every [`heartbeat_period`], at most a second): renews the leases of
//!   the jobs running here, recording their progress; stops solves whose jobs are no longer
//!   this process's (cancelled on another host, or taken over after a lease expired); puts
//!   jobs whose lease expired back in the queue (or fails them after `max_attempts`); and
//!   refreshes this process's row in the worker registry;
//! - the **forwarder**: turns store notifications into claim rounds, cancellations and
//!   long-poll wake-ups.
//!
//! `egsolve serve` runs a node beside its HTTP server; `egsolve worker` runs one alone.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::ServeConfig;
use super::events::JobEvents;
use super::metrics::Metrics;
use super::scheduler::{self, FallbackRules, SchedulerHandle};
use super::slots::GpuDevice;
use super::store::workers::{RegisteredGpu, WorkerSlots};
use super::store::{Store, StoreError, StoreEvent, now_ms};
use super::worker::WorkerContext;

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another process runs on the data directory.
    #[error(transparent)]
    DataDir(#[from] crate::data_dir_lock::DataDirLockError),
    /// Configured GPU ordinals that the driver does not list.
    #[error("GPU devices {0:?} were asked for but are not available here (see `egsolve devices`)")]
    NoSuchGpu(Vec<u32>),
}

/// A running member: the store, the scheduler and the tasks beside them.
#[derive(Debug)]
pub struct Node {
    /// The store.
    pub store: Store,
    /// The scheduler.
    pub scheduler: SchedulerHandle,
    /// Metrics registry.
    pub metrics: Arc<Metrics>,
    /// Long-poll wake-ups.
    pub events: Arc<JobEvents>,
    /// This process's worker id (its leases' owner).
    pub worker_id: Arc<str>,
    /// Stops the heartbeat and the forwarder.
    tasks_stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    /// This process's hold on the data directory (one process per directory).
    _data_dir: crate::data_dir_lock::DataDirLock,
}

/// How often the heartbeat runs for a lease of `lease_ms`: three times per lease, and at
/// least every second (so a cancellation on another host stops a solve within a second).
pub fn heartbeat_period(lease_ms: u64) -> Duration {
    Duration::from_millis((lease_ms / 3).clamp(50, 1000))
}

/// This host's name (`HOSTNAME`, else the kernel's).
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

impl Node {
    /// Opens the store `config` names, starts the scheduler with this host's slots (none
    /// when `config.no_worker`), the heartbeat and the forwarder. `api` says whether this
    /// process serves HTTP too (shown in the worker registry).
    pub async fn start(config: Arc<ServeConfig>, api: bool) -> Result<Node, NodeError> {
        let runs_jobs = !config.no_worker;
        let gpus = if runs_jobs {
            select_gpus(&config.gpu_devices)?
        } else {
            Vec::new()
        };
        std::fs::create_dir_all(&config.data_dir).map_err(StoreError::Io)?;
        // Before the store: a second process must not re-queue this one's running jobs.
        let data_dir = crate::data_dir_lock::DataDirLock::acquire(&config.data_dir)?;
        // Compiled kernels live with the service's data, so a restart never compiles again.
        egsolve_gpu::cubin_cache::set_directory(config.data_dir.join("kernels"));
        // Each GPU's context, kernels (every width) and staging buffers start now, on
        // threads of their own, not in the first job's solve (nor in the first race, which
        // the CPU would then win by default).
        for gpu in &gpus {
            egsolve_gpu::warm_up(Some(gpu.ordinal as usize), true, true);
        }
        let store = Store::open_configured(
            config.database.as_deref(),
            &config.data_dir,
            config.sync_commits,
        )
        .await?;
        if !store.is_shared() {
            // One host: whatever was running when it stopped is nobody's any more.
            let requeued = store.requeue_running().await?;
            if requeued > 0 {
                tracing::warn!(
                    requeued,
                    "jobs that were running when the service stopped are queued again"
                );
            }
        }
        let host = host_name();
        let worker_id: Arc<str> = format!(
            "{host}-{}-{}",
            std::process::id(),
            &uuid::Uuid::now_v7().simple().to_string()[26..]
        )
        .into();
        let metrics = Arc::new(Metrics::default());
        let events = Arc::new(JobEvents::default());
        let context = WorkerContext {
            store: store.clone(),
            metrics: metrics.clone(),
            events: events.clone(),
            config: config.clone(),
            runtime: tokio::runtime::Handle::current(),
            cpu_solves: Arc::default(),
            worker_id: worker_id.clone(),
        };
        let rules = FallbackRules {
            small_edges: config.cpu_small_edges,
            max_wait: Duration::from_millis(config.cpu_fallback_wait_ms),
            gpu_memory_cap: config.max_gpu_job_memory_bytes,
        };
        let cpu_workers = if runs_jobs {
            config.cpu_worker_count()
        } else {
            0
        };
        let slots = WorkerSlots {
            gpus: gpus
                .iter()
                .map(|g| RegisteredGpu {
                    ordinal: g.ordinal,
                    name: g.name.clone(),
                    memory_bytes: (g.memory_bytes != u64::MAX).then_some(g.memory_bytes),
                })
                .collect(),
            cpu_workers,
            cpu_threads: if config.cpu_threads > 0 {
                config.cpu_threads
            } else {
                crate::config::cores()
            },
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let scheduler = scheduler::start(gpus, cpu_workers, rules, context);
        let tasks_stop = CancellationToken::new();
        let heartbeat = Heartbeat {
            store: store.clone(),
            scheduler: scheduler.clone(),
            metrics: metrics.clone(),
            config: config.clone(),
            worker_id: worker_id.clone(),
            host,
            api,
            started_at: now_ms(),
            slots,
        };
        // Registered before the first claim can name this worker in a job.
        if let Err(e) = heartbeat.register().await {
            tracing::warn!("cannot register this worker: {e}");
        }
        let tasks = vec![
            tokio::spawn(heartbeat.run(tasks_stop.clone())),
            tokio::spawn(forward(
                store.clone(),
                scheduler.clone(),
                events.clone(),
                tasks_stop.clone(),
            )),
        ];
        scheduler.wake(); // jobs queued before this start
        tracing::info!(worker = %worker_id, store = store.engine(), "worker node started");
        Ok(Node {
            store,
            scheduler,
            metrics,
            events,
            worker_id,
            tasks_stop,
            tasks,
            _data_dir: data_dir,
        })
    }

    /// Stops the heartbeat and the forwarder and leaves the registry (the scheduler is
    /// stopped by the caller first, so its jobs are back in the queue).
    pub async fn stop(self) {
        self.tasks_stop.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.store.unregister_worker(&self.worker_id),
        )
        .await;
    }
}

/// The GPUs to serve: every device the driver lists when `wanted` is empty (none on a
/// machine without a CUDA driver), else exactly the ordinals asked for.
fn select_gpus(wanted: &[u32]) -> Result<Vec<GpuDevice>, NodeError> {
    let listed: Vec<GpuDevice> = egsolve_gpu::list_devices()
        .into_iter()
        .map(|d| GpuDevice {
            ordinal: d.ordinal as u32,
            name: d.name,
            memory_bytes: d.memory_total,
        })
        .collect();
    if wanted.is_empty() {
        return Ok(listed);
    }
    let missing: Vec<u32> = wanted
        .iter()
        .copied()
        .filter(|o| !listed.iter().any(|d| d.ordinal == *o))
        .collect();
    if !missing.is_empty() {
        return Err(NodeError::NoSuchGpu(missing));
    }
    Ok(listed
        .into_iter()
        .filter(|d| wanted.contains(&d.ordinal))
        .collect())
}

/// What the heartbeat needs.
struct Heartbeat {
    store: Store,
    scheduler: SchedulerHandle,
    metrics: Arc<Metrics>,
    config: Arc<ServeConfig>,
    worker_id: Arc<str>,
    host: String,
    api: bool,
    started_at: i64,
    slots: WorkerSlots,
}

impl Heartbeat {
    async fn register(&self) -> Result<(), StoreError> {
        self.store
            .register_worker(
                &self.worker_id,
                &self.host,
                self.api,
                self.started_at,
                &self.slots,
            )
            .await
    }

    async fn run(self, stop: CancellationToken) {
        let mut tick = tokio::time::interval(heartbeat_period(self.config.lease_ms));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.cancelled() => return,
            }
            match self.beat().await {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!("heartbeat: the store answers again");
                }
                Ok(()) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(
                        "heartbeat failed: {e}; retrying (leases expire after {} ms)",
                        self.config.lease_ms
                    );
                }
                Err(_) => {}
            }
        }
    }

    async fn beat(&self) -> Result<(), StoreError> {
        let held: Vec<_> = self
            .scheduler
            .held()
            .await
            .into_iter()
            .map(|j| (j.id, j.attempt, j.progress))
            .collect();
        let lost = self
            .store
            .renew(&self.worker_id, self.config.lease_ms, &held)
            .await?;
        if !lost.is_empty() {
            self.metrics.count_leases_lost(lost.len() as u64);
        }
        for id in lost {
            if self.scheduler.cancel(id).await {
                tracing::info!(job = %id, "stopped: the job is no longer this worker's");
            }
        }
        let (requeued, failed) = self.store.reap_expired(self.config.max_attempts).await?;
        if requeued + failed > 0 {
            self.scheduler.wake();
        }
        self.register().await?;
        if self.store.is_shared() {
            let stale = heartbeat_period(self.config.lease_ms).as_millis() as u64 * 3 + 1000;
            self.scheduler
                .set_gpus_in_cluster(self.store.live_gpus(stale).await?);
        }
        Ok(())
    }
}

/// Turns store notifications into claim rounds, cancellations and long-poll wake-ups.
async fn forward(
    store: Store,
    scheduler: SchedulerHandle,
    events: Arc<JobEvents>,
    stop: CancellationToken,
) {
    let mut notifications = store.subscribe();
    loop {
        let event = tokio::select! {
            event = notifications.recv() => event,
            _ = stop.cancelled() => return,
        };
        match event {
            Ok(StoreEvent::Queued(id)) => {
                scheduler.wake();
                events.publish(id);
            }
            Ok(StoreEvent::Cancelled(id)) => {
                scheduler.cancel(id).await;
                events.publish(id);
            }
            Ok(StoreEvent::Changed(id)) => {
                scheduler.forget(id);
                events.publish(id);
            }
            Ok(StoreEvent::Resync) | Err(RecvError::Lagged(_)) => {
                scheduler.wake();
                events.publish_all();
            }
            Err(RecvError::Closed) => return,
        }
    }
}
