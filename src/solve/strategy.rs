//! Winning strategies from a solved game, the same for every backend.
//!
//! - **Player 0 on `W0`**: at each player-0 vertex with a finite credit, a successor `u` with
//!   `f(v) >= f(u) ⊖ w(v,u)` (one exists because `f` is a progress measure); the first that
//!   needs the least credit is taken (at the least fixpoint that is the first one needing
//!   at most `f(v)`, where the scan stops).
//! - **Player 1 on `W1`**: the credits say nothing about *how* player 1 wins, so we solve the
//!   *dual game* on `W1`: roles swapped, weights `w' = −k·w − 1` with `k = |W1|`. A cycle of
//!   length `≤ k` has `w'`-weight `≥ 0` exactly when its `w`-weight is negative, so the dual
//!   energy player (player 1) wins everywhere in `W1` and its progress-measure strategy keeps
//!   every cycle negative. The dual uses `i128` weights and `u128` values, so no game whose `M`
//!   fits in 64 bits can overflow it.

use rayon::prelude::*;

use super::control::{Control, Interrupted};
use super::energy::{TOP, minus};
use super::threads::Threads;
use super::worklist::{self, LiftGame};
use crate::arena::{Arena, Player, VertexId};

/// "No move chosen here": the vertex is not owned by the player who wins it.
pub const NO_MOVE: VertexId = VertexId::MAX;

/// Games with at least this many edges derive player 0's strategy on several threads (one
/// random gather per edge: about 0.1 s per 10^7 edges on one core).
pub const PARALLEL_FROM_EDGES: usize = 1 << 19;
/// Vertices per parallel task.
const CHUNK: usize = 1 << 14;

/// Player 0's strategy on `W0` from the least progress measure `credit` (bound `bound`):
/// entries for other vertices are [`NO_MOVE`]. Uses `threads` on games of
/// [`PARALLEL_FROM_EDGES`] edges or more; the choice per vertex does not depend on them.
pub fn player0(
    arena: &Arena,
    credit: &[u64],
    bound: u64,
    strategy: &mut [VertexId],
    threads: &Threads,
) {
    if threads.count() <= 1 || arena.edge_count() < PARALLEL_FROM_EDGES {
        return player0_from(arena, credit, bound, strategy, 0);
    }
    threads.install(|| {
        strategy
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| player0_from(arena, credit, bound, chunk, i * CHUNK))
    });
}

/// [`player0`] for the vertices `first..first + strategy.len()`.
fn player0_from(
    arena: &Arena,
    credit: &[u64],
    bound: u64,
    strategy: &mut [VertexId],
    first: usize,
) {
    for (slot, v) in strategy.iter_mut().zip(first as VertexId..) {
        if arena.owner(v) != Player::Zero || credit[v as usize] == TOP {
            continue;
        }
        // The first successor needing the least credit. At the least fixpoint that least
        // credit is `credit[v]` itself, so the scan stops at the first successor that needs
        // no more (the same choice as a full scan, at a fraction of the random reads).
        let need = credit[v as usize];
        let mut best = (NO_MOVE, TOP);
        for (u, w) in arena.successors(v) {
            let key = minus(credit[u as usize], w, bound);
            if best.0 == NO_MOVE || key < best.1 {
                best = (u, key);
                if key <= need {
                    break;
                }
            }
        }
        *slot = best.0;
    }
}

/// The dual game on `W1`.
struct Dual<'a> {
    arena: &'a Arena,
    in_w1: Vec<bool>,
    scale: i128,
    bound: u128,
}

impl LiftGame for Dual<'_> {
    type E = u128;
    fn arena(&self) -> &Arena {
        self.arena
    }
    #[inline(always)]
    fn active(&self, v: VertexId) -> bool {
        self.in_w1[v as usize]
    }
    #[inline(always)]
    fn owner(&self, v: VertexId) -> Player {
        self.arena.owner(v).opponent()
    }
    #[inline(always)]
    fn weight(&self, w: i64) -> i128 {
        -self.scale * w as i128 - 1
    }
    fn bound(&self) -> u128 {
        self.bound
    }
}

/// Player 1's strategy on `W1` (where `credit` is ⊤), written into `strategy`. Returns the
/// lifts the dual game took.
pub fn player1(
    arena: &Arena,
    credit: &[u64],
    strategy: &mut [VertexId],
    control: &Control,
) -> Result<u64, Interrupted> {
    let in_w1: Vec<bool> = credit.iter().map(|&c| c == TOP).collect();
    let k = in_w1.iter().filter(|&&b| b).count();
    if k == 0 {
        return Ok(0);
    }
    let mut dual = Dual {
        arena,
        in_w1,
        scale: k as i128,
        bound: 0,
    };
    let mut bound: u128 = 0;
    for v in (0..arena.vertex_count() as VertexId).filter(|&v| dual.active(v)) {
        let min = arena
            .successors(v)
            .filter(|&(u, _)| dual.active(u))
            .map(|(_, w)| dual.weight(w))
            .min()
            .expect("a W1 vertex has a successor in W1");
        if min < 0 {
            // |w'| <= 2^32 * 2^63 + 1 and at most 2^32 vertices: the sum stays below 2^127.
            bound += min.unsigned_abs();
        }
    }
    dual.bound = bound;
    let lifted = worklist::solve(&dual, control)?;
    let values = &lifted.values;
    for v in 0..arena.vertex_count() as VertexId {
        if !dual.active(v) || arena.owner(v) != Player::One {
            continue;
        }
        let best = arena
            .successors(v)
            .filter(|&(u, _)| dual.active(u))
            .min_by_key(|&(u, w)| {
                <u128 as worklist::Energy>::minus(values[u as usize], dual.weight(w), bound)
            })
            .map(|(u, _)| u);
        strategy[v as usize] = best.unwrap_or(NO_MOVE);
    }
    Ok(lifted.lifts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};

    /// Player 0's choices on several threads equal the sequential ones on a game above the
    /// parallel threshold, for arbitrary values with ⊤ among them (the choice is a per-vertex
    /// argmin either way).
    #[test]
    fn player0_on_threads_equals_sequential() {
        let arena = random(
            RandomParams {
                vertices: 200_000,
                min_degree: 1,
                max_degree: 5,
                ..RandomParams::default()
            },
            11,
        );
        assert!(arena.edge_count() >= PARALLEL_FROM_EDGES);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let credit: Vec<u64> = (0..arena.vertex_count())
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % 10 == 0 { TOP } else { x % 50 }
            })
            .collect();
        let n = arena.vertex_count();
        let mut sequential = vec![NO_MOVE; n];
        player0(&arena, &credit, 60, &mut sequential, &Threads::one());
        assert!(sequential.iter().any(|&s| s != NO_MOVE));
        for threads in [2, 3, 8] {
            let mut parallel = vec![NO_MOVE; n];
            player0(&arena, &credit, 60, &mut parallel, &Threads::new(threads));
            assert!(parallel == sequential, "{threads} threads");
        }
    }

    /// At the least fixpoint, the scan that stops at the first successor needing at most
    /// `f(v)` picks the same successor as a full scan for the first least need.
    #[test]
    fn player0_early_exit_equals_the_full_argmin_at_the_fixpoint() {
        for seed in 0..40u64 {
            let arena = random(
                RandomParams {
                    vertices: 300,
                    min_degree: 1,
                    max_degree: 6,
                    min_weight: -5,
                    max_weight: 5,
                    player1_percent: 40,
                },
                seed,
            );
            let solution =
                crate::solve::solve(&arena, crate::solve::Backend::Reference, &Control::new())
                    .expect("solves");
            let (credit, bound) = (&solution.credit, solution.stats.bound);
            let mut early = vec![NO_MOVE; arena.vertex_count()];
            player0(&arena, credit, bound, &mut early, &Threads::one());
            for v in 0..arena.vertex_count() as VertexId {
                let full = if arena.owner(v) == Player::Zero && credit[v as usize] != TOP {
                    arena
                        .successors(v)
                        .min_by_key(|&(u, w)| minus(credit[u as usize], w, bound))
                        .map(|(u, _)| u)
                        .expect("a successor")
                } else {
                    NO_MOVE
                };
                assert_eq!(early[v as usize], full, "seed {seed} vertex {v}");
            }
        }
    }
}
