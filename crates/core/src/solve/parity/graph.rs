//! The game as every parity algorithm reads it: the arena's CSR successors, CSC
//! predecessors and owners beside the compressed priorities, borrowed without a copy
//! ([`Graph`]); and the vertices bucketed by priority ([`Buckets`], a counting sort), which
//! is what Zielonka's heads, priority promotion's levels and fixpoint iteration's rounds
//! walk instead of renumbering the game by priority.
//!
//! The arena may hold parallel edges. Every algorithm here counts an attractor's ways out
//! per edge (successor entries) and takes one off per predecessor entry, so a parallel edge
//! counts twice on both sides and the counts stay right without deduplication.

use crate::arena::{Arena, Player, VertexId};

/// The game: CSR successors, CSC predecessors, owners, compressed priorities.
#[derive(Debug, Clone, Copy)]
pub struct Graph<'a> {
    succ_offsets: &'a [u32],
    succ_targets: &'a [VertexId],
    pred_offsets: &'a [u32],
    pred_sources: &'a [VertexId],
    /// Owner of each vertex.
    pub owner: &'a [Player],
    /// Compressed priority of each vertex.
    pub priority: &'a [u32],
}

impl<'a> Graph<'a> {
    /// The graph of `arena` with `priority` per vertex (`priority.len()` must be the
    /// arena's vertex count; [`super::solve_with`] checks it).
    pub fn new(arena: &'a Arena, priority: &'a [u32]) -> Graph<'a> {
        Graph {
            succ_offsets: arena.succ_offsets(),
            succ_targets: arena.succ_targets(),
            pred_offsets: arena.pred_offsets(),
            pred_sources: arena.pred_sources(),
            owner: arena.owners(),
            priority,
        }
    }

    /// The number of vertices.
    #[inline]
    pub fn vertex_count(&self) -> usize {
        self.owner.len()
    }

    /// The owner of `v` as 0 or 1 (the solvers compare it with a player index).
    #[inline]
    pub fn owner_of(&self, v: VertexId) -> u8 {
        self.owner[v as usize] as u8
    }

    /// The parity of `v`'s priority: the player a play wins whose top priority is `v`'s.
    #[inline]
    pub fn parity(&self, v: VertexId) -> u8 {
        (self.priority[v as usize] % 2) as u8
    }

    /// The successors of `v`.
    #[inline]
    pub fn successors(&self, v: VertexId) -> &'a [VertexId] {
        let v = v as usize;
        &self.succ_targets[self.succ_offsets[v] as usize..self.succ_offsets[v + 1] as usize]
    }

    /// The number of successors of `v`.
    #[inline]
    pub fn degree(&self, v: VertexId) -> u32 {
        let v = v as usize;
        self.succ_offsets[v + 1] - self.succ_offsets[v]
    }

    /// The predecessors of `v` (one entry per edge).
    #[inline]
    pub fn predecessors(&self, v: VertexId) -> &'a [VertexId] {
        let v = v as usize;
        &self.pred_sources[self.pred_offsets[v] as usize..self.pred_offsets[v + 1] as usize]
    }
}

/// Vertices by priority (a counting sort): bucket `p` is `order[start[p]..start[p + 1]]`,
/// in increasing id order, so the buckets of `0..p` are the prefix `order[..start[p]]`.
#[derive(Debug, Clone)]
pub struct Buckets {
    /// All vertices, by increasing priority (ties by increasing id).
    pub order: Vec<VertexId>,
    /// Where each priority's bucket starts in `order` (one more entry than priorities).
    pub start: Vec<u32>,
}

impl Buckets {
    /// The buckets of `priority` (one per vertex).
    pub fn new(priority: &[u32]) -> Buckets {
        let levels = priority.iter().copied().max().map_or(0, |p| p as usize + 1);
        let mut start = vec![0u32; levels + 1];
        for &p in priority {
            start[p as usize + 1] += 1;
        }
        for p in 0..levels {
            start[p + 1] += start[p];
        }
        let mut next = start.clone();
        let mut order = vec![0; priority.len()];
        for (v, &p) in priority.iter().enumerate() {
            order[next[p as usize] as usize] = v as VertexId;
            next[p as usize] += 1;
        }
        Buckets { order, start }
    }

    /// The number of priorities (the highest plus one; 0 for an empty game).
    pub fn levels(&self) -> usize {
        self.start.len() - 1
    }

    /// Where bucket `p` lies in `order`.
    #[inline]
    pub fn range(&self, p: u32) -> std::ops::Range<usize> {
        self.start[p as usize] as usize..self.start[p as usize + 1] as usize
    }

    /// The vertices of priority `p`.
    #[inline]
    pub fn of(&self, p: u32) -> &[VertexId] {
        &self.order[self.range(p)]
    }

    /// The highest priority, if there is a vertex.
    pub fn top(&self) -> Option<u32> {
        (self.start.len() > 1).then(|| self.start.len() as u32 - 2)
    }

    /// Every vertex by decreasing priority, ties by decreasing id (the order in which the
    /// tangle learners take a context's heads).
    pub fn descending(&self) -> Vec<VertexId> {
        self.order.iter().rev().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_sort_by_priority_then_id() {
        let buckets = Buckets::new(&[2, 0, 2, 1, 0]);
        assert_eq!(buckets.order, vec![1, 4, 3, 0, 2]);
        assert_eq!(buckets.of(0), &[1, 4]);
        assert_eq!(buckets.of(2), &[0, 2]);
        assert_eq!((buckets.levels(), buckets.top()), (3, Some(2)));
        assert_eq!(buckets.descending(), vec![2, 0, 3, 4, 1]);
        let empty = Buckets::new(&[]);
        assert_eq!((empty.levels(), empty.top()), (0, None));
    }
}
