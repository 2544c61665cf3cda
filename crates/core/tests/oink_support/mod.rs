//! Oink's answers, for the tests that compare with them.

use std::path::Path;

use egsolve_core::format::read_paritysol;

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
