//! Oink's answers, for the tests that compare with them.

use std::path::Path;

use egsolve_core::format::{Game, ReadOptions, read_paritysol, read_path};
use egsolve_test_support as common;

/// Oink's winners from a `paritysol` file, one per vertex of a game of `n` vertices (every
/// vertex must be listed).
pub fn oink_winners(path: &Path, n: usize) -> Vec<u8> {
    let lines = read_paritysol(std::fs::File::open(path).unwrap()).unwrap();
    let mut winners = vec![u8::MAX; n];
    for (v, winner, _) in lines {
        winners[v as usize] = winner;
    }
    assert!(winners.iter().all(|&w| w <= 1), "{}", path.display());
    winners
}

/// The shared parity games (all 15 of them, as the README lists), each with its file name
/// and Oink's winners (the `.sol.` file beside it).
pub fn shared_parity_games() -> Vec<(String, Game, Vec<u8>)> {
    let mut games = common::shared_files("parity", ".gm.gz");
    games.extend(common::shared_files("parity", ".gm.zst"));
    assert_eq!(games.len(), 15, "the README lists 15 parity games");
    games
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let game = read_path(&path, &ReadOptions::default()).unwrap();
            let sol = path.with_file_name(name.replace(".gm.", ".sol."));
            let expected = oink_winners(&sol, game.arena.vertex_count());
            (name, game, expected)
        })
        .collect()
}
