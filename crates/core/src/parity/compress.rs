//! Priority compression: renumbering a max-parity game's priorities to the fewest that give
//! every play the same winner.
//!
//! Only the order of priorities and their parities matter to who wins a play (the highest
//! priority seen infinitely often, even or odd), so any renumbering that keeps both is
//! sound. [`compress`] sorts the distinct priorities, merges each run of neighbours of equal
//! parity into one, drops the gaps, and starts at 0 (even) or 1 (odd): the result is
//! `0..=k` or `1..=k` with neighbours of opposite parity. It is linear in the number of
//! vertices when the priorities span at most a few times as many values as there are
//! vertices (the usual case), else `O(n log d)`.
//!
//! [`compress_per_scc`] goes further: every infinite play ends inside one strongly connected
//! component, so the priorities of different components need not be ordered against each
//! other, and a vertex on no cycle never decides a play. Each cyclic component is compressed
//! on its own and acyclic vertices get priority 0. That costs an SCC pass, so the reader
//! runs it only when the global compression leaves an energy reduction that does not fit
//! in 64 bits (then it can make it fit: weights grow with the number of priorities).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::arena::{Arena, VertexId};
use crate::fresh::written_zeros;
use crate::graph::tarjan::SccFinder;
use crate::solve::chunked;

/// Compressed priorities and what the compression did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compressed {
    /// The compressed priority of each vertex, by id.
    pub priority: Vec<u32>,
    /// Distinct priorities in the input.
    pub input_distinct: usize,
    /// Distinct priorities after compression.
    pub distinct: usize,
    /// Whether each strongly connected component was compressed on its own.
    pub per_scc: bool,
}

impl Compressed {
    /// The number of vertices of each compressed priority (index = priority; the length is
    /// the highest priority plus one). With few priorities each task counts into a
    /// histogram of its own; with many (games whose priorities are nearly all distinct)
    /// the tasks add into one histogram of atomic counters, written before it is read (see
    /// [`crate::fresh::written_zeros`]). The per-task histograms used to serve every size:
    /// on games with as many priorities as vertices each was a zeroed array as large as the
    /// game, read by the reduction before it was written, and on the 2-core build machine
    /// the copy-on-write faults that followed were 4 % of the CPU time of `counter-rr` and
    /// `counter-core` solves (a `perf` profile); their parse took 26–42 ms, now 21–31
    /// (`counter-core 20000`), and 114–134 ms, now 74–104, on a random game of 4·10^5
    /// vertices and as many priorities.
    pub fn counts(&self) -> Vec<u64> {
        let priority = &self.priority;
        let n = priority.len();
        let top = chunked::fold(n, || 0, |m, v| m.max(priority[v]), u32::max) as usize;
        if top < PRIVATE_BINS {
            // A histogram per task, about two tasks per thread (each a zeroed vector).
            let chunk = n.div_ceil(2 * rayon::current_num_threads()).max(1 << 16);
            let pieces = chunked::values_of_chunks(n, chunk, |_, range| {
                let mut counts = vec![0u64; top + 1];
                priority[range]
                    .iter()
                    .for_each(|&p| counts[p as usize] += 1);
                counts
            });
            let mut counts = vec![0u64; top + 1];
            for piece in pieces {
                counts.iter_mut().zip(piece).for_each(|(x, y)| *x += y);
            }
            return counts;
        }
        let counts: Vec<AtomicU64> = written_zeros(top + 1);
        chunked::for_each_chunk_of(n, 1 << 16, |_, range| {
            for &p in &priority[range] {
                counts[p as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        counts.into_iter().map(AtomicU64::into_inner).collect()
    }
}

/// Histogram bins below which each task of [`Compressed::counts`] keeps its own (at most
/// 32 KiB); above, one shared histogram.
const PRIVATE_BINS: usize = 1 << 12;

/// The rank of each of the sorted distinct priorities `sorted`: neighbours of equal parity
/// share a rank, the first rank is the first priority's parity (0 or 1).
fn ranks(sorted: impl IntoIterator<Item = u64>) -> impl Iterator<Item = u32> {
    let mut last: Option<(u64, u32)> = None;
    sorted.into_iter().map(move |p| {
        let rank = match last {
            None => (p % 2) as u32,
            Some((q, rank)) if q % 2 == p % 2 => rank,
            Some((_, rank)) => rank + 1,
        };
        last = Some((p, rank));
        rank
    })
}

/// Compresses `priorities` globally (see the module docs).
pub fn compress(priorities: &[u64]) -> Compressed {
    let bounds = |(lo, hi): (u64, u64), p: u64| (lo.min(p), hi.max(p));
    let (min, max) = chunked::fold(
        priorities.len(),
        || (u64::MAX, 0),
        |acc, v| bounds(acc, priorities[v]),
        |a, b| bounds(bounds(a, b.0), b.1),
    );
    if priorities.is_empty() {
        return Compressed {
            priority: Vec::new(),
            input_distinct: 0,
            distinct: 0,
            per_scc: false,
        };
    }
    let span = max - min;
    let dense_limit = (4 * priorities.len() as u64).max(1 << 16);
    if span < dense_limit {
        // A table over the range: present priorities, then their ranks.
        const ABSENT: u32 = u32::MAX;
        // Which priorities occur, marked on all threads: a flag is stored only where it is
        // still clear, so the few flags of a typical game are read by every thread but
        // written once (no cache line bounces between the threads).
        let seen: Vec<AtomicBool> = bytemuck::allocation::zeroed_vec(span as usize + 1);
        chunked::for_each_chunk_of(priorities.len(), 1 << 16, |_, range| {
            for &p in &priorities[range] {
                let flag = &seen[(p - min) as usize];
                if !flag.load(Ordering::Relaxed) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        });
        let present: Vec<u64> = chunked::filter_map(span as usize + 1, |k| {
            seen[k].load(Ordering::Relaxed).then_some(k as u64)
        });
        let mut rank_of = vec![ABSENT; span as usize + 1];
        let rank: Vec<u32> = ranks(present.iter().map(|&k| k + min)).collect();
        for (&k, &r) in present.iter().zip(&rank) {
            rank_of[k as usize] = r;
        }
        let priority: Vec<u32> = chunked::map(priorities.len(), |v| {
            rank_of[(priorities[v] - min) as usize]
        });
        return Compressed {
            priority,
            input_distinct: present.len(),
            distinct: count_distinct(rank.into_iter()),
            per_scc: false,
        };
    }
    let mut sorted = priorities.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let rank: Vec<u32> = ranks(sorted.iter().copied()).collect();
    let priority = priorities
        .iter()
        .map(|p| {
            rank[sorted
                .binary_search(p)
                .expect("every priority is in the sorted set")]
        })
        .collect();
    Compressed {
        priority,
        input_distinct: sorted.len(),
        distinct: count_distinct(rank.iter().copied()),
        per_scc: false,
    }
}

/// Distinct values of a nondecreasing sequence.
fn count_distinct(sorted: impl Iterator<Item = u32>) -> usize {
    let mut last = None;
    sorted.filter(|&r| last.replace(r) != Some(r)).count()
}

/// Compresses each strongly connected component of `arena` on its own, starting from the
/// globally compressed `global` (see the module docs).
pub fn compress_per_scc(arena: &Arena, global: &Compressed) -> Compressed {
    let n = arena.vertex_count();
    let levels = global
        .priority
        .iter()
        .copied()
        .max()
        .map_or(0, |p| p as usize + 1);
    let mut priority = vec![0u32; n];
    let mut seen_in = vec![u32::MAX; levels];
    let mut rank_of = vec![0u32; levels];
    let mut levels_here: Vec<u32> = Vec::new();
    let mut component_id = 0u32;
    let targets = arena.succ_targets();
    SccFinder::new(n).run(
        0..n as VertexId,
        |v| &targets[arena.succ_range(v)],
        |_| true,
        |component, cyclic| {
            if !cyclic {
                return; // on no cycle: priority 0 (already set)
            }
            levels_here.clear();
            for &v in component {
                let p = global.priority[v as usize];
                if seen_in[p as usize] != component_id {
                    seen_in[p as usize] = component_id;
                    levels_here.push(p);
                }
            }
            component_id += 1;
            levels_here.sort_unstable();
            for (&p, rank) in levels_here
                .iter()
                .zip(ranks(levels_here.iter().map(|&p| u64::from(p))))
            {
                rank_of[p as usize] = rank;
            }
            for &v in component {
                priority[v as usize] = rank_of[global.priority[v as usize] as usize];
            }
        },
    );
    let top = priority.iter().copied().max().unwrap_or(0) as usize;
    let mut present = vec![false; top + 1];
    for &p in &priority {
        present[p as usize] = true;
    }
    Compressed {
        priority,
        input_distinct: global.input_distinct,
        distinct: present.iter().filter(|&&p| p).count(),
        per_scc: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{EdgeList, Player};

    #[test]
    fn merges_equal_parity_neighbours_and_drops_gaps() {
        let c = compress(&[10, 4, 7, 8, 4, 13, 100]);
        // Sorted distinct: 4 7 8 10 13 100, parities e o e e o e: ranks 0 1 2 2 3 4.
        assert_eq!(c.priority, vec![2, 0, 1, 2, 0, 3, 4]);
        assert_eq!((c.input_distinct, c.distinct, c.per_scc), (6, 5, false));
        // Odd lowest priority starts at 1.
        let c = compress(&[3, 5, 9, 12]);
        assert_eq!(c.priority, vec![1, 1, 1, 2]);
        assert_eq!((c.input_distinct, c.distinct), (4, 2));
    }

    #[test]
    fn sparse_priorities_compress_alike() {
        let huge = [u64::MAX, 0, u64::MAX - 3, 1 << 40, u64::MAX];
        let c = compress(&huge);
        // sorted: 0, 2^40 (even, even), MAX-3 (even), MAX (odd): 0 0 0 1
        assert_eq!(c.priority, vec![1, 0, 0, 0, 1]);
        assert_eq!((c.input_distinct, c.distinct), (4, 2));
        assert_eq!(c.counts(), vec![3, 2]);
    }

    /// Both ways of counting (a histogram per task below `PRIVATE_BINS` priorities, one
    /// shared histogram of atomic counters above) count every vertex once, on one thread
    /// and on several.
    #[test]
    fn counts_agree_with_a_plain_histogram_at_both_sizes() {
        for distinct in [5u32, 3 * PRIVATE_BINS as u32] {
            let priority: Vec<u32> = (0..200_000u32)
                .map(|i| i.wrapping_mul(2_654_435_761) % distinct)
                .collect();
            let mut expected = vec![0u64; distinct as usize];
            for &p in &priority {
                expected[p as usize] += 1;
            }
            let c = Compressed {
                priority,
                input_distinct: distinct as usize,
                distinct: distinct as usize,
                per_scc: false,
            };
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("a pool");
                assert_eq!(
                    pool.install(|| c.counts()),
                    expected,
                    "{distinct} priorities"
                );
            }
        }
    }

    #[test]
    fn compression_keeps_order_and_parity() {
        let priorities: Vec<u64> = (0..500u64).map(|i| (i * 7919) % 613).collect();
        let c = compress(&priorities);
        for (a, &pa) in priorities.iter().enumerate() {
            assert_eq!(u64::from(c.priority[a]) % 2, pa % 2);
            for (b, &pb) in priorities.iter().enumerate() {
                if pa <= pb {
                    assert!(c.priority[a] <= c.priority[b]);
                }
            }
        }
    }

    #[test]
    fn per_scc_compression_orders_each_component_alone() {
        // Two 2-cycles: {0,1} with priorities 7, 8 and {2,3} with 9, 20; vertex 4 on no
        // cycle with priority 33 leads into both.
        let mut e = EdgeList::default();
        for (s, t) in [(0, 1), (1, 0), (2, 3), (3, 2), (4, 0), (4, 2)] {
            e.push(s, t, 0);
        }
        let arena = Arena::from_edges(vec![Player::Zero; 5], e, None).unwrap();
        let global = compress(&[7, 8, 9, 20, 33]);
        assert_eq!(global.priority, vec![1, 2, 3, 4, 5]);
        let local = compress_per_scc(&arena, &global);
        assert_eq!(local.priority, vec![1, 2, 1, 2, 0]);
        assert_eq!(
            (local.input_distinct, local.distinct, local.per_scc),
            (5, 3, true)
        );
    }
}
