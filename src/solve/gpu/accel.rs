//! The GPU as the accelerated solver's lifting engine: [`GpuLift`] implements
//! [`accel::LiftEngine`], so `--backend gpu` runs the same exact scheme as `auto` (lifting
//! interleaved with evaluations of player 1's strategies, see [`crate::solve::accel`]) with
//! the lifting on the device and the evaluations on the host.
//!
//! The game is uploaded once; each lifting phase uploads the values, lifts from them with
//! every vertex in the first frontier, and downloads them (one `n`-word copy each way).
//!
//! **Phase lengths.** Lifting on the device runs at very different rates: billions of lifts
//! per second while frontiers are large, a few million when a climb moves a handful of
//! vertices per round (each round costs a few microseconds of barrier). A budget counted in
//! lifts, as the CPU driver uses, is therefore either far too short for the first kind (an
//! evaluation on the host where a few more milliseconds of lifting would have finished) or
//! far too long for the second. So by default each phase runs for a *time*:
//! [`LIFT_PERCENT`] of the last evaluation's duration (the first phase: of an estimate from
//! the game's size, [`EVALUATION_NS_PER_ITEM`]), and at least [`MIN_PHASE_SECONDS`]; the
//! kernel itself leaves after the round in which the phase's time runs out, so a phase with
//! slow rounds (a hub vertex whose thousands of predecessors one thread pushes) does not
//! overrun. 25 % was the fastest of 25/100/400 % and the lift budgets on the shared games
//! and 10^7-edge random games on an H100 (BENCHMARKS.md): one or two evaluations decide
//! those games, so lifting long before them does not pay. `lift_percent = 0` uses the
//! driver's lift budgets instead (for comparison).

use std::time::Instant;

use super::engine::{GpuEngine, GpuOptions};
use crate::arena::Arena;
use crate::solve::accel::{self, LiftEngine, LiftRun};
use crate::solve::{Control, SolveError};

/// Default length of a lifting phase, in percent of the last evaluation's time.
pub const LIFT_PERCENT: u32 = 25;
/// Estimated host time of one evaluation per vertex plus edge (for the first phase).
pub const EVALUATION_NS_PER_ITEM: f64 = 50.0;
/// Shortest lifting phase (a few launches).
pub const MIN_PHASE_SECONDS: f64 = 0.5e-3;

/// Lifting on a device for the accelerated driver.
pub struct GpuLift {
    engine: GpuEngine,
    options: GpuOptions,
    /// When the last phase returned (the driver evaluated since then).
    returned: Option<Instant>,
    /// Phases run.
    pub phases: u64,
    /// Kernel launches in all phases.
    pub launches: u64,
    /// Seconds spent in phases (copies included).
    pub seconds: f64,
}

impl GpuLift {
    /// Wraps an engine that holds `arena` (uploaded with its bound).
    pub fn new(engine: GpuEngine, options: &GpuOptions) -> GpuLift {
        GpuLift {
            engine,
            options: options.clone(),
            returned: None,
            phases: 0,
            launches: 0,
            seconds: 0.0,
        }
    }

    /// The engine (device, lanes).
    pub fn engine(&self) -> &GpuEngine {
        &self.engine
    }

    /// The time limit of the next phase, or `None` for the driver's lift budget.
    fn phase_seconds(&self, arena: &Arena) -> Option<f64> {
        let percent = self.options.lift_percent.unwrap_or(LIFT_PERCENT);
        if percent == 0 {
            return None;
        }
        let evaluation = match self.returned {
            Some(t) => t.elapsed().as_secs_f64(),
            None => {
                let items = arena.vertex_count() as f64 + arena.edge_count() as f64;
                items * EVALUATION_NS_PER_ITEM * 1e-9
            }
        };
        Some((evaluation * percent as f64 / 100.0).max(MIN_PHASE_SECONDS))
    }
}

impl LiftEngine for GpuLift {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn threads(&self) -> usize {
        super::host_threads()
    }

    fn lift(
        &mut self,
        arena: &Arena,
        bound: u64,
        values: &mut Vec<u64>,
        budget: u64,
        control: &Control,
    ) -> Result<LiftRun, SolveError> {
        debug_assert_eq!(bound, self.engine.bound(), "the engine holds this game");
        let (max_lifts, max_seconds) = match self.phase_seconds(arena) {
            Some(seconds) => (u64::MAX, seconds),
            None => (budget, f64::INFINITY),
        };
        let begin = Instant::now();
        // The first phase starts from 0: a memset instead of an upload.
        let start = if self.phases == 0 && values.iter().all(|&v| v == 0) {
            None
        } else {
            Some(values.as_slice())
        };
        let run =
            self.engine
                .lift_budgeted(start, max_lifts, max_seconds, &self.options, control)?;
        *values = run.credit;
        self.phases += 1;
        self.launches += run.launches;
        self.seconds += begin.elapsed().as_secs_f64();
        self.returned = Some(Instant::now());
        Ok(LiftRun {
            lifts: run.lifts,
            rounds: run.rounds,
            finished: run.finished,
        })
    }
}

/// Solves `arena` (bound `bound`, already uploaded in `engine`) with the accelerated
/// driver around the device; returns the solution (backend `gpu`) and the driver's and
/// engine's figures.
pub fn solve(
    arena: &Arena,
    engine: GpuEngine,
    options: &GpuOptions,
    control: &Control,
) -> Result<(crate::solve::Solution, accel::AccelStats, GpuLift), SolveError> {
    let mut lift = GpuLift::new(engine, options);
    let (solution, stats) = accel::solve_with(arena, &mut lift, control)?;
    Ok((solution, stats, lift))
}
