//! Backward reachability, player 1's attractor to ⊤ and Bellman–Ford of an evaluation's
//! graph on the device (`kernels/evaluate.cu`), the host's `graph::reach`,
//! `graph::attractor::attract_top` and `accel::relax` where the arena already is: the host
//! uploads the graph's words (what each vertex keeps, as for the [`super::components`]), one
//! byte per vertex (the sources, or each vertex's class in the relaxation) and, for
//! Bellman–Ford, σ1's edges; one cooperative launch runs the frontier sweeps to the
//! fixpoint, and the host downloads one byte (reached) or one `u64` (credit) per vertex. The
//! host then builds no copy of the graph's predecessors.
//!
//! The attractor needs no upload: it reads the values the last lifting run left on the
//! device and the reachability launch's output still there (every vertex not reached is at
//! ⊤ after the evaluation's first step), so it runs only right after a reachability launch
//! ([`DeviceEvaluation::attract_top`]). The host downloads its vertices' count first and
//! their layers (a word per vertex) only when it moved any.
//!
//! Each launch gives up after [`MAX_SWEEPS`] sweeps (a sweep per step of the longest
//! shortest path, or per layer: long chains), and the host computes the answer itself
//! (`None`).

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};

use crate::compile::{Kernels, LiftKernels};
use crate::components::Adjacency;
use crate::error::{DuringExt, GpuError};
use crate::transfer::{download_staged, finished_state, upload_into};
use egsolve_core::solve::engine::EngineAttracted;

/// Sweeps a launch may run before it leaves the answer to the host. A sweep over a 10^7-edge
/// game whose frontier is small reads a stamp per vertex (a few microseconds on an H100).
pub const MAX_SWEEPS: u32 = 1 << 13;

/// Threads per block (the kernels' `__launch_bounds__`).
const BLOCK: u32 = 512;

/// State words (`kernels/evaluate.cu`).
const STATE_WORDS: usize = 16;
const FAILED: usize = 8;
const SWEEPS: usize = 9;
const MOVED: usize = 10;

/// The kernels' parameters; the layout matches `struct EvaluationParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct EvaluationParams {
    pred_offsets: u64,
    pred_sources: u64,
    pred_weights: u64,
    succ_weights: u64,
    keep: u64,
    sigma_edge: u64,
    flag: u64,
    credit: u64,
    stamp: u64,
    state: u64,
    bound: u64,
    n: u32,
    max_sweeps: u32,
    succ_offsets: u64,
    succ_targets: u64,
    values: u64,
    owners: u64,
    open: u64,
    n0: u32,
}

// SAFETY: plain `repr(C)` data (device addresses and integers) with the C struct's layout.
unsafe impl DeviceRepr for EvaluationParams {}

/// Where the lifting kernels keep what the attractor reads besides the adjacency.
#[derive(Debug, Clone, Copy)]
pub struct LiftedValues {
    /// The energies, at the module's energy width (n).
    pub values: u64,
    /// Each vertex's player (n bytes), or 0: player 0 owns exactly the vertices below `n0`.
    pub owners: u64,
    pub n0: u32,
}

/// The evaluation kernels' buffers on one engine's stream.
pub struct DeviceEvaluation {
    kernels: Arc<LiftKernels>,
    device: Arc<Kernels>,
    stream: Arc<CudaStream>,
    n: u32,
    keep: CudaSlice<u32>,
    sigma_edge: CudaSlice<u32>,
    flag: CudaSlice<u8>,
    credit: CudaSlice<u64>,
    /// The sweep whose frontier each vertex is in; the attractor's layers.
    stamp: CudaSlice<u32>,
    _open: CudaSlice<u32>,
    state: CudaSlice<u32>,
    params: EvaluationParams,
    done: CudaEvent,
    watchdog: Duration,
    /// Whether `flag` holds the last reachability launch's answer (the attractor's input).
    reached: bool,
    /// Sweeps the last launch ran.
    pub sweeps: u32,
}

impl DeviceEvaluation {
    /// Allocates the kernels' arrays (25 bytes per vertex) on `stream`; `bound` is the
    /// engine's ⊤ bound.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kernels: Arc<LiftKernels>,
        device: Arc<Kernels>,
        stream: Arc<CudaStream>,
        adjacency: Adjacency,
        lifted: LiftedValues,
        n: u32,
        bound: u64,
        watchdog: Duration,
    ) -> Result<DeviceEvaluation, GpuError> {
        let during = "allocating the evaluation's arrays";
        let len = (n as usize).max(1);
        let keep = stream.alloc_zeros::<u32>(len).during(during)?;
        let sigma_edge = stream.alloc_zeros::<u32>(len).during(during)?;
        let flag = stream.alloc_zeros::<u8>(len).during(during)?;
        let credit = stream.alloc_zeros::<u64>(len).during(during)?;
        let stamp = stream.alloc_zeros::<u32>(len).during(during)?;
        let open = stream.alloc_zeros::<u32>(len).during(during)?;
        let state = stream.alloc_zeros::<u32>(STATE_WORDS).during(during)?;
        let p32 = |s: &CudaSlice<u32>| s.device_ptr(&stream).0;
        let params = EvaluationParams {
            pred_offsets: adjacency.pred_offsets,
            pred_sources: adjacency.pred_sources,
            pred_weights: adjacency.pred_weights,
            succ_weights: adjacency.succ_weights,
            keep: p32(&keep),
            sigma_edge: p32(&sigma_edge),
            flag: flag.device_ptr(&stream).0,
            credit: credit.device_ptr(&stream).0,
            stamp: p32(&stamp),
            state: p32(&state),
            bound,
            n,
            max_sweeps: MAX_SWEEPS,
            succ_offsets: adjacency.succ_offsets,
            succ_targets: adjacency.succ_targets,
            values: lifted.values,
            owners: lifted.owners,
            open: p32(&open),
            n0: lifted.n0,
        };
        let done = device
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .during("creating an event")?;
        Ok(DeviceEvaluation {
            kernels,
            device,
            stream,
            n,
            keep,
            sigma_edge,
            flag,
            credit,
            stamp,
            _open: open,
            state,
            params,
            done,
            watchdog,
            reached: false,
            sweeps: 0,
        })
    }

    /// Whether each vertex has a path, in the graph whose words are `keeps`, to a vertex with
    /// `sources[v] != 0` (one byte per vertex, 1 where reached), or `None` when the kernel
    /// ran out of sweeps.
    pub fn reaching(&mut self, keeps: &[u32], sources: &[u8]) -> Result<Option<Vec<u8>>, GpuError> {
        assert_eq!(sources.len(), self.n as usize, "one byte per vertex");
        self.reached = false;
        self.upload(keeps, None, sources)?;
        let kernel = self.kernels.reach.clone();
        if self.run(&kernel)?.is_none() {
            return Ok(None);
        }
        self.reached = true;
        let flags = download_staged(&self.device, &self.stream, &self.flag, self.n as usize)?;
        Ok(Some(flags))
    }

    /// The least credits to reach a pinned vertex in the graph whose words are `keeps`
    /// (σ1's edges `sigma_edge`, read at open vertices), each vertex's `class` one of
    /// `accel::{CLOSED, OPEN, PINNED}`, or `None` when the kernel ran out of sweeps.
    pub fn credits_to_pinned(
        &mut self,
        keeps: &[u32],
        sigma_edge: &[u32],
        class: &[u8],
    ) -> Result<Option<Vec<u64>>, GpuError> {
        assert_eq!(class.len(), self.n as usize, "one byte per vertex");
        self.reached = false;
        self.upload(keeps, Some(sigma_edge), class)?;
        let kernel = self.kernels.credits.clone();
        if self.run(&kernel)?.is_none() {
            return Ok(None);
        }
        let n = self.n as usize;
        Ok(Some(download_staged(
            &self.device,
            &self.stream,
            &self.credit,
            n,
        )?))
    }

    /// Player 1's attractor to ⊤ after the evaluation's first step, from the values the
    /// last lifting run left on the device (which must equal the host's when that step
    /// began) with every vertex that the last [`DeviceEvaluation::reaching`] did not reach at
    /// ⊤: the layers of `graph::attractor::attract_top`. `None` when no reachability launch
    /// answered since the last Bellman–Ford (its flags are the input) or the layers ran out
    /// of sweeps.
    pub fn attract_top(&mut self) -> Result<Option<EngineAttracted>, GpuError> {
        if !self.reached {
            return Ok(None);
        }
        let kernel = self.kernels.attract.clone();
        let Some(state) = self.run(&kernel)? else {
            return Ok(None);
        };
        let moved = state[MOVED] as usize;
        if moved == 0 {
            return Ok(Some(EngineAttracted {
                moved,
                top_layers: 1,
                layer: Vec::new(),
            }));
        }
        let layer = download_staged(&self.device, &self.stream, &self.stamp, self.n as usize)?;
        Ok(Some(EngineAttracted {
            moved,
            top_layers: state[SWEEPS],
            layer,
        }))
    }

    /// Copies the words, σ1's edges (if given) and the bytes in.
    fn upload(
        &mut self,
        keeps: &[u32],
        sigma_edge: Option<&[u32]>,
        flags: &[u8],
    ) -> Result<(), GpuError> {
        assert_eq!(keeps.len(), self.n as usize, "one word per vertex");
        let mut guard = self.device.staging_for(std::mem::size_of_val(keeps));
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        upload_into(&self.stream, staging, keeps, &mut self.keep)?;
        if let Some(sigma_edge) = sigma_edge {
            assert_eq!(sigma_edge.len(), self.n as usize, "one edge per vertex");
            upload_into(&self.stream, staging, sigma_edge, &mut self.sigma_edge)?;
        }
        upload_into(&self.stream, staging, flags, &mut self.flag)
    }

    /// Launches `kernel` over the uploaded arrays and waits for it (under the watchdog); its
    /// state words if it reached its fixpoint.
    fn run(&mut self, kernel: &CudaFunction) -> Result<Option<[u32; STATE_WORDS]>, GpuError> {
        self.stream
            .memset_zeros(&mut self.state)
            .during("clearing the evaluation's state")?;
        let per_sm = kernel
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
            .during("reading the evaluation kernel's occupancy")?
            .max(1);
        let blocks = (per_sm * self.device.multiprocessors).min(self.n.div_ceil(BLOCK).max(1));
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(kernel);
        launch.arg(&self.params);
        // SAFETY: every pointer in `params` is a live allocation with the lengths the kernels
        // assume (the engine's offsets n+1, targets, sources and weights m; its energies and
        // owners n, or no owners; keep, σ1's edges, flags, credits, stamps and open counts n;
        // state 16 words), the words' targets and the arena's ids are < n, and σ1's edges
        // (read at open vertices only) are edge indices < m. `blocks` is
        // at most the co-resident grid (occupancy × SMs), which the cooperative launch checks.
        unsafe { launch.launch_cooperative(cfg) }.during("launching an evaluation kernel")?;
        self.done
            .record(&self.stream)
            .during("recording an evaluation launch")?;
        let state: [u32; STATE_WORDS] = finished_state(
            &self.stream,
            &self.done,
            &self.state,
            self.watchdog,
            (
                "waiting for an evaluation kernel",
                "reading the evaluation's state",
            ),
        )?;
        self.sweeps = state[SWEEPS];
        Ok((state[FAILED] == 0).then_some(state))
    }
}
