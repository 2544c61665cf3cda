//! The negative-cycle part of the `W1` certificate: in `W1`, with player 1 fixed to its
//! strategy and player 0 free, is there a cycle of weight `>= 0`?
//!
//! The checker's own Tarjan (`super::scc`) splits that graph into strongly connected components;
//! inside each, a cycle of length `<= k` (k = component size) has weight `>= 0` under `w`
//! exactly when it has weight `> 0` under `w' = k·w + 1`, and a queue-based Bellman–Ford
//! (longest paths from a virtual source, `i128`) finds a positive cycle: a vertex whose best
//! path grows to `k` edges lies behind one.

use std::collections::VecDeque;

use super::Claim;
use super::scc::Components;
use crate::arena::{Arena, Player, VertexId};
use crate::solve::TOP;

/// The graph inside `W1` under player 1's strategy: successors of `v`. Player 1 moving to
/// its strategy successor takes the lightest of any parallel edges to it.
fn w1_successors(arena: &Arena, claim: Claim<'_>, v: VertexId) -> Vec<(VertexId, i64)> {
    let in_w1 = |u: VertexId| claim.credit[u as usize] == TOP;
    match arena.owner(v) {
        Player::Zero => arena.successors(v).filter(|&(u, _)| in_w1(u)).collect(),
        Player::One => {
            let choice = claim.strategy[v as usize];
            let lightest = arena
                .successors(v)
                .filter(|&(u, _)| u == choice && in_w1(u))
                .map(|(_, w)| w)
                .min();
            lightest.map(|w| (choice, w)).into_iter().collect()
        }
    }
}

/// Finds the components of `W1` holding a cycle of weight `>= 0`; returns one vertex of
/// each with a description.
pub fn nonnegative_cycles_in_w1(arena: &Arena, claim: Claim<'_>) -> Vec<(VertexId, String)> {
    let in_w1 = |v: VertexId| claim.credit[v as usize] == TOP;
    // The graph inside W1, as successor lists end to end.
    let n = arena.vertex_count();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets: Vec<VertexId> = Vec::new();
    offsets.push(0);
    for v in 0..n as VertexId {
        if in_w1(v) {
            targets.extend(w1_successors(arena, claim, v).into_iter().map(|(u, _)| u));
        }
        offsets.push(targets.len());
    }
    let mut components: Vec<Vec<VertexId>> = Vec::new();
    Components::new(n).each(
        0..n as VertexId,
        |v| &targets[offsets[v as usize]..offsets[v as usize + 1]],
        in_w1,
        |component, _| components.push(component.to_vec()),
    );
    let mut found = Vec::new();
    let mut index_in = vec![u32::MAX; arena.vertex_count()];
    for component in &components {
        for (i, &v) in component.iter().enumerate() {
            index_in[v as usize] = i as u32;
        }
        if let Some(v) = positive_cycle(arena, claim, component, &index_in) {
            found.push((v, format!(
                "player 0 can close a cycle of weight >= 0 inside W1 (component of {} vertices) although player 1 follows its strategy",
                component.len()
            )));
        }
        for &v in component {
            index_in[v as usize] = u32::MAX;
        }
    }
    found
}

/// Bellman–Ford with a FIFO queue on one component: `Some(vertex)` if a positive cycle
/// (under `k·w + 1`) exists.
fn positive_cycle(
    arena: &Arena,
    claim: Claim<'_>,
    component: &[VertexId],
    index_in: &[u32],
) -> Option<VertexId> {
    let k = component.len() as i128;
    let mut dist = vec![0i128; component.len()];
    let mut edges_on_path = vec![0u32; component.len()];
    let mut queued = vec![true; component.len()];
    let mut queue: VecDeque<usize> = (0..component.len()).collect();
    while let Some(i) = queue.pop_front() {
        queued[i] = false;
        let v = component[i];
        for (u, w) in w1_successors(arena, claim, v) {
            let j = index_in[u as usize];
            if j == u32::MAX {
                continue;
            }
            let j = j as usize;
            let candidate = dist[i] + k * w as i128 + 1;
            if candidate > dist[j] {
                dist[j] = candidate;
                edges_on_path[j] = edges_on_path[i] + 1;
                if edges_on_path[j] as i128 >= k {
                    return Some(u);
                }
                if !queued[j] {
                    queued[j] = true;
                    queue.push_back(j);
                }
            }
        }
    }
    None
}
