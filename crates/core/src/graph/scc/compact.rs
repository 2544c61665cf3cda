//! Tarjan's algorithm ([`SccFinder`]) for the parts the parallel splits leave small: over a
//! subset of the graph, and over a few members of a large graph through a compact CSR of their edges among
//! themselves (`member_roots`, which the host's remainder of an engine's components shares).

use crate::arena::VertexId;
use crate::graph::Graph;
use crate::graph::tarjan::SccFinder;
use crate::solve::chunked;
use crate::solve::threads::filled_in_parallel;

use super::*;

/// Tarjan over a few `members` (sorted ids) of a large graph ([`member_roots`]), so that
/// nothing but the answer is as large as the graph (the evaluation's second decomposition
/// is often a handful of vertices in millions, where the parallel algorithm's arrays and
/// passes over every vertex cost tens of milliseconds). Runs on the calling thread's pool
/// (inside [`Threads::install`]).
pub(super) fn tarjan_compact(graph: &Graph, members: &[VertexId]) -> (Vec<u32>, u32) {
    let root = member_roots(members, |v| graph.successor_ids(v).iter().copied(), true);
    // Components numbered in the order of their roots' positions.
    let mut number = vec![NO_COMPONENT; members.len()];
    let mut count = 0u32;
    for (x, &r) in root.iter().enumerate() {
        if r as usize == x {
            number[x] = count;
            count += 1;
        }
    }
    let mut component = filled_in_parallel(graph.len(), NO_COMPONENT);
    for (&v, &r) in members.iter().zip(&root) {
        component[v as usize] = number[r as usize];
    }
    (component, count)
}

/// Each of `members`' (sorted ids of a larger graph whose successors `successors(v)`
/// lists) component root, as a position in `members`: the member Tarjan finished the
/// component at. Their edges among themselves (successors outside `members` dropped) are
/// first gathered into a CSR of positions — on the current pool's threads when `parallel`:
/// however few the members, their edges are reads at random over the whole graph — so that
/// the sequential Tarjan reads only that.
pub(crate) fn member_roots<I: Iterator<Item = VertexId>>(
    members: &[VertexId],
    successors: impl Fn(VertexId) -> I + Sync,
    parallel: bool,
) -> Vec<u32> {
    let inside = |v: VertexId| {
        successors(v).filter_map(|u| members.binary_search(&u).ok().map(|x| x as u32))
    };
    let count = |&v: &VertexId| inside(v).count() as u32;
    let (counts, targets): (Vec<u32>, Vec<u32>) = if parallel {
        (
            chunked::map(members.len(), |i| count(&members[i])),
            chunked::flat_map(members.len(), |i| inside(members[i])),
        )
    } else {
        (
            members.iter().map(count).collect(),
            members.iter().flat_map(|&v| inside(v)).collect(),
        )
    };
    let mut offsets = Vec::with_capacity(members.len() + 1);
    offsets.push(0usize);
    for c in counts {
        offsets.push(offsets[offsets.len() - 1] + c as usize);
    }
    let mut root = vec![0u32; members.len()];
    SccFinder::new(members.len()).run(
        0..members.len() as VertexId,
        |x| &targets[offsets[x as usize]..offsets[x as usize + 1]],
        |_| true,
        |positions, _| {
            // The finder lists the vertex it finished the component at first.
            let r = positions[0];
            for &y in positions {
                root[y as usize] = r;
            }
        },
    );
    root
}

/// Iterative Tarjan over every vertex of `inside`.
pub fn tarjan(graph: &Graph, inside: &[bool]) -> (Vec<u32>, u32) {
    let mut component = vec![NO_COMPONENT; graph.len()];
    let mut count = 0u32;
    SccFinder::new(graph.len()).run(
        0..graph.len() as VertexId,
        |v| graph.successor_ids(v),
        |v| inside[v as usize],
        |members, _| {
            for &x in members {
                component[x as usize] = count;
            }
            count += 1;
        },
    );
    (component, count)
}
