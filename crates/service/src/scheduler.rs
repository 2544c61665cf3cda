//! The scheduler: an actor (one tokio task per process) that owns this process's worker
//! slots, driven by [`Command`]s, and fills free slots by *claiming* queued jobs from the
//! store ([`Store::claim`]) — the queue itself lives in the store, shared by every process
//! that serves it (one on SQLite, any number on PostgreSQL). Nothing else touches the slots,
//! so there are no locks.
//!
//! Order: higher priority first, FIFO (submission sequence) within a priority. Slots: one per
//! GPU plus `cpu_workers` CPU slots. A job goes to a free GPU when its estimated size fits
//! the device; when every GPU is busy, `auto` jobs run on the CPU if they are small or have
//! waited longer than the fallback threshold; `gpu` jobs wait for a GPU; `cpu`/`reference`
//! jobs use CPU slots only. With no GPU every job runs on the CPU pool. The choice is the pure
//! function [`pick_slot`], tested on its own.
//!
//! A claim round runs when a job is submitted here, when the store announces a queued job
//! (another host's submission, an expired lease), when a slot frees, and on a short tick
//! (fallback deadlines, lost notifications). Workers run jobs on their own threads
//! ([`super::worker`]); the heartbeat ([`super::cluster`]) renews their leases.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::admission;
use super::job::{BackendChoice, JobId, JobRecord, JobState};
use super::slots::{
    Assignment, GpuDevice, GpuLoans, PreparsedArena, QueuedJob, SlotKind, WorkerEvent,
};
use super::store::Store;
use super::store::claim::{ClaimRequest, Placement};
use super::worker::WorkerContext;
use egsolve_core::solve::{Control, ProgressSnapshot};

/// Fallback rules, from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct FallbackRules {
    /// Arenas with at most this many edges may use the CPU while GPUs are busy.
    pub small_edges: u64,
    /// Jobs that waited this long may use the CPU while GPUs are busy.
    pub max_wait: Duration,
    /// Most device memory one job may use on any GPU (`max_gpu_job_memory_bytes`; 0: the
    /// device's own).
    pub gpu_memory_cap: u64,
}

impl FallbackRules {
    /// A device's memory as jobs may use it.
    pub fn capacity(&self, gpu: &GpuDevice) -> u64 {
        admission::gpu_capacity(gpu.memory_bytes, self.gpu_memory_cap)
    }
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
    attempt: i64,
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
        SlotKind::Gpu(i) => job.memory_estimate <= rules.capacity(&gpus[*i]),
        SlotKind::Cpu(_) => false,
    });
    let free_cpu = free
        .iter()
        .copied()
        .find(|slot| matches!(slot, SlotKind::Cpu(_)));
    let fits_some_gpu = gpus
        .iter()
        .any(|g| job.memory_estimate <= rules.capacity(g));
    match job.backend {
        // A `gpu` job too large for every GPU here runs on the CPU rather than wait forever.
        BackendChoice::Gpu if !gpus.is_empty() && !fits_some_gpu => free_cpu,
        BackendChoice::Gpu => free_gpu,
        BackendChoice::Cpu | BackendChoice::Reference | BackendChoice::Parity => free_cpu,
        // The parity solver's answer: a CPU job (its race borrows a GPU only while the GPU
        // side runs, `worker`), never a GPU slot held by a CPU solve.
        BackendChoice::Auto if job.parity_answer => free_cpu,
        BackendChoice::Auto => {
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

/// A job running in this process, as the heartbeat renews it.
#[derive(Debug, Clone, Copy)]
pub struct HeldJob {
    /// The job.
    pub id: JobId,
    /// Its attempt (the lease's fence).
    pub attempt: i64,
    /// Its counters now.
    pub progress: ProgressSnapshot,
}

/// Messages to the scheduler.
#[derive(Debug)]
pub enum Command {
    /// A job submitted here: claim (its parsed game, if any, is kept for its worker).
    Enqueue(QueuedJob),
    /// Jobs may be waiting: claim for free slots.
    Wake,
    /// Stop a job if it runs here. Answers whether it did.
    Cancel(JobId, oneshot::Sender<bool>),
    /// The job left the queue elsewhere: drop what was kept for it.
    Forget(JobId),
    /// A worker finished its assignment.
    Finished(SlotKind, JobId),
    /// A GPU borrowed for a race was given back after this many seconds of use.
    GpuReturned(usize, f64),
    /// Progress of a job, if it runs here.
    Progress(JobId, oneshot::Sender<Option<ProgressSnapshot>>),
    /// The jobs running here.
    Held(oneshot::Sender<Vec<HeldJob>>),
    /// Every slot.
    Devices(oneshot::Sender<Vec<SlotView>>),
    /// Stop claiming, interrupt running jobs (they go back to the queue), answer when
    /// every worker is idle.
    Shutdown(oneshot::Sender<()>),
}

/// Handle to the scheduler task; cheap to clone.
#[derive(Debug, Clone)]
pub struct SchedulerHandle {
    /// Command channel (unbounded: commands are small and workers must never block on it).
    tx: mpsc::UnboundedSender<Command>,
    /// The GPUs served here (fixed at start-up).
    pub gpus: Arc<Vec<GpuDevice>>,
    /// The store the queue lives in.
    store: Store,
    /// Whether a live worker of the cluster (this process included) serves a GPU; kept by
    /// the heartbeat.
    gpus_in_cluster: Arc<AtomicBool>,
}

impl SchedulerHandle {
    /// Queues a job submitted here (it is in the store already): claims it at once if a
    /// slot is free.
    pub fn enqueue(&self, job: QueuedJob) {
        let _ = self.tx.send(Command::Enqueue(job));
    }

    /// Asks for a claim round (jobs may be waiting).
    pub fn wake(&self) {
        let _ = self.tx.send(Command::Wake);
    }

    /// Stops a job's solve if it runs here; true if it did. (The store's state is the
    /// caller's business: a queued job is cancelled by the store alone.)
    pub async fn cancel(&self, id: JobId) -> bool {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Command::Cancel(id, tx));
        rx.await.unwrap_or(false)
    }

    /// Drops what this process kept for a job that left the queue elsewhere.
    pub fn forget(&self, id: JobId) {
        let _ = self.tx.send(Command::Forget(id));
    }

    /// Position of a queued job (in the store's queue), progress of a running one (this
    /// process's live counters, or its worker's last heartbeat).
    pub async fn status(&self, job: &JobRecord) -> LiveStatus {
        match job.state {
            JobState::Queued => LiveStatus {
                queue_position: self
                    .store
                    .queue_position(job.options.priority, job.seq)
                    .await
                    .ok(),
                progress: None,
            },
            JobState::Running => {
                let (tx, rx) = oneshot::channel();
                let _ = self.tx.send(Command::Progress(job.id, tx));
                LiveStatus {
                    queue_position: None,
                    progress: rx.await.ok().flatten().or(job.progress),
                }
            }
            _ => LiveStatus::default(),
        }
    }

    /// The jobs running here.
    pub async fn held(&self) -> Vec<HeldJob> {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Command::Held(tx));
        rx.await.unwrap_or_default()
    }

    /// This process's slots and the store's queue depth.
    pub async fn devices(&self) -> (Vec<SlotView>, usize) {
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Command::Devices(tx));
        let slots = rx.await.unwrap_or_default();
        let depth = self.store.queue_depth().await.unwrap_or(0);
        (slots, depth as usize)
    }

    /// Whether a `gpu` job can run: this process or another live worker serves a GPU.
    pub fn gpu_jobs_possible(&self) -> bool {
        !self.gpus.is_empty() || self.gpus_in_cluster.load(Ordering::Relaxed)
    }

    /// Records whether a live worker of the cluster serves a GPU.
    pub fn set_gpus_in_cluster(&self, present: bool) {
        self.gpus_in_cluster.store(present, Ordering::Relaxed);
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

/// Starts the scheduler task and its worker threads: one per GPU in `gpus` and
/// `cpu_workers` CPU slots (none at all on an API-only host).
pub fn start(
    gpus: Vec<GpuDevice>,
    cpu_workers: usize,
    rules: FallbackRules,
    context: WorkerContext,
) -> SchedulerHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let gpus = Arc::new(gpus);
    let shutting_down = Arc::new(AtomicBool::new(false));
    let loans = Arc::new(GpuLoans::new(gpus.len()));
    let kinds = (0..gpus.len())
        .map(SlotKind::Gpu)
        .chain((0..cpu_workers).map(SlotKind::Cpu));
    let slots = kinds
        .map(|kind| {
            let finished = tx.clone();
            let sender = super::worker::spawn_worker(
                kind,
                gpus.clone(),
                loans.clone(),
                context.clone(),
                move |event| {
                    let _ = finished.send(match event {
                        WorkerEvent::Finished(id) => Command::Finished(kind, id),
                        WorkerEvent::GpuReturned { gpu, seconds } => {
                            Command::GpuReturned(gpu, seconds)
                        }
                    });
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
    let store = context.store.clone();
    let actor = Scheduler {
        slots,
        gpus: gpus.clone(),
        loans,
        rules,
        shutting_down,
        shutdown_waiter: None,
        preparsed: HashMap::new(),
        claim_failing: false,
        context,
    };
    tokio::spawn(actor.run(rx));
    let gpus_in_cluster = Arc::new(AtomicBool::new(!gpus.is_empty()));
    SchedulerHandle {
        tx,
        gpus,
        store,
        gpus_in_cluster,
    }
}

/// The actor's state.
struct Scheduler {
    slots: Vec<Slot>,
    gpus: Arc<Vec<GpuDevice>>,
    /// Who holds each GPU (shared with the workers, which borrow free ones for races).
    loans: Arc<GpuLoans>,
    rules: FallbackRules,
    shutting_down: Arc<AtomicBool>,
    shutdown_waiter: Option<oneshot::Sender<()>>,
    /// Games parsed at submission here, for whichever of this process's slots claims them.
    preparsed: HashMap<JobId, PreparsedArena>,
    /// Whether the last claim failed (logged once until it works again).
    claim_failing: bool,
    context: WorkerContext,
}

impl Scheduler {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        // The tick catches fallback deadlines and anything a lost notification hid.
        let period = if self.gpus.is_empty() {
            Duration::from_secs(1)
        } else {
            Duration::from_millis(250)
        };
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let mut claim = tokio::select! {
                command = rx.recv() => match command {
                    Some(command) => self.handle(command),
                    None => break,
                },
                _ = tick.tick() => true,
            };
            // Everything already waiting, then one claim round for all of it.
            while let Ok(command) = rx.try_recv() {
                claim |= self.handle(command);
            }
            if self.shutdown_waiter.is_some() && self.slots.iter().all(|s| s.job.is_none()) {
                let _ = self.shutdown_waiter.take().map(|w| w.send(()));
                break;
            }
            if claim {
                self.claim_round().await;
            }
        }
    }

    /// Handles one command; true when a claim round is due.
    fn handle(&mut self, command: Command) -> bool {
        match command {
            Command::Enqueue(job) => {
                if let Some(game) = job.preparsed.filter(|_| !self.slots.is_empty()) {
                    self.preparsed.insert(job.id, game);
                }
                true
            }
            Command::Wake => true,
            Command::Cancel(id, reply) => {
                self.preparsed.remove(&id);
                let running = self.running(id);
                if let Some(job) = running {
                    job.control.cancel();
                }
                let _ = reply.send(running.is_some());
                false
            }
            Command::Forget(id) => {
                self.preparsed.remove(&id);
                false
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
                            self.loans.give_back(i);
                        }
                    }
                }
                true
            }
            Command::GpuReturned(gpu, seconds) => {
                // The race's borrower already gave the flag back; its time is the GPU's.
                if let Some(slot) = self.slots.iter_mut().find(|s| s.kind == SlotKind::Gpu(gpu)) {
                    slot.busy_seconds += seconds;
                }
                self.context
                    .metrics
                    .add_gpu_busy(self.gpus[gpu].ordinal, seconds);
                true
            }
            Command::Progress(id, reply) => {
                let _ = reply.send(self.running(id).map(|j| j.control.progress().snapshot()));
                false
            }
            Command::Held(reply) => {
                let held = self
                    .slots
                    .iter()
                    .filter_map(|s| s.job.as_ref())
                    .map(|j| HeldJob {
                        id: j.id,
                        attempt: j.attempt,
                        progress: j.control.progress().snapshot(),
                    })
                    .collect();
                let _ = reply.send(held);
                false
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
                let _ = reply.send(views);
                false
            }
            Command::Shutdown(reply) => {
                self.shutting_down.store(true, Ordering::SeqCst);
                self.preparsed.clear();
                for slot in &self.slots {
                    if let Some(job) = &slot.job {
                        job.control.cancel();
                    }
                }
                self.shutdown_waiter = Some(reply);
                false
            }
        }
    }

    fn running(&self, id: JobId) -> Option<&RunningJob> {
        self.slots
            .iter()
            .filter_map(|s| s.job.as_ref())
            .find(|j| j.id == id)
    }

    /// Claims queued jobs for the free slots (in queue order, each to the slot
    /// [`pick_slot`] chooses) and hands them to their workers.
    async fn claim_round(&mut self) {
        if self.shutting_down.load(Ordering::Relaxed) {
            return;
        }
        // A GPU slot is free when its flag can be taken (no race borrowed it); taken now, so
        // that no race borrows it while the claim runs, and given back below if unused.
        let loans = self.loans.clone();
        let free: Vec<SlotKind> = self
            .slots
            .iter()
            .filter(|s| s.job.is_none())
            .map(|s| s.kind)
            .filter(|kind| match kind {
                SlotKind::Gpu(i) => loans.try_claim(*i),
                SlotKind::Cpu(_) => true,
            })
            .collect();
        // The round ends: the GPUs it placed jobs on stay held, the rest go back.
        let end_claim = |used: &[SlotKind]| {
            for kind in &free {
                if let SlotKind::Gpu(i) = kind {
                    if used.contains(kind) {
                        loans.hold(*i);
                    } else {
                        loans.give_back(*i);
                    }
                }
            }
        };
        if free.is_empty() {
            return;
        }
        let gpu_memory = |kinds: &mut dyn Iterator<Item = &SlotKind>| {
            kinds
                .filter_map(|k| match k {
                    SlotKind::Gpu(i) => Some(self.rules.capacity(&self.gpus[*i])),
                    SlotKind::Cpu(_) => None,
                })
                .max()
        };
        let config = &self.context.config;
        let request = ClaimRequest {
            worker: self.context.worker_id.to_string(),
            lease_ms: config.lease_ms,
            free_gpus: free
                .iter()
                .filter(|k| matches!(k, SlotKind::Gpu(_)))
                .count(),
            largest_free_gpu_memory: gpu_memory(&mut free.iter()).unwrap_or(0),
            free_cpus: free
                .iter()
                .filter(|k| matches!(k, SlotKind::Cpu(_)))
                .count(),
            largest_gpu_memory: gpu_memory(&mut self.slots.iter().map(|s| &s.kind)),
            small_edges: self.rules.small_edges,
            max_wait_ms: self.rules.max_wait.as_millis() as u64,
        };
        let now = Instant::now();
        let (gpus, rules) = (self.gpus.clone(), self.rules);
        let mut remaining = free.clone();
        let claimed = self
            .context
            .store
            .claim(&request, |candidate| {
                let waited = Duration::from_millis(candidate.waited_ms);
                let job = QueuedJob {
                    id: candidate.id,
                    backend: candidate.backend,
                    edges_estimate: candidate.edges_estimate,
                    memory_estimate: candidate.memory_estimate,
                    enqueued: now.checked_sub(waited).unwrap_or(now),
                    preparsed: None,
                    parity_answer: candidate.parity_answer,
                };
                let kind = pick_slot(&job, &remaining, &gpus, rules, now)?;
                remaining.retain(|&k| k != kind);
                Some(Placement {
                    slot: kind,
                    backend: kind.backend_for(candidate.backend).name().to_string(),
                    device: kind.device_name(&gpus),
                })
            })
            .await;
        let claimed = match claimed {
            Ok(claimed) => {
                if std::mem::take(&mut self.claim_failing) {
                    tracing::info!("claiming jobs works again");
                }
                claimed
            }
            Err(e) => {
                if !std::mem::replace(&mut self.claim_failing, true) {
                    tracing::warn!("cannot claim jobs: {e}; retrying every tick");
                }
                end_claim(&[]);
                return;
            }
        };
        tracing::debug!(
            free = free.len(),
            claimed = claimed.len(),
            ms = now.elapsed().as_secs_f64() * 1e3,
            "claim round"
        );
        let used: Vec<SlotKind> = claimed.iter().map(|c| c.placement.slot).collect();
        end_claim(&used);
        for claim in claimed {
            let kind = claim.placement.slot;
            let waited = Duration::from_millis(claim.job.waited_ms);
            let job = QueuedJob {
                id: claim.job.id,
                backend: claim.job.backend,
                edges_estimate: claim.job.edges_estimate,
                memory_estimate: claim.job.memory_estimate,
                enqueued: now.checked_sub(waited).unwrap_or(now),
                preparsed: self.preparsed.remove(&claim.job.id),
                parity_answer: claim.job.parity_answer,
            };
            self.context.metrics.observe_queue_wait(waited);
            let control = Control::new();
            let slot = self
                .slots
                .iter_mut()
                .find(|s| s.kind == kind)
                .expect("slot exists");
            slot.job = Some(RunningJob {
                id: job.id,
                attempt: claim.attempt,
                control: control.clone(),
                since: now,
            });
            let assignment = Assignment {
                job,
                attempt: claim.attempt,
                control,
            };
            if slot.sender.send(assignment).is_err() {
                tracing::error!(
                    ?kind,
                    "worker thread is gone; its job returns to the queue when its lease expires"
                );
                slot.job = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(backend: BackendChoice, edges: u64, waited: Duration, now: Instant) -> QueuedJob {
        QueuedJob {
            id: JobId::now_v7(),
            backend,
            edges_estimate: edges,
            memory_estimate: edges * 24,
            enqueued: now - waited,
            preparsed: None,
            parity_answer: false,
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
        gpu_memory_cap: 0,
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
            // A `gpu` job too big for every GPU runs on the CPU instead of waiting forever.
            (BackendChoice::Gpu, 1 << 30, 0, vec![gpu, cpu], Some(cpu)),
            (BackendChoice::Gpu, 1 << 30, 0, vec![gpu], None),
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
    fn a_parity_answer_takes_a_cpu_slot_never_a_gpu_slot() {
        let now = Instant::now();
        let (gpu, cpu) = (SlotKind::Gpu(0), SlotKind::Cpu(0));
        let parity = QueuedJob {
            parity_answer: true,
            ..job(BackendChoice::Auto, 10_000, Duration::ZERO, now)
        };
        assert_eq!(
            pick_slot(&parity, &[gpu, cpu], &gpus(), RULES, now),
            Some(cpu)
        );
        assert_eq!(pick_slot(&parity, &[gpu], &gpus(), RULES, now), None);
    }

    #[test]
    fn gpu_loans_hand_each_gpu_to_one_holder() {
        let loans = GpuLoans::new(2);
        assert_eq!(loans.take_any(Duration::ZERO), Some(0));
        assert!(!loans.try_claim(0), "held");
        assert_eq!(loans.take_any(Duration::ZERO), Some(1));
        assert_eq!(loans.take_any(Duration::ZERO), None);
        loans.give_back(0);
        assert_eq!(loans.take_any(Duration::ZERO), Some(0));
    }

    #[test]
    fn a_borrower_waits_for_a_claim_round_but_not_for_a_job() {
        let loans = Arc::new(GpuLoans::new(1));
        // A claim round that places nothing lets go: the borrower gets the GPU.
        assert!(loans.try_claim(0));
        assert!(!loans.try_claim(0), "the round holds it");
        let round = {
            let loans = loans.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                loans.give_back(0);
            })
        };
        assert_eq!(loans.take_any(Duration::from_secs(10)), Some(0));
        round.join().unwrap();
        loans.give_back(0);
        // A round that places a job keeps it: the borrower goes on without.
        assert!(loans.try_claim(0));
        loans.hold(0);
        let asked = Instant::now();
        assert_eq!(loans.take_any(Duration::from_secs(10)), None);
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "no wait for a held GPU"
        );
        // A round that outlasts the wait: the borrower gives up after it.
        loans.give_back(0);
        assert!(loans.try_claim(0));
        assert_eq!(loans.take_any(Duration::from_millis(5)), None);
    }

    #[test]
    fn the_gpu_memory_setting_caps_every_device() {
        let now = Instant::now();
        let capped = FallbackRules {
            gpu_memory_cap: 1000 * 24,
            ..RULES
        };
        let free = [SlotKind::Gpu(0), SlotKind::Cpu(0)];
        let small = job(BackendChoice::Gpu, 1000, Duration::ZERO, now);
        let large = job(BackendChoice::Gpu, 1001, Duration::ZERO, now);
        assert_eq!(
            pick_slot(&small, &free, &gpus(), capped, now),
            Some(free[0])
        );
        assert_eq!(
            pick_slot(&large, &free, &gpus(), capped, now),
            Some(free[1])
        );
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
