//! Counterexamples to progress-measure solvers, as Oink's `counter_m` and `counter_qpt`
//! tools write them.
//!
//! - `counter_m`: the counterexample of Maciej Gazda's PhD thesis, Sec. 3.5 (Gazda's
//!   modified small progress measures are Oink's MSPM solver).
//! - `counter_qpt`: the counterexample of Fearnley, Jain, Schewe, Stephan and Wojtczak, "An
//!   ordered approach to solving parity games in quasi polynomial time and quasi linear
//!   space" (SPIN 2017), against their quasi-polynomial ordered progress measures (QPT in
//!   Oink).
//!
//! Both shapes were read off Oink's instance files (`counter_m_<n>.pg`, `counter_qpt_<n>.pg`)
//! and come out vertex for vertex in the same numbering, `counter_qpt` with Oink's names.

use super::{Builder, NamedGame, player};
use crate::arena::Player;
use crate::generate::ParityGame;

/// Gazda's counterexample: a line of `n + 1` blocks of three vertices, `3n + 3` vertices,
/// `6n + 3` edges, priorities `0..=n + 2`.
///
/// Block `k` is vertices `x, y, z = 3k, 3k + 1, 3k + 2`:
/// - `x` has priority `k + 2` and belongs to the player who wins it (`k` mod 2); it leads
///   to `y` or on to the next block's `x`;
/// - `y` and `z` share the low priority `(k + 1) mod 2` (1 in even blocks, 0 in odd ones)
///   and form a 2-cycle; `y` belongs to player `k` mod 2 and may also go on to the next
///   block's `x`, `z` belongs to the other player and may fall back to the previous block's
///   `z`.
///
/// One player wins everything: player 1 for even `n`, player 0 for odd `n`.
pub fn counter_m(n: u32) -> ParityGame {
    let n = n.max(1);
    let mut g = Builder::with_capacity(3 * u64::from(n) + 3);
    for k in 0..=n {
        let (x, y, z) = (3 * k, 3 * k + 1, 3 * k + 2);
        let next_x = (k < n).then_some(x + 3);
        let low = u64::from((k + 1) % 2);
        g.vertex(
            u64::from(k + 2),
            player(k),
            [y].into_iter().chain(next_x).collect(),
        );
        g.vertex(low, player(k), [z].into_iter().chain(next_x).collect());
        let previous_z = (k > 0).then(|| z - 3);
        g.vertex(
            low,
            player(k + 1),
            [y].into_iter().chain(previous_z).collect(),
        );
    }
    g.finish()
}

/// Fearnley et al.'s counterexample: `2n` vertices of player 0 with the priorities
/// `1..=2n`, one each, `3n − 1` edges.
///
/// Vertex `v` has priority `v + 1`. The vertices form the path `0 → 1 → … → 2n − 1`, and
/// each vertex of even priority also returns to vertex 0 (the last one only returns). So
/// player 0 picks one of the cycles `0 … v` (each won by player 0, its top priority `v + 1`
/// being even) and wins every vertex.
pub fn counter_qpt(n: u32) -> ParityGame {
    counter_qpt_named(n).game
}

/// [`counter_qpt`] with Oink's vertex names (each vertex is named by its priority).
pub(super) fn counter_qpt_named(n: u32) -> NamedGame {
    let n = n.max(1);
    let last = 2 * n - 1;
    let mut g = Builder::with_capacity(2 * u64::from(n));
    for v in 0..=last {
        let successors = if v % 2 == 0 {
            vec![v + 1]
        } else if v < last {
            vec![0, v + 1]
        } else {
            vec![0]
        };
        g.vertex(u64::from(v) + 1, Player::Zero, successors);
    }
    let game = g.finish();
    let names = game.priorities.iter().map(u64::to_string).collect();
    NamedGame {
        game,
        names: Some(names),
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_game;
    use super::*;
    use crate::arena::VertexId;

    #[test]
    fn counter_m_at_two_has_three_blocks() {
        let g = counter_m(2);
        let successors: &[(usize, &[VertexId])] = &[(3, &[4, 6]), (5, &[4, 2]), (8, &[7, 5])];
        assert_game(
            &g,
            &[2, 1, 1, 3, 0, 0, 4, 1, 1],
            successors,
            &[(3, Player::One), (5, Player::Zero)],
        );
    }

    #[test]
    fn counter_qpt_returns_to_the_start_from_even_priorities() {
        let named = counter_qpt_named(2);
        assert_eq!(named.game.priorities, [1, 2, 3, 4]);
        assert_eq!(
            named.game.successors,
            [vec![1], vec![0, 2], vec![3], vec![0]]
        );
        assert_eq!(named.names.unwrap(), ["1", "2", "3", "4"]);
    }
}
