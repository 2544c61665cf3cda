//! Strongly connected components of an evaluation's graph on the device
//! (`kernels/components.cu`): the host uploads one word per vertex (what the vertex keeps:
//! the `keeps` words of the accelerated solver's graph), one cooperative launch computes
//! each vertex's representative from the arena's CSR and CSC already on the device, and the
//! host downloads them. The launch runs while the host builds its own copy of the graph
//! ([`DeviceComponents::start`] returns at once, [`DeviceComponents::finish`] waits), so the
//! components cost the host nothing but the two copies.
//!
//! The kernel gives up after a number of sweeps ([`MAX_SWEEPS`], one pass over the vertices
//! each: graphs of long paths between components need about one per step), and the host
//! then computes the components itself: `finish` answers `None`.

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};

use super::compile::{Kernels, LiftKernels};
use super::error::{DuringExt, GpuError};
use super::transfer::{download_array, upload_into, wait_until};

/// Sweeps the kernel may run before it leaves the components to the host (a few tens of
/// milliseconds on a 10^7-edge game).
pub const MAX_SWEEPS: u32 = 4096;

/// Threads per block (the kernel's `__launch_bounds__`).
const BLOCK: u32 = 512;

/// State words (`kernels/components.cu`).
const STATE_WORDS: usize = 16;
const FAILED: usize = 8;
const SWEEPS: usize = 9;
const COLOURINGS: usize = 10;
const TRIMMED: usize = 11;
const GIANT: usize = 12;

/// The kernel's parameters; the layout matches `struct ComponentParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct ComponentParams {
    succ_offsets: u64,
    succ_targets: u64,
    pred_offsets: u64,
    pred_sources: u64,
    keep: u64,
    comp: u64,
    colour: u64,
    mark: u64,
    state: u64,
    n: u32,
    max_sweeps: u32,
}

// SAFETY: plain `repr(C)` data (device addresses and integers) with the C struct's layout.
unsafe impl DeviceRepr for ComponentParams {}

/// The arena's adjacency on the device, as the engine uploaded it (input order).
#[derive(Debug, Clone, Copy)]
pub struct Adjacency {
    pub succ_offsets: u64,
    pub succ_targets: u64,
    pub pred_offsets: u64,
    pub pred_sources: u64,
}

/// What one launch did (for the debug log and benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComponentFigures {
    pub sweeps: u32,
    pub colourings: u32,
    pub trimmed: u32,
    pub giant: u32,
}

/// The components kernel's buffers on one engine's stream.
pub struct DeviceComponents {
    kernels: Arc<LiftKernels>,
    device: Arc<Kernels>,
    stream: Arc<CudaStream>,
    n: u32,
    blocks: u32,
    keep: CudaSlice<u32>,
    comp: CudaSlice<u32>,
    _colour: CudaSlice<u32>,
    mark: CudaSlice<u32>,
    state: CudaSlice<u32>,
    params: ComponentParams,
    done: CudaEvent,
    watchdog: Duration,
    /// Whether a launch awaits [`DeviceComponents::finish`].
    started: bool,
    /// The last finished launch's figures.
    pub figures: ComponentFigures,
}

impl DeviceComponents {
    /// Allocates the kernel's four `n`-word arrays on `stream`.
    pub fn new(
        kernels: Arc<LiftKernels>,
        device: Arc<Kernels>,
        stream: Arc<CudaStream>,
        adjacency: Adjacency,
        n: u32,
        watchdog: Duration,
    ) -> Result<DeviceComponents, GpuError> {
        let alloc = |len: usize| {
            stream
                .alloc_zeros::<u32>(len.max(1))
                .during("allocating the components' arrays")
        };
        let (keep, comp, colour, mark, state) = (
            alloc(n as usize)?,
            alloc(n as usize)?,
            alloc(n as usize)?,
            alloc(n as usize)?,
            alloc(STATE_WORDS)?,
        );
        let per_sm = kernels
            .components
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
            .during("reading the components kernel's occupancy")?
            .max(1);
        let blocks = (per_sm * device.multiprocessors).min(n.div_ceil(BLOCK).max(1));
        let ptr = |s: &CudaSlice<u32>| s.device_ptr(&stream).0;
        let params = ComponentParams {
            succ_offsets: adjacency.succ_offsets,
            succ_targets: adjacency.succ_targets,
            pred_offsets: adjacency.pred_offsets,
            pred_sources: adjacency.pred_sources,
            keep: ptr(&keep),
            comp: ptr(&comp),
            colour: ptr(&colour),
            mark: ptr(&mark),
            state: ptr(&state),
            n,
            max_sweeps: MAX_SWEEPS,
        };
        let done = device
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .during("creating an event")?;
        Ok(DeviceComponents {
            kernels,
            device,
            stream,
            n,
            blocks,
            keep,
            comp,
            _colour: colour,
            mark,
            state,
            params,
            done,
            watchdog,
            started: false,
            figures: ComponentFigures::default(),
        })
    }

    /// Uploads `keeps` (one word per vertex: `u32::MAX` outside the subset, `u32::MAX - 1`
    /// for a vertex that keeps every edge, else its one successor) and launches the kernel;
    /// returns before it ends.
    pub fn start(&mut self, keeps: &[u32]) -> Result<(), GpuError> {
        assert_eq!(keeps.len(), self.n as usize, "one word per vertex");
        if self.started {
            // A solve interrupted between start and finish: let that launch end first.
            self.finish()?;
        }
        {
            let mut guard = self.device.staging_for(std::mem::size_of_val(keeps));
            let mut direct = None;
            let staging = guard.as_deref_mut().unwrap_or(&mut direct);
            upload_into(&self.stream, staging, keeps, &mut self.keep)?;
        }
        self.stream
            .memset_zeros(&mut self.mark)
            .during("clearing the components' marks")?;
        self.stream
            .memset_zeros(&mut self.state)
            .during("clearing the components' state")?;
        let cfg = LaunchConfig {
            grid_dim: (self.blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&self.kernels.components);
        launch.arg(&self.params);
        // SAFETY: every pointer in `params` is a live allocation with the lengths the kernel
        // assumes (the engine's offsets n+1 and adjacency m; keep, comp, colour and mark n
        // words; state 16 words, the u64 pivot 8-byte aligned at word 6), and the arena's
        // vertex ids and the `keeps` targets are < n. `blocks` is at most the co-resident
        // grid (occupancy × SMs), which the cooperative launch checks.
        unsafe { launch.launch_cooperative(cfg) }.during("launching the components kernel")?;
        self.done
            .record(&self.stream)
            .during("recording the components launch")?;
        self.started = true;
        Ok(())
    }

    /// Waits for the launch [`DeviceComponents::start`] made and returns each vertex's
    /// representative (`u32::MAX` outside the subset), or `None` when the kernel ran out of
    /// sweeps.
    pub fn finish(&mut self) -> Result<Option<Vec<u32>>, GpuError> {
        assert!(self.started, "a launch to finish");
        self.started = false;
        let during = "waiting for the components kernel";
        if !wait_until(|| self.done.try_is_complete(), self.watchdog).during(during)? {
            return Err(GpuError::Hung {
                seconds: self.watchdog.as_secs(),
            });
        }
        let mut state = [0u32; STATE_WORDS];
        self.stream
            .memcpy_dtoh(&self.state, &mut state[..])
            .during("reading the components' state")?;
        self.stream
            .synchronize()
            .during("reading the components' state")?;
        self.figures = ComponentFigures {
            sweeps: state[SWEEPS],
            colourings: state[COLOURINGS],
            trimmed: state[TRIMMED],
            giant: state[GIANT],
        };
        if state[FAILED] != 0 {
            return Ok(None);
        }
        let n = self.n as usize;
        let mut guard = self.device.staging_for(n * std::mem::size_of::<u32>());
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        download_array(&self.stream, staging, &self.comp, n).map(Some)
    }
}
