//! Strongly connected components of a filtered subgraph: Tarjan's algorithm without
//! recursion, over successor slices, with its arrays kept between calls so that running it
//! many times on shrinking parts of one graph costs only what each part holds (the parity
//! certificate peels components priority by priority).

use crate::arena::VertexId;

/// `low` of a vertex whose component was emitted.
const DONE: u32 = u32::MAX;

/// Tarjan's algorithm with reusable per-vertex arrays (for graphs of up to `n` vertices).
#[derive(Debug, Clone)]
pub struct SccFinder {
    /// Discovery index and low link of each vertex, side by side (one cache line per
    /// visit). Indices count on across calls: an index below `base` means "not seen in this
    /// call", so no pass resets the array; `low == DONE` means "in an emitted component".
    marks: Vec<(u32, u32)>,
    /// The first index of this call.
    base: u32,
    stack: Vec<VertexId>,
    /// The depth-first path: a vertex and the position of its next successor to look at.
    path: Vec<(VertexId, u32)>,
}

impl SccFinder {
    /// A finder for vertices `0..n`.
    pub fn new(n: usize) -> SccFinder {
        SccFinder {
            marks: vec![(0, DONE); n],
            base: 1,
            stack: Vec::new(),
            path: Vec::new(),
        }
    }

    /// Finds the components of the subgraph induced by the vertices where `include` holds,
    /// reachable from `roots` (roots outside it are skipped), following `successors(v)`
    /// (targets outside the subgraph are ignored). Calls `emit(component, cyclic)` once per
    /// component, in reverse topological order; `cyclic` says whether it holds a cycle
    /// (more than one vertex, or a self-loop).
    pub fn run<'g>(
        &mut self,
        roots: impl IntoIterator<Item = VertexId>,
        successors: impl Fn(VertexId) -> &'g [VertexId],
        include: impl Fn(VertexId) -> bool,
        mut emit: impl FnMut(&[VertexId], bool),
    ) {
        if self.base as usize > (u32::MAX as usize - 1) - self.marks.len() {
            // Indices would run out: start again from a clean array.
            self.marks.iter_mut().for_each(|m| *m = (0, DONE));
            self.base = 1;
        }
        let base = self.base;
        let mut next_index = base;
        for root in roots {
            if self.marks[root as usize].0 >= base || !include(root) {
                continue;
            }
            self.discover(root, &mut next_index);
            while let Some(&(v, position)) = self.path.last() {
                let succ = successors(v);
                if let Some(&u) = succ.get(position as usize) {
                    if let Some(top) = self.path.last_mut() {
                        top.1 += 1;
                    }
                    if !include(u) {
                        continue;
                    }
                    let (index_u, low_u) = self.marks[u as usize];
                    if index_u < base {
                        self.discover(u, &mut next_index);
                    } else if low_u != DONE {
                        let low = &mut self.marks[v as usize].1;
                        *low = (*low).min(index_u);
                    }
                    continue;
                }
                self.path.pop();
                let (index_v, low_v) = self.marks[v as usize];
                if let Some(&(parent, _)) = self.path.last() {
                    let low = &mut self.marks[parent as usize].1;
                    *low = (*low).min(low_v);
                }
                if low_v == index_v {
                    let start = self
                        .stack
                        .iter()
                        .rposition(|&u| u == v)
                        .expect("v is on the stack");
                    let component = &self.stack[start..];
                    let cyclic = component.len() > 1 || succ.contains(&v);
                    emit(component, cyclic);
                    for &u in component {
                        self.marks[u as usize].1 = DONE;
                    }
                    self.stack.truncate(start);
                }
            }
        }
        self.base = next_index;
    }

    fn discover(&mut self, v: VertexId, next_index: &mut u32) {
        self.marks[v as usize] = (*next_index, *next_index);
        *next_index += 1;
        self.stack.push(v);
        self.path.push((v, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Components (sorted, with their cyclic flag) of a graph given as successor lists.
    fn components(succ: &[Vec<u32>], include: impl Fn(u32) -> bool) -> Vec<(Vec<u32>, bool)> {
        let mut finder = SccFinder::new(succ.len());
        let mut out = Vec::new();
        for _ in 0..2 {
            // Twice: the second call must see fresh arrays.
            out.clear();
            finder.run(
                0..succ.len() as u32,
                |v| &succ[v as usize],
                &include,
                |c, cyclic| {
                    let mut c = c.to_vec();
                    c.sort();
                    out.push((c, cyclic));
                },
            );
        }
        out.sort();
        out
    }

    #[test]
    fn finds_components_cycles_and_self_loops() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3, 4 -> 0
        let succ = vec![vec![1], vec![2], vec![0, 3], vec![3], vec![0]];
        assert_eq!(
            components(&succ, |_| true),
            vec![(vec![0, 1, 2], true), (vec![3], true), (vec![4], false)]
        );
        // Without vertex 1 the triangle is broken.
        assert_eq!(
            components(&succ, |v| v != 1),
            vec![
                (vec![0], false),
                (vec![2], false),
                (vec![3], true),
                (vec![4], false)
            ]
        );
    }

    #[test]
    fn emits_in_reverse_topological_order() {
        // 0 -> 1 -> 2 (a chain): sinks first.
        let succ = [vec![1], vec![2], vec![2]];
        let mut order = Vec::new();
        SccFinder::new(3).run(
            [0],
            |v| &succ[v as usize],
            |_| true,
            |c, _| order.push(c[0]),
        );
        assert_eq!(order, vec![2, 1, 0]);
    }
}
