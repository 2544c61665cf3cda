//! The components an engine leaves to the host: the device trims, finds the giant component
//! by forward–backward and trims again; when few vertices are left after that, their
//! components cost the host a sequential Tarjan of a few milliseconds at most, where the
//! device would need hundreds of colouring sweeps (each a pass over every vertex and a grid
//! barrier) for the long chains among them.
//!
//! The engine marks those vertices [`LEFT_TO_HOST`] in its representatives. What makes the
//! host's answer right: every vertex the engine did not leave lies in a component it
//! finished whole (its trims and its forward–backward only ever finish whole components),
//! so the components of the left vertices are the components of the graph restricted to
//! them, which Tarjan finds over the arena's edges read through the graph's words.

use crate::arena::{Arena, VertexId};
use crate::graph::scc::member_roots;
use crate::graph::{DROPS_ALL, KEEPS_ALL};
use crate::solve::engine::LEFT_TO_HOST;
use crate::solve::threads::{Threads, positions_where};

/// Gives every vertex whose representative is [`LEFT_TO_HOST`] a representative (a member
/// of its component, the same for all members: the member Tarjan finished it at) in the
/// graph whose words are `keeps` (`graph::Graph::keeps`); returns how many vertices were
/// left. Every left vertex must keep something (its word is not `DROPS_ALL`).
///
/// The left vertices are scattered over the arena: Tarjan runs over their edges among
/// themselves, gathered on all of `threads` ([`member_roots`]).
pub fn complete_left(
    arena: &Arena,
    keeps: &[VertexId],
    representative: &mut [u32],
    threads: &Threads,
) -> usize {
    let n = representative.len();
    let parallel = threads.parallel(n);
    let left: Vec<VertexId> = if parallel {
        threads.install(|| positions_where(representative, |&r| r == LEFT_TO_HOST))
    } else {
        (0..n as VertexId)
            .filter(|&v| representative[v as usize] == LEFT_TO_HOST)
            .collect()
    };
    if left.is_empty() {
        return 0;
    }
    // Edges into vertices not left are dropped before `member_roots` searches the list.
    let targets = arena.succ_targets();
    let marks: &[u32] = representative;
    let successors = |v: VertexId| {
        let keep = keeps[v as usize];
        arena.succ_range(v).map(|e| targets[e]).filter(move |&u| {
            let in_graph = keep == KEEPS_ALL || (keep != DROPS_ALL && keep == u);
            in_graph && marks[u as usize] == LEFT_TO_HOST
        })
    };
    let root = if parallel {
        threads.install(|| member_roots(&left, successors, true))
    } else {
        member_roots(&left, successors, false)
    };
    // Each left vertex's representative: its component's root, in input ids.
    for (&v, &r) in left.iter().zip(&root) {
        representative[v as usize] = left[r as usize];
    }
    left.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::graph::Graph;
    use crate::graph::scc::{NO_COMPONENT, canonical, tarjan};

    /// Components left to the host — any union of whole components — come back as the
    /// partition Tarjan finds on the whole graph, on one thread and several; fixed seeds and
    /// a fresh one.
    #[test]
    fn left_components_complete_the_partition() {
        let fresh: u64 = rand::random();
        eprintln!("fresh seed {fresh}");
        let mut left_in_all = 0;
        for seed in (0..40).chain([fresh]) {
            let arena = random(
                RandomParams {
                    vertices: 20 + (seed % 9) as u32 * 300,
                    min_degree: 1,
                    max_degree: 1 + (seed % 4) as u32,
                    player1_percent: (seed * 23 % 101) as u8,
                    ..RandomParams::default()
                },
                seed,
            );
            let n = arena.vertex_count();
            let active: Vec<bool> = (0..n).map(|v| (v as u64 * 7 + seed) % 13 != 3).collect();
            // σ1: a player-1 vertex's last edge (which may have parallel twins).
            let sigma: Vec<u32> = (0..n as VertexId)
                .map(|v| arena.succ_range(v).end as u32 - 1)
                .collect();
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let (component, _) = tarjan(&graph, &active);
            // Leave every component whose number is not a multiple of 3 (or every one).
            let leave = |c: u32| seed % 5 == 0 || c % 3 != 0;
            let mut representative: Vec<u32> = (0..n)
                .map(|v| match component[v] {
                    NO_COMPONENT => u32::MAX,
                    c if leave(c) => LEFT_TO_HOST,
                    c => component.iter().position(|&x| x == c).expect("a member") as u32,
                })
                .collect();
            let expected_left = representative
                .iter()
                .filter(|&&r| r == LEFT_TO_HOST)
                .count();
            let threads = if seed % 2 == 0 {
                Threads::one()
            } else {
                Threads::new(2).with_parallel_from(0)
            };
            let left = complete_left(&arena, graph.keeps(), &mut representative, &threads);
            assert_eq!(left, expected_left, "seed {seed}");
            left_in_all += left;
            for v in 0..n {
                let r = representative[v];
                if component[v] == NO_COMPONENT {
                    assert_eq!(r, u32::MAX, "seed {seed}: vertex {v} stays outside");
                } else {
                    assert_eq!(
                        representative[r as usize], r,
                        "seed {seed}: {v}'s representative"
                    );
                }
            }
            // The same partition: vertices share a representative exactly when they share
            // a component.
            assert_eq!(
                canonical(&representative),
                canonical(&component),
                "seed {seed}"
            );
        }
        assert!(left_in_all > 1000, "{left_in_all} vertices left");
    }
}
