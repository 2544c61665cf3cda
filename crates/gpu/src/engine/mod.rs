//! The device-resident solver: upload a game once ([`GpuEngine::upload`]), then lift from 0
//! or from any point below the least fixpoint ([`GpuEngine::lift_from`]) as often as wanted.
//!
//! The round loop runs on the device: one cooperative launch runs many rounds with a grid
//! barrier between them, and the host only looks in between launches (to publish progress
//! and check the cancel flag, aiming at a few milliseconds per launch). Tiny frontiers run
//! on a single block, where the barrier is `__syncthreads`; large ones on the whole grid. A
//! launch ends when the frontier leaves its grid's size window, so the host switches grids.

mod arrays;
pub mod early;
pub(crate) mod placement;
pub mod predecessors;
mod registered;
mod searches;
pub mod upload;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};

use crate::compile::{Kernels, LANES, LiftKernels};
use crate::components::DeviceComponents;
use crate::error::{DuringExt, GpuError, GpuSolveError};
use crate::evaluation::DeviceEvaluation;
use crate::layout::Numbering;
pub use crate::transfer::{LAUNCH_WATCHDOG, launch_watchdog};
use crate::transfer::{download_staged, wait_until};
use egsolve_core::solve::{Control, GpuOptions};

use arrays::{DeviceCredit, DeviceWeights};

/// Threads per block (the kernels' `__launch_bounds__`).
const BLOCK: u32 = 512;
/// Bytes kept free on the device besides the game.
const HEADROOM: u64 = 256 << 20;

/// Wall-clock seconds of each phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct GpuTimings {
    /// Choosing the device and opening (or finding) its context.
    pub context: f64,
    /// Getting the kernels' CUBIN (disk cache or NVRTC) and loading it.
    pub kernels: f64,
    /// Laying the game out on the host (renumbering, unless the order is the input's).
    pub prepare: f64,
    /// Allocating and copying to the device.
    pub upload: f64,
    /// The lifting loop.
    pub solve: f64,
    /// Copying the credits back and undoing the renumbering.
    pub download: f64,
}

/// What one [`GpuEngine::lift_from`] or [`GpuEngine::lift_budgeted`] produced.
#[derive(Debug, Clone)]
pub struct LiftRun {
    /// The values reached, in input ids: the least progress measure when `finished`.
    pub credit: Vec<u64>,
    /// Whether the frontier emptied (no vertex can be lifted: the least fixpoint).
    pub finished: bool,
    /// Rounds run.
    pub rounds: u64,
    /// Vertex lifts (sum of frontier sizes).
    pub lifts: u64,
    /// Kernel launches.
    pub launches: u64,
    /// Phase times (prepare and upload from the engine's upload).
    pub timings: GpuTimings,
}

/// A topping record word's position when no edge is recorded (`kernels/lift.cu`).
pub const TOP_NO_POSITION: u32 = 0x3fff_ffff;

/// Kernel parameters; the layout matches `struct LiftParams` in `kernels/lift.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct LiftParams {
    succ_offsets: u64,
    succ_targets: u64,
    succ_weights: u64,
    pred_offsets: u64,
    pred_sources: u64,
    pred_weights: u64,
    credit: u64,
    frontier0: u64,
    frontier1: u64,
    stamp: u64,
    state: u64,
    bound: u64,
    n: u32,
    n0: u32,
    dense_above: u32,
    max_rounds: u32,
    shrink_below: u32,
    grow_above: u32,
    max_ns: u64,
    owners: u64,
    /// Why each vertex was topped (a word per vertex, `record_top` in the kernel), or 0.
    top_record: u64,
}

// SAFETY: plain `repr(C)` data (device addresses and integers) with the C struct's layout.
unsafe impl DeviceRepr for LiftParams {}

impl LiftParams {
    /// The game's arrays (successor offsets and targets, predecessor offsets and sources,
    /// both weight columns) and `n`; everything else zero.
    fn of_game(
        stream: &Arc<CudaStream>,
        adjacency: &[CudaSlice<u32>; 4],
        weights: &DeviceWeights,
        n: u32,
    ) -> LiftParams {
        let ptr = |s: &CudaSlice<u32>| s.device_ptr(stream).0;
        let (succ_weights, pred_weights) = weights.pointers(stream);
        LiftParams {
            succ_offsets: ptr(&adjacency[0]),
            succ_targets: ptr(&adjacency[1]),
            succ_weights,
            pred_offsets: ptr(&adjacency[2]),
            pred_sources: ptr(&adjacency[3]),
            pred_weights,
            n,
            ..LiftParams::default()
        }
    }
}

/// A game resident on one device.
pub struct GpuEngine {
    kernels: Arc<LiftKernels>,
    /// The device's context and staging buffers.
    device: Arc<Kernels>,
    multiprocessors: u32,
    stream: Arc<CudaStream>,
    ordinal: usize,
    n: u32,
    m: u32,
    n0: u32,
    bound: u64,
    lanes: u32,
    full_blocks: u32,
    dense_above: u32,
    /// Rounds per launch the adaptive loop last settled on (kept between lift calls).
    rounds_per_launch: u32,
    numbering: Option<Numbering>,
    context_seconds: f64,
    kernels_seconds: f64,
    prepare_seconds: f64,
    upload_seconds: f64,
    /// Whether the successors came from an early upload (`early`).
    uploaded_early: bool,
    /// Bits per weight and per energy on the device (which kernels run).
    weight_bits: u32,
    value_bits: u32,
    // Device buffers (kept alive for the kernels' raw pointers in `params`).
    _adjacency: [CudaSlice<u32>; 4],
    _weights: DeviceWeights,
    _owners: Option<CudaSlice<u8>>,
    credit: DeviceCredit,
    /// The first frontier; also the strategy kernels' output.
    frontier0: CudaSlice<u32>,
    /// The second frontier; also the recorded moves' roots.
    frontier1: CudaSlice<u32>,
    stamp: CudaSlice<u32>,
    state: CudaSlice<u32>,
    /// Recorded after each launch and polled under the watchdog ([`GpuEngine::read_state`]).
    launched: CudaEvent,
    /// [`launch_watchdog`], read once per engine.
    watchdog: Duration,
    params: LiftParams,
    /// The components kernel's buffers, allocated by the first evaluation that uses them.
    components: Option<DeviceComponents>,
    /// See [`GpuEngine::leave_components_to_host_below`].
    components_left_below: u32,
    /// The evaluations' reachability and Bellman–Ford, allocated on first use; `Err` once
    /// they did not fit (the host does them then).
    evaluation: Option<Result<DeviceEvaluation, ()>>,
    /// The lifts' record of why each vertex reached ⊤, a word per vertex (kept only while
    /// [`GpuEngine::start_topping`] says).
    top_record: CudaSlice<u32>,
}

impl GpuEngine {
    /// Whether the game's successors were copied (and its predecessors listed) beside the
    /// load's checks ([`early::upload_early`]) rather than by [`GpuEngine::upload`].
    pub fn uploaded_early(&self) -> bool {
        self.uploaded_early
    }

    /// The device this engine runs on.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Whether the device holds the vertices renumbered (player 0 first), not in input order.
    pub fn renumbered(&self) -> bool {
        self.numbering.is_some()
    }

    /// The renumbering the device holds the vertices in, if any (player 0 first).
    pub fn numbering(&self) -> Option<&Numbering> {
        self.numbering.as_ref()
    }

    /// Lanes per vertex in use.
    pub fn lanes(&self) -> u32 {
        self.lanes
    }

    /// Switches to `lanes` lanes per vertex (and that kernel's full grid).
    pub fn set_lanes(&mut self, lanes: u32) -> Result<(), GpuError> {
        let per_sm = self
            .kernel(lanes)?
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
            .during("reading the kernel's occupancy")?
            .max(1);
        self.full_blocks = per_sm * self.multiprocessors;
        self.lanes = lanes;
        Ok(())
    }

    /// The lifting kernel for `lanes` lanes per vertex at this game's widths.
    fn kernel(&self, lanes: u32) -> Result<&cudarc::driver::CudaFunction, GpuError> {
        let index = LANES
            .iter()
            .position(|&h| h == lanes)
            .ok_or(GpuError::BadLanes(lanes))?;
        Ok(&self.kernels.functions[index])
    }

    /// Bits per weight and per energy on the device.
    pub fn widths(&self) -> (u32, u32) {
        (self.weight_bits, self.value_bits)
    }

    /// Blocks of the full grid.
    pub fn full_blocks(&self) -> u32 {
        self.full_blocks
    }

    /// Vertices and edges.
    pub fn size(&self) -> (u32, u32) {
        (self.n, self.m)
    }

    /// The stream this engine's work runs on (for benchmarks).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Resets the device state to `start` (input order; `None` = 0 everywhere) with every
    /// vertex in the first frontier.
    pub fn reset(&mut self, start: Option<&[u64]>) -> Result<(), GpuError> {
        let n = self.n as usize;
        match start {
            None => self.credit.zero(&self.stream)?,
            Some(values) => {
                assert_eq!(values.len(), n, "one start value per vertex");
                let device_order = Numbering::to_device_order(self.numbering.as_ref(), values);
                self.credit.upload(&self.stream, &device_order)?;
            }
        }
        // Stamps 0 and a dense first round: every vertex is in frontier 0.
        self.stream
            .memset_zeros(&mut self.stamp)
            .during("resetting stamps")?;
        let state = [self.n, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        self.stream
            .memcpy_htod(&state[..], &mut self.state)
            .during("resetting the round state")?;
        Ok(())
    }

    /// Reads the round state after a launch: (frontier size, rounds, lifts, whether the
    /// frontier is dense). Waits for the launch by polling an event, so that a launch that
    /// never returns ends the solve with [`GpuError::Hung`] after the engine's watchdog
    /// instead of blocking its thread for ever (the copy comes after: into pageable memory
    /// it would itself block until the launch is done).
    fn read_state(&self) -> Result<(u32, u32, u64, bool), GpuError> {
        let during = "waiting for a lifting launch";
        self.launched.record(&self.stream).during(during)?;
        if !wait_until(|| self.launched.try_is_complete(), self.watchdog).during(during)? {
            return Err(GpuError::Hung {
                seconds: self.watchdog.as_secs(),
            });
        }
        let mut state = [0u32; 16];
        self.stream
            .memcpy_dtoh(&self.state, &mut state[..])
            .during("reading the round state")?;
        self.stream
            .synchronize()
            .during("reading the round state")?;
        let round = state[3];
        let lifts = (state[7] as u64) << 32 | state[6] as u64;
        Ok((state[(round % 3) as usize], round, lifts, state[8] != 0))
    }

    /// Pushes densely (stamps only) from frontiers of at least `n/16` vertices, or never.
    pub fn set_dense(&mut self, dense: bool) {
        self.dense_above = if dense {
            (self.n / 16).max(1024)
        } else {
            u32::MAX
        };
    }

    /// Runs up to `max_rounds` rounds in one launch on `blocks` blocks, leaving early when
    /// the frontier leaves `[shrink_below, grow_above]` or empties (or, inside
    /// [`GpuEngine::lift_budgeted`] with a time limit, when the phase's time is up).
    pub fn launch_rounds(
        &mut self,
        blocks: u32,
        max_rounds: u32,
        shrink_below: u32,
        grow_above: u32,
    ) -> Result<(), GpuError> {
        let params = LiftParams {
            max_rounds,
            shrink_below,
            grow_above,
            dense_above: self.dense_above,
            ..self.params
        };
        let kernel = self.kernel(self.lanes)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(kernel);
        launch.arg(&params);
        // SAFETY: every pointer in `params` is a live allocation of this engine with the
        // lengths the kernel assumes (offsets n+1, adjacency m, per-vertex arrays n, state
        // 16 words with the u64 lifts counter 8-byte aligned at word 6); vertex ids read from the frontiers and adjacency are < n. `blocks` is at
        // most the co-resident grid (occupancy × SMs), which the cooperative launch checks.
        unsafe { launch.launch_cooperative(cfg) }.during("launching the lifting kernel")?;
        Ok(())
    }

    /// Lifts from `start` (input order, pointwise below the least fixpoint; `None` = 0) to
    /// the least fixpoint.
    pub fn lift_from(
        &mut self,
        start: Option<&[u64]>,
        options: &GpuOptions,
        control: &Control,
    ) -> Result<LiftRun, GpuSolveError> {
        self.lift_budgeted(start, Vec::new(), u64::MAX, f64::INFINITY, options, control)
    }

    /// Lifts from `start` (as in [`GpuEngine::lift_from`]) until the fixpoint, or until at
    /// least `max_lifts` lifts were applied or `max_seconds` passed, and downloads the
    /// values. The lift limit is checked between launches (each a few milliseconds at
    /// most), so a run may overshoot it by one launch; the time limit also inside a launch
    /// after every round (the device's clock). `finished` says whether it was the fixpoint.
    /// The credits may be downloaded into `reuse`'s memory (its contents are overwritten;
    /// the accelerated driver's first phase passes its vector, often empty).
    pub fn lift_budgeted(
        &mut self,
        start: Option<&[u64]>,
        reuse: Vec<u64>,
        max_lifts: u64,
        max_seconds: f64,
        options: &GpuOptions,
        control: &Control,
    ) -> Result<LiftRun, GpuSolveError> {
        let begin = Instant::now();
        self.reset(start)?;
        self.params.max_ns = 0;
        // Dense rounds once a frontier holds a sixteenth of the vertices.
        self.set_dense(!options.no_dense);
        let groups_per_block = BLOCK / self.lanes;
        let small_tier = !options.no_small_tier;
        let mut budget = options
            .rounds_per_launch
            .unwrap_or(self.rounds_per_launch)
            .max(1);
        let mut launches = 0u64;
        let (mut size, mut round, mut lifts, mut dense) = (self.n, 0u32, 0u64, true);
        while size > 0 {
            control.checkpoint()?;
            // A dense round scans every vertex: never on a single block.
            let small = small_tier && !dense && size <= 2 * groups_per_block;
            if max_seconds.is_finite() {
                // The launch itself leaves once the phase's time is up (device clock).
                let left = max_seconds - begin.elapsed().as_secs_f64();
                self.params.max_ns = (left.max(1e-6) * 1e9) as u64;
            }
            let launch_start = Instant::now();
            if small {
                self.launch_rounds(1, budget, 0, 4 * groups_per_block)?;
            } else {
                let shrink = if small_tier { groups_per_block / 2 } else { 0 };
                self.launch_rounds(self.full_blocks, budget, shrink, u32::MAX)?;
            }
            launches += 1;
            let before = round;
            (size, round, lifts, dense) = self.read_state()?;
            let elapsed = launch_start.elapsed().as_secs_f64();
            if options.rounds_per_launch.is_none() {
                // Aim at 2–8 ms per launch: long enough to hide the launch, short enough
                // to notice a cancel quickly.
                if round - before >= budget && elapsed < 0.002 {
                    budget = (budget * 2).min(1 << 20);
                } else if elapsed > 0.008 {
                    budget = (budget / 2).max(1);
                }
            }
            control.progress().publish(round as u64, size as u64, lifts);
            if options.rounds_per_launch.is_none() {
                self.rounds_per_launch = budget;
            }
            if lifts >= max_lifts || begin.elapsed().as_secs_f64() >= max_seconds {
                break;
            }
        }
        self.params.max_ns = 0;
        let solve = begin.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut guard = self.device.staging_for(self.credit.bytes(self.n as usize));
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        let device = self
            .credit
            .download(&self.stream, staging, self.n as usize, reuse)?;
        drop(guard);
        let credit = Numbering::to_input_order(self.numbering.as_ref(), device);
        let download = start.elapsed().as_secs_f64();
        Ok(LiftRun {
            credit,
            finished: size == 0,
            rounds: round as u64,
            lifts,
            launches,
            timings: GpuTimings {
                context: self.context_seconds,
                kernels: self.kernels_seconds,
                prepare: self.prepare_seconds,
                upload: self.upload_seconds,
                solve,
                download,
            },
        })
    }

    /// From now on, every lift that tops a vertex records why (`strategy::topping`), into a
    /// record cleared here: `false` (nothing recorded) when the vertices are renumbered, as
    /// the record speaks input ids.
    pub fn start_topping(&mut self) -> Result<bool, GpuError> {
        if self.numbering.is_some() {
            return Ok(false);
        }
        self.stream
            .memset_zeros(&mut self.top_record)
            .during("clearing the topping record")?;
        self.params.top_record = self.top_record.device_ptr(&self.stream).0;
        Ok(true)
    }

    /// The record since [`GpuEngine::start_topping`], a word per vertex in input order:
    /// `position << 2 | cause` (the recorded edge's position among the vertex's successors,
    /// [`TOP_NO_POSITION`] for none; the cause as `strategy::ToppedBy`, 0: not topped
    /// by a lift); `None` if none was started.
    pub fn download_topping(&mut self) -> Result<Option<Vec<u32>>, GpuError> {
        if self.params.top_record == 0 {
            return Ok(None);
        }
        let n = self.n as usize;
        Ok(Some(download_staged(
            &self.device,
            &self.stream,
            &self.top_record,
            n,
        )?))
    }
}

/// Measurement entry points for the device benchmarks (`tools/gpu_check`).
impl GpuEngine {
    /// Resets to 0 with every vertex in the frontier, then times (CUDA events) one launch
    /// of up to `rounds` rounds on `blocks` blocks, pushing densely or as lists. Milliseconds.
    pub fn time_launch(&mut self, blocks: u32, rounds: u32, dense: bool) -> Result<f64, GpuError> {
        self.reset(None)?;
        self.set_dense(dense);
        let stream = self.stream().clone();
        let start = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        self.launch_rounds(blocks, rounds, 0, u32::MAX)?;
        let end = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        end.synchronize().during("waiting for the round")?;
        Ok(start.elapsed_ms(&end).during("reading the timer")? as f64)
    }
}
