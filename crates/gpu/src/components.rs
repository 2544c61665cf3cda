//! Strongly connected components of an evaluation's graph on the device
//! (`kernels/components.cu`): the host uploads one word per vertex (what the vertex keeps:
//! the `keeps` words of the accelerated solver's graph), one cooperative launch computes
//! each vertex's representative from the arena's CSR and CSC already on the device, and the
//! host downloads them. The launch runs while the host builds its own copy of the graph
//! ([`DeviceComponents::start`] returns at once, [`DeviceComponents::finish`] waits), so the
//! components cost the host nothing but the two copies.
//!
//! Given σ1's edges, a second launch tests the component forward–backward found (the giant
//! of random games) for a nonnegative cycle of its greedy pointers, the cycle test's first
//! step ([`FoundComponents::witness`]); the host confirms a witness by an exact walk before
//! it skips that component's own test.
//!
//! What is left after the trims and the forward–backward search, when it is a few vertices
//! ([`LEFT_TO_HOST_BELOW`]), the kernel leaves to the host rather than colour it.
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

use crate::compile::{Kernels, LiftKernels};
use crate::error::{DuringExt, GpuError};
use crate::transfer::{download_staged, finished_state, upload_into};

/// Sweeps the kernel may run before it leaves the components to the host (a few tens of
/// milliseconds on a 10^7-edge game).
pub const MAX_SWEEPS: u32 = 4096;

/// The kernel leaves the components of at most this many vertices, pending after its trims
/// and forward–backward search, to the host (`accel::remainder`): a sequential Tarjan of a
/// few milliseconds at most, where colouring them takes hundreds of sweeps (random p50: about
/// 6,000 vertices left, 700 of its 870 sweeps).
pub const LEFT_TO_HOST_BELOW: u32 = 1 << 15;

/// Threads per block (the kernel's `__launch_bounds__`).
const BLOCK: u32 = 512;

/// State words (`kernels/components.cu`).
const STATE_WORDS: usize = 17;
const FAILED: usize = 8;
const SWEEPS: usize = 9;
const COLOURINGS: usize = 10;
const TRIMMED: usize = 11;
const GIANT: usize = 12;
const PIVOT: usize = 6;
const WITNESS: usize = 13;
const LEFT: usize = 15;
const TRIES: usize = 16;

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
    host_below: u32,
}

// SAFETY: plain `repr(C)` data (device addresses and integers) with the C struct's layout.
unsafe impl DeviceRepr for ComponentParams {}

/// The witness kernel's parameters; the layout matches `struct WitnessParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct WitnessParams {
    succ_weights: u64,
    sigma_edge: u64,
    pointer: u64,
    next: [u64; 2],
    least: [u64; 2],
    weight: u64,
    sum: [u64; 2],
}

// SAFETY: plain `repr(C)` data (device addresses) with the C struct's layout.
unsafe impl DeviceRepr for WitnessParams {}

/// The greedy witness kernel's arrays: σ1's edges (uploaded) and its scratch.
struct WitnessBuffers {
    sigma_edge: CudaSlice<u32>,
    _words: [CudaSlice<u32>; 5],
    _sums: [CudaSlice<i64>; 3],
    params: WitnessParams,
}

impl WitnessBuffers {
    fn new(stream: &Arc<CudaStream>, n: usize, succ_weights: u64) -> Result<Self, GpuError> {
        let during = "allocating the witness arrays";
        let words = || stream.alloc_zeros::<u32>(n.max(1)).during(during);
        let sums = || stream.alloc_zeros::<i64>(n.max(1)).during(during);
        let sigma_edge = words()?;
        let w = [words()?, words()?, words()?, words()?, words()?];
        let x = [sums()?, sums()?, sums()?];
        let p32 = |s: &CudaSlice<u32>| s.device_ptr(stream).0;
        let p64 = |s: &CudaSlice<i64>| s.device_ptr(stream).0;
        let params = WitnessParams {
            succ_weights,
            sigma_edge: p32(&sigma_edge),
            pointer: p32(&w[0]),
            next: [p32(&w[1]), p32(&w[2])],
            least: [p32(&w[3]), p32(&w[4])],
            weight: p64(&x[0]),
            sum: [p64(&x[1]), p64(&x[2])],
        };
        Ok(WitnessBuffers {
            sigma_edge,
            _words: w,
            _sums: x,
            params,
        })
    }
}

/// What the device found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundComponents {
    /// Each vertex's representative (`u32::MAX` outside the subset; its own id
    /// `| `[`ALONE`](egsolve_core::solve::engine::ALONE) for a vertex the trims found alone), or
    /// [`LEFT_TO_HOST`](egsolve_core::solve::engine::LEFT_TO_HOST) at the vertices whose
    /// components the kernel left to the host.
    pub representatives: Vec<u32>,
    /// The representative of the component forward–backward found (its pivot), when the
    /// witness kernel ran on it.
    pub giant: Option<u32>,
    /// A member of a cycle of the giant's greedy pointers that the device summed to `>= 0`.
    pub witness: Option<u32>,
}

/// The arena's adjacency on the device, as the engine uploaded it (input order).
#[derive(Debug, Clone, Copy)]
pub struct Adjacency {
    pub succ_offsets: u64,
    /// The successor weights, at the module's weight width.
    pub succ_weights: u64,
    pub succ_targets: u64,
    pub pred_offsets: u64,
    pub pred_sources: u64,
    /// The predecessor edges' weights, at the module's weight width.
    pub pred_weights: u64,
}

/// What one launch did (for the debug log and benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComponentFigures {
    pub sweeps: u32,
    pub colourings: u32,
    pub trimmed: u32,
    /// Vertices of the components forward–backward found (one per try).
    pub giant: u32,
    /// Vertices left to the host.
    pub left: u32,
    /// Forward–backward searches (another pivot after one that found a small component).
    pub tries: u32,
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
    /// Allocated by the first start with σ1's edges.
    witness: Option<WitnessBuffers>,
    succ_weights: u64,
    witness_started: bool,
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
            host_below: LEFT_TO_HOST_BELOW,
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
            witness: None,
            succ_weights: adjacency.succ_weights,
            witness_started: false,
            done,
            watchdog,
            started: false,
            figures: ComponentFigures::default(),
        })
    }

    /// From the next launch on, leave the components of at most `vertices` vertices
    /// pending after the forward–backward search to the host (0: colour them all on the
    /// device).
    pub fn leave_to_host_below(&mut self, vertices: u32) {
        self.params.host_below = vertices;
    }

    /// Uploads `keeps` (one word per vertex: `u32::MAX` outside the subset, `u32::MAX - 1`
    /// for a vertex that keeps every edge, else its one successor) and launches the kernel,
    /// then, given σ1's edges (`sigma_edge`, read at the vertices that keep one successor),
    /// the giant component's greedy witness; returns before they end.
    pub fn start(&mut self, keeps: &[u32], sigma_edge: Option<&[u32]>) -> Result<(), GpuError> {
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
        // Both copies before both launches: a copy queued behind the components kernel
        // would hold the host until the kernel ends (it is meant to run beside the host).
        let witness = match sigma_edge {
            Some(sigma_edge) => self.upload_sigma(sigma_edge)?,
            None => false,
        };
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
        self.witness_started = witness && self.launch_witness()?;
        self.done
            .record(&self.stream)
            .during("recording the components launch")?;
        self.started = true;
        Ok(())
    }

    /// Uploads σ1's edges for the witness kernel (allocating its arrays the first time);
    /// `false` when they do not fit.
    fn upload_sigma(&mut self, sigma_edge: &[u32]) -> Result<bool, GpuError> {
        assert_eq!(sigma_edge.len(), self.n as usize, "one edge per vertex");
        if self.witness.is_none() {
            match WitnessBuffers::new(&self.stream, self.n as usize, self.succ_weights) {
                Ok(buffers) => self.witness = Some(buffers),
                Err(e) => {
                    tracing::warn!("no greedy witness on the device: {e}");
                    return Ok(false);
                }
            }
        }
        let witness = self.witness.as_mut().expect("allocated above");
        let mut guard = self.device.staging_for(std::mem::size_of_val(sigma_edge));
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        upload_into(&self.stream, staging, sigma_edge, &mut witness.sigma_edge)?;
        Ok(true)
    }

    /// Launches the witness kernel after the components (σ1's edges uploaded); whether it
    /// was.
    fn launch_witness(&mut self) -> Result<bool, GpuError> {
        let Some(witness) = self.witness.as_ref() else {
            return Ok(false);
        };
        let per_sm = self
            .kernels
            .witness
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
            .during("reading the witness kernel's occupancy")?
            .max(1);
        let blocks = self.blocks.min(per_sm * self.device.multiprocessors);
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&self.kernels.witness);
        launch.arg(&self.params);
        launch.arg(&witness.params);
        // SAFETY: as for the components kernel, plus the witness arrays (n words or n i64
        // each), σ1's edges (n words, each an edge index < m at the vertices that keep one
        // successor, which are the only ones read) and the arena's weights (m, at this
        // module's width).
        unsafe { launch.launch_cooperative(cfg) }.during("launching the witness kernel")?;
        Ok(true)
    }

    /// Waits for the launches [`DeviceComponents::start`] made and returns each vertex's
    /// representative (`u32::MAX` outside the subset, `LEFT_TO_HOST` where left to the
    /// host) and the giant's witness, or `None` when the kernel ran out of sweeps.
    pub fn finish(&mut self) -> Result<Option<FoundComponents>, GpuError> {
        assert!(self.started, "a launch to finish");
        self.started = false;
        let state: [u32; STATE_WORDS] = finished_state(
            &self.stream,
            &self.done,
            &self.state,
            self.watchdog,
            (
                "waiting for the components kernel",
                "reading the components' state",
            ),
        )?;
        self.figures = ComponentFigures {
            sweeps: state[SWEEPS],
            colourings: state[COLOURINGS],
            trimmed: state[TRIMMED],
            giant: state[GIANT],
            left: state[LEFT],
            tries: state[TRIES],
        };
        if state[FAILED] != 0 {
            return Ok(None);
        }
        let representatives =
            download_staged(&self.device, &self.stream, &self.comp, self.n as usize)?;
        let giant = (self.witness_started && state[GIANT] != 0).then_some(state[PIVOT]);
        let witness = giant.and(state[WITNESS].checked_sub(1));
        Ok(Some(FoundComponents {
            representatives,
            giant,
            witness,
        }))
    }
}
