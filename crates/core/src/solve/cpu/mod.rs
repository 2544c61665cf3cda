//! The parallel CPU backend: lifting on its own rayon thread pool.
//!
//! Two algorithms ([`CpuAlgorithm`]):
//! - **frontier** (the default, `frontier` module): rounds that lift only the vertices whose
//!   condition is broken and build the next frontier from the predecessors the raised values
//!   broke; small rounds run sequentially on the calling thread, large ones in parallel.
//! - **sweep** (`sweep` module): the paper's Algorithm 2, every vertex every round — for
//!   comparison only.
//!
//! Both compute the least energy progress measure, which is unique, so the credits equal the
//! reference solver's for every thread count; only `rounds` and `lifts` depend on the
//! schedule. The per-vertex arrays are as narrow as the game allows (`values`: `u32` cells
//! when `M < u32::MAX`; the arena's weights keep their storage width), and both frontiers
//! share one ring of `n` slots (`queue`), so the working set stays within about 32 bytes per
//! edge. [`lift_from`] lifts from any start below the least fixpoint (the accelerated
//! solver starts from its own estimate). This module owns the per-vertex arrays and the
//! pool; strategies come from [`Solution::from_credits`] like every backend's.

mod frontier;
pub mod lift;
mod queue;
mod state;
mod sweep;
mod values;

use std::time::Instant;

use super::control::Budget;
use super::engine::LiftCall;
use super::strategy::{Seed, Topping};
use super::{Control, Interrupted, Solution, SolveError, SolveStats, Threads, energy};
use crate::arena::{Arena, Weight, Width};
use state::LiftState;
use values::{Narrow, Value, Wide};

/// Which lifting schedule the CPU backend runs.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum CpuAlgorithm {
    /// Rounds over the frontier of broken vertices (work-efficient).
    #[default]
    Frontier,
    /// The paper's Algorithm 2: lift every vertex every round (for comparison only).
    Sweep,
}

impl CpuAlgorithm {
    /// Every algorithm, for help texts and tests.
    pub const ALL: &'static [CpuAlgorithm] = &[CpuAlgorithm::Frontier, CpuAlgorithm::Sweep];

    /// The name used on the command line and in the API.
    pub fn name(self) -> &'static str {
        match self {
            CpuAlgorithm::Frontier => "frontier",
            CpuAlgorithm::Sweep => "sweep",
        }
    }
}

impl std::str::FromStr for CpuAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<CpuAlgorithm, String> {
        CpuAlgorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown CPU algorithm '{s}': expected one of frontier, sweep"))
    }
}

impl std::fmt::Display for CpuAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the CPU backend runs. Build it with `..CpuOptions::default()` for the fields you do
/// not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CpuOptions {
    /// Worker threads; 0 means one per available core.
    pub threads: usize,
    /// The lifting schedule.
    pub algorithm: CpuAlgorithm,
    /// Frontier rounds whose vertices have fewer successors plus predecessors than this run
    /// sequentially on the calling thread (a fork/join costs more than they do), and so do
    /// the solve's other parts (evaluations, strategies) on fewer vertices plus edges; 0
    /// makes everything of a multi-threaded run parallel (tests use it).
    pub sequential_below_edges: usize,
}

impl Default for CpuOptions {
    fn default() -> CpuOptions {
        CpuOptions {
            threads: 0,
            algorithm: CpuAlgorithm::Frontier,
            sequential_below_edges: DEFAULT_SEQUENTIAL_BELOW_EDGES,
        }
    }
}

/// Default of [`CpuOptions::sequential_below_edges`].
pub const DEFAULT_SEQUENTIAL_BELOW_EDGES: usize = 1 << 15;

impl CpuOptions {
    /// The thread count this run uses (`threads`, or the available cores for 0).
    pub fn effective_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            t => t,
        }
    }
}

/// Result of [`lift_from`].
#[derive(Debug, Clone, PartialEq)]
pub struct CpuLifted {
    /// The least energy progress measure (or, when not `finished`, values below it).
    pub values: Vec<u64>,
    /// Whether `values` is the least fixpoint (a budgeted run may stop before it).
    pub finished: bool,
    /// Rounds run.
    pub rounds: u64,
    /// Lifts applied (frontier vertices lifted, or `n` per sweep round).
    pub lifts: u64,
    /// Bytes of the working set: the arena's arrays plus this backend's buffers.
    pub working_set_bytes: usize,
    /// How the frontier shrank over the last rounds, when the run stopped unfinished.
    pub tail: Option<crate::solve::engine::FrontierTail>,
}

/// Lifts `arena` (bound `bound`, from [`energy::bound`]) from `values` — which must lie
/// pointwise below the least fixpoint, e.g. all 0 — to the least fixpoint.
pub fn lift_from(
    arena: &Arena,
    bound: u64,
    values: Vec<u64>,
    options: &CpuOptions,
    control: &Control,
) -> Result<CpuLifted, Interrupted> {
    let threads = Threads::new(options.effective_threads());
    let call = LiftCall {
        arena,
        bound,
        topping: None,
        budget: Budget::UNLIMITED,
        threads: &threads,
        control,
    };
    lift_budgeted(call, values, options)
}

/// [`lift_from`] on `threads` (its pool; `options.threads` is not read) that stops at the
/// first round boundary after `budget` runs out (the frontier algorithm; the sweep always
/// runs to the fixpoint): `finished` says whether the values reached the least fixpoint.
/// The values stay below it either way. With `topping`, the frontier algorithm also
/// records there why each vertex it raises to ⊤ got there
/// ([`crate::solve::strategy::topping`]).
#[allow(clippy::too_many_arguments)]
pub fn lift_budgeted(
    call: LiftCall<'_>,
    values: Vec<u64>,
    options: &CpuOptions,
) -> Result<CpuLifted, Interrupted> {
    let run = Run {
        budget: call.budget,
        options,
        pool: call.threads.pool(),
        topping: call.topping,
        control: call.control,
    };
    let (arena, bound) = (call.arena, call.bound);
    match arena.weight_width() {
        Width::I16 => lift_weights::<i16>(arena, bound, values, &run),
        Width::I32 => lift_weights::<i32>(arena, bound, values, &run),
        Width::I64 => lift_weights::<i64>(arena, bound, values, &run),
    }
}

/// How one call of [`lift_budgeted`] runs, passed down its width dispatch.
struct Run<'r> {
    budget: Budget,
    options: &'r CpuOptions,
    pool: Option<&'r rayon::ThreadPool>,
    topping: Option<&'r Topping>,
    control: &'r Control,
}

/// [`lift_from`] for an arena whose weights are stored as `W`: picks the value width.
fn lift_weights<W: Weight>(
    arena: &Arena,
    bound: u64,
    values: Vec<u64>,
    run: &Run<'_>,
) -> Result<CpuLifted, Interrupted> {
    if Narrow::fits(bound) {
        lift_typed::<W, Narrow>(arena, bound, values, run)
    } else {
        lift_typed::<W, Wide>(arena, bound, values, run)
    }
}

/// [`lift_from`] at one weight and value width.
fn lift_typed<W: Weight, V: Value>(
    arena: &Arena,
    bound: u64,
    values: Vec<u64>,
    run: &Run<'_>,
) -> Result<CpuLifted, Interrupted> {
    let &Run {
        budget,
        options,
        pool,
        topping,
        control,
    } = run;
    let topping = topping.filter(|_| options.algorithm == CpuAlgorithm::Frontier);
    let mut state = LiftState::<W, V>::new(arena, bound, values, pool, topping);
    let (rounds, lifts, side_bytes, finished, tail) = match options.algorithm {
        CpuAlgorithm::Frontier => {
            let run = frontier::run(
                &mut state,
                pool,
                options.sequential_below_edges,
                budget,
                control,
            )?;
            (
                run.rounds,
                run.lifts,
                run.side_buffer_bytes,
                run.finished,
                run.tail,
            )
        }
        CpuAlgorithm::Sweep => {
            let run = sweep::run(&state, pool, control)?;
            (run.rounds, run.lifts, 0, true, None)
        }
    };
    let working_set_bytes = arena.heap_bytes() + state.heap_bytes() + side_bytes;
    Ok(CpuLifted {
        values: state.into_values(pool),
        finished,
        rounds,
        lifts,
        working_set_bytes,
        tail,
    })
}

/// Solves `arena` on the CPU backend and derives both strategies.
pub fn solve(
    arena: &Arena,
    options: &CpuOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let start = Instant::now();
    let threads = Threads::new(options.effective_threads())
        .with_parallel_from(options.sequential_below_edges);
    let bound = energy::bound_on(arena, &threads)?;
    let n = arena.vertex_count();
    // Why each vertex reached ⊤ (the frontier algorithm's lifts record it), for player 1's
    // strategy.
    let topping =
        (options.algorithm == CpuAlgorithm::Frontier).then(|| threads.install(|| Topping::new(n)));
    let call = LiftCall {
        arena,
        bound,
        topping: topping.as_ref(),
        budget: Budget::UNLIMITED,
        threads: &threads,
        control,
    };
    let lifted = lift_budgeted(call, vec![0; n], options)?;
    let seconds = start.elapsed().as_secs_f64();
    let stats = SolveStats {
        backend: format!("cpu-{}", options.algorithm),
        algorithm: match options.algorithm {
            CpuAlgorithm::Frontier => "frontier-lifting",
            CpuAlgorithm::Sweep => "sweep-lifting",
        }
        .into(),
        ..SolveStats::lifting(bound, lifted.lifts, lifted.rounds, seconds)
    };
    let seed = Seed {
        topping: topping.as_ref(),
        ..Seed::none()
    };
    Solution::from_credits_seeded(arena, lifted.values, None, seed, stats, &threads, control)
        .map(|(solution, _)| solution)
}
