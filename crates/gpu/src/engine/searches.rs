//! The evaluations' graph searches on the device that holds the game: player 0's moves
//! at the fixpoint, σ1 for the next evaluation, the components, reachability, the
//! attractor to ⊤ and Bellman–Ford, each answering as the host's own would
//! (`egsolve_core::solve::accel`).

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use crate::components::{Adjacency, ComponentFigures, DeviceComponents, FoundComponents};
use crate::error::{DuringExt, GpuError};
use crate::evaluation::{DeviceEvaluation, LiftedValues};
use crate::transfer::{download_staged, download_staged_into};
use egsolve_core::arena::VertexId;
use egsolve_core::solve::engine::EngineAttracted;
use egsolve_core::solve::strategy::RecordedMoves;

use super::{BLOCK, GpuEngine, GpuTimings};

impl GpuEngine {
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

    /// Player 1's recorded moves at the least fixpoint, classified from the values and the
    /// topping record the last lifting run left on the device: `strategy::RecordedMoves`
    /// vertex for vertex as the host classifies the record, for a solve that never
    /// evaluated. `None` when no record was started (or the vertices are renumbered). Only
    /// the counts come back when a vertex is broken; else the moves (a word per vertex) and
    /// the roots. The frontier buffers are the kernel's output: the next lifting run resets
    /// them. The moves come back into `room` where it has space for `n` words (mapped
    /// ahead, `crate::prefault`).
    pub fn recorded_moves(&mut self, room: Vec<u32>) -> Result<Option<RecordedMoves>, GpuError> {
        if self.numbering.is_some() || self.params.top_record == 0 {
            return Ok(None);
        }
        let n = self.n as usize;
        let start = std::time::Instant::now();
        let mut counts = self
            .stream
            .alloc_zeros::<u32>(3)
            .during("allocating the recorded moves' counts")?;
        let cfg = LaunchConfig {
            grid_dim: (self.n.div_ceil(BLOCK).clamp(1, 1 << 16), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let kernel = self.kernels.recorded_moves.clone();
        let (moves, roots) = (self.params.frontier0, self.params.frontier1);
        let mut launch = self.stream.launch_builder(&kernel);
        launch.arg(&self.params);
        launch.arg(&moves);
        launch.arg(&roots);
        launch.arg(&mut counts);
        // SAFETY: `params` holds live allocations of this engine (offsets n+1, adjacency m,
        // credits, owners and the record n); `moves` and `roots` are the two frontiers, n
        // words each: the kernel writes moves[v] for v < n and at most one root per vertex;
        // `counts` holds its 3 words.
        unsafe { launch.launch(cfg) }.during("launching the recorded moves kernel")?;
        let counts = self
            .stream
            .clone_dtoh(&counts)
            .during("downloading the recorded moves' counts")?;
        let (roots, broken, lifted) = (counts[0] as usize, counts[1] > 0, counts[2] > 0);
        if broken {
            return Ok(Some(RecordedMoves {
                broken,
                lifted,
                ..RecordedMoves::default()
            }));
        }
        let classified = start.elapsed().as_secs_f64();
        let prefaulted = room.capacity() >= n;
        let moves = download_staged_into(&self.device, &self.stream, &self.frontier0, n, room)?;
        let downloaded = start.elapsed().as_secs_f64();
        let roots = if roots == 0 {
            Vec::new()
        } else {
            self.stream
                .clone_dtoh(&self.frontier1.slice(..roots.min(n)))
                .during("downloading the recorded moves' roots")?
        };
        // Where a slow player 1's strategy spends its time (the classifying kernel and its
        // counts, the moves' copy, the roots' copy): the host's pass is timed by the driver.
        tracing::debug!(
            classified,
            moves = downloaded - classified,
            roots = start.elapsed().as_secs_f64() - downloaded,
            prefaulted,
            "gpu: recorded moves"
        );
        Ok(Some(RecordedMoves {
            moves,
            roots,
            broken,
            lifted,
        }))
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
        Ok(Some(download_staged(
            &self.device,
            &self.stream,
            &self.frontier0,
            n,
        )?))
    }

    /// Starts the strongly connected components of an evaluation's graph on the device
    /// (see [`crate::components`]): `keeps` has one word per vertex in input order; given
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
    /// default is [`crate::components::LEFT_TO_HOST_BELOW`]).
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
    /// [`crate::evaluation`]): whether each vertex (input order) has a path, in the graph
    /// whose words are `keeps`, to a vertex with `sources[v] != 0`. `None` when the device
    /// leaves it to the host (renumbered vertices, no room, out of sweeps).
    pub fn reaching(&mut self, keeps: &[u32], sources: &[u8]) -> Result<Option<Vec<u8>>, GpuError> {
        match self.evaluation() {
            Some(evaluation) => evaluation.reaching(keeps, sources),
            None => Ok(None),
        }
    }

    /// Player 1's attractor to ⊤ after an evaluation's first step on the device (see
    /// [`crate::evaluation`]): from the values the last lifting run left here, with every
    /// vertex the last [`GpuEngine::reaching`] did not reach at ⊤. `None` when the device
    /// leaves it to the host (no reachability answered just before, out of sweeps).
    pub fn attract_top(&mut self) -> Result<Option<EngineAttracted>, GpuError> {
        match self.evaluation() {
            Some(evaluation) => evaluation.attract_top(),
            None => Ok(None),
        }
    }

    /// The least credits to reach a pinned vertex in an evaluation's graph on the device
    /// (see [`crate::evaluation`]), or `None` when the device leaves them to the host.
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
