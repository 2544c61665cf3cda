//! The predecessor side listed on the device from the successors, so that an upload
//! carries each edge once: the in-degrees counted and prefix-summed into the CSC's
//! offsets, then each edge appended to its target's list at a claimed slot. The kernels
//! stay inside their arrays whatever the successors hold, so the listing may run on arrays
//! the host has not checked yet (`super::early`).

use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg};

use crate::compile::LiftKernels;
use crate::error::{DuringExt, GpuError};

use super::{BLOCK, LiftParams};

/// Has the device list every vertex's predecessors (sources and weights, at the slots
/// `params.pred_offsets` gives) from the uploaded successors, `lanes` threads per vertex;
/// `cursor` holds one zero word per vertex; nothing when `bad` (one word) is set.
fn list_predecessors(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    params: &LiftParams,
    (cursor, bad): (&CudaSlice<u32>, &CudaSlice<u32>),
    lanes: u32,
    m: u32,
) -> Result<(), GpuError> {
    let cfg = vertex_groups(params.n, lanes);
    let mut launch = stream.launch_builder(&kernels.predecessors);
    launch.arg(params);
    launch.arg(cursor);
    launch.arg(&lanes);
    launch.arg(&m);
    launch.arg(bad);
    // SAFETY: `params` holds live allocations (successor offsets n + 1, targets and both
    // weight columns m, predecessor offsets n + 1 from `list_predecessor_offsets` and
    // sources m), `cursor` n zero words and `bad` one. Whatever the successor arrays hold
    // (checked or not), the kernel reads edges below m and targets below n only, writes
    // only slots below the CSC's offset of the next vertex, which is at most the number of
    // edges counted (≤ m), and does nothing where the offsets were found unsound.
    unsafe { launch.launch(cfg) }.during("launching the predecessors kernel")?;
    Ok(())
}

/// The predecessor side (`adjacency[2..4]`, the weights' column in `params`) listed on the
/// device from the successor side (`adjacency[0..2]`), whose arrays need not be checked
/// yet: the kernels stay inside the arrays whatever they hold, and the listing does
/// nothing if the offsets do not rise from 0 to m. Returns that flag (one word, nonzero:
/// unsound offsets, nothing listed), for a caller that lists unchecked arrays.
pub(super) fn list_all_predecessors(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    params: &LiftParams,
    adjacency: &mut [CudaSlice<u32>; 4],
    lanes: u32,
) -> Result<CudaSlice<u32>, GpuError> {
    let bad = stream.alloc_zeros::<u32>(1).during("allocating")?;
    let (successors, predecessors) = adjacency.split_at_mut(2);
    let m = successors[1].len() as u32;
    list_predecessor_offsets(stream, kernels, successors, &mut predecessors[0], &bad)?;
    let cursor = stream
        .alloc_zeros::<u32>((params.n as usize).max(1))
        .during("allocating")?;
    list_predecessors(stream, kernels, params, (&cursor, &bad), lanes, m)?;
    Ok(bad)
}

/// The CSC's offsets (`n + 1` words into `offsets`) from the successors (offsets and
/// targets): the in-degrees counted on the device, then summed in place
/// ([`exclusive_prefix_sum`]); `bad` set where the successor offsets are unsound.
fn list_predecessor_offsets(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    successors: &[CudaSlice<u32>],
    offsets: &mut CudaSlice<u32>,
    bad: &CudaSlice<u32>,
) -> Result<(), GpuError> {
    let during = "listing the predecessors' offsets";
    let (succ_offsets, targets) = (&successors[0], &successors[1]);
    let m = targets.len() as u32;
    let n = offsets.len() as u32 - 1;
    stream.memset_zeros(offsets).during(during)?;
    let cfg = LaunchConfig {
        grid_dim: (m.max(n).div_ceil(BLOCK).clamp(1, 1 << 16), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&kernels.count_in_degrees);
    launch.arg(targets);
    launch.arg(&m);
    launch.arg(&mut *offsets);
    launch.arg(&n);
    launch.arg(succ_offsets);
    launch.arg(bad);
    // SAFETY: `targets` holds m words, `offsets` and `succ_offsets` n + 1, `bad` one: the
    // kernel adds 1 to offsets[t] for each target t below n (ids of n or more, in arrays
    // not yet checked, are skipped), reads each successor offset, and sets `bad`.
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
