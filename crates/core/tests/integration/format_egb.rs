//! The binary `egb` format, versions 2 (written) and 1 (still read): every game
//! round-trips exactly through both (random arenas with names and weights of every width,
//! every shared game, compressed or not), and damaged files — truncated anywhere, bytes
//! flipped anywhere, fields changed with the checksums made to match (offsets and targets
//! out of range, counts that overflow, a predecessor side that is not the transpose) — get
//! a clear error with the byte offset, never a panic or an out-of-bounds read. Version 2
//! files read from disk are used where they lie in the map and solve exactly like the
//! text they came from (`format_egb_v2.rs` has the version 2 damage classes).

use egsolve_test_support as common;

use crate::format_support::{
    Damage, arena_of, assert_random_damage_never_panics, assert_refused, damage, egb2,
    header_damage, load, parity_sample, put_u32, sample, u32_damage,
};

use egsolve_core::arena::Arena;
use egsolve_core::format::{self, Game, ReadOptions};
use proptest::prelude::*;

fn arena_strategy() -> impl Strategy<Value = Arena> {
    (1usize..12, 0..3usize).prop_flat_map(|(n, width)| {
        // Weights that fit 16, 32 or 64 bits, so every stored width is written.
        let weight = any::<i64>().prop_map(move |w| match width {
            0 => w % 300,
            1 => w % 70_000,
            _ => w,
        });
        let vertex = (
            any::<bool>(),
            prop::collection::vec((0..n as u32, weight), 1..4),
            prop::option::of("[a-zA-Z0-9 _é-]{0,6}"),
        );
        (prop::collection::vec(vertex, n), any::<bool>())
            .prop_map(|(vertices, named)| arena_of(vertices, named))
    })
}

/// `game` as `egb` version 1 (the damage tests below are version 1's; see
/// `format_egb_v2.rs` for version 2's).
fn egb(game: &Game) -> Vec<u8> {
    let mut bytes = Vec::new();
    format::write_egb_v1(game, &mut bytes).unwrap();
    bytes
}

#[test]
fn random_arenas_round_trip_exactly() {
    common::proptest_seeded(
        200,
        &[1, 2],
        (arena_strategy(), any::<Option<u8>>()),
        |(arena, initial)| {
            let n = arena.vertex_count() as u32;
            let game = Game {
                arena,
                parity: None,
                initial: initial.map(|i| u32::from(i) % n),
            };
            for bytes in [egb(&game), egb2(&game)] {
                prop_assert!(format::egb::is_egb(&bytes));
                prop_assert_eq!(bytes.len() % 8, 0);
                prop_assert_eq!(&load(&bytes).unwrap(), &game);
                let zstd = zstd::encode_all(&bytes[..], 1).unwrap();
                prop_assert_eq!(
                    &format::read(&zstd[..], &ReadOptions::default()).unwrap(),
                    &game
                );
            }
            Ok(())
        },
    );
}

#[test]
fn every_shared_game_round_trips_and_converts_back_alike() {
    let mut files = common::shared_files("energy", ".mpg.gz");
    files.extend(common::shared_files("parity", ".gm.gz"));
    files.extend(common::shared_files("parity", ".gm.zst"));
    for path in files {
        let game = format::read_path(&path, &ReadOptions::default()).unwrap();
        for bytes in [egb(&game), egb2(&game)] {
            let back = load(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(back == game, "{}: the egb copy differs", path.display());
            // The arrays are the text's: .mpg written from either is the same text.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            format::write_mpg(&game.arena, &mut a).unwrap();
            format::write_mpg(&back.arena, &mut b).unwrap();
            assert!(a == b, "{}", path.display());
        }
    }
}

/// Writes the checksum that matches the bytes (so that the validation behind it is reached).
fn reseal(bytes: &mut [u8]) {
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..56]);
    h.update(&bytes[64..]);
    let crc = h.finalize();
    bytes[56..60].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn truncation_anywhere_is_a_clear_error_at_the_end() {
    for bytes in [sample(egb).1, parity_sample(egb)] {
        for len in 0..bytes.len() {
            let cut = &bytes[..len];
            if len < 8 {
                // Not even the magic: not recognised as egb, so a text error; no panic.
                assert!(load(cut).is_err());
                continue;
            }
            let (offset, problem) = damage(cut);
            assert_eq!(offset, len as u64, "cut at {len}: {problem}");
            assert!(problem.contains("ends after"), "{problem}");
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0; 8]);
        let (offset, problem) = damage(&longer);
        assert_eq!(offset, bytes.len() as u64);
        assert!(problem.contains("bytes follow"), "{problem}");
    }
}

#[test]
fn a_flipped_byte_anywhere_is_refused_by_the_checksum_or_the_header() {
    let (_, bytes) = sample(egb);
    for at in 8..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x41;
        let (offset, problem) = damage(&bad);
        assert!(
            offset as usize <= bad.len(),
            "flip at {at}: offset {offset}"
        );
        if at >= 64 {
            assert_eq!(offset, 56, "flip at {at}: {problem}");
            assert!(problem.contains("checksum"), "{problem}");
        }
    }
}

#[test]
fn resealed_damage_names_the_offending_byte() {
    let (game, bytes) = sample(egb);
    let n = game.arena.vertex_count();
    let m = game.arena.edge_count();
    let owners = 64;
    let offsets = owners + n.div_ceil(8) * 8;
    let targets = offsets + ((n + 1) * 4).div_ceil(8) * 8;
    let mut cases: Vec<Damage> = vec![
        (
            Box::new(|b| b[owners + 2] = 2),
            owners + 2,
            "owner 2 of vertex 2",
        ),
        (
            // offsets 0 2 9 5 7: the first that falls (vertex 3's) is named
            Box::new(move |b| put_u32(b, offsets + 8, 9)),
            offsets + 12,
            "below vertex 2's 9",
        ),
        u32_damage(
            offsets + 4 * n,
            99,
            offsets + 4 * n,
            "expected the edge count",
        ),
        u32_damage(offsets + 4, 0, offsets + 4, "no successor"),
        u32_damage(
            targets + 4 * (m - 1),
            4,
            targets + 4 * (m - 1),
            "leads to vertex 4",
        ),
    ];
    cases.extend(header_damage());
    assert_refused(&bytes, cases, |bad| reseal(bad));
}

#[test]
fn resealed_random_damage_never_panics() {
    let files = [sample(egb).1, parity_sample(egb)];
    assert_random_damage_never_panics(files, |bad, changes| {
        for (at, value) in changes {
            let at = 8 + at.index(bad.len() - 8);
            if !(56..60).contains(&at) {
                bad[at] = value;
            }
        }
        reseal(bad);
    });
}
