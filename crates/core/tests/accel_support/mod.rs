//! Helpers for the accelerated solver's tests and benchmark: the games in `shared/data`
//! (read with the project's readers) and their independent answers, and seeded random games.
#![allow(dead_code)]

use egsolve_test_support as data;

use std::io::Read;
use std::path::{Path, PathBuf};

use egsolve_core::arena::Arena;
use egsolve_core::format::{ReadOptions, read_paritysol, read_path};
use egsolve_core::solve::TOP;

/// `shared/data` (see `crates/test-support/src/data.rs`).
pub fn data_dir() -> PathBuf {
    data::shared_data()
}

/// The independent answer to a shared game.
pub enum Expected {
    /// Least credits per vertex (⊤ as [`TOP`]), from a `.credits.gz` file.
    Credits(Vec<u64>),
    /// Whether player 0 wins each vertex, from Oink's `.sol.gz` file.
    Winners(Vec<bool>),
}

/// Every shared game: (name, game file, answer file), smallest game file first.
pub fn shared_games() -> Vec<(String, PathBuf, PathBuf)> {
    let dir = data_dir();
    let mut out = Vec::new();
    for (sub, ext, answer) in [
        ("parity", ".gm.gz", ".sol.gz"),
        ("energy", ".mpg.gz", ".credits.gz"),
    ] {
        for entry in std::fs::read_dir(dir.join(sub)).expect("data dir") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .to_string();
            if let Some(stem) = name.strip_suffix(ext) {
                out.push((
                    stem.to_string(),
                    path.clone(),
                    dir.join(sub).join(format!("{stem}{answer}")),
                ));
            }
        }
    }
    out.sort_by_key(|(_, p, _)| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    out
}

/// Reads a shared game (parity games reduced) and its independent answer.
pub fn load(path: &Path, answer: &Path) -> (Arena, Expected) {
    let game = read_path(path, &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n = game.arena.vertex_count();
    let file = std::fs::File::open(answer).unwrap_or_else(|e| panic!("{}: {e}", answer.display()));
    let expected = if game.parity.is_some() {
        let mut w0 = vec![false; n];
        for (v, winner, _) in
            read_paritysol(file).unwrap_or_else(|e| panic!("{}: {e}", answer.display()))
        {
            w0[v as usize] = winner == 0;
        }
        Expected::Winners(w0)
    } else {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(file)
            .read_to_string(&mut text)
            .expect("gzip text");
        let mut credits = vec![TOP; n];
        for line in text.lines() {
            let (id, credit) = line.split_once(' ').expect("ID CREDIT");
            credits[id.parse::<usize>().expect("id")] = if credit == "T" {
                TOP
            } else {
                credit.parse().expect("credit")
            };
        }
        Expected::Credits(credits)
    };
    (game.arena, expected)
}

/// A uniform random game through the library's generator (seeded from `rng`).
pub fn random_game(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: u32,
    max_degree: u32,
    weights: std::ops::RangeInclusive<i64>,
) -> Arena {
    use rand::Rng;
    let params = egsolve_core::generate::RandomParams {
        vertices: n,
        min_degree: 1,
        max_degree,
        min_weight: *weights.start(),
        max_weight: *weights.end(),
        player1_percent: 50,
    };
    egsolve_core::generate::random(params, rng.random())
}
