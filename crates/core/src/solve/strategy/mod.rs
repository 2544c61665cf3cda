//! Winning strategies from a solved game, the same for every backend
//! ([`super::Solution::from_credits`]).
//!
//! - **Player 0 on `W0`**: at each player-0 vertex with a finite credit, a successor `u` with
//!   `f(v) >= f(u) ⊖ w(v,u)` (one exists because `f` is a progress measure); the first that
//!   needs the least credit is taken (at the least fixpoint that is the first one needing
//!   at most `f(v)`, where the scan stops).
//! - **Player 1 on `W1`**: from what the backend knows ([`Seed`]: the lifts' record
//!   [`topping`], the accelerated solver's kept moves and ranks), checked (the recorded
//!   moves) or built in layers ([`player1`]); only if those stop short, the *dual game*
//!   ([`player1_dual`]): on `W1`, roles swapped, weights `w' = −k·w − 1` with `k = |W1|`. A
//!   cycle of length `≤ k` has `w'`-weight `≥ 0` exactly when its `w`-weight is negative, so
//!   the dual energy player (player 1) wins everywhere in `W1` and its progress-measure
//!   strategy keeps every cycle negative. The dual uses `i128` weights and `u128` values, so
//!   no game whose `M` fits in 64 bits can overflow it.
//!
//! **Independent of what it certifies.** This module reads only the arena, the credits and
//! the seed, and runs the shared searches of [`crate::graph`]; it imports nothing from the
//! accelerated solver (`accel`), so the reference backend's strategies do not come through
//! the code they are compared with. `egsolve check` verifies every strategy with its own
//! code (`crate::check`), not with these searches.

use super::chunked;
use super::control::{Control, Interrupted};
use super::energy::{TOP, minus};
use super::threads::Threads;
use super::worklist::{self, LiftGame};
use crate::arena::{Arena, Player, VertexId, Weight, Width};

mod lifted;
pub mod player1;
pub mod topping;

pub use self::lifted::RecordedMoves;
pub use self::player1::{Player1Source, Seed, certified_strategy};
pub use self::topping::{NO_EDGE, ToppedBy, Topping};

/// No rank: not at ⊤, or topped without a recorded reason (the accelerated solver's ranks,
/// [`Seed::ranks`]).
pub const NO_RANK: u32 = u32::MAX;

/// "No move chosen here": the vertex is not owned by the player who wins it.
pub const NO_MOVE: VertexId = VertexId::MAX;

/// Games with at least this many edges derive player 0's strategy on several threads (one
/// random gather per edge: about 0.1 s per 10^7 edges on one core).
pub const PARALLEL_FROM_EDGES: usize = 1 << 19;

/// Player 0's strategy on `W0` from the least progress measure `credit` (bound `bound`):
/// entries for other vertices are [`NO_MOVE`]. Uses `threads` on games of
/// [`PARALLEL_FROM_EDGES`] edges or more (each thread also writes its part of the vector,
/// so its pages are not first touched by one thread); the choice per vertex does not depend
/// on them.
pub fn player0(arena: &Arena, credit: &[u64], bound: u64, threads: &Threads) -> Vec<VertexId> {
    match arena.weight_width() {
        Width::I16 => player0_typed::<i16>(arena, credit, bound, threads),
        Width::I32 => player0_typed::<i32>(arena, credit, bound, threads),
        Width::I64 => player0_typed::<i64>(arena, credit, bound, threads),
    }
}

/// [`player0`] for an arena whose weights are stored as `W`.
fn player0_typed<W: Weight>(
    arena: &Arena,
    credit: &[u64],
    bound: u64,
    threads: &Threads,
) -> Vec<VertexId> {
    let (weights, _) = arena
        .typed_weights::<W>()
        .expect("dispatched on the arena's weight width");
    let (offsets, targets) = (arena.succ_offsets(), arena.succ_targets());
    let choose = |v: VertexId| -> VertexId {
        if arena.owner(v) != Player::Zero || credit[v as usize] == TOP {
            return NO_MOVE;
        }
        // The first successor needing the least credit. At the least fixpoint that least
        // credit is `credit[v]` itself, so the scan stops at the first successor that needs
        // no more (the same choice as a full scan, at a fraction of the random reads).
        let need = credit[v as usize];
        let edges = offsets[v as usize] as usize..offsets[v as usize + 1] as usize;
        let mut best = (NO_MOVE, TOP);
        for (&u, &w) in targets[edges.clone()].iter().zip(&weights[edges]) {
            let key = minus(credit[u as usize], w.widen(), bound);
            if best.0 == NO_MOVE || key < best.1 {
                best = (u, key);
                if key <= need {
                    break;
                }
            }
        }
        best.0
    };
    let n = arena.vertex_count() as VertexId;
    // The reads of credits are random: ask for the first successors' credits of the vertex
    // `PREFETCH_AHEAD` places on while choosing this one.
    let choose_ahead = |v: VertexId| {
        if let Some(&next) = offsets.get(v as usize + PREFETCH_AHEAD) {
            if let Some(&u) = targets.get(next as usize) {
                prefetch(&credit[u as usize]);
            }
        }
        choose(v)
    };
    if threads.count() <= 1 || arena.edge_count() < PARALLEL_FROM_EDGES {
        return (0..n).map(choose_ahead).collect();
    }
    threads.install(|| chunked::map(n as usize, |v| choose_ahead(v as VertexId)))
}

/// How many vertices ahead [`player0`] prefetches credits.
const PREFETCH_AHEAD: usize = 16;

/// Asks the processor to bring `value` into cache (a hint; nothing where not supported).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults; the pointer comes from a reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast(),
        );
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
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

/// Player 1's strategy on `W1` (where `credit` is ⊤) from the dual game, written into
/// `strategy`. Returns the lifts the dual game took.
pub fn player1_dual(
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
        let sequential = player0(&arena, &credit, 60, &Threads::one());
        assert_eq!(sequential.len(), n);
        assert!(sequential.iter().any(|&s| s != NO_MOVE));
        for threads in [2, 3, 8] {
            let parallel = player0(&arena, &credit, 60, &Threads::new(threads));
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
            let early = player0(&arena, credit, bound, &Threads::one());
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
