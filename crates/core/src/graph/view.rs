//! The one-player graphs the accelerated solver evaluates: `G_σ1` restricted to a vertex
//! subset — player-0 vertices keep every edge into the subset, player-1 vertices only the
//! edge of a fixed positional strategy σ1 — stored as CSR (successors) and CSC
//! (predecessors) over the arena's vertex ids. Inactive vertices have no edges.
//!
//! Both sides are built from the arena's own CSR and CSC, each vertex filling its own range
//! (count, prefix sum, fill), so the build runs on all of a solve's threads and gives the
//! same graph for every thread count. The counting pass decides each candidate edge once
//! and notes the answer in a byte per arena edge, which the filling pass reads in order
//! (halving the build on one thread and on two: the decision's reads at the other endpoint
//! are the random ones). A first pass over the vertices writes one word per
//! vertex (inactive, keeps every edge, or its σ1 edge's target), so each edge of the two
//! passes reads one word at its source rather than the source's activity, owner and σ1
//! edge (random reads, each a likely cache miss on large games).
//!
//! The two sides are built separately ([`Graph::build_predecessors`],
//! [`Graph::build_successors`]), each only when something reads it: an evaluation whose
//! components, reachability and Bellman–Ford run on the device needs neither (its cycle
//! test reads successors through [`KeptSuccessors`], the arena filtered by the same words,
//! as the device does), and a host fallback builds the side it reads. Reading a side that
//! is not built for the current words panics. Anything that reads successors implements
//! [`Successors`].
//!
//! A player-1 vertex whose σ1 edge has identical twins (same target and weight) keeps every
//! twin, among its successors and among its target's predecessors alike, so the two sides
//! hold the same multiset of edges (the components' trim counts degrees on one side and
//! decrements them from the other); every algorithm over these graphs is indifferent to
//! repeated identical edges.

use crate::arena::{Arena, Player, VertexId};
use crate::solve::chunked;
use crate::solve::threads::Threads;

/// Vertices per parallel task when building.
const CHUNK: usize = 1 << 14;

/// A subgraph over the arena's vertex ids (inactive vertices have no edges).
#[derive(Debug, Default)]
pub struct Graph {
    succ_offsets: Vec<u32>,
    succ_targets: Vec<VertexId>,
    succ_weights: Vec<i64>,
    pred_offsets: Vec<u32>,
    pred_sources: Vec<VertexId>,
    pred_weights: Vec<i64>,
    /// Scratch of [`Graph::rebuild`]: per vertex, [`DROPS_ALL`], [`KEEPS_ALL`] or the
    /// target of its σ1 edge …
    keeps: Vec<VertexId>,
    /// … and that edge's weight.
    sigma_weight: Vec<i64>,
    /// Scratch of the builds: one byte per arena edge, whether it is kept.
    mask: Vec<u8>,
    /// Whether the successor side is built for the words [`Graph::mark`] last wrote (reading
    /// it otherwise is a bug: it would be an earlier subset's).
    successors_built: bool,
    /// … and the predecessor side.
    predecessors_built: bool,
}

/// Whatever lists the successors of vertices in an evaluation's `G_σ1`: a built [`Graph`]
/// (exactly the edges into its subset) or [`KeptSuccessors`] (the same edges, plus possibly
/// edges into vertices outside the subset: every consumer restricts them to a component).
pub(crate) trait Successors: Sync {
    /// `(successor, weight)` of `v`, in the arena's edge order.
    fn successors(&self, v: VertexId) -> impl Iterator<Item = (VertexId, i64)> + '_;
}

/// The successors of `G_σ1` read from the arena through [`Graph::mark`]'s words: a vertex
/// that keeps every edge lists all of its edges, a σ1 vertex its σ1 edge and that edge's
/// identical twins, an inactive one none. Edges into inactive vertices are not removed.
#[derive(Clone, Copy)]
pub(crate) struct KeptSuccessors<'a> {
    arena: &'a Arena,
    keeps: &'a [VertexId],
    sigma_weight: &'a [i64],
}

impl Successors for KeptSuccessors<'_> {
    #[inline]
    fn successors(&self, v: VertexId) -> impl Iterator<Item = (VertexId, i64)> + '_ {
        let (keep, sigma_weight) = (self.keeps[v as usize], self.sigma_weight[v as usize]);
        let range = if keep == DROPS_ALL {
            0..0
        } else {
            self.arena.succ_range(v)
        };
        let (targets, weights) = (self.arena.succ_targets(), self.arena.succ_weights());
        range.filter_map(move |e| {
            let (target, weight) = (targets[e], weights.get(e));
            (keep == KEEPS_ALL || (target == keep && weight == sigma_weight))
                .then_some((target, weight))
        })
    }
}

impl Successors for Graph {
    #[inline]
    fn successors(&self, v: VertexId) -> impl Iterator<Item = (VertexId, i64)> + '_ {
        Graph::successors(self, v)
    }
}

/// An inactive vertex: no edges.
pub(crate) const DROPS_ALL: VertexId = VertexId::MAX;
/// An active player-0 vertex: every edge into the subset.
pub(crate) const KEEPS_ALL: VertexId = VertexId::MAX - 1;

impl Graph {
    /// Rebuilds this graph (reusing its buffers) as `G_σ1` restricted to `active`; σ1 is
    /// `sigma_edge` (indices into the arena's CSR arrays, read at active player-1 vertices).
    pub fn rebuild(
        &mut self,
        arena: &Arena,
        active: &[bool],
        sigma_edge: &[u32],
        threads: &Threads,
    ) {
        self.mark(arena, active, sigma_edge, threads);
        self.build_predecessors(arena, active, threads);
        self.build_successors(arena, active, threads);
    }

    /// The first step of [`Graph::rebuild`]: one word per vertex saying what it keeps
    /// ([`Graph::keeps`]).
    pub(crate) fn mark(
        &mut self,
        arena: &Arena,
        active: &[bool],
        sigma_edge: &[u32],
        threads: &Threads,
    ) {
        self.successors_built = false;
        self.predecessors_built = false;
        let n = arena.vertex_count();
        let targets = arena.succ_targets();
        let weights = arena.succ_weights();
        let parallel = threads.parallel(n + arena.edge_count()).then_some(threads);
        // One pass over the vertices names what each keeps, so that the edge passes below
        // read one word per source instead of its activity, owner and σ1 edge.
        // (The marking pass rewrites every `keeps` word, and `sigma_weight` wherever `keeps`
        // names a σ1 target; the scratch is only sized here, once per game.)
        if self.keeps.len() != n {
            match parallel {
                Some(threads) => threads.install(|| {
                    refill(&mut self.keeps, n, DROPS_ALL);
                    refill(&mut self.sigma_weight, n, 0);
                }),
                None => {
                    self.keeps.resize(n, DROPS_ALL);
                    self.sigma_weight.resize(n, 0);
                }
            }
        }
        let mark = |v: usize, keeps: &mut u32, sigma_weight: &mut i64| {
            *keeps = if !active[v] {
                DROPS_ALL
            } else if arena.owner(v as VertexId) == Player::Zero {
                KEEPS_ALL
            } else {
                let e = sigma_edge[v] as usize;
                *sigma_weight = weights.get(e);
                targets[e]
            };
        };
        per_vertex_pair(parallel, &mut self.keeps, &mut self.sigma_weight, mark);
    }

    /// What each vertex keeps, as [`Graph::mark`] left it: [`DROPS_ALL`] (inactive),
    /// [`KEEPS_ALL`] (an active player-0 vertex) or the target of its σ1 edge.
    pub fn keeps(&self) -> &[VertexId] {
        &self.keeps
    }

    /// Whether the successor side is built for the words [`Graph::mark`] last wrote.
    pub(crate) fn has_successors(&self) -> bool {
        self.successors_built
    }

    /// Whether the predecessor side is built for the words [`Graph::mark`] last wrote (an
    /// evaluation whose reachability and Bellman–Ford run on the device never builds it).
    pub(crate) fn has_predecessors(&self) -> bool {
        self.predecessors_built
    }

    /// The successors of the graph [`Graph::mark`] described, read from `arena` (the one it
    /// was given) without building them.
    pub(crate) fn kept_successors<'a>(&'a self, arena: &'a Arena) -> KeptSuccessors<'a> {
        KeptSuccessors {
            arena,
            keeps: &self.keeps,
            sigma_weight: &self.sigma_weight,
        }
    }

    /// A step of [`Graph::rebuild`]: the successor side from [`Graph::mark`]'s words
    /// (`active` as given to it).
    pub(crate) fn build_successors(&mut self, arena: &Arena, active: &[bool], threads: &Threads) {
        let n = arena.vertex_count();
        let targets = arena.succ_targets();
        let weights = arena.succ_weights();
        let offsets = arena.succ_offsets();
        let parallel = threads.parallel(n + arena.edge_count()).then_some(threads);
        let keeps = &self.keeps[..];
        let sigma_weight = &self.sigma_weight[..];
        // A σ1 vertex keeps its σ1 edge and the edge's identical twins (same target and
        // weight), as its target's predecessor list below does: both sides hold the same
        // multiset of edges.
        let kept = |v: usize, e: usize| {
            let target = targets[e];
            match keeps[v] {
                DROPS_ALL => false,
                KEEPS_ALL => active[target as usize],
                keep => {
                    target == keep && weights.get(e) == sigma_weight[v] && active[target as usize]
                }
            }
        };
        build_filtered(
            parallel,
            offsets,
            &mut self.mask,
            Side {
                offsets: &mut self.succ_offsets,
                ids: &mut self.succ_targets,
                weights: &mut self.succ_weights,
            },
            kept,
            |e| (targets[e], weights.get(e)),
        );
        self.successors_built = true;
    }

    /// A step of [`Graph::rebuild`]: the predecessor side from [`Graph::mark`]'s words
    /// (`active` as given to it).
    pub(crate) fn build_predecessors(&mut self, arena: &Arena, active: &[bool], threads: &Threads) {
        let n = arena.vertex_count();
        let parallel = threads.parallel(n + arena.edge_count()).then_some(threads);
        let keeps = &self.keeps[..];
        let sigma_weight = &self.sigma_weight[..];
        let sources = arena.pred_sources();
        let pred_weights = arena.pred_weights();
        let pred_offsets = arena.pred_offsets();
        // A predecessor edge p → x stays when p keeps every edge, or when it is p's σ1 edge
        // (same target and weight: a parallel edge of another weight is not σ1's).
        let kept = |x: usize, i: usize| {
            active[x] && {
                let p = sources[i] as usize;
                match keeps[p] {
                    DROPS_ALL => false,
                    KEEPS_ALL => true,
                    target => target as usize == x && sigma_weight[p] == pred_weights.get(i),
                }
            }
        };
        build_filtered(
            parallel,
            pred_offsets,
            &mut self.mask,
            Side {
                offsets: &mut self.pred_offsets,
                ids: &mut self.pred_sources,
                weights: &mut self.pred_weights,
            },
            kept,
            |i| (sources[i], pred_weights.get(i)),
        );
        self.predecessors_built = true;
    }

    /// Number of vertex slots (the arena's vertex count).
    pub(crate) fn len(&self) -> usize {
        self.keeps.len()
    }

    /// Number of edges (of the predecessor side, which must be built: every host search
    /// asks this first, so the check here guards them all; the per-vertex reads only check
    /// in debug builds).
    pub(crate) fn edge_count(&self) -> usize {
        assert!(
            self.predecessors_built,
            "predecessors read before they were built"
        );
        self.pred_sources.len()
    }

    /// Successor ids of `v`.
    #[inline]
    pub(crate) fn successor_ids(&self, v: VertexId) -> &[VertexId] {
        assert!(
            self.successors_built,
            "successors read before they were built"
        );
        &self.succ_targets
            [self.succ_offsets[v as usize] as usize..self.succ_offsets[v as usize + 1] as usize]
    }

    /// Predecessor ids of `v`.
    #[inline]
    pub(crate) fn predecessor_ids(&self, v: VertexId) -> &[VertexId] {
        debug_assert!(
            self.predecessors_built,
            "predecessors read before they were built"
        );
        &self.pred_sources
            [self.pred_offsets[v as usize] as usize..self.pred_offsets[v as usize + 1] as usize]
    }

    /// `(successor, weight)` of `v` in this graph.
    #[inline]
    pub(crate) fn successors(
        &self,
        v: VertexId,
    ) -> impl ExactSizeIterator<Item = (VertexId, i64)> + '_ {
        assert!(
            self.successors_built,
            "successors read before they were built"
        );
        let range =
            self.succ_offsets[v as usize] as usize..self.succ_offsets[v as usize + 1] as usize;
        self.succ_targets[range.clone()]
            .iter()
            .copied()
            .zip(self.succ_weights[range].iter().copied())
    }

    /// `(predecessor, weight of predecessor → v)` of `v` in this graph.
    #[inline]
    pub(crate) fn predecessors(
        &self,
        v: VertexId,
    ) -> impl ExactSizeIterator<Item = (VertexId, i64)> + '_ {
        debug_assert!(
            self.predecessors_built,
            "predecessors read before they were built"
        );
        let range =
            self.pred_offsets[v as usize] as usize..self.pred_offsets[v as usize + 1] as usize;
        self.pred_sources[range.clone()]
            .iter()
            .copied()
            .zip(self.pred_weights[range].iter().copied())
    }
}

/// Sets both columns at every vertex with `f(v, a, b)`, chunk by chunk on `threads`' pool
/// when given.
fn per_vertex_pair<A: Send, B: Send>(
    threads: Option<&Threads>,
    a: &mut [A],
    b: &mut [B],
    f: impl Fn(usize, &mut A, &mut B) + Sync,
) {
    let run = |c: usize, a: &mut [A], b: &mut [B]| {
        for (i, (a, b)) in a.iter_mut().zip(b).enumerate() {
            f(c * CHUNK + i, a, b);
        }
    };
    match threads {
        Some(threads) => threads.install(|| {
            chunked::for_each_chunk_pair_mut(a, b, CHUNK, run);
        }),
        None => run(0, a, b),
    }
}

/// One side of a [`Graph`], in CSR form.
struct Side<'a> {
    offsets: &'a mut Vec<u32>,
    ids: &'a mut Vec<VertexId>,
    weights: &'a mut Vec<i64>,
}

/// Builds one side from the arena's entries: vertex `v`'s candidates are entries
/// `from[v]..from[v + 1]` (the arena's CSR or CSC), of which it keeps those with
/// `kept(v, entry)`, as `entry(entry)` (id and weight) in the arena's order. A first pass
/// evaluates `kept` once per candidate, counts, and notes the answer in `mask` (one byte per
/// candidate, so each vertex writes its own range); after the prefix sum, the filling pass
/// reads the mask rather than evaluating `kept` again (its reads of the other endpoint's
/// words are random, a likely cache miss each on large games). With `threads`, both passes
/// and the prefix sum run on its pool, chunk by chunk; the result is the same either way.
fn build_filtered(
    threads: Option<&Threads>,
    from: &[u32],
    mask: &mut Vec<u8>,
    side: Side<'_>,
    kept: impl Fn(usize, usize) -> bool + Sync,
    entry: impl Fn(usize) -> (VertexId, i64) + Sync,
) {
    let n = from.len() - 1;
    let candidates = from[n] as usize;
    let Side {
        offsets,
        ids,
        weights,
    } = side;
    // Counts `chunk`'s kept entries into `counts` (one per vertex), their marks into `mask`
    // (the chunk's candidates).
    let count = |chunk: std::ops::Range<usize>, counts: &mut [u32], mask: &mut [u8]| {
        let base = from[chunk.start] as usize;
        for (v, count) in chunk.zip(counts) {
            let mut kept_here = 0;
            for i in from[v] as usize..from[v + 1] as usize {
                let keep = kept(v, i);
                mask[i - base] = keep as u8;
                kept_here += keep as u32;
            }
            *count = kept_here;
        }
    };
    // Writes `chunk`'s kept entries into its pieces of the columns.
    let fill = |chunk: std::ops::Range<usize>,
                mask: &[u8],
                out_ids: &mut [VertexId],
                out_weights: &mut [i64]| {
        let first = from[chunk.start] as usize;
        let kept = mask[first..from[chunk.end] as usize]
            .iter()
            .enumerate()
            .filter(|&(_, &kept)| kept != 0)
            .map(|(j, _)| entry(first + j));
        for ((id, weight), (kept_id, kept_weight)) in out_ids.iter_mut().zip(out_weights).zip(kept)
        {
            (*id, *weight) = (kept_id, kept_weight);
        }
    };
    let Some(threads) = threads else {
        offsets.clear();
        offsets.resize(n + 1, 0);
        mask.resize(candidates, 0);
        count(0..n, &mut offsets[1..], mask);
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let total = offsets[n] as usize;
        ids.clear();
        ids.resize(total, 0);
        weights.clear();
        weights.resize(total, 0);
        fill(0..n, mask, ids, weights);
        return;
    };
    threads.install(|| {
        refill(offsets, n + 1, 0);
        if mask.len() < candidates {
            refill(mask, candidates, 0);
        }
        // Each chunk of vertices owns its counts and its candidates' marks.
        let mut pieces = Vec::with_capacity(n.div_ceil(CHUNK));
        let (mut rest_counts, mut rest_mask) = (&mut offsets[1..], &mut mask[..]);
        for chunk in Threads::chunks(n, CHUNK) {
            let len = (from[chunk.end] - from[chunk.start]) as usize;
            let (piece_counts, tail_counts) =
                std::mem::take(&mut rest_counts).split_at_mut(chunk.len());
            let (piece_mask, tail_mask) = std::mem::take(&mut rest_mask).split_at_mut(len);
            rest_counts = tail_counts;
            rest_mask = tail_mask;
            pieces.push((chunk, piece_counts, piece_mask));
        }
        chunked::for_each_owned(pieces, |(chunk, counts, mask)| count(chunk, counts, mask));
        prefix_sum(&mut offsets[1..]);
        let total = offsets[n] as usize;
        refill(ids, total, 0);
        refill(weights, total, 0);
        // Each chunk of vertices owns one contiguous piece of both columns.
        let mut pieces = Vec::with_capacity(n.div_ceil(CHUNK));
        let (mut rest_ids, mut rest_weights) = (&mut ids[..], &mut weights[..]);
        for chunk in Threads::chunks(n, CHUNK) {
            let len = (offsets[chunk.end] - offsets[chunk.start]) as usize;
            let (piece_ids, tail_ids) = std::mem::take(&mut rest_ids).split_at_mut(len);
            let (piece_weights, tail_weights) = std::mem::take(&mut rest_weights).split_at_mut(len);
            rest_ids = tail_ids;
            rest_weights = tail_weights;
            pieces.push((chunk, piece_ids, piece_weights));
        }
        let mask = &*mask;
        chunked::for_each_owned(pieces, |(chunk, piece_ids, piece_weights)| {
            fill(chunk, mask, piece_ids, piece_weights);
        });
    });
}

/// Empties `values` and fills it with `len` copies of `value` on the current rayon pool:
/// on a large game these columns are hundreds of megabytes, which one thread would zero
/// (and page in) alone.
fn refill<T: Copy + Send + Sync>(values: &mut Vec<T>, len: usize, value: T) {
    chunked::refill(values, len, value);
}

/// In-place inclusive prefix sum on the current rayon pool (chunk sums, their scan, then
/// each chunk's own).
pub(crate) fn prefix_sum(values: &mut [u32]) {
    let sums: Vec<u32> =
        chunked::values_of_chunks(values.len(), CHUNK, |_, chunk| values[chunk].iter().sum());
    let mut bases = Vec::with_capacity(sums.len());
    let mut running = 0u32;
    for s in sums {
        bases.push(running);
        running += s;
    }
    chunked::values_of_chunks_mut(values, CHUNK, |k, chunk| {
        let mut running = bases[k];
        for x in chunk {
            running += *x;
            *x = running;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};

    /// The parallel build gives the same graph as the sequential one, and the one the
    /// definition gives; the arena read through the words lists the same successors; a
    /// rebuild over reused buffers equals a fresh build.
    #[test]
    fn parallel_build_equals_sequential() {
        let arena = random(
            RandomParams {
                vertices: 60_000,
                min_degree: 1,
                max_degree: 4,
                ..RandomParams::default()
            },
            5,
        );
        let n = arena.vertex_count();
        let active: Vec<bool> = (0..n).map(|v| v % 7 != 3).collect();
        let sigma: Vec<u32> = (0..n as VertexId)
            .map(|v| {
                let r = arena.succ_range(v);
                (r.start + v as usize % r.len()) as u32
            })
            .collect();
        let mut one = Graph::default();
        one.rebuild(&arena, &active, &sigma, &Threads::one());
        let mut many = Graph::default();
        many.rebuild(&arena, &active, &sigma, &Threads::new(3));
        assert_eq!(one.succ_offsets, many.succ_offsets);
        assert_eq!(one.succ_targets, many.succ_targets);
        assert_eq!(one.pred_sources, many.pred_sources);
        assert_eq!(one.pred_weights, many.pred_weights);
        // Reading the arena through the words gives the same successors, once edges into
        // inactive vertices are dropped; an inactive vertex has none either way.
        let kept = one.kept_successors(&arena);
        for v in 0..n as VertexId {
            let through_words: Vec<(VertexId, i64)> = kept
                .successors(v)
                .filter(|&(u, _)| active[u as usize])
                .collect();
            assert_eq!(
                through_words,
                one.successors(v).collect::<Vec<_>>(),
                "vertex {v}"
            );
            if !active[v as usize] {
                assert_eq!(kept.successors(v).count(), 0);
            }
        }
        // Every successor entry has its predecessor entry, and the graph keeps exactly what
        // the definition says.
        let mut kept_edges = 0;
        for v in 0..n as VertexId {
            for (u, w) in one.successors(v) {
                assert!(one.predecessors(u).any(|(p, pw)| p == v && pw == w));
            }
            let expected: Vec<(VertexId, i64)> = if !active[v as usize] {
                Vec::new()
            } else {
                let sigma_edge = sigma[v as usize] as usize;
                let targets = arena.succ_targets();
                arena
                    .succ_range(v)
                    .filter(|&e| {
                        let u = targets[e];
                        active[u as usize]
                            && (arena.owner(v) == Player::Zero
                                || (u == targets[sigma_edge]
                                    && arena.weight(e) == arena.weight(sigma_edge)))
                    })
                    .map(|e| (targets[e], arena.weight(e)))
                    .collect()
            };
            assert_eq!(
                one.successors(v).collect::<Vec<_>>(),
                expected,
                "vertex {v}"
            );
            kept_edges += expected.len();
        }
        assert_eq!(one.edge_count(), kept_edges);
        assert!(one.edge_count() > 0);
        // Rebuilding over a smaller subset (the buffers and the marks reused) gives the graph
        // of a fresh build, on one thread and on several.
        let fewer: Vec<bool> = (0..n).map(|v| active[v] && v % 3 != 1).collect();
        for threads in [Threads::one(), Threads::new(3)] {
            let mut fresh = Graph::default();
            fresh.rebuild(&arena, &fewer, &sigma, &threads);
            let mut reused = Graph::default();
            reused.rebuild(&arena, &active, &sigma, &threads);
            reused.rebuild(&arena, &fewer, &sigma, &threads);
            assert_eq!(fresh.succ_offsets, reused.succ_offsets);
            assert_eq!(fresh.succ_targets, reused.succ_targets);
            assert_eq!(fresh.succ_weights, reused.succ_weights);
            assert_eq!(fresh.pred_offsets, reused.pred_offsets);
            assert_eq!(fresh.pred_sources, reused.pred_sources);
            assert_eq!(fresh.pred_weights, reused.pred_weights);
            assert!(reused.edge_count() < one.edge_count());
        }
    }
}
