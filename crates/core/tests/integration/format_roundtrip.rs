//! Writers and readers agree: random arenas survive `.mpg` and JSON round trips, random
//! parity games survive `.gm` → JSON → read with the exact reduction, and every supported
//! compression (gzip with several members, bzip2, zstd) yields the same game as plain text.

use egsolve_test_support as common;

use crate::format_support::{arena_of, bzip2, gzip};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use egsolve_core::arena::{Arena, Player};
use egsolve_core::format::{self, Compression, FormatError, Game, ReadOptions};
use proptest::prelude::*;

/// A random arena: up to 12 vertices, 1 to 4 edges each, any i64 weights, some names.
fn arena_strategy() -> impl Strategy<Value = Arena> {
    (1usize..12).prop_flat_map(|n| {
        let vertex = (
            any::<bool>(),
            prop::collection::vec((0..n as u32, any::<i64>()), 1..4),
            prop::option::of("[a-zA-Z0-9 _;:,#%/\"\\\\é-]{0,6}"),
        );
        prop::collection::vec(vertex, n).prop_map(|vertices| arena_of(vertices, true))
    })
}

fn read(bytes: &[u8]) -> Result<Game, FormatError> {
    format::read(bytes, &ReadOptions::default())
}

#[test]
fn mpg_round_trip() {
    common::proptest_seeded(150, &[1, 2], arena_strategy(), |arena| {
        let mut text = Vec::new();
        format::write_mpg(&arena, &mut text).unwrap();
        let game =
            read(&text).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&text)));
        prop_assert_eq!(&game.arena, &arena);
        let mut again = Vec::new();
        format::write_mpg(&game.arena, &mut again).unwrap();
        prop_assert_eq!(again, text);
        Ok(())
    });
}

#[test]
fn json_round_trip() {
    let strategy = (arena_strategy(), any::<prop::sample::Index>());
    common::proptest_seeded(150, &[1, 2], strategy, |(arena, initial)| {
        let initial = Some(initial.index(arena.vertex_count()) as u32);
        let game = Game {
            arena,
            parity: None,
            initial,
        };
        let mut text = Vec::new();
        format::write_json(&game, &mut text).unwrap();
        let back =
            read(&text).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&text)));
        prop_assert_eq!(back, game);
        Ok(())
    });
}

#[test]
fn parity_games_reduce_exactly_and_round_trip_through_json() {
    let strategy = (1usize..10).prop_flat_map(|n| {
        prop::collection::vec(
            (
                0u64..7,
                any::<bool>(),
                prop::collection::vec(0..n as u32, 1..4),
            ),
            n,
        )
    });
    common::proptest_seeded(150, &[1, 2], strategy, |nodes| {
        let mut gm = format!("parity {};\n", nodes.len() - 1);
        for (v, (priority, owner, succ)) in nodes.iter().enumerate() {
            let succ: Vec<String> = succ.iter().map(u32::to_string).collect();
            gm += &format!("{v} {priority} {} {};\n", u8::from(*owner), succ.join(", "));
        }
        let game = read(gm.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{gm}"));
        let priorities: Vec<u64> = nodes.iter().map(|node| node.0).collect();
        let expected = naive_weights(&naive_compression(&priorities));
        for (v, (_, owner, succ)) in nodes.iter().enumerate() {
            let v = v as u32;
            prop_assert_eq!(game.arena.owner(v), Player::one_if(*owner));
            let got: Vec<(u32, i64)> = game.arena.successors(v).collect();
            let want: Vec<(u32, i64)> = succ.iter().map(|&t| (t, expected[v as usize])).collect();
            prop_assert_eq!(got, want);
        }
        let mut json = Vec::new();
        format::write_json(&game, &mut json).unwrap();
        let back = read(&json).unwrap();
        prop_assert_eq!(back, game);
        Ok(())
    });
}

/// Priority compression (issue 17) written out the slow, obvious way: sort the distinct
/// priorities, give neighbours of equal parity one rank, start at the first one's parity.
/// The readers reduce the compressed priorities (winners are the same; weights smaller).
fn naive_compression(priorities: &[u64]) -> Vec<u64> {
    let mut distinct: Vec<u64> = priorities.to_vec();
    distinct.sort();
    distinct.dedup();
    let mut rank = Vec::new();
    for (i, &p) in distinct.iter().enumerate() {
        rank.push(match i {
            0 => p % 2,
            _ if distinct[i - 1] % 2 == p % 2 => rank[i - 1],
            _ => rank[i - 1] + 1,
        });
    }
    priorities
        .iter()
        .map(|p| rank[distinct.binary_search(p).unwrap()])
        .collect()
}

/// The reduction of FORMATS.md written out the slow, obvious way.
fn naive_weights(priorities: &[u64]) -> Vec<i64> {
    let mut distinct: Vec<u64> = priorities.to_vec();
    distinct.sort();
    distinct.dedup();
    let count = |p: u64| priorities.iter().filter(|&&q| q == p).count() as i128;
    let mut a: Vec<i128> = Vec::new();
    for (i, &p) in distinct.iter().enumerate() {
        let value = if i == 0 {
            i128::from(p % 2 == 1)
        } else {
            1 + (0..i)
                .filter(|&j| distinct[j] % 2 != p % 2)
                .map(|j| count(distinct[j]) * a[j])
                .sum::<i128>()
        };
        a.push(value);
    }
    priorities
        .iter()
        .map(|p| {
            let i = distinct.binary_search(p).unwrap();
            let magnitude = i64::try_from(a[i]).unwrap();
            if p % 2 == 0 { magnitude } else { -magnitude }
        })
        .collect()
}

/// A fixed game big enough to span several compressed blocks.
fn sample_text() -> Vec<u8> {
    let n = 3000u32;
    let mut text = format!("{};\n", n - 1);
    for v in 0..n {
        let owner = if v % 3 == 0 { "MIN" } else { "MAX" };
        text += &format!(
            "{v} {owner} {}:{},{}:-{};\n",
            (v + 1) % n,
            v % 17,
            (v * 7) % n,
            v % 5
        );
    }
    text.into_bytes()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

#[test]
fn every_compression_gives_the_same_game() {
    let text = sample_text();
    let plain = read(&text).unwrap();
    let (head, tail) = text.split_at(text.len() / 3);
    let multi_gzip = [gzip(head), gzip(tail)].concat();
    let multi_bzip2 = [bzip2(head), bzip2(tail)].concat();
    let multi_zstd = [zstd(head), zstd(tail)].concat();
    for (name, bytes) in [
        ("gzip", gzip(&text)),
        ("multi-member gzip", multi_gzip),
        ("bzip2", bzip2(&text)),
        ("multi-stream bzip2", multi_bzip2),
        ("zstd", zstd(&text)),
        ("multi-frame zstd", multi_zstd),
    ] {
        let game = read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(game, plain, "{name}");
    }
}

#[test]
fn truncated_or_corrupt_streams_are_clear_errors() {
    let text = sample_text();
    for (compression, bytes) in [
        (Compression::Gzip, gzip(&text)),
        (Compression::Bzip2, bzip2(&text)),
        (Compression::Zstd, zstd(&text)),
    ] {
        for cut in [bytes.len() / 2, bytes.len() - 3, 10] {
            let e = read(&bytes[..cut]).unwrap_err();
            assert!(
                matches!(&e, FormatError::CorruptCompressed { compression: c, .. } if *c == compression),
                "{compression} cut at {cut}: {e}"
            );
            assert!(e.to_string().contains("truncated or corrupt"), "{e}");
        }
        let mut corrupt = bytes.clone();
        let middle = corrupt.len() / 2;
        for b in &mut corrupt[middle..middle + 16] {
            *b ^= 0x5a;
        }
        let e = read(&corrupt).unwrap_err();
        assert!(
            matches!(e, FormatError::CorruptCompressed { .. }),
            "{compression} corrupted: {e}"
        );
    }
}

#[test]
fn the_size_limit_counts_decompressed_bytes() {
    let text = sample_text();
    let compressed = gzip(&text);
    assert!((compressed.len() as u64) < text.len() as u64 / 2);
    let limit = |max| ReadOptions {
        max_bytes: Some(max),
        ..ReadOptions::default()
    };
    let e = format::read(compressed.as_slice(), &limit(compressed.len() as u64 + 1)).unwrap_err();
    assert!(matches!(e, FormatError::TooLarge { .. }), "{e}");
    assert!(format::read(compressed.as_slice(), &limit(text.len() as u64)).is_ok());
    let e = format::read(text.as_slice(), &limit(text.len() as u64 - 1)).unwrap_err();
    assert!(matches!(e, FormatError::TooLarge { .. }), "{e}");
}

#[test]
fn progress_counts_the_bytes_as_given() {
    let text = sample_text();
    let compressed = gzip(&text);
    let counter = Arc::new(AtomicU64::new(0));
    let opts = ReadOptions {
        bytes_read: Some(counter.clone()),
        ..ReadOptions::default()
    };
    format::read(compressed.as_slice(), &opts).unwrap();
    assert_eq!(counter.load(Ordering::Relaxed), compressed.len() as u64);
}
