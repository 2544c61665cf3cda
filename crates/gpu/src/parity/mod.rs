//! A native parity game solver on the GPU for any number of priorities (`--parity-algorithm
//! gpu-fixpoint`):
//! fixpoint iteration with distractions and freezing (van Dijk, Rubbens, GandALF 2019, as
//! the CPU's `egsolve_core::solve::parity::fixpoint` and Oink's `fpi`), its whole loop in
//! one cooperative launch (`kernels/parity.cu`).
//!
//! Why fixpoint iteration: a round is one data-parallel pass over one priority's vertices
//! (each reads only its successors' current winners), the state is a byte and a word per
//! vertex, and the loop's control is a single "did anything change" flag per pass, which
//! every thread reads after the same grid barrier: the device never waits for the host.
//! Zielonka or tangle learning on device attractors need a recursion stack and many
//! attractor computations of unknown length steered from outside. The price is measured
//! and known: fixpoint iteration restarts the lower levels whenever a level gains
//! distractions, and on random games that is millions of restarts unless winner-controlled
//! winning cycles are removed first (Oink's `fpi` with `--no-wcwc` on a 1,000-vertex random
//! game of 100 priorities: 6.4 M iterations, 4.4 s; with Oink's preprocessing, 892). On
//! the H200 this solver certifies every shared model-checking game in one to three restarts
//! but answers no random game of 100 priorities (10^4–10^6 vertices) within 8 s, so `auto`
//! does not race it (BENCHMARKS.md §7). What would: remove winner-controlled winning cycles
//! first (an SCC search per priority, which the device's components kernel could run), or
//! Zielonka on device attractors (Oink's `zlk` after that preprocessing solves the 10^6
//! vertex game in 3 iterations, 13 ms).
//!
//! One refinement over the paper's loop: a level that gained distractions is evaluated
//! again, with the lower levels as they are, until a pass changes nothing, before the lower
//! levels restart. The lower levels' stale values only under-approximate the opponent's
//! winning vertices (monotonicity), so every distraction found this way is one the paper's
//! loop would find, and a restart is paid once per level's fixpoint instead of per pass.
//!
//! The host's part ([`solve_on`]) lays the game out ([`FixpointLayout`]), runs a
//! [`FixpointMachine`] launch by launch (checking the solve's control in between) and turns
//! the final states into winners and both players' strategies (each vertex's owner keeps
//! the successor that won it in its last evaluation, as the CPU solver and Oink do).
//! [`host::HostFixpoint`] runs the kernel's passes on the CPU, so that this logic is tested
//! without a GPU; [`device::DeviceFixpoint`] runs them on the device.

pub mod device;
pub mod host;

use std::time::Instant;

use egsolve_core::arena::Arena;
use egsolve_core::solve::parity::graph::Buckets;
use egsolve_core::solve::{Control, NO_MOVE, Solution, SolveError, SolveStats, TOP};

use crate::error::GpuSolveError;

/// Status bit: the parity of the vertex's priority (the player it is won by unless it is a
/// distraction).
pub const PARITY: u8 = 1;
/// Status bit: the vertex is a distraction (won by the opponent of its priority's parity).
pub const DISTRACTION: u8 = 2;
/// Status bit: the vertex's owner is player 1.
pub const OWNER: u8 = 4;

/// The game as the kernel reads it besides the arena's CSR: the vertices by priority, where
/// each level starts, and each vertex's initial status byte.
#[derive(Debug, Clone)]
pub struct FixpointLayout {
    /// Vertices by increasing compressed priority.
    pub order: Vec<u32>,
    /// Where each level starts in `order` (levels + 1 entries).
    pub level_start: Vec<u32>,
    /// [`PARITY`] and [`OWNER`] bits per vertex.
    pub status: Vec<u8>,
}

impl FixpointLayout {
    /// The layout of `arena` with one compressed priority per vertex in `priorities`.
    pub fn new(arena: &Arena, priorities: &[u32]) -> FixpointLayout {
        let buckets = Buckets::new(priorities);
        let status = priorities
            .iter()
            .zip(arena.owners())
            .map(|(&p, &owner)| (p % 2) as u8 | if owner as u8 == 1 { OWNER } else { 0 })
            .collect();
        FixpointLayout {
            order: buckets.order,
            level_start: buckets.start,
            status,
        }
    }

    /// The number of levels (priorities).
    pub fn levels(&self) -> u32 {
        (self.level_start.len() - 1) as u32
    }
}

/// Where a run of the loop stands after a launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// The fixpoint is reached.
    pub done: bool,
    /// Restarts (a level's fixpoint gained distractions and the lower levels restarted).
    pub restarts: u64,
    /// Passes (level evaluations and resets) so far.
    pub passes: u64,
}

/// What runs the kernel's passes: the device, or the CPU mirror.
pub trait FixpointMachine {
    /// Runs passes until the fixpoint or the launch's time is up.
    fn run(&mut self) -> Result<Progress, GpuSolveError>;
    /// The final status bytes and strategy words (by vertex).
    fn finish(self) -> Result<(Vec<u8>, Vec<u32>), GpuSolveError>;
}

/// Solves the parity game `arena` with compressed `priorities` on the first GPU (or the
/// one `device` names): winners and both players' strategies, no credits.
pub fn solve(
    arena: &Arena,
    priorities: &[u32],
    device: Option<usize>,
    control: &Control,
) -> Result<Solution, SolveError> {
    let start = Instant::now();
    check_sizes(arena, priorities)?;
    let layout = FixpointLayout::new(arena, priorities);
    let machine = device::DeviceFixpoint::upload(arena, &layout, device)?;
    let mut solution = solve_on(&layout, machine, control)?;
    solution.stats.backend = "gpu".into();
    solution.stats.solve_seconds = start.elapsed().as_secs_f64();
    Ok(solution)
}

/// The sizes the kernel's 32-bit indices take.
pub fn check_sizes(arena: &Arena, priorities: &[u32]) -> Result<(), SolveError> {
    let unavailable = |reason: String| SolveError::Unavailable {
        backend: "gpu-fixpoint",
        reason,
    };
    if priorities.len() != arena.vertex_count() {
        return Err(unavailable(format!(
            "{} priorities were given for {} vertices",
            priorities.len(),
            arena.vertex_count()
        )));
    }
    if arena.vertex_count() as u64 >= u32::MAX as u64 / 2 {
        return Err(unavailable(format!("{} vertices", arena.vertex_count())));
    }
    Ok(())
}

/// Runs `machine` on `layout` to the fixpoint, checking `control` between launches, and
/// reads the answer: winners (0 on `W0`, ⊤ on `W1`) and the winners' moves.
pub fn solve_on<M: FixpointMachine>(
    layout: &FixpointLayout,
    mut machine: M,
    control: &Control,
) -> Result<Solution, SolveError> {
    let start = Instant::now();
    let progress = loop {
        control.checkpoint()?;
        let progress = machine.run()?;
        control
            .progress()
            .publish(progress.restarts, 0, progress.passes);
        tracing::debug!(
            restarts = progress.restarts,
            passes = progress.passes,
            seconds = start.elapsed().as_secs_f64(),
            "gpu-fixpoint: launch"
        );
        if progress.done {
            break progress;
        }
    };
    let (status, moves) = machine.finish()?;
    debug_assert_eq!(status.len(), layout.status.len());
    let credit = status
        .iter()
        .map(|&s| if winner(s) == 0 { 0 } else { TOP })
        .collect();
    let strategy = status
        .iter()
        .zip(moves)
        .map(|(&s, m)| if winner(s) == owner(s) { m } else { NO_MOVE })
        .collect();
    let stats = SolveStats {
        backend: "gpu".into(),
        algorithm: "gpu-fixpoint".into(),
        rounds: progress.restarts,
        solve_seconds: start.elapsed().as_secs_f64(),
        ..SolveStats::default()
    };
    Ok(Solution::winners_only(credit, strategy, stats))
}

/// The current winner in a status byte.
#[inline]
pub fn winner(status: u8) -> u8 {
    (status ^ (status >> 1)) & 1
}

/// The owner in a status byte.
#[inline]
pub fn owner(status: u8) -> u8 {
    u8::from(status & OWNER != 0)
}
