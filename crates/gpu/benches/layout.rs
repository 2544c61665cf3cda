//! Benchmark: preparing a game for the device (`DeviceLayout::new`: player 0 first, CSR and
//! CSC renumbered) on the host, against copying the same arrays, measured in one run.
//!
//! `cargo bench -p egsolve-gpu --bench layout [-- --edges M]` generates a random game of about `M` edges
//! (default 10^7, out-degree 4, half the vertices player 1's, 16-bit weights) and prints,
//! for 1 thread and for every core, the best of 5 layouts and of 5 plain copies of the
//! arena's adjacency and weight arrays (the bytes a layout writes), and their ratio. No GPU
//! is needed.

use std::time::Instant;

use egsolve_core::arena::Arena;
use egsolve_core::generate::{self, RandomParams};
use egsolve_gpu::VertexOrder;
use egsolve_gpu::layout::DeviceLayout;

fn best_of<T>(repeats: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..repeats)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Copies of the arrays a layout writes: both adjacencies and both weight columns.
fn copy_arrays(arena: &Arena) -> usize {
    let (succ, pred) = arena.typed_weights::<i16>().expect("16-bit weights");
    let copies = (
        arena.succ_offsets().to_vec(),
        arena.succ_targets().to_vec(),
        arena.pred_offsets().to_vec(),
        arena.pred_sources().to_vec(),
        succ.to_vec(),
        pred.to_vec(),
    );
    copies.1.len() + copies.3.len() + copies.4.len() + copies.5.len()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let edges: u64 = args
        .iter()
        .position(|a| a == "--edges")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--edges takes a number"))
        .unwrap_or(10_000_000);
    let params = RandomParams {
        vertices: (edges / 4) as u32,
        min_degree: 4,
        max_degree: 4,
        min_weight: -3,
        max_weight: 10,
        player1_percent: 50,
    };
    let start = Instant::now();
    let arena = generate::random(params, 42);
    println!(
        "random game: {} vertices, {} edges, generated in {:.1} s",
        arena.vertex_count(),
        arena.edge_count(),
        start.elapsed().as_secs_f64()
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut counts = vec![1];
    if cores > 1 {
        counts.push(cores);
    }
    println!("| threads | layout (ms) | copy of the arrays (ms) | layout / copy |");
    println!("|---:|---:|---:|---:|");
    for threads in counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let (layout, copy) = pool.install(|| {
            (
                best_of(5, || {
                    DeviceLayout::new(&arena, false, VertexOrder::PlayersFirst).m
                }),
                best_of(5, || copy_arrays(&arena)),
            )
        });
        println!(
            "| {threads} | {:.1} | {:.1} | {:.2} |",
            layout * 1e3,
            copy * 1e3,
            layout / copy
        );
    }
}
