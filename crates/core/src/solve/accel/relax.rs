//! Least credits to reach a pinned set in a one-player [`Graph`], computed from above:
//! `g = 0` on the pinned vertices, ⊤ elsewhere, then `g(v) := min_u g(u) ⊖ w` over the
//! successors `u` of `v`, relaxed backwards from the pinned vertices through the vertices
//! of a given set until nothing changes (Bellman–Ford; a fixpoint like lifting, from above).
//!
//! It ends because every cycle through the set that avoids the pinned vertices is negative
//! (the caller guarantees it): such a cycle costs credit, so values never fall around it.
//! The fixpoint is the greatest one below the start, unique whatever the order of the
//! relaxations, so the FIFO queue (one thread) and the frontier rounds with atomic minima
//! (several threads) give the same `g`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::arena::VertexId;
use crate::graph::Graph;
use crate::graph::frontier::next_frontier;
use crate::solve::chunked;
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::{TOP, minus};
use crate::solve::threads::{Threads, positions_where};

/// `g` as in the module docs: 0 on `pinned`, relaxed through the vertices `through[v]`
/// (pinned vertices never change), ⊤ where no path leads to a pinned vertex. Values above
/// `bound` are ⊤.
pub fn credits_to_pinned(
    graph: &Graph,
    pinned: &[bool],
    through: &[bool],
    bound: u64,
    threads: &Threads,
    control: &Control,
) -> Result<Vec<u64>, Interrupted> {
    let n = graph.len();
    let open = |v: VertexId| through[v as usize] && !pinned[v as usize];
    if !threads.parallel(n + graph.edge_count()) {
        let mut g: Vec<u64> = (0..n).map(|v| if pinned[v] { 0 } else { TOP }).collect();
        let mut queued = pinned.to_vec();
        let mut queue: VecDeque<VertexId> =
            (0..n as VertexId).filter(|&v| pinned[v as usize]).collect();
        let mut relaxations = 0u64;
        while let Some(u) = queue.pop_front() {
            queued[u as usize] = false;
            let gu = g[u as usize];
            for (v, w) in graph.predecessors(u) {
                if !open(v) {
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
        return Ok(g);
    }
    threads.install(|| {
        let g: Vec<AtomicU64> =
            chunked::map(n, |v| AtomicU64::new(if pinned[v] { 0 } else { TOP }));
        // The round in which a vertex was last queued (dedupes the next frontier).
        let stamp: Vec<AtomicU32> = chunked::map(n, |_| AtomicU32::new(0));
        let mut frontier: Vec<VertexId> = positions_where(&pinned[..n], |&p| p);
        let mut round = 0u32;
        while !frontier.is_empty() {
            round += 1;
            let relax = |u: VertexId, next: &mut Vec<VertexId>| {
                let gu = g[u as usize].load(Relaxed);
                for (v, w) in graph.predecessors(u) {
                    if !open(v) {
                        continue;
                    }
                    let candidate = minus(gu, w, bound);
                    if candidate < g[v as usize].fetch_min(candidate, Relaxed)
                        && stamp[v as usize].swap(round, Relaxed) != round
                    {
                        next.push(v);
                    }
                }
            };
            frontier = next_frontier(&frontier, relax);
            control.checkpoint()?;
        }
        Ok(chunked::map(n, |v| g[v].load(Relaxed)))
    })
}
