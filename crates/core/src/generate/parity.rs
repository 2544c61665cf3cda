//! Parity game families beyond [`super::random_parity`]: games whose many priorities are
//! spread over small strongly connected components, so that per-SCC priority compression
//! brings their energy reduction within 64 bits although the global one does not fit.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{ParityGame, owner};
use crate::arena::VertexId;

/// `clusters` clusters of `size` vertices each (ids cluster by cluster). Each cluster uses a
/// random window of `window` consecutive priorities within `0..=max_priority`; every vertex
/// has 1 to 3 successors in its own cluster and, with probability 1/4, one more in a later
/// cluster, so every strongly connected component lies inside one cluster and sees at most
/// `window` priorities, while the game as a whole uses up to `max_priority + 1`.
pub fn clustered_parity(
    clusters: u32,
    size: u32,
    window: u64,
    max_priority: u64,
    seed: u64,
) -> ParityGame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (clusters, size) = (clusters.max(1), size.max(1));
    let window = window.clamp(1, max_priority + 1);
    let n = clusters * size;
    let mut game = ParityGame {
        owners: Vec::with_capacity(n as usize),
        priorities: Vec::with_capacity(n as usize),
        successors: Vec::with_capacity(n as usize),
    };
    for c in 0..clusters {
        let base = rng.random_range(0..=max_priority + 1 - window);
        let first: VertexId = c * size;
        for _ in 0..size {
            game.owners.push(owner(&mut rng, 50));
            game.priorities.push(base + rng.random_range(0..window));
            let degree = rng.random_range(1..=3);
            let mut successors: Vec<VertexId> = (0..degree)
                .map(|_| first + rng.random_range(0..size))
                .collect();
            if c + 1 < clusters && rng.random_range(0..4) == 0 {
                successors.push(rng.random_range((c + 1) * size..n));
            }
            game.successors.push(successors);
        }
    }
    game
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_keep_their_edges_forward_and_their_priorities_in_a_window() {
        let g = clustered_parity(20, 10, 3, 100, 4);
        assert_eq!(g.owners.len(), 200);
        for (v, successors) in g.successors.iter().enumerate() {
            let cluster = v / 10;
            assert!(successors.iter().all(|&u| u as usize / 10 >= cluster));
        }
        for cluster in g.priorities.chunks(10) {
            let (lo, hi) = (cluster.iter().min().unwrap(), cluster.iter().max().unwrap());
            assert!(hi - lo < 3 && *hi <= 100);
        }
        assert_eq!(g, clustered_parity(20, 10, 3, 100, 4));
    }
}
