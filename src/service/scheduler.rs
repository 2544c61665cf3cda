//! The scheduler: an actor (one tokio task) that owns the in-memory queue and the worker
//! slots, driven by [`Command`]s. Nothing else touches the queue, so there are no locks.
//!
//! Order: higher priority first, FIFO (submission sequence) within a priority. Slots: one per
//! GPU plus `cpu_workers` CPU slots. A job goes to a free GPU when its estimated size fits
//! the device; when every GPU is busy, `auto` jobs run on the CPU if they are small or have
//! waited longer than the fallback threshold; `gpu` jobs wait for a GPU; `cpu`/`reference`
//! jobs use CPU slots only. With no GPU every job runs on the CPU pool. The choice is the pure
//! function [`pick_slot`], tested on its own.
//!
//! The scheduler persists nothing: the store is the truth, and at start-up the queue is
//! rebuilt from it. Workers run jobs on their own threads ([`super::worker`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::job::{BackendChoice, JobId};
use super::slots::{Assignment, GpuDevice, QueuedJob, SlotKind};
use super::worker::WorkerContext;
use crate::solve::{Control, ProgressSnapshot};

/// Fallback rules, from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct FallbackRules {
    /// Arenas with at most this many edges may use the CPU while GPUs are busy.
    pub small_edges: u64,
    /// Jobs that waited this long may use the CPU while GPUs are busy.
    pub max_wait: Duration,
}

/// A slot's state as the scheduler sees it.
#[derive(Debug, Clone)]
struct Slot {
    kind: SlotKind,
    job: Option<RunningJob>,
    busy_seconds: f64,
    sender: std::sync::mpsc::Sender<Assignment>,
}

#[derive(Debug, Clone)]
struct RunningJob {
    id: JobId,
    control: Control,
    since: Instant,
}

/// Picks the slot for `job` given which slots are free, or `None` to keep it waiting.
pub fn pick_slot(
    job: &QueuedJob,
    free: &[SlotKind],
    gpus: &[GpuDevice],
    rules: FallbackRules,
    now: Instant,
) -> Option<SlotKind> {
    let free_gpu = free.iter().copied().find(|slot| match slot {
        SlotKind::Gpu(i) => job.memory_estimate <= gpus[*i].memory_bytes,
        SlotKind::Cpu(_) => false,
    });
    let free_cpu = free
        .iter()
        .copied()
        .find(|slot| matches!(slot, SlotKind::Cpu(_)));
    match job.backend {
        BackendChoice::Gpu => free_gpu,
        BackendChoice::Cpu | BackendChoice::Reference | BackendChoice::Parity => free_cpu,
        BackendChoice::Auto => {
            let fits_some_gpu = gpus.iter().any(|g| job.memory_estimate <= g.memory_bytes);
            let cpu_allowed = !fits_some_gpu
                || job.edges_estimate <= rules.small_edges
                || now.duration_since(job.enqueued) >= rules.max_wait;
            free_gpu.or(if cpu_allowed { free_cpu } else { None })
        }
    }
}

/// What a live job looks like from outside.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveStatus {
    /// Jobs ahead of it in the queue (0: next), if queued.
    pub queue_position: Option<u64>,
    /// Counters, if running.
    pub progress: Option<ProgressSnapshot>,
}

/// One slot in a devices listing.
#[derive(Debug, Clone)]
pub struct SlotView {
    /// Which slot.
    pub kind: SlotKind,
    /// The job running there.
    pub job: Option<JobId>,
    /// Seconds it has been busy since start-up.
    pub busy_seconds: f64,
}

/// Messages to the scheduler.
#[derive(Debug)]
pub enum Command {
    /// A job to queue.
    Enqueue(QueuedJob),
    /// Stop a job: drop it from the queue or cancel its solve. Answers whether it was live.
    Cancel(JobId, oneshot::Sender<bool>),
    /// A worker finished its assignment.
    Finished(SlotKind, JobId),
    /// Queue position / progress of a job.
    Status(JobId, oneshot::Sender<LiveStatus>),
    /// Every slot and the queue depth.
    Devices(oneshot::Sender<(Vec<SlotView>, usize)>),
    /// Stop dispatching, interrupt running jobs (they go back to the queue), answer when
    /// every worker is idle.
    Shutdown(oneshot::Sender<()>),
}

/// Handle to the scheduler task; cheap to clone.
#[derive(Debug, Clone)]
pub struct SchedulerHandle {
    /// Command channel (unbounded: commands are small and workers must never block on it).
    tx: mpsc::UnboundedSender<Command>,
    /// The GPUs served (fixed at start-up).
    pub gpus: Arc<Vec<GpuDevice>>,
}

impl SchedulerHandle {
    /// Queues a job.
    pub fn enqueue(&self, job: QueuedJob) {
        let _ = self.tx.send(Command::Enqueue(job));
    }

    /// Cancels a job; true if it was queued or running.
    pub async fn cancel(&self, id: JobId) -> bool {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Command::Cancel(id, tx));
        rx.await.unwrap_or(false)
    }

    /// Position and progress of a job.
    pub async fn status(&self, id: JobId) -> LiveStatus {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Command::Status(id, tx));
        rx.await.unwrap_or_default()
    }

    /// Slots and queue depth.
    pub async fn devices(&self) -> (Vec<SlotView>, usize) {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Command::Devices(tx));
        rx.await.unwrap_or_default()
    }

    /// Stops the scheduler (see [`Command::Shutdown`]).
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Command::Shutdown(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Whether the scheduler task is alive.
    pub fn is_alive(&self) -> bool {
        !self.tx.is_closed()
    }
}

/// Starts the scheduler task and its worker threads.
pub fn start(
    gpus: Vec<GpuDevice>,
    cpu_workers: usize,
    rules: FallbackRules,
    context: WorkerContext,
) -> SchedulerHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let gpus = Arc::new(gpus);
    let shutting_down = Arc::new(AtomicBool::new(false));
    let kinds = (0..gpus.len())
        .map(SlotKind::Gpu)
        .chain((0..cpu_workers.max(1)).map(SlotKind::Cpu));
    let slots = kinds
        .map(|kind| {
            let finished = tx.clone();
            let sender = super::worker::spawn_worker(
                kind,
                gpus.clone(),
                context.clone(),
                move |id| {
                    let _ = finished.send(Command::Finished(kind, id));
                },
                shutting_down.clone(),
            );
            Slot {
                kind,
                job: None,
                busy_seconds: 0.0,
                sender,
            }
        })
        .collect();
    let actor = Scheduler {
        queue: BTreeMap::new(),
        positions: HashMap::new(),
        slots,
        gpus: gpus.clone(),
        rules,
        shutting_down,
        shutdown_waiter: None,
        context,
    };
    tokio::spawn(actor.run(rx));
    SchedulerHandle { tx, gpus }
}

/// The actor's state.
struct Scheduler {
    /// Waiting jobs by (−priority, seq): iteration order is dispatch order.
    queue: BTreeMap<(i64, i64), QueuedJob>,
    /// Queue key of each waiting job.
    positions: HashMap<JobId, (i64, i64)>,
    slots: Vec<Slot>,
    gpus: Arc<Vec<GpuDevice>>,
    rules: FallbackRules,
    shutting_down: Arc<AtomicBool>,
    shutdown_waiter: Option<oneshot::Sender<()>>,
    context: WorkerContext,
}

impl Scheduler {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        loop {
            let wake = self.next_fallback_deadline();
            let command = tokio::select! {
                command = rx.recv() => command,
                _ = sleep_until(wake) => { self.dispatch(); continue; }
            };
            let Some(command) = command else { break };
            self.handle(command);
            self.dispatch();
            self.context
                .metrics
                .set_queue_depth(self.queue.len() as u64);
            if self.shutdown_waiter.is_some() && self.slots.iter().all(|s| s.job.is_none()) {
                let _ = self.shutdown_waiter.take().map(|w| w.send(()));
                break;
            }
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Enqueue(job) => {
                if self.shutting_down.load(Ordering::Relaxed) {
                    return; // stays queued in the store; the next start picks it up
                }
                let key = (-job.priority, job.seq);
                self.positions.insert(job.id, key);
                self.queue.insert(key, job);
            }
            Command::Cancel(id, reply) => {
                if let Some(key) = self.positions.remove(&id) {
                    self.queue.remove(&key);
                    let _ = reply.send(true);
                } else if let Some(running) = self.running(id) {
                    running.control.cancel();
                    let _ = reply.send(true);
                } else {
                    let _ = reply.send(false);
                }
            }
            Command::Finished(kind, id) => {
                if let Some(slot) = self.slots.iter_mut().find(|s| s.kind == kind) {
                    if let Some(job) = slot.job.take_if(|j| j.id == id) {
                        let seconds = job.since.elapsed().as_secs_f64();
                        slot.busy_seconds += seconds;
                        if let SlotKind::Gpu(i) = kind {
                            self.context
                                .metrics
                                .add_gpu_busy(self.gpus[i].ordinal, seconds);
                        }
                    }
                }
            }
            Command::Status(id, reply) => {
                let status = if let Some(key) = self.positions.get(&id) {
                    LiveStatus {
                        queue_position: Some(self.queue.range(..*key).count() as u64),
                        progress: None,
                    }
                } else if let Some(running) = self.running(id) {
                    LiveStatus {
                        queue_position: None,
                        progress: Some(running.control.progress().snapshot()),
                    }
                } else {
                    LiveStatus::default()
                };
                let _ = reply.send(status);
            }
            Command::Devices(reply) => {
                let views = self
                    .slots
                    .iter()
                    .map(|s| SlotView {
                        kind: s.kind,
                        job: s.job.as_ref().map(|j| j.id),
                        busy_seconds: s.busy_seconds
                            + s.job
                                .as_ref()
                                .map_or(0.0, |j| j.since.elapsed().as_secs_f64()),
                    })
                    .collect();
                let _ = reply.send((views, self.queue.len()));
            }
            Command::Shutdown(reply) => {
                self.shutting_down.store(true, Ordering::SeqCst);
                self.queue.clear();
                self.positions.clear();
                for slot in &self.slots {
                    if let Some(job) = &slot.job {
                        job.control.cancel();
                    }
                }
                self.shutdown_waiter = Some(reply);
            }
        }
    }

    fn running(&self, id: JobId) -> Option<&RunningJob> {
        self.slots
            .iter()
            .filter_map(|s| s.job.as_ref())
            .find(|j| j.id == id)
    }

    /// Assigns waiting jobs to free slots, in queue order.
    fn dispatch(&mut self) {
        if self.shutting_down.load(Ordering::Relaxed) {
            return;
        }
        let now = Instant::now();
        let mut free: Vec<SlotKind> = self
            .slots
            .iter()
            .filter(|s| s.job.is_none())
            .map(|s| s.kind)
            .collect();
        let mut chosen = Vec::new();
        for (key, job) in &self.queue {
            if free.is_empty() {
                break;
            }
            if let Some(kind) = pick_slot(job, &free, &self.gpus, self.rules, now) {
                free.retain(|&k| k != kind);
                chosen.push((*key, kind));
            }
        }
        for (key, kind) in chosen {
            let job = self.queue.remove(&key).expect("chosen from the queue");
            self.positions.remove(&job.id);
            let control = Control::new();
            let slot = self
                .slots
                .iter_mut()
                .find(|s| s.kind == kind)
                .expect("slot exists");
            slot.job = Some(RunningJob {
                id: job.id,
                control: control.clone(),
                since: now,
            });
            self.context
                .metrics
                .observe_queue_wait(now.duration_since(job.enqueued));
            let assignment = Assignment { job, control };
            if slot.sender.send(assignment).is_err() {
                tracing::error!(
                    ?kind,
                    "worker thread is gone; its job stays queued in the store"
                );
                slot.job = None;
            }
        }
    }

    /// When the oldest waiting `auto` job crosses the CPU fallback threshold.
    fn next_fallback_deadline(&self) -> Option<Instant> {
        if self.gpus.is_empty() {
            return None;
        }
        self.queue
            .values()
            .filter(|j| j.backend == BackendChoice::Auto)
            .map(|j| j.enqueued + self.rules.max_wait)
            .min()
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(backend: BackendChoice, edges: u64, waited: Duration, now: Instant) -> QueuedJob {
        QueuedJob {
            id: JobId::now_v7(),
            seq: 1,
            priority: 0,
            backend,
            edges_estimate: edges,
            memory_estimate: edges * 24,
            enqueued: now - waited,
            preparsed: None,
        }
    }

    fn gpus() -> Vec<GpuDevice> {
        vec![GpuDevice {
            ordinal: 0,
            name: "test".into(),
            memory_bytes: 1 << 30,
        }]
    }

    const RULES: FallbackRules = FallbackRules {
        small_edges: 1000,
        max_wait: Duration::from_secs(2),
    };

    #[test]
    fn slot_choice_follows_the_fallback_rules() {
        let now = Instant::now();
        let (gpu, cpu) = (SlotKind::Gpu(0), SlotKind::Cpu(0));
        let gpus = gpus();
        let cases = [
            // (backend, edges, waited s, free slots, expected)
            (BackendChoice::Auto, 10_000, 0, vec![gpu, cpu], Some(gpu)),
            (BackendChoice::Auto, 10_000, 0, vec![cpu], None),
            (BackendChoice::Auto, 500, 0, vec![cpu], Some(cpu)),
            (BackendChoice::Auto, 10_000, 3, vec![cpu], Some(cpu)),
            (BackendChoice::Gpu, 500, 100, vec![cpu], None),
            (BackendChoice::Gpu, 500, 0, vec![gpu, cpu], Some(gpu)),
            (BackendChoice::Cpu, 10_000, 0, vec![gpu, cpu], Some(cpu)),
            (BackendChoice::Reference, 10_000, 0, vec![gpu], None),
            // Too big for the GPU's memory: the CPU at once.
            (BackendChoice::Auto, 1 << 30, 0, vec![gpu, cpu], Some(cpu)),
        ];
        for (backend, edges, waited, free, expected) in cases {
            let j = job(backend, edges, Duration::from_secs(waited), now);
            assert_eq!(
                pick_slot(&j, &free, &gpus, RULES, now),
                expected,
                "{backend:?} edges={edges} waited={waited}s free={free:?}"
            );
        }
    }

    #[test]
    fn without_gpus_everything_runs_on_the_cpu() {
        let now = Instant::now();
        let j = job(BackendChoice::Auto, 1 << 40, Duration::ZERO, now);
        assert_eq!(
            pick_slot(&j, &[SlotKind::Cpu(1)], &[], RULES, now),
            Some(SlotKind::Cpu(1))
        );
    }
}
