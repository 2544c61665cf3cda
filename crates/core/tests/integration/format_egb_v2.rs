//! `egb` version 2 (`docs/egb-format.md`): every class of damage — header fields, the
//! length, the header's checksum, a block's checksum, padding, owners, both sides' offsets,
//! targets and sources out of range, predecessor lists out of order or not the transpose,
//! a predecessor's weight — is refused with the offset of the offending byte (the
//! checksums resealed, so that the check behind them is reached); random resealed damage
//! never panics; files read from disk are used where they lie in the map and solve exactly
//! like the game they were written from; `gen`'s writer maps its output file and gives the
//! game it gives in memory; the early hook gets the arena's own successor arrays once
//! the header passes, and never for a damaged header or a parity game.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::format_support::{
    Damage, assert_random_damage_never_panics, assert_refused, damage, egb2, header_damage, load,
    parity_sample, put_u32, put_u64, sample, u32_damage,
};

use egsolve_core::arena::{Arena, Player, WeightSlice};
use egsolve_core::format::egb::{EgbWriter, SuccessorsHook};
use egsolve_core::format::{self, Game, ReadOptions};
use egsolve_core::generate::{self, RandomParams, RandomPlan};
use egsolve_core::solve::{self, Backend, Control};
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The sections of a version 2 file, computed from its header as the specification says
/// (independently of the crate's own layout code): owners, successor offsets, targets,
/// weights, predecessor offsets, sources, weights, priorities, name flags, name offsets,
/// name text; then the table.
struct Layout {
    sections: Vec<Range<usize>>,
    table: Range<usize>,
    block: usize,
}

fn layout(b: &[u8]) -> Layout {
    let (flags, w) = (u32_at(b, 12) as usize, u32_at(b, 16) as usize);
    let (n, m) = (u64_at(b, 24) as usize, u64_at(b, 32) as usize);
    let named = flags & 1 != 0;
    let lens = [
        n,
        4 * (n + 1),
        4 * m,
        w * m,
        4 * (n + 1),
        4 * m,
        w * m,
        if flags & 2 != 0 { 8 * n } else { 0 },
        if named { n } else { 0 },
        if named { 8 * (n + 1) } else { 0 },
        u64_at(b, 48) as usize,
    ];
    let block = 1usize << u32_at(b, 20);
    let mut at = 64usize;
    let mut sections = Vec::new();
    for len in lens {
        let start = at.next_multiple_of(64);
        sections.push(start..start + len);
        at = start + len;
    }
    let blocks: usize = sections.iter().map(|s| s.len().div_ceil(block)).sum();
    let start = at.next_multiple_of(64);
    Layout {
        sections,
        table: start..start + 8 * blocks,
        block,
    }
}

/// Rewrites the block table and the header's checksum to match the bytes (`l`: the layout
/// of the file before it was changed).
fn reseal(b: &mut [u8], l: &Layout) {
    let mut table = Vec::new();
    for s in &l.sections {
        let mut start = s.start;
        while start < s.end {
            let end = (start + l.block).min(s.end);
            table.extend_from_slice(&xxh3_64(&b[start..end]).to_le_bytes());
            start = end;
        }
    }
    b[l.table.clone()].copy_from_slice(&table);
    let mut h = Xxh3::new();
    h.update(&b[..56]);
    h.update(&table);
    let sum = h.digest();
    b[56..64].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn both_samples_round_trip_and_the_layout_is_the_specifications() {
    let (game, bytes) = sample(egb2);
    assert_eq!(load(&bytes).unwrap(), game);
    let l = layout(&bytes);
    assert_eq!(l.table.end, bytes.len());
    assert_eq!(u32_at(&bytes, 8), 2);
    let parity = parity_sample(egb2);
    assert_eq!(layout(&parity).table.end, parity.len());
    let back = load(&parity).unwrap();
    assert!(back.parity.is_some());
    let mut resealed = bytes.clone();
    reseal(&mut resealed, &l);
    assert_eq!(resealed, bytes, "the test's reseal is the writer's");
}

#[test]
fn every_class_of_damage_names_its_byte() {
    let (_, bytes) = sample(egb2);
    let l = layout(&bytes);
    let s = &l.sections;
    let [owners, so, st, po, ps, pw] = [0, 1, 2, 4, 5, 6].map(|i| s[i].clone());
    let (so, st, po, ps, pw) = (so.start, st.start, po.start, ps.start, pw.start);
    let owners = owners.start;
    let n = 4;
    let m = 7;
    let mut cases: Vec<Damage> = vec![
        (
            Box::new(move |b| b[owners + 2] = 2),
            owners + 2,
            "owner 2 of vertex 2",
        ),
        u32_damage(so + 8, 9, so + 12, "below vertex 2's 9"),
        u32_damage(so + 4 * n, 99, so + 4 * n, "expected the edge count"),
        u32_damage(so + 4, 0, so + 4, "no successor"),
        u32_damage(st + 4 * (m - 1), 4, st + 4 * (m - 1), "leads to vertex 4"),
        u32_damage(po + 8, 1, po + 8, "below vertex 1's 2"),
        u32_damage(po + 4 * n, 6, po + 4 * n, "expected the edge count 7"),
        u32_damage(ps, 4, ps, "predecessor 0 is vertex 4"),
        (
            Box::new(move |b| {
                put_u32(b, ps, 3);
                put_u32(b, ps + 4, 1);
            }),
            ps + 4,
            "not in ascending order",
        ),
        (Box::new(move |b| put_u64(b, pw + 8, 0)), pw + 8, "weighs 0"),
        // Sorted and in range, but not the transpose: 0 ← 1, 2 instead of 1, 3.
        u32_damage(ps + 4, 2, po + 4, "lack edge 5 (3 -> 0"),
        (
            Box::new(move |b| b[owners + n + 2] = 1),
            owners + n + 2,
            "padding",
        ),
        (Box::new(|b| put_u32(b, 20, 40)), 20, "checksum blocks"),
    ];
    cases.extend(header_damage());
    assert_refused(&bytes, cases, |bad| reseal(bad, &l));
}

#[test]
fn a_flipped_byte_is_refused_at_its_block_gap_or_header() {
    for bytes in [sample(egb2).1, parity_sample(egb2)] {
        let l = layout(&bytes);
        for at in 8..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x41;
            let (offset, problem) = damage(&bad);
            if let Some(s) = l.sections.iter().find(|s| s.contains(&at)) {
                let block = s.start + (at - s.start) / l.block * l.block;
                assert_eq!(offset as usize, block, "flip at {at}: {problem}");
                assert!(problem.contains("checksum"), "{problem}");
            } else if l.table.contains(&at) {
                assert_eq!(offset, 56, "flip at {at}: {problem}");
            } else if at >= 64 {
                assert_eq!(offset as usize, at, "flip at {at}: {problem}");
                assert!(problem.contains("padding"), "{problem}");
            }
        }
    }
}

#[test]
fn truncation_anywhere_is_refused_at_the_end() {
    for bytes in [sample(egb2).1, parity_sample(egb2)] {
        for len in 8..bytes.len() {
            let (offset, problem) = damage(&bytes[..len]);
            assert_eq!(offset, len as u64, "cut at {len}: {problem}");
            assert!(problem.contains("ends after"), "{problem}");
        }
    }
}

#[test]
fn resealed_random_damage_never_panics() {
    let files = [sample(egb2).1, parity_sample(egb2)];
    assert_random_damage_never_panics(files, |bad, changes| {
        let l = layout(bad);
        for (at, value) in changes {
            let at = 64 + at.index(l.table.start - 64);
            bad[at] = value;
        }
        reseal(bad, &l);
    });
}

fn game(arena: Arena) -> Game {
    Game {
        arena,
        parity: None,
        initial: None,
    }
}

#[test]
fn mapped_arenas_are_the_files_and_solve_like_parsed_ones() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (vertices, weights)) in [
        (300u32, (-10, 10)),
        (2000, (-70_000, 70_000)),
        (5000, (-3, 5)),
    ]
    .into_iter()
    .enumerate()
    {
        let params = RandomParams {
            vertices,
            min_degree: 1,
            max_degree: 5,
            min_weight: weights.0,
            max_weight: weights.1,
            player1_percent: 40,
        };
        let original = game(generate::random(params, i as u64));
        let mut text = Vec::new();
        format::write_mpg(&original.arena, &mut text).unwrap();
        let parsed = load(&text).unwrap();
        let path = dir.path().join(format!("g{i}.egb"));
        std::fs::write(&path, egb2(&original)).unwrap();
        let mapped = format::read_path(&path, &ReadOptions::default()).unwrap();
        assert_eq!(mapped, parsed);
        let arena = &mapped.arena;
        assert_eq!(
            arena.mapped_bytes(),
            arena.heap_bytes(),
            "every array is the file's"
        );
        assert_eq!(parsed.arena.mapped_bytes(), 0);
        for backend in [Backend::Auto, Backend::Cpu, Backend::Reference] {
            let a = solve::solve(arena, backend, &Control::new()).unwrap();
            let b = solve::solve(&parsed.arena, backend, &Control::new()).unwrap();
            assert_eq!(a.credit, b.credit, "{backend:?}");
            // Player 0's moves are the same in every run (player 1's are one certified
            // winning strategy, not always the same one).
            let zero = |s: &solve::Solution| -> Vec<u32> {
                (0..arena.vertex_count())
                    .filter(|&v| arena.owners()[v] == Player::Zero)
                    .map(|v| s.strategy[v])
                    .collect()
            };
            assert_eq!(zero(&a), zero(&b), "{backend:?}");
        }
        // A version 1 file of the same game reads the same (copied and built).
        let mut v1 = Vec::new();
        format::write_egb_v1(&original, &mut v1).unwrap();
        let v1_path = dir.path().join(format!("g{i}.v1.egb"));
        std::fs::write(&v1_path, v1).unwrap();
        let old = format::read_path(&v1_path, &ReadOptions::default()).unwrap();
        assert_eq!(old, parsed);
        assert_eq!(old.arena.mapped_bytes(), 0);
    }
}

#[test]
fn the_generators_file_is_the_game_it_gives_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let params = RandomParams {
        vertices: 40_000,
        min_degree: 2,
        max_degree: 6,
        min_weight: -10,
        max_weight: 10,
        player1_percent: 10,
    };
    let plan = RandomPlan::new(params, 3).unwrap();
    let path = dir.path().join("gen.egb");
    let mut out =
        EgbWriter::create(Some(&path), plan.vertices(), plan.edges(), plan.width()).unwrap();
    plan.fill(out.sections());
    out.finish(None).unwrap();
    let from_file = format::read_path(&path, &ReadOptions::default()).unwrap();
    assert_eq!(
        from_file.arena,
        generate::random_parallel(params, 3).unwrap()
    );
    assert_eq!(from_file.arena.mapped_bytes(), from_file.arena.heap_bytes());
    // Written again through the stream writer: the same bytes.
    assert_eq!(egb2(&from_file), std::fs::read(&path).unwrap());
}

/// What a [`SuccessorsHook`] was given: the arrays' addresses and their values.
type Seen = Vec<((usize, usize, usize), Vec<u32>, Vec<u32>, Vec<i64>)>;

fn weights_at(weights: WeightSlice<'_>) -> usize {
    match weights {
        WeightSlice::I16(w) => w.as_ptr() as usize,
        WeightSlice::I32(w) => w.as_ptr() as usize,
        WeightSlice::I64(w) => w.as_ptr() as usize,
    }
}

fn read_watched(path: &std::path::Path) -> (Result<Game, format::FormatError>, Seen) {
    let seen = Arc::new(Mutex::new(Seen::new()));
    let record = Arc::clone(&seen);
    let opts = ReadOptions {
        early_successors: Some(SuccessorsHook::new(move |s| {
            let weights = match s.weights() {
                WeightSlice::I16(w) => w.iter().map(|&x| x.into()).collect(),
                WeightSlice::I32(w) => w.iter().map(|&x| x.into()).collect(),
                WeightSlice::I64(w) => w.to_vec(),
            };
            assert_eq!(s.offsets().len(), s.vertex_count() + 1);
            assert_eq!(s.targets().len(), s.edge_count());
            let address = (
                s.offsets().as_ptr() as usize,
                s.targets().as_ptr() as usize,
                weights_at(s.weights()),
            );
            let entry = (address, s.offsets().to_vec(), s.targets().to_vec(), weights);
            record.lock().unwrap().push(entry);
        })),
        ..ReadOptions::default()
    };
    let read = format::read_path(path, &opts);
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (read, seen)
}

#[test]
fn the_early_hook_gets_the_arenas_own_successors_once_the_header_passes() {
    let dir = tempfile::tempdir().unwrap();
    for (i, weights) in [(-10, 10), (-70_000, 70_000), (i64::MIN / 4, i64::MAX / 4)]
        .into_iter()
        .enumerate()
    {
        let params = RandomParams {
            vertices: 3000,
            min_degree: 1,
            max_degree: 6,
            min_weight: weights.0,
            max_weight: weights.1,
            player1_percent: 40,
        };
        let original = game(generate::random(params, 7 + i as u64));
        let bytes = egb2(&original);
        let path = dir.path().join(format!("g{i}.egb"));
        std::fs::write(&path, &bytes).unwrap();
        let (read, seen) = read_watched(&path);
        let arena = read.unwrap().arena;
        assert_eq!(arena, original.arena);
        let [(address, offsets, targets, weights)] = &seen[..] else {
            panic!("the hook ran {} times, expected once", seen.len());
        };
        // The very arrays the arena borrows, so a consumer can match its copy by address.
        let arena_address = (
            arena.succ_offsets().as_ptr() as usize,
            arena.succ_targets().as_ptr() as usize,
            weights_at(arena.succ_weights()),
        );
        assert_eq!(*address, arena_address);
        assert_eq!(offsets, arena.succ_offsets());
        assert_eq!(targets, arena.succ_targets());
        let arena_weights: Vec<i64> = (0..arena.edge_count()).map(|e| arena.weight(e)).collect();
        assert_eq!(weights, &arena_weights);

        // The checksums pass but a target is out of range: the hook has the bytes (it must
        // not use them), and the load refuses the file.
        let l = layout(&bytes);
        let mut bad = bytes.clone();
        put_u32(&mut bad, l.sections[2].start + 8, 1 << 30);
        reseal(&mut bad, &l);
        std::fs::write(&path, &bad).unwrap();
        let (read, seen) = read_watched(&path);
        assert!(read.is_err());
        assert_eq!(seen.len(), 1);
        // A block that does not match its checksum: the hook had the bytes, the load
        // refuses them.
        let mut torn = bytes.clone();
        torn[l.sections[2].start] ^= 1;
        std::fs::write(&path, &torn).unwrap();
        let (read, seen) = read_watched(&path);
        assert!(read.is_err());
        assert_eq!(seen.len(), 1);
        // A header that does not match its checksum (the stored checksum changed, every
        // field intact): the hook is never called.
        let mut bad_header = bytes.clone();
        bad_header[56] ^= 1;
        std::fs::write(&path, &bad_header).unwrap();
        let (read, seen) = read_watched(&path);
        assert!(read.is_err());
        assert!(seen.is_empty());
    }
    // A parity game's weights are computed, not stored: no hook.
    let path = dir.path().join("parity.egb");
    std::fs::write(&path, parity_sample(egb2)).unwrap();
    let (read, seen) = read_watched(&path);
    assert!(read.unwrap().parity.is_some());
    assert!(seen.is_empty());
}
