//! Game families built to make plain lifting climb for a long time (for the accelerated
//! solver's tests and benchmark, and `egsolve gen circle-escape`). Each returns a valid
//! arena; the comments say what lifting does on it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::arena::{Arena, EdgeList, Player, VertexId};

/// A cycle of `length >= 2` vertices (alternating owners, player 1 first) of total weight
/// −1, every player-1 vertex also having an exit of weight 0 to a sink with a zero self-loop
/// (player 1 never takes it), plus one vertex with a self-loop of weight `−big` that makes
/// `M >= big`. Every cycle vertex is in `W1`; plain lifting raises them about once per lap
/// until they pass `M`: about `length · M` lifts.
pub fn player1_cycle(length: u32, big: i64) -> Arena {
    assert!(length >= 2 && big >= 1);
    let sink = length;
    let heavy = length + 1;
    let mut owners = Vec::new();
    let mut edges = EdgeList::default();
    for i in 0..length {
        let owner = if i % 2 == 0 {
            Player::One
        } else {
            Player::Zero
        };
        owners.push(owner);
        let weight = if i == 0 { -1 } else { 0 };
        edges.push(i, (i + 1) % length, weight);
        if owner == Player::One {
            edges.push(i, sink, 0);
        }
    }
    owners.push(Player::Zero);
    edges.push(sink, sink, 0);
    owners.push(Player::One);
    edges.push(heavy, heavy, -big);
    Arena::from_edges(owners, edges, None).expect("player1_cycle builds a valid arena")
}

/// `copies` gadgets where player 0 circles before escaping: player-0 vertices `v ↔ x`
/// (weights −1 and −1) and an escape `v → y` of weight `−big` into `y`, which has a zero
/// self-loop. Everything is in `W0` (credit `big` at `v`, `big + 1` at `x`), but lifting
/// raises `v` and `x` by 2 per lap of the cycle: about `big` lifts per gadget.
pub fn circle_then_escape(copies: u32, big: i64) -> Arena {
    assert!(copies >= 1 && big >= 1);
    let mut owners = Vec::new();
    let mut edges = EdgeList::default();
    for c in 0..copies {
        let (v, x, y) = (3 * c, 3 * c + 1, 3 * c + 2);
        owners.extend([Player::Zero, Player::Zero, Player::Zero]);
        edges.push(v, x, -1);
        edges.push(v, y, -big);
        edges.push(x, v, -1);
        edges.push(y, y, 0);
    }
    Arena::from_edges(owners, edges, None).expect("circle_then_escape builds a valid arena")
}

/// A random game of `n` vertices and out-degree 1..=`max_degree`, whose weights are those of
/// a parity game with random priorities in `0..priorities` under the reduction of
/// `FORMATS.md` ([`crate::format::reduce_parity`]) (weight `±a_i` on every edge leaving a vertex of priority `p_i`): with many
/// priorities the weights, and so `M`, grow exponentially, and lifting climbs for long.
/// Returns `None` if `M` would not fit in 64 bits.
pub fn random_parity(n: u32, max_degree: u32, priorities: u32, seed: u64) -> Option<Arena> {
    assert!(n >= 1 && max_degree >= 1 && priorities >= 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let owners: Vec<Player> = (0..n)
        .map(|_| Player::one_if(rng.random_bool(0.5)))
        .collect();
    let priority: Vec<u64> = (0..n)
        .map(|_| rng.random_range(0..priorities as u64))
        .collect();
    let table = crate::format::reduce_parity(&priority).ok()?;
    let weight = crate::format::vertex_weights(&priority, &table);
    let mut edges = EdgeList::default();
    for v in 0..n {
        let degree = rng.random_range(1..=max_degree);
        for _ in 0..degree {
            let u: VertexId = rng.random_range(0..n);
            edges.push(v, u, weight[v as usize]);
        }
    }
    let arena = Arena::from_edges(owners, edges, None).expect("random_parity builds a valid arena");
    crate::solve::energy::bound(&arena).ok()?;
    Some(arena)
}
