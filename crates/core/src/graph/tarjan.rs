//! The solvers' Tarjan: strongly connected components of a filtered subgraph, without
//! recursion, over successor slices, with its arrays kept between calls so that running it
//! many times on shrinking parts of one graph costs only what each part holds (the tangle
//! search extracts its tangles with it, closed region after closed region). Every solver's
//! sequential components come from here: the evaluations' small parts (`scc`), strategy
//! improvement's subgraphs ([`Csr`], [`nontrivial_components`]), the priority compression
//! per component and the tangle search. The certificate checker keeps its own
//! (`check::scc`), so that a fault here cannot hide in the check.

use crate::arena::VertexId;

/// `low` of a vertex whose component was emitted.
pub const DONE: u32 = u32::MAX;

/// Where a search keeps each vertex's discovery index and low link: [`SccFinder`]'s own
/// array, or arrays that a parallel caller shares between searches of disjoint parts (the
/// forward–backward splits of `super::scc`). An index below the search's `base` means "not
/// seen by this search"; `low == DONE` means "in an emitted component".
pub trait Marks {
    /// `v`'s (index, low).
    fn get(&self, v: VertexId) -> (u32, u32);
    /// Sets `v`'s index and low.
    fn set(&mut self, v: VertexId, index: u32, low: u32);
    /// Sets `v`'s low.
    fn set_low(&mut self, v: VertexId, low: u32);
}

impl Marks for [(u32, u32)] {
    #[inline]
    fn get(&self, v: VertexId) -> (u32, u32) {
        self[v as usize]
    }
    #[inline]
    fn set(&mut self, v: VertexId, index: u32, low: u32) {
        self[v as usize] = (index, low);
    }
    #[inline]
    fn set_low(&mut self, v: VertexId, low: u32) {
        self[v as usize].1 = low;
    }
}

/// Tarjan's algorithm with reusable per-vertex arrays (for graphs of up to `n` vertices).
#[derive(Debug, Clone)]
pub struct SccFinder {
    /// Discovery index and low link of each vertex, side by side (one cache line per
    /// visit). Indices count on across calls: an index below `base` means "not seen in this
    /// call", so no pass resets the array; `low == DONE` means "in an emitted component".
    marks: Vec<(u32, u32)>,
    /// The first index of this call.
    base: u32,
    search: Search,
}

impl SccFinder {
    /// A finder for vertices `0..n`.
    pub fn new(n: usize) -> SccFinder {
        SccFinder {
            marks: vec![(0, DONE); n],
            base: 1,
            search: Search::default(),
        }
    }

    /// Finds the components of the subgraph induced by the vertices where `include` holds,
    /// reachable from `roots` (roots outside it are skipped), following `successors(v)`
    /// (targets outside the subgraph are ignored). Calls `emit(component, cyclic)` once per
    /// component, in reverse topological order, the vertex it was finished at first;
    /// `cyclic` says whether it holds a cycle (more than one vertex, or a self-loop).
    pub fn run<'g>(
        &mut self,
        roots: impl IntoIterator<Item = VertexId>,
        successors: impl Fn(VertexId) -> &'g [VertexId],
        include: impl Fn(VertexId) -> bool,
        emit: impl FnMut(&[VertexId], bool),
    ) {
        if self.base as usize > (u32::MAX as usize - 1) - self.marks.len() {
            // Indices would run out: start again from a clean array.
            self.marks.iter_mut().for_each(|m| *m = (0, DONE));
            self.base = 1;
        }
        let marks = &mut self.marks[..];
        self.base = self
            .search
            .run(marks, self.base, roots, successors, include, emit);
    }
}

/// Tarjan's stack and depth-first path, kept between searches.
#[derive(Debug, Clone, Default)]
pub struct Search {
    stack: Vec<VertexId>,
    /// The depth-first path: a vertex and the position of its next successor to look at.
    path: Vec<(VertexId, u32)>,
}

impl Search {
    /// [`SccFinder::run`] over `marks`, numbering the vertices it discovers from `base` (at
    /// least 1); returns the next free index.
    pub fn run<'g, M: Marks + ?Sized>(
        &mut self,
        marks: &mut M,
        base: u32,
        roots: impl IntoIterator<Item = VertexId>,
        successors: impl Fn(VertexId) -> &'g [VertexId],
        include: impl Fn(VertexId) -> bool,
        mut emit: impl FnMut(&[VertexId], bool),
    ) -> u32 {
        let mut next_index = base;
        for root in roots {
            if marks.get(root).0 >= base || !include(root) {
                continue;
            }
            self.discover(marks, root, &mut next_index);
            while let Some(&(v, position)) = self.path.last() {
                let succ = successors(v);
                if let Some(&u) = succ.get(position as usize) {
                    if let Some(top) = self.path.last_mut() {
                        top.1 += 1;
                    }
                    if !include(u) {
                        continue;
                    }
                    let (index_u, low_u) = marks.get(u);
                    if index_u < base {
                        self.discover(marks, u, &mut next_index);
                    } else if low_u != DONE {
                        let low_v = marks.get(v).1;
                        marks.set_low(v, low_v.min(index_u));
                    }
                    continue;
                }
                self.path.pop();
                let (index_v, low_v) = marks.get(v);
                if let Some(&(parent, _)) = self.path.last() {
                    let low_parent = marks.get(parent).1;
                    marks.set_low(parent, low_parent.min(low_v));
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
                        marks.set_low(u, DONE);
                    }
                    self.stack.truncate(start);
                }
            }
        }
        next_index
    }

    fn discover<M: Marks + ?Sized>(&mut self, marks: &mut M, v: VertexId, next_index: &mut u32) {
        marks.set(v, *next_index, *next_index);
        *next_index += 1;
        self.stack.push(v);
        self.path.push((v, 0));
    }
}

/// A small graph built once and searched on one thread (strategy improvement's subgraphs
/// of small games): edges by source, `v`'s targets at `targets[offsets[v]..offsets[v + 1]]`
/// and beside each its id (an arena edge index).
pub struct Csr {
    offsets: Vec<u32>,
    targets: Vec<VertexId>,
    ids: Vec<u32>,
}

impl Csr {
    /// The graph on `0..n` whose edges `add(v, push)` pushes for each `v` as (target, id).
    pub fn of(n: usize, mut add: impl FnMut(usize, &mut dyn FnMut(VertexId, u32))) -> Csr {
        let mut offsets = Vec::with_capacity(n + 1);
        let (mut targets, mut ids) = (Vec::new(), Vec::new());
        offsets.push(0);
        for v in 0..n {
            add(v, &mut |u, e| {
                targets.push(u);
                ids.push(e);
            });
            offsets.push(targets.len() as u32);
        }
        Csr {
            offsets,
            targets,
            ids,
        }
    }

    /// Vertices (the `n` it was built on).
    pub fn vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Edges.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether it has no edge.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// `v`'s targets.
    pub fn targets(&self, v: usize) -> &[VertexId] {
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// `v`'s edges: (target, id).
    pub fn edges(&self, v: usize) -> impl Iterator<Item = (VertexId, u32)> + '_ {
        let range = self.offsets[v] as usize..self.offsets[v + 1] as usize;
        self.targets[range.clone()]
            .iter()
            .copied()
            .zip(self.ids[range].iter().copied())
    }
}

/// Each vertex's component number where its component holds a cycle (two or more
/// vertices, or a self-loop), `u32::MAX` elsewhere; numbered in the order Tarjan finishes
/// them.
pub fn nontrivial_components(graph: &Csr) -> Vec<u32> {
    let n = graph.vertices();
    let mut component = vec![u32::MAX; n];
    let mut count = 0u32;
    SccFinder::new(n).run(
        0..n as VertexId,
        |v| graph.targets(v as usize),
        |_| true,
        |members, cyclic| {
            if cyclic {
                for &x in members {
                    component[x as usize] = count;
                }
                count += 1;
            }
        },
    );
    component
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
