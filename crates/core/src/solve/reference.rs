//! The reference solver: Algorithm 1 exactly (FIFO worklist with successor counters), `u64`
//! values, ⊤ above `M`. Every other backend is tested against it. Its lifts record why each
//! vertex reached ⊤, from which player 1's strategy comes where that record passes its check.

use std::time::Instant;

use super::strategy::{Seed, Topping};
use super::worklist::{self, Primal};
use super::{Control, Solution, SolveError, SolveStats, Threads, energy};
use crate::arena::Arena;

/// Solves `arena` with the sequential worklist and derives both strategies.
pub fn solve(arena: &Arena, control: &Control) -> Result<Solution, SolveError> {
    let bound = energy::bound(arena)?;
    let start = Instant::now();
    let topping = Topping::new(arena.vertex_count());
    let game = Primal {
        arena,
        bound,
        topping: Some(&topping),
    };
    let lifted = worklist::solve(&game, control)?;
    let seconds = start.elapsed().as_secs_f64();
    let stats = SolveStats {
        backend: "reference".into(),
        algorithm: "worklist".into(),
        ..SolveStats::lifting(bound, lifted.lifts, 0, seconds)
    };
    // Player 1's strategy from the lifts' record where it passes its check.
    let seed = Seed {
        topping: Some(&topping),
        ..Seed::none()
    };
    let threads = Threads::one();
    Solution::from_credits_seeded(arena, lifted.values, None, seed, stats, &threads, control)
        .map(|(solution, _)| solution)
}
