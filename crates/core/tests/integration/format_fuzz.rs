//! Bounded fuzzing: arbitrary bytes and mutated valid files (byte flips, truncation,
//! insertions of bytes and of tokens that matter to the grammars, deletions), of the text
//! or of its gzip, bzip2 or zstd stream, through every reader with the format detected and
//! forced. Each must return `Ok` or `Err`: a panic fails the test, and the whole run takes
//! a few seconds.

use egsolve_test_support as common;

use crate::format_support::{bzip2, gzip};

use egsolve_core::format::{self, Format, ReadOptions};
use proptest::prelude::*;

const MPG: &str = "# sample\n3 6;\n0 MAX 1:5,2:-3 \"start\";\n1 MIN 0:-7;\n2 MAX 3:0, 2:1;\n3 MIN 0:9223372036854775807, 1:-9223372036854775808;\n";
const GM: &str = "parity 3;\nstart 0;\n0 2 0 1, 2 \"s0\";\n1 5 1 0;\n2 0 0 3, 2;\n3 1 1 0;\n";
const JSON: &str = r#"{"vertices": [{"id": 0, "owner": 0, "edges": [[1, -3], [0, 5]], "name": "a"}, {"id": 1, "owner": 1, "edges": [[0, 2]]}], "initial": 0}"#;
const SOL: &str = "paritysol 3;\n0 0 1;\n1 1;\n2 0 2;\n3 1 0;\n";

/// Tokens worth inserting: separators, signs, keywords, numbers at type limits.
const TOKENS: &[&str] = &[
    ";",
    ",",
    ":",
    "-",
    "\n",
    " ",
    "#",
    "//",
    "%",
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    "0",
    "1",
    "MAX",
    "MIN",
    "parity",
    "start",
    "arena",
    "99999999999999999999",
    "4294967295",
    "4294967293",
    "9223372036854775808",
    "-9223372036854775809",
    "\u{0}",
    "\u{ff}",
];

#[derive(Debug, Clone)]
enum Mutation {
    Flip(prop::sample::Index, u8),
    Truncate(prop::sample::Index),
    InsertBytes(prop::sample::Index, Vec<u8>),
    InsertToken(prop::sample::Index, prop::sample::Index),
    Delete(prop::sample::Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(any::<u8>(), 1..8)
        )
            .prop_map(|(i, bytes)| Mutation::InsertBytes(i, bytes)),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(i, t)| Mutation::InsertToken(i, t)),
        (any::<prop::sample::Index>(), 1usize..6).prop_map(|(i, len)| Mutation::Delete(i, len)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    match m {
        Mutation::Flip(i, b) => {
            let i = i.index(bytes.len());
            bytes[i] ^= b | 1;
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len())),
        Mutation::InsertBytes(i, new) => {
            let i = i.index(bytes.len() + 1);
            bytes.splice(i..i, new.iter().copied());
        }
        Mutation::InsertToken(i, t) => {
            let i = i.index(bytes.len() + 1);
            bytes.splice(i..i, TOKENS[t.index(TOKENS.len())].bytes());
        }
        Mutation::Delete(i, len) => {
            let i = i.index(bytes.len());
            bytes.drain(i..(i + len).min(bytes.len()));
        }
    }
}

/// Every reader on `bytes`: detected format, each forced format, and paritysol. Only
/// panics (and hangs) are failures; the results are checked for basic sanity.
fn read_everything(bytes: &[u8]) {
    for format in [
        None,
        Some(Format::Mpg),
        Some(Format::PgSolver),
        Some(Format::Json),
    ] {
        let opts = ReadOptions {
            format,
            max_bytes: Some(1 << 20),
            ..ReadOptions::default()
        };
        match format::read(bytes, &opts) {
            Ok(game) => {
                let n = game.arena.vertex_count();
                assert!(n > 0);
                if let Some(parity) = &game.parity {
                    assert_eq!(parity.priorities.len(), n);
                }
                if let Some(initial) = game.initial {
                    assert!((initial as usize) < n);
                }
            }
            Err(e) => {
                // Every error renders, and positioned errors lead with their position.
                let message = e.to_string();
                assert!(!message.is_empty());
                if let Some(at) = e.position() {
                    assert!(message.starts_with(&at.to_string()), "{message}");
                }
            }
        }
    }
    let _ = format::read_paritysol(bytes);
}

#[test]
fn arbitrary_bytes_never_panic() {
    common::proptest_seeded(
        1500,
        &[1, 2],
        prop::collection::vec(any::<u8>(), 0..300),
        |bytes| {
            read_everything(&bytes);
            Ok(())
        },
    );
}

#[test]
fn mutated_valid_files_never_panic() {
    let strategy = (
        0usize..4,
        0usize..4,
        prop::collection::vec(mutation(), 1..5),
    );
    common::proptest_seeded(1500, &[1, 2], strategy, |(seed, compression, mutations)| {
        let text = [MPG, GM, JSON, SOL][seed].as_bytes();
        // Mutating a compressed stream itself: the decompressor must fail cleanly.
        let mut bytes = match compression {
            0 => text.to_vec(),
            1 => gzip(text),
            2 => bzip2(text),
            _ => zstd::encode_all(text, 1).unwrap(),
        };
        for m in &mutations {
            apply(&mut bytes, m);
        }
        read_everything(&bytes);
        Ok(())
    });
}

#[test]
fn the_seeds_are_valid() {
    for text in [MPG, GM, JSON] {
        format::read(text.as_bytes(), &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        format::read(gzip(text.as_bytes()).as_slice(), &ReadOptions::default()).unwrap();
    }
    assert_eq!(format::read_paritysol(SOL.as_bytes()).unwrap().len(), 4);
}
