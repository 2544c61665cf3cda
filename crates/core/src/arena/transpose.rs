//! The predecessor side (CSC) of an arena from its successor side (CSR): a stable counting
//! sort of the edges by target, so each vertex's predecessors come in edge order, which
//! makes the result the same whatever the thread count.
//!
//! Large graphs go through a parallel two-level radix sort, deterministic by construction:
//! 1. the edges are cut into blocks of whole source vertices; each block counts its edges
//!    per *bucket* (a range of `2^shift` consecutive targets, at most [`MAX_BUCKETS`]);
//! 2. prefix sums over (bucket, block) give every block a private, ordered slot range per
//!    bucket, and each block moves its edges there (a stable partition by bucket);
//! 3. each bucket, whose targets own one contiguous stretch of the CSC arrays, is
//!    counting-sorted by target on one thread with a local histogram that fits in cache.
//!
//! Small graphs, or a single thread, take the plain sequential counting sort.

use rayon::prelude::*;

use super::{PARALLEL_EDGES, VertexId};

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
    if targets.len() < PARALLEL_EDGES || rayon::current_num_threads() == 1 {
        sequential(n, offsets, targets, weights)
    } else {
        parallel(n, offsets, targets, weights)
    }
}

/// The plain counting sort.
fn sequential<W: Copy + Default>(
    n: usize,
    offsets: &[u32],
    targets: &[VertexId],
    weights: &[W],
) -> Transposed<W> {
    let m = targets.len();
    let mut pred_offsets = vec![0u32; n + 1];
    for &t in targets {
        pred_offsets[t as usize + 1] += 1;
    }
    for v in 0..n {
        pred_offsets[v + 1] += pred_offsets[v];
    }
    let mut next: Vec<u32> = pred_offsets[..n].to_vec();
    let mut sources = vec![0 as VertexId; m];
    let mut pred_weights = vec![W::default(); m];
    for v in 0..n {
        for e in offsets[v] as usize..offsets[v + 1] as usize {
            let slot = &mut next[targets[e] as usize];
            sources[*slot as usize] = v as VertexId;
            pred_weights[*slot as usize] = weights[e];
            *slot += 1;
        }
    }
    (
        pred_offsets.into_boxed_slice(),
        sources.into_boxed_slice(),
        pred_weights.into_boxed_slice(),
    )
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
    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// `index` is in bounds of the array, and no other task touches it concurrently.
    #[inline(always)]
    unsafe fn write(self, index: usize, value: T) {
        // SAFETY: the caller's contract.
        unsafe { self.0.add(index).write(value) }
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

/// The parallel radix transpose of the module docs.
fn parallel<W: Copy + Send + Sync + Default>(
    n: usize,
    offsets: &[u32],
    targets: &[VertexId],
    weights: &[W],
) -> Transposed<W> {
    let m = targets.len();
    let mut shift = 0u32;
    while ((n - 1) >> shift) + 1 > MAX_BUCKETS {
        shift += 1;
    }
    let buckets = ((n - 1) >> shift) + 1;
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
    let mut bucket_start = vec![0u32; buckets + 1];
    let mut running = 0u32;
    for k in 0..buckets {
        bucket_start[k] = running;
        for b in 0..blocks {
            cursor[b][k] = running;
            running += counts[b][k];
        }
    }
    bucket_start[buckets] = running;
    drop(counts);

    let mut part_targets = vec![0 as VertexId; m];
    let mut part_sources = vec![0 as VertexId; m];
    let mut part_weights = vec![W::default(); m];
    let (pt, ps, pw) = (
        Shared(part_targets.as_mut_ptr()),
        Shared(part_sources.as_mut_ptr()),
        Shared(part_weights.as_mut_ptr()),
    );
    cursor.par_iter_mut().enumerate().for_each(|(b, cursor)| {
        for v in bounds[b]..bounds[b + 1] {
            for e in offsets[v] as usize..offsets[v + 1] as usize {
                let t = targets[e];
                let slot = &mut cursor[(t >> shift) as usize];
                // SAFETY: block `b` owns slots `cursor[b][k]..` up to its count in bucket
                // `k` (step 2 gave each (block, bucket) a disjoint range inside `0..m`).
                unsafe {
                    pt.write(*slot as usize, t);
                    ps.write(*slot as usize, v as VertexId);
                    pw.write(*slot as usize, weights[e]);
                }
                *slot += 1;
            }
        }
    });

    // Step 3: each bucket sorted by target into its own stretch of the CSC.
    let mut pred_offsets = vec![0u32; n + 1];
    let mut sources = vec![0 as VertexId; m];
    let mut pred_weights = vec![W::default(); m];
    let (po, so, wo) = (
        Shared(pred_offsets.as_mut_ptr()),
        Shared(sources.as_mut_ptr()),
        Shared(pred_weights.as_mut_ptr()),
    );
    (0..buckets).into_par_iter().for_each_init(
        || vec![0u32; 1 << shift],
        |local, k| {
            let first = k << shift;
            let width = (1usize << shift).min(n - first);
            let range = bucket_start[k] as usize..bucket_start[k + 1] as usize;
            let local = &mut local[..width];
            local.fill(0);
            for &t in &part_targets[range.clone()] {
                local[t as usize - first] += 1;
            }
            let mut at = bucket_start[k];
            for (i, slot) in local.iter_mut().enumerate() {
                let count = *slot;
                // SAFETY: bucket `k` alone owns offsets `first..first + width` (targets
                // of different buckets are disjoint).
                unsafe { po.write(first + i, at) };
                *slot = at;
                at += count;
            }
            for e in range {
                let slot = &mut local[part_targets[e] as usize - first];
                // SAFETY: bucket `k` alone owns CSC slots `bucket_start[k]..bucket_start[k
                // + 1]`, and the local cursors stay inside them.
                unsafe {
                    so.write(*slot as usize, part_sources[e]);
                    wo.write(*slot as usize, part_weights[e]);
                }
                *slot += 1;
            }
        },
    );
    pred_offsets[n] = m as u32;
    (
        pred_offsets.into_boxed_slice(),
        sources.into_boxed_slice(),
        pred_weights.into_boxed_slice(),
    )
}

#[cfg(test)]
mod tests {
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
            for _ in 0..1 + next() % 5 {
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
                let got = pool.install(|| parallel(n, &offsets, &targets, &weights));
                assert!(got == expected, "n = {n}, {threads} threads");
            }
        }
    }
}
