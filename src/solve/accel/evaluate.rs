//! One evaluation: from values `f <= f*`, derive a positional strategy σ1 of player 1, and
//! raise `f` to a lower bound of `f*` computed in the one-player graph `G_σ1` (see the
//! module docs of [`super`] for why each step is sound).

use std::collections::VecDeque;

use super::attractor::attract_top;
use super::cycles::CycleFinder;
use super::graph::{Graph, NO_COMPONENT};
use crate::arena::{Arena, Player, VertexId};
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::{TOP, minus};

/// What one evaluation changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Outcome {
    /// Vertices set to ⊤ (they cannot reach a nonnegative cycle of `G_σ1`).
    pub topped: usize,
    /// Vertices raised to a larger finite value.
    pub raised: usize,
}

/// σ1 at every player-1 vertex with a finite value: the successor edge maximising
/// `f(u) ⊖ w`, ties broken by the smallest weight, then the first edge. Vertices at ⊤ keep
/// the edge they had (the one chosen while their value was finite, if any).
pub(super) fn choose_strategy(arena: &Arena, values: &[u64], bound: u64, sigma_edge: &mut [u32]) {
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    for v in 0..arena.vertex_count() as VertexId {
        if arena.owner(v) != Player::One || values[v as usize] == TOP {
            continue;
        }
        let mut best = u32::MAX;
        let mut best_key = (0u64, 0i64);
        for e in arena.succ_range(v) {
            let key = (
                minus(values[targets[e] as usize], weights.get(e), bound),
                -weights.get(e),
            );
            if best == u32::MAX || key > best_key {
                best = e as u32;
                best_key = key;
            }
        }
        sigma_edge[v as usize] = best;
    }
}

/// One evaluation of σ1 (`sigma_edge`, chosen by [`choose_strategy`]) against `values`,
/// followed by player 1's attractor to ⊤ (which records its edges in `sigma_edge`).
pub(super) fn evaluate(
    arena: &Arena,
    values: &mut [u64],
    bound: u64,
    sigma_edge: &mut [u32],
    graph: &mut Graph,
    cycles: &mut CycleFinder,
    control: &Control,
) -> Result<Outcome, Interrupted> {
    let n = arena.vertex_count();
    let finite: Vec<bool> = values.iter().map(|&f| f != TOP).collect();
    graph.rebuild(arena, &finite, sigma_edge);
    let graph = &*graph;
    control.checkpoint()?;

    // U: vertices that can reach a nonnegative cycle of G_σ1 (minus the ⊤ vertices).
    let (component, count) = graph.components(&finite);
    let good = cycles.nonnegative_components(graph, &component, count, control)?;
    let mut reach = vec![false; n];
    let mut stack: Vec<VertexId> = (0..n as VertexId)
        .filter(|&v| component[v as usize] != NO_COMPONENT && good[component[v as usize] as usize])
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
    let mut outcome = Outcome::default();
    for v in 0..n {
        if finite[v] && !reach[v] {
            values[v] = TOP;
            outcome.topped += 1;
        }
    }
    if outcome.topped > 0 {
        outcome.topped += attract_top(arena, values, bound, sigma_edge);
    }
    control.checkpoint()?;

    // Z': vertices of U at 0, plus every component of U \ Z' that still has a nonnegative
    // cycle, so that every nonnegative cycle of G_σ1 inside U meets Z'.
    let mut pinned: Vec<bool> = (0..n).map(|v| reach[v] && values[v] == 0).collect();
    let rest: Vec<bool> = (0..n)
        .map(|v| reach[v] && !pinned[v] && values[v] != TOP)
        .collect();
    if !rest.iter().any(|&b| b) {
        // Nothing finite above 0 in U: g = 0 on U, nothing to raise.
        return Ok(outcome);
    }
    let (rest_component, rest_count) = graph.components(&rest);
    let rest_good = cycles.nonnegative_components(graph, &rest_component, rest_count, control)?;
    for v in 0..n {
        let c = rest_component[v];
        if c != NO_COMPONENT && rest_good[c as usize] {
            pinned[v] = true;
        }
    }

    // g: least deficit of a path to Z' (greatest fixpoint from above; every cycle outside
    // Z' is negative, so the FIFO relaxation ends).
    let mut g: Vec<u64> = (0..n).map(|v| if pinned[v] { 0 } else { TOP }).collect();
    let mut queued = pinned.clone();
    let mut queue: VecDeque<VertexId> =
        (0..n as VertexId).filter(|&v| pinned[v as usize]).collect();
    let mut relaxations = 0u64;
    while let Some(u) = queue.pop_front() {
        queued[u as usize] = false;
        let gu = g[u as usize];
        for &(v, w) in graph.predecessors(u) {
            // Only through finite vertices of U: every cycle there avoiding Z' is negative.
            if !reach[v as usize] || pinned[v as usize] || values[v as usize] == TOP {
                continue;
            }
            let candidate = minus(gu, w, bound);
            if candidate < g[v as usize] {
                g[v as usize] = candidate;
                relaxations += 1;
                if relaxations % (1 << 20) == 0 {
                    control.checkpoint()?;
                }
                if !queued[v as usize] {
                    queued[v as usize] = true;
                    queue.push_back(v);
                }
            }
        }
    }
    for v in 0..n {
        if reach[v] && g[v] > values[v] {
            if g[v] == TOP {
                outcome.topped += 1;
            } else {
                outcome.raised += 1;
            }
            values[v] = g[v];
        }
    }
    tracing::debug!(
        components = count,
        topped = outcome.topped,
        raised = outcome.raised,
        "accel evaluation"
    );
    Ok(outcome)
}
