//! `egb` version 2 (`docs/egb-format.md`): every class of damage — header fields, the
//! length, the header's checksum, a block's checksum, padding, owners, both sides' offsets,
//! targets and sources out of range, predecessor lists out of order or not the transpose,
//! a predecessor's weight — is refused with the offset of the offending byte (the
//! checksums resealed, so that the check behind them is reached); random resealed damage
//! never panics; files read from disk are used where they lie in the map and solve exactly
//! like the game they were written from; `gen`'s writer maps its output file and gives the
//! game it gives in memory.

use std::ops::Range;

use egsolve_test_support as common;

use egsolve_core::arena::{Arena, Player};
use egsolve_core::format::egb::EgbWriter;
use egsolve_core::format::{self, FormatError, Game, ReadOptions};
use egsolve_core::generate::{self, RandomParams, RandomPlan};
use egsolve_core::solve::{self, Backend, Control};
use proptest::prelude::*;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

fn egb2(game: &Game) -> Vec<u8> {
    let mut bytes = Vec::new();
    format::write_egb(game, &mut bytes).unwrap();
    bytes
}

fn load(bytes: &[u8]) -> Result<Game, FormatError> {
    format::read_bytes(bytes, &ReadOptions::default())
}

/// The offset and problem of a `Binary` error (any other error fails the test).
fn damage(bytes: &[u8]) -> (u64, String) {
    match load(bytes) {
        Err(FormatError::Binary { offset, problem }) => (offset, problem),
        Err(other) => panic!("expected an egb error, got: {other}"),
        Ok(_) => panic!("a damaged egb file was accepted"),
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
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

/// A game with names, an initial vertex and 64-bit weights: vertex 0 → 1 (5), 2 (−3);
/// 1 → 0 (−7); 2 → 3 (0), 2 (1); 3 → 0 (MAX), 1 (−9). Predecessors: 0 ← 1, 3; 1 ← 0, 3;
/// 2 ← 0, 2; 3 ← 2.
fn sample() -> (Game, Vec<u8>) {
    let text = "3 6;\n0 MAX 1:5,2:-3 \"start\";\n1 MIN 0:-7;\n2 MAX 3:0, 2:1;\n\
                3 MIN 0:9223372036854775807, 1:-9;\n";
    let mut game = format::read_bytes(text.as_bytes(), &ReadOptions::default()).unwrap();
    game.initial = Some(2);
    let bytes = egb2(&game);
    (game, bytes)
}

/// A parity game with names, as `egb` version 2.
fn parity_sample() -> Vec<u8> {
    let text = "parity 3;\nstart 0;\n0 2 0 1, 2 \"s0\";\n1 5 1 0;\n2 0 0 3, 2;\n3 1 1 0;\n";
    egb2(&format::read_bytes(text.as_bytes(), &ReadOptions::default()).unwrap())
}

#[test]
fn both_samples_round_trip_and_the_layout_is_the_specifications() {
    let (game, bytes) = sample();
    assert_eq!(load(&bytes).unwrap(), game);
    let l = layout(&bytes);
    assert_eq!(l.table.end, bytes.len());
    assert_eq!(u32_at(&bytes, 8), 2);
    let parity = parity_sample();
    assert_eq!(layout(&parity).table.end, parity.len());
    let back = load(&parity).unwrap();
    assert!(back.parity.is_some());
    let mut resealed = bytes.clone();
    reseal(&mut resealed, &l);
    assert_eq!(resealed, bytes, "the test's reseal is the writer's");
}

#[test]
fn every_class_of_damage_names_its_byte() {
    let (_, bytes) = sample();
    let l = layout(&bytes);
    let s = &l.sections;
    let [owners, so, st, po, ps, pw] = [0, 1, 2, 4, 5, 6].map(|i| s[i].clone());
    let (so, st, po, ps, pw) = (so.start, st.start, po.start, ps.start, pw.start);
    let owners = owners.start;
    let n = 4;
    let m = 7;
    type Change = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(Change, usize, &str)> = vec![
        (
            Box::new(move |b| b[owners + 2] = 2),
            owners + 2,
            "owner 2 of vertex 2",
        ),
        (
            Box::new(move |b| put_u32(b, so + 8, 9)),
            so + 12,
            "below vertex 2's 9",
        ),
        (
            Box::new(move |b| put_u32(b, so + 4 * n, 99)),
            so + 4 * n,
            "expected the edge count",
        ),
        (
            Box::new(move |b| put_u32(b, so + 4, 0)),
            so + 4,
            "no successor",
        ),
        (
            Box::new(move |b| put_u32(b, st + 4 * (m - 1), 4)),
            st + 4 * (m - 1),
            "leads to vertex 4",
        ),
        (
            Box::new(move |b| put_u32(b, po + 8, 1)),
            po + 8,
            "below vertex 1's 2",
        ),
        (
            Box::new(move |b| put_u32(b, po + 4 * n, 6)),
            po + 4 * n,
            "expected the edge count 7",
        ),
        (
            Box::new(move |b| put_u32(b, ps, 4)),
            ps,
            "predecessor 0 is vertex 4",
        ),
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
        (
            Box::new(move |b| put_u32(b, ps + 4, 2)),
            po + 4,
            "lack edge 5 (3 -> 0",
        ),
        (
            Box::new(move |b| b[owners + n + 2] = 1),
            owners + n + 2,
            "padding",
        ),
        (Box::new(|b| put_u32(b, 8, 3)), 8, "version 3"),
        (Box::new(|b| put_u32(b, 12, 64)), 12, "unknown flags"),
        (Box::new(|b| put_u32(b, 16, 3)), 16, "bytes per weight"),
        (Box::new(|b| put_u32(b, 20, 40)), 20, "checksum blocks"),
        (Box::new(|b| put_u64(b, 24, 0)), 24, "0 vertices"),
        (Box::new(|b| put_u64(b, 24, u64::MAX)), 24, "vertices"),
        (Box::new(|b| put_u64(b, 32, u64::MAX / 2)), 32, "edges"),
        (Box::new(|b| put_u64(b, 40, 4)), 40, "initial vertex 4"),
        (Box::new(|b| put_u64(b, 48, u64::MAX - 3)), 48, "overflow"),
        // Counts in range whose sections do not fit the file: truncated, nothing allocated.
        (
            Box::new(|b| put_u64(b, 24, u64::from(u32::MAX) - 2)),
            usize::MAX,
            "truncated",
        ),
        (
            Box::new(|b| put_u64(b, 32, u64::from(u32::MAX) - 2)),
            usize::MAX,
            "truncated",
        ),
    ];
    for (change, offset, fragment) in cases {
        let mut bad = bytes.clone();
        change(&mut bad);
        reseal(&mut bad, &l);
        let (at, problem) = damage(&bad);
        let offset = if offset == usize::MAX {
            bad.len()
        } else {
            offset
        };
        assert_eq!(at, offset as u64, "{problem}");
        assert!(problem.contains(fragment), "{problem:?} lacks {fragment:?}");
        let message = load(&bad).unwrap_err().to_string();
        assert!(message.starts_with(&format!("byte {at}: ")), "{message}");
        assert!(message.contains("egsolve convert"), "{message}");
    }
}

#[test]
fn a_flipped_byte_is_refused_at_its_block_gap_or_header() {
    for bytes in [sample().1, parity_sample()] {
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
    for bytes in [sample().1, parity_sample()] {
        for len in 8..bytes.len() {
            let (offset, problem) = damage(&bytes[..len]);
            assert_eq!(offset, len as u64, "cut at {len}: {problem}");
            assert!(problem.contains("ends after"), "{problem}");
        }
    }
}

#[test]
fn resealed_random_damage_never_panics() {
    let files = [sample().1, parity_sample()];
    common::proptest_seeded(
        500,
        &[7, 8],
        (
            0..2usize,
            prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        ),
        |(which, changes)| {
            let mut bad = files[which].clone();
            let l = layout(&bad);
            for (at, value) in changes {
                let at = 64 + at.index(l.table.start - 64);
                bad[at] = value;
            }
            reseal(&mut bad, &l);
            if let Err(e) = load(&bad) {
                let expected = matches!(e, FormatError::Binary { .. } | FormatError::Reduction(_));
                prop_assert!(expected, "unexpected error: {}", e);
            }
            Ok(())
        },
    );
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
