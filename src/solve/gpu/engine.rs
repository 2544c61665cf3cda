//! The device-resident solver: upload a game once ([`GpuEngine::upload`]), then lift from 0
//! or from any point below the least fixpoint ([`GpuEngine::lift_from`]) as often as wanted.
//!
//! The round loop runs on the device: one cooperative launch runs many rounds with a grid
//! barrier between them, and the host only looks in between launches (to publish progress
//! and check the cancel flag, aiming at a few milliseconds per launch). Tiny frontiers run
//! on a single block, where the barrier is `__syncthreads`; large ones on the whole grid. A
//! launch ends when the frontier leaves its grid's size window, so the host switches grids.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUdeviceptr, CUevent_flags};
use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    LaunchConfig, PushKernelArg,
};
use rayon::prelude::*;

use super::compile::{Kernels, LANES, LiftKernels, kernels, release_freed_memory};
use super::components::{Adjacency, ComponentFigures, DeviceComponents, FoundComponents};
use super::devices::device_info;
use super::error::{DuringExt, GpuError, GpuSolveError};
use super::evaluation::{DeviceEvaluation, LiftedValues};
use super::layout::{
    DeviceLayout, Numbering, VertexOrder, WeightColumn, device_bytes, lanes_for_degree, value_bits,
};
use super::staging::{STAGED_IF_READY, Staging};
pub use super::transfer::{LAUNCH_WATCHDOG, launch_watchdog};
use super::transfer::{download_array, upload_array, wait_until};
use crate::arena::{Arena, VertexId};
use crate::solve::Control;
use crate::solve::accel::EngineAttracted;

/// Threads per block (the kernels' `__launch_bounds__`).
const BLOCK: u32 = 512;
/// Bytes kept free on the device besides the game.
const HEADROOM: u64 = 256 << 20;

/// How the GPU backend runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GpuOptions {
    /// Device ordinal; `None` picks the device with the most free memory that fits.
    pub device: Option<usize>,
    /// Lanes per vertex (1 = vertex-parallel, 2..32 = warp-centric); `None` picks from the
    /// average degree.
    pub lanes: Option<u32>,
    /// Rounds per launch; `None` adapts (a few ms per launch). `Some(1)` is the paper's
    /// host-driven loop.
    pub rounds_per_launch: Option<u32>,
    /// Run every round on the whole grid (no single-block tier for tiny frontiers).
    pub no_small_tier: bool,
    /// Keep every frontier as a list (no dense rounds for large frontiers).
    pub no_dense: bool,
    /// Plain frontier lifting to the fixpoint, without the accelerated driver's strategy
    /// evaluations (for benchmarks and comparison).
    #[serde(default)]
    pub plain: bool,
    /// 64-bit weights and energies whatever the game (the layout before narrowing, for
    /// comparison); by default weights keep the arena's width and energies are 32-bit when
    /// the bound allows.
    #[serde(default)]
    pub wide: bool,
    /// How the device numbers the vertices: the input's order with the players in a byte
    /// array (the default), or player 0 first (renumbered on the host).
    #[serde(default)]
    pub order: VertexOrder,
    /// Accelerated driver: each lifting phase on the device runs for this percentage of
    /// the last evaluation's time (the first for an estimate from the game's size); `None`
    /// = [`super::accel::LIFT_PERCENT`]. `Some(0)`: the driver's own lift budgets instead
    /// (as on the CPU: `2n` lifts first, then at least doubling).
    #[serde(default)]
    pub lift_percent: Option<u32>,
    /// Accelerated driver: the evaluations' strongly connected components on the device on
    /// games of at least this many vertices (`None` = [`super::accel::DEVICE_COMPONENTS_FROM`];
    /// `Some(0)`: always; `Some(u64::MAX)`: never, the host computes them as `auto` does).
    #[serde(default)]
    pub device_components_from: Option<u64>,
}

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
#[derive(Debug, Clone, Copy)]
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

/// Both weight columns on the device, at the arena's storage width.
enum DeviceWeights {
    I16([CudaSlice<i16>; 2]),
    I32([CudaSlice<i32>; 2]),
    I64([CudaSlice<i64>; 2]),
}

impl DeviceWeights {
    /// The successors' column uploaded, and room for the predecessors' (which
    /// [`GpuEngine::upload`] has the device fill).
    fn upload(
        stream: &Arc<CudaStream>,
        staging: &mut Option<Staging>,
        succ: &WeightColumn<'_>,
    ) -> Result<DeviceWeights, GpuError> {
        fn pair<T: DeviceRepr + bytemuck::Pod>(
            stream: &Arc<CudaStream>,
            staging: &mut Option<Staging>,
            succ: &[T],
        ) -> Result<[CudaSlice<T>; 2], GpuError> {
            let uploaded = upload_array(stream, staging, succ)?;
            // SAFETY: the predecessors kernel writes every element (one per edge) before
            // any other kernel on this stream reads it.
            let pred = unsafe { stream.alloc::<T>(succ.len().max(1)) }.during("allocating")?;
            Ok([uploaded, pred])
        }
        Ok(match succ {
            WeightColumn::I16(s) => DeviceWeights::I16(pair(stream, staging, s)?),
            WeightColumn::I32(s) => DeviceWeights::I32(pair(stream, staging, s)?),
            WeightColumn::I64(s) => DeviceWeights::I64(pair(stream, staging, s)?),
        })
    }

    /// Device addresses of the successor and predecessor columns.
    fn pointers(&self, stream: &Arc<CudaStream>) -> (u64, u64) {
        match self {
            DeviceWeights::I16([s, p]) => (s.device_ptr(stream).0, p.device_ptr(stream).0),
            DeviceWeights::I32([s, p]) => (s.device_ptr(stream).0, p.device_ptr(stream).0),
            DeviceWeights::I64([s, p]) => (s.device_ptr(stream).0, p.device_ptr(stream).0),
        }
    }
}

/// The energies on the device: 32-bit when the bound allows (⊤ = `u32::MAX`), else 64-bit.
enum DeviceCredit {
    Narrow(CudaSlice<u32>),
    Wide(CudaSlice<u64>),
}

impl DeviceCredit {
    fn alloc(stream: &Arc<CudaStream>, n: usize, bits: u32) -> Result<DeviceCredit, GpuError> {
        let during = "allocating credits";
        Ok(if bits == 32 {
            DeviceCredit::Narrow(stream.alloc_zeros::<u32>(n.max(1)).during(during)?)
        } else {
            DeviceCredit::Wide(stream.alloc_zeros::<u64>(n.max(1)).during(during)?)
        })
    }

    /// Bytes of `n` energies on the device.
    fn bytes(&self, n: usize) -> usize {
        match self {
            DeviceCredit::Narrow(_) => n * 4,
            DeviceCredit::Wide(_) => n * 8,
        }
    }

    fn pointer(&self, stream: &Arc<CudaStream>) -> u64 {
        match self {
            DeviceCredit::Narrow(c) => c.device_ptr(stream).0,
            DeviceCredit::Wide(c) => c.device_ptr(stream).0,
        }
    }

    fn zero(&mut self, stream: &Arc<CudaStream>) -> Result<(), GpuError> {
        match self {
            DeviceCredit::Narrow(c) => stream.memset_zeros(c),
            DeviceCredit::Wide(c) => stream.memset_zeros(c),
        }
        .during("resetting credits")
    }

    /// Uploads device-ordered `values` (⊤ = `u64::MAX`, finite values below the bound).
    fn upload(&mut self, stream: &Arc<CudaStream>, values: &[u64]) -> Result<(), GpuError> {
        let during = "uploading start values";
        match self {
            DeviceCredit::Narrow(c) => {
                let narrow: Vec<u32> = values.par_iter().map(|&x| narrow(x)).collect();
                stream.memcpy_htod(&narrow, c).during(during)
            }
            DeviceCredit::Wide(c) => stream.memcpy_htod(values, c).during(during),
        }
    }

    /// The energies (device order, `n` of them) as `u64` with ⊤ = `u64::MAX`. Staged 32-bit
    /// energies are written into `reuse`'s memory (grown to `n` if it is shorter) without
    /// clearing it first; the other paths allocate.
    fn download(
        &self,
        stream: &Arc<CudaStream>,
        staging: &mut Option<Staging>,
        n: usize,
        reuse: Vec<u64>,
    ) -> Result<Vec<u64>, GpuError> {
        Ok(match (self, staging) {
            // Widened straight out of the staging buffers, while the next piece copies.
            (DeviceCredit::Narrow(c), Some(staging)) if n * 4 >= STAGED_IF_READY => {
                // Written without clearing first: `reuse`'s memory (its pages in memory
                // already) or a new block, faulted in by the threads that widen.
                let mut out = reuse;
                out.clear();
                out.reserve_exact(n);
                let slots = &mut out.spare_capacity_mut()[..n];
                let mut written = 0;
                let (ptr, _record) = c.device_ptr(stream);
                staging.download_with(stream, ptr, n * 4, |offset, piece| {
                    let words: &[u32] = bytemuck::cast_slice(piece);
                    slots[offset / 4..offset / 4 + words.len()]
                        .par_chunks_mut(WIDEN_PIECE)
                        .zip(words.par_chunks(WIDEN_PIECE))
                        .for_each(|(to, from)| {
                            for (t, &x) in to.iter_mut().zip(from) {
                                t.write(widen(x));
                            }
                        });
                    written += words.len();
                })?;
                // The pieces cover 0..n * 4 bytes one after another (`download_with`).
                assert_eq!(written, n, "every credit downloaded");
                // SAFETY: the pieces wrote slots 0..n, each once, as counted above.
                unsafe { out.set_len(n) };
                out
            }
            (DeviceCredit::Narrow(c), staging) => download_array(stream, staging, c, n)?
                .par_iter()
                .map(|&x| widen(x))
                .collect(),
            (DeviceCredit::Wide(c), staging) => download_array(stream, staging, c, n)?,
        })
    }
}

/// Energies per parallel task when widening a downloaded piece.
const WIDEN_PIECE: usize = 1 << 16;

/// A `u64` energy (finite below `u32::MAX`, or ⊤) as a 32-bit device energy.
fn narrow(x: u64) -> u32 {
    if x == crate::solve::TOP {
        u32::MAX
    } else {
        debug_assert!(x < u32::MAX as u64);
        x as u32
    }
}

/// A 32-bit device energy as `u64`.
fn widen(x: u32) -> u64 {
    if x == u32::MAX {
        crate::solve::TOP
    } else {
        x as u64
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
    /// Bits per weight and per energy on the device (which kernels run).
    weight_bits: u32,
    value_bits: u32,
    // Device buffers (kept alive for the kernels' raw pointers in `params`).
    _adjacency: [CudaSlice<u32>; 4],
    _weights: DeviceWeights,
    _owners: Option<CudaSlice<u8>>,
    credit: DeviceCredit,
    /// The first frontier; also the strategy kernel's output.
    frontier0: CudaSlice<u32>,
    _frontier1: CudaSlice<u32>,
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

/// Has the device list every vertex's predecessors (sources and weights, at the slots
/// `params.pred_offsets` gives) from the uploaded successors, `lanes` threads per vertex;
/// `cursor` holds one zero word per vertex.
fn list_predecessors(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    params: &LiftParams,
    cursor: &CudaSlice<u32>,
    lanes: u32,
) -> Result<(), GpuError> {
    let cfg = vertex_groups(params.n, lanes);
    let mut launch = stream.launch_builder(&kernels.predecessors);
    launch.arg(params);
    launch.arg(cursor);
    launch.arg(&lanes);
    // SAFETY: `params` holds live allocations (successor offsets n + 1, targets and both
    // weight columns m, predecessor offsets n + 1 and sources m) and `cursor` n zero words;
    // the kernel writes each predecessor slot once, at offsets below m by the CSC's offsets.
    unsafe { launch.launch(cfg) }.during("launching the predecessors kernel")?;
    Ok(())
}

/// The CSC's offsets (`n + 1` words into `offsets`) from the successors' `targets`: the
/// in-degrees counted on the device, then summed in place ([`exclusive_prefix_sum`]).
fn list_predecessor_offsets(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    targets: &CudaSlice<u32>,
    offsets: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    let during = "listing the predecessors' offsets";
    let m = targets.len() as u32;
    stream.memset_zeros(offsets).during(during)?;
    let cfg = LaunchConfig {
        grid_dim: (m.div_ceil(BLOCK).clamp(1, 1 << 16), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&kernels.count_in_degrees);
    launch.arg(targets);
    launch.arg(&m);
    launch.arg(&mut *offsets);
    // SAFETY: `targets` holds m vertex ids below n and `offsets` n + 1 words: the kernel
    // adds 1 to offsets[t] for each target t.
    unsafe { launch.launch(cfg) }.during(during)?;
    let len = offsets.len() as u32;
    let (ptr, _record) = offsets.device_ptr_mut(stream);
    exclusive_prefix_sum(stream, kernels, ptr, len)
}

/// Elements per tile of `scan_tiles` (`SCAN_TILE` in `kernels/lift.cu`).
const SCAN_TILE: u32 = BLOCK * 4;

/// Replaces the `len` words at device address `data` by their exclusive prefix sums (whose
/// total must fit in 32 bits): each tile summed by one block, the tiles' totals summed the
/// same way, recursively, and added back.
fn exclusive_prefix_sum(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    data: CUdeviceptr,
    len: u32,
) -> Result<(), GpuError> {
    let during = "summing prefixes";
    let tiles = len.div_ceil(SCAN_TILE).max(1);
    // SAFETY: `scan_tiles` writes every tile's total before anything reads it.
    let mut sums = unsafe { stream.alloc::<u32>(tiles as usize) }.during(during)?;
    let (sums_ptr, _record) = sums.device_ptr_mut(stream);
    let grid = |blocks: u32| LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&kernels.scan_tiles);
    launch.arg(&data);
    launch.arg(&len);
    launch.arg(&sums_ptr);
    // SAFETY: `data` holds `len` words and `sums` one per tile; block b reads and writes
    // only tile b's words and sums[b].
    unsafe { launch.launch(grid(tiles)) }.during(during)?;
    if tiles > 1 {
        exclusive_prefix_sum(stream, kernels, sums_ptr, tiles)?;
        let mut launch = stream.launch_builder(&kernels.add_tile_offsets);
        launch.arg(&data);
        launch.arg(&len);
        launch.arg(&sums_ptr);
        // SAFETY: as above; block b adds sums[b + 1] to tile b + 1's words.
        unsafe { launch.launch(grid(tiles - 1)) }.during(during)?;
    }
    // `sums` is freed on the stream when dropped, after the kernels that read it.
    Ok(())
}

/// A grid of `lanes`-thread groups, one per vertex up to the grid's limit (the kernels
/// loop over the rest in grid-stride order).
fn vertex_groups(n: u32, lanes: u32) -> LaunchConfig {
    let threads = n as u64 * lanes as u64;
    LaunchConfig {
        grid_dim: (
            threads.div_ceil(BLOCK as u64).clamp(1, 1 << 16) as u32,
            1,
            1,
        ),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The bound `M` of the game in `params` (weights of 16 or 32 bits), summed on the device
/// after its arrays (`kernels/lift.cu` `deficits_w.._v..`); waits for the stream.
fn sum_bound(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    params: &LiftParams,
    lanes: u32,
) -> Result<u64, GpuError> {
    let during = "summing the bound";
    let sum = stream.alloc_zeros::<u64>(1).during(during)?;
    let cfg = vertex_groups(params.n, lanes);
    let mut launch = stream.launch_builder(&kernels.deficits);
    launch.arg(params);
    launch.arg(&sum);
    launch.arg(&lanes);
    // SAFETY: `params` holds live allocations (successor offsets n + 1, weights m, of the
    // module's weight width) and `sum` one zeroed word, the only thing the kernel writes.
    unsafe { launch.launch(cfg) }.during(during)?;
    let sum = stream.clone_dtoh(&sum).during(during)?;
    Ok(sum[0])
}

/// The device to use: the requested one, or the one with the most free memory; an error if
/// the game does not fit.
fn choose_device(requested: Option<usize>, needed: u64) -> Result<usize, GpuError> {
    let count = super::devices::driver_ready()?;
    let candidates: Vec<usize> = match requested {
        Some(d) if d >= count => {
            return Err(GpuError::BadDevice {
                requested: d,
                count,
            });
        }
        Some(d) => vec![d],
        None => (0..count).collect(),
    };
    let most_free = |candidates: &[usize]| -> Result<(usize, u64), GpuError> {
        let mut best: Option<(usize, u64)> = None;
        for &d in candidates {
            let info = device_info(d)?;
            if best.is_none_or(|(_, free)| info.memory_free > free) {
                best = Some((d, info.memory_free));
            }
        }
        best.ok_or(GpuError::NoDevice)
    };
    let (mut device, mut free) = most_free(&candidates)?;
    if needed + HEADROOM > free {
        // Memory earlier games freed may still sit in this process's pools.
        candidates.iter().for_each(|&d| release_freed_memory(d));
        (device, free) = most_free(&candidates)?;
    }
    if needed + HEADROOM > free {
        return Err(GpuError::OutOfMemory {
            needed,
            free,
            device,
        });
    }
    Ok(device)
}

impl GpuEngine {
    /// Whether [`GpuEngine::upload`] can sum the bound on the device (given `None`): for
    /// weights of 16 or 32 bits laid out at their own width, whose sum cannot overflow.
    pub fn sums_bound(arena: &Arena, options: &GpuOptions) -> bool {
        !options.wide && arena.weight_width().bits() <= 32
    }

    /// Lays `arena` out (renumbering it when `options.order` asks) and uploads it, with ⊤
    /// bound `bound`, to a device where it fits. Without a bound (only where
    /// [`GpuEngine::sums_bound`]), the device sums it from the uploaded weights (a few
    /// microseconds against a host pass over all of them) before the energies are laid out.
    pub fn upload(
        arena: &Arena,
        bound: Option<u64>,
        options: &GpuOptions,
    ) -> Result<GpuEngine, GpuError> {
        assert!(
            bound.is_some() || Self::sums_bound(arena, options),
            "the device sums the bound only for weights of up to 32 bits"
        );
        let (n, m) = (arena.vertex_count() as u64, arena.edge_count() as u64);
        if n >= u32::MAX as u64 / 2 {
            return Err(GpuError::TooLarge(format!("{n} vertices")));
        }
        if let Some(h) = options.lanes {
            if !LANES.contains(&h) {
                return Err(GpuError::BadLanes(h));
            }
        }
        // Energies are narrow unless the bound says otherwise. A bound still to be summed is
        // taken as narrow until the sum comes back (then the wide module is loaded if it
        // is not), and the room asked for is the wide case's, so that such a game fits.
        let energy_bits = |bound: Option<u64>| match bound {
            _ if options.wide => 64,
            Some(bound) => value_bits(bound),
            None => 32,
        };
        let weight_bits = if options.wide {
            64
        } else {
            arena.weight_width().bits()
        };
        let mut value_bits = energy_bits(bound);
        let room_bits = if bound.is_some() { value_bits } else { 64 };
        let start = Instant::now();
        let ordinal = choose_device(options.device, device_bytes(n, m, weight_bits, room_bits))?;
        let device = kernels(ordinal)?;
        let ctx = &device.ctx;
        let context_seconds = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut lift_kernels = device.lift(weight_bits, value_bits)?;
        let mut kernels_seconds = start.elapsed().as_secs_f64();

        let start = Instant::now();
        let layout = DeviceLayout::new(arena, options.wide, options.order);
        let prepare_seconds = start.elapsed().as_secs_f64();
        let lanes = options
            .lanes
            .unwrap_or_else(|| lanes_for_degree(layout.average_degree()));

        let start = Instant::now();
        let stream = ctx.new_stream().during("creating a stream")?;
        let stream_seconds = start.elapsed().as_secs_f64();
        let largest = layout.largest_array_bytes();
        let mut guard = device.staging_for(largest);
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        let mut adjacency = [
            upload_array(&stream, staging, &layout.succ_offsets)?,
            upload_array(&stream, staging, &layout.succ_targets)?,
            // SAFETY: filled by `list_predecessor_offsets` below before any kernel reads it.
            unsafe { stream.alloc::<u32>(n as usize + 1) }.during("allocating")?,
            // SAFETY: filled by the predecessors kernel below (one source per edge) before
            // any other kernel on this stream reads it.
            unsafe { stream.alloc::<u32>(layout.succ_targets.len().max(1)) }
                .during("allocating")?,
        ];
        let weights = DeviceWeights::upload(&stream, staging, &layout.succ_weights)?;
        let owners = match &layout.owners {
            Some(owners) => Some(upload_array(&stream, staging, owners)?),
            None => None,
        };
        let alloc_u32 = |len: usize| stream.alloc_zeros::<u32>(len.max(1)).during("allocating");
        // The arrays whose width does not depend on the bound are queued now, so that only
        // the energies wait for a bound summed on the device.
        let frontier0 = alloc_u32(n as usize)?;
        let frontier1 = alloc_u32(n as usize)?;
        let stamp = alloc_u32(n as usize)?;
        let top_record = alloc_u32(n as usize)?;
        let state = alloc_u32(16)?;
        let ptr_u32 = |s: &CudaSlice<u32>| s.device_ptr(&stream).0;
        let (succ_weights, pred_weights) = weights.pointers(&stream);
        let mut params = LiftParams {
            succ_offsets: ptr_u32(&adjacency[0]),
            succ_targets: ptr_u32(&adjacency[1]),
            succ_weights,
            pred_offsets: ptr_u32(&adjacency[2]),
            pred_sources: ptr_u32(&adjacency[3]),
            pred_weights,
            // The energies and the bound are set once the bound is known (below).
            credit: 0,
            frontier0: ptr_u32(&frontier0),
            frontier1: ptr_u32(&frontier1),
            stamp: ptr_u32(&stamp),
            state: ptr_u32(&state),
            bound: 0,
            n: layout.n,
            n0: layout.n0,
            dense_above: u32::MAX,
            max_rounds: 1,
            shrink_below: 0,
            grow_above: u32::MAX,
            max_ns: 0,
            owners: owners.as_ref().map_or(0, |o| o.device_ptr(&stream).0),
            top_record: 0,
        };
        let (successors, predecessors) = adjacency.split_at_mut(2);
        list_predecessor_offsets(&stream, &lift_kernels, &successors[1], &mut predecessors[0])?;
        let cursor = alloc_u32(n as usize)?;
        list_predecessors(&stream, &lift_kernels, &params, &cursor, lanes)?;
        let bound = match bound {
            Some(bound) => bound,
            None => {
                let bound = sum_bound(&stream, &lift_kernels, &params, lanes)?;
                value_bits = energy_bits(Some(bound));
                if value_bits != 32 {
                    let start = Instant::now();
                    lift_kernels = device.lift(weight_bits, value_bits)?;
                    kernels_seconds += start.elapsed().as_secs_f64();
                }
                bound
            }
        };
        let credit = DeviceCredit::alloc(&stream, n as usize, value_bits)?;
        params.credit = credit.pointer(&stream);
        params.bound = bound;
        stream.synchronize().during("uploading the game")?;
        let staged = guard.as_deref().is_some_and(Option::is_some);
        drop((guard, cursor));
        let upload_seconds = start.elapsed().as_secs_f64();
        tracing::debug!(stream_seconds, upload_seconds, staged, "gpu: game uploaded");
        let launched = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .during("creating an event")?;
        let mut engine = GpuEngine {
            launched,
            watchdog: launch_watchdog(),
            stream,
            ordinal,
            n: layout.n,
            m: layout.m,
            n0: layout.n0,
            bound,
            lanes,
            full_blocks: 1,
            dense_above: u32::MAX,
            rounds_per_launch: 64,
            numbering: layout.numbering,
            context_seconds,
            kernels_seconds,
            prepare_seconds,
            upload_seconds,
            weight_bits,
            value_bits,
            _adjacency: adjacency,
            _weights: weights,
            _owners: owners,
            credit,
            frontier0,
            _frontier1: frontier1,
            stamp,
            state,
            params,
            kernels: lift_kernels,
            multiprocessors: device.multiprocessors,
            device: device.clone(),
            components: None,
            components_left_below: super::components::LEFT_TO_HOST_BELOW,
            evaluation: None,
            top_record,
        };
        engine.set_lanes(lanes)?;
        Ok(engine)
    }

    /// The device this engine runs on.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Whether the device holds the vertices renumbered (player 0 first), not in input order.
    pub fn renumbered(&self) -> bool {
        self.numbering.is_some()
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

    /// From now on, every lift that tops a vertex records why (`accel::topping`), into a
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
    /// [`TOP_NO_POSITION`] for none; the cause as `accel::topping::ToppedBy`, 0: not topped
    /// by a lift); `None` if none was started.
    pub fn download_topping(&mut self) -> Result<Option<Vec<u32>>, GpuError> {
        if self.params.top_record == 0 {
            return Ok(None);
        }
        let n = self.n as usize;
        let mut guard = self.device.staging_for(n * std::mem::size_of::<u32>());
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        Ok(Some(download_array(
            &self.stream,
            staging,
            &self.top_record,
            n,
        )?))
    }

    /// Player 0's moves (successor ids in input order, `NO_MOVE` where player 0 does not
    /// move) from the values the last lifting run left on the device, which must be the
    /// least fixpoint: the choice of `strategy::player0`, vertex for vertex. `None` when the
    /// vertices are renumbered (the host derives them then). The first frontier buffer is
    /// the kernel's output: the next lifting run resets it.
    pub fn player0_moves(&mut self) -> Result<Option<Vec<VertexId>>, GpuError> {
        let kernel = self.kernels.player0_moves.clone();
        self.word_per_vertex(&kernel, "launching the strategy kernel")
    }

    /// Player 1's strategy σ1 for an evaluation (edge indices, input order), chosen from the
    /// values the last lifting run left on the device, which must equal the host's: the
    /// choice of `accel::evaluate::choose_strategy` at every player-1 vertex with a finite
    /// value, `u32::MAX` at every other vertex (where the host keeps the edge it had).
    /// `None` when the vertices are renumbered. The first frontier buffer is the kernel's
    /// output, as for [`GpuEngine::player0_moves`].
    pub fn player1_edges(&mut self) -> Result<Option<Vec<u32>>, GpuError> {
        let kernel = self.kernels.player1_edges.clone();
        self.word_per_vertex(&kernel, "launching player 1's strategy kernel")
    }

    /// Runs a strategy kernel (`(LiftParams, u32* out)`, a warp per vertex) into the first
    /// frontier buffer and downloads its word per vertex; `None` when the vertices are
    /// renumbered (the kernels speak of input-order ids).
    fn word_per_vertex(
        &mut self,
        kernel: &CudaFunction,
        during: &'static str,
    ) -> Result<Option<Vec<u32>>, GpuError> {
        if self.numbering.is_some() {
            return Ok(None);
        }
        let n = self.n as usize;
        // A warp per vertex (grid-stride beyond 2^16 blocks).
        let cfg = LaunchConfig {
            grid_dim: (self.n.div_ceil(BLOCK / 32).clamp(1, 1 << 16), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let out = self.params.frontier0;
        let mut launch = self.stream.launch_builder(kernel);
        launch.arg(&self.params);
        launch.arg(&out);
        // SAFETY: `params` holds live allocations of this engine (offsets n+1, adjacency and
        // weights m, credits and owners n) and `out` is the first frontier, n words; the
        // strategy kernels read those and write out[v] for v < n only.
        unsafe { launch.launch(cfg) }.during(during)?;
        let mut guard = self.device.staging_for(n * std::mem::size_of::<u32>());
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        Ok(Some(download_array(
            &self.stream,
            staging,
            &self.frontier0,
            n,
        )?))
    }

    /// Starts the strongly connected components of an evaluation's graph on the device
    /// (see [`super::components`]): `keeps` has one word per vertex in input order; given
    /// σ1's edges, the giant component's greedy witness follows. `false` (nothing started)
    /// when the vertices are renumbered or the arrays do not fit.
    pub fn start_components(
        &mut self,
        keeps: &[u32],
        sigma_edge: Option<&[u32]>,
    ) -> Result<bool, GpuError> {
        if self.numbering.is_some() {
            return Ok(false);
        }
        if self.components.is_none() {
            match DeviceComponents::new(
                self.kernels.clone(),
                self.device.clone(),
                self.stream.clone(),
                self.adjacency(),
                self.n,
                self.watchdog,
            ) {
                Ok(components) => self.components = Some(components),
                Err(e) => {
                    tracing::warn!("components stay on the host: {e}");
                    return Ok(false);
                }
            }
        }
        let components = self.components.as_mut().expect("allocated above");
        components.leave_to_host_below(self.components_left_below);
        components.start(keeps, sigma_edge)?;
        Ok(true)
    }

    /// Components of at most `vertices` vertices pending after the device's
    /// forward–backward search are left to the host from the next start on (0: none; the
    /// default is [`super::components::LEFT_TO_HOST_BELOW`]).
    pub fn leave_components_to_host_below(&mut self, vertices: u32) {
        self.components_left_below = vertices;
    }

    /// The components [`GpuEngine::start_components`] started: each vertex's
    /// representative (and the giant's witness), or `None` when the device left them to the
    /// host.
    pub fn finish_components(&mut self) -> Result<Option<FoundComponents>, GpuError> {
        match self.components.as_mut() {
            Some(components) => components.finish(),
            None => Ok(None),
        }
    }

    /// The arena's adjacency on the device.
    fn adjacency(&self) -> Adjacency {
        Adjacency {
            succ_offsets: self.params.succ_offsets,
            succ_weights: self.params.succ_weights,
            succ_targets: self.params.succ_targets,
            pred_offsets: self.params.pred_offsets,
            pred_sources: self.params.pred_sources,
            pred_weights: self.params.pred_weights,
        }
    }

    /// The evaluation kernels' arrays, allocated on first use; `None` when the vertices are
    /// renumbered or the arrays do not fit (then never tried again).
    fn evaluation(&mut self) -> Option<&mut DeviceEvaluation> {
        if self.numbering.is_some() {
            return None;
        }
        if self.evaluation.is_none() {
            let lifted = LiftedValues {
                values: self.params.credit,
                owners: self.params.owners,
                n0: self.params.n0,
            };
            let made = DeviceEvaluation::new(
                self.kernels.clone(),
                self.device.clone(),
                self.stream.clone(),
                self.adjacency(),
                lifted,
                self.n,
                self.bound,
                self.watchdog,
            );
            self.evaluation = Some(made.map_err(|e| {
                tracing::warn!("reachability and Bellman–Ford stay on the host: {e}");
            }));
        }
        self.evaluation.as_mut().and_then(|made| made.as_mut().ok())
    }

    /// Backward reachability in an evaluation's graph on the device (see
    /// [`super::evaluation`]): whether each vertex (input order) has a path, in the graph
    /// whose words are `keeps`, to a vertex with `sources[v] != 0`. `None` when the device
    /// leaves it to the host (renumbered vertices, no room, out of sweeps).
    pub fn reaching(&mut self, keeps: &[u32], sources: &[u8]) -> Result<Option<Vec<u8>>, GpuError> {
        match self.evaluation() {
            Some(evaluation) => evaluation.reaching(keeps, sources),
            None => Ok(None),
        }
    }

    /// Player 1's attractor to ⊤ after an evaluation's first step on the device (see
    /// [`super::evaluation`]): from the values the last lifting run left here, with every
    /// vertex the last [`GpuEngine::reaching`] did not reach at ⊤. `None` when the device
    /// leaves it to the host (no reachability answered just before, out of sweeps).
    pub fn attract_top(&mut self) -> Result<Option<EngineAttracted>, GpuError> {
        match self.evaluation() {
            Some(evaluation) => evaluation.attract_top(),
            None => Ok(None),
        }
    }

    /// The least credits to reach a pinned vertex in an evaluation's graph on the device
    /// (see [`super::evaluation`]), or `None` when the device leaves them to the host.
    pub fn credits_to_pinned(
        &mut self,
        keeps: &[u32],
        sigma_edge: &[u32],
        class: &[u8],
    ) -> Result<Option<Vec<u64>>, GpuError> {
        match self.evaluation() {
            Some(evaluation) => evaluation.credits_to_pinned(keeps, sigma_edge, class),
            None => Ok(None),
        }
    }

    /// Sweeps the last reachability or Bellman–Ford launch ran.
    pub fn evaluation_sweeps(&self) -> u32 {
        match &self.evaluation {
            Some(Ok(evaluation)) => evaluation.sweeps,
            _ => 0,
        }
    }

    /// The last components launch's figures.
    pub fn component_figures(&self) -> ComponentFigures {
        self.components
            .as_ref()
            .map(|c| c.figures)
            .unwrap_or_default()
    }

    /// The seconds of getting ready: context, kernels, layout and upload (the lifting
    /// phases' fields are 0).
    pub fn setup_timings(&self) -> GpuTimings {
        GpuTimings {
            context: self.context_seconds,
            kernels: self.kernels_seconds,
            prepare: self.prepare_seconds,
            upload: self.upload_seconds,
            ..GpuTimings::default()
        }
    }

    /// The ⊤ bound `M` in use.
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// Player-0 vertices (device ids `0..n0`).
    pub fn player0_count(&self) -> u32 {
        self.n0
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

#[cfg(test)]
impl GpuEngine {
    /// The predecessors as the device listed them: offsets, sources and weights (widened),
    /// in the device's order and numbering.
    fn listed_predecessors(&self) -> (Vec<u32>, Vec<u32>, Vec<i64>) {
        fn widened<T: DeviceRepr + Copy + Into<i64>>(
            stream: &Arc<CudaStream>,
            column: &CudaSlice<T>,
        ) -> Vec<i64> {
            let column = stream.clone_dtoh(column).expect("downloads");
            column.into_iter().map(Into::into).collect()
        }
        let sources = self
            .stream
            .clone_dtoh(&self._adjacency[3])
            .expect("downloads");
        let weights = match &self._weights {
            DeviceWeights::I16([_, p]) => widened(&self.stream, p),
            DeviceWeights::I32([_, p]) => widened(&self.stream, p),
            DeviceWeights::I64([_, p]) => widened(&self.stream, p),
        };
        let offsets = self
            .stream
            .clone_dtoh(&self._adjacency[2])
            .expect("downloads");
        let m = self.m as usize;
        (offsets, sources[..m].to_vec(), weights[..m].to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::EdgeList;
    use crate::generate::{RandomParams, random};
    use crate::solve::TOP;

    /// Where a GPU is, the memory a dropped game held stays with the process (the driver
    /// counts it as used) until [`release_freed_memory`] hands it back.
    #[test]
    fn freed_device_memory_is_kept_and_released_on_demand_where_a_gpu_is() {
        if let Err(e) = super::super::devices::driver_ready() {
            eprintln!("no GPU: the device memory pool not checked ({e})");
            return;
        }
        let arena = random(
            RandomParams {
                vertices: 1 << 20,
                ..RandomParams::default()
            },
            3,
        );
        let bound = crate::solve::energy::bound(&arena).expect("fits");
        let engine =
            GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
        let ordinal = engine.ordinal();
        let bytes = device_bytes(
            arena.vertex_count() as u64,
            arena.edge_count() as u64,
            16,
            32,
        );
        engine.stream.synchronize().expect("synchronises");
        drop(engine);
        kernels(ordinal)
            .expect("opened")
            .ctx
            .synchronize()
            .expect("frees complete");
        let kept = device_info(ordinal).expect("reads").memory_free;
        release_freed_memory(ordinal);
        let released = device_info(ordinal).expect("reads").memory_free;
        assert!(
            released >= kept + bytes / 2,
            "{kept} bytes free with the game's memory kept, {released} after releasing it \
             ({bytes} bytes estimated for the game)"
        );
    }

    /// Where a GPU is, the predecessors the device lists from the uploaded successors are
    /// the arena's, vertex for vertex (as multisets: the order within a list is the
    /// device's), at every weight width, in both vertex orders and with every lane count,
    /// on random games with a hub of many predecessors and successors (fixed seeds and a
    /// fresh one); the bound the device sums (16- and 32-bit weights, energies of either
    /// width) is the host's. Without a GPU: nothing to check.
    #[test]
    fn device_lists_the_arenas_predecessors_and_sums_its_bound_where_a_gpu_is() {
        if let Err(e) = super::super::devices::driver_ready() {
            eprintln!("no GPU: the device's predecessor lists not checked ({e})");
            return;
        }
        let fresh: u64 = rand::random();
        eprintln!("fresh seed {fresh}");
        for seed in (0..12u64).chain([fresh]) {
            let base = random(
                RandomParams {
                    vertices: [30, 1_000, 20_000, 150_000][(seed % 4) as usize],
                    min_degree: 1,
                    max_degree: 1 + (seed % 6) as u32,
                    min_weight: [-5, -40_000, -3_000_000_000][(seed % 3) as usize],
                    max_weight: [5, 40_000, 3_000_000_000][(seed % 3) as usize],
                    player1_percent: (seed * 23 % 101) as u8,
                },
                seed,
            );
            // Vertex 0 becomes a hub: an edge to and from every 3rd vertex.
            let n = base.vertex_count() as u32;
            let mut edges = EdgeList::with_capacity(base.edge_count() + 2 * n as usize);
            for v in 0..n {
                for (u, w) in base.successors(v) {
                    edges.push(v, u, w);
                }
                if v % 3 == 0 {
                    edges.push(0, v, v as i64 % 7 - 3);
                    edges.push(v, 0, 2 - v as i64 % 5);
                }
            }
            let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
            let bound = crate::solve::energy::bound(&arena).expect("fits");
            let orders = [VertexOrder::Input, VertexOrder::PlayersFirst];
            let options = GpuOptions {
                order: orders[(seed % 2) as usize],
                wide: seed % 5 == 4,
                lanes: Some(LANES[(seed as usize) % LANES.len()]),
                ..GpuOptions::default()
            };
            // The bound summed on the device where it can be, given where not.
            let summed = GpuEngine::sums_bound(&arena, &options);
            let engine =
                GpuEngine::upload(&arena, (!summed).then_some(bound), &options).expect("uploads");
            assert_eq!(
                engine.bound(),
                bound,
                "seed {seed}: the bound (summed: {summed})"
            );
            let (offsets, sources, weights) = engine.listed_predecessors();
            assert_eq!(
                offsets.len(),
                n as usize + 1,
                "seed {seed}: the CSC's offsets"
            );
            assert_eq!(offsets[n as usize] as usize, arena.edge_count());
            let old_of_new = |d: u32| {
                engine
                    .numbering
                    .as_ref()
                    .map_or(d, |numbering| numbering.old_of_new[d as usize])
            };
            for d in 0..n {
                let range = offsets[d as usize] as usize..offsets[d as usize + 1] as usize;
                let mut got: Vec<(u32, i64)> = range
                    .map(|k| (old_of_new(sources[k]), weights[k]))
                    .collect();
                got.sort_unstable();
                let mut expected: Vec<(u32, i64)> = arena.predecessors(old_of_new(d)).collect();
                expected.sort_unstable();
                assert_eq!(got, expected, "seed {seed}, device vertex {d}");
            }
        }
    }

    /// Where a GPU is, the device's exclusive prefix sums equal the host's at sizes around
    /// one tile, and past a tile of tiles (so the tiles' totals are summed recursively,
    /// three levels), random counts from a fixed seed and a fresh one. Without a GPU:
    /// nothing to check.
    #[test]
    fn device_prefix_sums_equal_the_hosts_where_a_gpu_is() {
        if let Err(e) = super::super::devices::driver_ready() {
            eprintln!("no GPU: the device's prefix sums not checked ({e})");
            return;
        }
        let device = kernels(0).expect("opened");
        let lift = device.lift(16, 32).expect("compiled");
        let stream = device.ctx.new_stream().expect("a stream");
        let tile = SCAN_TILE as usize;
        let fresh: u64 = rand::random();
        eprintln!("fresh seed {fresh}");
        for (i, len) in [
            1,
            2,
            5,
            tile - 1,
            tile,
            tile + 1,
            3 * tile + 7,
            tile * tile + 3,
        ]
        .into_iter()
        .enumerate()
        {
            for seed in [i as u64, fresh] {
                let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                let counts: Vec<u32> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % 9) as u32
                    })
                    .collect();
                let mut on_device = stream.clone_htod(&counts).expect("uploads");
                {
                    let (ptr, _record) = on_device.device_ptr_mut(&stream);
                    exclusive_prefix_sum(&stream, &lift, ptr, len as u32).expect("sums");
                }
                let got = stream.clone_dtoh(&on_device).expect("downloads");
                let expected: Vec<u32> = counts
                    .iter()
                    .scan(0u32, |sum, &c| {
                        let before = *sum;
                        *sum += c;
                        Some(before)
                    })
                    .collect();
                assert_eq!(got, expected, "length {len}, seed {seed}");
            }
        }
    }

    #[test]
    fn narrow_energies_round_trip_with_top() {
        for x in [0, 1, 17, u32::MAX as u64 - 1, TOP] {
            assert_eq!(widen(narrow(x)), x, "{x}");
        }
        assert_eq!(narrow(TOP), u32::MAX);
        assert_eq!(widen(u32::MAX), TOP);
    }
}
