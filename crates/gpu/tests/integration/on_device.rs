//! Tests of the evaluation's device parts (where a GPU is): the components and the greedy
//! witness of `kernels/components.cu` against the host's Tarjan and a brute-force walk of
//! the greedy pointers; the lifting kernels' record of why each vertex reached ⊤. Without a
//! GPU they are listed as ignored, with the reason.

use egsolve_core::arena::{Arena, EdgeList, Player, VertexId};
use egsolve_core::generate::{RandomParams, random, random_varied};
use egsolve_core::graph::Graph;
use egsolve_core::graph::cycles::{confirms_greedy_cycle, greedy_witnesses};
use egsolve_core::graph::scc::{canonical, tarjan};
use egsolve_core::solve::accel::remainder::complete_left;
use egsolve_core::solve::accel::representatives::{Numbered, numbered};
use egsolve_core::solve::strategy::topping::assert_record_holds;
use egsolve_core::solve::threads::Threads;
use egsolve_gpu::components::LEFT_TO_HOST_BELOW;
use egsolve_gpu::{GpuEngine, GpuOptions, devices::driver_ready};

/// A fresh seed, printed so that a failure can be replayed.
fn fresh_seed() -> u64 {
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    fresh
}

/// Every check needs a GPU: where none is, each is listed as ignored with the reason.
/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let missing = driver_ready().err().map(|e| format!("a GPU: {e}"));
    let checks: [(&str, fn()); 6] = [
        (
            "device_components_equal_tarjans_where_a_gpu_is",
            device_components_equal_tarjans_where_a_gpu_is,
        ),
        (
            "device_components_take_another_pivot_where_a_gpu_is",
            device_components_take_another_pivot_where_a_gpu_is,
        ),
        (
            "device_lifts_record_why_vertices_reached_top_where_a_gpu_is",
            device_lifts_record_why_vertices_reached_top_where_a_gpu_is,
        ),
        (
            "device_reachability_and_credits_equal_the_hosts_where_a_gpu_is",
            device_reachability_and_credits_equal_the_hosts_where_a_gpu_is,
        ),
        (
            "device_attractor_has_the_hosts_layers_where_a_gpu_is",
            device_attractor_has_the_hosts_layers_where_a_gpu_is,
        ),
        (
            "device_player1_edges_equal_the_hosts_choice_where_a_gpu_is",
            device_player1_edges_equal_the_hosts_choice_where_a_gpu_is,
        ),
    ];
    checks
        .into_iter()
        .map(|(name, check)| egsolve_test_support::needing_hardware(name, missing.clone(), check))
        .collect()
}

/// `base` with every weight times `scale` and, after each edge `(v, u, w)` (the `i`-th of
/// `v`), a parallel edge of weight `extra(v, i, w) * scale` where `extra` gives one.
fn with_parallel_edges(
    base: &Arena,
    scale: i64,
    extra: impl Fn(VertexId, usize, i64) -> Option<i64>,
) -> Arena {
    let mut edges = EdgeList::with_capacity(2 * base.edge_count());
    for v in 0..base.vertex_count() as VertexId {
        for (i, (u, w)) in base.successors(v).enumerate() {
            edges.push(v, u, w * scale);
            if let Some(other) = extra(v, i, w) {
                edges.push(v, u, other * scale);
            }
        }
    }
    Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid")
}

/// A random game of `vertices[seed % 4]` vertices, 1 to `1 + seed % degrees` edges each,
/// weights -4..=3 times `[1, 1000, 2^40][seed % 3]` (16-, 32- and 64-bit weights), and
/// after every third edge a parallel one of another weight.
fn scaled_game_with_parallel_edges(seed: u64, vertices: [u32; 4], degrees: u64) -> Arena {
    let scale = [1i64, 1_000, 1 << 40][(seed % 3) as usize];
    let base = random(
        RandomParams {
            vertices: vertices[(seed % 4) as usize],
            min_degree: 1,
            max_degree: 1 + (seed % degrees) as u32,
            min_weight: -4,
            max_weight: 3,
            player1_percent: (20 + seed * 17 % 70) as u8,
        },
        seed,
    );
    with_parallel_edges(&base, scale, |v, i, w| {
        ((v as usize + i + seed as usize) % 3 == 0).then_some(w + 1 - (i as i64 % 3))
    })
}

/// Where a GPU is, its components (`kernels/components.cu`) equal Tarjan's on random
/// graphs (one giant component, many small ones, chains, parallel edges of player-1
/// vertices beside the σ1 edge), fixed seeds and a fresh one, whether the kernel colours
/// what its forward–backward search leaves or leaves it to the host's `complete_left`; a
/// cycle longer than the kernel's sweeps is left to the host (`None`). Without a GPU:
/// nothing to check.
fn device_components_equal_tarjans_where_a_gpu_is() {
    let fresh = fresh_seed();
    // Giants without and with a witness.
    let mut giants = [0usize; 2];
    let (mut left_in_all, mut alone_in_all) = (0, 0);
    let mut seeds: Vec<u64> = (0..24).collect();
    seeds.push(fresh);
    for seed in seeds {
        let base = random(
            RandomParams {
                vertices: [50, 3_000, 40_000, 250_000][(seed % 4) as usize],
                min_degree: 1,
                max_degree: 1 + (seed % 5) as u32,
                player1_percent: (seed * 17 % 101) as u8,
                ..RandomParams::default()
            },
            seed,
        );
        let n = base.vertex_count();
        // Player-1 vertices get parallel edges of other weights (not σ1's) now and then.
        let arena = with_parallel_edges(&base, 1, |v, i, w| {
            (base.owner(v) == Player::One && (v as usize + i + seed as usize) % 5 == 0)
                .then_some(w + 1)
        });
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let mut engine =
            GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
        for round in 0..3u64 {
            // Colouring everything on the device, the default, and leaving everything
            // after the forward–backward search to the host.
            engine
                .leave_components_to_host_below([0, LEFT_TO_HOST_BELOW, u32::MAX][round as usize]);
            let active: Vec<bool> = (0..n as u64)
                .map(|v| (v * 2654435761 + seed + round) % 9 != 0 || round == 0)
                .collect();
            let sigma: Vec<u32> = (0..n as VertexId)
                .map(|v| {
                    let range = arena.succ_range(v);
                    (range.start + (v as usize + round as usize) % range.len()) as u32
                })
                .collect();
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let (host, host_count) = tarjan(&graph, &active);
            assert!(
                engine
                    .start_components(graph.keeps(), Some(&sigma))
                    .expect("starts")
            );
            let mut found = engine
                .finish_components()
                .expect("runs")
                .unwrap_or_else(|| panic!("seed {seed} round {round}: out of sweeps"));
            let left = complete_left(
                &arena,
                graph.keeps(),
                &mut found.representatives,
                &Threads::one(),
            );
            assert_eq!(
                left as u32,
                engine.component_figures().left,
                "seed {seed} round {round}"
            );
            if round == 0 {
                assert_eq!(left, 0, "seed {seed}: nothing left to the host");
            }
            left_in_all += left;
            let Numbered {
                component: device,
                count: device_count,
                alone_from,
            } = numbered(found.representatives, &Threads::one()).expect("a representative map");
            alone_in_all += (device_count - alone_from) as usize;
            assert_eq!(device_count, host_count, "seed {seed} round {round}: count");
            assert_eq!(
                canonical(&device),
                canonical(&host),
                "seed {seed} round {round}"
            );
            // The giant's greedy witness: found exactly when its pointers close a
            // nonnegative cycle (small weights: the device's sums are exact), on it,
            // and confirmed from the arena.
            if let Some(giant) = found.giant {
                let c = device[giant as usize];
                let witnesses = greedy_witnesses(&graph, &device, c);
                assert_eq!(
                    found.witness.is_some(),
                    !witnesses.is_empty(),
                    "seed {seed} round {round}: witness"
                );
                if let Some(member) = found.witness {
                    assert!(witnesses.binary_search(&member).is_ok());
                    assert!(confirms_greedy_cycle(
                        &arena,
                        graph.keeps(),
                        &sigma,
                        &device,
                        member
                    ));
                    giants[1] += 1;
                } else {
                    giants[0] += 1;
                }
            }
        }
    }
    eprintln!(
        "giants without / with a witness: {giants:?}, {left_in_all} vertices left, \
         {alone_in_all} marked alone"
    );
    assert!(left_in_all > 0, "components were left to the host");
    assert!(alone_in_all > 0, "trimmed vertices were marked alone");
    assert!(
        giants[0] > 0 && giants[1] > 0,
        "both answers occur: {giants:?}"
    );
    // One cycle through 20,000 vertices: the forward search needs a sweep per vertex.
    let n = 20_000u32;
    let mut edges = EdgeList::default();
    for v in 0..n {
        edges.push(v, (v + 1) % n, -1);
    }
    let arena = Arena::from_edges(vec![Player::Zero; n as usize], edges, None).expect("valid");
    let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
    let mut engine =
        GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
    let active = vec![true; n as usize];
    let mut graph = Graph::default();
    graph.rebuild(&arena, &active, &vec![0; n as usize], &Threads::one());
    assert!(
        engine
            .start_components(graph.keeps(), None)
            .expect("starts")
    );
    assert_eq!(
        engine.finish_components().expect("runs"),
        None,
        "left to the host"
    );
}

/// Where a GPU is, a forward–backward pivot that misses the giant component is followed by
/// another: a hub with many predecessors on a small cycle and many successors in a large
/// strongly connected part has the best score and is a component of its own; the second
/// search finds the large part (its vertices counted in the figures) and the partition is
/// Tarjan's. Fixed seeds and a fresh one. Without a GPU: nothing to check.
fn device_components_take_another_pivot_where_a_gpu_is() {
    use rand::{Rng, SeedableRng};
    let fresh = fresh_seed();
    for seed in [1, 2, fresh] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // More than `LEFT_TO_HOST_BELOW` pending after the first search, so the kernel goes on.
        let (large, small) = (40_000u32, 200u32);
        let hub = large + small;
        let mut edges = EdgeList::default();
        for v in 0..large {
            edges.push(v, (v + 1) % large, rng.random_range(-3..=3));
            edges.push(v, rng.random_range(0..large), rng.random_range(-3..=3));
        }
        for i in 0..small {
            edges.push(large + i, large + (i + 1) % small, 0);
            edges.push(large + i, hub, 0);
        }
        for _ in 0..300 {
            edges.push(hub, rng.random_range(0..large), 0);
        }
        let n = hub as usize + 1;
        let arena = Arena::from_edges(vec![Player::Zero; n], edges, None).expect("valid");
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let mut engine =
            GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
        let active = vec![true; n];
        let mut graph = Graph::default();
        graph.rebuild(&arena, &active, &vec![0; n], &Threads::one());
        let (host, host_count) = tarjan(&graph, &active);
        assert!(
            engine
                .start_components(graph.keeps(), None)
                .expect("starts")
        );
        let mut found = engine
            .finish_components()
            .expect("runs")
            .unwrap_or_else(|| panic!("seed {seed}: out of sweeps"));
        let figures = engine.component_figures();
        assert_eq!(figures.tries, 2, "seed {seed}: {figures:?}");
        assert_eq!(
            figures.giant,
            1 + large,
            "seed {seed}: the hub, then the large part"
        );
        complete_left(
            &arena,
            graph.keeps(),
            &mut found.representatives,
            &Threads::one(),
        );
        let Numbered {
            component: device,
            count: device_count,
            ..
        } = numbered(found.representatives, &Threads::one()).expect("a representative map");
        assert_eq!(device_count, host_count, "seed {seed}: count");
        assert_eq!(canonical(&device), canonical(&host), "seed {seed}");
    }
}

/// Where a GPU is, its lifts record why each vertex reached ⊤ as the host's do
/// (`super::topping`: a cause exactly on `W1`, player 1's edge into ⊤ when topped by ⊤
/// successors, no cycle among those), through the driver's phases (up to 50, then one to
/// the fixpoint) on random games of every
/// shape (fixed seeds and a fresh one); and player 1's strategy from that record passes the
/// checker. Without a GPU: nothing to check.
fn device_lifts_record_why_vertices_reached_top_where_a_gpu_is() {
    use egsolve_core::check::{Claim, check};
    use egsolve_core::solve::accel::solve_with_budget;
    use egsolve_core::solve::control::{Budget, Control};
    use egsolve_core::solve::engine::{EngineSearches, LiftCall, LiftEngine};
    use egsolve_core::solve::strategy::{Player1Source, Topping};
    use egsolve_gpu::lift::{GpuLift, RECORD_FROM_TOP_SHARE};
    let fresh = fresh_seed();
    let (mut lifted, mut recorded) = (0, 0);
    for seed in (0..40u64).chain([fresh]) {
        let arena = random_varied(seed, [40, 2_000, 30_000, 200_000][(seed % 4) as usize]);
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let options = GpuOptions::default();
        // The record of one lift from 0, in phases of a few thousand lifts.
        let engine = GpuEngine::upload(&arena, Some(bound), &options).expect("uploads");
        let mut lift = GpuLift::new(engine, &options);
        let topping = Topping::new(arena.vertex_count());
        let mut values = vec![0; arena.vertex_count()];
        let threads = Threads::one();
        let mut phases = 0;
        // Up to 50 phases, then one to the fixpoint: some of these games take 10^4 phases
        // of this size (minutes, each phase's copies and passes on the host).
        let budget = |phases: u32| Budget {
            lifts: match phases {
                0..50 => 5_000.max(arena.vertex_count() as u64),
                _ => u64::MAX,
            },
            until: None,
        };
        while !lift
            .lift(
                LiftCall {
                    arena: &arena,
                    bound,
                    topping: Some(&topping),
                    budget: budget(phases),
                    threads: &threads,
                    control: &Control::new(),
                },
                &mut values,
            )
            .expect("lifts")
            .finished
        {
            phases += 1;
        }
        // A first phase that reached the fixpoint leaves the record on the device until
        // the driver asks for the recorded moves; asked as after evaluations, the engine
        // copies it instead of classifying it.
        let on_device = lift
            .recorded_moves(&arena, &topping, true, &threads)
            .expect("copies");
        assert!(
            on_device.is_none(),
            "seed {seed}: classified after evaluations"
        );
        // Else the record comes back where lifting topped at least a 32nd of the game
        // (here lifting topped all of W1).
        let top = values
            .iter()
            .filter(|&&c| c == egsolve_core::solve::TOP)
            .count();
        if phases == 0 || top * RECORD_FROM_TOP_SHARE >= values.len() {
            assert_record_holds(&arena, &values, &topping, &format!("seed {seed}"));
            recorded += 1;
        } else {
            assert!(
                (0..arena.vertex_count() as VertexId)
                    .all(|v| topping.cause(v) == egsolve_core::solve::strategy::ToppedBy::Other)
            );
        }
        // The driver with the device, lifting alone: certified moves.
        let engine = GpuEngine::upload(&arena, Some(bound), &options).expect("uploads");
        let mut lift = GpuLift::new(engine, &options);
        let (solution, stats) =
            solve_with_budget(&arena, &mut lift, u64::MAX, &Control::new()).expect("solves");
        let claim = Claim {
            credit: &solution.credit,
            strategy: &solution.strategy,
        };
        assert!(
            check(&arena, claim).expect("checkable").passed(),
            "seed {seed}"
        );
        lifted += (stats.player1 == Player1Source::Lifted) as u32;
    }
    assert!(
        lifted > 10 && recorded > 10,
        "{lifted} of 41 from the device's record, {recorded} records checked"
    );
}

/// Where a GPU is, its backward reachability and Bellman–Ford (`kernels/evaluate.cu`)
/// equal the host's (`super::reach`, `super::relax`) on random graphs `G_σ1` over random
/// subsets, with parallel edges of player-1 vertices beside σ1's edge (of its weight: twins,
/// and of others), random sources, pinned and open vertices, 16-, 32- and 64-bit weights,
/// fixed seeds and a fresh one; a path longer than the kernels' sweeps is left to the host
/// (`None`). Without a GPU: nothing to check.
fn device_reachability_and_credits_equal_the_hosts_where_a_gpu_is() {
    use egsolve_core::graph::reach::reaching;
    use egsolve_core::solve::accel::relax::credits_to_pinned;
    use egsolve_core::solve::control::Control;
    use egsolve_core::solve::engine::{CLOSED, OPEN, PINNED};
    let fresh = fresh_seed();
    let (mut reached, mut relaxed, mut declined) = (0, 0, 0);
    let mut seeds: Vec<u64> = (0..18).collect();
    seeds.push(fresh);
    for seed in seeds {
        let scale = [1i64, 1_000, 1 << 40][(seed % 3) as usize];
        let base = random(
            RandomParams {
                vertices: [60, 4_000, 50_000, 200_000][(seed % 4) as usize],
                min_degree: 1,
                max_degree: 1 + (seed % 5) as u32,
                min_weight: -5,
                max_weight: 3,
                player1_percent: (seed * 23 % 101) as u8,
            },
            seed,
        );
        let n = base.vertex_count();
        // Weights scaled to the widths; player-1 vertices get twins and other parallel edges.
        let arena = with_parallel_edges(&base, scale, |v, i, w| {
            let other = i64::from((v as usize + i) % 2 != 0);
            (base.owner(v) == Player::One && (v as usize + i + seed as usize) % 4 == 0)
                .then_some(w + other)
        });
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let mut engine =
            GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
        for round in 0..2u64 {
            let hash = |v: usize, k: u64| (v as u64 * 2654435761 + seed * 97 + round + k) % 1000;
            let active: Vec<bool> = (0..n).map(|v| hash(v, 1) >= 100).collect();
            let sigma: Vec<u32> = (0..n as VertexId)
                .map(|v| {
                    let range = arena.succ_range(v);
                    (range.start + hash(v as usize, 2) as usize % range.len()) as u32
                })
                .collect();
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let case = format!("seed {seed} round {round}");
            // Reachability from a few sources.
            let sources: Vec<u8> = (0..n)
                .map(|v| (active[v] && hash(v, 3) < 20) as u8)
                .collect();
            let host = reaching(&graph, &active, |v| sources[v] != 0, &Threads::one());
            match engine.reaching(graph.keeps(), &sources).expect("runs") {
                Some(device) => {
                    let device: Vec<bool> = device.iter().map(|&b| b != 0).collect();
                    assert_eq!(device, host, "{case}: reachability");
                    reached += 1;
                }
                None => declined += 1,
            }
            // Bellman–Ford from pinned vertices through open ones.
            let pinned: Vec<bool> = (0..n).map(|v| active[v] && hash(v, 4) < 30).collect();
            let through: Vec<bool> = (0..n).map(|v| active[v] && hash(v, 5) < 800).collect();
            let through: Vec<bool> = (0..n).map(|v| through[v] || pinned[v]).collect();
            let class: Vec<u8> = (0..n)
                .map(|v| match (pinned[v], through[v]) {
                    (true, _) => PINNED,
                    (false, true) => OPEN,
                    _ => CLOSED,
                })
                .collect();
            let host = credits_to_pinned(
                &graph,
                &pinned,
                &through,
                bound,
                &Threads::one(),
                &Control::new(),
            )
            .expect("not interrupted");
            match engine
                .credits_to_pinned(graph.keeps(), &sigma, &class)
                .expect("runs")
            {
                Some(device) => {
                    assert_eq!(device, host, "{case}: credits");
                    relaxed += 1;
                }
                None => declined += 1,
            }
        }
    }
    eprintln!("{reached} reachabilities and {relaxed} relaxations checked, {declined} declined");
    assert!(
        reached >= 30 && relaxed >= 30,
        "{reached} reachabilities and {relaxed} relaxations of 38 each"
    );
    // A path through 20,000 vertices needs a sweep per vertex: both are left to the host.
    let n = 20_000u32;
    let mut edges = EdgeList::default();
    for v in 0..n {
        edges.push(v, (v + 1).min(n - 1), -1);
    }
    let arena = Arena::from_edges(vec![Player::Zero; n as usize], edges, None).expect("valid");
    let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
    let mut engine =
        GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
    let active = vec![true; n as usize];
    let mut graph = Graph::default();
    graph.rebuild(&arena, &active, &vec![0; n as usize], &Threads::one());
    let last = |v: usize| v == n as usize - 1;
    let sources: Vec<u8> = (0..n as usize).map(|v| last(v) as u8).collect();
    assert_eq!(
        engine.reaching(graph.keeps(), &sources).expect("runs"),
        None,
        "reachability left to the host"
    );
    let class: Vec<u8> = (0..n as usize)
        .map(|v| if last(v) { PINNED } else { OPEN })
        .collect();
    assert_eq!(
        engine
            .credits_to_pinned(graph.keeps(), &vec![0; n as usize], &class)
            .expect("runs"),
        None,
        "Bellman–Ford left to the host"
    );
}

/// Where a GPU is, player 1's attractor to ⊤ on the device (`attract_top` of
/// `kernels/evaluate.cu`) has the host's layers (`super::attractor::attract_top`): random
/// games with parallel edges, 16-, 32- and 64-bit weights, both energy widths, players in
/// a byte array and player 0 first (owners by id), values at ⊤, small and within a weight of
/// the bound, and a random set reached (every vertex not reached at ⊤, as the evaluation's
/// first step leaves them); fixed seeds and a fresh one. Applying the device's layers gives
/// the host's values and σ1 edges. A chain of player-1 vertices gives one layer per vertex:
/// 3,000 layers on the device, 10,000 (past its sweeps) left to the host, as is every
/// attractor not right after a reachability launch. Without a GPU: nothing to check.
fn device_attractor_has_the_hosts_layers_where_a_gpu_is() {
    use egsolve_core::graph::attractor::{apply_layers, attract_top};
    use egsolve_core::solve::energy::TOP;
    use egsolve_gpu::VertexOrder;
    let fresh = fresh_seed();
    let (mut moved_in_all, mut deepest, mut empty) = (0, 0, 0);
    for seed in (0..16u64).chain([fresh]) {
        let scale = [1i64, 1_000, 1 << 40][(seed % 3) as usize];
        let with_parallel = scaled_game_with_parallel_edges(seed, [60, 3_000, 40_000, 150_000], 4);
        let n = with_parallel.vertex_count();
        // Every fourth game: player 0 owns the first half, laid out player 0 first.
        let players_first = seed % 4 == 2;
        let arena = if players_first {
            let owners = (0..n)
                .map(|v| if v < n / 2 { Player::Zero } else { Player::One })
                .collect();
            let mut edges = EdgeList::with_capacity(with_parallel.edge_count());
            for v in 0..n as VertexId {
                for (u, w) in with_parallel.successors(v) {
                    edges.push(v, u, w);
                }
            }
            Arena::from_edges(owners, edges, None).expect("valid")
        } else {
            with_parallel
        };
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let options = GpuOptions {
            wide: seed % 2 == 1,
            order: if players_first {
                VertexOrder::PlayersFirst
            } else {
                VertexOrder::Input
            },
            ..GpuOptions::default()
        };
        let mut engine = GpuEngine::upload(&arena, Some(bound), &options).expect("uploads");
        assert!(!engine.renumbered(), "seed {seed}: the input's order");
        let near = (4 * scale) as u64;
        for round in 0..3u64 {
            let hash = |v: usize, k: u64| (v as u64 * 2654435761 + seed * 97 + round + k) % 1000;
            // Round 2: every value finite and at most half the bound, every one reached:
            // no edge gives ⊤ and nothing moves.
            let values: Vec<u64> = (0..n)
                .map(|v| match hash(v, 1) {
                    _ if round == 2 => hash(v, 3) * (bound / 2000),
                    h if h < 150 => TOP,
                    h if h < 250 => bound - hash(v, 2) * near / 1000,
                    _ => hash(v, 3) * (bound / 2000),
                })
                .collect();
            let reached: Vec<u8> = (0..n)
                .map(|v| (values[v] != TOP && (round == 2 || hash(v, 4) < 900)) as u8)
                .collect();
            engine.reset(Some(&values)).expect("uploads values");
            let out = engine
                .reaching(&vec![u32::MAX; n], &reached)
                .expect("runs")
                .expect("no sweeps to run");
            assert_eq!(
                out, reached,
                "seed {seed}: nothing reached beyond the sources"
            );
            let device = engine
                .attract_top()
                .expect("runs")
                .unwrap_or_else(|| panic!("seed {seed} round {round}: left to the host"));
            let mut host_values: Vec<u64> = (0..n)
                .map(|v| if reached[v] != 0 { values[v] } else { TOP })
                .collect();
            let mut device_values = host_values.clone();
            let mut host_sigma: Vec<u32> = (0..n as u32).collect();
            let mut device_sigma = host_sigma.clone();
            let host = attract_top(
                &arena,
                &mut host_values,
                bound,
                &mut host_sigma,
                &Threads::one(),
            );
            let case = format!("seed {seed} round {round}");
            assert_eq!(device.moved, host.moved, "{case}: moved");
            assert_eq!(device.top_layers, host.top_layers, "{case}: layers");
            if host.moved > 0 {
                assert_eq!(device.layer, host.layer, "{case}: each vertex's layer");
            } else {
                assert!(device.layer.is_empty(), "{case}: no layers downloaded");
                empty += 1;
            }
            moved_in_all += host.moved;
            deepest = deepest.max(host.top_layers);
            let applied = apply_layers(
                &arena,
                &mut device_values,
                &mut device_sigma,
                device,
                &Threads::new(2).with_parallel_from(0),
            );
            assert_eq!(applied.recorded, host.recorded, "{case}: recorded");
            assert_eq!(device_values, host_values, "{case}: values");
            assert_eq!(device_sigma, host_sigma, "{case}: σ1 edges");
        }
    }
    eprintln!("{moved_in_all} vertices attracted, {deepest} layers at most, {empty} empty");
    assert!(moved_in_all > 10_000 && deepest >= 4 && empty > 0);
    // A chain of player-1 vertices into a vertex at ⊤: one layer per vertex.
    for (n, answered) in [(3_000u32, true), (10_000, false)] {
        let mut edges = EdgeList::default();
        for v in 0..n {
            edges.push(v, (v + 1).min(n - 1), 0);
        }
        let arena = Arena::from_edges(vec![Player::One; n as usize], edges, None).expect("valid");
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let mut engine =
            GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
        let mut values = vec![0u64; n as usize];
        values[n as usize - 1] = TOP;
        engine.reset(Some(&values)).expect("uploads values");
        assert_eq!(
            engine.attract_top().expect("runs"),
            None,
            "no reachability yet"
        );
        let reached: Vec<u8> = values.iter().map(|&f| (f != TOP) as u8).collect();
        engine
            .reaching(&vec![u32::MAX; n as usize], &reached)
            .expect("runs")
            .expect("no sweeps to run");
        let device = engine.attract_top().expect("runs");
        assert_eq!(device.is_some(), answered, "a chain of {n}");
        if let Some(device) = device {
            assert_eq!(device.moved, n as usize - 1);
            assert_eq!(device.top_layers, n);
            let expected: Vec<u32> = (0..n).map(|v| n - 1 - v).collect();
            assert_eq!(device.layer, expected);
        }
    }
}

/// Where a GPU is, player 1's strategy chosen on the device (`player1_edges_w.._v..`)
/// equals the host's `choose_strategy` from the same values (after a partial lift, and at ⊤
/// vertices `NO_EDGE`) on random games with parallel edges of other weights (ties broken
/// by the lighter edge, then the first), 16-, 32- and 64-bit weights, both energy widths,
/// fixed seeds and a fresh one. Without a GPU: nothing to check.
fn device_player1_edges_equal_the_hosts_choice_where_a_gpu_is() {
    use egsolve_core::solve::accel::evaluate::choose_strategy;
    use egsolve_core::solve::control::{Budget, Control};
    use egsolve_core::solve::engine::{EngineSearches, LiftCall, LiftEngine};
    use egsolve_core::solve::strategy::{NO_EDGE, Topping};
    use egsolve_gpu::lift::GpuLift;
    let fresh = fresh_seed();
    let mut chosen = 0usize;
    for seed in (0..16u64).chain([fresh]) {
        let arena = scaled_game_with_parallel_edges(seed, [50, 3_000, 40_000, 150_000], 5);
        let n = arena.vertex_count();
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let options = GpuOptions {
            device_components_from: Some(0),
            wide: seed % 2 == 1,
            ..GpuOptions::default()
        };
        let engine = GpuEngine::upload(&arena, Some(bound), &options).expect("uploads");
        let mut lift = GpuLift::new(engine, &options);
        let mut values = Vec::new();
        let budget = Budget {
            lifts: (n as u64 / 2).max(10),
            until: None,
        };
        for phase in 0..2 {
            let run = lift
                .lift(
                    LiftCall {
                        arena: &arena,
                        bound,
                        topping: None::<&Topping>,
                        budget,
                        threads: &Threads::one(),
                        control: &Control::new(),
                    },
                    &mut values,
                )
                .expect("lifts");
            let device = lift.player1_edges().expect("runs").expect("in input order");
            let mut host = vec![NO_EDGE; n];
            choose_strategy(&arena, &values, bound, &mut host, &Threads::one());
            assert_eq!(device, host, "seed {seed} phase {phase}");
            chosen += host.iter().filter(|&&e| e != NO_EDGE).count();
            if run.finished {
                break;
            }
        }
    }
    assert!(chosen > 10_000, "{chosen} edges chosen");
}
