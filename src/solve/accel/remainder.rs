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

use rayon::prelude::*;

use super::graph::{DROPS_ALL, KEEPS_ALL};
use super::representatives::LEFT_TO_HOST;
use crate::arena::{Arena, VertexId};
use crate::solve::threads::Threads;

/// Not yet visited by Tarjan.
const UNVISITED: u32 = u32::MAX;

/// Gives every vertex whose representative is [`LEFT_TO_HOST`] a representative (a member
/// of its component, the same for all members: the first member Tarjan finished) in the
/// graph whose words are `keeps` (`graph::Graph::keeps`); returns how many vertices were
/// left. Every left vertex must keep something (its word is not `DROPS_ALL`).
pub(super) fn complete_left(
    arena: &Arena,
    keeps: &[VertexId],
    representative: &mut [u32],
    threads: &Threads,
) -> usize {
    let n = representative.len();
    let is_left = |(v, &r): (usize, &u32)| (r == LEFT_TO_HOST).then_some(v as VertexId);
    let left: Vec<VertexId> = if threads.parallel(n) {
        threads.install(|| {
            representative
                .par_iter()
                .enumerate()
                .filter_map(is_left)
                .collect()
        })
    } else {
        representative
            .iter()
            .enumerate()
            .filter_map(is_left)
            .collect()
    };
    if left.is_empty() {
        return 0;
    }
    // 1 + a left vertex's position in `left`, 0 elsewhere: a zeroed allocation, whose pages
    // the system hands out only where they are touched.
    let mut local = vec![0u32; n];
    for (i, &v) in left.iter().enumerate() {
        local[v as usize] = i as u32 + 1;
    }
    let targets = arena.succ_targets();
    // The left successor's position of edge `e` of left vertex `v`, if `e` is in the graph.
    let kept = |v: VertexId, e: usize| -> Option<u32> {
        let u = targets[e];
        let keep = keeps[v as usize];
        let in_graph = keep == KEEPS_ALL || (keep != DROPS_ALL && keep == u);
        let i = local[u as usize];
        (in_graph && i != 0).then(|| i - 1)
    };
    let k = left.len();
    let mut index = vec![UNVISITED; k];
    let mut low = vec![0u32; k];
    let mut finished = vec![false; k];
    let mut stack: Vec<u32> = Vec::new();
    // (position in `left`, next edge to look at)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut next_index = 0u32;
    for root in 0..k as u32 {
        if index[root as usize] != UNVISITED {
            continue;
        }
        debug_assert_ne!(keeps[left[root as usize] as usize], DROPS_ALL);
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        calls.push((root, arena.succ_range(left[root as usize]).start));
        while let Some(&mut (x, ref mut e)) = calls.last_mut() {
            let v = left[x as usize];
            let end = arena.succ_range(v).end;
            let mut descended = None;
            while *e < end {
                let edge = *e;
                *e += 1;
                let Some(y) = kept(v, edge) else { continue };
                if index[y as usize] == UNVISITED {
                    descended = Some(y);
                    break;
                } else if !finished[y as usize] {
                    low[x as usize] = low[x as usize].min(index[y as usize]);
                }
            }
            if let Some(y) = descended {
                index[y as usize] = next_index;
                low[y as usize] = next_index;
                next_index += 1;
                stack.push(y);
                calls.push((y, arena.succ_range(left[y as usize]).start));
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[x as usize]);
            }
            if low[x as usize] == index[x as usize] {
                let r = left[x as usize];
                loop {
                    let y = stack.pop().expect("Tarjan's stack holds the component");
                    finished[y as usize] = true;
                    representative[left[y as usize] as usize] = r;
                    if y == x {
                        break;
                    }
                }
            }
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::solve::accel::graph::Graph;
    use crate::solve::accel::scc::{NO_COMPONENT, canonical, tarjan};

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
