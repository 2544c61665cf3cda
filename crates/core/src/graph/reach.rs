//! Backward reachability in a one-player [`Graph`]: every vertex from which a path inside an
//! allowed set leads to a source, and [`explore`], the closure engine that it, the
//! components' forward–backward searches and their trimming share.
//!
//! A closure is a set (every vertex claimed once, by an atomic flag or counter), so the
//! order of expansion does not change it: [`explore`] expands a small frontier on one
//! thread as a depth-first worklist (no round barrier per level, which long chains of
//! model-checking games would otherwise pay at every step) and switches to parallel
//! frontier rounds while the frontier is large.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::Graph;
use crate::arena::VertexId;
use crate::solve::chunked;
use crate::solve::threads::{Threads, positions_where};

/// A frontier this large is expanded in parallel rounds...
const PARALLEL_FROM: usize = 1 << 12;
/// ...until it shrinks below this, when one thread takes it over as a worklist.
const SEQUENTIAL_BELOW: usize = 1 << 10;

/// Expands `start` to its closure: `expand(v, out)` is called once for every vertex taken
/// (each vertex must be handed to it at most once: `expand` pushes only the vertices it
/// claimed). Runs on the calling thread's pool (inside [`Threads::install`]).
pub(crate) fn explore(start: Vec<VertexId>, expand: impl Fn(VertexId, &mut Vec<VertexId>) + Sync) {
    let mut frontier = start;
    while !frontier.is_empty() {
        if frontier.len() < PARALLEL_FROM {
            // One thread, depth first, until the worklist grows large enough to share.
            let mut stack = std::mem::take(&mut frontier);
            while let Some(v) = stack.pop() {
                expand(v, &mut stack);
                if stack.len() >= PARALLEL_FROM {
                    break;
                }
            }
            frontier = stack;
            continue;
        }
        while frontier.len() >= SEQUENTIAL_BELOW {
            let pieces = chunked::chunk_values(frontier.len(), |range| {
                let mut next = Vec::new();
                for &v in &frontier[range] {
                    expand(v, &mut next);
                }
                next
            });
            frontier = chunked::concatenated(pieces);
        }
    }
}

/// Marks every vertex `v` with `allowed[v]` that has a path to a source inside `allowed`
/// (sources are the allowed vertices with `is_source(v)`; they are marked themselves).
pub fn reaching(
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
        let reach: Vec<AtomicBool> =
            chunked::map(n, |v| AtomicBool::new(allowed[v] && is_source(v)));
        let frontier: Vec<VertexId> = positions_where(&reach[..n], |r| r.load(Relaxed));
        let claim = |v: VertexId| {
            let r = &reach[v as usize];
            allowed[v as usize] && !r.load(Relaxed) && !r.swap(true, Relaxed)
        };
        explore(frontier, |u, next| {
            next.extend(
                graph
                    .predecessor_ids(u)
                    .iter()
                    .copied()
                    .filter(|&v| claim(v)),
            );
        });
        chunked::map(n, |v| reach[v].load(Relaxed))
    })
}
