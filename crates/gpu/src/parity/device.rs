//! The fixpoint loop on the device: the game resident (the arena's CSR, the vertices by
//! priority, a status byte, a frozen word and a strategy word per vertex), one cooperative
//! launch of `fixpoint_iteration` (`kernels/parity.cu`) per [`LAUNCH_NS`] of work, and a
//! read of eight state words between launches, where the host checks the solve's control.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use egsolve_core::arena::Arena;
use egsolve_core::solve::NO_MOVE;

use super::{FixpointLayout, FixpointMachine, Progress};
use crate::compile::{PARITY_KERNEL, PARITY_SOURCE, cached_cubin, kernels};
use crate::engine::placement::choose_device;
use crate::error::{DuringExt, GpuError, GpuSolveError};
use crate::transfer::{finished_state, launch_watchdog};

/// Threads per block (`PARITY_BLOCK` in the kernel).
const BLOCK: u32 = 512;
/// How long one launch runs before it hands back to the host (device clock).
pub const LAUNCH_NS: u64 = 10_000_000;
/// Flag words (zeroed before each launch) and state words (kept across launches).
const FLAG_WORDS: usize = 8;
const STATE_WORDS: usize = 8;

/// The kernel's parameters; the layout matches `struct FixpointParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct FixpointParams {
    succ_offsets: u64,
    succ_targets: u64,
    order: u64,
    level_start: u64,
    status: u64,
    frozen: u64,
    strategy: u64,
    flags: u64,
    state: u64,
    levels: u32,
    n: u32,
    max_ns: u64,
}

// SAFETY: plain `repr(C)` data (device addresses and integers) with the C struct's layout.
unsafe impl DeviceRepr for FixpointParams {}

/// The game and the loop's state on one device.
pub struct DeviceFixpoint {
    stream: Arc<CudaStream>,
    function: CudaFunction,
    blocks: u32,
    n: usize,
    _arrays: Vec<CudaSlice<u32>>,
    status: CudaSlice<u8>,
    strategy: CudaSlice<u32>,
    flags: CudaSlice<u32>,
    state: CudaSlice<u32>,
    params: FixpointParams,
    done: CudaEvent,
    watchdog: Duration,
}

/// The loaded kernel per device (NVRTC or the disk cache once per process).
fn parity_function(ordinal: usize) -> Result<CudaFunction, GpuError> {
    static LOADED: OnceLock<Mutex<HashMap<usize, CudaFunction>>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(f) = loaded.get(&ordinal) {
        return Ok(f.clone());
    }
    let device = kernels(ordinal)?;
    let (cubin, _) = cached_cubin("parity.cu", PARITY_SOURCE, &device.arch)?;
    let module = device
        .ctx
        .load_module(Ptx::from_binary(cubin))
        .during("loading the parity kernel")?;
    let function = module
        .load_function(PARITY_KERNEL)
        .during("loading the parity kernel")?;
    loaded.insert(ordinal, function.clone());
    Ok(function)
}

impl DeviceFixpoint {
    /// Uploads `arena` laid out as `layout` to device `device` (or the one with the most
    /// free memory) and sets the loop at its start.
    pub fn upload(
        arena: &Arena,
        layout: &FixpointLayout,
        device: Option<usize>,
    ) -> Result<DeviceFixpoint, GpuError> {
        let (n, m) = (arena.vertex_count(), arena.edge_count());
        let needed = (n as u64) * 17 + (m as u64) * 4 + 4 * layout.level_start.len() as u64;
        let ordinal = choose_device(device, needed)?;
        let kernels = kernels(ordinal)?;
        let function = parity_function(ordinal)?;
        let stream = kernels.ctx.new_stream().during("creating a stream")?;
        let during = "uploading the parity game";
        let offsets = stream.clone_htod(arena.succ_offsets()).during(during)?;
        let targets = stream
            .clone_htod(&non_empty(arena.succ_targets()))
            .during(during)?;
        let order = stream
            .clone_htod(&non_empty(&layout.order))
            .during(during)?;
        let level_start = stream.clone_htod(&layout.level_start).during(during)?;
        let status = stream
            .clone_htod(&non_empty(&layout.status))
            .during(during)?;
        let strategy = stream.clone_htod(&vec![NO_MOVE; n.max(1)]).during(during)?;
        let frozen = stream.alloc_zeros::<u32>(n.max(1)).during(during)?;
        let flags = stream.alloc_zeros::<u32>(FLAG_WORDS).during(during)?;
        let state = stream.alloc_zeros::<u32>(STATE_WORDS).during(during)?;
        let per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
            .during("reading the parity kernel's occupancy")?
            .max(1);
        let blocks = (per_sm * kernels.multiprocessors).min((n as u32).div_ceil(BLOCK).max(1));
        let p32 = |s: &CudaSlice<u32>| s.device_ptr(&stream).0;
        let params = FixpointParams {
            succ_offsets: p32(&offsets),
            succ_targets: p32(&targets),
            order: p32(&order),
            level_start: p32(&level_start),
            status: status.device_ptr(&stream).0,
            frozen: p32(&frozen),
            strategy: p32(&strategy),
            flags: p32(&flags),
            state: p32(&state),
            levels: layout.levels(),
            n: n as u32,
            max_ns: LAUNCH_NS,
        };
        let done = kernels
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .during("creating an event")?;
        Ok(DeviceFixpoint {
            stream,
            function,
            blocks,
            n,
            _arrays: vec![offsets, targets, order, level_start, frozen],
            status,
            strategy,
            flags,
            state,
            params,
            done,
            watchdog: launch_watchdog(),
        })
    }

    /// Blocks per launch (occupancy × SMs, at most one per `BLOCK` vertices).
    pub fn blocks(&self) -> u32 {
        self.blocks
    }
}

/// `values`, or one zero where it is empty (the driver allocates no empty arrays).
fn non_empty<T: Copy + Default>(values: &[T]) -> Vec<T> {
    if values.is_empty() {
        vec![T::default()]
    } else {
        values.to_vec()
    }
}

impl FixpointMachine for DeviceFixpoint {
    fn run(&mut self) -> Result<Progress, GpuSolveError> {
        self.stream
            .memset_zeros(&mut self.flags)
            .during("clearing the parity kernel's flags")?;
        let cfg = LaunchConfig {
            grid_dim: (self.blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&self.function);
        launch.arg(&self.params);
        // SAFETY: every pointer in `params` is a live allocation of the length the kernel
        // assumes (offsets n + 1, targets m, order, status, frozen and strategy n, level
        // starts levels + 1, flags and state 8 words); targets and order hold vertex ids
        // < n. `blocks` is at most the co-resident grid, which the cooperative launch checks.
        unsafe { launch.launch_cooperative(cfg) }.during("launching the parity kernel")?;
        self.done
            .record(&self.stream)
            .during("recording a parity launch")?;
        let state: [u32; STATE_WORDS] = finished_state(
            &self.stream,
            &self.done,
            &self.state,
            self.watchdog,
            (
                "waiting for the parity kernel",
                "reading the parity kernel's state",
            ),
        )?;
        Ok(Progress {
            done: state[2] != 0,
            restarts: u64::from(state[3]),
            passes: u64::from(state[4]),
        })
    }

    fn finish(self) -> Result<(Vec<u8>, Vec<u32>), GpuSolveError> {
        let during = "downloading the parity answer";
        let mut status = self.stream.clone_dtoh(&self.status).during(during)?;
        let mut strategy = self.stream.clone_dtoh(&self.strategy).during(during)?;
        self.stream.synchronize().during(during)?;
        status.truncate(self.n);
        strategy.truncate(self.n);
        Ok((status, strategy))
    }
}
