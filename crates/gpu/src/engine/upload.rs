//! Putting a game on the device: choosing the device, the upload of the successors, the
//! predecessor lists the device makes from them (in-degrees counted, prefix-summed into
//! offsets, sources and weights listed at claimed slots), and the bound `M` summed there
//! for narrow weights.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUdeviceptr, CUevent_flags};
use cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
};

use crate::compile::{LANES, LiftKernels, kernels, release_freed_memory};
use crate::devices::device_info;
use crate::error::{DuringExt, GpuError};
use crate::layout::{DeviceLayout, device_bytes, lanes_for_degree, value_bits};
use crate::transfer::upload_array;
pub use crate::transfer::{LAUNCH_WATCHDOG, launch_watchdog};
use egsolve_core::arena::Arena;
use egsolve_core::solve::GpuOptions;

use super::arrays::{DeviceCredit, DeviceWeights};
use super::{BLOCK, GpuEngine, HEADROOM, LiftParams};

/// Has the device list every vertex's predecessors (sources and weights, at the slots
/// `params.pred_offsets` gives) from the uploaded successors, `lanes` threads per vertex;
/// `cursor` holds one zero word per vertex.
pub(super) fn list_predecessors(
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
pub(super) fn list_predecessor_offsets(
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
pub const SCAN_TILE: u32 = BLOCK * 4;

/// Replaces the `len` words at device address `data` by their exclusive prefix sums (whose
/// total must fit in 32 bits): each tile summed by one block, the tiles' totals summed the
/// same way, recursively, and added back.
pub fn exclusive_prefix_sum(
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
pub(super) fn vertex_groups(n: u32, lanes: u32) -> LaunchConfig {
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
pub(super) fn sum_bound(
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
pub(crate) fn choose_device(requested: Option<usize>, needed: u64) -> Result<usize, GpuError> {
    let count = crate::devices::driver_ready()?;
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
            components_left_below: crate::components::LEFT_TO_HOST_BELOW,
            evaluation: None,
            top_record,
        };
        engine.set_lanes(lanes)?;
        Ok(engine)
    }

    /// The predecessors as the device listed them: offsets, sources and weights (widened),
    /// in the device's order and numbering (for the device tests, `tests/integration/on_device.rs`).
    pub fn listed_predecessors(&self) -> (Vec<u32>, Vec<u32>, Vec<i64>) {
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
