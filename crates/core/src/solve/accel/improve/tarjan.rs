//! A small adjacency list ([`Csr`]: targets and edge ids by source) and Tarjan's strongly
//! connected components on it, iteratively, for the graphs strategy improvement builds
//! (subgraphs of small games, built and searched on one thread).

/// Edges by source: `heads[offsets[v]..offsets[v + 1]]` are `v`'s (target, edge id).
pub(super) struct Csr {
    offsets: Vec<u32>,
    heads: Vec<(u32, u32)>,
}

impl Csr {
    /// The graph on `0..n` whose edges `add(v, push)` pushes for each `v`.
    pub(super) fn of(n: usize, mut add: impl FnMut(usize, &mut dyn FnMut(u32, u32))) -> Csr {
        let mut offsets = Vec::with_capacity(n + 1);
        let mut heads = Vec::new();
        offsets.push(0);
        for v in 0..n {
            add(v, &mut |u, e| heads.push((u, e)));
            offsets.push(heads.len() as u32);
        }
        Csr { offsets, heads }
    }

    /// Vertices (the `n` it was built on).
    pub(super) fn vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Edges.
    pub(super) fn len(&self) -> usize {
        self.heads.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// `v`'s edges: (target, edge id).
    pub(super) fn edges(&self, v: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.heads[self.offsets[v] as usize..self.offsets[v + 1] as usize]
            .iter()
            .copied()
    }
}

/// Each vertex's component number where its component holds a cycle (two or more
/// vertices, or a self-loop), `u32::MAX` elsewhere.
pub(super) fn nontrivial_components(graph: &Csr) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let n = graph.vertices();
    let mut component = vec![u32::MAX; n];
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // The call stack: a vertex and how many of its edges were followed.
    let mut calls: Vec<(u32, u32)> = Vec::new();
    let (mut next, mut count) = (0u32, 0u32);
    for root in 0..n {
        if index[root] != UNSEEN || graph.offsets[root] == graph.offsets[root + 1] {
            continue;
        }
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        calls.push((root as u32, graph.offsets[root]));
        while let Some(&mut (v, ref mut at)) = calls.last_mut() {
            let v = v as usize;
            if *at < graph.offsets[v + 1] {
                let u = graph.heads[*at as usize].0 as usize;
                *at += 1;
                if index[u] == UNSEEN {
                    index[u] = next;
                    low[u] = next;
                    next += 1;
                    stack.push(u as u32);
                    on_stack[u] = true;
                    calls.push((u as u32, graph.offsets[u]));
                } else if on_stack[u] {
                    low[v] = low[v].min(index[u]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v]);
            }
            if low[v] != index[v] {
                continue;
            }
            let start = stack
                .iter()
                .rposition(|&x| x as usize == v)
                .expect("on the stack");
            let cyclic = stack.len() - start > 1 || graph.edges(v).any(|(u, _)| u as usize == v);
            for &x in &stack[start..] {
                on_stack[x as usize] = false;
                if cyclic {
                    component[x as usize] = count;
                }
            }
            count += cyclic as u32;
            stack.truncate(start);
        }
    }
    component
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_with_cycles_only() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3, 4 -> 0, 5 alone.
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 0)];
        let graph = Csr::of(6, |v, push| {
            for (i, &(a, b)) in edges.iter().enumerate() {
                if a == v {
                    push(b as u32, i as u32);
                }
            }
        });
        let c = nontrivial_components(&graph);
        assert_eq!(c[0], c[1]);
        assert_eq!(c[1], c[2]);
        assert_ne!(c[0], u32::MAX);
        assert_ne!(c[3], u32::MAX);
        assert_ne!(c[3], c[0]);
        assert_eq!((c[4], c[5]), (u32::MAX, u32::MAX));
    }
}
