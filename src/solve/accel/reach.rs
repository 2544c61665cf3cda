//! Backward reachability in a one-player [`Graph`]: every vertex from which a path inside an
//! allowed set leads to a source. The answer is a set (independent of the schedule); with
//! several threads the search runs in frontier rounds, each vertex claimed once by an
//! atomic flag.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

use super::graph::Graph;
use crate::arena::VertexId;
use crate::solve::threads::Threads;

/// Frontiers smaller than this are expanded on one thread.
const FRONTIER_PARALLEL_FROM: usize = 1 << 10;

/// Marks every vertex `v` with `allowed[v]` that has a path to a source inside `allowed`
/// (sources are the allowed vertices with `is_source(v)`; they are marked themselves).
pub(super) fn reaching(
    graph: &Graph,
    allowed: &[bool],
    is_source: impl Fn(usize) -> bool + Sync,
    threads: &Threads,
) -> Vec<bool> {
    let n = graph.len();
    if !threads.parallel(n + graph.edge_count()) {
        let mut reach: Vec<bool> = (0..n).map(|v| allowed[v] && is_source(v)).collect();
        let mut stack: Vec<VertexId> = (0..n as VertexId).filter(|&v| reach[v as usize]).collect();
        while let Some(u) = stack.pop() {
            for &v in graph.predecessor_ids(u) {
                if allowed[v as usize] && !reach[v as usize] {
                    reach[v as usize] = true;
                    stack.push(v);
                }
            }
        }
        return reach;
    }
    threads.install(|| {
        let reach: Vec<AtomicBool> = (0..n)
            .into_par_iter()
            .map(|v| AtomicBool::new(allowed[v] && is_source(v)))
            .collect();
        let mut frontier: Vec<VertexId> = (0..n as VertexId)
            .into_par_iter()
            .filter(|&v| reach[v as usize].load(Relaxed))
            .collect();
        let claim = |v: VertexId| allowed[v as usize] && !reach[v as usize].swap(true, Relaxed);
        while !frontier.is_empty() {
            frontier = if frontier.len() < FRONTIER_PARALLEL_FROM {
                let mut next = Vec::new();
                for &u in &frontier {
                    next.extend(
                        graph
                            .predecessor_ids(u)
                            .iter()
                            .copied()
                            .filter(|&v| claim(v)),
                    );
                }
                next
            } else {
                frontier
                    .par_iter()
                    .flat_map_iter(|&u| {
                        graph
                            .predecessor_ids(u)
                            .iter()
                            .copied()
                            .filter(|&v| claim(v))
                    })
                    .collect()
            };
        }
        reach.into_par_iter().map(AtomicBool::into_inner).collect()
    })
}
