//! Strategy improvement for player 1, from below: an exact solve whose cost does not grow
//! with the credits, for the games that lifting climbs (a parity game's reduction whose
//! credits run to millions: SYNTCOMP's `ltl2dpa12` lifted 10^8 times).
//!
//! # Algorithm
//! From values `f <= f*` (the driver's, after a lifting phase), repeat:
//! 1. **Choose σ1**: at each player-1 vertex with a finite value, an edge maximising the
//!    need `f(u) ⊖ w` (the one it had, if that still does: no switch without a strict gain).
//! 2. **Evaluate σ1 above `f`**: `h` := the least fixpoint `>= f` of
//!    `T(x)(v) = max(f(v), min_u x(u) − w)` in the one-player game `G_σ1` (player 0 takes
//!    the minimum over its edges, player 1 follows σ1), in exact integers: `f` is a floor
//!    under every value, and a value above `M` becomes ⊤ afterwards ([`inner`]).
//! 3. If `h = f`, stop; else `f := h` and go to 1.
//!
//! [`inner`] computes `h` from above by policy iteration over player 0's positional moves
//! τ: a profile (τ, σ1) makes every path a lasso, whose value is exact in linear time
//! (⊤ for a negative cycle; for a nonnegative one, the largest floor deficit over one lap
//! ahead). Player 0 then switches to edges that are strictly better under those values, in
//! place, and the lowered values are carried back to predecessors (a Bellman–Ford descent
//! within `n + m` steps, switching player 0 again where strictly better) before the next
//! evaluation: switches that would each have cost an iteration come in one. When no switch
//! is better, two kinds of stall remain, each unlocked by a switch:
//! - vertices at ⊤ holding a nonnegative cycle among themselves (found by Bellman–Ford for
//!   longest paths with lexicographic weights `(w, 1)`): player 0 follows it;
//! - cycles of *tight* edges (`x(v) = x(u) − w`) among vertices above their floors: such a
//!   cycle has weight 0 and could be lowered, so player 0 follows tight edges inside it.
//!
//! # Soundness
//! Let `f*` be the least energy progress measure; the driver's invariant is `f <= f*`.
//! - **Each `h` is `<= f*`.** For `x <= f*`, `T(x) <= f*`: at player 0,
//!   `x(u) − w <= f*(u) ⊖ w`, and the minimum over the same edges is at most `op(f*)(v)
//!   = f*(v)`; at player 1, the σ1 edge's term is at most the maximum over all edges, again
//!   `f*(v)`; and `f(v) <= f*(v)`. `T` is monotone and `f <= T(f)`, so its Kleene iterates
//!   from `f`, and their limit `h`, stay `<= f*`. A value of `h` above `M` means
//!   `f*(v) > M`, that is `f*(v) = ⊤` (finite credits are at most `M`).
//! - **[`inner`] returns exactly that least fixpoint.** A profile's values are the least
//!   fixpoint of `T` with player 0 held to τ, so they bound `h` from above. After the
//!   switches and the descent, every value is its vertex's need along its new edge under
//!   values that have only fallen since, so the values are a post-fixpoint of the new
//!   profile's operator, strictly below the last evaluation where a switch happened: the
//!   new profile's values are smaller somewhere and nowhere larger; the two unlocking
//!   switches only take tight or ⊤ edges, so the same holds (a zero cycle above its floors
//!   falls by at least 1; a nonnegative cycle at ⊤ becomes finite). Values fall strictly, no
//!   profile repeats, and it ends. At the end, let `L = h <= x` (the profile's values `x`)
//!   and suppose they differ. The vertices at ⊤ in `x` with a finite floor are closed (any
//!   edge out would have been a strict switch) and hold no nonnegative cycle (the search is
//!   exact), so they are at ⊤ in `L` too. Among the finite ones take those where `x − L` is
//!   largest (`Δ > 0`): at such `v`, `x(v) > L(v) >= f(v)`, and the edge that makes `L(v)`
//!   (player 0's minimum, player 1's σ1) gives `x(v) <= x(u) − w` and `L(v) >= L(u) − w`,
//!   so `u` has difference `Δ` and the edge is tight in `x`. These tight edges close a cycle
//!   above the floors, which the last stall test would have found. So `x = L`.
//! - **The last `f` is `f*`.** The loop ends with `h = f`: `f` is a fixpoint of `T`, so
//!   `f(v) >= x(u) ⊖ w` at player 0's best edge and at player 1's σ1 edge, which attains the
//!   maximum over all edges (a need past `M`, or at ⊤, would have made `h` ⊤ there). So
//!   `op(f) <= f`: a post-fixpoint, above the least fixpoint `f*`; with `f <= f*`, `f = f*`.
//!   Every round raises `f` strictly, within finitely many values, so the loop ends.
//!
//! The driver only runs it where it is cheap and needed ([`Improver`]: small games, after
//! a first evaluation did not finish them); a run that spends its share of
//! work keeps the last round's `f` (each round's values are sound) and hands back to
//! lifting and evaluations, which end at `f*` from any `f <= f*`.
//!
//! # Player 1's strategy
//! A vertex a round sets to ⊤ keeps that round's σ1 in the driver's `sigma_edge` (as an
//! evaluation's vertices do), the seed from which `strategy::player1` builds and certifies
//! player 1's strategy.

mod inner;
#[cfg(test)]
mod tests;

use std::time::Duration;

use self::inner::{INF, OnePlayer, Stopped, Work};
use super::Schedule;
use crate::arena::{Arena, Player, VertexId};
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::{TOP, minus};
use crate::solve::strategy::NO_EDGE;

/// Games with at most this many vertices plus edges are solved by strategy improvement
/// after their first lifting phase that does not finish (see [`Improver`]).
pub const IMPROVE_UP_TO: usize = 1 << 18;

/// The first run's share of work, in vertices plus edges scanned, per vertex plus edge of
/// the game; each run that spends it doubles the next one's. The runs measured took 10 to
/// 30 (ltl2dpa12: 5 rounds, 10 policy iterations; an iteration scans about `n + m` and its
/// descent at most as much again), and 64 scans cost about 3 evaluations (an iteration's
/// scan runs at a few ns per item, an evaluation at about 150).
const FIRST_SHARE: u64 = 64;

/// What one run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Improved {
    /// Rounds (strategies σ1 evaluated).
    pub rounds: u64,
    /// Policy iterations of player 0, over all rounds.
    pub iterations: u64,
    /// … of which ended by unlocking vertices at ⊤, and by lowering zero cycles.
    pub unlocked: u64,
    /// … and of which ended by lowering zero cycles.
    pub zero_cycles: u64,
    /// Raises of a vertex's value (a vertex raised in several rounds counts in each).
    pub raised: usize,
    /// … of which to ⊤.
    pub topped: usize,
    /// Whether it reached `f*` (else it spent its share of work first).
    pub solved: bool,
}

/// When the driver runs strategy improvement: under the measured schedule (the default;
/// the counted one keeps testing evaluations on small games), on games of at most
/// [`IMPROVE_UP_TO`] vertices plus edges, in place of every evaluation after the first,
/// with a share of work that doubles after each run that spends it.
#[derive(Debug, Clone)]
pub(super) struct Improver {
    share: u64,
    applies: bool,
}

#[cfg(test)]
thread_local! {
    /// Tests: run it under any schedule.
    pub(super) static FORCED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Improver {
    pub(super) fn new(arena: &Arena, schedule: Schedule) -> Improver {
        let items = arena.vertex_count() + arena.edge_count();
        #[cfg(test)]
        let schedule = match FORCED.with(std::cell::Cell::get) {
            true => Schedule::Measured,
            false => schedule,
        };
        Improver {
            share: FIRST_SHARE.saturating_mul(items as u64),
            applies: items <= IMPROVE_UP_TO && schedule == Schedule::Measured,
        }
    }

    /// Whether the next evaluation should be a run instead, after `evaluations` so far: from
    /// the second on. A game that one evaluation and lifting finish never pays for a run
    /// (Hanoi with 10 disks: one evaluation, 6 policy iterations); one that climbs on
    /// after an evaluation is what the runs are for.
    pub(super) fn due(&self, evaluations: u64) -> bool {
        self.applies && evaluations >= 1
    }

    /// One run from `values`, within the current share; the next share doubles if this one
    /// ran out.
    pub(super) fn run(
        &mut self,
        arena: &Arena,
        values: &mut [u64],
        bound: u64,
        sigma_edge: &mut Vec<u32>,
        control: &Control,
    ) -> Result<(Improved, Duration), Interrupted> {
        let start = std::time::Instant::now();
        let improved = improve(arena, values, bound, sigma_edge, self.share, control)?;
        if !improved.solved {
            self.share = self.share.saturating_mul(2);
        }
        Ok((improved, start.elapsed()))
    }
}

/// Strategy improvement from `values` (`<= f*`), within `limit` vertices plus edges
/// scanned: raises `values` round by round (module docs) and records each round's σ1 in
/// `sigma_edge` (allocated here if empty) at the player-1 vertices it chose for.
pub fn improve(
    arena: &Arena,
    values: &mut [u64],
    bound: u64,
    sigma_edge: &mut Vec<u32>,
    limit: u64,
    control: &Control,
) -> Result<Improved, Interrupted> {
    let n = arena.vertex_count();
    if sigma_edge.is_empty() {
        *sigma_edge = vec![NO_EDGE; n];
    }
    let mut work = Work {
        done: 0,
        limit,
        control,
        iterations: 0,
        unlocked: 0,
        zero_cycles: 0,
    };
    let mut improved = Improved::default();
    let mut sigma = sigma_edge.clone();
    let mut tau: Vec<u32> = Vec::new();
    loop {
        improved.rounds += 1;
        choose_sigma(arena, values, bound, &mut sigma);
        // Player 0's moves: first the edges `f` points to (its best needs), then the last
        // round's (optimal against the last σ1, which changed at few vertices: fewer
        // iterations than starting afresh from the values).
        if tau.is_empty() {
            tau = (0..n)
                .map(|v| best_edge(arena, values, bound, v, Player::Zero))
                .collect();
        }
        let game = OnePlayer {
            arena,
            floors: values,
            sigma: &sigma,
        };
        let h = match game.least_fixpoint(&mut tau, &mut work) {
            Ok(h) => h,
            Err(Stopped::Budget) => break,
            Err(Stopped::Interrupted(i)) => return Err(i),
        };
        let mut changed = false;
        for v in 0..n {
            if values[v] == TOP {
                continue;
            }
            let new = if h[v] == INF || h[v] > bound as i128 {
                TOP
            } else {
                h[v] as u64
            };
            debug_assert!(new >= values[v], "a floor is never lowered");
            if new > values[v] {
                changed = true;
                improved.raised += 1;
                improved.topped += (new == TOP) as usize;
                values[v] = new;
                if arena.owner(v as VertexId) == Player::One {
                    sigma_edge[v] = sigma[v];
                }
            }
        }
        if !changed {
            improved.solved = true;
            break;
        }
    }
    improved.iterations = work.iterations;
    improved.unlocked = work.unlocked;
    improved.zero_cycles = work.zero_cycles;
    // The last σ1 at every vertex still finite (the driver keeps it as its seed).
    for v in 0..n {
        if values[v] != TOP && sigma[v] != NO_EDGE {
            sigma_edge[v] = sigma[v];
        }
    }
    Ok(improved)
}

/// σ1 for the next round: at each player-1 vertex with a finite value, its edge if that
/// still attains the largest need, else the first edge that does.
fn choose_sigma(arena: &Arena, values: &[u64], bound: u64, sigma: &mut [u32]) {
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    for v in 0..arena.vertex_count() {
        if arena.owner(v as VertexId) != Player::One || values[v] == TOP {
            continue;
        }
        let best = best_edge(arena, values, bound, v, Player::One);
        let need = |e: u32| {
            minus(
                values[targets[e as usize] as usize],
                weights.get(e as usize),
                bound,
            )
        };
        let keep = sigma[v] != NO_EDGE
            && arena
                .succ_range(v as VertexId)
                .contains(&(sigma[v] as usize))
            && need(sigma[v]) == need(best);
        if !keep {
            sigma[v] = best;
        }
    }
}

/// The first edge of `v` with the smallest (`player` 0) or largest (player 1) need
/// `f(u) ⊖ w`.
fn best_edge(arena: &Arena, values: &[u64], bound: u64, v: usize, player: Player) -> u32 {
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    let range = arena.succ_range(v as VertexId);
    let mut best = range.start;
    let mut best_need = minus(values[targets[best] as usize], weights.get(best), bound);
    for e in range {
        let need = minus(values[targets[e] as usize], weights.get(e), bound);
        let better = match player {
            Player::Zero => need < best_need,
            Player::One => need > best_need,
        };
        if better {
            best = e;
            best_need = need;
        }
    }
    best as u32
}
