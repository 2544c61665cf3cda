//! The certificate checker's own strongly connected components: Tarjan's algorithm without
//! recursion, over successor slices, restricted to the vertices a filter keeps. It is a
//! second, independent copy on purpose: the solvers' Tarjan (`crate::graph::tarjan`) finds
//! the components the solvers' strategies are built on, and a fault there must not be able
//! to hide in the check that certifies those strategies. It is kept small and plain; its
//! arrays are reused across calls, and a call resets only the vertices it visited, so
//! peeling a region part after part (`super::parity`) costs what the parts hold.

use crate::arena::VertexId;

/// Not visited by the current call.
const UNVISITED: u32 = u32::MAX;

/// Tarjan's algorithm with arrays for vertices `0..n`, reused across calls.
pub(super) struct Components {
    /// Discovery index of each vertex in the current call ([`UNVISITED`] outside it).
    index: Vec<u32>,
    /// Lowest index reachable through the depth-first tree and one back edge.
    low: Vec<u32>,
    /// Whether the vertex is on Tarjan's stack (visited, its component not yet emitted).
    on_stack: Vec<bool>,
    /// Vertices visited by the current call, to reset afterwards.
    visited: Vec<VertexId>,
    stack: Vec<VertexId>,
    /// The depth-first path: a vertex and how many of its successors were looked at.
    path: Vec<(VertexId, usize)>,
}

impl Components {
    /// Arrays for vertices `0..n`.
    pub(super) fn new(n: usize) -> Components {
        Components {
            index: vec![UNVISITED; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            visited: Vec::new(),
            stack: Vec::new(),
            path: Vec::new(),
        }
    }

    /// Calls `emit(component, cyclic)` for each strongly connected component of the
    /// subgraph induced by the vertices `keep` holds, reachable from `roots` (roots it does
    /// not keep are skipped), in reverse topological order; `cyclic`: the component holds a
    /// cycle (two or more vertices, or a self-loop).
    pub(super) fn each<'g>(
        &mut self,
        roots: impl IntoIterator<Item = VertexId>,
        successors: impl Fn(VertexId) -> &'g [VertexId],
        keep: impl Fn(VertexId) -> bool,
        mut emit: impl FnMut(&[VertexId], bool),
    ) {
        let mut counter = 0u32;
        for root in roots {
            if !keep(root) || self.index[root as usize] != UNVISITED {
                continue;
            }
            self.enter(root, &mut counter);
            while let Some(&(v, next)) = self.path.last() {
                let out = successors(v);
                if next < out.len() {
                    self.path.last_mut().expect("a vertex on the path").1 += 1;
                    let u = out[next];
                    if !keep(u) {
                        continue;
                    }
                    if self.index[u as usize] == UNVISITED {
                        self.enter(u, &mut counter);
                    } else if self.on_stack[u as usize] {
                        self.low[v as usize] = self.low[v as usize].min(self.index[u as usize]);
                    }
                    continue;
                }
                self.path.pop();
                if let Some(&(parent, _)) = self.path.last() {
                    self.low[parent as usize] = self.low[parent as usize].min(self.low[v as usize]);
                }
                if self.low[v as usize] != self.index[v as usize] {
                    continue;
                }
                let mut start = self.stack.len();
                loop {
                    start -= 1;
                    let u = self.stack[start];
                    self.on_stack[u as usize] = false;
                    if u == v {
                        break;
                    }
                }
                let component = &self.stack[start..];
                emit(component, component.len() > 1 || out.contains(&v));
                self.stack.truncate(start);
            }
        }
        for &v in &self.visited {
            self.index[v as usize] = UNVISITED;
        }
        self.visited.clear();
    }

    fn enter(&mut self, v: VertexId, counter: &mut u32) {
        self.index[v as usize] = *counter;
        self.low[v as usize] = *counter;
        *counter += 1;
        self.on_stack[v as usize] = true;
        self.visited.push(v);
        self.stack.push(v);
        self.path.push((v, 0));
    }
}
