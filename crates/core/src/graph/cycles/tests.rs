//! Tests of the cycle-sign test: greedy witnesses, Bellman–Ford answers, grouping and pointer cycles on any number of threads.

use super::*;
use crate::generate::{RandomParams, random};
use crate::graph::scc::components;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// A greedy witness is confirmed from the arena exactly at the members of nonnegative
/// greedy cycles (found by walking the graph's pointers), on random games with parallel
/// edges of player-1 vertices beside σ1's, fixed seeds and a fresh one; the settled
/// component is neither grouped nor tested, and the other answers do not change.
#[test]
fn greedy_witnesses_are_confirmed_exactly_on_nonnegative_cycles() {
    use crate::arena::{EdgeList, Player};
    let fresh: u64 = rand::random();
    let (mut confirmed, mut rejected) = (0, 0);
    for seed in (0..40u64).chain([fresh]) {
        let base = random(
            RandomParams {
                vertices: 200 + (seed % 5) as u32 * 700,
                min_degree: 1,
                max_degree: 2 + (seed % 3) as u32,
                min_weight: -6,
                max_weight: 4,
                player1_percent: 40,
            },
            seed,
        );
        let n = base.vertex_count();
        let mut edges = EdgeList::default();
        for v in 0..n as VertexId {
            for (i, (u, w)) in base.successors(v).enumerate() {
                edges.push(v, u, w);
                if (v as usize + i) % 4 == 0 {
                    edges.push(v, u, w + 3);
                }
            }
        }
        let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
        let active: Vec<bool> = (0..n).map(|v| v % 13 != 1).collect();
        // σ1: the lightest edge of each player-1 vertex (a parallel edge may be heavier).
        let sigma: Vec<u32> = (0..n as VertexId)
            .map(|v| {
                let w = arena.succ_weights();
                arena.succ_range(v).min_by_key(|&e| w.get(e)).unwrap() as u32
            })
            .collect();
        let mut graph = Graph::default();
        graph.rebuild(&arena, &active, &sigma, &Threads::one());
        let (component, count) = components(&graph, &active, &Threads::one());
        let control = Control::new();
        let all = nonnegative_components(
            &graph,
            Numbers::of(&component, count),
            &Threads::one(),
            &control,
        )
        .expect("runs");
        for c in 0..count {
            let witnesses = greedy_witnesses(&graph, &component, c);
            for v in (0..n as VertexId).filter(|&v| component[v as usize] == c) {
                let on = witnesses.binary_search(&v).is_ok();
                let got = confirms_greedy_cycle(&arena, graph.keeps(), &sigma, &component, v);
                assert_eq!(got, on, "seed {seed}: vertex {v} of component {c}");
                confirmed += got as usize;
                // A σ1 edge that is not the graph's (its target differs from the
                // word's) breaks the walk: not confirmed.
                let targets = arena.succ_targets();
                let other = arena
                    .succ_range(v)
                    .find(|&e| targets[e] != targets[sigma[v as usize] as usize]);
                if got && arena.owner(v) == Player::One && active[v as usize] {
                    if let Some(e) = other {
                        let mut moved = sigma.clone();
                        moved[v as usize] = e as u32;
                        assert!(
                            !confirms_greedy_cycle(&arena, graph.keeps(), &moved, &component, v),
                            "seed {seed}: vertex {v} with a σ1 edge outside H"
                        );
                        rejected += 1;
                    }
                }
            }
            if !witnesses.is_empty() {
                assert!(
                    all[c as usize],
                    "seed {seed}: a witness means a nonnegative cycle"
                );
                let settled = nonnegative_components(
                    &graph,
                    Numbers {
                        settled: Some(c),
                        ..Numbers::of(&component, count)
                    },
                    &Threads::new(2).with_parallel_from(0),
                    &control,
                )
                .expect("runs");
                assert_eq!(settled, all, "seed {seed}: component {c} settled");
            }
        }
    }
    assert!(confirmed > 0, "some witnesses were confirmed");
    assert!(rejected > 0, "some σ1 edges outside H were tried");
}

/// Whether component `c` of `graph` holds a cycle of weight `>= 0`, by Bellman–Ford on
/// its internal edges with weights `-(m + 1) w - 1` (`m` members): a simple cycle of
/// length `l <= m` and weight `W` weighs `-(m + 1) W - l` there, negative exactly when
/// `W >= 0`, and a nonnegative closed walk contains a nonnegative simple cycle.
fn nonnegative_by_bellman_ford(graph: &Graph, component: &[u32], c: u32) -> bool {
    let members: Vec<VertexId> = (0..component.len() as VertexId)
        .filter(|&v| component[v as usize] == c)
        .collect();
    let m = members.len() as i64;
    let mut dist: HashMap<VertexId, i64> = members.iter().map(|&v| (v, 0)).collect();
    for round in 0..=m {
        let mut changed = false;
        for &v in &members {
            for (u, w) in graph
                .successors(v)
                .filter(|&(u, _)| component[u as usize] == c)
            {
                let candidate = dist[&v] - (m + 1) * w - 1;
                if candidate < dist[&u] {
                    dist.insert(u, candidate);
                    changed = true;
                }
            }
        }
        if !changed {
            return false;
        }
        if round == m {
            return true;
        }
    }
    unreachable!()
}

/// Components alone across many of the answering pass's chunks (a chain of 100,000
/// vertices with self-loops of either sign and an inactive tenth, every active vertex
/// alone and numbered in id order, one of them settled): each answered by its self-loop,
/// through the built graph and the arena read by the words, on one thread and several;
/// a fixed seed and a fresh one.
#[test]
fn singles_are_answered_by_their_self_loops_in_every_chunk() {
    use crate::arena::{EdgeList, Player};
    for seed in [5, rand::random()] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 100_000u32;
        let mut edges = EdgeList::default();
        for v in 0..n {
            if rng.random_bool(0.5) {
                edges.push(v, v, rng.random_range(-2..=2));
            }
            edges.push(v, (v + 1).min(n - 1), rng.random_range(-2..=2));
        }
        let arena = Arena::from_edges(vec![Player::Zero; n as usize], edges, None).expect("valid");
        let active: Vec<bool> = (0..n).map(|_| rng.random_bool(0.9)).collect();
        let sigma: Vec<u32> = (0..n).map(|v| arena.succ_range(v).start as u32).collect();
        let mut graph = Graph::default();
        graph.rebuild(&arena, &active, &sigma, &Threads::one());
        let mut count = 0;
        let component: Vec<u32> = active
            .iter()
            .map(|&a| {
                if !a {
                    return NO_COMPONENT;
                }
                count += 1;
                count - 1
            })
            .collect();
        let settled = count / 2;
        let want: Vec<bool> = (0..n)
            .filter(|&v| active[v as usize])
            .map(|v| {
                component[v as usize] == settled
                    || arena.successors(v).any(|(u, w)| u == v && w >= 0)
            })
            .collect();
        let holding = want.iter().filter(|&&b| b).count();
        assert!(
            holding > 20_000 && want.len() - holding > 20_000,
            "seed {seed}"
        );
        let numbers = Numbers {
            alone_from: 0,
            settled: Some(settled),
            ..Numbers::of(&component, count)
        };
        let control = Control::new();
        for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
            let built = nonnegative_components(&graph, numbers, &threads, &control);
            assert_eq!(built.expect("runs"), want, "seed {seed}: the built graph");
            let kept = graph.kept_successors(&arena);
            let read = nonnegative_components(&kept, numbers, &threads, &control);
            assert_eq!(read.expect("runs"), want, "seed {seed}: the words");
        }
    }
}

/// The cycle test answers as Bellman–Ford on every component (singletons with and
/// without self-loops of either sign among them), through the built graph and through
/// the arena read by the words, on one thread and several, and with the singletons
/// numbered last and answered without grouping; fixed seeds and a fresh one.
#[test]
fn components_answer_as_bellman_ford() {
    use crate::arena::EdgeList;
    let fresh: u64 = rand::random();
    let mut answers = [0usize; 2];
    let mut singletons = [0usize; 2];
    // Walks that settled nothing, and that settled a component.
    let mut walked = [0usize; 2];
    for seed in (0..30u64).chain([fresh]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let base = random(
            RandomParams {
                vertices: 40 + (seed % 4) as u32 * 60,
                min_degree: 1,
                max_degree: 1 + (seed % 3) as u32,
                min_weight: -5,
                max_weight: 3,
                player1_percent: 40,
            },
            seed,
        );
        let n = base.vertex_count();
        let mut edges = EdgeList::default();
        for v in 0..n as VertexId {
            for (u, w) in base.successors(v) {
                edges.push(v, u, w);
            }
            if rng.random_bool(0.2) {
                edges.push(v, v, rng.random_range(-2..=2));
            }
        }
        let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
        let active: Vec<bool> = (0..n).map(|_| rng.random_bool(0.85)).collect();
        let sigma: Vec<u32> = (0..n as VertexId)
            .map(|v| {
                let range = arena.succ_range(v);
                rng.random_range(range.start..range.end) as u32
            })
            .collect();
        let mut graph = Graph::default();
        graph.rebuild(&arena, &active, &sigma, &Threads::one());
        let (component, count) = components(&graph, &active, &Threads::one());
        let want: Vec<bool> = (0..count)
            .map(|c| nonnegative_by_bellman_ford(&graph, &component, c))
            .collect();
        let control = Control::new();
        for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
            let got =
                nonnegative_components(&graph, Numbers::of(&component, count), &threads, &control)
                    .expect("runs");
            assert_eq!(got, want, "seed {seed}: the built graph");
            let kept = graph.kept_successors(&arena);
            let got =
                nonnegative_components(&kept, Numbers::of(&component, count), &threads, &control)
                    .expect("runs");
            assert_eq!(got, want, "seed {seed}: the arena through the words");
            // The greedy walk tried first from any vertex (inside or not) settles
            // nothing that Bellman–Ford denies.
            for start in [0, rng.random_range(0..n as VertexId), n as VertexId - 1] {
                let numbers = Numbers {
                    walk_from: Some(start),
                    ..Numbers::of(&component, count)
                };
                let got =
                    nonnegative_components(&graph, numbers, &threads, &control).expect("runs");
                assert_eq!(got, want, "seed {seed}: walked from {start}");
                walked[settled_by_walk(&graph, &component, start).is_some() as usize] += 1;
            }
        }
        let mut sizes = vec![0usize; count as usize];
        component
            .iter()
            .filter(|&&c| c != NO_COMPONENT)
            .for_each(|&c| sizes[c as usize] += 1);
        // Numbered as `representatives::numbered` numbers an engine's marks: the
        // components of several members first, the single vertices last in id order;
        // then the singles are answered without grouping, alike.
        let several = sizes.iter().filter(|&&s| s > 1).count() as u32;
        let mut new_of = vec![NO_COMPONENT; count as usize];
        let (mut next_several, mut next_alone) = (0, several);
        for c in 0..count as usize {
            if sizes[c] > 1 {
                new_of[c] = next_several;
                next_several += 1;
            }
        }
        for &c in component.iter().filter(|&&c| c != NO_COMPONENT) {
            if sizes[c as usize] == 1 {
                new_of[c as usize] = next_alone;
                next_alone += 1;
            }
        }
        let renumbered: Vec<u32> = component
            .iter()
            .map(|&c| {
                if c == NO_COMPONENT {
                    c
                } else {
                    new_of[c as usize]
                }
            })
            .collect();
        for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
            let numbers = Numbers {
                alone_from: several,
                ..Numbers::of(&renumbered, count)
            };
            let kept = graph.kept_successors(&arena);
            let got = nonnegative_components(&kept, numbers, &threads, &control).expect("runs");
            for c in 0..count as usize {
                assert_eq!(
                    got[new_of[c] as usize], want[c],
                    "seed {seed}: {c} numbered alone"
                );
            }
        }
        for c in 0..count as usize {
            answers[want[c] as usize] += 1;
            if sizes[c] == 1 {
                singletons[want[c] as usize] += 1;
            }
        }
    }
    assert!(answers.iter().all(|&a| a > 10), "both answers: {answers:?}");
    assert!(
        singletons.iter().all(|&a| a > 10),
        "both answers on singletons: {singletons:?}"
    );
    assert!(walked.iter().all(|&a| a > 10), "both walks: {walked:?}");
}

/// The greedy walk from the first member closes the cycle 0 → 1 → 0 (weight -2): the
/// full tests still find 1 → 2 → 1 (weight 0, and weight -1 when 2 → 1 weighs 2).
#[test]
fn a_negative_greedy_walk_leaves_the_answer_to_the_full_tests() {
    use crate::arena::{EdgeList, Player};
    for (back, want) in [(3, true), (2, false)] {
        let mut edges = EdgeList::default();
        for (s, t, w) in [(0, 1, -1), (1, 0, -1), (1, 2, -3), (2, 1, back)] {
            edges.push(s, t, w);
        }
        let arena = Arena::from_edges(vec![Player::Zero; 3], edges, None).expect("valid");
        let active = vec![true; 3];
        let sigma = vec![0u32; 3];
        let mut graph = Graph::default();
        graph.rebuild(&arena, &active, &sigma, &Threads::one());
        let (component, count) = components(&graph, &active, &Threads::one());
        assert_eq!(count, 1, "one component");
        let members: Vec<VertexId> = vec![0, 1, 2];
        let local: Vec<u32> = vec![0, 1, 2];
        let one = Component::new(&graph, &component, 0, &members, &local);
        let heaviest = |i: usize| match i {
            0 => (1, -1),
            1 => (0, -1),
            _ => (1, back),
        };
        assert!(
            !one.greedy_walk_is_nonnegative(heaviest),
            "the walk's cycle is negative"
        );
        for threads in [Threads::one(), Threads::new(2).with_parallel_from(0)] {
            let got = nonnegative_components(
                &graph,
                Numbers::of(&component, count),
                &threads,
                &Control::new(),
            )
            .expect("runs");
            assert_eq!(got, vec![want], "2 -> 1 weighs {back}");
        }
    }
}

/// Grouping members on several threads gives the sequential grouping exactly (members
/// in id order within each component, each vertex's position): two components above
/// [`GROUP_CHUNK`], many small and empty ones, vertices outside every component; and
/// more components than vertices (mostly singletons and empty ones, offsets over several
/// prefix blocks); with and without a skipped component.
#[test]
fn members_group_alike_on_any_number_of_threads() {
    let fresh: u64 = rand::random();
    for seed in [0, 1, fresh] {
        for (count, skip) in [(3000u32, None), (3000, Some(1)), (200_000, Some(0))] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 5 * GROUP_CHUNK;
            let component: Vec<u32> = (0..n)
                .map(|_| match rng.random_range(0..100) {
                    0..50 => 0,
                    50..75 => 1,
                    75..80 => NO_COMPONENT,
                    _ => rng.random_range(2..count),
                })
                .collect();
            let one = Groups::new(&component, count, skip, &Threads::one());
            let many = Groups::new(
                &component,
                count,
                skip,
                &Threads::new(3).with_parallel_from(0),
            );
            let case = format!("seed {seed}, {count} components, skip {skip:?}");
            assert_eq!(one.offsets, many.offsets, "{case}");
            assert_eq!(one.members, many.members, "{case}");
            assert_eq!(one.local, many.local, "{case}");
            for c in [0, 1] {
                let members = one.members(c as usize).len();
                if skip == Some(c) {
                    assert_eq!(members, 0, "{case}: skipped");
                } else {
                    assert!(members >= GROUP_CHUNK, "{case}");
                }
            }
            assert!(one.members(0).is_sorted() && one.members(7).is_sorted());
        }
    }
}

/// The parallel search for a nonnegative cycle of pointers answers as the sequential
/// walk on random pointer graphs (trees leading into cycles of either sign, members
/// without a pointer), small ones and ones large enough for parallel peeling rounds;
/// fixed seeds and a fresh one.
#[test]
fn pointer_cycles_answer_alike_in_parallel() {
    let threads = Threads::new(3);
    let fresh: u64 = rand::random();
    let mut answers = [0usize; 2];
    for seed in (0..200u64).chain([fresh]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let largest = if seed % 4 == 0 { 40_000 } else { 3_000 };
        let size = rng.random_range(1..largest);
        let mut pointers = Pointers::new(size);
        for p in pointers.parent.iter_mut() {
            *p = if rng.random_bool(0.02) {
                (NO_PARENT, 0)
            } else {
                (rng.random_range(0..size as u32), rng.random_range(-5..=2))
            };
        }
        let want = pointers.cycle_is_nonnegative();
        let got = threads.install(|| pointers.cycle_is_nonnegative_parallel());
        assert_eq!(got, want, "seed {seed}, {size} members");
        answers[usize::from(got)] += 1;
    }
    assert!(
        answers.iter().all(|&a| a >= 10),
        "both answers occur: {answers:?}"
    );
}

/// Random player-0 games have one component of most vertices, above
/// [`PARALLEL_MEMBERS`]: its per-member passes run in parallel and answer as on one
/// thread, and all-negative / all-nonnegative weights give the known answers.
#[test]
fn a_large_component_answers_alike_on_any_number_of_threads() {
    for (seed, (min_weight, max_weight)) in [(-6, -1), (0, 6), (-6, 1), (-3, 1), (-2, 2)]
        .into_iter()
        .enumerate()
    {
        let arena = random(
            RandomParams {
                vertices: 3 * PARALLEL_MEMBERS as u32,
                min_degree: 1,
                max_degree: 3,
                min_weight,
                max_weight,
                player1_percent: 0,
            },
            seed as u64,
        );
        let n = arena.vertex_count();
        let active = vec![true; n];
        let mut graph = Graph::default();
        graph.rebuild(&arena, &active, &vec![0; n], &Threads::one());
        let (component, count) = components(&graph, &active, &Threads::one());
        let mut sizes = vec![0usize; count as usize];
        component.iter().for_each(|&c| sizes[c as usize] += 1);
        let largest = sizes.iter().copied().max().unwrap_or(0);
        assert!(largest >= PARALLEL_MEMBERS, "largest component {largest}");
        let control = Control::new();
        let one = nonnegative_components(
            &graph,
            Numbers::of(&component, count),
            &Threads::one(),
            &control,
        )
        .expect("not interrupted");
        let many = Threads::new(3).with_parallel_from(0);
        let got = nonnegative_components(&graph, Numbers::of(&component, count), &many, &control)
            .expect("not interrupted");
        assert_eq!(one, got, "weights {min_weight}..={max_weight}");
        let big = sizes.iter().position(|&s| s == largest).expect("largest");
        match (min_weight, max_weight) {
            (_, max) if max < 0 => assert!(!got.contains(&true)),
            (min, _) if min >= 0 => assert!(got[big]),
            _ => {}
        }
    }
}
