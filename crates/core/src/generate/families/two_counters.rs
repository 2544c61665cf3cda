//! The two binary counters, as Oink's `tc` tool writes them.
//!
//! Tom van Dijk, "A Parity Game Tale of Two Counters", GandALF 2019 (EPTCS 305): one game
//! family on which tangle learning, Zielonka's recursive algorithm, the priority promotion
//! family and the small progress measures take exponential time (and the quasi-polynomial
//! solvers appear to take quasi-polynomial time). The game holds two `n`-bit binary
//! counters, one per player, each bit a tangle of its counter's player; those solvers end
//! up counting through exponentially many of the counters' values.
//!
//! # The gadget
//!
//! Counter `X` is `Even` (player 0's, "don't care" priorities 1 and 2) or `Odd` (player 1's,
//! priorities 0 and 1); write `α` for its player, `ᾱ` for the other, `Y` for the other
//! counter and `d` for its low priority (`Even`: 1, `Odd`: 0). Bit `i` (`0 ≤ i < n`) of `X`
//! is, with Oink's vertex names `X-i-…`:
//! - a cycle `T → S-0 → (A-0 | B-0) → S-1 → … → S-(i−1) → (A-(i−1) | B-(i−1)) → Z → T`
//!   (just `T → Z → T` for bit 0). `T` has priority `d + 1`, of `α`'s parity, the rest
//!   priority `d`, so the cycle is won by `α`, who owns `Z` and the `S`s and keeps play in
//!   it: a *tangle* of `α`;
//! - the ways out, all `ᾱ`'s but the last: `T` (owned by `ᾱ`) escapes to `H`; `A-j`
//!   (`ᾱ`'s) escapes to bit `j` of the same counter, `B-j` to bit `j` of the other counter,
//!   both through their `L` — so which of `A-j`, `B-j` `α` picks decides whose bit `j`
//!   `ᾱ` may fall back to; and `Z` (`α`'s) may leave to the other counter's `L` of every
//!   bit `j ≥ i` (`Odd`) or `j > i` (`Even`);
//! - the entry `L` (`ᾱ`'s, priority of `ᾱ`'s parity) → `T`, and the reset `H` (`α`'s,
//!   priority of `α`'s parity, above every `L`) → the `L` of bit `i − 1` (bit `n − 1` for
//!   `i = 0`).
//!
//! Priorities grow with `n` only through `L` and `H`: `Even-i-L` has `3 + 2(n − 1 − i)`,
//! `Odd-i-L` one more; `Even-i-H` has `4n + 2 − 2i`, `Odd-i-H` one more (so higher bits get
//! the lower `L` and `H`, and `2n + 2`, `2n + 3` are unused). In all `3n² + 5n` vertices
//! (`4` per bit plus `3i` for bit `i`'s chain, in each counter) and `7n² + 4n` edges, which
//! the tests check against Oink's files; Oink writes the family for even `n`, the same rules
//! make it for any `n ≥ 1`.
//!
//! # Numbering
//!
//! Vertices are numbered by priority, as in Oink's files; vertices of equal priority (the
//! chains' `d`s) keep the order in which they are built: counter `Odd` then `Even`, bit by
//! bit, each bit as `T, S-0, A-0, B-0, …, Z, L, H`. Oink sorts with an unstable sort, so its
//! ties come out in another order; the game is the same up to that renumbering, and the
//! names (which [`named`] returns and `egsolve gen family two-counters` writes) are Oink's.

use super::{Builder, NamedGame};
use crate::arena::{Player, VertexId};
use crate::generate::ParityGame;

/// The two binary counters with `n` bits each: `3n² + 5n` vertices, `7n² + 4n` edges,
/// priorities `0..=4n + 3` except `2n + 2`, `2n + 3` (see the module docs).
pub fn two_counters(n: u32) -> ParityGame {
    named(n).game
}

/// One of the two counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counter {
    Odd,
    Even,
}

impl Counter {
    fn other(self) -> Counter {
        match self {
            Counter::Odd => Counter::Even,
            Counter::Even => Counter::Odd,
        }
    }

    /// The counter's player: the one whose tangles its bits are.
    fn player(self) -> Player {
        match self {
            Counter::Odd => Player::One,
            Counter::Even => Player::Zero,
        }
    }

    /// 1 for `Odd`: its priorities sit one above `Even`'s `L`s and `H`s.
    fn offset(self) -> u64 {
        match self {
            Counter::Odd => 1,
            Counter::Even => 0,
        }
    }

    /// The low priority of the chains: `Odd` 0, `Even` 1.
    fn low(self) -> u64 {
        1 - self.offset()
    }

    fn name(self) -> &'static str {
        match self {
            Counter::Odd => "Odd",
            Counter::Even => "Even",
        }
    }
}

/// The ids of one bit's vertices, in build order.
struct Bit {
    t: VertexId,
    /// `S-j`, `A-j`, `B-j` for `j < i`.
    chain: Vec<[VertexId; 3]>,
    z: VertexId,
    l: VertexId,
    h: VertexId,
}

/// The vertex's place in the gadget, kept until the game is sorted.
struct Vertex {
    priority: u64,
    owner: Player,
    name: String,
    successors: Vec<VertexId>,
}

/// [`two_counters`] with Oink's vertex names.
pub(super) fn named(n: u32) -> NamedGame {
    let n = n.max(1);
    let counters = [Counter::Odd, Counter::Even];
    // First every id (edges point forwards and backwards between bits and counters).
    let mut next: VertexId = 0;
    let mut take = || {
        next += 1;
        next - 1
    };
    let bits: Vec<Vec<Bit>> = counters
        .iter()
        .map(|_| {
            (0..n)
                .map(|i| Bit {
                    t: take(),
                    chain: (0..i).map(|_| [take(), take(), take()]).collect(),
                    z: take(),
                    l: take(),
                    h: take(),
                })
                .collect()
        })
        .collect();
    let bit = |c: Counter, i: u32| &bits[(c == Counter::Even) as usize][i as usize];

    let mut vertices: Vec<Vertex> = Vec::with_capacity(next as usize);
    for c in counters {
        let (alpha, y, low) = (c.player(), c.other(), c.low());
        for i in 0..n {
            let me = bit(c, i);
            let label = |part: &str| format!("{}-{i}-{part}", c.name());
            let first = me.chain.first().map_or(me.z, |link| link[0]);
            let t = (low + 1, alpha.opponent(), label("T"), vec![me.h, first]);
            push(&mut vertices, me.t, t);
            for (j, &[s, a, b]) in me.chain.iter().enumerate() {
                let onward = me.chain.get(j + 1).map_or(me.z, |link| link[0]);
                // `A-j` falls back to this counter's bit `j`, `B-j` to the other's.
                let (own_l, other_l) = (bit(c, j as u32).l, bit(y, j as u32).l);
                let opp = alpha.opponent();
                push(
                    &mut vertices,
                    s,
                    (low, alpha, label(&format!("S-{j}")), vec![a, b]),
                );
                let a_vertex = (low, opp, label(&format!("A-{j}")), vec![onward, own_l]);
                push(&mut vertices, a, a_vertex);
                let b_vertex = (low, opp, label(&format!("B-{j}")), vec![onward, other_l]);
                push(&mut vertices, b, b_vertex);
            }
            // `Odd`'s `Z` may leave to `Even`'s bits from its own index, `Even`'s only above.
            let from = i + (c == Counter::Even) as u32;
            let mut z_succ = vec![me.t];
            z_succ.extend((from..n).map(|j| bit(y, j).l));
            push(&mut vertices, me.z, (low, alpha, label("Z"), z_succ));
            let l_priority = 3 + c.offset() + 2 * u64::from(n - 1 - i);
            let l = (l_priority, alpha.opponent(), label("L"), vec![me.t]);
            push(&mut vertices, me.l, l);
            let h_priority = 4 * u64::from(n) + 2 - 2 * u64::from(i) + c.offset();
            let lower = bit(c, (i + n - 1) % n).l;
            push(
                &mut vertices,
                me.h,
                (h_priority, alpha, label("H"), vec![lower]),
            );
        }
    }
    sort_by_priority(vertices)
}

/// Appends vertex `id` (its priority, owner, name and successors) in build order.
fn push(vertices: &mut Vec<Vertex>, id: VertexId, v: (u64, Player, String, Vec<VertexId>)) {
    debug_assert_eq!(vertices.len(), id as usize, "ids are taken in build order");
    let (priority, owner, name, successors) = v;
    vertices.push(Vertex {
        priority,
        owner,
        name,
        successors,
    });
}

/// Numbers the vertices by priority, ties in build order, and maps the edges along.
fn sort_by_priority(vertices: Vec<Vertex>) -> NamedGame {
    let mut order: Vec<usize> = (0..vertices.len()).collect();
    order.sort_by_key(|&v| vertices[v].priority); // stable: ties keep build order
    let mut new_id = vec![0 as VertexId; vertices.len()];
    for (rank, &v) in order.iter().enumerate() {
        new_id[v] = rank as VertexId;
    }
    let mut slots: Vec<Option<Vertex>> = vertices.into_iter().map(Some).collect();
    let mut g = Builder::with_capacity(order.len() as u64);
    let mut names = Vec::with_capacity(order.len());
    for v in order {
        let vertex = slots[v].take().expect("each vertex is placed once");
        let successors = vertex
            .successors
            .iter()
            .map(|&u| new_id[u as usize])
            .collect();
        g.vertex(vertex.priority, vertex.owner, successors);
        names.push(vertex.name);
    }
    NamedGame {
        game: g.finish(),
        names: Some(names),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vertex named `name` in `g`.
    fn find(g: &NamedGame, name: &str) -> usize {
        let names = g.names.as_ref().unwrap();
        names.iter().position(|x| x == name).unwrap()
    }

    #[test]
    fn two_bits_give_oinks_gadgets() {
        let g = named(2);
        let names = g.names.as_ref().unwrap();
        assert_eq!(g.game.owners.len(), 22);
        assert!(g.game.priorities.windows(2).all(|w| w[0] <= w[1]));
        let odd_z = find(&g, "Odd-0-Z");
        let succ: Vec<&str> = g.game.successors[odd_z]
            .iter()
            .map(|&u| names[u as usize].as_str())
            .collect();
        assert_eq!(succ, ["Odd-0-T", "Even-0-L", "Even-1-L"]);
        let even_h = find(&g, "Even-0-H");
        assert_eq!(g.game.priorities[even_h], 10);
        assert_eq!(g.game.owners[even_h], Player::Zero);
        assert_eq!(names[g.game.successors[even_h][0] as usize], "Even-1-L");
        let b = find(&g, "Odd-1-B-0");
        assert_eq!(g.game.priorities[b], 0);
        let succ: Vec<&str> = g.game.successors[b]
            .iter()
            .map(|&u| names[u as usize].as_str())
            .collect();
        assert_eq!(succ, ["Odd-1-Z", "Even-0-L"]);
    }
}
