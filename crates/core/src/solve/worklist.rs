//! Algorithm 1 of the paper (Brim et al.'s worklist with successor counters), written once
//! for any energy type so that the same code solves the game itself (`u64` values, `i64`
//! weights) and the dual game used for player 1's strategy (`u128` values, `i128` weights).
//!
//! A [`LiftGame`] is a view of an arena: owners, successors, predecessors and a weight per
//! edge, possibly restricted to the vertices of a mask (edges into vertices outside it are
//! ignored). Lifting starts from 0 everywhere and applies the lifting operator to vertices
//! whose progress-measure condition is broken until none is: the least fixpoint.

use std::collections::VecDeque;

use super::control::{Budget, Control, Interrupted};
use super::strategy::topping::{NO_EDGE, ToppedBy, Topping};
use crate::arena::{Arena, Player, VertexId, Weight, Width};

/// An energy value type: finite values up to a bound, and ⊤.
pub(crate) trait Energy: Copy + Ord + Default + std::fmt::Debug {
    /// The signed weight type paired with this energy type.
    type Weight: Copy;
    /// ⊤.
    const TOP: Self;
    /// `a ⊖ w` capped at `bound` (above it: ⊤).
    fn minus(a: Self, w: Self::Weight, bound: Self) -> Self;
}

impl Energy for u64 {
    type Weight = i64;
    const TOP: u64 = super::energy::TOP;
    #[inline(always)]
    fn minus(a: u64, w: i64, bound: u64) -> u64 {
        super::energy::minus(a, w, bound)
    }
}

impl Energy for u128 {
    type Weight = i128;
    const TOP: u128 = u128::MAX;
    #[inline(always)]
    fn minus(a: u128, w: i128, bound: u128) -> u128 {
        if a == u128::MAX {
            return u128::MAX;
        }
        if w >= 0 {
            a.saturating_sub(w as u128)
        } else {
            let needed = a.saturating_add(w.unsigned_abs());
            if needed > bound { u128::MAX } else { needed }
        }
    }
}

/// What the worklist needs to know about a game.
pub(crate) trait LiftGame {
    /// Energy values of this game.
    type E: Energy;
    /// The arena whose structure this game uses.
    fn arena(&self) -> &Arena;
    /// Whether `v` takes part (vertices outside are ignored, and so are edges into them).
    fn active(&self, v: VertexId) -> bool;
    /// The owner of `v` in this game.
    fn owner(&self, v: VertexId) -> Player;
    /// The weight of the arena's edge whose original weight is `w`.
    fn weight(&self, w: i64) -> <Self::E as Energy>::Weight;
    /// The ⊤ bound `M` of this game.
    fn bound(&self) -> Self::E;
    /// Called when a lift raises `v` to ⊤, with why (the game's record, [`Topping`];
    /// nothing by default).
    #[inline(always)]
    fn topping(&self, _v: VertexId, _why: (ToppedBy, u32)) {}
}

/// Result of a worklist run.
#[derive(Debug, Clone)]
pub(crate) struct Lifted<E> {
    /// The least energy progress measure (inactive vertices: 0).
    pub values: Vec<E>,
    /// Lifts applied (vertices popped whose value was recomputed).
    pub lifts: u64,
}

/// The lifting operator at `v`: min (player 0) or max (player 1) of `f(u) ⊖ w(v,u)` over
/// active successors. For player 0 also returns how many edges reach the minimum — the
/// edges satisfied once `f(v)` takes it — or `None` when `v` has a self-loop (whose need
/// changes with `f(v)` itself, so the caller recounts). And why the value is ⊤ if it is
/// (`topping::classify`'s answer, from the same reads: the worklist changes no value
/// between them).
/// `weights` are the arena's successor weights at their storage width.
#[inline]
fn lift<G: LiftGame, W: Weight>(
    game: &G,
    weights: &[W],
    values: &[G::E],
    v: VertexId,
) -> (G::E, Option<u32>, (ToppedBy, u32)) {
    let bound = game.bound();
    let mut best: Option<G::E> = None;
    let mut ties = 0u32;
    let mut self_loop = false;
    // Why ⊤: every successor at ⊤; player 1's first edge to a successor at ⊤, and its
    // first edge whose need is ⊤.
    let (mut all_top, mut first_top, mut first_top_need) = (true, NO_EDGE, NO_EDGE);
    let minimise = game.owner(v) == Player::Zero;
    let range = game.arena().succ_range(v);
    let first_edge = range.start;
    for (e, (&u, &w)) in game.arena().succ_targets()[range.clone()]
        .iter()
        .zip(&weights[range])
        .enumerate()
    {
        let w = w.widen();
        if !game.active(u) {
            continue;
        }
        self_loop |= u == v;
        let value = values[u as usize];
        let need = G::E::minus(value, game.weight(w), bound);
        all_top &= value == G::E::TOP;
        if need == G::E::TOP {
            let e = (first_edge + e) as u32;
            first_top_need = first_top_need.min(e);
            if value == G::E::TOP {
                first_top = first_top.min(e);
            }
        }
        match best {
            Some(b) if b == need => ties += 1,
            Some(b) if (need < b) != minimise => {}
            _ => {
                best = Some(need);
                ties = 1;
            }
        }
    }
    let best = best.expect("an active vertex has an active successor");
    let why = match (minimise, all_top) {
        (true, true) => (ToppedBy::TopSuccessors, NO_EDGE),
        (true, false) => (ToppedBy::PastBound, NO_EDGE),
        (false, _) if first_top != NO_EDGE => (ToppedBy::TopSuccessors, first_top),
        (false, _) => (ToppedBy::PastBound, first_top_need),
    };
    (best, (minimise && !self_loop).then_some(ties), why)
}

/// Number of active successors `u` of `v` whose edge condition `f(v) >= f(u) ⊖ w` holds.
#[inline]
fn satisfied_edges<G: LiftGame, W: Weight>(
    game: &G,
    weights: &[W],
    values: &[G::E],
    v: VertexId,
) -> u32 {
    let bound = game.bound();
    let fv = values[v as usize];
    let range = game.arena().succ_range(v);
    game.arena().succ_targets()[range.clone()]
        .iter()
        .zip(&weights[range])
        .filter(|&(&u, &w)| {
            game.active(u) && fv >= G::E::minus(values[u as usize], game.weight(w.widen()), bound)
        })
        .count() as u32
}

/// Runs Algorithm 1 (FIFO worklist) from 0 to the least fixpoint.
pub(crate) fn solve<G: LiftGame>(game: &G, control: &Control) -> Result<Lifted<G::E>, Interrupted> {
    solve_from(
        game,
        vec![G::E::default(); game.arena().vertex_count()],
        control,
    )
}

/// Runs Algorithm 1 from `values`, which must lie below the least fixpoint (pointwise
/// `values <= f*`); lifting from any such point reaches `f*` itself.
pub(crate) fn solve_from<G: LiftGame>(
    game: &G,
    values: Vec<G::E>,
    control: &Control,
) -> Result<Lifted<G::E>, Interrupted> {
    solve_budgeted(game, values, Budget::UNLIMITED, control).map(|(lifted, _)| lifted)
}

/// [`solve_from`] that stops within `budget` (its lifts, or its time, looked at every 4,096
/// lifts): returns the values reached (still below the least fixpoint) and whether the
/// fixpoint was reached (`true`: the worklist emptied).
pub(crate) fn solve_budgeted<G: LiftGame>(
    game: &G,
    values: Vec<G::E>,
    budget: Budget,
    control: &Control,
) -> Result<(Lifted<G::E>, bool), Interrupted> {
    // One dispatch on the weights' storage width: the loops then read them directly.
    match game.arena().weight_width() {
        Width::I16 => solve_typed::<G, i16>(game, values, budget, control),
        Width::I32 => solve_typed::<G, i32>(game, values, budget, control),
        Width::I64 => solve_typed::<G, i64>(game, values, budget, control),
    }
}

/// [`solve_budgeted`] for an arena whose weights are stored as `W`.
fn solve_typed<G: LiftGame, W: Weight>(
    game: &G,
    mut values: Vec<G::E>,
    budget: Budget,
    control: &Control,
) -> Result<(Lifted<G::E>, bool), Interrupted> {
    let arena = game.arena();
    let (succ_weights, pred_weights) = arena
        .typed_weights::<W>()
        .expect("dispatched on the arena's weight width");
    let n = arena.vertex_count();
    let bound = game.bound();
    let mut count = vec![0u32; n];
    let mut queued = vec![false; n];
    let mut worklist = VecDeque::new();
    for v in (0..n as u32).filter(|&v| game.active(v)) {
        let broken = match game.owner(v) {
            Player::Zero => {
                count[v as usize] = satisfied_edges(game, succ_weights, &values, v);
                count[v as usize] == 0
            }
            Player::One => satisfied_edges(game, succ_weights, &values, v) < active_degree(game, v),
        };
        if broken {
            queued[v as usize] = true;
            worklist.push_back(v);
        }
    }
    let mut lifts = 0u64;
    while let Some(v) = worklist.pop_front() {
        if lifts >= budget.lifts || (lifts % 4096 == 0 && lifts > 0 && budget.expired()) {
            worklist.push_front(v);
            control
                .progress()
                .publish(lifts, worklist.len() as u64, lifts);
            return Ok((Lifted { values, lifts }, false));
        }
        queued[v as usize] = false;
        if lifts % 1024 == 0 {
            control.checkpoint()?;
            control
                .progress()
                .publish(lifts, worklist.len() as u64 + 1, lifts);
        }
        lifts += 1;
        let old = values[v as usize];
        let (new, satisfied, why) = lift(game, succ_weights, &values, v);
        if new == G::E::TOP && old != new {
            game.topping(v, why);
        }
        values[v as usize] = new;
        if game.owner(v) == Player::Zero {
            count[v as usize] =
                satisfied.unwrap_or_else(|| satisfied_edges(game, succ_weights, &values, v));
        }
        if new == old {
            continue;
        }
        let range = arena.pred_range(v);
        for (&p, &w) in arena.pred_sources()[range.clone()]
            .iter()
            .zip(&pred_weights[range])
        {
            if !game.active(p) {
                continue;
            }
            let fp = values[p as usize];
            let w = game.weight(w.widen());
            if fp >= G::E::minus(new, w, bound) {
                continue;
            }
            match game.owner(p) {
                Player::Zero => {
                    // A self-loop of `v`: its count was just recomputed with the new value.
                    if p != v && fp >= G::E::minus(old, w, bound) {
                        count[p as usize] -= 1;
                    }
                    if count[p as usize] == 0 && !queued[p as usize] {
                        queued[p as usize] = true;
                        worklist.push_back(p);
                    }
                }
                Player::One => {
                    if !queued[p as usize] {
                        queued[p as usize] = true;
                        worklist.push_back(p);
                    }
                }
            }
        }
    }
    control.progress().publish(lifts, 0, lifts);
    Ok((Lifted { values, lifts }, true))
}

fn active_degree<G: LiftGame>(game: &G, v: VertexId) -> u32 {
    game.arena()
        .successors(v)
        .filter(|&(u, _)| game.active(u))
        .count() as u32
}

/// The game as given: every vertex active, `u64` values.
pub(crate) struct Primal<'a> {
    /// The arena.
    pub arena: &'a Arena,
    /// Its bound `M`.
    pub bound: u64,
    /// Where to record why each vertex was topped, if anywhere.
    pub topping: Option<&'a Topping>,
}

impl LiftGame for Primal<'_> {
    type E = u64;
    fn arena(&self) -> &Arena {
        self.arena
    }
    #[inline(always)]
    fn active(&self, _: VertexId) -> bool {
        true
    }
    #[inline(always)]
    fn owner(&self, v: VertexId) -> Player {
        self.arena.owner(v)
    }
    #[inline(always)]
    fn weight(&self, w: i64) -> i64 {
        w
    }
    fn bound(&self) -> u64 {
        self.bound
    }
    #[inline]
    fn topping(&self, v: VertexId, why: (ToppedBy, u32)) {
        if let Some(topping) = self.topping {
            topping.record(v, why);
        }
    }
}
