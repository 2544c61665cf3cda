//! The shared state of one CPU solve and the per-vertex kernels every round uses: values
//! (atomic cells of the width `values` picks), player-0 satisfied-edge counters, per-vertex
//! frontier flags, and the ring holding the two frontiers (`queue`). Generic over the
//! weights' storage width `W` and the values' `V`: `lift_from` dispatches once per solve.
//!
//! All atomics are accessed with `Relaxed` ordering: rayon's joins between phases give the
//! happens-before edges that matter, and inside a phase every vertex's value has one writer.
//! On x86 a relaxed load or store is a plain move, so the sequential rounds pay nothing for
//! sharing their arrays with the parallel ones. This module owns no scheduling: see
//! `frontier` (rounds) and `sweep` (Algorithm 2).

use std::sync::atomic::{AtomicU8, AtomicU32, Ordering::Relaxed};

use super::queue::Queue;
use super::values::Value;
use crate::arena::{Arena, Player, VertexId, Weight};
use crate::solve::chunked;
use crate::solve::energy::{TOP, minus};
use crate::solve::strategy::topping::{Topping, classify};

/// Vertices one thread found for the next frontier, flushed into it in cache-sized batches
/// (and when dropped, i.e. when the thread's share of a parallel loop ends).
pub(super) struct Collector<'a> {
    target: &'a Queue,
    batch: Vec<VertexId>,
}

/// Batch size: 16 KiB of ids stays in L1/L2 while it fills.
const BATCH: usize = 4096;

impl<'a> Collector<'a> {
    /// An empty batch for `target`'s next frontier.
    pub fn new(target: &'a Queue) -> Collector<'a> {
        Collector {
            target,
            batch: Vec::with_capacity(BATCH),
        }
    }

    /// Adds `v`; flushes a full batch.
    #[inline]
    pub fn push(&mut self, v: VertexId) {
        self.batch.push(v);
        if self.batch.len() == BATCH {
            self.target.append(&self.batch);
            self.batch.clear();
        }
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        self.target.append(&self.batch);
    }
}

/// The flag bit that marks "in the frontier lifted in `round`" (the other bit marks "in the
/// frontier being built"): the roles swap every round, so no clearing pass is needed for
/// the frontier being built.
#[inline]
pub(super) fn current_bit(round: u64) -> u8 {
    1 << (round & 1)
}

/// The flag bit of the frontier built during `round`.
#[inline]
pub(super) fn next_bit(round: u64) -> u8 {
    current_bit(round + 1)
}

/// Everything one solve lifts: the arena's arrays plus the backend's per-vertex arrays.
pub(super) struct LiftState<'a, W: Weight, V: Value> {
    pub arena: &'a Arena,
    pub bound: u64,
    /// The arena's successor weights at their storage width.
    succ_weights: &'a [W],
    /// The arena's predecessor weights at their storage width.
    pred_weights: &'a [W],
    /// The current progress measure (only ever increases; always `<= f*`).
    values: Box<[V::Cell]>,
    /// Player-0 vertices: successors whose edge condition held at the last recount, adjusted
    /// by every later raise of a successor. Exact at round boundaries.
    pub counts: Box<[AtomicU32]>,
    /// Bit [`current_bit`]: in the frontier being lifted (and not yet lifted, in sequential
    /// rounds); bit [`next_bit`]: already in the frontier being built.
    pub flags: Box<[AtomicU8]>,
    /// The frontier lifted this round, followed by the one built this round.
    pub queue: Queue,
    /// Where each lift that tops a vertex records why, if anywhere.
    topping: Option<&'a Topping>,
}

impl<'a, W: Weight, V: Value> LiftState<'a, W, V> {
    /// State for lifting `arena` from `values` (length `n`, pointwise `<= f*`). `arena`'s
    /// weights are stored as `W`, and every value fits `V`.
    /// With a `pool`, the per-vertex arrays are filled on its threads.
    pub fn new(
        arena: &'a Arena,
        bound: u64,
        values: Vec<u64>,
        pool: Option<&rayon::ThreadPool>,
        topping: Option<&'a Topping>,
    ) -> LiftState<'a, W, V> {
        let n = arena.vertex_count();
        assert_eq!(values.len(), n, "one starting value per vertex");
        let (succ_weights, pred_weights) = arena
            .typed_weights::<W>()
            .expect("lift_from dispatches on the arena's weight width");
        LiftState {
            arena,
            bound,
            succ_weights,
            pred_weights,
            values: match pool {
                Some(pool) => crate::solve::threads::install_erased(pool, || {
                    chunked::map(n, |v| V::cell(values[v])).into()
                }),
                None => values.into_iter().map(V::cell).collect(),
            },
            counts: match pool {
                Some(pool) => crate::solve::threads::install_erased(pool, || {
                    chunked::map(n, |_| AtomicU32::new(0)).into()
                }),
                None => (0..n).map(|_| AtomicU32::new(0)).collect(),
            },
            flags: match pool {
                Some(pool) => crate::solve::threads::install_erased(pool, || {
                    chunked::map(n, |_| AtomicU8::new(0)).into()
                }),
                None => (0..n).map(|_| AtomicU8::new(0)).collect(),
            },
            queue: Queue::new(n),
            topping,
        }
    }

    /// The final values (converted on `pool`'s threads, if given).
    pub fn into_values(self, pool: Option<&rayon::ThreadPool>) -> Vec<u64> {
        let values = self.values.into_vec();
        match pool {
            Some(pool) => crate::solve::threads::install_erased(pool, || {
                chunked::map(values.len(), |v| V::load(&values[v]))
            }),
            None => values.into_iter().map(V::into_inner).collect(),
        }
    }

    /// Bytes of the per-vertex arrays and frontiers (the arena not included).
    pub fn heap_bytes(&self) -> usize {
        let n = self.values.len();
        n * (V::BYTES + 4 + 1) + self.queue.heap_bytes()
    }

    /// Ends a round: the built frontier becomes the one to lift.
    pub fn advance(&mut self) {
        self.queue.advance();
    }

    /// The arrays lifts read and write, as a `Copy` value of plain slices. Rounds take it
    /// once: `LiftState` holds the queue's interior-mutable fields, so the compiler cannot
    /// keep its base pointers in registers across the atomic stores of a lift, while a
    /// `Lifter`'s slices are locals.
    #[inline]
    pub fn lifter(&self) -> Lifter<'_, W, V> {
        Lifter {
            values: &self.values,
            owners: self.arena.owners(),
            succ_offsets: self.arena.succ_offsets(),
            succ_targets: self.arena.succ_targets(),
            succ_weights: self.succ_weights,
            pred_offsets: self.arena.pred_offsets(),
            pred_sources: self.arena.pred_sources(),
            pred_weights: self.pred_weights,
            counts: &self.counts,
            flags: &self.flags,
            bound: self.bound,
            topping: self.topping,
        }
    }
}

/// The per-vertex kernels over one solve's arrays (see [`LiftState::lifter`]).
pub(super) struct Lifter<'s, W: Weight, V: Value> {
    values: &'s [V::Cell],
    owners: &'s [Player],
    succ_offsets: &'s [u32],
    succ_targets: &'s [VertexId],
    succ_weights: &'s [W],
    pred_offsets: &'s [u32],
    pred_sources: &'s [VertexId],
    pred_weights: &'s [W],
    /// See [`LiftState::counts`].
    counts: &'s [AtomicU32],
    /// See [`LiftState::flags`].
    flags: &'s [AtomicU8],
    bound: u64,
    /// See [`LiftState::topping`].
    topping: Option<&'s Topping>,
}

impl<W: Weight, V: Value> Clone for Lifter<'_, W, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W: Weight, V: Value> Copy for Lifter<'_, W, V> {}

impl<'s, W: Weight, V: Value> Lifter<'s, W, V> {
    /// `v`'s player-0 counter (see [`LiftState::counts`]).
    #[inline(always)]
    pub fn count(&self, v: VertexId) -> &'s AtomicU32 {
        debug_assert!((v as usize) < self.counts.len());
        // SAFETY: as in `value`: ids from the arena are `< n`, and `counts` has `n` entries.
        unsafe { self.counts.get_unchecked(v as usize) }
    }

    /// `v`'s frontier flags (see [`LiftState::flags`]).
    #[inline(always)]
    pub fn flag(&self, v: VertexId) -> &'s AtomicU8 {
        debug_assert!((v as usize) < self.flags.len());
        // SAFETY: as in `value`: ids from the arena are `< n`, and `flags` has `n` entries.
        unsafe { self.flags.get_unchecked(v as usize) }
    }

    /// `v`'s successor edges (indices into the successor arrays).
    #[inline(always)]
    fn succ_range(&self, v: VertexId) -> std::ops::Range<usize> {
        self.succ_offsets[v as usize] as usize..self.succ_offsets[v as usize + 1] as usize
    }

    /// `v`'s predecessor edges (indices into the predecessor arrays).
    #[inline(always)]
    fn pred_range(&self, v: VertexId) -> std::ops::Range<usize> {
        self.pred_offsets[v as usize] as usize..self.pred_offsets[v as usize + 1] as usize
    }

    #[inline(always)]
    pub fn value(&self, v: VertexId) -> u64 {
        debug_assert!((v as usize) < self.values.len());
        // SAFETY: every id this backend reads comes from the arena (frontier entries,
        // successor targets, predecessor sources), and the arena guarantees ids `< n`
        // (module docs of `arena`); `values` has exactly `n` entries (`LiftState::new`).
        V::load(unsafe { self.values.get_unchecked(v as usize) })
    }

    /// `f(u) ⊖ w`: what an edge of weight `w` into `u` needs.
    #[inline(always)]
    fn need(&self, u: VertexId, w: i64) -> u64 {
        debug_assert!((u as usize) < self.values.len());
        // SAFETY: as in `value`.
        V::minus(
            unsafe { self.values.get_unchecked(u as usize) },
            w,
            self.bound,
        )
    }

    /// Publishes `v`'s new value (`<= M` or ⊤).
    #[inline(always)]
    pub fn set_value(&self, v: VertexId, x: u64) {
        V::store(&self.values[v as usize], x);
    }

    #[inline(always)]
    pub fn owner(&self, v: VertexId) -> Player {
        debug_assert!((v as usize) < self.owners.len());
        // SAFETY: as in `value`: ids from the arena are `< n`, and `owners()` has `n` entries.
        *unsafe { self.owners.get_unchecked(v as usize) }
    }

    /// Player 0's lift: the least `f(u) ⊖ w` over successors, and how many successors reach
    /// it (the satisfied edges once `f(v)` takes that value).
    #[inline(always)]
    pub fn lift_min(&self, v: VertexId) -> (u64, u32) {
        self.lift_min_over(self.succ_range(v))
    }

    /// [`Self::lift_min`] over the successor edges `range`.
    #[inline(always)]
    fn lift_min_over(&self, range: std::ops::Range<usize>) -> (u64, u32) {
        let targets = &self.succ_targets[range.clone()];
        let weights = &self.succ_weights[range];
        let (mut best, mut ties) = (u64::MAX, 0u32);
        for (&u, &w) in targets.iter().zip(weights) {
            let need = self.need(u, w.widen());
            if need < best {
                best = need;
                ties = 1;
            } else if need == best {
                ties += 1;
            }
        }
        (best, ties)
    }

    /// Player 1's lift: the largest `f(u) ⊖ w` over successors.
    #[inline(always)]
    pub fn lift_max(&self, v: VertexId) -> u64 {
        self.lift_max_over(self.succ_range(v))
    }

    /// [`Self::lift_max`] over the successor edges `range`.
    #[inline(always)]
    fn lift_max_over(&self, range: std::ops::Range<usize>) -> u64 {
        let targets = &self.succ_targets[range.clone()];
        let weights = &self.succ_weights[range];
        let mut best = 0u64;
        for (&u, &w) in targets.iter().zip(weights) {
            best = best.max(self.need(u, w.widen()));
        }
        best
    }

    /// After `v` rose from `old` to `new`: calls `broke(p, owner)` for each predecessor `p`
    /// whose edge into `v` no longer holds and must be acted on — a player-1 predecessor
    /// whose edge is now unsatisfied (it is broken), a player-0 predecessor whose edge held
    /// before and not now (its satisfied-edge count drops by one). Returns the predecessors
    /// visited.
    #[inline(always)]
    pub fn for_broken_predecessors(
        &self,
        v: VertexId,
        old: u64,
        new: u64,
        mut broke: impl FnMut(VertexId, Player),
    ) -> usize {
        let range = self.pred_range(v);
        let visited = range.len();
        for (&p, &w) in self.pred_sources[range.clone()]
            .iter()
            .zip(&self.pred_weights[range])
        {
            let w = w.widen();
            let fp = self.value(p);
            if fp >= minus(new, w, self.bound) {
                continue;
            }
            match self.owner(p) {
                Player::Zero if fp < minus(old, w, self.bound) => {}
                owner => broke(p, owner),
            }
        }
        visited
    }

    /// Successors `u` of `v` whose edge condition `value >= f(u) ⊖ w` holds.
    pub fn satisfied_edges(&self, v: VertexId, value: u64) -> u32 {
        let range = self.succ_range(v);
        let targets = &self.succ_targets[range.clone()];
        let weights = &self.succ_weights[range];
        targets
            .iter()
            .zip(weights)
            .filter(|&(&u, &w)| value >= self.need(u, w.widen()))
            .count() as u32
    }

    /// Whether `v`'s progress-measure condition is broken (lifting would raise it), and for
    /// player 0 its satisfied-edge count.
    pub fn broken(&self, v: VertexId) -> (bool, u32) {
        let value = self.value(v);
        match self.owner(v) {
            Player::Zero => {
                let satisfied = self.satisfied_edges(v, value);
                (satisfied == 0, satisfied)
            }
            Player::One => (self.lift_max(v) > value, 0),
        }
    }

    /// Lifts `v` against the current values: returns its new value (never below the old
    /// one) and, for player 0, stores its satisfied-edge count relative to the values read.
    #[inline]
    pub fn lift(&self, v: VertexId, old: u64) -> u64 {
        self.lift_scanning(v, old).0
    }

    /// [`Self::lift`], also returning how many successors it read (the work it cost).
    #[inline(always)]
    pub fn lift_scanning(&self, v: VertexId, old: u64) -> (u64, usize) {
        let range = self.succ_range(v);
        let scanned = range.len();
        let new = match self.owner(v) {
            Player::Zero => {
                let (least, ties) = self.lift_min_over(range);
                if least > old {
                    self.count(v).store(ties, Relaxed);
                    least
                } else {
                    // Not broken after all (only possible for a vertex queued by a caller's
                    // start vector): keep the value, recount against it.
                    self.count(v).store(self.satisfied_edges(v, old), Relaxed);
                    old
                }
            }
            Player::One => self.lift_max_over(range).max(old),
        };
        if new == TOP && old != TOP {
            self.record_top(v);
        }
        (new, scanned)
    }

    /// Records why `v`, about to be published at ⊤, got there (reading its successors
    /// before the ⊤ is published: `strategy::topping`'s order argument needs that).
    #[cold]
    fn record_top(&self, v: VertexId) {
        if let Some(topping) = self.topping {
            let targets = self.succ_targets;
            let is_top = |e: usize| self.value(targets[e]) == TOP;
            let needs_top = |e: usize| self.need(targets[e], self.succ_weights[e].widen()) == TOP;
            topping.record(
                v,
                classify(self.owner(v), self.succ_range(v), is_top, needs_top),
            );
            // The reads above before the ⊤ the caller publishes (no load-buffering).
            std::sync::atomic::fence(std::sync::atomic::Ordering::AcqRel);
        }
    }
}
