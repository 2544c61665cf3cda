//! The CUDA backend: the paper's Algorithm 3 (frontier lifting with CSR and CSC resident on
//! the device — the CSR uploaded, the CSC listed from it there — vertex-parallel or
//! warp-centric), with the round loop kept on the device, driven by the accelerated exact
//! solver (lifting phases on the device, evaluations of player 1's strategies steered by the
//! host, their graph searches on the device; [`lift`]); `GpuOptions::plain` lifts to the
//! fixpoint without evaluations.
//!
//! - [`lift`]: the device as the accelerated driver's lifting engine.
//! - [`devices`]: probing for the driver and listing GPUs, never panicking.
//! - [`compile`]: the embedded kernels, NVRTC to CUBIN per device, loaded once per process.
//! - [`cubin_cache`]: compiled CUBINs on disk, so NVRTC runs once per machine.
//! - [`layout`]: the vertex order (player 0 first, or the input's) and the memory estimate.
//! - [`parity`]: parity games natively, any number of priorities (fixpoint iteration, the
//!   whole loop in one launch per 10 ms).
//! - [`engine`]: upload once, lift from 0 or from any point below the fixpoint.
//! - [`components`]: an evaluation's strongly connected components on the device (and the
//!   largest one's greedy witness).
//! - [`evaluation`]: an evaluation's backward reachability and Bellman–Ford on the device.
//! - [`staging`]: large copies through page-locked buffers, host copy and transfer
//!   overlapped.
//! - [`transfer`]: copies to and from the device (staged when large) and the launch
//!   watchdog's wait.
//!
//! Everything that can fail is a [`GpuError`]; at the backend's edge it becomes
//! [`SolveError::Unavailable`](egsolve_core::solve::SolveError) so callers can fall back to a CPU
//! backend.

pub mod compile;
pub mod components;
pub mod cubin_cache;
pub mod devices;
pub mod engine;
pub mod error;
pub mod evaluation;
mod host_pool;
pub mod layout;
pub mod lift;
pub mod parity;
mod prefault;
mod process_counters;
pub use host_pool::{host_pool, host_pool_for, host_threads, race_host_pool, race_host_threads};
pub mod staging;
pub mod transfer;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

pub use devices::{DeviceInfo, close_for_exit, list_devices};
pub use egsolve_core::solve::{GpuOptions, VertexOrder};
pub use engine::early::{discard_early_upload, early_upload_hook, pending_early_uploads};
pub use engine::{GpuEngine, GpuTimings, LiftRun};
pub use error::{GpuError, GpuSolveError};

use egsolve_core::arena::Arena;
use egsolve_core::solve::{
    Control, DeviceSolver, Phases, Solution, SolveError, SolveStats, Threads, energy,
};

/// The CUDA backend as the solve reaches it ([`SolveOptions::device`]): what `--backend gpu`
/// runs in a program that links this crate.
///
/// [`SolveOptions::device`]: egsolve_core::solve::SolveOptions::device
pub static SOLVER: &dyn DeviceSolver = &Cuda;

/// The CUDA backend behind [`SOLVER`]: [`solve`].
#[derive(Debug, Clone, Copy)]
pub struct Cuda;

impl DeviceSolver for Cuda {
    fn solve(
        &self,
        arena: &Arena,
        options: &GpuOptions,
        control: &Control,
    ) -> Result<Solution, SolveError> {
        solve(arena, options, control)
    }

    fn solve_parity(
        &self,
        arena: &Arena,
        priorities: &[u32],
        options: &GpuOptions,
        control: &Control,
    ) -> Result<Solution, SolveError> {
        parity::solve(arena, priorities, options.device, control)
    }

    fn available(&self) -> bool {
        // The libraries only, without initialising the driver: `cuInit` waits while another
        // thread (the CLI's warm-up) is inside it, for a few hundred milliseconds in a fresh
        // process, and the race must not. A library without a device makes the race's GPU
        // side answer `Unavailable` at once, and the CPU answers alone.
        devices::libraries_present()
    }
}

/// Solves `arena` on a GPU and derives both strategies: with the accelerated driver (as
/// `auto`: player 1's strategy from the evaluations where certified), or, with
/// `options.plain`, by plain lifting (strategies from the credits).
pub fn solve(
    arena: &Arena,
    options: &GpuOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let start = Instant::now();
    let counters = tracing::enabled!(tracing::Level::DEBUG).then(process_counters::Counters::now);
    // One pool for the whole solve (the process's, `host_pool_for`): the bound where the device
    // cannot sum it (the driver takes it from the engine), the upload's host side, and the
    // driver and strategies (`GpuLift::started_threads`).
    let threads = host_pool_for(options);
    let bound = host_bound(arena, options, &threads)?;
    tracing::debug!(seconds = start.elapsed().as_secs_f64(), "gpu: bound");
    let mut engine = threads.install(|| GpuEngine::upload(arena, bound, options))?;
    let bound = engine.bound();
    let setup = engine.setup_timings();
    tracing::debug!(
        seconds = start.elapsed().as_secs_f64(),
        ?setup,
        "gpu: engine ready"
    );
    let device_phases = |download: f64| Phases {
        gpu_context: setup.context,
        gpu_kernels: setup.kernels,
        gpu_upload: setup.prepare + setup.upload,
        gpu_download: download,
        ..Phases::default()
    };
    if !options.plain {
        let (mut solution, accel, lift) = lift::solve(arena, engine, options, control)?;
        let counted = counters.map(|c| process_counters::Counters::now().since(c));
        tracing::debug!(
            seconds = start.elapsed().as_secs_f64(),
            minor_faults = counted.map(|c| c.minor_faults),
            involuntary_switches = counted.map(|c| c.involuntary_switches),
            voluntary_switches = counted.map(|c| c.voluntary_switches),
            strategy0 = solution.stats.phases.strategy0,
            strategy1 = solution.stats.phases.strategy1,
            player1 = ?accel.player1,
            evaluations = accel.evaluations,
            "gpu: solved, strategies included"
        );
        solution.stats.backend = "gpu".into();
        // As every backend reports it: up to the final credits, strategies apart.
        solution.stats.solve_seconds =
            (start.elapsed().as_secs_f64() - solution.stats.strategy_seconds).max(0.0);
        let phases = &mut solution.stats.phases;
        *phases = Phases {
            lifting: phases.lifting,
            evaluation: phases.evaluation,
            graph: phases.graph,
            components: phases.components,
            cycle_test: phases.cycle_test,
            attractor: phases.attractor,
            bellman_ford: phases.bellman_ford,
            strategy0: phases.strategy0,
            strategy1: phases.strategy1,
            ..device_phases(lift.download_seconds)
        };
        if options.winners_only {
            threads.install(|| solution.keep_winners_only());
        }
        return Ok(solution);
    }
    let run = threads.install(|| engine.lift_from(None, options, control))?;
    let stats = SolveStats {
        backend: "gpu".into(),
        bound,
        lifts: run.lifts,
        rounds: run.rounds,
        solve_seconds: start.elapsed().as_secs_f64(),
        phases: Phases {
            lifting: run.timings.solve,
            ..device_phases(run.timings.download)
        },
        ..SolveStats::default()
    };
    let mut solution = Solution::from_credits(arena, run.credit, stats, &threads, control)?;
    if options.winners_only {
        threads.install(|| solution.keep_winners_only());
    }
    Ok(solution)
}

/// Opens device `device` (or the first), loads its most common kernels if the disk cache
/// has them and, when `large_input` says the game's arrays will go through them, allocates
/// its staging buffers, on a thread of its own, so that a process that will solve on the
/// GPU pays for the driver's start-up while it parses its input (a small game's upload
/// would only wait behind the page-locking). With `every_width` (a server), it then loads
/// every width pair's kernels: first those the disk cache has, then it compiles the rest,
/// side by side. A server's first BRP job otherwise spent 88 ms of its 112 ms loading its
/// width's kernels, and its first Hesselink job 65 of 76 ms; with an empty disk cache a
/// first job's GPU side waited 2–3 s for NVRTC, and the CPU answered (H200 host, session
/// 53). Errors are left for the solve to report.
pub fn warm_up(device: Option<usize>, large_input: bool, every_width: bool) {
    WARMING_UP.fetch_add(1, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("egsolve-gpu-warm-up".into())
        .spawn(move || {
            if devices::driver_ready().is_ok() && devices::nvrtc_ready().is_ok() {
                if let Ok(k) = compile::kernels(device.unwrap_or(0)) {
                    // Parity games reduce to 16-bit weights with 32-bit energies.
                    k.lift_if_cached(16, 32);
                    if large_input {
                        // Page-locked buffers for the upload (kept per device).
                        drop(k.staging());
                    }
                    if every_width {
                        grow_memory_pool(&k, POOL_AT_START);
                        prepare_every_width(&k);
                        // A server's first GPU job would otherwise start the host pool's
                        // threads itself: 1.35 ms of Hesselink's first job (its bound's
                        // pass, 0.002 ms in the next jobs; H200 host, session 64). Both
                        // pools: a parity game's job races, an energy game's does not.
                        drop(host_pool());
                        drop(race_host_pool());
                    }
                }
            }
            WARMING_UP.fetch_sub(1, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        WARMING_UP.fetch_sub(1, Ordering::SeqCst);
        tracing::debug!("no GPU warm-up thread: {e}");
    }
}

/// Device memory a server's warm-up takes into the device's pool and frees there
/// ([`grow_memory_pool`]).
const POOL_AT_START: usize = 1 << 30;

/// Allocates `bytes` on `k`'s device and frees them: the device's pool keeps freed memory
/// (`compile::keep_freed_memory`), so a server's first job takes its arrays from the pool
/// instead of the driver mapping new memory for them (the first BRP upload took 15 ms
/// against 2 ms for the next ones; H200 host, session 53). The memory goes back to the
/// driver when a game does not fit beside it (`compile::release_freed_memory`).
fn grow_memory_pool(k: &compile::Kernels, bytes: usize) {
    let grown = k.ctx.new_stream().and_then(|stream| {
        // SAFETY: the bytes are never read; the allocation is freed (on its stream) when
        // dropped, before the synchronisation.
        let block = unsafe { stream.alloc::<u8>(bytes) }?;
        drop(block);
        stream.synchronize()
    });
    match grown {
        Ok(()) => tracing::debug!(bytes, "warm-up: the device's memory pool holds its start"),
        Err(e) => tracing::debug!("warm-up: the device's memory pool was not grown: {e}"),
    }
}

/// Loads every width pair's lifting kernels on `k`'s device: first those the disk cache
/// has, then the rest compiled side by side (NVRTC takes 2–3 s a module on the H200 host).
fn prepare_every_width(k: &compile::Kernels) {
    let pairs = || {
        compile::VALUE_BITS
            .into_iter()
            .flat_map(|v| compile::WEIGHT_BITS.into_iter().map(move |w| (w, v)))
    };
    pairs().for_each(|(w, v)| k.lift_if_cached(w, v));
    std::thread::scope(|scope| {
        for (w, v) in pairs() {
            let compile = move || {
                if let Err(e) = k.lift(w, v) {
                    tracing::debug!("warm-up: the w{w}/v{v} kernels: {e}");
                }
            };
            let builder = std::thread::Builder::new().name(format!("egsolve-gpu-w{w}-v{v}"));
            if builder.spawn_scoped(scope, compile).is_err() {
                tracing::debug!("warm-up: no thread for the w{w}/v{v} kernels");
            }
        }
    });
    tracing::debug!("warm-up: every width's kernels are loaded");
}

/// Warm-up threads still running.
static WARMING_UP: AtomicUsize = AtomicUsize::new(0);

/// Whether a [`warm_up`] thread is still running: perhaps inside the driver's start-up, so
/// a process that ends now must not run the driver's exit handlers beside it (they crash
/// or wait; seen on the H200 host when a CPU solve of 0.1 s ended first).
pub fn warm_up_running() -> bool {
    WARMING_UP.load(Ordering::SeqCst) > 0
}

/// Lifts `arena` on a GPU from `start` (input order, pointwise at most the least progress
/// measure) to the least progress measure; for drivers such as the accelerated algorithm
/// that compute a good starting point elsewhere.
pub fn lift_from(
    arena: &Arena,
    start: &[u64],
    options: &GpuOptions,
    control: &Control,
) -> Result<LiftRun, SolveError> {
    let bound = host_bound(arena, options, &Threads::one())?;
    let mut engine = GpuEngine::upload(arena, bound, options)?;
    Ok(engine.lift_from(Some(start), options, control)?)
}

/// The bound summed on the host where the device cannot sum it
/// ([`GpuEngine::sums_bound`]: 64-bit weights, whose sum may overflow and is checked here),
/// else `None`: the upload has the device sum it.
fn host_bound(
    arena: &Arena,
    options: &GpuOptions,
    threads: &Threads,
) -> Result<Option<u64>, energy::BoundOverflow> {
    if GpuEngine::sums_bound(arena, options) {
        return Ok(None);
    }
    energy::bound_on(arena, threads).map(Some)
}
