//! The predecessor side (CSC) of an arena from its successor side (CSR): a stable counting
//! sort of the edges by target, so each vertex's predecessors come in edge order, which
//! makes the result the same whatever the thread count.
//!
//! Large graphs go through a two-level radix sort, deterministic by construction, on any
//! number of threads (on one it is still faster than the plain counting sort, whose
//! scattered writes miss the cache on every edge of a large graph):
//! 1. the edges are cut into blocks of whole source vertices; each block counts its edges
//!    per *bucket* (a range of `2^shift` consecutive targets, at most [`MAX_BUCKETS`]);
//! 2. prefix sums over (bucket, block) give every block a private, ordered slot range per
//!    bucket, and each block moves its edges there (a stable partition by bucket): the
//!    slots are the CSC arrays themselves, since a bucket's targets own one contiguous
//!    stretch of them, and only each edge's place in its bucket (16 bits on graphs of up to
//!    2^26 vertices) goes to scratch;
//! 3. each bucket is counting-sorted by target within its stretch, on one thread, through
//!    a copy of the stretch and a histogram that stay in cache.
//!
//! Memory is written once and in parallel: every array here is taken uninitialised
//! ([`crate::fresh::for_writing`]: no clearing pass on the calling thread, huge pages
//! where the system has them) and each slot is written by the block or bucket that owns
//! it, so pages are first touched by the workers. On the 2-core build machine clearing
//! fresh pages is the largest single cost of building an arena (the kernel clears each
//! page before its first write), hence the partition in place and the small scratch. Step 2
//! stages [`STAGED`] edges per bucket and writes them out together ([`Staging`]).
//!
//! Small graphs take the plain sequential counting sort.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::{PARALLEL_EDGES, VertexId};
use crate::fresh::for_writing;

/// Buckets of step 1 (a power of two; each block keeps this many counters).
const MAX_BUCKETS: usize = 1024;

/// CSC offsets (`n + 1`), sources and weights.
pub(super) type Transposed<W> = (Box<[u32]>, Box<[VertexId]>, Box<[W]>);

/// The stable transpose of the CSR graph `(offsets, targets, weights)` over `n` vertices.
pub(super) fn transpose<W: Copy + Send + Sync + Default>(
    n: usize,
    offsets: &[u32],
    targets: &[VertexId],
    weights: &[W],
) -> Transposed<W> {
    if targets.len() < PARALLEL_EDGES {
        sequential(n, offsets, targets, weights)
    } else {
        radix(n, offsets, targets, weights)
    }
}

/// The plain counting sort.
pub(super) fn sequential<W: Copy + Default>(
    n: usize,
    offsets: &[u32],
    targets: &[VertexId],
    weights: &[W],
) -> Transposed<W> {
    let m = targets.len();
    let mut pred_offsets = vec![0u32; n + 1];
    let mut sources = vec![0 as VertexId; m];
    let mut pred_weights = vec![W::default(); m];
    sequential_into(
        (offsets, targets, weights),
        &mut pred_offsets,
        &mut sources,
        &mut pred_weights,
    );
    (
        pred_offsets.into_boxed_slice(),
        sources.into_boxed_slice(),
        pred_weights.into_boxed_slice(),
    )
}

/// [`sequential`] into arrays the caller provides (every slot written).
fn sequential_into<W: Copy>(
    (offsets, targets, weights): (&[u32], &[VertexId], &[W]),
    pred_offsets: &mut [u32],
    sources: &mut [VertexId],
    pred_weights: &mut [W],
) {
    let n = offsets.len() - 1;
    pred_offsets.fill(0);
    for &t in targets {
        pred_offsets[t as usize + 1] += 1;
    }
    for v in 0..n {
        pred_offsets[v + 1] += pred_offsets[v];
    }
    let mut next: Vec<u32> = pred_offsets[..n].to_vec();
    for v in 0..n {
        for e in offsets[v] as usize..offsets[v + 1] as usize {
            let slot = &mut next[targets[e] as usize];
            sources[*slot as usize] = v as VertexId;
            pred_weights[*slot as usize] = weights[e];
            *slot += 1;
        }
    }
}

/// The stable transpose of the CSR graph `(offsets, targets, weights)` (`n + 1` offsets
/// from 0 to `m`, targets `< n`) written into arrays the caller provides (`n + 1`
/// offsets, `m` sources and weights: the predecessor sections of an `egb` file being
/// generated, mapped): exactly what [`super::Arena`]'s constructors build. Large graphs
/// go through the radix sort, whose only scratch is each edge's place in its bucket (2 or
/// 4 bytes an edge); small ones through the plain counting sort.
pub(crate) fn transpose_into<W: Copy + Send + Sync + Default>(
    offsets: &[u32],
    targets: &[VertexId],
    weights: &[W],
    pred_offsets: &mut [u32],
    pred_sources: &mut [VertexId],
    pred_weights: &mut [W],
) {
    let n = offsets.len() - 1;
    let m = targets.len();
    assert!(pred_offsets.len() == n + 1 && pred_sources.len() == m && pred_weights.len() == m);
    let graph = (offsets, targets, weights);
    if m < PARALLEL_EDGES {
        sequential_into(graph, pred_offsets, pred_sources, pred_weights);
    } else {
        radix_into(graph, pred_offsets, pred_sources, pred_weights);
    }
}

/// A pointer that tasks writing disjoint ranges of one array may share.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: every use below writes ranges that no other task writes or reads (each comment
// says why), and the owning vector outlives the parallel section.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// Writes `values` from `index` on.
    ///
    /// # Safety
    /// `index..index + values.len()` is in bounds of the array, and no other task touches
    /// it concurrently.
    #[inline(always)]
    unsafe fn copy_from(self, index: usize, values: &[T])
    where
        T: Copy,
    {
        // SAFETY: the caller's contract; `values` is another array's memory.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.0.add(index), values.len()) }
    }
}

/// Edges a block holds per bucket before writing them out together.
const STAGED: usize = 16;

/// A block's edges on their way to the buckets' slots, [`STAGED`] per bucket at most:
/// written out a cache line at a time rather than one edge at a time to a thousand
/// places, which would keep a thousand lines (and pages) of each array busy at once.
struct Staging<W, L> {
    sources: Vec<VertexId>,
    weights: Vec<W>,
    places: Vec<L>,
    held: Vec<u8>,
}

impl<W: Copy + Default, L: Local> Staging<W, L> {
    fn new(buckets: usize) -> Staging<W, L> {
        Staging {
            sources: vec![0; buckets * STAGED],
            weights: vec![W::default(); buckets * STAGED],
            places: vec![L::new(0); buckets * STAGED],
            held: vec![0; buckets],
        }
    }
}

/// Source-vertex blocks of about equal edge counts: `bounds[b]..bounds[b + 1]`.
fn vertex_blocks(offsets: &[u32], blocks: usize) -> Vec<usize> {
    let n = offsets.len() - 1;
    let m = offsets[n] as usize;
    let mut bounds = vec![0usize];
    for b in 1..blocks {
        let edge = (m as u128 * b as u128 / blocks as u128) as u32;
        let v = offsets.partition_point(|&o| o < edge).min(n);
        if v > *bounds.last().expect("starts with 0") {
            bounds.push(v);
        }
    }
    if *bounds.last().expect("starts with 0") < n {
        bounds.push(n);
    }
    bounds
}

/// A target's place inside its bucket: 16 bits where buckets are that narrow (graphs of up
/// to 2^26 vertices), else 32.
trait Local: Copy + Send + Sync {
    fn new(index: usize) -> Self;
    fn get(self) -> usize;
}

impl Local for u16 {
    #[inline(always)]
    fn new(index: usize) -> u16 {
        index as u16
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl Local for u32 {
    #[inline(always)]
    fn new(index: usize) -> u32 {
        index as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

/// The radix transpose of the module docs.
fn radix<W: Copy + Send + Sync + Default>(
    n: usize,
    offsets: &[u32],
    targets: &[VertexId],
    weights: &[W],
) -> Transposed<W> {
    let m = targets.len();
    let mut pred_offsets: Vec<u32> = for_writing(n + 1);
    let mut sources: Vec<VertexId> = for_writing(m);
    let mut pred_weights: Vec<W> = for_writing(m);
    radix_into_uninit(
        n,
        (offsets, targets, weights),
        (
            &mut pred_offsets.spare_capacity_mut()[..=n],
            &mut sources.spare_capacity_mut()[..m],
            &mut pred_weights.spare_capacity_mut()[..m],
        ),
    );
    // SAFETY: `radix_into_uninit` wrote every one of the `n + 1` and `m` slots.
    unsafe {
        pred_offsets.set_len(n + 1);
        sources.set_len(m);
        pred_weights.set_len(m);
    }
    (
        pred_offsets.into_boxed_slice(),
        sources.into_boxed_slice(),
        pred_weights.into_boxed_slice(),
    )
}

/// [`transpose_into`] by the radix sort: its only scratch is each edge's place in its
/// bucket (2 or 4 bytes an edge) and the threads' buffers.
fn radix_into<W: Copy + Send + Sync + Default>(
    (offsets, targets, weights): (&[u32], &[VertexId], &[W]),
    pred_offsets: &mut [u32],
    pred_sources: &mut [VertexId],
    pred_weights: &mut [W],
) {
    let n = offsets.len() - 1;
    assert!(
        pred_offsets.len() == n + 1
            && pred_sources.len() == targets.len()
            && pred_weights.len() == targets.len()
    );
    radix_into_uninit(
        n,
        (offsets, targets, weights),
        (
            as_uninit(pred_offsets),
            as_uninit(pred_sources),
            as_uninit(pred_weights),
        ),
    );
}

/// An initialised slice seen as possibly uninitialised, to be overwritten (only values of
/// `T` are written through it).
fn as_uninit<T>(values: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the writers here only write values of
    // `T` through it, so the slice stays initialised.
    unsafe { &mut *(std::ptr::from_mut(values) as *mut [MaybeUninit<T>]) }
}

/// [`radix_into`] into `n + 1`, `m` and `m` slots that may be uninitialised; each is
/// written once.
fn radix_into_uninit<W: Copy + Send + Sync + Default>(
    n: usize,
    graph: (&[u32], &[VertexId], &[W]),
    out: Outputs<'_, W>,
) {
    let mut shift = 0u32;
    while ((n - 1) >> shift) + 1 > MAX_BUCKETS {
        shift += 1;
    }
    if shift <= 16 {
        radix_with::<W, u16>(n, shift, graph, out);
    } else {
        radix_with::<W, u32>(n, shift, graph, out);
    }
}

/// The CSC arrays being written: offsets, sources, weights.
type Outputs<'o, W> = (
    &'o mut [MaybeUninit<u32>],
    &'o mut [MaybeUninit<VertexId>],
    &'o mut [MaybeUninit<W>],
);

/// [`radix`] with buckets of `2^shift` targets, places in them stored as `L`.
fn radix_with<W: Copy + Send + Sync + Default, L: Local>(
    n: usize,
    shift: u32,
    (offsets, targets, weights): (&[u32], &[VertexId], &[W]),
    (pred_offsets, sources, pred_weights): Outputs<'_, W>,
) {
    let m = targets.len();
    let buckets = ((n - 1) >> shift) + 1;
    let mask = (1usize << shift) - 1;
    let bounds = vertex_blocks(offsets, 4 * rayon::current_num_threads());
    let blocks = bounds.len() - 1;

    // Step 1: counts per (block, bucket).
    let counts: Vec<Vec<u32>> = (0..blocks)
        .into_par_iter()
        .map(|b| {
            let mut count = vec![0u32; buckets];
            let edges = offsets[bounds[b]] as usize..offsets[bounds[b + 1]] as usize;
            for &t in &targets[edges] {
                count[(t >> shift) as usize] += 1;
            }
            count
        })
        .collect();
    // Step 2: slot ranges, bucket-major then block order (so the partition is stable).
    let mut cursor: Vec<Vec<u32>> = vec![vec![0; buckets]; blocks];
    let mut bucket_start = vec![0usize; buckets + 1];
    let mut running = 0u32;
    for k in 0..buckets {
        bucket_start[k] = running as usize;
        for b in 0..blocks {
            cursor[b][k] = running;
            running += counts[b][k];
        }
    }
    bucket_start[buckets] = running as usize;
    drop(counts);

    // The partition goes straight into the CSC arrays (each bucket's stretch is already
    // its final place); only the places of the targets need scratch.
    let mut places: Vec<L> = for_writing(m);
    let (so, wo, pl) = (
        Shared(sources.as_mut_ptr().cast::<VertexId>()),
        Shared(pred_weights.as_mut_ptr().cast::<W>()),
        Shared(places.as_mut_ptr()),
    );
    cursor.par_iter_mut().enumerate().for_each_init(
        || Staging::<W, L>::new(buckets),
        |staging, (b, cursor)| {
            let flush = |staging: &mut Staging<W, L>, cursor: &mut [u32], k: usize, len: usize| {
                let at = cursor[k] as usize;
                let held = k * STAGED..k * STAGED + len;
                // SAFETY: block `b` owns slots `cursor[b][k]..` up to its count in bucket
                // `k` (step 2 gave each (block, bucket) a disjoint range inside `0..m`,
                // the capacity of the three arrays); `len` of them are written here.
                unsafe {
                    so.copy_from(at, &staging.sources[held.clone()]);
                    wo.copy_from(at, &staging.weights[held.clone()]);
                    pl.copy_from(at, &staging.places[held]);
                }
                cursor[k] += len as u32;
            };
            for v in bounds[b]..bounds[b + 1] {
                for e in offsets[v] as usize..offsets[v + 1] as usize {
                    let t = targets[e] as usize;
                    let k = t >> shift;
                    let held = staging.held[k] as usize;
                    let i = k * STAGED + held;
                    staging.sources[i] = v as VertexId;
                    staging.weights[i] = weights[e];
                    staging.places[i] = L::new(t & mask);
                    if held + 1 == STAGED {
                        flush(staging, cursor, k, STAGED);
                        staging.held[k] = 0;
                    } else {
                        staging.held[k] = held as u8 + 1;
                    }
                }
            }
            for k in 0..buckets {
                let held = std::mem::take(&mut staging.held[k]) as usize;
                flush(staging, cursor, k, held);
            }
        },
    );
    // SAFETY: the blocks' ranges cover `0..m`, each slot of the three written once above,
    // so `sources` and `pred_weights` are initialised from here on.
    let (sources, pred_weights) = unsafe {
        places.set_len(m);
        (assume_init(sources), assume_init(pred_weights))
    };

    // Step 3: each bucket sorted by target within its own stretch, through a buffer of
    // the thread's (a bucket's stretch is small enough to stay in cache).
    let (head, last) = pred_offsets.split_at_mut(n);
    let parts = split(sources, &bucket_start)
        .into_par_iter()
        .zip(split(pred_weights, &bucket_start))
        .zip(split_uninit(head, buckets, shift, n))
        .enumerate();
    parts.for_each_init(
        || (Vec::new(), Vec::new(), vec![0u32; 1 << shift]),
        |(held_sources, held_weights, cursors), (k, ((sources, weights), offsets))| {
            let start = bucket_start[k];
            let places = &places[start..bucket_start[k + 1]];
            let cursors = &mut cursors[..offsets.len()];
            cursors.fill(0);
            for &place in places {
                cursors[place.get()] += 1;
            }
            let mut at = 0u32;
            for (cursor, offset) in cursors.iter_mut().zip(offsets.iter_mut()) {
                offset.write(start as u32 + at);
                let count = *cursor;
                *cursor = at;
                at += count;
            }
            held_sources.clear();
            held_sources.extend_from_slice(sources);
            held_weights.clear();
            held_weights.extend_from_slice(weights);
            for ((&place, &source), &weight) in
                places.iter().zip(&*held_sources).zip(&*held_weights)
            {
                let slot = &mut cursors[place.get()];
                sources[*slot as usize] = source;
                weights[*slot as usize] = weight;
                *slot += 1;
            }
        },
    );
    // The buckets' target ranges covered offsets `0..n`, each written once above.
    last[0].write(m as u32);
}

/// `values`, every one of which has been written, as initialised.
///
/// # Safety
/// Every element of `values` is initialised.
unsafe fn assume_init<T>(values: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller vouches for every element.
    unsafe { &mut *(std::ptr::from_mut(values) as *mut [T]) }
}

/// `values` cut at `bounds` (the first 0, the last `values.len()`).
fn split<'v, T>(mut values: &'v mut [T], bounds: &[usize]) -> Vec<&'v mut [T]> {
    let mut parts = Vec::with_capacity(bounds.len());
    for pair in bounds.windows(2) {
        let (part, rest) = values.split_at_mut(pair[1] - pair[0]);
        parts.push(part);
        values = rest;
    }
    parts
}

/// The first `n` of `offsets` cut into the buckets' target ranges of `2^shift`.
fn split_uninit<T>(
    offsets: &mut [MaybeUninit<T>],
    buckets: usize,
    shift: u32,
    n: usize,
) -> Vec<&mut [MaybeUninit<T>]> {
    let bounds: Vec<usize> = (0..=buckets).map(|k| (k << shift).min(n)).collect();
    split(&mut offsets[..n], &bounds)
}

#[cfg(test)]
mod tests {
    use super::super::{Arena, EdgeList, Player};
    use super::*;

    /// A pseudo-random CSR graph with hubs, parallel edges and every vertex a source.
    fn graph(n: usize, seed: u64) -> (Vec<u32>, Vec<u32>, Vec<i32>) {
        let mut state = seed | 1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut offsets = vec![0u32];
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        for _ in 0..n {
            for _ in 0..=(next() % 5) {
                let t = if next() % 4 == 0 {
                    next() % 3
                } else {
                    next() % n as u64
                };
                targets.push(t as u32);
                weights.push((next() % 1000) as i32 - 500);
            }
            offsets.push(targets.len() as u32);
        }
        (offsets, targets, weights)
    }

    #[test]
    fn parallel_equals_sequential_on_every_pool_size() {
        for (n, seed) in [(1usize, 1u64), (7, 2), (5000, 3), (40_000, 4), (70_001, 5)] {
            let (offsets, targets, weights) = graph(n, seed);
            let expected = sequential(n, &offsets, &targets, &weights);
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got = pool.install(|| radix(n, &offsets, &targets, &weights));
                assert!(got == expected, "n = {n}, {threads} threads");
                // Places at 32 bits (graphs of over 2^26 vertices), with narrow buckets.
                let shift = usize::BITS - (n - 1).leading_zeros();
                let shift = shift.saturating_sub(4);
                let m = targets.len();
                let (mut po, mut ps, mut pw) = (vec![9u32; n + 1], vec![7u32; m], vec![5i32; m]);
                pool.install(|| {
                    let out = (
                        as_uninit(&mut po[..]),
                        as_uninit(&mut ps[..]),
                        as_uninit(&mut pw[..]),
                    );
                    radix_with::<i32, u32>(n, shift, (&offsets, &targets, &weights), out);
                });
                let wide = (po.into(), ps.into(), pw.into());
                assert!(
                    wide == expected,
                    "n = {n}, {threads} threads, 32-bit places"
                );
            }
        }
    }

    /// Both paths — the counting sort (fewer than `PARALLEL_EDGES` edges) and the radix sort
    /// (more) — equal the plain sequential counting sort on every pool size: hubs (long lists), parallel
    /// edges of different weights, vertices without predecessors.
    #[test]
    fn transpose_into_equals_the_counting_sort_on_every_pool_size() {
        for n in [1000u32, 3000] {
            let mut edges = EdgeList::default();
            let mut state = 7u64;
            for v in 0..n {
                for _ in 0..=(v % 40) {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let t = if state >> 60 < 3 {
                        (state >> 33) as u32 % 5
                    } else {
                        (state >> 33) as u32 % n
                    };
                    edges.push(v, t, (state >> 50) as i64 % 100);
                }
            }
            let arena = Arena::from_edges(vec![Player::Zero; n as usize], edges, None).unwrap();
            let m = arena.edge_count();
            assert_eq!(m >= PARALLEL_EDGES, n == 3000, "one graph for each path");
            let w: Vec<i16> = arena.succ_weights().iter().map(|w| w as i16).collect();
            let (o, t) = (arena.succ_offsets(), arena.succ_targets());
            let expected = sequential(n as usize, o, t, &w);
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mut po, mut ps, mut pw) =
                    (vec![9u32; n as usize + 1], vec![7u32; m], vec![5i16; m]);
                pool.install(|| {
                    transpose_into(
                        arena.succ_offsets(),
                        arena.succ_targets(),
                        &w,
                        &mut po,
                        &mut ps,
                        &mut pw,
                    );
                });
                let got = (po.into(), ps.into(), pw.into());
                assert!(got == expected, "{m} edges, {threads} threads");
            }
        }
    }
}
