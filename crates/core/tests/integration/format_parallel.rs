//! The parallel text readers against one sequential pass: every shared game reads to the
//! same arena whichever way it is read (one chunk on one thread, many chunks on several
//! threads, in memory, streamed, from the file), and an error placed at every position of
//! the chunking (in the first chunk, in a middle one, in the last, straddling a boundary)
//! keeps its exact message, line and column.

use egsolve_test_support as common;

use std::io::Read;
use std::path::Path;

use egsolve_core::format::{self, FormatError, Game, ReadOptions};

fn sequential() -> ReadOptions {
    ReadOptions {
        threads: 1,
        chunk_bytes: Some(usize::MAX),
        ..ReadOptions::default()
    }
}

fn parallel(chunk: usize) -> ReadOptions {
    ReadOptions {
        threads: 4,
        chunk_bytes: Some(chunk),
        ..ReadOptions::default()
    }
}

fn decompressed(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).expect("shared file");
    let mut text = Vec::new();
    if raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::stream::read::Decoder::new(&raw[..])
            .unwrap()
            .read_to_end(&mut text)
            .unwrap();
    } else {
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut text)
            .unwrap();
    }
    text
}

fn shared_games() -> Vec<std::path::PathBuf> {
    let mut files = common::shared_files("energy", ".mpg.gz");
    files.extend(common::shared_files("parity", ".gm.gz"));
    files.extend(common::shared_files("parity", ".gm.zst"));
    assert!(files.len() >= 15, "the shared games are missing");
    files
}

#[test]
fn every_shared_game_reads_the_same_sequentially_and_in_parallel() {
    for path in shared_games() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = decompressed(&path);
        let reference = format::read_bytes(&text, &sequential()).expect(&name);
        let mut ways: Vec<(&str, Game)> = vec![
            (
                "default",
                format::read_bytes(&text, &ReadOptions::default()).unwrap(),
            ),
            (
                "chunks of 64 KiB",
                format::read_bytes(&text, &parallel(1 << 16)).unwrap(),
            ),
            (
                "the file",
                format::read_path(&path, &ReadOptions::default()).unwrap(),
            ),
        ];
        if text.len() < 1 << 20 {
            ways.push((
                "chunks of 61 bytes",
                format::read_bytes(&text, &parallel(61)).unwrap(),
            ));
            ways.push((
                "streamed",
                format::read(&text[..], &parallel(1000)).unwrap(),
            ));
        }
        for (way, game) in ways {
            assert!(
                game == reference,
                "{name}: read {way} differs from one sequential pass"
            );
        }
    }
}

fn error_of(text: &[u8], opts: &ReadOptions) -> (String, Option<(u64, u64)>) {
    let e: FormatError = format::read_bytes(text, opts).expect_err("a malformed game");
    let at = e.position().map(|p| (p.line, p.column));
    (e.to_string(), at)
}

/// An `.mpg` text of `n` vertices, one line each, all lines the same length.
fn mpg_lines(n: usize) -> Vec<String> {
    let mut lines = vec![format!("{};", n - 1)];
    for v in 0..n {
        lines.push(format!("{v:06} MAX {:06}:-5;", (v + 1) % n));
    }
    lines
}

#[test]
fn an_error_in_any_chunk_keeps_its_line_and_column() {
    let lines = mpg_lines(400);
    let line_bytes = lines[1].len() + 1;
    // Chunks of about 10 lines: line 1 is in the first chunk, 200 in a middle one, 400 in
    // the last; with chunks of 1.5 lines every second error straddles a boundary.
    for chunk in [10 * line_bytes, line_bytes * 3 / 2, 7] {
        for bad_line in [1, 2, 11, 12, 200, 201, 399, 400] {
            // (from, to, whether the error is on the damaged line itself)
            for (from, to, on_the_line) in [
                ("MAX", "MAXX", true),
                (":-5", ":-x5", true),
                (":-5;", ":-5", false),
            ] {
                let mut damaged = lines.clone();
                damaged[bad_line] = damaged[bad_line].replacen(from, to, 1);
                let text = damaged.join("\n") + "\n";
                let expected = error_of(text.as_bytes(), &sequential());
                assert!(expected.1.is_some(), "{}", expected.0);
                if on_the_line {
                    assert_eq!(expected.1.map(|(line, _)| line), Some(bad_line as u64 + 1));
                }
                for threads in [2, 4] {
                    let opts = ReadOptions {
                        threads,
                        chunk_bytes: Some(chunk),
                        ..ReadOptions::default()
                    };
                    let got = error_of(text.as_bytes(), &opts);
                    assert_eq!(got, expected, "line {bad_line}, chunks of {chunk} bytes");
                    let streamed = format::read(text.as_bytes(), &opts).unwrap_err();
                    assert_eq!(
                        streamed.to_string(),
                        expected.0,
                        "streamed, line {bad_line}"
                    );
                }
            }
        }
    }
}

#[test]
fn vertex_checks_across_chunks_stay_strict() {
    let lines = mpg_lines(300);
    let replaced = |at: usize, line: String| {
        let mut l = lines.clone();
        l[at] = line;
        l
    };
    let cases: Vec<Vec<String>> = vec![
        // vertex 250 defined twice (and 19 missing)
        replaced(20, lines[251].clone()),
        // a successor out of range in the last chunk
        replaced(299, "000298 MAX 999999:-5;".into()),
        // a vertex without successors in a middle chunk
        replaced(150, "000149 MAX ;".into()),
        // a vertex missing
        {
            let mut l = lines.clone();
            l.remove(150);
            l
        },
    ];
    for damaged in cases {
        let text = damaged.join("\n") + "\n";
        let expected = error_of(text.as_bytes(), &sequential());
        for chunk in [5, 100, 1000] {
            let got = error_of(text.as_bytes(), &parallel(chunk));
            assert_eq!(got, expected, "chunks of {chunk} bytes");
        }
    }
}

#[test]
fn parity_errors_in_any_chunk_keep_their_position() {
    let n = 300;
    let mut lines = vec![format!("parity {};", n - 1)];
    for v in 0..n {
        lines.push(format!("{v} {} {} {};", v % 7, v % 2, (v + 1) % n));
    }
    for bad_line in [1, 2, 150, 299, 300] {
        let mut damaged = lines.clone();
        damaged[bad_line] = damaged[bad_line].replacen(' ', " x", 1);
        let text = damaged.join("\n");
        let expected = error_of(text.as_bytes(), &sequential());
        assert_eq!(expected.1.map(|(line, _)| line), Some(bad_line as u64 + 1));
        for chunk in [3, 50, 400] {
            assert_eq!(error_of(text.as_bytes(), &parallel(chunk)), expected);
        }
    }
}
