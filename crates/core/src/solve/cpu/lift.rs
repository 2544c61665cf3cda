//! The CPU backend as the accelerated solver's lifting engine: [`CpuLift`] implements
//! [`LiftEngine`] with the parallel frontier rounds, so `auto` lifts on every core
//! between its evaluations (the sequential worklist stays the engine for one thread and for
//! small games, see [`crate::solve::auto`]).

use super::{CpuAlgorithm, CpuOptions, lift_budgeted};
use crate::arena::Arena;
use crate::solve::control::Budget;
use crate::solve::engine::{LiftEngine, LiftRun};
use crate::solve::strategy::Topping;
use crate::solve::{Control, SolveError, Threads};

/// Frontier lifting on the CPU backend's threads, for the accelerated driver.
#[derive(Debug, Clone)]
pub struct CpuLift {
    options: CpuOptions,
}

impl CpuLift {
    /// An engine with `options`' threads and round sizes (always the frontier algorithm:
    /// the sweep cannot stop at a budget).
    pub fn new(options: &CpuOptions) -> CpuLift {
        CpuLift {
            options: CpuOptions {
                algorithm: CpuAlgorithm::Frontier,
                ..*options
            },
        }
    }
}

impl LiftEngine for CpuLift {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn threads(&self) -> usize {
        self.options.effective_threads()
    }

    /// The rounds' threshold serves the evaluations too (0 in tests: everything parallel).
    fn parallel_from(&self) -> usize {
        self.options.sequential_below_edges
    }

    fn records_topping(&self) -> bool {
        true
    }

    fn lift(
        &mut self,
        arena: &Arena,
        bound: u64,
        values: &mut Vec<u64>,
        topping: Option<&Topping>,
        budget: Budget,
        threads: &Threads,
        control: &Control,
    ) -> Result<LiftRun, SolveError> {
        let start = std::mem::take(values);
        let options = &self.options;
        let lifted = lift_budgeted(
            arena, bound, start, budget, options, threads, topping, control,
        )?;
        *values = lifted.values;
        Ok(LiftRun {
            lifts: lifted.lifts,
            rounds: lifted.rounds,
            finished: lifted.finished,
            tail: lifted.tail,
        })
    }
}
