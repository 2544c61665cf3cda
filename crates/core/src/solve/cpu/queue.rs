//! The frontiers of a frontier run, in one ring of `n` slots: the frontier being lifted
//! ("current") is followed by the one being built ("next"). One ring is enough because a
//! vertex is queued at most once per frontier (its flag bits, see `state`):
//! - in a **sequential** round a vertex still waiting in the current frontier is not queued
//!   again, so the waiting part of current plus next never holds more than `n` distinct
//!   vertices, and next fills the slots current has already given up;
//! - in a **parallel** round current is read twice (both phases) while next is built, and a
//!   vertex may be in both. Next fills the free part of the ring; what does not fit goes to
//!   an overflow list (only rounds whose two frontiers together exceed `n` vertices), moved
//!   into the ring once current is dead ([`Queue::advance`]).
//!
//! Slots are atomics so that threads fill reserved ranges without `unsafe`; a relaxed load
//! or store is a plain move.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};

use crate::arena::VertexId;

/// Frontiers up to this many vertices are moved to the ring's start ([`Queue::advance`]).
const RESTART_BELOW: usize = 4096;

/// Current and next frontier in one ring. See the module docs.
pub(super) struct Queue {
    slots: Box<[AtomicU32]>,
    /// Ring index of current's first vertex.
    head: usize,
    /// Number of vertices in current.
    current: usize,
    /// Ring index of next's first vertex (`head + current`, wrapped).
    tail: usize,
    /// Vertices reserved for next (ring part plus overflow).
    next: AtomicUsize,
    /// Next's vertices that did not fit the ring during a parallel round.
    overflow: Mutex<Vec<VertexId>>,
    /// The largest overflow capacity used so far (for the working set).
    overflow_bytes: usize,
}

impl Queue {
    /// An empty queue for a game of `n` vertices.
    pub fn new(n: usize) -> Queue {
        Queue {
            slots: (0..n).map(|_| AtomicU32::new(0)).collect(),
            head: 0,
            current: 0,
            tail: 0,
            next: AtomicUsize::new(0),
            overflow: Mutex::new(Vec::new()),
            overflow_bytes: 0,
        }
    }

    /// `i` (`< 2n`) reduced into the ring.
    #[inline(always)]
    fn wrap(&self, i: usize) -> usize {
        if i >= self.slots.len() {
            i - self.slots.len()
        } else {
            i
        }
    }

    /// Number of vertices in current.
    #[inline]
    pub fn current_len(&self) -> usize {
        self.current
    }

    /// Current's `i`-th vertex (`i < current_len()`).
    #[inline(always)]
    pub fn current(&self, i: usize) -> VertexId {
        debug_assert!(i < self.current);
        self.slots[self.wrap(self.head + i)].load(Relaxed)
    }

    /// The ring and current's place in it (ring index of its first vertex, length), for a
    /// run of sequential rounds that uses the ring as one FIFO worklist: next is empty.
    pub fn ring(&self) -> (&[AtomicU32], usize, usize) {
        debug_assert_eq!(self.next.load(Relaxed), 0, "called between rounds");
        (&self.slots, self.head, self.current)
    }

    /// Ends a run of sequential rounds on the ring of [`Queue::ring`]: current is the `len`
    /// vertices from ring index `head` on, next is empty.
    pub fn set_current(&mut self, head: usize, len: usize) {
        debug_assert!(head < self.slots.len().max(1) && len <= self.slots.len());
        self.head = head;
        self.current = len;
        self.tail = self.wrap(head + len);
        *self.next.get_mut() = 0;
    }

    /// Appends `batch` to next (any thread, parallel rounds): reserves its slots with one
    /// `fetch_add`; the part past the ring's free slots goes to the overflow list.
    pub fn append(&self, batch: &[VertexId]) {
        if batch.is_empty() {
            return;
        }
        let start = self.next.fetch_add(batch.len(), Relaxed);
        let free = self.slots.len() - self.current;
        let fits = free.saturating_sub(start).min(batch.len());
        for (k, &v) in batch[..fits].iter().enumerate() {
            self.slots[self.wrap(self.tail + start + k)].store(v, Relaxed);
        }
        if fits < batch.len() {
            let mut overflow = self
                .overflow
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            overflow.extend_from_slice(&batch[fits..]);
        }
    }

    /// Ends a round: next becomes current, and next is empty.
    pub fn advance(&mut self) {
        let n = self.slots.len();
        let reserved = *self.next.get_mut();
        let in_ring = reserved.min(n - self.current);
        self.head = self.tail;
        let overflow = self.overflow.get_mut().unwrap_or_else(|e| e.into_inner());
        // Current is dead now, so next's overflow fits behind its ring part: each vertex is
        // in next at most once, so `reserved <= n`.
        for (k, &v) in overflow.iter().enumerate() {
            self.slots[(self.head + in_ring + k) % n].store(v, Relaxed);
        }
        self.overflow_bytes = self.overflow_bytes.max(overflow.capacity() * 4);
        overflow.clear();
        self.current = reserved;
        // A small frontier that does not wrap moves back to the ring's start, so that runs
        // of small rounds keep reusing the same (cached) slots instead of walking the ring.
        // A forward copy is safe: the destination starts at or before the source.
        if self.head + reserved <= n && reserved <= RESTART_BELOW {
            for k in 0..reserved {
                let v = self.slots[self.head + k].load(Relaxed);
                self.slots[k].store(v, Relaxed);
            }
            self.head = 0;
        }
        // `wrap`, not `%`: a division per round is measurable on games of 10^4 tiny rounds.
        self.tail = self.wrap(self.head + reserved);
        *self.next.get_mut() = 0;
    }

    /// Bytes held: the ring and the largest overflow list.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 4 + self.overflow_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current(q: &Queue) -> Vec<u32> {
        (0..q.current_len()).map(|i| q.current(i)).collect()
    }

    #[test]
    fn sequential_runs_wrap_around_the_ring() {
        let mut q = Queue::new(4);
        q.append(&[0, 1, 2]);
        q.advance();
        // A sequential run lifts 0, 1 and 2 and queues 3, 0, 1 behind them, wrapping.
        let (slots, head, len) = q.ring();
        assert_eq!((head, len), (0, 3));
        for (k, v) in [3, 0, 1].into_iter().enumerate() {
            slots[(head + len + k) % 4].store(v, Relaxed);
        }
        q.set_current(3, 3);
        assert_eq!(current(&q), [3, 0, 1]);
        // Parallel rounds go on from there.
        q.append(&[2]);
        q.advance();
        assert_eq!(current(&q), [2]);
    }

    #[test]
    fn parallel_rounds_overflow_and_recover() {
        let mut q = Queue::new(4);
        q.append(&[0, 1, 2]);
        q.advance();
        // Next may hold every vertex while current is still read: 1 fits, 3 overflow.
        q.append(&[3, 2]);
        q.append(&[1, 0]);
        q.advance();
        assert_eq!(current(&q), [3, 2, 1, 0]);
        q.append(&[2]);
        q.advance();
        assert_eq!(current(&q), [2]);
        assert!(q.heap_bytes() > 16);
    }
}
