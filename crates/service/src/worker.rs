//! Workers: one dedicated OS thread per slot (per GPU, and per CPU-pool slot), so solving
//! never runs on the async runtime. A worker takes an [`Assignment`] (a job the scheduler
//! claimed: `running` under this process's lease), parses the arena (unless the submission
//! already did; fetched into the local cache first when another host stored it), solves it
//! under the job's [`Control`] (cancel flag, deadline, live progress), writes and syncs the
//! result file, and only then marks the job `succeeded` — fenced on its attempt, so a crash
//! at any point leaves either no result or a complete one, the job runs again, and a late
//! worker whose lease was taken over cannot store a second result.
//!
//! A job interrupted by shutdown goes back to `queued`; one cancelled by its owner, or lost
//! to another worker after its lease expired, is left alone. Writes that fail because the
//! database is unreachable are retried for a while (a restarting PostgreSQL).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::ServeConfig;
use super::admission;
use super::events::JobEvents;
use super::idle_release;
use super::job::{BackendChoice, Failure, JobRecord};
use super::metrics::{Metrics, StorageStage};
use super::preparse::{PreparsedGame, malformed, read_options};
use super::result_file;
use super::slots::{Assignment, CLAIM_WAIT, GpuDevice, GpuLoans, QueuedJob, SlotKind, WorkerEvent};
use super::storage;
use super::store::claim::Success;
use super::store::{Store, StoreError};
use egsolve_core::format::{self, ParityInfo};
use egsolve_core::output::Summary;
use egsolve_core::solve::GpuOptions;
use egsolve_core::solve::{self, Backend, Interrupted, Solution, SolveError, SolveOptions};

/// What every worker shares.
#[derive(Debug, Clone)]
pub struct WorkerContext {
    /// The job store.
    pub store: Store,
    /// Metrics registry.
    pub metrics: Arc<Metrics>,
    /// Long-poll wake-ups.
    pub events: Arc<JobEvents>,
    /// The configuration.
    pub config: Arc<ServeConfig>,
    /// The runtime, for the store's async calls from worker threads.
    pub runtime: tokio::runtime::Handle,
    /// CPU-slot solves running now (sets each new solve's thread count).
    pub cpu_solves: Arc<CpuSolves>,
    /// This process's worker id: the owner of the leases its slots hold.
    pub worker_id: Arc<str>,
}

/// How long a worker keeps retrying a write the database refused for a transient reason.
const RETRY_FOR: Duration = Duration::from_secs(120);

/// Runs `write` until it succeeds, fails for a lasting reason, or [`RETRY_FOR`] passes.
fn retrying<T, F: std::future::Future<Output = Result<T, StoreError>>>(
    context: &WorkerContext,
    what: &str,
    write: impl Fn() -> F,
) -> Result<T, StoreError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(50);
    loop {
        match context.runtime.block_on(write()) {
            Err(e) if e.is_transient() && start.elapsed() < RETRY_FOR => {
                tracing::warn!("cannot {what} yet: {e}; retrying");
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            outcome => return outcome,
        }
    }
}

/// The CPU-slot solves running at once. With `cpu_threads` = 0 a solve that starts while
/// `k` solves run (itself included) gets `cores / k` threads (at least one): a lone job
/// uses the whole machine, and concurrent jobs together start about `cores · ln k`
/// threads rather than `cores · k`.
#[derive(Debug, Default)]
pub struct CpuSolves {
    running: AtomicUsize,
}

/// One running CPU-slot solve; dropping it ends it.
#[derive(Debug)]
pub struct CpuSolveTicket<'a> {
    solves: &'a CpuSolves,
    /// Threads this solve may use.
    pub threads: usize,
}

impl CpuSolves {
    /// Counts a starting solve in and gives it its thread count: `configured` when
    /// positive, else its share of `cores`.
    pub fn start(&self, configured: usize, cores: usize) -> CpuSolveTicket<'_> {
        let running = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        CpuSolveTicket {
            solves: self,
            threads: share_of_cores(configured, cores, running),
        }
    }

    /// Solves running now.
    #[cfg(test)]
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }
}

impl Drop for CpuSolveTicket<'_> {
    fn drop(&mut self) {
        self.solves.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Threads for a CPU solve that starts while `running` solves run (itself included).
pub fn share_of_cores(configured: usize, cores: usize, running: usize) -> usize {
    if configured > 0 {
        configured
    } else {
        (cores / running.max(1)).max(1)
    }
}

/// Starts the thread serving `kind`; returns the channel feeding it. `finished` is called
/// with each job's id once its assignment is over (the scheduler frees the slot).
pub fn spawn_worker(
    kind: SlotKind,
    gpus: Arc<Vec<GpuDevice>>,
    loans: Arc<GpuLoans>,
    context: WorkerContext,
    notify: impl Fn(WorkerEvent) + Send + 'static,
    shutting_down: Arc<AtomicBool>,
) -> std::sync::mpsc::Sender<Assignment> {
    let (tx, rx) = std::sync::mpsc::channel::<Assignment>();
    let name = match kind {
        SlotKind::Gpu(i) => format!("egsolve-gpu{i}"),
        SlotKind::Cpu(i) => format!("egsolve-cpu{i}"),
    };
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            while let Ok(assignment) = rx.recv() {
                // Freed memory is kept while any job runs, and a while after ([`idle_release`]).
                idle_release::job_started();
                let (id, attempt) = (assignment.job.id, assignment.attempt);
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let slot = Slot {
                        kind,
                        gpus: &gpus,
                        loans: &loans,
                        notify: &notify,
                    };
                    run_job(&slot, &context, assignment, &shutting_down);
                }));
                if outcome.is_err() {
                    let failure = Failure::new("internal", "the worker panicked on this job");
                    let _ = context.runtime.block_on(context.store.fail_attempt(
                        id,
                        attempt,
                        &context.worker_id,
                        &failure,
                    ));
                }
                context.events.publish(id);
                notify(WorkerEvent::Finished(id));
                idle_release::job_ended();
            }
        })
        .expect("spawning a worker thread");
    tx
}

/// The slot a worker serves, and what it shares with the scheduler.
struct Slot<'a> {
    kind: SlotKind,
    gpus: &'a [GpuDevice],
    loans: &'a GpuLoans,
    notify: &'a dyn Fn(WorkerEvent),
}

/// One job on this slot: [`load`] its game, [`choose`] where it runs, [`solve_on`] it there
/// and [`record_answer`] it (or the failure; a job stopped by a shutdown goes back to the
/// queue, one cancelled or taken over records nothing).
fn run_job(
    slot: &Slot<'_>,
    context: &WorkerContext,
    assignment: Assignment,
    shutting_down: &AtomicBool,
) {
    let Assignment {
        job,
        attempt,
        control,
    } = assignment;
    let backend = slot.kind.backend_for(job.backend);
    let started = Instant::now();
    context.events.publish(job.id);
    let record = match retrying(context, "read the job", || context.store.job(job.id)) {
        Ok(Some(record)) => record,
        Ok(None) => return, // expired meanwhile
        Err(e) => {
            tracing::error!(job = %job.id, "cannot read the job: {e}");
            return;
        }
    };
    let run = Run {
        context,
        job: &job,
        record: &record,
        attempt,
    };
    let game = match load(&run, backend) {
        Ok(game) => game,
        Err(failure) => return run.fail(failure),
    };
    let limit = Duration::from_secs(record.options.time_limit_secs);
    let control = control.with_deadline(Some(Instant::now() + limit));
    let route = choose(slot.kind, &run, &game, backend);
    let solve_start = Instant::now();
    let (solution, device) = match solve_on(slot, &run, &game, route, &control) {
        Ok(solved) => solved,
        Err(SolveError::Interrupted(Interrupted::Cancelled)) => {
            // Shutting down: back to the queue. Otherwise the job was cancelled, or it is
            // no longer this worker's (its lease was taken over): nothing to write.
            if shutting_down.load(Ordering::SeqCst) {
                let _ = retrying(context, "re-queue the job", || {
                    context.store.requeue(job.id, attempt, &context.worker_id)
                });
            }
            return;
        }
        Err(e) => return run.fail(solve_failure(e, limit)),
    };
    let solve_seconds = solve_start.elapsed().as_secs_f64();
    context
        .metrics
        .observe_phase("solve", &solution.stats.backend, solve_seconds);
    let device = device.device_name(slot.gpus);
    let recording = Instant::now();
    if let Err(failure) = record_answer(&run, &game, &solution, solve_seconds, &device) {
        run.fail(failure);
    }
    tracing::debug!(
        job = %job.id,
        before_solve_ms = (solve_start - started).as_secs_f64() * 1e3,
        solve_ms = solve_seconds * 1e3,
        record_ms = recording.elapsed().as_secs_f64() * 1e3,
        "job phases"
    );
}

/// A job being run: what its steps share.
struct Run<'a> {
    context: &'a WorkerContext,
    job: &'a QueuedJob,
    record: &'a JobRecord,
    attempt: i64,
}

impl Run<'_> {
    /// Records `failure` as the end of this attempt (fenced: a late worker writes nothing).
    fn fail(&self, failure: Failure) {
        let (store, id) = (&self.context.store, self.job.id);
        if let Err(e) = retrying(self.context, "record a failure", || {
            store.fail_attempt(id, self.attempt, &self.context.worker_id, &failure)
        }) {
            tracing::error!(job = %id, "cannot record failure: {e}");
        }
    }
}

/// The job's game: parsed at submission, or parsed here from the stored arena and admitted
/// ([`admission::admit`], the submission's step), its figures and GPU estimate recorded
/// (after a restart, on another host, or past the parse-while-uploading limit).
fn load(run: &Run<'_>, backend: Backend) -> Result<Arc<PreparsedGame>, Failure> {
    if let Some(game) = run.job.preparsed.clone() {
        return Ok(game);
    }
    let (context, store) = (run.context, &run.context.store);
    let parse_start = Instant::now();
    let path = retrying(context, "fetch the arena", || {
        store.local_arena(&run.record.arena_hash)
    })
    .map_err(|e| Failure::new("internal", format!("cannot read the stored arena: {e}")))?;
    let options = read_options(run.record.options.format, &context.config);
    // A copy still being written behind its job in this process: its bytes are here.
    let game = match crate::import::in_flight(&path) {
        Some(bytes) => format::read_shared(bytes, &options),
        None if !path.exists() => format::read_shared(read_again(run, &path)?, &options),
        None => format::read_path(&path, &options),
    }
    .map_err(malformed)?;
    let admitted = admission::admit(&game, &context.config)?;
    let parse_seconds = parse_start.elapsed().as_secs_f64();
    context
        .metrics
        .observe_phase("parse", backend.name(), parse_seconds);
    let _ = context.runtime.block_on(store.record_parse(
        run.job.id,
        admitted.stats,
        admitted.gpu_memory,
        parse_seconds * 1e3,
    ));
    Ok(Arc::new(PreparsedGame::unreserved(game)))
}

/// The job's arena read again from the file it was named by (and stored at `path`), its
/// store copy having been written behind a job that did not finish ([`crate::import`]'s
/// `memory`): its bytes. A file that no longer has the arena's bytes fails the job with
/// `reference-changed`.
fn read_again(
    run: &Run<'_>,
    path: &std::path::Path,
) -> Result<egsolve_core::arena::SharedBytes, Failure> {
    let (context, hash) = (run.context, &run.record.arena_hash);
    let source = retrying(context, "read the arena's source", || {
        context.store.arena_source(hash)
    })
    .map_err(|e| Failure::new("internal", format!("cannot read the arena's record: {e}")))?
    .ok_or_else(|| Failure::new("internal", "the stored arena is missing"))?;
    tracing::info!(job = %run.job.id, %source, "the store has no copy of the arena: reading the file it was named by again");
    let tmp_dir = context.store.tmp_dir();
    crate::import::read_again(&context.config.import_roots, &source, hash, &tmp_dir, path).map_err(
        |e| match e {
            crate::import::ReadAgainError::Changed { .. } => {
                Failure::new("reference-changed", e.to_string())
            }
            crate::import::ReadAgainError::Store { .. } => Failure::new("internal", e.to_string()),
        },
    )
}

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// The parity solver's answer on the CPU, raced against the GPU route on this slot's
    /// GPU (if it is a GPU slot) or a borrowed one.
    ParityRace { own_gpu: Option<usize> },
    /// This GPU slot's own device (the CPU answers if the device cannot take it).
    Gpu(usize),
    /// The CPU, with this backend.
    Cpu(Backend),
}

/// The route of a job on a slot of `kind`: a parity game that the job left to the server
/// without asking for credits gets the parity solver's answer; a GPU slot solves `gpu` jobs
/// on its own device; the rest runs on the CPU.
fn choose(kind: SlotKind, run: &Run<'_>, game: &PreparsedGame, backend: Backend) -> Route {
    let parity = game.game.parity.as_ref().map(ParityInfo::view);
    let parity_answer = run.job.backend == BackendChoice::Auto
        && solve::runs_parity_solver(parity, Backend::Auto, run.record.options.credits);
    match kind {
        _ if parity_answer => Route::ParityRace {
            own_gpu: match kind {
                SlotKind::Gpu(i) => Some(i),
                SlotKind::Cpu(_) => None,
            },
        },
        SlotKind::Gpu(i) if backend == Backend::Gpu => Route::Gpu(i),
        _ => Route::Cpu(backend),
    }
}

/// Solves the game on `route`; returns the answer and where it was computed (the GPU only
/// if the GPU route answered).
fn solve_on(
    slot: &Slot<'_>,
    run: &Run<'_>,
    game: &Arc<PreparsedGame>,
    route: Route,
    control: &solve::Control,
) -> Result<(Solution, SlotKind), SolveError> {
    let context = run.context;
    let credits = run.record.options.credits;
    let arena = &game.game.arena;
    let parity = game.game.parity.as_ref().map(ParityInfo::view);
    // A CPU solve gets no device: `auto` on a parity game would race a GPU it holds no slot
    // of (a `gpu` job too large for every GPU, or one the GPU refused), and no other CPU
    // backend uses one (a job cannot ask for `gpu-fixpoint`, the parity solver's one
    // algorithm on a device).
    let cpu_solve = |backend: Backend| {
        let ticket = context
            .cpu_solves
            .start(context.config.cpu_threads, crate::config::cores());
        let mut options = SolveOptions {
            backend,
            device: None,
            credits,
            ..SolveOptions::default()
        };
        options.cpu.threads = ticket.threads;
        solve::solve_game(arena, parity, &options, control)
    };
    let (solution, gpu) = match route {
        Route::ParityRace { own_gpu } => {
            let race = ParityRace {
                context,
                gpus: slot.gpus,
                loans: slot.loans,
                notify: slot.notify,
            };
            race.solve(game, own_gpu, control)?
        }
        Route::Gpu(i) => {
            let options = SolveOptions {
                backend: Backend::Gpu,
                gpu: GpuOptions {
                    device: Some(slot.gpus[i].ordinal as usize),
                    ..GpuOptions::default()
                },
                device: Some(egsolve_gpu::SOLVER),
                credits,
                ..SolveOptions::default()
            };
            match solve::solve_game(arena, parity, &options, control) {
                // The device could not take it (too little free memory, say): the CPU
                // answers instead of the job failing.
                Err(SolveError::Unavailable { reason, .. }) => {
                    tracing::warn!(job = %run.job.id, "the GPU cannot solve this job ({reason}); solving on the CPU");
                    (cpu_solve(Backend::Auto)?, None)
                }
                outcome => (outcome?, Some(i)),
            }
        }
        Route::Cpu(backend) => (cpu_solve(backend)?, None),
    };
    let device = match gpu {
        Some(i) if solution.stats.backend == "gpu" => SlotKind::Gpu(i),
        _ => SlotKind::Cpu(0),
    };
    Ok((solution, device))
}

/// The failure a solve that stopped with `e` ends its job with (a cancellation aside).
fn solve_failure(e: SolveError, limit: Duration) -> Failure {
    match e {
        SolveError::Interrupted(_) => Failure::new(
            "time-limit",
            format!("the solve ran past its time limit of {} s", limit.as_secs()),
        ),
        SolveError::Bound(e) => Failure::new("bound-overflow", e.to_string()),
        e @ SolveError::ReductionTooLarge { .. } => Failure::new("bound-overflow", e.to_string()),
        e @ (SolveError::NotAParityGame | SolveError::Unavailable { .. }) => {
            Failure::new("backend-unavailable", e.to_string())
        }
    }
}

/// Writes the result file and marks the job succeeded (fenced on the attempt); a result
/// that cannot be stored is the job's failure.
fn record_answer(
    run: &Run<'_>,
    game: &PreparsedGame,
    solution: &Solution,
    solve_seconds: f64,
    device: &str,
) -> Result<(), Failure> {
    let (context, store, id) = (run.context, &run.context.store, run.job.id);
    let options = &run.record.options;
    let key = result_file::key(&run.record.arena_hash, options.format, options.backend);
    let write_start = Instant::now();
    if let Err(e) = result_file::write(&store.result_path(&key), solution) {
        if storage::is_full(&e) {
            context
                .metrics
                .count_insufficient_storage(StorageStage::Result);
            return Err(Failure::new(
                "insufficient-storage",
                format!(
                    "the result could not be stored: the server's disk is full ({e}); submit the job again once the operator has freed space"
                ),
            ));
        }
        return Err(Failure::new(
            "internal",
            format!("cannot store the result: {e}"),
        ));
    }
    let write_seconds = write_start.elapsed().as_secs_f64();
    context
        .metrics
        .observe_phase("result_write", &solution.stats.backend, write_seconds);
    let summary_start = Instant::now();
    let initial = game.game.initial.unwrap_or(0);
    let summary = Summary::new(&game.game.arena, solution, initial);
    let summary_seconds = summary_start.elapsed().as_secs_f64();
    tracing::info!(job = %id, solve = solve_seconds, result_write = write_seconds, summary = summary_seconds, "solved");

    let success = Success {
        result_key: &key,
        summary: &summary,
        solve_ms: solve_seconds * 1e3,
        device,
    };
    match retrying(context, "record the result", || {
        store.succeed(id, run.attempt, &context.worker_id, &success)
    }) {
        Ok(true) => context.metrics.count_completion(),
        // Cancelled meanwhile, or the fence refused a late result; the local result file
        // may still serve a reuse on this host.
        Ok(false) => context.metrics.count_refused_result(),
        Err(e) => tracing::error!(job = %id, "cannot record success: {e}"),
    }
    Ok(())
}

/// What a parity answer's race needs of the worker: the GPUs, who holds them, and the
/// scheduler's ear for a borrowed GPU's return.
struct ParityRace<'a> {
    context: &'a WorkerContext,
    gpus: &'a [GpuDevice],
    loans: &'a GpuLoans,
    notify: &'a dyn Fn(WorkerEvent),
}

impl ParityRace<'_> {
    /// The parity solver's answer on the CPU, raced against the GPU route
    /// (`solve::race`) on `own_gpu` (the slot's device, for a job placed before its parse
    /// showed a parity game) or on a GPU borrowed for the race's length where the race is
    /// worth running and a GPU is free. Returns the GPU that took part, if any. The race's
    /// loser is not waited for (`solve::race::solve_detached`): it stops at its next
    /// checkpoint, holding its share of the game until then; a borrowed GPU goes back when
    /// the answer is there.
    fn solve(
        &self,
        game: &Arc<PreparsedGame>,
        own_gpu: Option<usize>,
        control: &solve::Control,
    ) -> Result<(Solution, Option<usize>), SolveError> {
        let (arena, view) = (
            &game.game.arena,
            game.game.parity.as_ref().map(ParityInfo::view),
        );
        let view = view.expect("the parity solver answers parity games");
        let cores = crate::config::cores();
        let ticket = self
            .context
            .cpu_solves
            .start(self.context.config.cpu_threads, cores);
        let mut options = SolveOptions {
            device: Some(egsolve_gpu::SOLVER),
            ..SolveOptions::default()
        };
        options.cpu.threads = ticket.threads;
        let races = solve::race::races(arena, view, &options).is_some();
        let borrowed = match own_gpu {
            None if races => self.loans.take_any(CLAIM_WAIT),
            _ => None,
        };
        let gpu = own_gpu.or(borrowed);
        match gpu {
            Some(i) => options.gpu.device = Some(self.gpus[i].ordinal as usize),
            None => options.device = None,
        }
        if races && gpu.is_some() {
            options.cpu.threads = options
                .cpu
                .threads
                .min(solve::race::cpu_side_threads(cores));
        }
        let start = Instant::now();
        let solved = solve::solve_game_detached(game, &options, control);
        if let Some(i) = borrowed {
            self.loans.give_back(i);
            (self.notify)(WorkerEvent::GpuReturned {
                gpu: i,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        solved.map(|solution| (solution, gpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_cpu_solves_share_the_cores() {
        let solves = CpuSolves::default();
        let first = solves.start(0, 16);
        assert_eq!(first.threads, 16, "a lone solve uses every core");
        let second = solves.start(0, 16);
        assert_eq!(second.threads, 8);
        let third = solves.start(0, 16);
        assert_eq!(third.threads, 5);
        assert_eq!(solves.running(), 3);
        drop(second);
        drop(third);
        assert_eq!(solves.running(), 1);
        assert_eq!(solves.start(0, 16).threads, 8);
        assert_eq!(solves.running(), 1, "the ticket ended with its statement");
        drop(first);
        assert_eq!(solves.running(), 0);
        assert_eq!(solves.start(3, 16).threads, 3, "a configured count wins");
        assert_eq!(share_of_cores(0, 2, 40), 1, "never fewer than one thread");
    }
}
