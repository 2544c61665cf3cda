//! Host memory for the arrays a solve's tail fills, mapped on an idle pool thread while the
//! device lifts: [`Prefaulted::start`] allocates room for `n` values (the download of
//! player 1's recorded moves, a word per vertex, goes there) and one more block of the same
//! size that it frees at once (the allocator, which keeps freed pages, hands it to the next
//! array of that size: player 0's strategy), touching one byte of each page of both.
//!
//! Why: a server's first job, and every job after its freed memory went back to the kernel
//! (`egsolve_alloc::release_free_memory`), finds no freed block for those arrays, and the
//! passes that fill them faulted their pages in one by one. On Hesselink's reduction (1.08 M
//! vertices; H200 host, session 67, fresh servers, default options, 7 first jobs each way)
//! about 1,150 page faults: the moves' download took 0.56–1.02 ms against 0.21–0.29 in jobs
//! that reused a block, and the GPU side's solve 6.20 ms (median) against 5.39 with both
//! blocks mapped ahead, the same as the warm jobs after it (5.27–5.41). Mapping the moves'
//! room alone only moved the faults into player 0's strategy (0.63 ms against 0.33). The
//! lifting phase before the tail takes over 2 ms, during which the pool's threads wait.

use std::sync::mpsc::{Receiver, sync_channel};

use egsolve_core::solve::Threads;

/// Bytes between two touched bytes: the smallest page size of the hosts egsolve runs on.
const PAGE: usize = 4096;

/// Arrays of up to this many bytes are mapped ahead: beyond, a solve's own work dwarfs its
/// page faults, and the blocks would hold much memory for the phase's duration.
pub(crate) const MAPPED_AHEAD_UP_TO: usize = 64 << 20;

/// Room for `n` values being mapped on a pool thread (see the module docs).
pub(crate) struct Prefaulted<T> {
    ready: Receiver<Vec<T>>,
}

impl<T: Send + 'static> Prefaulted<T> {
    /// Starts mapping room for `n` values, and one freed block of that size (player 0's
    /// strategy's), on one of `threads`' pool threads; `None` on a solve without a pool (one thread: no
    /// thread would be idle).
    pub(crate) fn start(n: usize, threads: &Threads) -> Option<Prefaulted<T>> {
        let pool = threads.pool()?;
        let (done, ready) = sync_channel(1);
        pool.spawn(move || {
            let room = touched::<T>(n);
            // Allocated while the room is held (else the allocator would hand back the same
            // block), then freed for the next array of this size.
            drop(touched::<T>(n));
            // The receiver may be gone (the solve did not ask): the room is then freed.
            let _ = done.send(room);
        });
        Some(Prefaulted { ready })
    }

    /// The room (empty, with capacity for the `n` values), if the pool thread has mapped
    /// it by now; else `None`, and the caller allocates as before (never waits: the pool
    /// thread may not have started, its pool being busy with the caller).
    pub(crate) fn take(self) -> Option<Vec<T>> {
        self.ready.try_recv().ok()
    }
}

/// An empty vector with room for `n` values whose pages are mapped: one byte of each page
/// written.
fn touched<T>(n: usize) -> Vec<T> {
    let mut room: Vec<T> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    let base = room.as_mut_ptr().cast::<u8>();
    for offset in (0..bytes).step_by(PAGE) {
        // SAFETY: `offset` < `bytes` lies inside the allocation of `n` values; a byte
        // written into spare capacity is never read as a `T` (the length stays 0, and the
        // download overwrites every byte before setting it).
        unsafe { base.add(offset).write_volatile(0) };
    }
    room
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The room comes back empty with capacity for every value, from a pool thread; a
    /// solve without a pool gets none.
    #[test]
    fn the_room_is_mapped_on_a_pool_thread() {
        assert!(Prefaulted::<u32>::start(1000, &Threads::one()).is_none());
        let threads = Threads::new(2);
        let n = 3 * PAGE + 5;
        let prefaulted = Prefaulted::<u32>::start(n, &threads).expect("a pool of two");
        let deadline = Instant::now() + Duration::from_secs(10);
        let room = loop {
            // (`take` never waits; the test does.)
            match prefaulted.ready.recv_timeout(Duration::from_millis(10)) {
                Ok(room) => break room,
                Err(_) => assert!(Instant::now() < deadline, "the pool thread never sent it"),
            }
        };
        assert!(room.is_empty());
        assert!(room.capacity() >= n);
        assert!(touched::<u64>(0).is_empty());
    }

    /// `take` answers at once: `None` while the room is not ready.
    #[test]
    fn take_never_waits() {
        let (_done, ready) = sync_channel::<Vec<u32>>(1);
        let start = Instant::now();
        assert!(Prefaulted { ready }.take().is_none());
        assert!(start.elapsed() < Duration::from_secs(1));
    }
}
