//! What the format tests share: an arena of generated vertices; and for the `egb` tests of
//! both versions (`format_egb.rs`, `format_egb_v2.rs`), writing and reading, the error a
//! damaged file gets, fields changed in place, the two sample games, the header damage
//! both versions refuse, and the checks on each damaged copy.

use egsolve_test_support as common;

use std::io::Write;

use egsolve_core::arena::{Arena, EdgeList, Player};
use egsolve_core::format::{self, FormatError, Game, ReadOptions};
use proptest::prelude::*;

/// A generated vertex: owned by player 1 or not, its successors (target, weight), its name.
pub type Vertex = (bool, Vec<(u32, i64)>, Option<String>);

/// The arena of `vertices` (vertex `v` the `v`-th), with their names if `named`.
pub fn arena_of(vertices: Vec<Vertex>, named: bool) -> Arena {
    let mut edges = EdgeList::default();
    let mut owners = Vec::new();
    let mut names = Vec::new();
    for (v, (owner, succ, name)) in vertices.into_iter().enumerate() {
        owners.push(Player::one_if(owner));
        for (t, w) in succ {
            edges.push(v as u32, t, w);
        }
        names.push(name.map(Into::into));
    }
    Arena::from_edges(owners, edges, named.then_some(names)).expect("valid by construction")
}

/// `bytes` gzipped.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `bytes` compressed with bzip2.
pub fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `game` as `egb` version 2.
pub fn egb2(game: &Game) -> Vec<u8> {
    let mut bytes = Vec::new();
    format::write_egb(game, &mut bytes).unwrap();
    bytes
}

pub fn load(bytes: &[u8]) -> Result<Game, FormatError> {
    format::read_bytes(bytes, &ReadOptions::default())
}

/// The offset and problem of a `Binary` error (any other error fails the test).
pub fn damage(bytes: &[u8]) -> (u64, String) {
    match load(bytes) {
        Err(FormatError::Binary { offset, problem }) => (offset, problem),
        Err(other) => panic!("expected an egb error, got: {other}"),
        Ok(_) => panic!("a damaged egb file was accepted"),
    }
}

pub fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

pub fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// A game with names, an initial vertex and 64-bit weights: vertex 0 → 1 (5), 2 (−3);
/// 1 → 0 (−7); 2 → 3 (0), 2 (1); 3 → 0 (MAX), 1 (−9). Predecessors: 0 ← 1, 3; 1 ← 0, 3;
/// 2 ← 0, 2; 3 ← 2. With its bytes as `write` writes them.
pub fn sample(write: fn(&Game) -> Vec<u8>) -> (Game, Vec<u8>) {
    let text = "3 6;\n0 MAX 1:5,2:-3 \"start\";\n1 MIN 0:-7;\n2 MAX 3:0, 2:1;\n\
                3 MIN 0:9223372036854775807, 1:-9;\n";
    let mut game = format::read_bytes(text.as_bytes(), &ReadOptions::default()).unwrap();
    game.initial = Some(2);
    let bytes = write(&game);
    (game, bytes)
}

/// A parity game with names, as `write` writes it.
pub fn parity_sample(write: fn(&Game) -> Vec<u8>) -> Vec<u8> {
    let text = "parity 3;\nstart 0;\n0 2 0 1, 2 \"s0\";\n1 5 1 0;\n2 0 0 3, 2;\n3 1 1 0;\n";
    write(&format::read_bytes(text.as_bytes(), &ReadOptions::default()).unwrap())
}

/// A damage to a file's bytes, the offset the error must name (`usize::MAX`: the file's
/// end), and what it names.
pub type Damage<'a> = (Box<dyn Fn(&mut Vec<u8>) + 'a>, usize, &'a str);

/// The damage of writing `value` as the `u32` at `at`, which the error names at `offset`
/// with `fragment`.
pub fn u32_damage(at: usize, value: u32, offset: usize, fragment: &str) -> Damage<'_> {
    (Box::new(move |b| put_u32(b, at, value)), offset, fragment)
}

/// Damage to the header's fields that both versions refuse alike.
pub fn header_damage() -> Vec<Damage<'static>> {
    let mut cases: Vec<Damage> = vec![
        (Box::new(|b| put_u32(b, 8, 3)), 8, "version 3"),
        (Box::new(|b| put_u32(b, 12, 64)), 12, "unknown flags"),
        (Box::new(|b| put_u32(b, 16, 3)), 16, "bytes per weight"),
        (Box::new(|b| put_u64(b, 24, 0)), 24, "0 vertices"),
        (Box::new(|b| put_u64(b, 24, u64::MAX)), 24, "vertices"),
        (Box::new(|b| put_u64(b, 32, u64::MAX / 2)), 32, "edges"),
        (Box::new(|b| put_u64(b, 40, 4)), 40, "initial vertex 4"),
        (Box::new(|b| put_u64(b, 48, u64::MAX - 3)), 48, "overflow"),
    ];
    // Counts in range whose sections do not fit the file: truncated, nothing allocated.
    for at in [24, 32] {
        let change = move |b: &mut Vec<u8>| put_u64(b, at, u64::from(u32::MAX) - 2);
        cases.push((Box::new(change), usize::MAX, "truncated"));
    }
    cases
}

/// Makes each damage to a copy of `bytes` and `reseal`s it: the error names the offset
/// and the problem, and its message starts with the byte and says what to do.
pub fn assert_refused(bytes: &[u8], cases: Vec<Damage>, reseal: impl Fn(&mut Vec<u8>)) {
    for (change, offset, fragment) in cases {
        let mut bad = bytes.to_vec();
        change(&mut bad);
        reseal(&mut bad);
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

/// Up to five random bytes of either file changed by `change` (which reseals the copy):
/// the file reads, or fails with an `egb` or reduction error; never a panic.
pub fn assert_random_damage_never_panics(
    files: [Vec<u8>; 2],
    change: impl Fn(&mut Vec<u8>, Vec<(prop::sample::Index, u8)>),
) {
    common::proptest_seeded(
        500,
        &[7, 8],
        (
            0..2usize,
            prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        ),
        |(which, changes)| {
            let mut bad = files[which].clone();
            change(&mut bad, changes);
            if let Err(e) = load(&bad) {
                let expected = matches!(e, FormatError::Binary { .. } | FormatError::Reduction(_));
                prop_assert!(expected, "unexpected error: {}", e);
            }
            Ok(())
        },
    );
}
