//! Parallel loops compiled once: every loop here runs its tasks through [`run_tasks`], one
//! function that is not generic, so rayon's machinery (splitting, stealing, joining, a
//! panic's way back) exists once in the binary instead of once per call site and closure
//! type. Those per-site copies were most of `egsolve-core`'s compile time (BENCHMARKS.md,
//! "Build times": 60 % of its LLVM IR). What stays generic is each caller's plain loop over
//! a chunk of indices, which the compiler inlines as before; the cost is one indirect call
//! per chunk.
//!
//! The loops cover indices `0..n` in contiguous chunks, on the current rayon pool (inside
//! `Threads::install`, or the global pool). Results never depend on the thread count:
//! per-chunk values are combined in index order, and each loop states what it writes.
//! Hot loops whose speed depends on rayon's own adaptive splitting (the lifting rounds) keep
//! their parallel iterators.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Items per chunk at most: large enough that a task's indirect call is nothing beside its
/// work, small enough to balance (2.5 million vertices make 153 tasks).
const MAX_CHUNK: usize = 1 << 14;

/// Tasks per thread at least, where the items allow: stealing evens out uneven chunks.
const TASKS_PER_THREAD: usize = 4;

/// `task(i)` for every `i` in `0..tasks`, in parallel on the current rayon pool: the one
/// copy of rayon's machinery behind every loop of this module.
pub fn run_tasks(tasks: usize, task: &(dyn Fn(usize) + Sync)) {
    use rayon::prelude::*;
    match tasks {
        0 => {}
        1 => task(0),
        _ => (0..tasks).into_par_iter().for_each(task),
    }
}

/// `(a(), b())`, the two possibly in parallel (`rayon::join` through one copy of it).
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    let (mut a, mut b) = (Some(a), Some(b));
    let (mut out_a, mut out_b) = (None, None);
    join_erased(
        &mut || out_a = Some((a.take().expect("run once"))()),
        &mut || out_b = Some((b.take().expect("run once"))()),
    );
    (
        out_a.expect("the join ran a"),
        out_b.expect("the join ran b"),
    )
}

/// [`join`]'s one copy of `rayon::join`.
fn join_erased(a: &mut (dyn FnMut() + Send), b: &mut (dyn FnMut() + Send)) {
    rayon::join(a, b);
}

/// The chunk length for `n` items on the current pool: [`TASKS_PER_THREAD`] chunks per
/// thread, at most [`MAX_CHUNK`] items each, at least one.
pub fn chunk_len(n: usize) -> usize {
    (n / (rayon::current_num_threads() * TASKS_PER_THREAD)).clamp(1, MAX_CHUNK)
}

/// `f(range)` for contiguous ranges of about [`chunk_len`] indices covering `0..n`, in
/// parallel.
pub fn for_each_range(n: usize, f: impl Fn(Range<usize>) + Sync) {
    for_each_chunk_of(n, chunk_len(n), |_, range| f(range));
}

/// `f(k, range)` for the `k`-th range of `chunk` indices (the last one shorter) covering
/// `0..n`, in parallel: for loops whose chunks must be the same on any number of threads.
pub fn for_each_chunk_of(n: usize, chunk: usize, f: impl Fn(usize, Range<usize>) + Sync) {
    let chunk = chunk.max(1);
    run_tasks(n.div_ceil(chunk), &|k| {
        f(k, k * chunk..((k + 1) * chunk).min(n));
    });
}

/// `f(i)` for every `i` in `0..n`, in parallel.
pub fn for_each(n: usize, f: impl Fn(usize) + Sync) {
    for_each_range(n, |range| range.for_each(&f));
}

/// `f(range)` for each chunk of `0..n`, the values in index order.
pub fn chunk_values<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    values_of_chunks(n, chunk_len(n), |_, range| f(range))
}

/// [`for_each_chunk_of`]'s `f(k, range)` for each chunk, the values in chunk order.
pub fn values_of_chunks<T: Send>(
    n: usize,
    chunk: usize,
    f: impl Fn(usize, Range<usize>) -> T + Sync,
) -> Vec<T> {
    let tasks = n.div_ceil(chunk.max(1));
    let mut out: Vec<T> = Vec::with_capacity(tasks);
    let slots = Slots(out.as_mut_ptr());
    for_each_chunk_of(n, chunk, |k, range| {
        let value = f(k, range);
        // SAFETY: `k < tasks`, the vector's capacity, and each task writes its own slot once.
        unsafe { slots.at(k).write(value) };
    });
    // SAFETY: every task wrote its slot (a panic in `f` unwinds through `run_tasks` before
    // this line, leaving `out` empty: the values written are leaked, not dropped twice).
    unsafe { out.set_len(tasks) };
    out
}

/// The fold of `f` over `0..n` from `init()` in each chunk, the chunks' values then combined
/// in index order by `combine` (so any associative `combine` gives the sequential answer).
pub fn fold<T: Send>(
    n: usize,
    init: impl Fn() -> T + Sync,
    f: impl Fn(T, usize) -> T + Sync,
    combine: impl Fn(T, T) -> T,
) -> T {
    chunk_values(n, |range| range.fold(init(), &f))
        .into_iter()
        .reduce(combine)
        .unwrap_or_else(init)
}

/// Whether `f(i)` holds for some `i` in `0..n` (chunks not started once one holds are
/// skipped).
pub fn any(n: usize, f: impl Fn(usize) -> bool + Sync) -> bool {
    let found = AtomicBool::new(false);
    for_each_range(n, |mut range| {
        if !found.load(Ordering::Relaxed) && range.any(&f) {
            found.store(true, Ordering::Relaxed);
        }
    });
    found.into_inner()
}

/// Whether `f(i)` holds for every `i` in `0..n`.
pub fn all(n: usize, f: impl Fn(usize) -> bool + Sync) -> bool {
    !any(n, |i| !f(i))
}

/// `f(i)` for every `i` in `0..n`, into a vector written in parallel (straight into memory
/// taken without clearing).
pub fn map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    let slots = Slots(out.as_mut_ptr());
    for_each_range(n, |range| {
        for i in range {
            // SAFETY: `i < n`, the capacity; the ranges are disjoint, so each slot is written
            // once, by one task.
            unsafe { slots.at(i).write(f(i)) };
        }
    });
    // SAFETY: the ranges cover `0..n` and each was written whole (a panic unwinds through
    // `for_each_range` before this line).
    unsafe { out.set_len(n) };
    out
}

/// Empties `values` and fills it with `len` copies of `value`, in parallel, in the memory it
/// has (a reused buffer's pages are not faulted in again).
pub fn refill<T: Copy + Send + Sync>(values: &mut Vec<T>, len: usize, value: T) {
    values.clear();
    values.reserve(len);
    let slots = Slots(values.as_mut_ptr());
    for_each_range(len, |range| {
        for i in range {
            // SAFETY: `i < len`, within the capacity reserved; the ranges are disjoint.
            unsafe { slots.at(i).write(value) };
        }
    });
    // SAFETY: the ranges cover `0..len`, each written whole.
    unsafe { values.set_len(len) };
}

/// [`map`] of a pair, into two vectors.
pub fn map_pairs<A: Send, B: Send>(
    n: usize,
    f: impl Fn(usize) -> (A, B) + Sync,
) -> (Vec<A>, Vec<B>) {
    let (mut a, mut b): (Vec<A>, Vec<B>) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (slots_a, slots_b) = (Slots(a.as_mut_ptr()), Slots(b.as_mut_ptr()));
    for_each_range(n, |range| {
        for i in range {
            let (x, y) = f(i);
            // SAFETY: as in `map`, for both vectors.
            unsafe {
                slots_a.at(i).write(x);
                slots_b.at(i).write(y);
            }
        }
    });
    // SAFETY: as in `map`, for both vectors.
    unsafe {
        a.set_len(n);
        b.set_len(n);
    }
    (a, b)
}

/// The indices `i` in `0..n` where `keep(i)` holds, in order.
pub fn positions(n: usize, keep: impl Fn(usize) -> bool + Sync) -> Vec<u32> {
    filter_map(n, |i| keep(i).then_some(i as u32))
}

/// The values `f(i)` that are `Some`, for `i` in `0..n`, in order.
pub fn filter_map<T: Copy + Send>(n: usize, f: impl Fn(usize) -> Option<T> + Sync) -> Vec<T> {
    concatenated(chunk_values(n, |range| {
        range.filter_map(&f).collect::<Vec<T>>()
    }))
}

/// The pieces one after another, in order.
pub fn concatenated<T: Copy>(pieces: Vec<Vec<T>>) -> Vec<T> {
    match pieces.len() {
        0 => Vec::new(),
        1 => pieces.into_iter().next().unwrap_or_default(),
        _ => {
            let mut out = Vec::with_capacity(pieces.iter().map(Vec::len).sum());
            for piece in pieces {
                out.extend_from_slice(&piece);
            }
            out
        }
    }
}

/// The items of `f(i)` for `i` in `0..n`, one after another in order.
pub fn flat_map<T: Copy + Send, I: Iterator<Item = T>>(
    n: usize,
    f: impl Fn(usize) -> I + Sync,
) -> Vec<T> {
    concatenated(chunk_values(n, |range| {
        range.flat_map(&f).collect::<Vec<T>>()
    }))
}

/// The first `i` in `0..n` where `hit(i)` holds (chunks after one that holds a hit are
/// skipped).
pub fn find_first(n: usize, hit: impl Fn(usize) -> bool + Sync) -> Option<usize> {
    let first = std::sync::atomic::AtomicUsize::new(usize::MAX);
    for_each_range(n, |mut range| {
        if range.start < first.load(Ordering::Relaxed) {
            if let Some(i) = range.find(|&i| hit(i)) {
                first.fetch_min(i, Ordering::Relaxed);
            }
        }
    });
    Some(first.into_inner()).filter(|&i| i != usize::MAX)
}

/// `f(item)` for each of `items`, taken by value, the results one after another in order.
pub fn flat_map_owned<T: Send, U: Send>(items: Vec<T>, f: impl Fn(T) -> Vec<U> + Sync) -> Vec<U> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    let shared = Shared::new(&mut slots);
    let pieces = chunk_values(shared.len(), |range| {
        // SAFETY: the chunks are disjoint ranges of `slots`.
        let mine = unsafe { shared.range(range) };
        mine.iter_mut()
            .filter_map(Option::take)
            .flat_map(&f)
            .collect::<Vec<U>>()
    });
    let mut out = Vec::with_capacity(pieces.iter().map(Vec::len).sum());
    for piece in pieces {
        out.extend(piece);
    }
    out
}

/// `f(item)` for each of `items`, taken by value, in parallel (for work cut into pieces
/// that own parts of the output).
pub fn for_each_owned<T: Send>(items: Vec<T>, f: impl Fn(T) + Sync) {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    let shared = Shared::new(&mut slots);
    for_each_range(shared.len(), |range| {
        // SAFETY: the ranges are disjoint parts of `slots`.
        unsafe { shared.range(range) }
            .iter_mut()
            .filter_map(Option::take)
            .for_each(&f);
    });
}

/// `f(i, &mut items[i])` for every item, in parallel.
pub fn for_each_mut<T: Send>(items: &mut [T], f: impl Fn(usize, &mut T) + Sync) {
    for_each_chunk_mut(items, |start, chunk| {
        for (i, item) in chunk.iter_mut().enumerate() {
            f(start + i, item);
        }
    });
}

/// `f(start, chunk)` for contiguous chunks of `items` (of about [`chunk_len`] items; `start`
/// is the first one's index), in parallel.
pub fn for_each_chunk_mut<T: Send>(items: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk = chunk_len(items.len());
    values_of_chunks_mut(items, chunk, |k, part| f(k * chunk, part));
}

/// `f(k, part)` for the `k`-th part of `chunk` items of `items` (the last one shorter), in
/// parallel, the values in part order: for loops whose parts must be the same on any
/// number of threads.
pub fn values_of_chunks_mut<T: Send, R: Send>(
    items: &mut [T],
    chunk: usize,
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    let n = items.len();
    let shared = Shared::new(items);
    values_of_chunks(n, chunk, |k, range| {
        // SAFETY: the chunks are disjoint ranges of `items`.
        f(k, unsafe { shared.range(range) })
    })
}

/// `f(k, a_chunk, b_chunk)` for the `k`-th chunks of `chunk` items of two slices, as far
/// as the shorter goes (as `zip`), in parallel.
pub fn for_each_chunk_pair_mut<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    chunk: usize,
    f: impl Fn(usize, &mut [A], &mut [B]) + Sync,
) {
    let n = a.len().min(b.len());
    let (a, b) = (Shared::new(&mut a[..n]), Shared::new(&mut b[..n]));
    for_each_chunk_of(n, chunk, |k, range| {
        // SAFETY: the chunks are disjoint ranges of both slices.
        let (a, b) = unsafe { (a.range(range.clone()), b.range(range)) };
        f(k, a, b);
    });
}

/// `f(i, &mut a[i], &mut b[i])` for every index of two slices, as far as the shorter goes
/// (as `zip`), in parallel.
pub fn for_each_mut2<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    f: impl Fn(usize, &mut A, &mut B) + Sync,
) {
    let n = a.len().min(b.len());
    let (base_a, base_b) = (Slots(a.as_mut_ptr()), Slots(b.as_mut_ptr()));
    for_each_range(n, |range| {
        for i in range {
            // SAFETY: as in `for_each_chunk_mut`: `i` is in bounds of both and belongs to
            // this task alone.
            unsafe { f(i, &mut *base_a.at(i), &mut *base_b.at(i)) };
        }
    });
}

/// The counters' values, in place (no copy: an atomic has its plain number's layout).
pub fn into_values(counters: Vec<AtomicU32>) -> Vec<u32> {
    const _: () = assert!(
        std::mem::size_of::<AtomicU32>() == std::mem::size_of::<u32>()
            && std::mem::align_of::<AtomicU32>() == std::mem::align_of::<u32>()
    );
    let mut counters = std::mem::ManuallyDrop::new(counters);
    let (ptr, len, capacity) = (counters.as_mut_ptr(), counters.len(), counters.capacity());
    // SAFETY: `AtomicU32` has the size, alignment and bit validity of `u32` (std documents
    // it; the sizes and alignments are checked above), so the allocation is a valid
    // `Vec<u32>` of the same length and capacity; the old vector is never dropped.
    unsafe { Vec::from_raw_parts(ptr.cast::<u32>(), len, capacity) }
}

/// A slice that the tasks of one loop write in disjoint parts.
struct Shared<'a, T> {
    base: *mut T,
    len: usize,
    _borrow: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: the slice is borrowed exclusively for `'a`; the tasks given it touch disjoint
// parts (the caller's promise to `range` and `at`), of a type that may be sent.
unsafe impl<T: Send> Send for Shared<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<'_, T> {}

impl<'a, T> Shared<'a, T> {
    /// `items`, to be written in disjoint parts.
    fn new(items: &'a mut [T]) -> Shared<'a, T> {
        Shared {
            base: items.as_mut_ptr(),
            len: items.len(),
            _borrow: std::marker::PhantomData,
        }
    }

    /// How many items.
    fn len(&self) -> usize {
        self.len
    }

    /// The items of `range` (panics outside the slice).
    ///
    /// # Safety
    /// No other task holds an overlapping part while this one is alive.
    #[allow(clippy::mut_from_ref)] // the point: disjoint parts of one exclusive borrow
    unsafe fn range(&self, range: Range<usize>) -> &mut [T] {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "inside the slice"
        );
        // SAFETY: in bounds (checked above); exclusive by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(range.start), range.len()) }
    }
}

/// A vector's or slice's items as raw pointers that tasks write disjoint parts of.
struct Slots<T>(*mut T);

// SAFETY: the tasks of one loop write disjoint items (each function above says why), of a
// type that may be sent between threads.
unsafe impl<T: Send> Send for Slots<T> {}
// SAFETY: as above: shared between the tasks, which never touch the same item.
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    /// The item at `i` (a method, so closures capture the whole `Slots`, which is `Sync`,
    /// not its raw pointer).
    ///
    /// # Safety
    /// `i` is within the allocation.
    unsafe fn at(&self, i: usize) -> *mut T {
        // SAFETY: the caller keeps `i` within the allocation.
        unsafe { self.0.add(i) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pools() -> Vec<rayon::ThreadPool> {
        [1, 3]
            .into_iter()
            .map(|t| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap()
            })
            .collect()
    }

    const SIZES: [usize; 7] = [0, 1, 2, 17, MAX_CHUNK, MAX_CHUNK + 1, 300_007];

    /// Every loop gives what its sequential form gives, at sizes across chunk boundaries, on
    /// one thread and several.
    #[test]
    fn every_loop_equals_its_sequential_form() {
        for pool in pools() {
            pool.install(|| {
                for n in SIZES {
                    let f = |i: usize| (i * 7 % 13) as u64;
                    assert_eq!(map(n, f), (0..n).map(f).collect::<Vec<_>>(), "{n}");
                    let (a, b) = map_pairs(n, |i| (i as u32, f(i) == 3));
                    assert_eq!(a, (0..n as u32).collect::<Vec<_>>());
                    assert_eq!(b, (0..n).map(|i| f(i) == 3).collect::<Vec<_>>());
                    assert_eq!(
                        fold(n, || 0, |acc, i| acc + f(i), |a, b| a + b),
                        (0..n).map(f).sum::<u64>()
                    );
                    let keep = |i: usize| f(i) == 0 || f(i) == 12;
                    let want: Vec<u32> = (0..n).filter(|&i| keep(i)).map(|i| i as u32).collect();
                    assert_eq!(positions(n, keep), want);
                    assert_eq!(any(n, |i| i + 1 == n), n > 0);
                    assert!(!any(n, |_| false));
                    assert!(all(n, |i| i < n));
                    assert_eq!(all(n, |i| i != n / 2), n == 0);
                    let firsts = chunk_values(n, |r| r.start);
                    assert!(
                        firsts.windows(2).all(|w| w[0] < w[1])
                            && firsts.first().is_none_or(|&s| s == 0)
                    );
                    let mut doubled: Vec<u64> = (0..n as u64).collect();
                    let lens = values_of_chunks_mut(&mut doubled, 5, |k, part| {
                        part.iter_mut().for_each(|x| *x *= 2);
                        (k, part.len())
                    });
                    assert_eq!(doubled, (0..n as u64).map(|x| x * 2).collect::<Vec<_>>());
                    assert_eq!(
                        lens,
                        (0..n.div_ceil(5))
                            .map(|k| (k, 5.min(n - 5 * k)))
                            .collect::<Vec<_>>()
                    );
                    let mut filled = vec![9u8; 3];
                    refill(&mut filled, n, 4);
                    assert_eq!(filled, vec![4u8; n]);
                    let mut items = vec![0u64; n];
                    for_each_mut(&mut items, |i, x| *x = f(i) + 1);
                    assert_eq!(items, (0..n).map(|i| f(i) + 1).collect::<Vec<_>>());
                    let mut short = vec![7u8; n / 2];
                    for_each_mut2(&mut items, &mut short, |i, x, y| *y = (*x + i as u64) as u8);
                    assert!(
                        short
                            .iter()
                            .enumerate()
                            .all(|(i, &y)| y == (f(i) + 1 + i as u64) as u8)
                    );
                    let mut other = vec![0u32; n];
                    for_each_mut2(&mut items, &mut other, |i, x, y| {
                        *y = *x as u32 + i as u32;
                        *x = 0;
                    });
                    assert!(items.iter().all(|&x| x == 0));
                    assert_eq!(
                        other,
                        (0..n)
                            .map(|i| (f(i) + 1) as u32 + i as u32)
                            .collect::<Vec<_>>()
                    );
                    let counters = map(n, |i| AtomicU32::new(i as u32 * 3));
                    assert_eq!(
                        into_values(counters),
                        (0..n as u32).map(|i| i * 3).collect::<Vec<_>>()
                    );
                    let by_five = values_of_chunks(n, 5, |k, r| (k, r.len()));
                    assert_eq!(by_five.len(), n.div_ceil(5));
                    assert!(
                        by_five
                            .iter()
                            .enumerate()
                            .all(|(i, &(k, len))| i == k && (len == 5 || i + 1 == by_five.len()))
                    );
                    let odd = filter_map(n, |i| (i % 2 == 1).then_some(i as u64 * 5));
                    assert_eq!(
                        odd,
                        (0..n)
                            .filter(|i| i % 2 == 1)
                            .map(|i| i as u64 * 5)
                            .collect::<Vec<_>>()
                    );
                    let owned: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32; i % 3]).collect();
                    let flat = flat_map_owned(owned.clone(), |v| v);
                    assert_eq!(flat, owned.concat());
                    let total = std::sync::atomic::AtomicUsize::new(0);
                    for_each_owned(owned, |v| {
                        total.fetch_add(v.len(), Ordering::Relaxed);
                    });
                    assert_eq!(total.into_inner(), flat.len());
                    let (mut a, mut b) = (vec![0usize; n], vec![0usize; n]);
                    for_each_chunk_pair_mut(&mut a, &mut b, 7, |k, a, b| {
                        a.iter_mut().for_each(|x| *x = k);
                        b.iter_mut().for_each(|x| *x = a.len());
                    });
                    assert!((0..n).all(|i| a[i] == i / 7 && b[i] == 7.min(n - i / 7 * 7)));
                    let flat = flat_map(n, |i| std::iter::repeat_n(i, i % 3));
                    assert_eq!(
                        flat,
                        (0..n)
                            .flat_map(|i| std::iter::repeat_n(i, i % 3))
                            .collect::<Vec<_>>()
                    );
                    for at in [0, n / 3, n.saturating_sub(1), n] {
                        let want = (at < n).then_some(at);
                        assert_eq!(find_first(n, |i| i >= at), want, "{n} {at}");
                    }
                    assert_eq!(join(|| n * 2, || vec![n; 2]), (n * 2, vec![n; 2]));
                    let seen: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
                    for_each(n, |i| {
                        assert!(!seen[i].swap(true, Ordering::Relaxed), "once");
                    });
                    assert!(seen.iter().all(|s| s.load(Ordering::Relaxed)));
                }
            });
        }
    }

    /// A panic in a task reaches the caller, and nothing written before it is dropped twice.
    #[test]
    fn a_panic_in_a_task_reaches_the_caller() {
        for pool in pools() {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    map(100_000, |i| {
                        assert!(i != 77_777, "inside");
                        vec![i]
                    })
                })
            }));
            assert!(caught.is_err());
        }
    }
}
