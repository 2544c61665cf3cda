//! The native parity game solver (`--backend parity`, and `auto` for parity games unless
//! the reduction's credits are asked for): who wins each vertex of a max-parity game, and
//! positional winning strategies for both players. Credits are not computed (the answer's
//! `credit` is 0 on `W0` and ⊤ on `W1`, and [`Solution::credits_computed`] is false).
//!
//! Every algorithm runs on the arena as it is (no copy, no renumbering: [`graph`]) with the
//! compressed priorities ([`crate::parity::compress`]); [`ParityAlgorithm`] chooses one:
//! - [`zielonka`]: Zielonka's recursive algorithm on an explicit stack, with the
//!   refinements that make it fast in practice (as in Oink's `zlk`): attractors with
//!   successor counters in one atomic word per vertex ([`attractor`]), heads taken down to
//!   the next parity inversion, no second recursion when the opponent's attractor takes
//!   nothing. The reference the others are tested against; exponential on the lower-bound
//!   families.
//! - [`tangle`]: tangle learning (van Dijk, CAV 2018) and recursive tangle learning (van
//!   Dijk, GandALF 2019).
//! - [`portfolio`]: the two tangle learners as independent searches (`auto`, the default),
//!   after the winner-controlled winning cycles ([`controlled`]),
//!   racing on two threads when more than one is allowed, time-sliced on one otherwise:
//!   about the better of the two on every game.
//! - [`promotion`]: priority promotion (Benerecetti, Dell'Erba, Mogavero, CAV 2016).
//! - [`fixpoint`]: fixpoint iteration with distractions (van Dijk, Rubbens, GandALF 2019),
//!   each priority's evaluation a parallel loop on large games.
//! - `gpu-fixpoint`: the same on the GPU ([`crate::solve::DeviceSolver::solve_parity`]),
//!   which [`crate::solve::solve_game`] hands to the device; this module cannot run it.
//!
//! [`pace`] is how each of them checks the solve's [`Control`] (at least once per
//! decomposition, promotion search or round) and publishes progress.
//!
//! Zielonka's attractors, fixpoint iteration's rounds and the portfolio's first step (the
//! two players' winner-controlled cycles side by side, then their attractors) run in
//! parallel on a per-solve rayon pool when the game has at least [`PARALLEL_FROM_VERTICES`]
//! vertices and more than one thread is allowed, and then only for rounds of at least
//! [`PARALLEL_ROUND_FROM`] vertices (smaller rounds, and smaller games, stay sequential: a
//! pool and its synchronisation cost more than they save there). The portfolio uses a
//! second thread for its race (after [`ParityOptions::race_after`], at once on large
//! games); the other algorithms are sequential.
//! The winners never depend on the thread count or the timing; strategies may (parallel
//! claims choose among equally valid moves, and in the portfolio the timing decides which
//! learner answers).

mod attractor;
mod controlled;
mod induced;
pub use attractor::Rounds;
pub mod fixpoint;
pub mod graph;
pub mod pace;
pub mod portfolio;
pub mod promotion;
mod state;
pub mod tangle;
mod zielonka;

use std::time::{Duration, Instant};

use super::cpu::CpuOptions;
use super::{Control, NO_MOVE, Solution, SolveError, SolveStats, TOP};
use crate::arena::{Arena, VertexId};
use graph::Graph;
use pace::{Pacer, Stop};
use zielonka::Zielonka;

/// Games with at least this many vertices get a thread pool (when threads are allowed).
pub const PARALLEL_FROM_VERTICES: usize = 1 << 16;
/// Attractor and fixpoint rounds with at least this many vertices run in parallel.
pub const PARALLEL_ROUND_FROM: usize = 1 << 11;

/// The parity game algorithms: a closed set, chosen per solve (`--parity-algorithm`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ParityAlgorithm {
    /// The portfolio of tangle learning and recursive tangle learning ([`portfolio`]).
    #[default]
    Auto,
    /// Zielonka's recursive algorithm with parallel attractors (the reference).
    Zielonka,
    /// Tangle learning ([`tangle`], flat).
    TangleLearning,
    /// Recursive tangle learning ([`tangle`], recursive).
    RecursiveTangleLearning,
    /// Priority promotion ([`promotion`]).
    PriorityPromotion,
    /// Fixpoint iteration with distractions, parallel rounds ([`fixpoint`]).
    FixpointIteration,
    /// Fixpoint iteration on the GPU ([`crate::solve::DeviceSolver::solve_parity`]).
    GpuFixpoint,
}

impl ParityAlgorithm {
    /// Every algorithm this module runs (on the CPU), for tests and benches.
    pub const ALL: [ParityAlgorithm; 6] = [
        ParityAlgorithm::Auto,
        ParityAlgorithm::Zielonka,
        ParityAlgorithm::TangleLearning,
        ParityAlgorithm::RecursiveTangleLearning,
        ParityAlgorithm::PriorityPromotion,
        ParityAlgorithm::FixpointIteration,
    ];

    /// Every algorithm a solve may ask for: [`ParityAlgorithm::ALL`] and the device's
    /// [`ParityAlgorithm::GpuFixpoint`], for help texts and parsing.
    pub const SELECTABLE: [ParityAlgorithm; 7] = [
        ParityAlgorithm::Auto,
        ParityAlgorithm::Zielonka,
        ParityAlgorithm::TangleLearning,
        ParityAlgorithm::RecursiveTangleLearning,
        ParityAlgorithm::PriorityPromotion,
        ParityAlgorithm::FixpointIteration,
        ParityAlgorithm::GpuFixpoint,
    ];

    /// The name on the command line and in the summary.
    pub fn name(self) -> &'static str {
        match self {
            ParityAlgorithm::Auto => "auto",
            ParityAlgorithm::Zielonka => "zielonka",
            ParityAlgorithm::TangleLearning => "tangle-learning",
            ParityAlgorithm::RecursiveTangleLearning => "recursive-tangle-learning",
            ParityAlgorithm::PriorityPromotion => "priority-promotion",
            ParityAlgorithm::FixpointIteration => "fixpoint-iteration",
            ParityAlgorithm::GpuFixpoint => "gpu-fixpoint",
        }
    }
}

impl std::str::FromStr for ParityAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<ParityAlgorithm, String> {
        ParityAlgorithm::SELECTABLE
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = ParityAlgorithm::SELECTABLE
                    .iter()
                    .map(|a| a.name())
                    .collect();
                format!(
                    "unknown parity algorithm '{s}': expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Display for ParityAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Settings of the parity solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParityOptions {
    /// Which algorithm.
    pub algorithm: ParityAlgorithm,
    /// Worker threads (0: one per core; 1: sequential).
    pub threads: usize,
    /// Games with fewer vertices are solved sequentially.
    pub parallel_from_vertices: usize,
    /// Attractor and fixpoint rounds with fewer vertices run sequentially.
    pub parallel_round_from: usize,
    /// With more than one thread, the portfolio's searches race on two threads once it has
    /// time-sliced them this long without an answer ([`portfolio`]).
    pub race_after: Duration,
}

impl Default for ParityOptions {
    fn default() -> ParityOptions {
        ParityOptions {
            algorithm: ParityAlgorithm::default(),
            threads: 0,
            parallel_from_vertices: PARALLEL_FROM_VERTICES,
            parallel_round_from: PARALLEL_ROUND_FROM,
            race_after: portfolio::RACE_AFTER,
        }
    }
}

impl ParityOptions {
    /// The default algorithm on `threads` threads (the CPU backend's thread budget).
    pub fn with_threads(threads: usize) -> ParityOptions {
        ParityOptions {
            threads,
            ..ParityOptions::default()
        }
    }

    /// `algorithm` on `threads` threads.
    pub fn of(algorithm: ParityAlgorithm, threads: usize) -> ParityOptions {
        ParityOptions {
            algorithm,
            threads,
            ..ParityOptions::default()
        }
    }
}

/// Solves the parity game `arena` with `priorities` by `algorithm` on `cpu.threads`
/// threads.
pub fn solve(
    arena: &Arena,
    priorities: &[u32],
    algorithm: ParityAlgorithm,
    cpu: &CpuOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    solve_with(
        arena,
        priorities,
        &ParityOptions::of(algorithm, cpu.threads),
        control,
    )
}

/// Winners, strategies and counts, as every algorithm hands them back.
struct Answer {
    /// Winner (0 or 1) per vertex.
    winner: Vec<u8>,
    /// The winner's move where it owns the vertex, else [`NO_MOVE`].
    strategy: Vec<u32>,
    /// What the summary calls the algorithm.
    algorithm: String,
    /// The algorithm's rounds: frames, decompositions, dominions or restarts.
    rounds: u64,
}

/// Solves the parity game `arena` (owners and edges; weights ignored) with `priorities`
/// (one compressed priority per vertex) as `options` say.
pub fn solve_with(
    arena: &Arena,
    priorities: &[u32],
    options: &ParityOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let n = arena.vertex_count();
    if priorities.len() != n {
        return Err(SolveError::Unavailable {
            backend: "parity",
            reason: format!(
                "{} priorities were given for {n} vertices",
                priorities.len()
            ),
        });
    }
    let start = Instant::now();
    let algorithm = options.algorithm;
    let uses_threads = matches!(
        algorithm,
        ParityAlgorithm::Zielonka | ParityAlgorithm::FixpointIteration | ParityAlgorithm::Auto
    );
    let threads = CpuOptions {
        threads: options.threads,
        ..CpuOptions::default()
    }
    .effective_threads();
    let pool = (uses_threads && threads > 1 && n >= options.parallel_from_vertices)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("egsolve-parity-{i}"))
                .build()
                .inspect_err(|e| tracing::warn!("parity solver runs on one thread: {e}"))
                .ok()
        })
        .flatten();
    let rounds = Rounds {
        parallel: pool.is_some(),
        parallel_from: options.parallel_round_from.max(1),
    };
    let graph = Graph::new(arena, priorities);
    let race_after = (threads > 1).then_some(options.race_after);
    let run = || run_algorithm(graph, algorithm, rounds, race_after, control);
    let answer = match &pool {
        Some(pool) => crate::solve::threads::install_erased(pool, run),
        None => run(),
    }?;
    let credit = answer
        .winner
        .iter()
        .map(|&w| if w == 0 { 0 } else { TOP })
        .collect();
    let stats = SolveStats {
        backend: "parity".into(),
        algorithm: answer.algorithm,
        rounds: answer.rounds,
        solve_seconds: start.elapsed().as_secs_f64(),
        ..SolveStats::default()
    };
    Ok(Solution::winners_only(credit, answer.strategy, stats))
}

/// Runs `algorithm` on `graph` (on the pool the caller installed, if any; the portfolio
/// races its searches after `race_after` if given).
fn run_algorithm(
    graph: Graph<'_>,
    algorithm: ParityAlgorithm,
    rounds: Rounds,
    race_after: Option<Duration>,
    control: &Control,
) -> Result<Answer, SolveError> {
    let name = algorithm.name();
    let mut pacer = Pacer::new(control);
    let fail = |stop: Stop| stop.into_error(name);
    // A solve cancelled or out of time before it starts does no work (the algorithms'
    // own checks may come only after a round or a few thousand units of work).
    pacer.check().map_err(fail)?;
    let answer = match algorithm {
        ParityAlgorithm::Zielonka => {
            let mut solver = Zielonka::new(graph, rounds, control);
            let counters = solver.run()?;
            let state = &solver.state;
            let n = graph.vertex_count() as VertexId;
            let winner: Vec<u8> = (0..n).map(|v| state.winner(v)).collect();
            let strategy = (0..n)
                .map(|v| {
                    if graph.owner_of(v) == winner[v as usize] {
                        state.strategy(v)
                    } else {
                        NO_MOVE
                    }
                })
                .collect();
            Answer {
                winner,
                strategy,
                algorithm: name.into(),
                rounds: counters.frames,
            }
        }
        ParityAlgorithm::TangleLearning | ParityAlgorithm::RecursiveTangleLearning => {
            let mode = if algorithm == ParityAlgorithm::TangleLearning {
                tangle::Mode::Flat
            } else {
                tangle::Mode::Recursive
            };
            let solved = tangle::solve(graph, mode, &mut pacer).map_err(fail)?;
            Answer {
                winner: solved.winner,
                strategy: solved.strategy,
                algorithm: name.into(),
                rounds: solved.stats.iterations,
            }
        }
        ParityAlgorithm::Auto => {
            let (solved, spent) =
                portfolio::solve(graph, rounds, &mut pacer, race_after).map_err(fail)?;
            Answer {
                winner: solved.winner,
                strategy: solved.strategy,
                algorithm: spent.answered_by(),
                rounds: solved.stats.iterations,
            }
        }
        ParityAlgorithm::PriorityPromotion => {
            let solved = promotion::solve(graph, &mut pacer).map_err(fail)?;
            Answer {
                winner: solved.winner,
                strategy: solved.strategy,
                algorithm: name.into(),
                rounds: solved.dominions,
            }
        }
        ParityAlgorithm::FixpointIteration => {
            let solved = fixpoint::solve(graph, rounds.parallel, rounds.parallel_from, &mut pacer)
                .map_err(fail)?;
            Answer {
                winner: solved.winner,
                strategy: solved.strategy,
                algorithm: name.into(),
                rounds: solved.restarts,
            }
        }
        ParityAlgorithm::GpuFixpoint => {
            return Err(SolveError::Unavailable {
                backend: "parity",
                reason: "gpu-fixpoint runs on a GPU (solve_game hands it to the device)".into(),
            });
        }
    };
    // The last round's figures (the algorithms report only every so often).
    let progress = control.progress();
    let lifts = progress.snapshot().lifts;
    progress.publish(answer.rounds, 0, lifts);
    Ok(answer)
}
