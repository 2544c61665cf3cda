//! The threads one solve may use: a rayon pool built once per solve and shared by every
//! phase that runs in parallel (lifting rounds, evaluations, strategies), so no phase pays
//! for a pool of its own and concurrent CPU solves (the service's CPU slots) never share
//! one. GPU solves share the GPU crate's for their host parts (`egsolve_gpu::host_pool_for`:
//! one of every core, one of fewer beside a race).
//!
//! Parallel code asks [`Threads::parallel`] whether a piece of work is worth splitting: with
//! one thread, or below [`PARALLEL_FROM_ITEMS`] items (a fork/join costs microseconds),
//! every algorithm runs its sequential form on the calling thread. Results never depend on
//! the thread count (each parallel algorithm states why).

use std::sync::Arc;

use super::chunked;

/// Work (vertices plus edges touched) below which parallel algorithms run sequentially.
pub const PARALLEL_FROM_ITEMS: usize = 1 << 15;

/// A solve's thread budget and, for more than one thread, its pool. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Threads {
    count: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Work below this runs sequentially ([`PARALLEL_FROM_ITEMS`] unless set).
    parallel_from: usize,
}

impl Threads {
    /// `count` threads (at least one); a pool of that many workers when `count > 1`, or
    /// the calling thread alone if the system refuses to start threads.
    pub fn new(count: usize) -> Threads {
        if count <= 1 {
            return Threads::one();
        }
        match rayon::ThreadPoolBuilder::new()
            .num_threads(count)
            .thread_name(|i| format!("egsolve-cpu-{i}"))
            .build()
        {
            Ok(pool) => Threads {
                count,
                pool: Some(Arc::new(pool)),
                parallel_from: PARALLEL_FROM_ITEMS,
            },
            Err(e) => {
                tracing::warn!("solving on one thread: {e}");
                Threads::one()
            }
        }
    }

    /// The calling thread only.
    pub fn one() -> Threads {
        Threads {
            count: 1,
            pool: None,
            parallel_from: PARALLEL_FROM_ITEMS,
        }
    }

    /// The same threads with work of `items` items or more run in parallel (tests use 0,
    /// so that tiny games take every parallel path).
    pub fn with_parallel_from(mut self, items: usize) -> Threads {
        self.parallel_from = items;
        self
    }

    /// Threads in the budget.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The pool, if there are several threads.
    pub fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool.as_deref()
    }

    /// Whether work of `items` items should run in parallel.
    pub fn parallel(&self, items: usize) -> bool {
        self.pool.is_some() && items >= self.parallel_from
    }

    /// Runs `f` on the pool (so rayon's parallel iterators inside use it), or on the
    /// calling thread with one thread.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => install_erased(pool, f),
            None => f(),
        }
    }

    /// `n` zeros, written by these threads when `n` is worth splitting
    /// ([`filled_in_parallel`]).
    pub fn zeroed<T: Copy + Default + Send + Sync>(&self, n: usize) -> Vec<T> {
        self.filled(n, T::default())
    }

    /// `n` copies of `value`, written by this pool's threads when `n` is large enough.
    pub fn filled<T: Copy + Send + Sync>(&self, n: usize, value: T) -> Vec<T> {
        if self.parallel(n) {
            self.install(|| filled_in_parallel(n, value))
        } else {
            vec![value; n]
        }
    }

    /// Contiguous index ranges of about `chunk` items covering `0..n` (the unit of parallel
    /// loops over vertices: large enough to amortise a task, small enough to balance).
    pub fn chunks(n: usize, chunk: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let chunk = chunk.max(1);
        (0..n.div_ceil(chunk)).map(move |i| i * chunk..((i + 1) * chunk).min(n))
    }
}

/// `n` copies of `value`, written in parallel (on the current rayon pool) into memory taken
/// without clearing. A zeroed `vec!` of a solve's size is a `calloc`, which glibc serves
/// from a heap block it has used before by clearing it on the calling thread, faulting
/// back in any page the heap had returned to the kernel: 10–15 ms for 2.5 million credits
/// in a warm 30 ms GPU solve (session 16's device logs, in git history under notes/gpu). Written here, the pages are
/// touched by every thread at once.
pub fn filled_in_parallel<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    chunked::map(n, |_| value)
}

/// The positions (as vertex ids, in order) of the `items` where `keep` holds, on the current
/// rayon pool. Each task scans a chunk in a plain loop: a parallel `filter` over a range
/// calls its closure once per item through rayon's folders, which the compiler inlines or
/// not depending on how the crate's code is split into codegen units (4.7 ms against 0.35
/// for 1.1 million bytes on one thread, the same source in two builds: session 19).
pub fn positions_where<T: Sync>(items: &[T], keep: impl Fn(&T) -> bool + Sync) -> Vec<u32> {
    chunked::positions(items.len(), |i| keep(&items[i]))
}

/// `words` viewed as atomics, for a parallel pass that updates them in place (no copy into
/// a vector of atomics and back: four passes over `n` words of fresh memory otherwise).
pub fn as_atomic(words: &mut [u32]) -> &[std::sync::atomic::AtomicU32] {
    const _: () = assert!(
        std::mem::align_of::<std::sync::atomic::AtomicU32>() == std::mem::align_of::<u32>()
    );
    // SAFETY: `AtomicU32` has the size and bit validity of `u32` (std documents it) and, as
    // checked above, its alignment here; the exclusive borrow keeps every other access out
    // while the atomics are in use.
    unsafe { &*(words as *mut [u32] as *const [std::sync::atomic::AtomicU32]) }
}

/// `pool.install(f)` through one call that is not generic: rayon's machinery for running a
/// closure on a pool (its cross-thread job, latch and result) is then compiled once, not
/// once per caller's closure type. Each parallel call site's generic copies are most of
/// the core's compile time (BENCHMARKS.md, "Build times"); the cost here is one indirect
/// call per install.
pub fn install_erased<R: Send>(pool: &rayon::ThreadPool, f: impl FnOnce() -> R + Send) -> R {
    let mut f = Some(f);
    let mut out = None;
    run_on(pool, &mut || {
        out = Some((f.take().expect("installed once"))());
    });
    out.expect("the pool ran the closure")
}

/// [`install_erased`]'s one copy of `ThreadPool::install`.
fn run_on(pool: &rayon::ThreadPool, job: &mut (dyn FnMut() + Send)) {
    pool.install(job);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_erased_install_runs_on_the_pool_and_returns_the_value() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let owned = vec![1u64, 2, 3];
        let (sum, on_pool) = install_erased(&pool, move || {
            use rayon::prelude::*;
            let sum: u64 = owned.par_iter().sum();
            (sum, rayon::current_num_threads())
        });
        assert_eq!((sum, on_pool), (6, 2));
        let pool = std::panic::AssertUnwindSafe(&pool);
        let caught = std::panic::catch_unwind(|| install_erased(*pool, || panic!("inside")));
        assert!(caught.is_err(), "a panic inside reaches the caller");
    }

    /// Zeros come back `n` long and all zero, on one thread, below the parallel threshold
    /// and above it, over memory that held other values before.
    #[test]
    fn zeroed_vectors_are_zero_at_every_size_and_thread_count() {
        for threads in [
            Threads::one(),
            Threads::new(3),
            Threads::new(3).with_parallel_from(0),
        ] {
            for n in [0, 1, 1000, PARALLEL_FROM_ITEMS + 7, 3 << 20] {
                drop(vec![u64::MAX; n]);
                let zeros: Vec<u64> = threads.zeroed(n);
                assert_eq!(zeros.len(), n);
                assert!(zeros.iter().all(|&x| x == 0));
            }
        }
        assert_eq!(filled_in_parallel(5, 7u8), vec![7u8; 5]);
    }

    /// Mapped vectors hold `f(i)` at every `i`, across chunk boundaries and at the ends, on
    /// one thread and several, singly and in pairs.
    #[test]
    fn mapped_vectors_hold_every_value() {
        for threads in [Threads::new(1), Threads::new(3)] {
            for n in [0usize, 1, (1 << 14) - 1, 1 << 14, (1 << 14) + 1, 100_003] {
                let f = |i: usize| (i * 7 % 13) as u8;
                let want: Vec<u8> = (0..n).map(f).collect();
                assert_eq!(threads.install(|| chunked::map(n, f)), want, "{n}");
                let g = |i: usize| (i % 3 == 0, i as u32 ^ 5);
                let (a, b) = threads.install(|| chunked::map_pairs(n, g));
                let (want_a, want_b): (Vec<bool>, Vec<u32>) = (0..n).map(g).unzip();
                assert_eq!((a, b), (want_a, want_b), "{n} pairs");
            }
        }
    }

    /// The positions where a predicate holds come back in order, as a sequential filter
    /// finds them, across chunk boundaries and at the ends, on one thread and several.
    #[test]
    fn positions_are_found_in_order() {
        for threads in [Threads::new(1), Threads::new(3)] {
            for n in [0usize, 1, (1 << 14) - 1, 1 << 14, (1 << 14) + 1, 100_003] {
                let items: Vec<u8> = (0..n).map(|i| (i * 7 % 13) as u8).collect();
                let keep = |&x: &u8| x == 0 || x == 12;
                let want: Vec<u32> = (0..n)
                    .filter(|&i| keep(&items[i]))
                    .map(|i| i as u32)
                    .collect();
                let got = threads.install(|| positions_where(&items, keep));
                assert_eq!(got, want, "{n} items");
            }
        }
    }
}
