//! The counterexample to one-sided recursive tangle learning, as Oink's `counter_ortl` tool
//! writes it.
//!
//! Tangle learning (van Dijk, "Attracting Tangles to Solve Parity Games", CAV 2018) learns
//! *tangles* — strongly connected regions one player can keep play in and win — and
//! attracts through them. Its one-sided recursive variant (ORTL in Oink) learns the tangles
//! of one player at a time, recursively; Oink's README lists `counter_ortl` as its
//! counterexample (ORTL solves the two-counters games in polynomial time).
//!
//! The shape below was read off Oink's instance files (`counter_ortl_<n>.pg`). Oink sorts
//! the vertices by priority with an unstable sort, and the `2n` vertices of priority 1 come
//! out shuffled for `n ≥ 4`; here they keep the order in which the gadgets are built (the
//! order Oink's files show for `n = 2, 3`), and every other vertex has Oink's id.

use super::Builder;
use crate::arena::{Player, VertexId};
use crate::generate::ParityGame;

/// The counterexample to ORTL: a hub and `n` loops, `5n + 1` vertices, `8n + 1` edges,
/// priorities `0`, `1`, the even `2..=2n` and `2n + 2..=4n + 1`.
///
/// - The hub `0` has priority 0, belongs to player 1 and has a self-loop and an edge to
///   each `E_k` (`k = n` down to 1).
/// - `E_k` (priority `2k`, player 0) leads back to the hub — so the hub and `E_k` form a
///   cycle that player 0 wins — or into loop `i = n − k`.
/// - Loop `i` is `E_{n−i} → h → A_i → B_i → h' → E_{n−i}`, where `h` and `h'` have the
///   priorities `2n + 2 + 2i` (even) and `2n + 3 + 2i` (odd), and `A_i`, `B_i` priority 1;
///   `A_i` belongs to player 1, `B_i` to player 0, who may also turn back to `A_i`. Both of
///   player 0's ways of staying in a loop lose for player 0, so the loops are player 1's;
///   the loop entered from the highest `E` has the lowest `h`, `h'`.
///
/// Numbering: the hub, then the pairs `A_i, B_i` (`1 + 2i`, `2 + 2i`), then `E_1 … E_n`,
/// then the `h`s by priority. Player 0 wins every vertex.
pub fn counter_ortl(n: u32) -> ParityGame {
    let n = n.max(1);
    let a = |i: u32| -> VertexId { 1 + 2 * i };
    let b = |i: u32| -> VertexId { 2 + 2 * i };
    let e = |k: u32| -> VertexId { 2 * n + k };
    // The `h` of priority `2n + 2 + j`.
    let h = |j: u32| -> VertexId { 3 * n + 1 + j };
    let mut g = Builder::with_capacity(5 * u64::from(n) + 1);
    let mut hub = vec![0];
    hub.extend((1..=n).rev().map(e));
    g.vertex(0, Player::One, hub);
    for i in 0..n {
        g.vertex(1, Player::One, vec![b(i)]);
        g.vertex(1, Player::Zero, vec![a(i), h(2 * i + 1)]);
    }
    for k in 1..=n {
        g.vertex(u64::from(2 * k), Player::Zero, vec![0, h(2 * (n - k))]);
    }
    for j in 0..2 * n {
        let i = j / 2;
        let next = if j % 2 == 0 { a(i) } else { e(n - i) };
        g.vertex(u64::from(2 * n + 2 + j), Player::Zero, vec![next]);
    }
    g.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_ortl_at_two_is_a_hub_and_two_loops() {
        let g = counter_ortl(2);
        assert_eq!(g.priorities, [0, 1, 1, 1, 1, 2, 4, 6, 7, 8, 9]);
        assert_eq!(g.successors[0], [0, 6, 5]);
        assert_eq!(g.successors[2], [1, 8]);
        assert_eq!(g.successors[5], [0, 9]);
        assert_eq!(g.successors[10], [5]);
    }
}
