//! Solving: the answer type ([`Solution`]), the backends behind one entry point ([`solve`]),
//! and what they share (energy arithmetic, cancellation and progress, strategies).
//!
//! Every backend computes the same least energy progress measure (it is unique), then hands
//! it to [`Solution::from_credits`], which derives both players' strategies the same way for
//! all of them. Parity games go through [`solve_game`], which picks the energy backends
//! (on the reduction) or the native parity solver ([`parity`], winners and strategies
//! only). This module does no I/O and never touches tokio or axum.

pub mod accel;
pub mod auto;
pub mod chunked;
pub mod control;
pub mod cpu;
pub mod device;
pub mod energy;
pub mod engine;
pub mod memory;
pub mod parity;
pub mod phases;
pub mod race;
pub mod reference;
pub mod strategy;
pub mod threads;
pub mod worklist;

use std::time::Instant;

use crate::arena::{Arena, Player, VertexId};
use crate::parity::{ParitySummary, ParityView};
pub use control::{Control, Interrupted, Progress, ProgressSnapshot};
pub use device::{DeviceSolver, GpuOptions, VertexOrder};
pub use energy::{BoundOverflow, TOP};
pub use parity::ParityAlgorithm;
pub use phases::Phases;
pub use strategy::NO_MOVE;
pub use threads::Threads;

/// The backends: a closed set, chosen per solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The best available exact backend for this machine and game.
    Auto,
    /// Algorithm 1: the sequential worklist (the reference every other backend must match).
    Reference,
    /// Frontier-based parallel lifting on a rayon pool (all cores); see [`cpu`].
    Cpu,
    /// Algorithm 3 on a CUDA GPU (frontier lifting, round loop on the device).
    Gpu,
    /// The native parity game solver (parity games only; winners and strategies, no
    /// credits); see [`parity`].
    Parity,
}

impl Backend {
    /// Every backend, for help texts and tests.
    pub const ALL: &'static [Backend] = &[
        Backend::Auto,
        Backend::Reference,
        Backend::Cpu,
        Backend::Gpu,
        Backend::Parity,
    ];

    /// The name used on the command line and in the API.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Reference => "reference",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::Parity => "parity",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Backend::ALL.iter().map(|b| b.name()).collect();
                format!(
                    "unknown backend '{s}': expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a solve produced no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// `M` does not fit in 64 bits.
    #[error(transparent)]
    Bound(#[from] BoundOverflow),
    /// Cancelled or out of time.
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    /// The chosen backend cannot run here (e.g. no GPU); the message says why.
    #[error("backend {backend} is unavailable: {reason}")]
    Unavailable {
        /// The backend asked for.
        backend: &'static str,
        /// Why it cannot run.
        reason: String,
    },
    /// An energy backend was asked to solve a parity game whose reduction does not fit in
    /// 64 bits.
    #[error(
        "backend {backend} solves the energy reduction of parity games, and this game's \
         ({priorities} priorities after compression) does not fit in 64 bits; use --backend \
         parity (or auto), which solves it as a parity game (winners and strategies, no credits)"
    )]
    ReductionTooLarge {
        /// The backend asked for.
        backend: &'static str,
        /// Priorities after compression.
        priorities: usize,
    },
    /// The parity backend was asked to solve an energy game.
    #[error(
        "backend parity solves parity games (.gm, or JSON with priorities); this is an energy \
         game: use auto, reference, cpu or gpu"
    )]
    NotAParityGame,
}

/// Figures about one solve.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SolveStats {
    /// Backend that computed the credits.
    pub backend: String,
    /// The algorithm that answered: for energy backends `accelerated-lifting` (auto, and
    /// gpu unless plain; `accelerated-lifting+strategy-improvement` where player 1's
    /// strategy improvement replaced evaluations), `worklist` (reference), `frontier-lifting` (cpu, plain gpu) or
    /// `sweep-lifting` (cpu sweep); for the parity solver the [`ParityAlgorithm`]'s name,
    /// and for its portfolio `auto(...)` with the learners that solved dominions. Stats
    /// stored before this field existed read as empty.
    #[serde(default)]
    pub algorithm: String,
    /// The bound `M`.
    pub bound: u64,
    /// Lifts applied to reach the least progress measure.
    pub lifts: u64,
    /// Rounds (parallel backends) or 0 (worklist).
    pub rounds: u64,
    /// Seconds to compute the credits.
    pub solve_seconds: f64,
    /// Lifts spent on player 1's strategy (the dual game on `W1`).
    pub strategy_lifts: u64,
    /// Seconds to compute both strategies.
    pub strategy_seconds: f64,
    /// Evaluations of player 1's strategies (the accelerated driver; 0 elsewhere).
    pub evaluations: u64,
    /// Seconds per phase.
    pub phases: Phases,
}

impl SolveStats {
    /// The figures of a solve that only lifted, for `seconds`, to a bound of `bound` in
    /// `lifts` lifts and `rounds` rounds.
    pub(crate) fn lifting(bound: u64, lifts: u64, rounds: u64, seconds: f64) -> SolveStats {
        SolveStats {
            bound,
            lifts,
            rounds,
            solve_seconds: seconds,
            phases: Phases {
                lifting: seconds,
                ..Phases::default()
            },
            ..SolveStats::default()
        }
    }
}

/// The answer: per vertex, the least credit (or ⊤) and the winner's strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// Least initial credit per vertex; [`TOP`] where player 1 wins. When
    /// [`Solution::credits_computed`] is false, only who wins: 0 on `W0`, [`TOP`] on `W1`.
    pub credit: Vec<u64>,
    /// The successor chosen by the vertex's owner where the owner wins it (player 0 on `W0`,
    /// player 1 on `W1`); [`NO_MOVE`] elsewhere.
    pub strategy: Vec<VertexId>,
    /// How it was computed.
    pub stats: SolveStats,
    /// Whether `credit` holds the least credits (false: a parity game solved by the parity
    /// solver, which decides winners and strategies only).
    pub credits_computed: bool,
    /// For parity games: how the priorities were prepared (set by [`solve_game`]).
    pub parity: Option<ParitySummary>,
}

impl Solution {
    /// Completes credits computed by a backend with both players' strategies on `threads`
    /// (see [`Solution::from_credits_seeded`], with no seed).
    pub fn from_credits(
        arena: &Arena,
        credit: Vec<u64>,
        stats: SolveStats,
        threads: &Threads,
        control: &Control,
    ) -> Result<Solution, SolveError> {
        let seed = strategy::Seed::none();
        Solution::from_credits_seeded(arena, credit, None, seed, stats, threads, control)
            .map(|(solution, _)| solution)
    }

    /// Completes credits with both players' strategies: player 0's from the credits
    /// ([`strategy::player0`]) unless the backend computed those moves (`player0`, the same
    /// choice; its seconds already in `stats`); player 1's from `seed` by [`strategy::player1`] (the
    /// evaluations' recorded moves where their ranks accept them, else the layered
    /// construction from the σ1 edges the backend already knows), or, where that stops
    /// short, from the dual game ([`strategy::player1_dual`]). Both on `threads`; the choices do
    /// not depend on them. The seconds spent here are added to `stats.strategy_seconds` and
    /// `stats.phases.strategy0` (which may already hold the backend's share) and set
    /// `stats.phases.strategy1`. Returns where player 1's strategy came from.
    pub fn from_credits_seeded(
        arena: &Arena,
        credit: Vec<u64>,
        player0: Option<Vec<VertexId>>,
        seed: strategy::Seed<'_>,
        mut stats: SolveStats,
        threads: &Threads,
        control: &Control,
    ) -> Result<(Solution, strategy::Player1Source), SolveError> {
        let start = Instant::now();
        let mut strategy = match player0 {
            Some(moves) => {
                debug_assert_eq!(moves.len(), arena.vertex_count(), "a move per vertex");
                moves
            }
            None => strategy::player0(arena, &credit, stats.bound, threads),
        };
        let player1_start = Instant::now();
        stats.phases.strategy0 += player1_start.duration_since(start).as_secs_f64();
        let source =
            strategy::certified_strategy(arena, &credit, seed, &mut strategy, threads, control)?;
        stats.strategy_lifts = if source.without_dual_game() {
            0
        } else {
            strategy::player1_dual(arena, &credit, &mut strategy, control)?
        };
        stats.phases.strategy1 = player1_start.elapsed().as_secs_f64();
        stats.strategy_seconds += start.elapsed().as_secs_f64();
        Ok((
            Solution {
                credit,
                strategy,
                stats,
                credits_computed: true,
                parity: None,
            },
            source,
        ))
    }

    /// An answer of winners and strategies without credits: `credit` is 0 on `W0` and
    /// [`TOP`] on `W1`, `strategy` as in [`Solution::strategy`].
    pub fn winners_only(credit: Vec<u64>, strategy: Vec<VertexId>, stats: SolveStats) -> Solution {
        Solution {
            credit,
            strategy,
            stats,
            credits_computed: false,
            parity: None,
        }
    }

    /// Keeps who wins and drops the credits: every finite credit becomes 0, ⊤ stays, and
    /// [`Solution::credits_computed`] is false (the parity solver's shape). On the current
    /// pool, writing only what changes: one pass over 2.2 million credits on one thread
    /// took 2.5–3.2 ms of BRP's 13–14 ms race on the H200 host (session 53).
    pub fn keep_winners_only(&mut self) {
        let to_winner = |chunk: &mut [u64]| {
            for credit in chunk {
                if *credit != TOP && *credit != 0 {
                    *credit = 0;
                }
            }
        };
        if self.credit.len() < threads::PARALLEL_FROM_ITEMS {
            to_winner(&mut self.credit);
        } else {
            chunked::for_each_chunk_mut(&mut self.credit, |_, chunk| to_winner(chunk));
        }
        self.credits_computed = false;
    }

    /// Who wins from `v`.
    pub fn winner(&self, v: VertexId) -> Player {
        if self.credit[v as usize] == TOP {
            Player::One
        } else {
            Player::Zero
        }
    }

    /// `|W0|`.
    pub fn w0_size(&self) -> usize {
        self.tally().0
    }

    /// `|W1|`.
    pub fn w1_size(&self) -> usize {
        self.credit.len() - self.w0_size()
    }

    /// The largest finite credit (0 if `W0` is empty).
    pub fn max_credit(&self) -> u64 {
        self.tally().1
    }

    /// `|W0|` and the largest finite credit (0 if `W0` is empty), in one pass over the
    /// credits on the current pool (2 GB at 10^9 edges: three sequential passes took most
    /// of a second).
    pub fn tally(&self) -> (usize, u64) {
        let credit = &self.credit;
        chunked::fold(
            credit.len(),
            || (0, 0),
            |(w0, max), v| match credit[v] {
                TOP => (w0, max),
                c => (w0 + 1, max.max(c)),
            },
            |(a, m), (b, n)| (a + b, m.max(n)),
        )
    }
}

/// A backend and its settings.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// Which backend computes the credits.
    pub backend: Backend,
    /// Settings of the `cpu` backend.
    pub cpu: cpu::CpuOptions,
    /// Settings of the `gpu` backend.
    pub gpu: GpuOptions,
    /// The GPU backend, where the caller links one (`egsolve_gpu::SOLVER`); without it
    /// [`Backend::Gpu`] is [`SolveError::Unavailable`].
    pub device: Option<&'static dyn DeviceSolver>,
    /// Parity games with [`Backend::Auto`]: also compute the credits of the energy
    /// reduction (through the energy backends), where it fits in 64 bits. By default a
    /// parity game gets its natural answer, winners and strategies from the parity solver;
    /// the reduction's credits are a separate, costlier question.
    pub credits: bool,
    /// The parity solver's algorithm (parity games answered by [`parity`]).
    pub parity_algorithm: ParityAlgorithm,
    /// `auto` races the GPU on parity games of at least this many vertices
    /// ([`race::RACE_FROM_VERTICES`] where the device is warm; the command line, whose
    /// GPU side starts the driver first, races from [`race::FRESH_PROCESS_RACE_FROM`]).
    pub race_from_vertices: usize,
    /// The device's route in `auto`'s race on parity games: the energy reduction (the
    /// default) or the native parity solver ([`race::GpuRoute`]).
    pub race_gpu_route: race::GpuRoute,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            backend: Backend::Auto,
            cpu: cpu::CpuOptions::default(),
            gpu: GpuOptions::default(),
            device: None,
            credits: false,
            parity_algorithm: ParityAlgorithm::default(),
            race_from_vertices: race::RACE_FROM_VERTICES,
            race_gpu_route: race::GpuRoute::from_env(),
        }
    }
}

/// Solves `arena` with `backend` and its default settings.
pub fn solve(arena: &Arena, backend: Backend, control: &Control) -> Result<Solution, SolveError> {
    solve_with(
        arena,
        &SolveOptions {
            backend,
            ..SolveOptions::default()
        },
        control,
    )
}

/// Solves `arena` as `options` say.
pub fn solve_with(
    arena: &Arena,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let mut solution = solve_energy(arena, options, control)?;
    if solution.stats.algorithm.is_empty() {
        // The accelerated solver (auto, gpu) does not name itself; the worklist and the
        // CPU backend do.
        let plain_gpu = options.backend == Backend::Gpu && options.gpu.plain;
        solution.stats.algorithm = if plain_gpu {
            "frontier-lifting"
        } else {
            "accelerated-lifting"
        }
        .into();
    }
    Ok(solution)
}

/// [`solve_with`]'s choice of energy backend.
fn solve_energy(
    arena: &Arena,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    match options.backend {
        Backend::Auto => auto::solve(arena, &options.cpu, control),
        Backend::Reference => reference::solve(arena, control),
        Backend::Cpu => cpu::solve(arena, &options.cpu, control),
        Backend::Gpu => match options.device {
            Some(device) => device.solve(arena, &options.gpu, control),
            None => Err(SolveError::Unavailable {
                backend: "gpu",
                reason: "this program was built without the GPU backend".into(),
            }),
        },
        Backend::Parity => Err(SolveError::NotAParityGame),
    }
}

/// Whether solving a game with `parity` (its priorities, for a parity game) on `backend`
/// runs the native parity solver: when asked for, or with `auto` unless the reduction's
/// `credits` were asked for and fit in 64 bits.
pub fn runs_parity_solver(parity: Option<ParityView<'_>>, backend: Backend, credits: bool) -> bool {
    match parity {
        None => false,
        Some(view) => {
            backend == Backend::Parity
                || (backend == Backend::Auto && !(credits && view.reduction_fits()))
        }
    }
}

/// Solves a game as read: an energy game (`parity` is `None`) with `options.backend`, or a
/// parity game — with `auto`, as a race of the GPU route and the parity solver where
/// [`race::races`] says so; natively with [`parity`] (or on the device, for
/// [`ParityAlgorithm::GpuFixpoint`]) when [`runs_parity_solver`] says so (`auto` without
/// `options.credits`, or `parity`); else through its energy reduction (the
/// arena's weights) with an energy backend. An energy backend asked
/// for a parity game whose reduction does not fit is [`SolveError::ReductionTooLarge`].
pub fn solve_game(
    arena: &Arena,
    parity: Option<ParityView<'_>>,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let Some(view) = parity else {
        return solve_with(arena, options, control);
    };
    let mut solution = if let Some(device) = race::races(arena, view, options) {
        race::solve(arena, view, device, options, control)?
    } else if runs_parity_solver(parity, options.backend, options.credits) {
        solve_parity_natively(arena, view, options, control)?
    } else if view.reduction_fits() {
        solve_with(arena, options, control)?
    } else {
        return Err(SolveError::ReductionTooLarge {
            backend: options.backend.name(),
            priorities: view.summary.compressed_priorities,
        });
    };
    solution.parity = Some(view.summary);
    Ok(solution)
}

/// The native parity solver as `options.parity_algorithm` says: on the CPU ([`parity`]), or
/// for [`ParityAlgorithm::GpuFixpoint`] on the device ([`DeviceSolver::solve_parity`]).
fn solve_parity_natively(
    arena: &Arena,
    view: ParityView<'_>,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let algorithm = options.parity_algorithm;
    if algorithm != ParityAlgorithm::GpuFixpoint {
        return parity::solve(arena, view.priorities, algorithm, &options.cpu, control);
    }
    match options.device {
        Some(device) => device.solve_parity(arena, view.priorities, &options.gpu, control),
        None => Err(SolveError::Unavailable {
            backend: "gpu-fixpoint",
            reason: "this program was built without the GPU backend".into(),
        }),
    }
}

/// [`solve_game`] on a game shared by reference count: where `auto` races, the loser is
/// cancelled but not waited for ([`race::solve_detached`]); everything else as
/// [`solve_game`].
pub fn solve_game_detached<G: race::RacedGame>(
    game: &std::sync::Arc<G>,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let (arena, parity) = (game.arena(), game.parity());
    if let Some(view) = parity {
        if let Some(device) = race::races(arena, view, options) {
            let mut solution = race::solve_detached(game.clone(), device, options, control)?;
            solution.parity = Some(view.summary);
            return Ok(solution);
        }
    }
    solve_game(arena, parity, options, control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winners_only_keeps_who_wins_on_every_path() {
        for n in [0, 7, threads::PARALLEL_FROM_ITEMS + 12_345] {
            let credit: Vec<u64> = (0..n as u64)
                .map(|i| match i % 5 {
                    0 => TOP,
                    1 => 0,
                    _ => i * 7919 % 100_003,
                })
                .collect();
            let mut solution = Solution {
                strategy: vec![NO_MOVE; n],
                credit: credit.clone(),
                stats: SolveStats::default(),
                credits_computed: true,
                parity: None,
            };
            solution.keep_winners_only();
            assert!(!solution.credits_computed);
            for (before, after) in credit.iter().zip(&solution.credit) {
                let expected = if *before == TOP { TOP } else { 0 };
                assert_eq!(*after, expected, "credit {before}");
            }
        }
    }

    #[test]
    fn the_tally_counts_w0_and_its_largest_credit_across_chunks() {
        let credit: Vec<u64> = (0..300_000u64)
            .map(|v| {
                if v % 3 == 0 {
                    TOP
                } else {
                    (v * 7919) % 100_003
                }
            })
            .collect();
        let w0 = credit.iter().filter(|&&c| c != TOP).count();
        let max = credit.iter().copied().filter(|&c| c != TOP).max().unwrap();
        let solution = Solution {
            strategy: vec![NO_MOVE; credit.len()],
            credit,
            stats: SolveStats::default(),
            credits_computed: true,
            parity: None,
        };
        assert_eq!(solution.tally(), (w0, max));
        assert_eq!(solution.w1_size(), 100_000);
        let empty = Solution {
            credit: vec![TOP; 5],
            ..solution
        };
        assert_eq!(empty.tally(), (0, 0));
    }
}
