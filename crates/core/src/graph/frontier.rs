//! One round of a frontier search: every vertex of the frontier expanded by the caller's
//! step into the next frontier, on one thread while the frontier is small and in chunks on
//! the current pool's threads once it is large. Player 1's attractor ([`super::attractor`])
//! and the evaluations' relaxation (`solve::accel::relax`) both step this way; what a step
//! does, and how it keeps a vertex from joining twice, is theirs.

use crate::arena::VertexId;
use crate::solve::chunked;

/// Frontiers smaller than this are expanded on one thread.
pub(crate) const PARALLEL_FROM: usize = 1 << 11;

/// The next frontier: what `step` pushes for each vertex of `frontier`.
pub(crate) fn next_frontier(
    frontier: &[VertexId],
    step: impl Fn(VertexId, &mut Vec<VertexId>) + Sync,
) -> Vec<VertexId> {
    let expand = |vertices: &[VertexId]| {
        let mut next = Vec::new();
        for &x in vertices {
            step(x, &mut next);
        }
        next
    };
    if frontier.len() < PARALLEL_FROM {
        expand(frontier)
    } else {
        // Chunks of at least 256 vertices, about four per thread (each task's vector of
        // pushes is one allocation: many small ones cost more than they balance).
        let chunk = chunked::chunk_len(frontier.len()).max(256);
        chunked::concatenated(chunked::values_of_chunks(
            frontier.len(),
            chunk,
            |_, chunk| expand(&frontier[chunk]),
        ))
    }
}
