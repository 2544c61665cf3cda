//! Tests of the device engine's own kernels where a GPU is: the memory pool kept and
//! released, the predecessor lists and bound the device makes from the uploaded
//! successors, and its prefix sums. Without a GPU they are listed as ignored, with the
//! reason.

use cudarc::driver::DevicePtrMut;
use egsolve_core::arena::{Arena, EdgeList};
use egsolve_core::generate::{RandomParams, random};
use egsolve_gpu::compile::{LANES, kernels, release_freed_memory};
use egsolve_gpu::devices::{device_info, driver_ready};
use egsolve_gpu::engine::predecessors::{SCAN_TILE, exclusive_prefix_sum};
use egsolve_gpu::layout::device_bytes;
use egsolve_gpu::{GpuEngine, GpuOptions, VertexOrder};

/// Every check needs a GPU: where none is, each is listed as ignored with the reason.
/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let missing = driver_ready().err().map(|e| format!("a GPU: {e}"));
    let checks: [(&str, fn()); 3] = [
        (
            "freed_device_memory_is_kept_and_released_on_demand_where_a_gpu_is",
            freed_device_memory_is_kept_and_released_on_demand_where_a_gpu_is,
        ),
        (
            "device_lists_the_arenas_predecessors_and_sums_its_bound_where_a_gpu_is",
            device_lists_the_arenas_predecessors_and_sums_its_bound_where_a_gpu_is,
        ),
        (
            "device_prefix_sums_equal_the_hosts_where_a_gpu_is",
            device_prefix_sums_equal_the_hosts_where_a_gpu_is,
        ),
    ];
    checks
        .into_iter()
        .map(|(name, check)| egsolve_test_support::needing_hardware(name, missing.clone(), check))
        .collect()
}

/// Where a GPU is, the memory a dropped game held stays with the process (the driver
/// counts it as used) until [`release_freed_memory`] hands it back. The device's free
/// memory is the whole process's: another test's upload between the drop and the release
/// can take the kept blocks (seen once on the H200 host, session 62), so the measurement is
/// tried up to five times and must hold once.
fn freed_device_memory_is_kept_and_released_on_demand_where_a_gpu_is() {
    let arena = random(
        RandomParams {
            vertices: 1 << 20,
            ..RandomParams::default()
        },
        3,
    );
    let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
    let bytes = device_bytes(
        arena.vertex_count() as u64,
        arena.edge_count() as u64,
        16,
        32,
    );
    let mut attempts = Vec::new();
    for _ in 0..5 {
        let engine =
            GpuEngine::upload(&arena, Some(bound), &GpuOptions::default()).expect("uploads");
        let ordinal = engine.ordinal();
        engine.stream().synchronize().expect("synchronises");
        drop(engine);
        kernels(ordinal)
            .expect("opened")
            .ctx
            .synchronize()
            .expect("frees complete");
        let kept = device_info(ordinal).expect("reads").memory_free;
        release_freed_memory(ordinal);
        let released = device_info(ordinal).expect("reads").memory_free;
        attempts.push((kept, released));
        if released >= kept + bytes / 2 {
            return;
        }
    }
    panic!(
        "(bytes free with the game's memory kept, after releasing it): {attempts:?} \
         ({bytes} bytes estimated for the game)"
    );
}

/// Where a GPU is, the predecessors the device lists from the uploaded successors are
/// the arena's, vertex for vertex (as multisets: the order within a list is the
/// device's), at every weight width, in both vertex orders and with every lane count,
/// on random games with a hub of many predecessors and successors (fixed seeds and a
/// fresh one); the bound the device sums (16- and 32-bit weights, energies of either
/// width) is the host's. Without a GPU: nothing to check.
fn device_lists_the_arenas_predecessors_and_sums_its_bound_where_a_gpu_is() {
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    for seed in (0..12u64).chain([fresh]) {
        let base = random(
            RandomParams {
                vertices: [30, 1_000, 20_000, 150_000][(seed % 4) as usize],
                min_degree: 1,
                max_degree: 1 + (seed % 6) as u32,
                min_weight: [-5, -40_000, -3_000_000_000][(seed % 3) as usize],
                max_weight: [5, 40_000, 3_000_000_000][(seed % 3) as usize],
                player1_percent: (seed * 23 % 101) as u8,
            },
            seed,
        );
        // Vertex 0 becomes a hub: an edge to and from every 3rd vertex.
        let n = base.vertex_count() as u32;
        let mut edges = EdgeList::with_capacity(base.edge_count() + 2 * n as usize);
        for v in 0..n {
            for (u, w) in base.successors(v) {
                edges.push(v, u, w);
            }
            if v % 3 == 0 {
                edges.push(0, v, v as i64 % 7 - 3);
                edges.push(v, 0, 2 - v as i64 % 5);
            }
        }
        let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
        let bound = egsolve_core::solve::energy::bound(&arena).expect("fits");
        let orders = [VertexOrder::Input, VertexOrder::PlayersFirst];
        let options = GpuOptions {
            order: orders[(seed % 2) as usize],
            wide: seed % 5 == 4,
            lanes: Some(LANES[(seed as usize) % LANES.len()]),
            ..GpuOptions::default()
        };
        // The bound summed on the device where it can be, given where not.
        let summed = GpuEngine::sums_bound(&arena, &options);
        let engine =
            GpuEngine::upload(&arena, (!summed).then_some(bound), &options).expect("uploads");
        assert_eq!(
            engine.bound(),
            bound,
            "seed {seed}: the bound (summed: {summed})"
        );
        let (offsets, sources, weights) = engine.listed_predecessors();
        assert_eq!(
            offsets.len(),
            n as usize + 1,
            "seed {seed}: the CSC's offsets"
        );
        assert_eq!(offsets[n as usize] as usize, arena.edge_count());
        let old_of_new = |d: u32| {
            engine
                .numbering()
                .map_or(d, |numbering| numbering.old_of_new[d as usize])
        };
        for d in 0..n {
            let range = offsets[d as usize] as usize..offsets[d as usize + 1] as usize;
            let mut got: Vec<(u32, i64)> = range
                .map(|k| (old_of_new(sources[k]), weights[k]))
                .collect();
            got.sort_unstable();
            let mut expected: Vec<(u32, i64)> = arena.predecessors(old_of_new(d)).collect();
            expected.sort_unstable();
            assert_eq!(got, expected, "seed {seed}, device vertex {d}");
        }
    }
}

/// Where a GPU is, the device's exclusive prefix sums equal the host's at sizes around
/// one tile, and past a tile of tiles (so the tiles' totals are summed recursively,
/// three levels), random counts from a fixed seed and a fresh one. Without a GPU:
/// nothing to check.
fn device_prefix_sums_equal_the_hosts_where_a_gpu_is() {
    let device = kernels(0).expect("opened");
    let lift = device.lift(16, 32).expect("compiled");
    let stream = device.ctx.new_stream().expect("a stream");
    let tile = SCAN_TILE as usize;
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    for (i, len) in [
        1,
        2,
        5,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        tile * tile + 3,
    ]
    .into_iter()
    .enumerate()
    {
        for seed in [i as u64, fresh] {
            let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let counts: Vec<u32> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 9) as u32
                })
                .collect();
            let mut on_device = stream.clone_htod(&counts).expect("uploads");
            {
                let (ptr, _record) = on_device.device_ptr_mut(&stream);
                exclusive_prefix_sum(&stream, &lift, ptr, len as u32).expect("sums");
            }
            let got = stream.clone_dtoh(&on_device).expect("downloads");
            let expected: Vec<u32> = counts
                .iter()
                .scan(0u32, |sum, &c| {
                    let before = *sum;
                    *sum += c;
                    Some(before)
                })
                .collect();
            assert_eq!(got, expected, "length {len}, seed {seed}");
        }
    }
}
