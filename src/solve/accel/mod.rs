//! The accelerated exact solver (the default, `auto`): lifting interleaved with
//! evaluations of player 1's positional strategies, which jump values over the
//! pseudo-polynomial climb of plain lifting (to ⊤ at once, and to large finite credits at
//! once).
//!
//! # Algorithm
//! Start from `f = 0`. Repeat: run a lifting engine ([`LiftEngine`], by default the worklist
//! of Algorithm 1) from `f` for a budget of lifts, and stop if it reports its fixpoint;
//! otherwise derive a positional strategy σ1 of player 1 from `f` (at each player-1 vertex
//! the edge maximising `f(u) ⊖ w`) and **evaluate** it (below), which raises `f`. The
//! budget starts at `2n` lifts (so games that lifting finishes in about `n` lifts never pay
//! for an evaluation); after an evaluation that changed few values it at least
//! doubles and covers at least 5 times that evaluation's time, so evaluations that do not
//! help cost at most about 20% on top of lifting (plus the first one).
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
//!    `Z'`, ⊤ if there is none), computed from above by FIFO Bellman–Ford relaxation
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
//! # Player 1's strategy
//! The last σ1 of each vertex is kept (from the evaluation or attractor that last saw it
//! finite) and completed to `W1` (a successor in `W1` where the kept edge leaves it). Then a
//! trap `S ⊆ W1` is grown in which σ1 makes every cycle negative: player 1's attractor to
//! `S` inside `W1` (its edges lead to vertices added earlier, so close no cycle), then the
//! vertices of the rest that cannot reach a nonnegative cycle of `G_σ1` on the rest (their
//! edges stay in that layer or lead into `S`); repeat until `S = W1`. Every cycle then lies
//! in one layer and is negative, and `W1` is closed, which certifies player 1's win (the
//! whole strategy is checked once more with the component test). Only if a round adds
//! nothing does the dual game of [`crate::solve::strategy`] compute the strategy instead.

mod attractor;
mod cycles;
mod evaluate;
mod graph;

use std::time::Instant;

use self::cycles::CycleFinder;
use self::graph::Graph;
use super::control::{Control, Interrupted};
use super::energy::{self, TOP};
use super::worklist::{self, Primal};
use super::{NO_MOVE, Solution, SolveError, SolveStats};
use crate::arena::{Arena, Player, VertexId};

/// What one call of a lifting engine did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiftRun {
    /// Lifts applied.
    pub lifts: u64,
    /// Rounds (parallel engines) or 0.
    pub rounds: u64,
    /// Whether `values` is now the least fixpoint (no vertex can be lifted).
    pub finished: bool,
}

/// A lifting engine: raises `values` (pointwise below the least fixpoint `f*` on entry) by
/// lifting, for about `budget` lifts or until no vertex can be lifted. It must keep
/// `values <= f*` (any sequence of lifts does) and set `finished` only at the fixpoint.
/// Errors other than interruptions (a device failing, say) end the solve with that error.
pub trait LiftEngine {
    /// Name for statistics.
    fn name(&self) -> &'static str;
    /// Threads the solution's strategies may use on the host (the engine's own budget; the
    /// sequential worklist: one).
    fn threads(&self) -> usize {
        1
    }
    /// Lifts `values` for about `budget` lifts.
    fn lift(
        &mut self,
        arena: &Arena,
        bound: u64,
        values: &mut Vec<u64>,
        budget: u64,
        control: &Control,
    ) -> Result<LiftRun, SolveError>;
}

/// The sequential worklist of Algorithm 1 as an engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct WorklistEngine;

impl LiftEngine for WorklistEngine {
    fn name(&self) -> &'static str {
        "worklist"
    }
    fn lift(
        &mut self,
        arena: &Arena,
        bound: u64,
        values: &mut Vec<u64>,
        budget: u64,
        control: &Control,
    ) -> Result<LiftRun, SolveError> {
        let start = std::mem::take(values);
        let (lifted, finished) =
            worklist::solve_budgeted(&Primal { arena, bound }, start, budget, control)?;
        *values = lifted.values;
        Ok(LiftRun {
            lifts: lifted.lifts,
            rounds: 0,
            finished,
        })
    }
}

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
    /// Whether player 1's strategy came from the evaluations (true) or the dual game.
    pub strategy_from_evaluations: bool,
}

/// Solves `arena` with the accelerated solver and the worklist engine.
pub fn solve(arena: &Arena, control: &Control) -> Result<Solution, SolveError> {
    solve_with(arena, &mut WorklistEngine, control).map(|(solution, _)| solution)
}

/// Solves `arena` with the accelerated solver around `engine`.
pub fn solve_with(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    control: &Control,
) -> Result<(Solution, AccelStats), SolveError> {
    solve_with_budget(
        arena,
        engine,
        (2 * arena.vertex_count()).max(1024) as u64,
        control,
    )
}

/// [`solve_with`] with the lifting budget before the first evaluation given (at least 1;
/// tests use small budgets to evaluate often).
pub fn solve_with_budget(
    arena: &Arena,
    engine: &mut dyn LiftEngine,
    first_budget: u64,
    control: &Control,
) -> Result<(Solution, AccelStats), SolveError> {
    let bound = energy::bound(arena)?;
    let start = Instant::now();
    let n = arena.vertex_count();
    let mut values = vec![0u64; n];
    let mut sigma_edge = vec![u32::MAX; n];
    let mut graph = Graph::default();
    let mut cycles = CycleFinder::new(n);
    let mut accel = AccelStats::default();
    let mut rounds = 0u64;
    // Lift first: games that lifting solves quickly never pay for an evaluation.
    let mut budget = first_budget.max(1);
    loop {
        let lift_start = Instant::now();
        let run = engine.lift(arena, bound, &mut values, budget, control)?;
        let lift_seconds = lift_start.elapsed().as_secs_f64();
        accel.lifts += run.lifts;
        rounds += run.rounds;
        control
            .progress()
            .publish(accel.evaluations, 0, accel.lifts);
        if run.finished {
            break;
        }
        let evaluation_start = Instant::now();
        evaluate::choose_strategy(arena, &values, bound, &mut sigma_edge);
        let outcome = evaluate::evaluate(
            arena,
            &mut values,
            bound,
            &mut sigma_edge,
            &mut graph,
            &mut cycles,
            control,
        )?;
        accel.evaluations += 1;
        accel.topped += outcome.topped as u64;
        accel.raised += outcome.raised as u64;
        let evaluation_seconds = evaluation_start.elapsed().as_secs_f64();
        accel.evaluation_seconds += evaluation_seconds;
        if outcome.topped + outcome.raised < n / 64 + 1 {
            // Few changes: lift at least twice as long, and at least 5 times as long as
            // this evaluation took, before the next one.
            let lifts_per_second = run.lifts as f64 / lift_seconds.max(1e-9);
            let matching =
                (5.0 * evaluation_seconds * lifts_per_second).min(u64::MAX as f64 / 2.0) as u64;
            budget = budget.saturating_mul(2).max(matching);
        }
    }
    let stats = SolveStats {
        backend: "auto".into(),
        bound,
        lifts: accel.lifts,
        rounds,
        solve_seconds: start.elapsed().as_secs_f64(),
        ..SolveStats::default()
    };
    let strategy_start = Instant::now();
    match player1_strategy(
        arena,
        &values,
        &sigma_edge,
        &mut graph,
        &mut cycles,
        control,
    )? {
        Some(player1) => {
            accel.strategy_from_evaluations = true;
            let threads = engine.threads();
            let mut solution = Solution::from_parts(arena, values, &player1, stats, threads);
            solution.stats.strategy_seconds = strategy_start.elapsed().as_secs_f64();
            Ok((solution, accel))
        }
        None => Ok((
            Solution::from_credits(arena, values, stats, engine.threads(), control)?,
            accel,
        )),
    }
}

/// Player 1's strategy on `W1`, built from the kept σ1 in layers, each checked (see the
/// module docs); `None` if some part of `W1` cannot be certified that way.
///
/// `S` grows as a trap for player 0 in which σ1 makes every cycle negative: first player
/// 1's attractor to `S` inside `W1` (attractor edges lead to vertices added earlier, so
/// they close no cycle), then the vertices of the rest `R` that cannot reach a nonnegative
/// cycle of `G_σ1` restricted to `R` (their edges stay in that layer or lead into `S`, so
/// every cycle lies in one layer and is negative). Repeat until `R` is empty.
fn player1_strategy(
    arena: &Arena,
    credit: &[u64],
    sigma_edge: &[u32],
    graph: &mut Graph,
    cycles: &mut CycleFinder,
    control: &Control,
) -> Result<Option<Vec<VertexId>>, Interrupted> {
    let n = arena.vertex_count();
    let in_w1: Vec<bool> = credit.iter().map(|&c| c == TOP).collect();
    if !in_w1.contains(&true) {
        // Player 1 wins nowhere: no moves to choose, nothing to check.
        return Ok(Some(vec![NO_MOVE; n]));
    }
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    let mut edge = vec![u32::MAX; n];
    let mut strategy = vec![NO_MOVE; n];
    // Player 0: successors not yet in S.
    let mut open = vec![0u32; n];
    for v in (0..n as VertexId).filter(|&v| in_w1[v as usize]) {
        match arena.owner(v) {
            Player::Zero => {
                if arena.successors(v).any(|(u, _)| !in_w1[u as usize]) {
                    return Ok(None);
                }
                open[v as usize] = arena.succ_range(v).len() as u32;
            }
            Player::One => {
                let kept = sigma_edge[v as usize];
                let e = if kept != u32::MAX && in_w1[targets[kept as usize] as usize] {
                    kept as usize
                } else {
                    match arena
                        .succ_range(v)
                        .filter(|&e| in_w1[targets[e] as usize])
                        .min_by_key(|&e| weights.get(e))
                    {
                        Some(e) => e,
                        None => return Ok(None),
                    }
                };
                edge[v as usize] = lightest_edge(arena, v, targets[e]);
            }
        }
    }
    let mut in_s = vec![false; n];
    let mut remaining = in_w1.iter().filter(|&&b| b).count();
    let mut queue: std::collections::VecDeque<VertexId> = Default::default();
    loop {
        // Attractor of S inside W1.
        while let Some(x) = queue.pop_front() {
            for (p, _) in arena.predecessors(x) {
                if !in_w1[p as usize] || in_s[p as usize] {
                    continue;
                }
                match arena.owner(p) {
                    Player::Zero => {
                        open[p as usize] -= 1;
                        if open[p as usize] != 0 {
                            continue;
                        }
                    }
                    Player::One => {
                        strategy[p as usize] = x;
                        edge[p as usize] = lightest_edge(arena, p, x);
                    }
                }
                in_s[p as usize] = true;
                remaining -= 1;
                queue.push_back(p);
            }
        }
        if remaining == 0 {
            break;
        }
        control.checkpoint()?;
        // Next layer: vertices of R that cannot reach a nonnegative cycle in G_σ1 on R.
        let rest: Vec<bool> = (0..n).map(|v| in_w1[v] && !in_s[v]).collect();
        graph.rebuild(arena, &rest, &edge);
        let (component, count) = graph.components(&rest);
        let good = cycles.nonnegative_components(graph, &component, count, control)?;
        let mut reach = vec![false; n];
        let mut stack: Vec<VertexId> = (0..n as VertexId)
            .filter(|&v| rest[v as usize] && good[component[v as usize] as usize])
            .collect();
        for &v in &stack {
            reach[v as usize] = true;
        }
        while let Some(u) = stack.pop() {
            for &(v, _) in graph.predecessors(u) {
                if !reach[v as usize] {
                    reach[v as usize] = true;
                    stack.push(v);
                }
            }
        }
        let layer: Vec<VertexId> = (0..n as VertexId)
            .filter(|&v| rest[v as usize] && !reach[v as usize])
            .collect();
        if layer.is_empty() {
            return Ok(None);
        }
        for &v in &layer {
            if arena.owner(v) == Player::One {
                strategy[v as usize] = targets[edge[v as usize] as usize];
            }
            in_s[v as usize] = true;
            remaining -= 1;
        }
        // Player-0 vertices outside S lose the successors just added.
        for &v in &layer {
            queue.push_back(v);
        }
    }
    // Belt and braces: check the whole strategy once more, as `egsolve check` would.
    graph.rebuild(arena, &in_w1, &edge);
    let (component, count) = graph.components(&in_w1);
    if cycles
        .nonnegative_components(graph, &component, count, control)?
        .iter()
        .any(|&b| b)
    {
        return Ok(None);
    }
    Ok(Some(strategy))
}

/// The edge of least weight from `v` to `u` (a strategy names only the successor, and
/// player 1 moving to `u` takes the cheapest of parallel edges).
fn lightest_edge(arena: &Arena, v: VertexId, u: VertexId) -> u32 {
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    arena
        .succ_range(v)
        .filter(|&e| targets[e] == u)
        .min_by_key(|&e| weights.get(e))
        .expect("u is a successor of v") as u32
}
