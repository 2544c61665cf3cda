//! A compact copy of the subgraph that a set of vertices induces: local ids `0..k` in the
//! order given, CSR successors and predecessors between them only, and their priorities.
//! Built sequentially, the predecessors are made when first asked for, by transposing the
//! successors: the winner-controlled cycles' search needs them only where it finds a cycle
//! (on counter-rr 20000, none: they were two fifths of the copy's time there). Built in
//! parallel, they are made with the rest from the game's own lists (on the H200 host's
//! Hesselink, whose cycles take 843 k vertices, a sequential transposition made the
//! presolve 9–11 % slower).
//! The component searches of the winner-controlled cycles ([`super::controlled`]) run on
//! it: on a large game the candidates are a fraction of the vertices, and their compact
//! arrays stay in the caches where the game's would not. Built in parallel when asked
//! (on the pool the caller installed).

use std::sync::OnceLock;

use super::graph::Graph;
use crate::arena::VertexId;
use crate::solve::chunked;

/// Local id of a vertex outside the set.
const OUTSIDE: u32 = u32::MAX;

/// The induced subgraph: local ids, edges between them, priorities, and the game's ids.
#[derive(Debug)]
pub struct Induced {
    succ_offsets: Vec<u32>,
    succ: Vec<u32>,
    /// Offsets and sources of the predecessors, once asked for.
    pred: OnceLock<(Vec<u32>, Vec<u32>)>,
    /// Priority of each local vertex.
    pub priority: Vec<u32>,
    /// The game's id of each local vertex.
    pub global: Vec<VertexId>,
}

impl Induced {
    /// The subgraph of `game` induced by `vertices` (distinct), local ids in their order.
    pub fn new(game: Graph<'_>, vertices: Vec<VertexId>, parallel: bool) -> Induced {
        let mut local = vec![OUTSIDE; game.vertex_count()];
        for (i, &v) in vertices.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        let local = &local[..];
        let (succ_offsets, succ) = csr(&vertices, parallel, |v| inside(local, game.successors(v)));
        let pred = if parallel {
            OnceLock::from(csr(&vertices, true, |v| {
                inside(local, game.predecessors(v))
            }))
        } else {
            OnceLock::new()
        };
        let priority = vertices
            .iter()
            .map(|&v| game.priority[v as usize])
            .collect();
        Induced {
            succ_offsets,
            succ,
            pred,
            priority,
            global: vertices,
        }
    }

    /// The number of vertices.
    pub fn len(&self) -> usize {
        self.global.len()
    }

    /// The successors of local vertex `v` inside the set.
    #[inline]
    pub fn successors(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.succ[self.succ_offsets[v] as usize..self.succ_offsets[v + 1] as usize]
    }

    /// The predecessors of local vertex `v` inside the set.
    #[inline]
    pub fn predecessors(&self, v: u32) -> &[u32] {
        let (offsets, sources) = self
            .pred
            .get_or_init(|| transpose(&self.succ_offsets, &self.succ));
        let v = v as usize;
        &sources[offsets[v] as usize..offsets[v + 1] as usize]
    }
}

/// The predecessor lists (offsets, sources, each list ascending) of the CSR successor
/// lists `offsets`/`targets`: the arenas' stable transpose, without weights.
fn transpose(offsets: &[u32], targets: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut pred_offsets = vec![0u32; offsets.len()];
    let mut sources = vec![0u32; targets.len()];
    let none = vec![(); targets.len()];
    crate::arena::transpose_into(
        offsets,
        targets,
        &none,
        &mut pred_offsets,
        &mut sources,
        &mut vec![(); targets.len()],
    );
    (pred_offsets, sources)
}

/// The local ids of the vertices of `list` that are in the set.
fn inside<'a>(local: &'a [u32], list: &'a [VertexId]) -> impl Iterator<Item = u32> + 'a {
    list.iter()
        .map(|&u| local[u as usize])
        .filter(|&i| i != OUTSIDE)
}

/// Offsets and targets of the lists `edges(v)` of `vertices`, in their order.
fn csr<I: Iterator<Item = u32>>(
    vertices: &[VertexId],
    parallel: bool,
    edges: impl Fn(VertexId) -> I + Sync + Send,
) -> (Vec<u32>, Vec<u32>) {
    let (counts, targets): (Vec<u32>, Vec<u32>) = if parallel {
        let counts = chunked::map(vertices.len(), |i| edges(vertices[i]).count() as u32);
        (
            counts,
            chunked::flat_map(vertices.len(), |i| edges(vertices[i])),
        )
    } else {
        let counts = vertices.iter().map(|&v| edges(v).count() as u32).collect();
        (counts, vertices.iter().flat_map(|&v| edges(v)).collect())
    };
    let mut offsets = Vec::with_capacity(counts.len() + 1);
    let mut sum = 0u32;
    offsets.push(0);
    for count in counts {
        sum += count;
        offsets.push(sum);
    }
    (offsets, targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{Arena, EdgeList, Player};

    /// Edges leaving the set are dropped, local ids follow the given order, and the
    /// sequential and parallel builds agree.
    #[test]
    fn keeps_the_edges_inside_in_local_ids() {
        let mut list = EdgeList::default();
        for (s, t) in [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (1, 0)] {
            list.push(s, t, 0);
        }
        let arena = Arena::from_edges(vec![Player::Zero; 4], list, None).expect("valid");
        let priority = [5, 6, 7, 8];
        let game = Graph::new(&arena, &priority);
        for parallel in [false, true] {
            let sub = Induced::new(game, vec![2, 0, 1], parallel);
            assert_eq!(sub.len(), 3);
            assert_eq!(sub.priority, vec![7, 5, 6]);
            assert_eq!(sub.successors(0), &[1]); // 2 -> 0 (2 -> 3 dropped)
            assert_eq!(sub.successors(2), &[0, 1]); // 1 -> 2, 1 -> 0
            let mut into_0 = sub.predecessors(1).to_vec(); // 0 <- 2, 0 <- 1
            into_0.sort_unstable();
            assert_eq!(into_0, vec![0, 2]);
            assert_eq!(sub.global[2], 1);
        }
    }
}
