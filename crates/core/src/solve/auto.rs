//! The default backend, `auto`: the accelerated exact solver ([`super::accel`]) with the
//! lifting engine that suits the game and the threads it was given. This module only
//! chooses; the solver and the engines live in `accel` and `cpu`, which do not know each
//! other's choice.

use super::accel;
use super::cpu::CpuOptions;
use super::cpu::lift::CpuLift;
use super::{Control, Solution, SolveError};
use crate::arena::Arena;

/// Games with at least this many edges lift on the CPU backend's threads in `auto`. Measured
/// on 16 cores (BENCHMARKS.md): from about 10^6 edges all cores win (IEEE1394 1.09×,
/// Onebit 1.13×, 10^7-edge random games 1.17× and 1.53× end to end), while games of
/// 1.5–2.4·10^5 edges lost 7–15 % (a thread pool and per-phase setup for a few ms of work).
pub const PARALLEL_FROM_EDGES: usize = 1 << 19;

/// `auto`: the accelerated solver lifting with the CPU backend's parallel rounds on
/// `cpu.threads` threads ([`CpuLift`]) when there are several and the game has at least
/// [`PARALLEL_FROM_EDGES`] edges, else with the worklist. The answer is the same either way
/// (the least fixpoint is unique).
pub fn solve(arena: &Arena, cpu: &CpuOptions, control: &Control) -> Result<Solution, SolveError> {
    if cpu.effective_threads() > 1 && arena.edge_count() >= PARALLEL_FROM_EDGES {
        let mut engine = CpuLift::new(cpu);
        accel::solve_with(arena, &mut engine, control).map(|(solution, _)| solution)
    } else {
        accel::solve(arena, control)
    }
}
