//! The native parity game solver (`--backend parity`, and `auto` for parity games whose
//! energy reduction does not fit in 64 bits): who wins each vertex of a max-parity game,
//! and positional winning strategies for both players. Credits are not computed (the
//! answer's `credit` is 0 on `W0` and ⊤ on `W1`, and [`Solution::credits_computed`] is
//! false).
//!
//! The algorithm is Zielonka's recursive algorithm ([`zielonka`]) on an explicit stack,
//! with the refinements that make it fast in practice (as in Oink's `zlk`): attractors
//! with successor counters in one atomic word per vertex ([`attractor`]), heads taken down
//! to the next parity inversion, and no second recursion when the opponent's attractor
//! takes nothing. It runs on the compressed priorities ([`crate::parity::compress`]).
//!
//! Attractors run as parallel frontier rounds on a per-solve rayon pool when the game has
//! at least [`PARALLEL_FROM_VERTICES`] vertices and more than one thread is allowed, and
//! then only for rounds of at least [`PARALLEL_ROUND_FROM`] vertices (smaller rounds, and
//! smaller games, stay sequential: a pool and its synchronisation cost more than they
//! save there). The answer does not depend on the thread count: claims decide only who
//! attracts a vertex first within a round, and each vertex's strategy is chosen by the
//! thread that claims it among equally valid moves (so strategies may differ between runs,
//! winners never).

mod attractor;
mod state;
mod zielonka;

use std::time::Instant;

use super::cpu::CpuOptions;
use super::{Control, NO_MOVE, Solution, SolveError, SolveStats, TOP};
use crate::arena::{Arena, VertexId};
use attractor::{Graph, Rounds};
use zielonka::Zielonka;

/// Games with at least this many vertices get a thread pool (when threads are allowed).
pub const PARALLEL_FROM_VERTICES: usize = 1 << 16;
/// Attractor rounds with at least this many vertices run in parallel.
pub const PARALLEL_ROUND_FROM: usize = 1 << 11;

/// Settings of the parity solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParityOptions {
    /// Worker threads (0: one per core; 1: sequential).
    pub threads: usize,
    /// Games with fewer vertices are solved sequentially.
    pub parallel_from_vertices: usize,
    /// Attractor rounds with fewer vertices run sequentially.
    pub parallel_round_from: usize,
}

impl Default for ParityOptions {
    fn default() -> ParityOptions {
        ParityOptions {
            threads: 0,
            parallel_from_vertices: PARALLEL_FROM_VERTICES,
            parallel_round_from: PARALLEL_ROUND_FROM,
        }
    }
}

impl ParityOptions {
    /// The settings for a solve given the CPU backend's thread budget.
    pub fn with_threads(threads: usize) -> ParityOptions {
        ParityOptions {
            threads,
            ..ParityOptions::default()
        }
    }
}

/// Solves the parity game `arena` with `priorities` on `cpu.threads` threads.
pub fn solve(
    arena: &Arena,
    priorities: &[u32],
    cpu: &CpuOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    solve_with(
        arena,
        priorities,
        &ParityOptions::with_threads(cpu.threads),
        control,
    )
}

/// Solves the parity game `arena` (owners and edges; weights ignored) with `priorities`
/// (one per vertex) as `options` say.
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
    let threads = CpuOptions {
        threads: options.threads,
        ..CpuOptions::default()
    }
    .effective_threads();
    let pool = (threads > 1 && n >= options.parallel_from_vertices)
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
    let run = || {
        let mut solver = Zielonka::new(Graph::new(arena, priorities), rounds, control);
        let counters = solver.run()?;
        Ok::<_, SolveError>((solver.state, counters))
    };
    let (state, counters) = match &pool {
        Some(pool) => pool.install(run),
        None => run(),
    }?;
    let mut credit = Vec::with_capacity(n);
    let mut strategy = Vec::with_capacity(n);
    for v in 0..n as VertexId {
        let winner = state.winner(v);
        credit.push(if winner == 0 { 0 } else { TOP });
        strategy.push(if arena.owner(v) as u8 == winner {
            state.strategy(v)
        } else {
            NO_MOVE
        });
    }
    let stats = SolveStats {
        backend: "parity".into(),
        rounds: counters.frames,
        solve_seconds: start.elapsed().as_secs_f64(),
        ..SolveStats::default()
    };
    Ok(Solution::winners_only(credit, strategy, stats))
}
