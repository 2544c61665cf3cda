//! The robust worst case for divide-et-impera solvers, as Oink's `counter_core` tool
//! writes it.
//!
//! Benerecetti, Dell'Erba and Mogavero, "Robust Exponential Worst Cases for Divide-et-Impera
//! Algorithms for Parity Games", GandALF 2017 (EPTCS 256): one family of games on which
//! Zielonka's recursive algorithm and the priority promotion solvers — the algorithms that
//! split the game by the attractor of its top priority and recurse — all take exponential
//! time. Oink's README lists `counter_core` as this paper's counterexample (and a separate
//! tool, not reproduced here, for its SCC version).
//!
//! The shape below was read off Oink's instance files (`counter_core_<n>.pg`) and comes out
//! vertex for vertex in the same numbering.

use super::{Builder, player};
use crate::generate::ParityGame;

/// The robust worst case: a line of `2n + 1` blocks of three vertices, `6n + 3` vertices,
/// `12n + 4` edges, priorities `0..=4n + 1`.
///
/// Block `k` is vertices `x, y, z = 3k, 3k + 1, 3k + 2`:
/// - `x` has the high priority `2n + 1 + k` (won by player `k + 1` mod 2) and is owned by
///   the other player, `k` mod 2; it only leads to `y`;
/// - `y` has priority `k`, is owned by player `k` mod 2 (who wins `k`) and leads to `z` or
///   back to the previous block's `x`;
/// - `z` has priority `k` too, is owned by the player who loses `k`, and has a self-loop,
///   the way back to `y` and the way on to the next block's `x`.
///
/// So consecutive blocks alternate owners and parities, the low priorities rise by one per
/// block and each block's gate `x` outranks every low priority. Player 0 wins every vertex.
pub fn counter_core(n: u32) -> ParityGame {
    let n = n.max(1);
    let last = 2 * n;
    let mut g = Builder::with_capacity(6 * u64::from(n) + 3);
    for k in 0..=last {
        let (x, y, z) = (3 * k, 3 * k + 1, 3 * k + 2);
        let low = u64::from(k);
        g.vertex(u64::from(2 * n + 1 + k), player(k), vec![y]);
        let mut y_succ = vec![z];
        if k > 0 {
            y_succ.push(x - 3);
        }
        g.vertex(low, player(k), y_succ);
        let mut z_succ = vec![y, z];
        if k < last {
            z_succ.push(x + 3);
        }
        g.vertex(low, player(k + 1), z_succ);
    }
    g.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::Player;

    #[test]
    fn counter_core_at_two_has_five_blocks() {
        let g = counter_core(2);
        assert_eq!(g.priorities, [5, 0, 0, 6, 1, 1, 7, 2, 2, 8, 3, 3, 9, 4, 4]);
        assert_eq!(g.successors[4], [5, 0]);
        assert_eq!(g.successors[5], [4, 5, 6]);
        assert_eq!(g.successors[14], [13, 14]);
        assert_eq!(g.owners[2], Player::One);
        assert_eq!(g.owners[3], Player::One);
    }
}
