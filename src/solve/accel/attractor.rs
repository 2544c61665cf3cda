//! Player 1's attractor to ⊤: the part of lifting that only moves vertices to ⊤ (a
//! player-1 vertex with a successor `u` where `f(u) ⊖ w = ⊤`, a player-0 vertex all of
//! whose successors give ⊤), done in one linear pass instead of by the lifting engine.
//! Being lifts, these steps keep `f <= f*`.

use std::collections::VecDeque;

use crate::arena::{Arena, Player, VertexId};
use crate::solve::energy::{TOP, minus};

/// Sets to ⊤ every vertex that lifting would set to ⊤ from `values` by ⊤ alone. At
/// player-1 vertices moved because a successor is itself ⊤, `sigma_edge` records that
/// edge. Returns how many vertices moved.
pub(super) fn attract_top(
    arena: &Arena,
    values: &mut [u64],
    bound: u64,
    sigma_edge: &mut [u32],
) -> usize {
    let n = arena.vertex_count();
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    // Player 0: successors whose edge does not give ⊤ yet.
    let mut open = vec![0u32; n];
    let mut queue = VecDeque::new();
    let mut moved = 0;
    let before = values.to_vec();
    for v in 0..n as VertexId {
        if values[v as usize] == TOP {
            continue;
        }
        let range = arena.succ_range(v);
        let top_edge = range
            .clone()
            .find(|&e| minus(before[targets[e] as usize], weights.get(e), bound) == TOP);
        match arena.owner(v) {
            Player::Zero => {
                open[v as usize] = range
                    .filter(|&e| minus(before[targets[e] as usize], weights.get(e), bound) != TOP)
                    .count() as u32;
                if open[v as usize] == 0 {
                    values[v as usize] = TOP;
                    queue.push_back(v);
                }
            }
            Player::One => {
                if let Some(e) = top_edge {
                    values[v as usize] = TOP;
                    if before[targets[e] as usize] == TOP {
                        sigma_edge[v as usize] = e as u32;
                    }
                    queue.push_back(v);
                }
            }
        }
    }
    moved += queue.len();
    while let Some(x) = queue.pop_front() {
        let old = before[x as usize];
        for (p, w) in arena.predecessors(x) {
            if values[p as usize] == TOP || minus(old, w, bound) == TOP {
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
                    let e = arena
                        .succ_range(p)
                        .find(|&e| targets[e] == x && weights.get(e) == w)
                        .expect("the predecessor has the edge");
                    sigma_edge[p as usize] = e as u32;
                }
            }
            values[p as usize] = TOP;
            moved += 1;
            queue.push_back(p);
        }
    }
    moved
}
