//! The CPU backend as the accelerated solver's lifting engine: [`CpuLift`] implements
//! [`LiftEngine`] with the parallel frontier rounds, so `auto` lifts on every core
//! between its evaluations (the sequential worklist stays the engine for one thread and for
//! small games, see [`crate::solve::auto`]).

use super::{CpuAlgorithm, CpuOptions, lift_budgeted};
use crate::solve::SolveError;
use crate::solve::engine::{LiftCall, LiftEngine, LiftRun};

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

    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        let start = std::mem::take(values);
        let lifted = lift_budgeted(call, start, &self.options)?;
        *values = lifted.values;
        Ok(LiftRun {
            lifts: lifted.lifts,
            rounds: lifted.rounds,
            finished: lifted.finished,
            tail: lifted.tail,
        })
    }
}
