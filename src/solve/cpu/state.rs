//! The shared state of one CPU solve and the per-vertex kernels every round uses: values as
//! atomics, player-0 satisfied-edge counters, per-vertex frontier flags, and the two
//! frontiers (the one being lifted and the one being built).
//!
//! All atomics are accessed with `Relaxed` ordering: rayon's joins between phases give the
//! happens-before edges that matter, and inside a phase every vertex's value has one writer.
//! On x86 a relaxed load or store is a plain move, so the sequential rounds pay nothing for
//! sharing their arrays with the parallel ones. This module owns no scheduling: see
//! `frontier` (rounds) and `sweep` (Algorithm 2).

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::arena::{Arena, Player, VertexId};
use crate::solve::energy::minus;

/// A set of vertices as a list: `len` valid slots. Slots are atomics so that threads can fill
/// reserved ranges without `unsafe`; a relaxed store is a plain move.
pub(super) struct Frontier {
    slots: Box<[AtomicU32]>,
    len: AtomicUsize,
}

impl Frontier {
    /// An empty frontier with room for `capacity` vertices (each vertex at most once).
    pub fn with_capacity(capacity: usize) -> Frontier {
        Frontier {
            slots: (0..capacity).map(|_| AtomicU32::new(0)).collect(),
            len: AtomicUsize::new(0),
        }
    }

    /// Number of vertices.
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    /// The listed vertices.
    #[inline]
    pub fn vertices(&self) -> &[AtomicU32] {
        &self.slots[..self.len()]
    }

    /// Empties the frontier.
    pub fn clear(&self) {
        self.len.store(0, Relaxed);
    }

    /// Appends `v` from the one thread that fills this frontier (sequential rounds): no
    /// batch, no read-modify-write.
    #[inline]
    pub fn push_single_threaded(&self, v: VertexId) {
        let len = self.len.load(Relaxed);
        self.slots[len].store(v, Relaxed);
        self.len.store(len + 1, Relaxed);
    }

    /// Appends `batch` (any thread): reserves its slots with one `fetch_add`, no lock.
    pub fn append(&self, batch: &[VertexId]) {
        if batch.is_empty() {
            return;
        }
        let start = self.len.fetch_add(batch.len(), Relaxed);
        // Each vertex enters a frontier at most once per round (its flag bit), so the
        // reservation never passes the capacity `n`; slicing panics if that ever broke.
        for (slot, &v) in self.slots[start..start + batch.len()].iter().zip(batch) {
            slot.store(v, Relaxed);
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 4
    }
}

/// Vertices one thread found for the next frontier, flushed into it in cache-sized batches
/// (and when dropped, i.e. when the thread's share of a parallel loop ends).
pub(super) struct Collector<'a> {
    target: &'a Frontier,
    batch: Vec<VertexId>,
}

/// Batch size: 16 KiB of ids stays in L1/L2 while it fills.
const BATCH: usize = 4096;

impl<'a> Collector<'a> {
    /// An empty batch for `target`.
    pub fn new(target: &'a Frontier) -> Collector<'a> {
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
pub(super) struct LiftState<'a> {
    pub arena: &'a Arena,
    pub bound: u64,
    /// The current progress measure (only ever increases; always `<= f*`).
    pub values: Box<[AtomicU64]>,
    /// Player-0 vertices: successors whose edge condition held at the last recount, adjusted
    /// by every later raise of a successor. Exact at round boundaries.
    pub counts: Box<[AtomicU32]>,
    /// Bit [`current_bit`]: in the frontier being lifted (and not yet lifted, in sequential
    /// rounds); bit [`next_bit`]: already in the frontier being built.
    pub flags: Box<[AtomicU8]>,
    /// The frontier lifted this round.
    pub current: Frontier,
    /// The frontier built this round.
    pub next: Frontier,
}

impl<'a> LiftState<'a> {
    /// State for lifting `arena` from `values` (length `n`, pointwise `<= f*`).
    pub fn new(arena: &'a Arena, bound: u64, values: Vec<u64>) -> LiftState<'a> {
        let n = arena.vertex_count();
        assert_eq!(values.len(), n, "one starting value per vertex");
        LiftState {
            arena,
            bound,
            values: values.into_iter().map(AtomicU64::new).collect(),
            counts: (0..n).map(|_| AtomicU32::new(0)).collect(),
            flags: (0..n).map(|_| AtomicU8::new(0)).collect(),
            current: Frontier::with_capacity(n),
            next: Frontier::with_capacity(n),
        }
    }

    /// The final values.
    pub fn into_values(self) -> Vec<u64> {
        self.values
            .into_vec()
            .into_iter()
            .map(AtomicU64::into_inner)
            .collect()
    }

    /// Bytes of the per-vertex arrays and frontiers (the arena not included).
    pub fn heap_bytes(&self) -> usize {
        let n = self.values.len();
        n * (8 + 4 + 1) + self.current.heap_bytes() + self.next.heap_bytes()
    }

    /// Swaps the frontiers after a round: the built one becomes the one to lift.
    pub fn advance(&mut self) {
        std::mem::swap(&mut self.current, &mut self.next);
        self.next.clear();
    }

    #[inline(always)]
    pub fn value(&self, v: VertexId) -> u64 {
        debug_assert!((v as usize) < self.values.len());
        // SAFETY: every id this backend reads comes from the arena (frontier entries,
        // successor targets, predecessor sources), and the arena guarantees ids `< n`
        // (module docs of `arena`); `values` has exactly `n` entries (`LiftState::new`).
        unsafe { self.values.get_unchecked(v as usize) }.load(Relaxed)
    }

    #[inline(always)]
    pub fn owner(&self, v: VertexId) -> Player {
        debug_assert!((v as usize) < self.arena.vertex_count());
        // SAFETY: as in `value`: ids from the arena are `< n`, and `owners()` has `n` entries.
        *unsafe { self.arena.owners().get_unchecked(v as usize) }
    }

    /// Successor and predecessor count of `v` (the work a lift of `v` may cost).
    #[inline]
    pub fn degree(&self, v: VertexId) -> usize {
        self.arena.succ_range(v).len() + self.arena.pred_range(v).len()
    }

    /// Player 0's lift: the least `f(u) ⊖ w` over successors, and how many successors reach
    /// it (the satisfied edges once `f(v)` takes that value).
    #[inline]
    pub fn lift_min(&self, v: VertexId) -> (u64, u32) {
        let range = self.arena.succ_range(v);
        let targets = &self.arena.succ_targets()[range.clone()];
        let weights = &self.arena.succ_weights()[range];
        let (mut best, mut ties) = (u64::MAX, 0u32);
        for (&u, &w) in targets.iter().zip(weights) {
            let need = minus(self.value(u), w, self.bound);
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
    #[inline]
    pub fn lift_max(&self, v: VertexId) -> u64 {
        let range = self.arena.succ_range(v);
        let targets = &self.arena.succ_targets()[range.clone()];
        let weights = &self.arena.succ_weights()[range];
        let mut best = 0u64;
        for (&u, &w) in targets.iter().zip(weights) {
            best = best.max(minus(self.value(u), w, self.bound));
        }
        best
    }

    /// Successors `u` of `v` whose edge condition `value >= f(u) ⊖ w` holds.
    pub fn satisfied_edges(&self, v: VertexId, value: u64) -> u32 {
        self.arena
            .successors(v)
            .filter(|&(u, w)| value >= minus(self.value(u), w, self.bound))
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
        match self.owner(v) {
            Player::Zero => {
                let (least, ties) = self.lift_min(v);
                if least > old {
                    self.counts[v as usize].store(ties, Relaxed);
                    least
                } else {
                    // Not broken after all (only possible for a vertex queued by a caller's
                    // start vector): keep the value, recount against it.
                    self.counts[v as usize].store(self.satisfied_edges(v, old), Relaxed);
                    old
                }
            }
            Player::One => self.lift_max(v).max(old),
        }
    }
}
