//! The early upload where a GPU is (`egsolve_gpu::early_upload_hook`): an `egb` file read
//! with the hook gives an engine that took the copy made beside the load's checks, whose
//! predecessors (listed on the device from unchecked arrays) are the arena's and whose
//! lifting gives the reference's credits; a copy of a file the load refused is dropped (at
//! once, even where its offsets would make the listing endless), and a copy is taken only
//! for its own arrays, once. Without a GPU each check is listed as ignored, with the reason.

use egsolve_core::arena::Arena;
use egsolve_core::format::{self, Game, ReadOptions};
use egsolve_core::generate::{RandomParams, random};
use egsolve_core::solve::{Backend, Control, solve};
use egsolve_gpu::devices::driver_ready;
use egsolve_gpu::{
    GpuEngine, GpuOptions, discard_early_upload, early_upload_hook, pending_early_uploads,
};

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let missing = driver_ready().err().map(|e| format!("a GPU: {e}"));
    vec![egsolve_test_support::needing_hardware(
        "an_early_upload_is_the_arenas_own_and_only_its_where_a_gpu_is",
        missing,
        an_early_upload_is_the_arenas_own_and_only_its_where_a_gpu_is,
    )]
}

/// `arena` written as an `egb` file at `path`.
fn write_egb(arena: &Arena, path: &std::path::Path) -> Vec<u8> {
    let game = Game {
        arena: arena.clone(),
        parity: None,
        initial: None,
    };
    let mut bytes = Vec::new();
    format::write_egb(&game, &mut bytes).expect("writes");
    std::fs::write(path, &bytes).expect("writes the file");
    bytes
}

fn read_early(path: &std::path::Path) -> Result<Game, format::FormatError> {
    let opts = ReadOptions {
        early_successors: Some(early_upload_hook(None)),
        ..ReadOptions::default()
    };
    format::read_path(path, &opts)
}

/// The engine for `arena`, the bound summed on the device where it can be.
fn upload(arena: &Arena) -> GpuEngine {
    let options = GpuOptions::default();
    let bound = egsolve_core::solve::energy::bound(arena).expect("fits");
    let summed = GpuEngine::sums_bound(arena, &options);
    let engine = GpuEngine::upload(arena, (!summed).then_some(bound), &options).expect("uploads");
    assert_eq!(engine.bound(), bound, "the bound");
    engine
}

fn an_early_upload_is_the_arenas_own_and_only_its_where_a_gpu_is() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("game.egb");
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    for seed in [0u64, 1, 2, 3, fresh] {
        let weights = [
            (-10, 10),
            (-40_000, 40_000),
            (-3_000_000_000, 3_000_000_000),
        ];
        let (min_weight, max_weight) = weights[(seed % 3) as usize];
        let generated = random(
            RandomParams {
                vertices: [2_000, 30_000, 200_000][(seed % 3) as usize],
                min_degree: 1,
                max_degree: 1 + (seed % 6) as u32,
                min_weight,
                max_weight,
                player1_percent: 40,
            },
            seed,
        );
        write_egb(&generated, &path);
        eprintln!(
            "seed {seed}: {} vertices, {} edges",
            generated.vertex_count(),
            generated.edge_count()
        );
        let game = read_early(&path).expect("reads");
        let arena = &game.arena;
        let mut engine = upload(arena);
        assert!(engine.uploaded_early(), "seed {seed}: the early copy taken");
        let (offsets, sources, weights) = engine.listed_predecessors();
        for v in 0..arena.vertex_count() {
            let range = offsets[v] as usize..offsets[v + 1] as usize;
            let mut got: Vec<(u32, i64)> = range.map(|k| (sources[k], weights[k])).collect();
            got.sort_unstable();
            let mut expected: Vec<(u32, i64)> = arena.predecessors(v as u32).collect();
            expected.sort_unstable();
            assert_eq!(got, expected, "seed {seed}, vertex {v}");
        }
        if seed % 3 == 0 {
            // Small weights: plain lifting reaches the fixpoint quickly.
            let run = engine
                .lift_from(None, &GpuOptions::default(), &Control::new())
                .expect("lifts");
            let reference = solve(arena, Backend::Reference, &Control::new()).expect("solves");
            assert!(run.finished);
            assert_eq!(run.credit, reference.credit, "seed {seed}");
        }
    }

    eprintln!("the torn file");
    // A file whose block does not match its checksum: the hook copied it, the load refuses
    // it, and its copy is dropped; the next upload does not take it.
    let arena = random(RandomParams::default(), 9);
    let mut bytes = write_egb(&arena, &path);
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&path, &bytes).expect("writes");
    assert!(read_early(&path).is_err(), "a torn file is refused");
    assert_eq!(pending_early_uploads(), 1, "the hook copied it");
    discard_early_upload();
    assert_eq!(pending_early_uploads(), 0, "the copy is dropped");
    assert!(!upload(&arena).uploaded_early());

    // Successor offsets that fall and rise again (0, m, 0, m, …: every other vertex's range
    // the whole edge list) and targets out of range, in a file refused by its checksums:
    // the device, listing them before the checks end, finds the offsets unsound and does
    // nothing (listing such ranges would take about n·m/8 steps), and the copy is
    // discarded at once.
    let mut params = RandomParams::default();
    (params.vertices, params.min_degree, params.max_degree) = (500_000, 4, 4);
    let big = random(params, 11);
    let mut bytes = write_egb(&big, &path);
    let (n, m) = (big.vertex_count(), big.edge_count());
    // The successor offsets follow the owners (`docs/egb-format.md`), the targets them.
    let offsets_at = (64 + n).next_multiple_of(64);
    for u in 0..=n {
        let value = if u % 2 == 1 || u == n { m as u32 } else { 0 };
        bytes[offsets_at + 4 * u..offsets_at + 4 * u + 4].copy_from_slice(&value.to_le_bytes());
    }
    let targets_at = (offsets_at + 4 * (n + 1)).next_multiple_of(64);
    bytes[targets_at..targets_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&path, &bytes).expect("writes");
    let clock = std::time::Instant::now();
    assert!(read_early(&path).is_err(), "damaged offsets are refused");
    discard_early_upload();
    let seconds = clock.elapsed().as_secs_f64();
    assert!(seconds < 60.0, "the damaged copy took {seconds} s to end");
    assert_eq!(pending_early_uploads(), 0);

    // A copy of a file's arrays is not taken for another arena (built in memory, with the
    // same values): it waits for its own.
    write_egb(&arena, &path);
    let from_file = read_early(&path).expect("reads");
    assert!(
        !upload(&arena).uploaded_early(),
        "the copy is of other arrays"
    );
    assert!(upload(&from_file.arena).uploaded_early());
    assert!(!upload(&from_file.arena).uploaded_early(), "taken once");
}
