//! Counterexamples to two priority promotion solvers, as Oink's `counter_rr` and
//! `counter_dp` tools write them.
//!
//! Priority promotion (Benerecetti, Dell'Erba and Mogavero, "Solving parity games via
//! priority promotion", CAV 2016) searches for dominions by computing attractors to the
//! highest priority and promoting regions that the opponent can only leave upwards. Its
//! variant RR (a better reset policy: "Improving priority promotion for parity games",
//! HVC 2016) and PP+ with delayed promotion ("A delayed promotion policy for parity games",
//! GandALF 2016) are still exponential: these two families make them reset and redo
//! promotions like a binary counter.
//!
//! Both games are tiny gadgets chained in a line or a ring, with the priority tied to the
//! position; the shapes below were read off Oink's instance files (`counter_rr_<n>.pg`,
//! `counter_dp_<n>.pg`) and come out vertex for vertex in the same numbering.

use super::{Builder, player};
use crate::generate::ParityGame;

/// The counterexample to priority promotion RR: a ring of `2n` pairs, `4n` vertices, `8n`
/// edges, priorities `0..=2n` except `n`.
///
/// Pair `k` is vertices `2k` and `2k + 1`. Both have the same priority and owner, each
/// points at the other and at the vertex on its own side (even or odd id) of the next pair;
/// the last pair wraps round to the first, so the game is one strongly connected ring. Going
/// round the ring the priorities are `n − 1, n + 1, n − 2, n + 2, …, 0, 2n`: pairs `2i` and
/// `2i + 1` get `n − 1 − i` and `n + 1 + i`, two priorities of the same parity, and they are
/// owned by the other player (the one who loses them): staying in a pair is bad for its
/// owner, who moves on round the ring. Player 0 wins every vertex.
pub fn counter_rr(n: u32) -> ParityGame {
    let n = n.max(1);
    let pairs = 2 * n;
    let mut b = Builder::with_capacity(u64::from(2 * pairs));
    for k in 0..pairs {
        let i = k / 2;
        let priority = if k % 2 == 0 { n - 1 - i } else { n + 1 + i };
        let next = (k + 1) % pairs;
        for side in 0..2 {
            let partner = 2 * k + (1 - side);
            b.vertex(
                u64::from(priority),
                player(n - i),
                vec![partner, 2 * next + side],
            );
        }
    }
    b.finish()
}

/// The counterexample to priority promotion with delayed promotion: a line of `n + 1`
/// blocks of four vertices, `4n + 4` vertices, `7n + 5` edges, priorities `0..=n + 3`.
///
/// Block `j` is vertices `a, b, c, d = 4j, 4j + 1, 4j + 2, 4j + 3`. `a`, `b` and `c` have
/// priority `j`; `a` and `b` belong to the player who loses it (`j + 1` mod 2), `c` to the
/// one who wins it. They form the path `a ↔ b ↔ c`. The fourth vertex `d` has priority
/// `j + 3` (the other parity, above the priorities of the blocks next to it), is owned
/// by player `j` mod 2 and leads to `c`. The blocks are chained through the `d`s: `b` can
/// jump to the next block's `d`, and `c` can fall back to the previous block's `d`.
/// One player wins everything: player 0 for even `n`, player 1 for odd `n`.
pub fn counter_dp(n: u32) -> ParityGame {
    let n = n.max(1);
    let mut g = Builder::with_capacity(4 * u64::from(n) + 4);
    for j in 0..=n {
        let (a, b, c, d) = (4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3);
        let p = u64::from(j);
        g.vertex(p, player(j + 1), vec![b]);
        let mut b_succ = vec![a, c];
        if j < n {
            b_succ.push(4 * (j + 1) + 3);
        }
        g.vertex(p, player(j + 1), b_succ);
        let mut c_succ = vec![b];
        if j > 0 {
            c_succ.push(4 * (j - 1) + 3);
        }
        g.vertex(p, player(j), c_succ);
        g.vertex(p + 3, player(j), vec![c]);
        debug_assert_eq!(g.game.owners.len() as u32, d + 1);
    }
    g.finish()
}

#[cfg(test)]
mod tests {
    use super::super::assert_game;
    use super::*;
    use crate::arena::{Player, VertexId};

    #[test]
    fn counter_rr_at_two_is_the_ring_of_four_pairs() {
        let g = counter_rr(2);
        let successors: &[(usize, &[VertexId])] = &[(6, &[7, 0]), (7, &[6, 1])];
        assert_game(
            &g,
            &[1, 1, 3, 3, 0, 0, 4, 4],
            successors,
            &[(0, Player::Zero), (4, Player::One)],
        );
    }

    #[test]
    fn counter_dp_chains_its_blocks_through_the_fourth_vertex() {
        let g = counter_dp(2);
        let successors: &[(usize, &[VertexId])] = &[(1, &[0, 2, 7]), (10, &[9, 7]), (9, &[8, 10])];
        assert_game(&g, &[0, 0, 0, 3, 1, 1, 1, 4, 2, 2, 2, 5], successors, &[]);
    }
}
