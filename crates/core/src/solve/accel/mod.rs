//! The accelerated exact solver (the default, `auto`, and the GPU backend's driver): lifting
//! interleaved with evaluations of player 1's positional strategies, which jump values over
//! the pseudo-polynomial climb of plain lifting (to ⊤ at once, and to large finite credits
//! at once).
//!
//! # Algorithm
//! Start from `f = 0`. Repeat: run a lifting engine ([`LiftEngine`]: the worklist of
//! Algorithm 1, the CPU backend's parallel rounds, or the GPU) from `f` for a phase, and
//! stop if it reports its fixpoint; otherwise derive a positional strategy σ1 of player 1
//! from `f` (at each player-1 vertex the edge maximising `f(u) ⊖ w`) and **evaluate** it
//! (below), which raises `f`.
//!
//! **Phases by measured cost** ([`Schedule::Measured`], the default). Engines lift at very
//! different rates (a GPU or 16 cores lift BRP to its fixpoint in less than one evaluation
//! of it on one core), so a phase is a length of *time*: about as long as the next
//! evaluation is expected to take (the last evaluation's measured time, times the engine's
//! [`LiftEngine::phase_ratio`]; before the first, an estimate from the game's size and the
//! threads). A game that lifting finishes within that never pays for an evaluation; one
//! that climbs pays at most about twice what the better of the two would have cost for
//! that phase. After an evaluation that changed few values the phase at least doubles and
//! lasts at least 5 times the evaluation, so evaluations that do not help cost at most
//! about 20% on top of lifting. A phase that ends with its frontier closing in — shrinking
//! by 5 % or more a round over its last rounds, as an engine that lifts in rounds reports
//! ([`LiftRun::tail`]) — lifts on instead of evaluating when the lifts its geometric tail
//! leaves would take at most a quarter of the phase at the phase's rate, for at most half
//! the phase, once before each evaluation (BRP on 2 cores: lifting had stopped about 90 %
//! of the way, for a 0.6 s evaluation it does not need; `phasing::Phasing::lifting_on`); a
//! game that climbs keeps a frontier that shrinks slowly, and evaluates. [`Schedule::Lifts`]
//! counts lifts instead (tests use small counts to evaluate often).
//!
//! **Threads.** One rayon pool per solve ([`Threads`]) serves the engine's rounds, every
//! part of an evaluation and both strategies. Each parallel part computes a set or a
//! fixpoint that does not depend on the schedule: components (trim + forward–backward
//! splits, `scc`), the cycle-sign test (components tested independently, `cycles`),
//! backward reachability (`reach`), the attractor to ⊤ (layers, `attractor`) and the
//! Bellman–Ford relaxation (a unique fixpoint, `relax`); so every thread count gives the
//! same values and the same strategies.
//!
//! **Engines may compute the graph searches.** An engine that runs elsewhere may choose
//! σ1 where the values are ([`EngineSearches::player1_edges`], the same choice), and take an
//! evaluation's strongly connected components ([`EngineSearches::start_components`]), its
//! backward reachability ([`EngineSearches::reaching`]) and its Bellman–Ford
//! ([`EngineSearches::credits_to_pinned`]): the GPU engine runs them on the device, which holds
//! the arena, and the host then builds neither side of its graph. Only the partition is
//! used (component numbers differ), and the other two are unique fixpoints, so the values
//! are the same either way. An engine may leave whole components to the host
//! ([`LEFT_TO_HOST`]): the few vertices left after its trims and forward–backward search,
//! whose components Tarjan finds in `remainder`.
//!
//! **Evaluation.** Let `K = {f = ⊤}` and `H = G_σ1 − K`: vertices outside `K`, all edges of
//! player-0 vertices, the σ1 edge of player-1 vertices, edges into `K` dropped.
//! 1. `U` := vertices of `H` that can reach a cycle of weight `>= 0` in `H` (strongly
//!    connected components, a cycle-sign test per component, backward reachability).
//!    Every vertex of `H` outside `U` is set to ⊤; if any was, player 1's attractor to ⊤
//!    follows (lifting steps that only produce ⊤, done in one linear pass).
//! 2. Let `F` be the vertices of `U` still finite. `Z'` := vertices of `F` with `f = 0`,
//!    plus every component of `F \ {f = 0}` (in `H`) that has a cycle of weight `>= 0`.
//!    Then every nonnegative cycle of `H` inside `F` meets `Z'`.
//! 3. `g(v)` := least credit of a path of `H` inside `F` from `v` to `Z'` (`g = 0` on
//!    `Z'`, ⊤ if there is none), computed from above by Bellman–Ford relaxation
//!    `g(v) = min_u g(u) ⊖ w`; it ends because every cycle of `F` avoiding `Z'` is
//!    negative. Set `f := max(f, g)` on `F`.
//!
//! # Soundness
//! Let `f*` be the least energy progress measure (⊤ on `W1`, the least credit on `W0`).
//! Invariant: `f <= f*` pointwise. It holds at `f = 0`; lifting preserves it (the lifting
//! operator is monotone and `f*` is its fixpoint); and lifting from any `f <= f*` ends at
//! `f*` itself (Knaster–Tarski: the least fixpoint above `f` is `f*`). So the answer is the
//! least progress measure as soon as evaluations preserve the invariant:
//! - Take `v` in `H` with `f*(v)` finite. Player 0 has a positional strategy σ0 winning from
//!   every vertex of `W0` with credit `f*`. Against σ0, player 1 plays σ1 outside `K` and,
//!   once in `K ⊆ W1`, walks to a negative cycle of `G_σ0` (one is reachable, or player 0
//!   would win there): the play from `v` must avoid `K`, so it is the lasso of σ0 and σ1 in
//!   `H`, its cycle has weight `>= 0` (energy stays bounded below by `−f*(v)`), and every
//!   prefix needs at most `f*(v)`. Hence `v ∈ U` (step 1 only tops vertices of `W1`; the
//!   attractor is lifting). All lasso vertices are in `W0`, so finite, so in `F`; its cycle
//!   is nonnegative, so it meets `Z'`, and the prefix up to the first vertex of `Z'` shows
//!   `g(v) <= f*(v)` (step 3). For `v ∈ W1`, `f*(v) = ⊤` bounds anything.
//! - Values above `M` become ⊤ in `g` as in lifting: a true credit above `M` is infinite.
//! - The cycle-sign test answers "no nonnegative cycle" only with feasible potentials and
//!   "yes" otherwise (see `cycles`); a wrong "yes" only shrinks what an evaluation sets.
//!
//! **Strategy improvement** ([`improve`]). On games of at most [`improve::IMPROVE_UP_TO`]
//! vertices plus edges, under the measured schedule, a run of player 1's strategy
//! improvement takes the place of every evaluation after the first (a game one evaluation
//! and lifting finish never pays for it): from `f`, σ1 greedy, then the least fixpoint
//! above `f` of the one-player game `G_σ1` computed exactly (not only the credits to reach
//! `Z'`), until `f` stops rising, which is `f*`; its cost does not grow with the credits
//! (SYNTCOMP's `ltl2dpa12`: 10^8 lifts before, a few milliseconds with it). Its soundness
//! argument is in its module docs; like an evaluation it only raises values to at most
//! `f*`, so the invariant above holds. A run that spends its share of work hands back to
//! the next phase with what it raised, and the next run gets twice the share.
//!
//! # Player 1's strategy
//! The last σ1 of each vertex is kept (from the evaluation or attractor that last saw it finite).
//! Each vertex an evaluation tops (as unable to reach a nonnegative cycle of `H`, or by the
//! attractor after it, every vertex of which joined through lower layers) gets a rank (`ranks`)
//! until a vertex reaches ⊤ another way (the ranks then freeze as they are); the kept moves win on
//! the ranked vertices as they stand (every move and every player-0 edge leads to a rank no higher,
//! every cycle within a rank is negative), checked in one pass. If they cover `W1`, that is player
//! 1's strategy; otherwise the layered construction of [`player1`], which every backend uses,
//! completes it from them (seeded by the kept moves); only if it stops short does the dual game of
//! [`crate::solve::strategy`] compute the strategy instead. Under [`Schedule::Measured`] the
//! evaluations happen when the clock says, so two runs may seed, and so return, different winning
//! moves of player 1 (each certified); the values, and with them player 0's moves, are the same in
//! every run.
//!
//! [`EngineSearches::credits_to_pinned`]: crate::solve::engine::EngineSearches::credits_to_pinned
//! [`EngineSearches::player1_edges`]: crate::solve::engine::EngineSearches::player1_edges
//! [`EngineSearches::reaching`]: crate::solve::engine::EngineSearches::reaching
//! [`EngineSearches::start_components`]: crate::solve::engine::EngineSearches::start_components
//! [`LEFT_TO_HOST`]: crate::solve::engine::LEFT_TO_HOST
//! [`LiftRun::tail`]: crate::solve::engine::LiftRun::tail
//! [`player1`]: crate::solve::strategy::player1

// The evaluation's parts are public so that the GPU crate's device tests can compare its
// searches with the host's (`crates/gpu/tests/integration/on_device.rs`); the driver is the way in.
pub mod evaluate;
pub mod improve;
mod phasing;
mod ranks;
pub mod relax;
pub mod remainder;
pub mod representatives;

use std::time::{Duration, Instant};

use self::phasing::Phasing;
use self::ranks::TopRanks;
use super::chunked;
use super::control::Control;
use super::energy;
use super::engine::{LiftCall, LiftEngine, WorklistEngine};
use super::phases::Phases;
use super::strategy::{NO_EDGE, Player1Source, Seed};
use super::threads::Threads;
use super::{Solution, SolveError, SolveStats};
use crate::arena::Arena;
use crate::graph::Graph;

/// Figures about one accelerated solve, beyond [`SolveStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AccelStats {
    /// Evaluations of player-1 strategies.
    pub evaluations: u64,
    /// Vertices set to ⊤ by evaluations.
    pub topped: u64,
    /// Finite raises by evaluations.
    pub raised: u64,
    /// Lifts by the engine.
    pub lifts: u64,
    /// Seconds spent in evaluations.
    pub evaluation_seconds: f64,
    /// Where player 1's strategy came from.
    pub player1: Player1Source,
    /// Runs of strategy improvement ([`improve`]; their time is in `evaluation_seconds`).
    pub improvements: u64,
}

/// When the driver stops lifting to evaluate (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// Phases as long as the next evaluation is expected to take (the default).
    Measured,
    /// Phases counted in lifts: this many first, doubling after an evaluation that changed
    /// few values. Nothing depends on the clock, so a deterministic engine gives the same
    /// solve every time (tests and benchmarks).
    Lifts(u64),
}

/// Estimated time of an evaluation per vertex plus edge on one thread, before any was
/// measured: one core of the H100 machine took 128 (IEEE1394), 166 (BRP) and 357 (random
/// game, half player 1) ns per item (session 5's device logs, in git history under notes/gpu); games that lifting finishes
/// in about that time never evaluate.
pub const EVALUATION_NS_PER_ITEM: f64 = 150.0;
/// Shortest lifting phase of the measured schedule.
pub const MIN_PHASE: Duration = Duration::from_micros(200);

/// Solves `arena` with the accelerated solver and the worklist engine.
pub fn solve(arena: &Arena, control: &Control) -> Result<Solution, SolveError> {
    solve_with(arena, &mut WorklistEngine, control).map(|(solution, _)| solution)
}

/// Solves `arena` with the accelerated solver around `engine` (measured schedule).
pub fn solve_with(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    control: &Control,
) -> Result<(Solution, AccelStats), SolveError> {
    solve_scheduled(arena, engine, Schedule::Measured, control)
}

/// [`solve_with`] with phases counted in lifts, `first_budget` (at least 1) before the
/// first evaluation (tests use small budgets to evaluate often).
pub fn solve_with_budget(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    first_budget: u64,
    control: &Control,
) -> Result<(Solution, AccelStats), SolveError> {
    solve_scheduled(arena, engine, Schedule::Lifts(first_budget.max(1)), control)
}

/// The driver: lifting phases and evaluations as `schedule` says, then the strategies.
///
/// It runs inside the solve's pool, so every parallel loop in it, the engine's own
/// included (a device's downloads copy out of their staging buffers in parallel), runs on
/// the solve's threads and never on rayon's global pool: a race's GPU side called it from a
/// thread outside every pool, and its recorded moves' copy, on the global pool beside the
/// race's CPU side, took 1.4–6.7 ms instead of 0.3 in some warm Hesselink jobs (H200 host,
/// session 66).
pub fn solve_scheduled(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    schedule: Schedule,
    control: &Control,
) -> Result<(Solution, AccelStats), SolveError> {
    let start = Instant::now();
    let threads = engine
        .started_threads()
        .unwrap_or_else(|| Threads::new(engine.threads()))
        .with_parallel_from(engine.parallel_from());
    tracing::debug!(seconds = start.elapsed().as_secs_f64(), "accel: threads");
    threads.install(|| drive(arena, engine, schedule, control, &threads, start))
}

/// [`solve_scheduled`]'s work, on `threads`.
fn drive(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    schedule: Schedule,
    control: &Control,
    threads: &Threads,
    start: Instant,
) -> Result<(Solution, AccelStats), SolveError> {
    let threads = threads.clone();
    let bound = match engine.known_bound() {
        Some(bound) => bound,
        None => energy::bound_on(arena, &threads)?,
    };
    tracing::debug!(seconds = start.elapsed().as_secs_f64(), "accel: bound");
    let n = arena.vertex_count();
    let mut values = engine.zeros(n, &threads);
    tracing::debug!(
        seconds = start.elapsed().as_secs_f64(),
        "accel: starting values ready"
    );
    // σ1 and the ranks are allocated by the first evaluation (most games never evaluate).
    let mut sigma_edge: Vec<u32> = Vec::new();
    let mut graph = Graph::default();
    let mut ranks = TopRanks::default();
    let topping = engine
        .records_topping()
        .then(|| engine.new_topping(n, &threads));
    tracing::debug!(
        seconds = start.elapsed().as_secs_f64(),
        "accel: topping allocated"
    );
    let mut accel = AccelStats::default();
    let mut rounds = 0u64;
    let mut phases = Phases::default();
    let mut phasing = Phasing::new(schedule, arena, engine, threads.count());
    let mut improver = improve::Improver::new(arena, schedule);
    tracing::debug!(
        seconds = start.elapsed().as_secs_f64(),
        "accel: threads and state ready"
    );
    loop {
        let lift_start = Instant::now();
        let run = engine.lift(
            LiftCall {
                arena,
                bound,
                topping: topping.as_ref(),
                budget: phasing.budget(),
                threads: &threads,
                control,
            },
            &mut values,
        )?;
        let lift_seconds = lift_start.elapsed().as_secs_f64();
        phases.lifting += lift_seconds;
        accel.lifts += run.lifts;
        rounds += run.rounds;
        control
            .progress()
            .publish(accel.evaluations, 0, accel.lifts);
        if run.finished {
            break;
        }
        if let Some(phase) = phasing.lifting_on(&run, lift_seconds) {
            tracing::debug!(
                tail = ?run.tail,
                seconds = phase.as_secs_f64(),
                "accel: the frontier is closing in; lifting on instead of evaluating"
            );
            continue;
        }
        if improver.due(accel.evaluations) {
            let (improved, took) =
                improver.run(arena, &mut values, bound, &mut sigma_edge, control)?;
            accel.improvements += 1;
            accel.evaluation_seconds += took.as_secs_f64();
            tracing::debug!(
                ?improved,
                seconds = took.as_secs_f64(),
                "accel: strategy improvement"
            );
            if improved.solved || improved.raised > 0 {
                // The next phase as after an evaluation of that cost.
                phasing.next(took, improved.raised > n / 64, engine.phase_ratio());
                continue;
            }
        }
        let evaluation_start = Instant::now();
        let device_edges = match engine.searches() {
            Some(device) => device.player1_edges()?,
            None => None,
        };
        match device_edges {
            // The first: every vertex the host would not choose for is at `NO_EDGE` either way.
            Some(edges) if sigma_edge.is_empty() => sigma_edge = edges,
            Some(edges) => threads.install(|| {
                // Plain loops in chunks, as `threads::positions_where`.
                chunked::for_each_chunk_mut(&mut sigma_edge, |start, sigmas| {
                    for (sigma, &e) in sigmas
                        .iter_mut()
                        .zip(edges.get(start..).unwrap_or_default())
                    {
                        if e != NO_EDGE {
                            *sigma = e;
                        }
                    }
                });
            }),
            None => {
                if sigma_edge.is_empty() {
                    sigma_edge = threads.filled(n, NO_EDGE);
                }
                evaluate::choose_strategy(arena, &values, bound, &mut sigma_edge, &threads);
            }
        }
        tracing::debug!(
            seconds = evaluation_start.elapsed().as_secs_f64(),
            "accel evaluation: player 1's strategy chosen"
        );
        phases.graph += evaluation_start.elapsed().as_secs_f64();
        let outcome = evaluate::evaluate(
            engine,
            arena,
            &mut values,
            bound,
            &mut sigma_edge,
            &mut graph,
            &mut ranks,
            &threads,
            &mut phases,
            control,
        )?;
        let evaluation = evaluation_start.elapsed();
        accel.evaluations += 1;
        accel.topped += outcome.topped as u64;
        accel.raised += outcome.raised as u64;
        accel.evaluation_seconds += evaluation.as_secs_f64();
        let productive = outcome.topped + outcome.raised > n / 64;
        phasing.next(evaluation, productive, engine.phase_ratio());
    }
    drop(graph);
    phases.evaluation = accel.evaluation_seconds;
    let moves_start = Instant::now();
    tracing::debug!(
        seconds = moves_start.duration_since(start).as_secs_f64(),
        "accel: least fixpoint"
    );
    let player0 = match engine.searches() {
        Some(device) => device.player0_moves()?,
        None => None,
    };
    phases.strategy0 = moves_start.elapsed().as_secs_f64();
    // The lifts' record classified where the engine keeps it, for a solve that never
    // evaluated (an engine that deferred copying its record copies it now otherwise):
    // player 1's time.
    let recorded_start = Instant::now();
    let evaluated = accel.evaluations > 0 || accel.improvements > 0;
    // Where player 1 wins nowhere there are no moves of theirs to classify, and the
    // strategy answers `Empty` without reading the record: the device's pass and its
    // downloads would be spent for nothing (BRP: 1.6 ms of a 13 ms solve on the H200 host).
    let searches = engine.searches();
    let player1_wins =
        (searches.is_some() && topping.is_some()).then(|| match threads.parallel(values.len()) {
            true => threads.install(|| chunked::any(values.len(), |v| values[v] == super::TOP)),
            false => values.contains(&super::TOP),
        });
    let recorded = match (searches, topping.as_ref()) {
        (Some(device), Some(topping)) if player1_wins == Some(true) => {
            device.recorded_moves(arena, topping, evaluated, &threads)?
        }
        _ => None,
    };
    let recorded_seconds = recorded_start.elapsed().as_secs_f64();
    tracing::debug!(
        seconds = recorded_seconds,
        asked = recorded.is_some(),
        "accel: recorded moves (the engine's part of player 1's strategy)"
    );
    let stats = SolveStats {
        backend: "auto".into(),
        bound,
        lifts: accel.lifts,
        rounds,
        solve_seconds: moves_start.duration_since(start).as_secs_f64(),
        strategy_seconds: phases.strategy0 + recorded_seconds,
        evaluations: accel.evaluations,
        // Named here where player 1's strategy improvement took part (the driver's name
        // otherwise comes from `solve::solve_with`).
        algorithm: if accel.improvements > 0 {
            "accelerated-lifting+strategy-improvement".into()
        } else {
            String::new()
        },
        phases,
        ..SolveStats::default()
    };
    let (mut solution, source) = Solution::from_credits_seeded(
        arena,
        values,
        player0,
        Seed {
            edges: &sigma_edge,
            ranks: (!ranks.ranks().is_empty()).then(|| ranks.ranks()),
            topping: topping.as_ref(),
            recorded: recorded.as_ref(),
            player1_wins,
        },
        stats,
        &threads,
        control,
    )?;
    solution.stats.phases.strategy1 += recorded_seconds;
    accel.player1 = source;
    Ok((solution, accel))
}
