//! The reference solver: Algorithm 1 exactly (FIFO worklist with successor counters), `u64`
//! values, ⊤ above `M`. Every other backend is tested against it.

use std::time::Instant;

use super::worklist::{self, Primal};
use super::{Control, Phases, Solution, SolveError, SolveStats, Threads, energy};
use crate::arena::Arena;

/// Solves `arena` with the sequential worklist and derives both strategies.
pub fn solve(arena: &Arena, control: &Control) -> Result<Solution, SolveError> {
    let bound = energy::bound(arena)?;
    let start = Instant::now();
    let lifted = worklist::solve(&Primal { arena, bound }, control)?;
    let seconds = start.elapsed().as_secs_f64();
    let stats = SolveStats {
        backend: "reference".into(),
        bound,
        lifts: lifted.lifts,
        rounds: 0,
        solve_seconds: seconds,
        phases: Phases {
            lifting: seconds,
            ..Phases::default()
        },
        ..SolveStats::default()
    };
    Solution::from_credits(arena, lifted.values, stats, &Threads::one(), control)
}
