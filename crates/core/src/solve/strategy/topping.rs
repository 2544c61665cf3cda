//! Why lifting put each vertex at ⊤: a record the lifting engines keep as they go (one byte
//! and one edge per vertex, written once, by the lift that tops the vertex), from which
//! [`super::player1`] takes player 1's strategy on `W1` without building it.
//!
//! When a lift raises `v` to ⊤, it classifies from `v`'s successors as they are before ⊤ is
//! published (the parallel engines read them again for it; the sequential worklist takes
//! them from the lift's own reads, as no value changes in between):
//! - [`ToppedBy::TopSuccessors`]: player 1 has a successor already at ⊤ (its first such edge
//!   is recorded), or player 0 has only successors at ⊤;
//! - [`ToppedBy::PastBound`] otherwise: some needed credit went past `M` through a finite
//!   value (player 1's first edge whose need is ⊤ is recorded).
//!
//! **Why this helps.** Order the vertices at ⊤ by the moment their ⊤ was published. A
//! vertex topped by ⊤ successors read them at ⊤ before publishing its own ⊤, so its
//! recorded move (player 1) or each of its edges (player 0) leads to a vertex earlier in
//! that order. A cycle of such vertices would go back in time at every edge, so there is
//! none: every cycle of player 1's recorded strategy inside `W1` passes through a vertex
//! topped past the bound (or one an evaluation topped; see `player1`). Those are few — on a
//! parity game's reduction only vertices with a negative weight can pass the bound — so
//! checking the cycles through them is cheap.
//!
//! A vertex is topped at most once (values only rise and ⊤ is the last one), by one lift:
//! every engine lifts a vertex on one thread at a time (the CPU rounds claim it, the
//! worklist is sequential), so each record is written once, before the ⊤ it explains.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::arena::{Arena, Player, VertexId};
use crate::solve::TOP;
use crate::solve::chunked;
use crate::solve::threads::Threads;

/// No edge: a vertex without a recorded (or seed) move.
pub const NO_EDGE: u32 = u32::MAX;

/// How a vertex reached ⊤ (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ToppedBy {
    /// Not by a lift that kept a record (still finite, or topped by an evaluation).
    Other = 0,
    /// Successors already at ⊤: player 1's recorded one, or all of player 0's.
    TopSuccessors = 1,
    /// A finite successor's need went past the bound.
    PastBound = 2,
}

impl ToppedBy {
    fn from_byte(byte: u8) -> ToppedBy {
        match byte {
            1 => ToppedBy::TopSuccessors,
            2 => ToppedBy::PastBound,
            _ => ToppedBy::Other,
        }
    }
}

/// The record of one solve: for each vertex, how lifting topped it and (player 1) the edge
/// it recorded. Shared by the lifting threads: each vertex's entry is written by the one
/// lift that tops it. Its memory may be taken only when the first entry is written
/// ([`Topping::deferred`]): until then every vertex reads "no cause, no edge".
#[derive(Debug, Default)]
pub struct Topping {
    /// Tells records apart (an engine that keeps its own copy clears it for a new one).
    id: u64,
    /// Vertices covered.
    n: usize,
    entries: OnceLock<Entries>,
}

/// A record's memory: a byte and an edge per vertex.
#[derive(Debug)]
struct Entries {
    cause: Vec<AtomicU8>,
    /// The recorded edge, bit-inverted (so that zeroed memory reads as [`NO_EDGE`]).
    edge: Vec<AtomicU32>,
}

impl Entries {
    /// Zeroed memory, so that where the allocator hands out fresh pages those no lift
    /// writes are never touched.
    fn zeroed(n: usize) -> Entries {
        Entries {
            cause: bytemuck::allocation::zeroed_vec(n),
            edge: bytemuck::allocation::zeroed_vec(n),
        }
    }

    /// [`Entries::zeroed`] when `threads` are one or `n` is small; else zeros written by all
    /// of them, since glibc clears a heap block it hands out again on the calling thread
    /// (1.3 ms for a 10^7-edge game's 12.5 MB in a warm GPU solve,
    /// session 16's device logs, in git history under notes/gpu).
    fn zeroed_on(n: usize, threads: &Threads) -> Entries {
        if !threads.parallel(n) {
            return Entries::zeroed(n);
        }
        let (cause, edge) = threads.install(|| {
            chunked::join(
                || chunked::map(n, |_| AtomicU8::new(0)),
                || chunked::map(n, |_| AtomicU32::new(0)),
            )
        });
        Entries { cause, edge }
    }
}

impl Topping {
    /// An empty record for `n` vertices, its memory taken now (zeroed by the allocator).
    pub fn new(n: usize) -> Topping {
        let topping = Topping::deferred(n);
        let _ = topping.entries.set(Entries::zeroed(n));
        topping
    }

    /// [`Topping::new`], its zeros written by `threads` where they are several and `n` is
    /// large: for engines that record as they lift.
    pub fn new_on(n: usize, threads: &Threads) -> Topping {
        let topping = Topping::deferred(n);
        topping.prepare(threads);
        topping
    }

    /// An empty record for `n` vertices whose memory is taken by [`Topping::prepare`] or
    /// the first [`Topping::record`]: for an engine that fills it rarely (the GPU copies
    /// its own record in only where lifting topped much of the game), so that a solve that
    /// never does pays nothing for it.
    pub fn deferred(n: usize) -> Topping {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Topping {
            id: NEXT_ID.fetch_add(1, Relaxed),
            n,
            entries: OnceLock::new(),
        }
    }

    /// Takes the record's memory now if it has none, its zeros written by `threads`.
    pub fn prepare(&self, threads: &Threads) {
        self.entries
            .get_or_init(|| Entries::zeroed_on(self.n, threads));
    }

    /// This record's identity, different for every record made in a process (a solve's
    /// lifting phases all get the same record).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Vertices covered.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the record covers no vertex.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Records how `v` was topped ([`classify`]'s answer).
    #[inline]
    pub fn record(&self, v: VertexId, (cause, edge): (ToppedBy, u32)) {
        let entries = self.entries.get_or_init(|| Entries::zeroed(self.n));
        entries.edge[v as usize].store(!edge, Relaxed);
        entries.cause[v as usize].store(cause as u8, Relaxed);
    }

    /// How `v` was topped.
    #[inline]
    pub fn cause(&self, v: VertexId) -> ToppedBy {
        self.entries.get().map_or(ToppedBy::Other, |entries| {
            ToppedBy::from_byte(entries.cause[v as usize].load(Relaxed))
        })
    }

    /// The edge recorded at `v` ([`NO_EDGE`] for player 0 or none).
    #[inline]
    pub fn edge(&self, v: VertexId) -> u32 {
        self.entries
            .get()
            .map_or(NO_EDGE, |entries| !entries.edge[v as usize].load(Relaxed))
    }
}

/// How a lift that raises a vertex owned by `owner` to ⊤ topped it, from its successor
/// edges `edges` (arena edge indices) read now: `is_top(e)` whether the edge's target is at
/// ⊤, `needs_top(e)` whether its need `f(u) ⊖ w` is ⊤ (past the bound). Values only rise,
/// so an edge that lifted the vertex to ⊤ still needs ⊤.
#[inline]
pub fn classify(
    owner: Player,
    edges: std::ops::Range<usize>,
    is_top: impl Fn(usize) -> bool,
    needs_top: impl Fn(usize) -> bool,
) -> (ToppedBy, u32) {
    match owner {
        Player::Zero => {
            let cause = if edges.clone().all(is_top) {
                ToppedBy::TopSuccessors
            } else {
                ToppedBy::PastBound
            };
            (cause, NO_EDGE)
        }
        Player::One => {
            if let Some(e) = edges.clone().find(|&e| is_top(e)) {
                (ToppedBy::TopSuccessors, e as u32)
            } else {
                let e = edges.clone().find(|&e| needs_top(e));
                (ToppedBy::PastBound, e.map_or(NO_EDGE, |e| e as u32))
            }
        }
    }
}

/// Checks the record's invariant (the module doc), panicking with `context` where it
/// fails (for tests: this crate's and the GPU crate's): a vertex at ⊤ has a cause exactly
/// when lifting topped it; a player-1 vertex has an edge, into ⊤ if topped by ⊤
/// successors; and the graph of the recorded moves (player 0: every edge) among the
/// vertices topped by ⊤ successors has no cycle (checked by peeling sinks).
pub fn assert_record_holds(arena: &Arena, values: &[u64], topping: &Topping, context: &str) {
    let n = arena.vertex_count() as VertexId;
    let targets = arena.succ_targets();
    let by_top = |v: VertexId| topping.cause(v) == ToppedBy::TopSuccessors;
    let mut out: Vec<Vec<VertexId>> = vec![Vec::new(); n as usize];
    for v in 0..n {
        let top = values[v as usize] == TOP;
        assert_eq!(
            top,
            topping.cause(v) != ToppedBy::Other,
            "{context}: vertex {v}"
        );
        if !top {
            continue;
        }
        let e = topping.edge(v);
        match arena.owner(v) {
            Player::Zero => assert_eq!(e, NO_EDGE, "{context}: vertex {v}"),
            Player::One => {
                assert!(
                    arena.succ_range(v).contains(&(e as usize)),
                    "{context}: {v}"
                );
                if by_top(v) {
                    assert_eq!(values[targets[e as usize] as usize], TOP, "{context}");
                }
            }
        }
        if by_top(v) {
            let edges = match arena.owner(v) {
                Player::Zero => arena.succ_range(v),
                Player::One => e as usize..e as usize + 1,
            };
            out[v as usize] = targets[edges]
                .iter()
                .copied()
                .filter(|&u| by_top(u))
                .collect();
        }
    }
    // Peel vertices whose remaining successors are all peeled; a cycle never peels.
    let mut left: Vec<usize> = out.iter().map(Vec::len).collect();
    let mut into: Vec<Vec<VertexId>> = vec![Vec::new(); n as usize];
    for v in 0..n {
        for &u in &out[v as usize] {
            into[u as usize].push(v);
        }
    }
    let mut sinks: Vec<VertexId> = (0..n).filter(|&v| left[v as usize] == 0).collect();
    let mut peeled = 0;
    while let Some(u) = sinks.pop() {
        peeled += 1;
        for &v in &into[u as usize] {
            left[v as usize] -= 1;
            if left[v as usize] == 0 {
                sinks.push(v);
            }
        }
    }
    assert_eq!(
        peeled, n as usize,
        "{context}: a cycle among vertices topped by ⊤"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new record reads "no cause, no edge" everywhere, whether its zeros are the
    /// allocator's or written by a pool's threads, now or deferred (taken by `prepare` or
    /// by the first entry written), and records what it is given.
    #[test]
    fn new_records_are_empty_however_their_zeros_are_made() {
        let n = 70_000;
        let made: [fn(usize, &Threads) -> Topping; 4] = [
            |n, threads| Topping::new_on(n, threads),
            |n, _| Topping::new(n),
            |n, _| Topping::deferred(n),
            |n, threads| {
                let topping = Topping::deferred(n);
                topping.prepare(threads);
                topping
            },
        ];
        for (threads, make) in [Threads::one(), Threads::new(3).with_parallel_from(0)]
            .into_iter()
            .flat_map(|threads| made.map(|make| (threads.clone(), make)))
        {
            drop(vec![u32::MAX; n]);
            let topping = make(n, &threads);
            assert_eq!(topping.len(), n);
            assert!((0..n as VertexId).all(|v| topping.cause(v) == ToppedBy::Other));
            assert!((0..n as VertexId).all(|v| topping.edge(v) == NO_EDGE));
            topping.record(5, (ToppedBy::PastBound, 9));
            assert_eq!(
                (topping.cause(5), topping.edge(5)),
                (ToppedBy::PastBound, 9)
            );
            assert_eq!(
                (topping.cause(6), topping.edge(6)),
                (ToppedBy::Other, NO_EDGE)
            );
        }
    }
}
