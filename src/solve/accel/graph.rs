//! The one-player graphs the accelerated solver evaluates: a subgraph of the arena where
//! player 1's vertices keep only the edge of a fixed positional strategy σ1, stored as CSR
//! (successors) and CSC (predecessors) over the arena's vertex ids, plus Tarjan's strongly
//! connected components of any vertex subset of it.

use crate::arena::{Arena, Player, VertexId};

/// Marks "no strongly connected component" (vertex outside the subset).
pub(super) const NO_COMPONENT: u32 = u32::MAX;

/// A subgraph over the arena's vertex ids (inactive vertices have no edges).
#[derive(Debug, Default)]
pub(super) struct Graph {
    succ_offsets: Vec<u32>,
    succ: Vec<(VertexId, i64)>,
    pred_offsets: Vec<u32>,
    pred: Vec<(VertexId, i64)>,
}

impl Graph {
    /// Rebuilds this graph (reusing its buffers) as `G_σ1` restricted to `active`: player-0
    /// vertices keep every edge into `active`, player-1 vertices keep their σ1 edge (index
    /// into the arena's CSR arrays) if its target is active.
    pub(super) fn rebuild(&mut self, arena: &Arena, active: &[bool], sigma_edge: &[u32]) {
        let n = arena.vertex_count();
        let targets = arena.succ_targets();
        let weights = arena.succ_weights();
        let offsets = arena.succ_offsets();
        self.succ_offsets.clear();
        self.succ.clear();
        self.succ_offsets.push(0);
        for v in 0..n {
            if active[v] {
                if arena.owner(v as VertexId) == Player::Zero {
                    for e in offsets[v] as usize..offsets[v + 1] as usize {
                        if active[targets[e] as usize] {
                            self.succ.push((targets[e], weights.get(e)));
                        }
                    }
                } else {
                    let e = sigma_edge[v] as usize;
                    if active[targets[e] as usize] {
                        self.succ.push((targets[e], weights.get(e)));
                    }
                }
            }
            self.succ_offsets.push(self.succ.len() as u32);
        }
        // Predecessors by counting sort.
        self.pred_offsets.clear();
        self.pred_offsets.resize(n + 1, 0);
        for &(u, _) in &self.succ {
            self.pred_offsets[u as usize + 1] += 1;
        }
        for i in 0..n {
            self.pred_offsets[i + 1] += self.pred_offsets[i];
        }
        self.pred.clear();
        self.pred.resize(self.succ.len(), (0, 0));
        let mut fill = self.pred_offsets[..n].to_vec();
        for v in 0..n {
            for i in self.succ_offsets[v] as usize..self.succ_offsets[v + 1] as usize {
                let (u, w) = self.succ[i];
                let slot = &mut fill[u as usize];
                self.pred[*slot as usize] = (v as VertexId, w);
                *slot += 1;
            }
        }
    }

    /// Number of vertex slots (the arena's vertex count).
    pub(super) fn len(&self) -> usize {
        self.succ_offsets.len() - 1
    }

    /// `(successor, weight)` of `v` in this graph.
    #[inline]
    pub(super) fn successors(&self, v: VertexId) -> &[(VertexId, i64)] {
        &self.succ
            [self.succ_offsets[v as usize] as usize..self.succ_offsets[v as usize + 1] as usize]
    }

    /// `(predecessor, weight of predecessor → v)` of `v` in this graph.
    #[inline]
    pub(super) fn predecessors(&self, v: VertexId) -> &[(VertexId, i64)] {
        &self.pred
            [self.pred_offsets[v as usize] as usize..self.pred_offsets[v as usize + 1] as usize]
    }

    /// Strongly connected components of the subgraph induced by `inside` (iterative Tarjan).
    /// Returns the component of each vertex ([`NO_COMPONENT`] outside) and the number of
    /// components.
    pub(super) fn components(&self, inside: &[bool]) -> (Vec<u32>, u32) {
        let n = self.len();
        let mut component = vec![NO_COMPONENT; n];
        let mut index = vec![u32::MAX; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut stack: Vec<VertexId> = Vec::new();
        // (vertex, next successor position)
        let mut calls: Vec<(VertexId, u32)> = Vec::new();
        let mut next_index = 0u32;
        let mut count = 0u32;
        for root in 0..n as VertexId {
            if !inside[root as usize] || index[root as usize] != u32::MAX {
                continue;
            }
            calls.push((root, 0));
            index[root as usize] = next_index;
            low[root as usize] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            while let Some(&mut (v, ref mut pos)) = calls.last_mut() {
                let succ = self.successors(v);
                let mut descended = false;
                while (*pos as usize) < succ.len() {
                    let u = succ[*pos as usize].0;
                    *pos += 1;
                    if !inside[u as usize] {
                        continue;
                    }
                    if index[u as usize] == u32::MAX {
                        index[u as usize] = next_index;
                        low[u as usize] = next_index;
                        next_index += 1;
                        stack.push(u);
                        on_stack[u as usize] = true;
                        calls.push((u, 0));
                        descended = true;
                        break;
                    } else if on_stack[u as usize] {
                        low[v as usize] = low[v as usize].min(index[u as usize]);
                    }
                }
                if descended {
                    continue;
                }
                calls.pop();
                if let Some(&(parent, _)) = calls.last() {
                    low[parent as usize] = low[parent as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    loop {
                        let x = stack.pop().expect("Tarjan stack holds the component");
                        on_stack[x as usize] = false;
                        component[x as usize] = count;
                        if x == v {
                            break;
                        }
                    }
                    count += 1;
                }
            }
        }
        (component, count)
    }
}
