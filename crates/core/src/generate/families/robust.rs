//! The robust worst cases for divide-et-impera solvers, as Oink's `counter_core` and
//! `counter_rob` tools write them.
//!
//! Benerecetti, Dell'Erba and Mogavero, "Robust Exponential Worst Cases for Divide-et-Impera
//! Algorithms for Parity Games", GandALF 2017 (EPTCS 256): one family of games on which
//! Zielonka's recursive algorithm and the priority promotion solvers — the algorithms that
//! split the game by the attractor of its top priority and recurse — all take exponential
//! time. Oink's README lists `counter_core` as this paper's counterexample, and
//! `counter_rob` as its robust version: the same line of blocks with every two blocks
//! joined by a gadget of priority 0, so that the game is one strongly connected component
//! (solvers that split the game into SCCs first gain nothing).
//!
//! The shapes below were read off Oink's instance files (`counter_core_<n>.pg`,
//! `counter_rob_<n>.pg`) and come out vertex for vertex in the same numbering.

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

/// The robust worst case joined up: [`counter_core`]'s `2n + 1` blocks, then for every two
/// blocks `k < l` a gadget of priority 0 between their `z`s, in the order of `(k, l)`:
/// `3n² + 8n + 3` vertices, `10n² + 18n + 4` edges.
///
/// - Blocks of the same parity get one vertex, owned by player `k` mod 2, with edges to
///   `z_k` and `z_l`; both `z`s have an edge to it.
/// - Blocks of different parities get two vertices `p, q`: `p` (player `k` mod 2) leads to
///   `z_k` or `q`, `q` (the other player) to `p` or `z_l`; `z_k` has an edge to `p`, `z_l`
///   to `q`.
///
/// Each `z` lists its [`counter_core`] successors, then its gadgets in the order they were
/// built. Player 0 wins every vertex.
pub fn counter_rob(n: u32) -> ParityGame {
    let n = n.max(1);
    let blocks = 2 * n + 1;
    let n64 = u64::from(n);
    let mut g = Builder::with_capacity(3 * n64 * n64 + 8 * n64 + 3);
    let core = counter_core(n);
    for v in 0..core.owners.len() {
        g.vertex(
            core.priorities[v],
            core.owners[v],
            core.successors[v].clone(),
        );
    }
    let z = |k: u32| 3 * k + 2;
    for k in 0..blocks {
        for l in k + 1..blocks {
            let next = g.game.owners.len() as u32;
            if (l - k) % 2 == 0 {
                g.vertex(0, player(k), vec![z(k), z(l)]);
                g.game.successors[z(k) as usize].push(next);
                g.game.successors[z(l) as usize].push(next);
            } else {
                g.vertex(0, player(k), vec![z(k), next + 1]);
                g.vertex(0, player(k + 1), vec![next, z(l)]);
                g.game.successors[z(k) as usize].push(next);
                g.game.successors[z(l) as usize].push(next + 1);
            }
        }
    }
    g.finish()
}

#[cfg(test)]
mod tests {
    use super::super::assert_game;
    use super::*;
    use crate::arena::{Player, VertexId};

    #[test]
    fn counter_core_at_two_has_five_blocks() {
        let g = counter_core(2);
        let successors: &[(usize, &[VertexId])] = &[(4, &[5, 0]), (5, &[4, 5, 6]), (14, &[13, 14])];
        assert_game(
            &g,
            &[5, 0, 0, 6, 1, 1, 7, 2, 2, 8, 3, 3, 9, 4, 4],
            successors,
            &[(2, Player::One), (3, Player::One)],
        );
    }

    #[test]
    fn counter_rob_at_one_is_oinks() {
        let g = counter_rob(1);
        let successors: &[(usize, &[VertexId])] = &[
            (2, &[1, 2, 3, 9, 11]),
            (5, &[4, 5, 6, 10, 12]),
            (8, &[7, 8, 11, 13]),
            (10, &[9, 5]),
        ];
        assert_game(
            &g,
            &[3, 0, 0, 4, 1, 1, 5, 2, 2, 0, 0, 0, 0, 0],
            successors,
            &[],
        );
        assert_eq!(
            g.owners[9..],
            [
                Player::Zero,
                Player::One,
                Player::Zero,
                Player::One,
                Player::Zero
            ]
        );
    }
}
