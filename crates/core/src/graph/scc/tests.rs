//! Tests of the strongly connected components: the parallel splits and Tarjan against each other on random graphs.

use super::*;
use crate::arena::{Arena, VertexId};
use crate::generate::{RandomParams, random};

/// The graph of `arena` on `active` with each vertex's first edge as σ1.
pub(crate) fn graph_of(arena: &Arena, active: &[bool]) -> Graph {
    let sigma: Vec<u32> = (0..arena.vertex_count() as VertexId)
        .map(|v| arena.succ_range(v).start as u32)
        .collect();
    let mut graph = Graph::default();
    graph.rebuild(arena, active, &sigma, &Threads::one());
    graph
}

/// The parallel algorithm finds the same components as Tarjan, on games with one large
/// component, many small ones, and chains between them; the vertices its trims peeled
/// are numbered last, in id order.
#[test]
fn parallel_components_equal_tarjans() {
    // Out-degree 1 (each vertex on one cycle or a tree into one): most vertices go to
    // the trims of the parts beside the first component found.
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    for (seed, degree) in [
        (1, 1..=2),
        (2, 1..=3),
        (3, 2..=4),
        (4, 1..=1),
        (fresh, 1..=3),
    ] {
        let arena = random(
            RandomParams {
                vertices: 120_000,
                min_degree: *degree.start(),
                max_degree: *degree.end(),
                ..RandomParams::default()
            },
            seed,
        );
        let n = arena.vertex_count();
        let active: Vec<bool> = (0..n).map(|v| v % 11 != 5).collect();
        let graph = graph_of(&arena, &active);
        let (one, one_count) = tarjan(&graph, &active);
        let threads = Threads::new(4).with_parallel_from(0);
        let Partition {
            component: many,
            count: many_count,
            alone_from,
            largest,
        } = components_alone_last(&graph, &active, &threads);
        // Forward–backward's largest component (where what the first trim left was
        // large enough to split): numbered before the peeled ones, and where a giant
        // component exists (out-degree 2 or more), the giant one.
        if let Some(largest) = largest {
            assert!(many[largest as usize] < alone_from, "seed {seed}");
        }
        if *degree.start() >= 2 {
            let largest = largest.expect("forward–backward split the giant component");
            let size = many
                .iter()
                .filter(|&&c| c == many[largest as usize])
                .count();
            let giant = component_sizes(&one).into_iter().max().unwrap_or(0);
            assert_eq!(size, giant, "seed {seed}: the giant component's member");
        }
        assert_eq!(one_count, many_count, "seed {seed}");
        assert_eq!(canonical(&one), canonical(&many), "seed {seed}");
        assert!(one.contains(&NO_COMPONENT));
        // The peeled vertices last: one member each, numbered in id order.
        let alone: Vec<u32> = many
            .iter()
            .copied()
            .filter(|&c| c != NO_COMPONENT && c >= alone_from)
            .collect();
        assert_eq!(
            alone,
            (alone_from..many_count).collect::<Vec<_>>(),
            "seed {seed}"
        );
        assert!(!alone.is_empty(), "seed {seed}: the trims peeled vertices");
    }
}

/// Player-1 vertices whose σ1 edge has identical twins (and parallel edges of another
/// weight): the trim's degree counts, taken from either side of the graph, still
/// reach zero exactly, so the parallel components equal Tarjan's.
#[test]
fn twin_edges_leave_the_parallel_components_unchanged() {
    use crate::arena::{EdgeList, Player};
    for seed in [5, 6] {
        let base = random(
            RandomParams {
                vertices: 60_000,
                min_degree: 1,
                max_degree: 2,
                player1_percent: 50,
                ..RandomParams::default()
            },
            seed,
        );
        let n = base.vertex_count();
        let mut edges = EdgeList::with_capacity(3 * base.edge_count());
        for v in 0..n as VertexId {
            for (i, (u, w)) in base.successors(v).enumerate() {
                edges.push(v, u, w);
                if base.owner(v) == Player::One && (v as usize + i) % 3 != 0 {
                    edges.push(v, u, w); // an identical twin
                    edges.push(v, u, w + 1); // a parallel edge of another weight
                }
            }
        }
        let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
        let active: Vec<bool> = (0..n).map(|v| v % 13 != 4).collect();
        let graph = graph_of(&arena, &active);
        for v in 0..n as VertexId {
            for &u in graph.successor_ids(v) {
                let there = graph.predecessor_ids(u).iter().filter(|&&p| p == v).count();
                let here = graph.successor_ids(v).iter().filter(|&&x| x == u).count();
                assert_eq!(here, there, "seed {seed}: edge {v} -> {u} on both sides");
            }
        }
        let (one, one_count) = tarjan(&graph, &active);
        let threads = Threads::new(4).with_parallel_from(0);
        let (many, many_count) = components(&graph, &active, &threads);
        assert_eq!(one_count, many_count, "seed {seed}");
        assert_eq!(canonical(&one), canonical(&many), "seed {seed}");
    }
}

/// A few vertices of a large graph (the evaluation's second decomposition) take Tarjan
/// over their own small CSR on several threads: the same partition as Tarjan over the
/// whole graph, whatever the subset's size and shape. The graph's edges are local (each
/// vertex to the next and to one up to 50 before it), so that windows of consecutive
/// vertices hold cycles, where random vertices mostly do not. Fixed seeds and a fresh
/// one.
#[test]
fn a_small_subset_has_tarjans_components() {
    use crate::arena::{EdgeList, Player};
    use rand::{Rng, SeedableRng};
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    // More vertices than `COMPACT_FRACTION` times every subset's size.
    let n = COMPACT_FRACTION * SEQUENTIAL_BELOW + 1;
    let (mut largest, mut windows) = (0, 0);
    for seed in [7, 8, fresh] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut edges = EdgeList::default();
        for v in 0..n {
            edges.push(v as VertexId, ((v + 1) % n) as VertexId, 0);
            let back = (v + n - rng.random_range(1..50)) % n;
            edges.push(v as VertexId, back as VertexId, 0);
        }
        let arena = Arena::from_edges(vec![Player::Zero; n], edges, None).expect("valid");
        let graph = graph_of(&arena, &vec![true; n]);
        let sizes = [0, 1, 40, 3_000, SEQUENTIAL_BELOW - 1];
        for (size, window) in sizes
            .into_iter()
            .flat_map(|size| [(size, false), (size, true)])
        {
            let mut inside = vec![false; n];
            if window {
                let start = rng.random_range(0..n);
                for i in 0..size {
                    inside[(start + i) % n] = true;
                }
                windows += 1;
            } else {
                for _ in 0..size {
                    inside[rng.random_range(0..n)] = true;
                }
            }
            let (one, one_count) = tarjan(&graph, &inside);
            let threads = Threads::new(2).with_parallel_from(0);
            let Partition {
                component: many,
                count: many_count,
                alone_from,
                largest: hint,
            } = components_alone_last(&graph, &inside, &threads);
            assert_eq!(hint, None, "seed {seed}: Tarjan only");
            assert_eq!(one_count, many_count, "seed {seed}, size {size}");
            assert_eq!(alone_from, many_count, "seed {seed}: none known alone");
            assert_eq!(
                canonical(&one),
                canonical(&many),
                "seed {seed}, size {size}"
            );
            largest = largest.max(component_sizes(&one).into_iter().max().unwrap_or(0));
        }
    }
    // Every seed takes windows of 40 to 2^14 - 1 vertices, whose back edges close cycles:
    // checked, so that the test cannot pass on singletons alone.
    assert!(
        windows > 0 && largest > 1,
        "some window holds a cycle: {windows}, {largest}"
    );
}

/// How many members each component of `component` has.
fn component_sizes(component: &[u32]) -> Vec<usize> {
    let mut sizes = std::collections::HashMap::new();
    for &c in component.iter().filter(|&&c| c != NO_COMPONENT) {
        *sizes.entry(c).or_insert(0) += 1;
    }
    sizes.into_values().collect()
}
