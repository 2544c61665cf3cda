//! Player 1's winning strategy on `W1`, built in layers and certified by its construction;
//! used by every backend ([`crate::solve::Solution::from_credits`]) before the dual game,
//! which stays the fallback.
//!
//! Start from a move σ1 for each player-1 vertex of `W1` (a seed: the accelerated driver's
//! last σ1, kept at each vertex from the evaluation or attractor that last saw it finite; a
//! lightest edge into `W1` where there is none or it leaves `W1`). Then grow a trap
//! `S ⊆ W1` in which σ1 makes every cycle negative, in layers:
//! - player 1's **attractor** to `S` inside `W1` (a player-1 vertex with a successor in
//!   `S` moves there; a player-0 vertex joins when all its successors have): its moves lead
//!   to lower layers, so they close no cycle;
//! - then the vertices of the rest `R = W1 \ S` that **cannot reach a nonnegative cycle** of
//!   `G_σ1` restricted to `R` (components, the cycle-sign test, backward reachability): their
//!   edges stay in that layer or lead into `S`, and every cycle in the layer is negative.
//!
//! Repeat until `S = W1`. Every cycle of the final strategy lies in one layer and is
//! negative, and `W1` is closed (player 0 cannot leave it, σ1 never does), which is what
//! `egsolve check` certifies. If a round adds nothing, `None`: the caller falls back.
//!
//! Cost: one graph build, then per round an attractor step and, on the part of `R` whose
//! components may still hold a nonnegative cycle (components of `R` refine those of the
//! round before, and a component without one keeps none), components and cycle tests. All
//! of it runs on the solve's threads, and every choice (layers, moves) is independent of
//! them.

use super::attractor::{Layers, NO_LAYER};
use super::cycles::nonnegative_components;
use super::graph::Graph;
use super::reach::reaching;
use super::scc::{NO_COMPONENT, components};
use crate::arena::{Arena, Player, VertexId};
use crate::solve::NO_MOVE;
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::TOP;
use crate::solve::threads::Threads;

/// No seed move at this vertex.
pub const NO_EDGE: u32 = u32::MAX;

/// Player 1's strategy on `W1` (where `credit` is ⊤) from the seed moves `seed` (edge
/// indices, [`NO_EDGE`] for none): `strategy[v]` at the player-1 vertices of `W1`,
/// [`NO_MOVE`] elsewhere; `None` if the layers stop before covering `W1`.
pub fn certified_strategy(
    arena: &Arena,
    credit: &[u64],
    seed: &[u32],
    threads: &Threads,
    control: &Control,
) -> Result<Option<Vec<VertexId>>, Interrupted> {
    let n = arena.vertex_count();
    let in_w1: Vec<bool> = credit.iter().map(|&c| c == TOP).collect();
    let mut strategy = vec![NO_MOVE; n];
    if !in_w1.contains(&true) {
        // Player 1 wins nowhere: no moves to choose, nothing to check.
        return Ok(Some(strategy));
    }
    let Some((edge, open)) = seed_moves(arena, &in_w1, seed) else {
        return Ok(None);
    };
    let mut graph = Graph::default();
    graph.rebuild(arena, &in_w1, &edge, threads);
    let mut layers = Layers {
        layer: vec![NO_LAYER; n],
        open,
    };
    // Vertices whose component may still hold a nonnegative cycle.
    let mut maybe_good = in_w1.clone();
    let mut frontier: Vec<VertexId> = Vec::new();
    let mut next_layer = 0u32;
    loop {
        if !frontier.is_empty() {
            let first = next_layer - 1;
            let (_, next) = layers.grow(
                arena,
                std::mem::take(&mut frontier),
                first,
                |_, _, _| true,
                |p| in_w1[p as usize],
                threads,
            );
            next_layer = next;
        }
        let rest: Vec<bool> = (0..n)
            .map(|v| in_w1[v] && layers.layer[v] == NO_LAYER)
            .collect();
        if !rest.contains(&true) {
            break;
        }
        control.checkpoint()?;
        // Next layer: the vertices of R that cannot reach a nonnegative cycle in G_σ1 on R.
        let redo: Vec<bool> = (0..n).map(|v| rest[v] && maybe_good[v]).collect();
        let (component, count) = components(&graph, &redo, threads);
        let good = nonnegative_components(&graph, &component, count, threads, control)?;
        for v in 0..n {
            maybe_good[v] = redo[v] && component[v] != NO_COMPONENT && good[component[v] as usize];
        }
        let reach = reaching(&graph, &rest, |v| maybe_good[v], threads);
        let layer: Vec<VertexId> = (0..n as VertexId)
            .filter(|&v| rest[v as usize] && !reach[v as usize])
            .collect();
        tracing::debug!(
            rest = rest.iter().filter(|&&r| r).count(),
            redo = redo.iter().filter(|&&r| r).count(),
            components = count,
            layer = layer.len(),
            "player 1's strategy: a layer"
        );
        if layer.is_empty() {
            return Ok(None);
        }
        let targets = arena.succ_targets();
        for &v in &layer {
            layers.layer[v as usize] = next_layer;
            if arena.owner(v) == Player::One {
                strategy[v as usize] = targets[edge[v as usize] as usize];
            }
        }
        next_layer += 1;
        // Player-0 vertices outside S lose the successors just added.
        frontier = layer;
    }
    // Moves of the vertices the attractor took: their first edge to a lower layer.
    for v in 0..n as VertexId {
        if in_w1[v as usize] && arena.owner(v) == Player::One && strategy[v as usize] == NO_MOVE {
            let e = layers
                .downward_edge(arena, v)
                .expect("an attracted player-1 vertex has an edge to a lower layer");
            strategy[v as usize] = arena.succ_targets()[e];
        }
    }
    Ok(Some(strategy))
}

/// σ1 on `W1` from the seed (a kept edge staying in `W1`, else a lightest edge into `W1`;
/// among parallel edges to the chosen successor, the lightest, which a move to it means),
/// and player 0's counters of successors. `None` if `W1` is not closed (a player-0 vertex
/// with a successor outside, or a player-1 vertex without one inside): not a true `W1`.
fn seed_moves(arena: &Arena, in_w1: &[bool], seed: &[u32]) -> Option<(Vec<u32>, Vec<u32>)> {
    let n = arena.vertex_count();
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    let mut edge = vec![NO_EDGE; n];
    let mut open = vec![0u32; n];
    for v in (0..n as VertexId).filter(|&v| in_w1[v as usize]) {
        match arena.owner(v) {
            Player::Zero => {
                if arena.successors(v).any(|(u, _)| !in_w1[u as usize]) {
                    return None;
                }
                open[v as usize] = arena.succ_range(v).len() as u32;
            }
            Player::One => {
                let kept = seed[v as usize];
                let e = if kept != NO_EDGE && in_w1[targets[kept as usize] as usize] {
                    kept as usize
                } else {
                    arena
                        .succ_range(v)
                        .filter(|&e| in_w1[targets[e] as usize])
                        .min_by_key(|&e| weights.get(e))?
                };
                edge[v as usize] = lightest_edge(arena, v, targets[e]);
            }
        }
    }
    Some((edge, open))
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
