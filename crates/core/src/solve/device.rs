//! What the solve knows of the GPU backend, which lives in the `egsolve-gpu` crate: its
//! settings ([`GpuOptions`], [`VertexOrder`]), which the command line and the service set,
//! and the [`DeviceSolver`] through which [`super::solve_with`] (energy games) and
//! [`super::solve_game`] (parity games natively, [`DeviceSolver::solve_parity`]) reach it. This crate
//! depends on no GPU driver: a caller that links the GPU crate hands its solver in
//! [`super::SolveOptions::device`]; without one, `--backend gpu` is unavailable.

use super::{Control, Solution, SolveError};
use crate::arena::Arena;

/// A backend that solves on a device (the GPU crate's): the answer of `--backend gpu`.
pub trait DeviceSolver: std::fmt::Debug + Send + Sync {
    /// Solves `arena` as `options` say, with both players' strategies, or says why it
    /// cannot ([`SolveError::Unavailable`] where no device or driver is).
    fn solve(
        &self,
        arena: &Arena,
        options: &GpuOptions,
        control: &Control,
    ) -> Result<Solution, SolveError>;

    /// Solves the parity game `arena` with compressed `priorities` natively on the device
    /// (any number of priorities; winners and both players' strategies, no credits):
    /// [`super::ParityAlgorithm::GpuFixpoint`]. A device without a native parity solver
    /// says so.
    fn solve_parity(
        &self,
        arena: &Arena,
        priorities: &[u32],
        options: &GpuOptions,
        control: &Control,
    ) -> Result<Solution, SolveError> {
        let _ = (arena, priorities, options, control);
        Err(SolveError::Unavailable {
            backend: "gpu-fixpoint",
            reason: "this device solves energy games only".into(),
        })
    }

    /// Whether a device is there to solve on (a driver, a device, the kernels' compiler),
    /// found without starting a solve; `auto` races the device only when it answers yes.
    fn available(&self) -> bool;
}

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
    /// = `egsolve_gpu::lift::LIFT_PERCENT`. `Some(0)`: the driver's own lift budgets instead
    /// (as on the CPU: `2n` lifts first, then at least doubling).
    #[serde(default)]
    pub lift_percent: Option<u32>,
    /// Accelerated driver: the evaluations' strongly connected components on the device on
    /// games of at least this many vertices (`None` = `egsolve_gpu::lift::DEVICE_COMPONENTS_FROM`;
    /// `Some(0)`: always; `Some(u64::MAX)`: never, the host computes them as `auto` does).
    #[serde(default)]
    pub device_components_from: Option<u64>,
    /// Winners only: the answer's credits are read as winners before the device route
    /// returns ([`Solution::keep_winners_only`], on the pool its host work ran on, warm
    /// from the strategies), as `auto`'s race asks. Never part of a job's options.
    #[serde(skip)]
    pub winners_only: bool,
    /// The solve races a CPU side (`auto`'s race sets it): its host passes run on the
    /// cores that side leaves (the GPU crate's race pool), so the two sides' threads do not
    /// outnumber the cores. Never part of a job's options.
    #[serde(skip)]
    pub beside_race: bool,
}

/// How the device numbers the vertices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VertexOrder {
    /// Player-0 vertices first (the paper's layout); the kernels tell the players apart
    /// by id. Renumbering costs two random gathers per edge on the host (on the H100
    /// machine's 16 cores: 22–60 ms for 10^7 edges, 243–358 ms for 10^8) and the credits
    /// are mapped back after each download; full rounds run faster on the device (by 11–43 %
    /// at average degree 4, within 5 % at 16), whole solves by at most 2 ms.
    PlayersFirst,
    /// The input's order (the default); the kernels read each vertex's player from a byte
    /// array. No host-side renumbering, so a solve's end-to-end time is mostly the copies
    /// (session 4's benchmarks, in git history under notes/history).
    #[default]
    Input,
}

impl std::str::FromStr for VertexOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<VertexOrder, String> {
        match s {
            "input" => Ok(VertexOrder::Input),
            "players-first" => Ok(VertexOrder::PlayersFirst),
            _ => Err(format!(
                "unknown vertex order '{s}': expected input or players-first"
            )),
        }
    }
}
