//! Strongly connected components of a [`Graph`] restricted to a vertex subset.
//!
//! - One thread: iterative Tarjan; a few vertices of a large graph: Tarjan over their own
//!   small CSR.
//! - Several threads: **trim**, then **forward–backward** (FB) splits, the parts beside a
//!   large component trimmed again before their own split, then Tarjan on small parts (the
//!   scheme of Slota et al.'s *Multistep*). Trimming peels, in parallel frontier rounds with
//!   per-vertex degree counters, every vertex with no predecessor or no successor left in
//!   its part (each a component of its own); most vertices of model-checking games go that
//!   way. On what remains, FB takes a pivot `p` of a part (the largest product of degrees
//!   inside the part), marks what reaches `p` (B) and then what `p` reaches through B
//!   (parallel frontier searches inside the part): that is `p`'s component, F ∩ B. The rest
//!   splits into B's other vertices and the vertices outside B — each a union of whole
//!   components, since a component reaches `p` with all its members or with none — which
//!   are solved independently (in parallel, wave after wave) the same way; parts below
//!   [`SEQUENTIAL_BELOW`] vertices go to Tarjan, and so do the parts after
//!   [`MISSES_BEFORE_TARJAN`] splits in a row whose component was small (FB finds one
//!   component per search, which stops paying when there are many medium ones).
//!
//! Component *numbers* depend on the schedule; the partition into components does not
//! (it is a property of the graph), and every caller uses only the partition.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering::Relaxed};

use super::Graph;
use super::reach::explore;
use super::tarjan::{Marks, Search};
use crate::arena::VertexId;
use crate::solve::chunked;
use crate::solve::threads::{Threads, positions_where};

mod compact;
pub(crate) use compact::member_roots;
pub use compact::tarjan;
use compact::tarjan_compact;

/// Marks "no strongly connected component" (vertex outside the subset).
pub(crate) const NO_COMPONENT: u32 = u32::MAX;

/// Subsets of fewer than a `1 / COMPACT_FRACTION` of the graph's vertices (and fewer than
/// [`SEQUENTIAL_BELOW`]) take Tarjan over their own compact CSR.
const COMPACT_FRACTION: usize = 8;

/// Parts smaller than this run Tarjan on one thread.
const SEQUENTIAL_BELOW: usize = 1 << 14;

/// Components of `graph` restricted to `inside`: the component of each vertex
/// ([`NO_COMPONENT`] outside) and the number of components.
#[cfg(test)]
pub(crate) fn components(graph: &Graph, inside: &[bool], threads: &Threads) -> (Vec<u32>, u32) {
    let partition = components_alone_last(graph, inside, threads);
    (partition.component, partition.count)
}

/// The components of a graph restricted to a subset, as [`components_alone_last`] numbers
/// them.
pub(crate) struct Partition {
    /// Each vertex's component ([`NO_COMPONENT`] outside).
    pub component: Vec<u32>,
    pub count: u32,
    /// From which number on the components are vertices the trims peeled, one each,
    /// numbered in the order of their ids (as `cycles::Numbers::alone_from` reads it; the
    /// count when none is known).
    pub alone_from: u32,
    /// A member of the largest component forward–backward found, if it found one.
    pub largest: Option<VertexId>,
}

/// [`components`], the vertices the trims peeled numbered last.
pub(crate) fn components_alone_last(
    graph: &Graph,
    inside: &[bool],
    threads: &Threads,
) -> Partition {
    let sequential = |(component, count): (Vec<u32>, u32)| Partition {
        component,
        count,
        alone_from: count,
        largest: None,
    };
    if !threads.parallel(graph.len() + graph.edge_count()) {
        return sequential(tarjan(graph, inside));
    }
    threads.install(|| {
        let members = positions_where(inside, |&i| i);
        // A few vertices of a large graph (their edges found by binary search among them):
        // Tarjan over their own CSR. Most of a small graph (a clique of 500: 250,000
        // edges, each searched) goes the parallel way, its trim then Tarjan on the part.
        if members.len() < SEQUENTIAL_BELOW && members.len() * COMPACT_FRACTION < graph.len() {
            return sequential(tarjan_compact(graph, &members));
        }
        Parallel::new(graph, inside).run(&members)
    })
}
/// A part of the vertices left to split: a union of whole components.
struct Part {
    id: u32,
    members: Vec<VertexId>,
    /// How many splits in a row, down to this part, found only a small component.
    misses: u8,
}

/// After this many splits in a row that found only a small component, the parts go to
/// Tarjan whatever their size.
const MISSES_BEFORE_TARJAN: u8 = 2;

/// Search marks of FB.
const FORWARD: u8 = 1;
const BACKWARD: u8 = 2;
/// Not (or no longer) in any part.
const NO_PART: u32 = u32::MAX;
/// Peeled by the trim, its component not yet numbered.
const TRIMMED: u32 = u32::MAX - 1;
/// A peeled vertex's component until `run` numbers it (after every other component).
const PEELED: u32 = u32::MAX - 1;

/// The `members` that satisfy `keep`, in order, found in parallel.
fn members_where(members: &[VertexId], keep: impl Fn(VertexId) -> bool + Sync) -> Vec<VertexId> {
    chunked::filter_map(members.len(), |i| keep(members[i]).then_some(members[i]))
}

/// The shared state of the parallel algorithm; vertices of different parts are touched by
/// different tasks only, so relaxed atomics suffice.
struct Parallel<'a> {
    graph: &'a Graph,
    component: Vec<AtomicU32>,
    next_component: AtomicU32,
    part: Vec<AtomicU32>,
    next_part: AtomicU32,
    /// The largest component forward–backward found: its size above 32 bits, its pivot
    /// below (0: none found).
    largest: AtomicU64,
    mark: Vec<AtomicU8>,
    /// Tarjan's per-vertex index (0: not seen) and low link (parts are disjoint, so one
    /// array serves all).
    index: Vec<AtomicU32>,
    low: Vec<AtomicU32>,
    /// The trim's degree counters inside each vertex's part (one array serves all parts).
    in_degree: Vec<AtomicU32>,
    out_degree: Vec<AtomicU32>,
}

impl<'a> Parallel<'a> {
    fn new(graph: &'a Graph, inside: &[bool]) -> Parallel<'a> {
        let n = graph.len();
        let atomic = |x: u32| chunked::map(n, |_| AtomicU32::new(x));
        Parallel {
            graph,
            component: atomic(NO_COMPONENT),
            next_component: AtomicU32::new(0),
            part: chunked::map(inside.len(), |v| {
                AtomicU32::new(if inside[v] { 0 } else { NO_PART })
            }),
            next_part: AtomicU32::new(1),
            largest: AtomicU64::new(0),
            mark: chunked::map(n, |_| AtomicU8::new(0)),
            index: atomic(0),
            low: atomic(0),
            in_degree: atomic(0),
            out_degree: atomic(0),
        }
    }

    /// The components of the `members` (every vertex inside, in order).
    fn run(self, members: &[VertexId]) -> Partition {
        let started = std::time::Instant::now();
        let remaining = self.trim(0, members);
        tracing::debug!(
            members = members.len(),
            remaining = remaining.len(),
            seconds = started.elapsed().as_secs_f64(),
            "components: trimmed"
        );
        // Parts are solved in waves (no recursion, so no deep stacks): each part of a wave
        // either goes to Tarjan or splits into two parts of the next wave (trimmed first
        // unless bound for Tarjan).
        let mut wave = vec![Part {
            id: 0,
            members: remaining,
            misses: 0,
        }];
        while !wave.is_empty() {
            tracing::debug!(
                parts = wave.len(),
                vertices = wave.iter().map(|p| p.members.len()).sum::<usize>(),
                seconds = started.elapsed().as_secs_f64(),
                "components: a wave"
            );
            wave = chunked::flat_map_owned(wave, |part| self.step(part));
        }
        // The peeled vertices last, in id order.
        let alone_from = self.next_component.load(Relaxed);
        let peeled: Vec<VertexId> = positions_where(&self.component, |c| c.load(Relaxed) == PEELED);
        chunked::for_each(peeled.len(), |i| {
            self.component[peeled[i] as usize].store(alone_from + i as u32, Relaxed);
        });
        let largest = self.largest.load(Relaxed);
        let component = chunked::into_values(self.component);
        Partition {
            component,
            count: alone_from + peeled.len() as u32,
            alone_from,
            largest: (largest != 0).then_some(largest as VertexId),
        }
    }

    fn new_component(&self) -> u32 {
        self.next_component.fetch_add(1, Relaxed)
    }

    fn in_part(&self, v: VertexId, p: u32) -> bool {
        self.part[v as usize].load(Relaxed) == p
    }

    /// Peels every vertex of part `p` (its `members`) without a predecessor or a successor
    /// left in the part, each into a component of its own; returns the members that remain.
    /// Parts are disjoint, so parts of one wave trim at once on the shared counters.
    fn trim(&self, p: u32, members: &[VertexId]) -> Vec<VertexId> {
        let graph = self.graph;
        let (in_degree, out_degree) = (&self.in_degree, &self.out_degree);
        // Each member counts its own neighbours in the part: in-degrees from its
        // predecessor list, out-degrees from its successor list (plain stores, no shared
        // counters). Peeling decrements them from the other side; the graph holds the same
        // multiset of edges on both sides, so every count reaches exactly its zero.
        chunked::for_each(members.len(), |i| {
            let v = members[i];
            let inside = |ids: &[VertexId]| ids.iter().filter(|&&u| self.in_part(u, p)).count();
            in_degree[v as usize].store(inside(graph.predecessor_ids(v)) as u32, Relaxed);
            out_degree[v as usize].store(inside(graph.successor_ids(v)) as u32, Relaxed);
        });
        // A vertex is peeled by whoever moves it out of part `p` first.
        let peel = |v: VertexId| -> bool {
            self.part[v as usize]
                .compare_exchange(p, TRIMMED, Relaxed, Relaxed)
                .is_ok()
        };
        let mut frontier = members_where(members, |v| {
            in_degree[v as usize].load(Relaxed) == 0 || out_degree[v as usize].load(Relaxed) == 0
        });
        frontier.retain(|&v| peel(v));
        explore(frontier, |v, next| {
            for &u in graph.successor_ids(v) {
                if self.in_part(u, p) && in_degree[u as usize].fetch_sub(1, Relaxed) == 1 && peel(u)
                {
                    next.push(u);
                }
            }
            for &u in graph.predecessor_ids(v) {
                if self.in_part(u, p)
                    && out_degree[u as usize].fetch_sub(1, Relaxed) == 1
                    && peel(u)
                {
                    next.push(u);
                }
            }
        });
        // Each peeled vertex is a component of its own, numbered at the end after all the
        // others, in vertex order (`run`).
        let peeled = members_where(members, |v| self.in_part(v, TRIMMED));
        chunked::for_each(peeled.len(), |i| {
            let v = peeled[i];
            self.component[v as usize].store(PEELED, Relaxed);
            self.part[v as usize].store(NO_PART, Relaxed);
        });
        members_where(members, |v| self.in_part(v, p))
    }

    /// One part: Tarjan if it is small (or FB stopped paying), else one FB split.
    fn step(&self, part: Part) -> Vec<Part> {
        let Part {
            id: p,
            members,
            misses,
        } = part;
        let sequential = misses >= MISSES_BEFORE_TARJAN;
        if members.is_empty() {
            return Vec::new();
        }
        // Trimming first: after a split that found a large component, the parts beside it
        // are mostly vertices on no cycle, which the trim peels on all threads (random p1
        // 50 % game, 16 cores: components 0.46 -> 0.22 s, session 8's device logs, in git history under notes/gpu).
        // Part 0 was trimmed by `run`; parts bound for Tarjan skip it (on model-checking
        // games they hold many small components, which a trim leaves).
        let members = if p == 0 || sequential || members.len() < SEQUENTIAL_BELOW {
            members
        } else {
            let before = members.len();
            let remaining = self.trim(p, &members);
            tracing::trace!(
                part = p,
                before,
                remaining = remaining.len(),
                "components: trimmed"
            );
            remaining
        };
        if members.is_empty() {
            return Vec::new();
        }
        if sequential || members.len() < SEQUENTIAL_BELOW {
            self.tarjan_part(p, &members);
            return Vec::new();
        }
        // The pivot most likely to sit in a large component: the largest product of its
        // degrees inside the part, which the trim just left in its counters (the graph's
        // degrees picked, in about one evaluation of random p50 in three, a vertex whose
        // neighbours the trim had peeled: a component of one, and the rest of the 2.15
        // million vertices went to Tarjan, 0.7 s on one thread). Ties go to the smallest
        // id, so the split does not depend on the schedule.
        let key = |i: usize| {
            let v = members[i];
            let degree = self.in_degree[v as usize].load(Relaxed) as u64
                * self.out_degree[v as usize].load(Relaxed) as u64;
            (degree, std::cmp::Reverse(v))
        };
        // (Below every member's key: the identity of `max`.)
        let least = || (0, std::cmp::Reverse(VertexId::MAX));
        let (_, std::cmp::Reverse(pivot)) =
            chunked::fold(members.len(), least, |best, i| best.max(key(i)), Ord::max);
        // Backward first, then forward only through what reaches the pivot: the forward
        // search's vertices outside B would only be split from the rest (and the component
        // is F ∩ B either way). On random games the giant component's forward closure
        // outside it is as large as the component (about 1.1 million vertices of p50's
        // 2.15 million), all on no cycle, which the trim peels instead.
        self.search(p, pivot, BACKWARD);
        self.search(p, pivot, FORWARD);
        let scc = self.new_component();
        let [backward, rest] = [BACKWARD, 0].map(|_| self.next_part.fetch_add(1, Relaxed));
        let placed: Vec<(VertexId, u32)> = chunked::filter_map(members.len(), |i| {
            let v = members[i];
            let mark = self.mark[v as usize].swap(0, Relaxed);
            let to = match mark {
                m if m == FORWARD | BACKWARD => {
                    self.component[v as usize].store(scc, Relaxed);
                    self.part[v as usize].store(NO_PART, Relaxed);
                    return None;
                }
                BACKWARD => backward,
                _ => rest,
            };
            self.part[v as usize].store(to, Relaxed);
            Some((v, to))
        });
        let found = members.len() - placed.len();
        self.largest
            .fetch_max((found as u64) << 32 | pivot as u64, Relaxed);
        // Splits that keep finding only a small component will not pay on these parts
        // (many medium components, each found by one search of everything): after
        // `MISSES_BEFORE_TARJAN` in a row, Tarjan them. One miss may be the pivot's (a
        // small component beside a giant one): its parts get another pivot first.
        let misses = if found * 64 < members.len() {
            misses + 1
        } else {
            0
        };
        [backward, rest]
            .into_iter()
            .map(|q| Part {
                id: q,
                members: chunked::filter_map(placed.len(), |i| {
                    let (v, to) = placed[i];
                    (to == q).then_some(v)
                }),
                misses,
            })
            .collect()
    }

    /// Marks with `bit` every vertex of part `p` that `pivot` reaches backward (through
    /// predecessors), or forward (successors) through the vertices marked backward already,
    /// in frontier rounds or as a worklist ([`explore`]).
    fn search(&self, p: u32, pivot: VertexId, bit: u8) {
        let graph = self.graph;
        let neighbours = |v: VertexId| -> &[VertexId] {
            if bit == FORWARD {
                graph.successor_ids(v)
            } else {
                graph.predecessor_ids(v)
            }
        };
        let claim = |u: VertexId| -> bool {
            // A plain load first: most edges lead to vertices already marked, and an atomic
            // read-modify-write on each would serialise on their cache lines.
            let mark = &self.mark[u as usize];
            let seen = mark.load(Relaxed);
            seen & bit == 0
                && (bit == BACKWARD || seen & BACKWARD != 0)
                && self.in_part(u, p)
                && mark.fetch_or(bit, Relaxed) & bit == 0
        };
        self.mark[pivot as usize].fetch_or(bit, Relaxed);
        explore(vec![pivot], |v, next| {
            next.extend(neighbours(v).iter().copied().filter(|&u| claim(u)));
        });
    }

    /// Tarjan on part `p` alone, its marks in the arrays every part shares.
    fn tarjan_part(&self, p: u32, members: &[VertexId]) {
        let graph = self.graph;
        let mut marks = SharedMarks {
            index: &self.index,
            low: &self.low,
        };
        Search::default().run(
            &mut marks,
            1,
            members.iter().copied(),
            |v| graph.successor_ids(v),
            |u| self.in_part(u, p),
            |component, _| {
                let c = self.new_component();
                for &x in component {
                    self.component[x as usize].store(c, Relaxed);
                }
            },
        );
        for &v in members {
            self.part[v as usize].store(NO_PART, Relaxed);
        }
    }
}

/// Tarjan's marks in the arrays the parts share (each part's search touches only its own
/// vertices, so relaxed loads and stores suffice).
struct SharedMarks<'a> {
    index: &'a [AtomicU32],
    low: &'a [AtomicU32],
}

impl Marks for SharedMarks<'_> {
    #[inline]
    fn get(&self, v: VertexId) -> (u32, u32) {
        (
            self.index[v as usize].load(Relaxed),
            self.low[v as usize].load(Relaxed),
        )
    }
    #[inline]
    fn set(&mut self, v: VertexId, index: u32, low: u32) {
        self.index[v as usize].store(index, Relaxed);
        self.low[v as usize].store(low, Relaxed);
    }
    #[inline]
    fn set_low(&mut self, v: VertexId, low: u32) {
        self.low[v as usize].store(low, Relaxed);
    }
}

/// The partition as a canonical labelling (each vertex → smallest id of its component), for
/// comparing partitions numbered differently.
pub fn canonical(component: &[u32]) -> Vec<u32> {
    let mut smallest = std::collections::HashMap::new();
    for (v, &c) in component.iter().enumerate() {
        if c != NO_COMPONENT {
            smallest.entry(c).or_insert(v as u32);
        }
    }
    component
        .iter()
        .map(|c| smallest.get(c).copied().unwrap_or(u32::MAX))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
