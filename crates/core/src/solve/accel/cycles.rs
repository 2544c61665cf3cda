//! Which strongly connected components of a one-player [`Graph`] contain a cycle of
//! nonnegative weight. Components are independent, so several threads test different
//! components at once; each answer depends only on its component.
//!
//! Per component, in order of cost:
//! 1. **One vertex**: a self-loop of weight `>= 0`.
//! 2. **Every internal edge negative**: no (every cycle is a sum of negative weights).
//! 3. **Greedy witness**: every member points to its heaviest successor inside; a cycle of
//!    these pointers of weight `>= 0` answers yes. First the pointers are followed from one
//!    member only, until they close a cycle (a few thousand steps on a random game's giant
//!    component, which answers there); then every member's pointer is looked at.
//! 4. **Longest-path Bellman–Ford** (FIFO queue) with path values ordered lexicographically
//!    as `(weight, length)`: a cycle is positive in that order exactly when its weight is
//!    `>= 0` (its length is `> 0`), so "a nonnegative cycle exists" is "a positive cycle
//!    exists". No scaling is needed, and sums stay far inside `i128`.
//!    - **Yes** only with a witness: a cycle in the parent pointers whose weight, summed
//!      again from the edges, is `>= 0`. Parent pointers are checked for cycles every time
//!      the component's size in relaxations has been spent.
//!    - **No** only with a certificate: the queue emptied and the potentials satisfy
//!      `d(u) >= d(v) + (w, 1)` on every edge (checked again), which makes every cycle
//!      lexicographically `<= 0`, hence of weight `< 0`.
//!
//! A component may come settled (a greedy witness an engine found, confirmed by
//! [`confirms_greedy_cycle`]: the pointer cycle walked again from the arena and summed in
//! `i128`): it answers "yes" without being grouped or tested.
//!
//! Anything else (never expected) answers "yes", the cautious answer for every caller: fewer
//! vertices become ⊤, more vertices are pinned at 0, and a strategy is rejected.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::graph::Graph;
use super::graph::{DROPS_ALL, KEEPS_ALL, Successors};
use super::reach::explore;
use super::scc::{NO_COMPONENT, Partition};
use crate::arena::Arena;
use crate::arena::VertexId;
use crate::solve::control::{Control, Interrupted};
use crate::solve::threads::{Threads, filled_in_parallel, positions_where};

const NO_PARENT: u32 = u32::MAX;

/// Components of at least this many members run their per-member passes in parallel.
const PARALLEL_MEMBERS: usize = 1 << 14;
/// Vertices per chunk when grouping members on several threads; components of this many
/// members or more are grouped without a shared counter ([`Groups::fill_parallel`]).
const GROUP_CHUNK: usize = 1 << 14;

/// Steps of the greedy walk before the full pointer test takes over.
const GREEDY_WALK_STEPS: u32 = 1 << 16;

/// Path value: (weight, length), compared lexicographically.
type PathValue = (i128, i64);

/// The components to test: each vertex's number ([`NO_COMPONENT`] outside), how many,
/// from which number on they are single vertices numbered in the order of their ids (as
/// `representatives::numbered` numbers the ones an engine marks alone; `count` when none
/// is known), and one known to hold a nonnegative cycle (a confirmed witness), if any.
#[derive(Clone, Copy)]
pub(super) struct Numbers<'a> {
    pub component: &'a [u32],
    pub count: u32,
    pub alone_from: u32,
    pub settled: Option<u32>,
    /// A member of the component most likely to be the largest (forward–backward's): the
    /// greedy pointers are followed from it before anything is grouped, and where they close
    /// a cycle of weight `>= 0` its component is settled.
    pub walk_from: Option<VertexId>,
}

impl<'a> Numbers<'a> {
    /// `count` components, none known to be alone or settled.
    pub fn of(component: &'a [u32], count: u32) -> Numbers<'a> {
        Numbers {
            component,
            count,
            alone_from: count,
            settled: None,
            walk_from: None,
        }
    }

    /// The numbers of the host's `partition`, the greedy walk tried first from its largest
    /// component's member.
    pub fn of_partition(partition: &'a Partition) -> Numbers<'a> {
        Numbers {
            alone_from: partition.alone_from,
            walk_from: partition.largest,
            ..Numbers::of(&partition.component, partition.count)
        }
    }
}

/// For each component of `numbers`, whether it contains a cycle of weight `>= 0`. The
/// `settled` one is known to, so it is neither grouped nor tested; the single vertices from
/// `alone_from` on are answered by their self-loops without being grouped.
pub(super) fn nonnegative_components<S: Successors>(
    graph: &S,
    numbers: Numbers<'_>,
    threads: &Threads,
    control: &Control,
) -> Result<Vec<bool>, Interrupted> {
    let Numbers {
        component,
        count,
        alone_from,
        settled,
        walk_from,
    } = numbers;
    debug_assert!(alone_from <= count);
    let grouping = std::time::Instant::now();
    let settled = settled.or_else(|| walk_from.and_then(|v| settled_by_walk(graph, component, v)));
    let groups = Groups::new(component, alone_from, settled, threads);
    tracing::debug!(
        seconds = grouping.elapsed().as_secs_f64(),
        count,
        grouped = alone_from,
        settled = settled.is_some(),
        "cycle test: members grouped by component"
    );
    let parallel = threads.parallel(groups.members.len());
    let test = |c: usize| -> Result<bool, Interrupted> {
        if settled == Some(c as u32) {
            return Ok(true);
        }
        let members = groups.members(c);
        Ok(match members.len() {
            0 => false,
            1 => nonnegative_self_loop(graph, members[0]),
            _ => Component::new(graph, component, c as u32, members, &groups.local)
                .has_nonnegative_cycle(parallel, control)?,
        })
    };
    let testing = std::time::Instant::now();
    let mut result: Vec<bool> = if !parallel {
        (0..alone_from as usize)
            .map(test)
            .collect::<Result<_, Interrupted>>()?
    } else {
        threads.install(|| {
            (0..alone_from as usize)
                .into_par_iter()
                .map(test)
                .collect::<Result<_, Interrupted>>()
        })?
    };
    let grouped_tested = testing.elapsed().as_secs_f64();
    if alone_from < count {
        // In the order of their members' ids, as numbered; each task a chunk in a plain loop
        // (as `threads::positions_where`, for the same reason).
        if threads.parallel(component.len()) {
            threads.install(|| {
                result.par_extend(component.par_chunks(ALONE_CHUNK).enumerate().flat_map_iter(
                    |(c, chunk)| alone_answers(graph, settled, alone_from, c * ALONE_CHUNK, chunk),
                ))
            });
        } else {
            result.extend(alone_answers(graph, settled, alone_from, 0, component));
        }
        assert_eq!(result.len(), count as usize, "one answer per component");
    }
    tracing::debug!(
        grouped_tested,
        seconds = testing.elapsed().as_secs_f64(),
        "cycle test: components tested"
    );
    Ok(result)
}

/// Vertices per task of the components alone's answers.
const ALONE_CHUNK: usize = 1 << 14;

/// The answers of the components alone (numbered `alone_from` and above) among the vertices
/// `base..base + component.len()` whose components `component` holds, in their order: the
/// settled one holds a cycle, any other one iff its vertex has a self-loop of weight `>= 0`.
fn alone_answers<'a, S: Successors>(
    graph: &'a S,
    settled: Option<u32>,
    alone_from: u32,
    base: usize,
    component: &'a [u32],
) -> impl Iterator<Item = bool> + 'a {
    component
        .iter()
        .enumerate()
        .filter(move |&(_, &c)| c != NO_COMPONENT && c >= alone_from)
        .map(move |(i, &c)| {
            settled == Some(c) || nonnegative_self_loop(graph, (base + i) as VertexId)
        })
}

/// The component of `start` if the greedy pointers followed from it (each vertex to its
/// heaviest successor in its component in `graph`, the last of equal weights, as
/// [`Component::has_nonnegative_cycle`] and [`confirms_greedy_cycle`] point) close a cycle of
/// weight `>= 0`: then that component holds one, and needs neither grouping nor testing.
fn settled_by_walk<S: Successors>(graph: &S, component: &[u32], start: VertexId) -> Option<u32> {
    let c = *component.get(start as usize)?;
    if c == NO_COMPONENT {
        return None;
    }
    let next = |v: VertexId| {
        graph
            .successors(v)
            .filter(|&(u, _)| component[u as usize] == c)
            .max_by_key(|&(_, w)| w)
    };
    (pointer_cycle_weight(start, next)? >= 0).then_some(c)
}

/// The weight of the cycle that the pointers `next` (a successor and the weight of the edge
/// to it, `None` where there is none) close when followed from `start`, by Brent's
/// algorithm (no marks: a few thousand steps on a random game's giant component, where
/// marking every member's pointer is a pass over all of them); `None` where a pointer is
/// missing or after [`GREEDY_WALK_STEPS`] steps.
fn pointer_cycle_weight(start: u32, next: impl Fn(u32) -> Option<(u32, i64)>) -> Option<i128> {
    let (mut tortoise, mut hare) = (start, next(start)?.0);
    let (mut power, mut length) = (1u32, 1u32);
    let mut steps = 0;
    while hare != tortoise {
        if steps == GREEDY_WALK_STEPS {
            return None;
        }
        if power == length {
            tortoise = hare;
            power *= 2;
            length = 0;
        }
        hare = next(hare)?.0;
        length += 1;
        steps += 1;
    }
    // `hare` lies on the cycle: sum its weight.
    let mut total: i128 = 0;
    let mut x = hare;
    loop {
        let (y, w) = next(x)?;
        total += w as i128;
        x = y;
        if x == hare {
            return Some(total);
        }
    }
}

/// Whether `v` has a self-loop of weight `>= 0`: the test of a component of one vertex.
fn nonnegative_self_loop<S: Successors>(graph: &S, v: VertexId) -> bool {
    graph.successors(v).any(|(u, w)| u == v && w >= 0)
}

/// Whether the greedy pointers from `start` return to it along a cycle of weight `>= 0`,
/// summed exactly: how a greedy witness found elsewhere (the device) is confirmed. The
/// pointers are those of [`Component::has_nonnegative_cycle`], over the arena: a vertex that
/// keeps every edge (`keeps`, the graph's words) points to its heaviest successor in its
/// component (the last of equal weights in successor order), one that keeps one successor
/// to its σ1 edge `sigma_edge[v]`.
pub fn confirms_greedy_cycle(
    arena: &Arena,
    keeps: &[VertexId],
    sigma_edge: &[u32],
    component: &[u32],
    start: VertexId,
) -> bool {
    let Some(&c) = component.get(start as usize) else {
        return false;
    };
    if c == NO_COMPONENT {
        return false;
    }
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    let pointer = |v: VertexId| -> Option<(VertexId, i64)> {
        match keeps[v as usize] {
            DROPS_ALL => None,
            KEEPS_ALL => {
                let mut best: Option<(VertexId, i64)> = None;
                for e in arena.succ_range(v) {
                    let (u, w) = (targets[e], weights.get(e));
                    if component[u as usize] == c && best.is_none_or(|(_, b)| w >= b) {
                        best = Some((u, w));
                    }
                }
                best
            }
            target => {
                // σ1's edge, which must be the one the graph's word names (an edge that
                // left H since would not count).
                let e = sigma_edge[v as usize] as usize;
                (targets[e] == target).then(|| (target, weights.get(e)))
            }
        }
    };
    let mut sum: i128 = 0;
    let mut v = start;
    for _ in 0..component.len() {
        let Some((u, w)) = pointer(v) else {
            return false;
        };
        if component[u as usize] != c {
            return false;
        }
        sum += w as i128;
        v = u;
        if v == start {
            return sum >= 0;
        }
    }
    false
}

/// Members of each component, contiguous, and each member's position in its component.
struct Groups {
    offsets: Vec<u32>,
    members: Vec<VertexId>,
    local: Vec<u32>,
}

impl Groups {
    /// The members of components `0..count` but `skip` (which gets none); vertices of
    /// higher numbers (or none) are in no group.
    fn new(component: &[u32], count: u32, skip: Option<u32>, threads: &Threads) -> Groups {
        let n = component.len();
        let skip = skip.unwrap_or(NO_COMPONENT);
        if threads.parallel(n) {
            return threads.install(|| {
                let offsets = Groups::offsets_parallel(component, count, skip);
                Groups::fill_parallel(component, offsets, skip)
            });
        }
        let mut offsets = vec![0u32; count as usize + 1];
        for &c in component.iter().filter(|&&c| c < count && c != skip) {
            offsets[c as usize + 1] += 1;
        }
        for i in 0..count as usize {
            offsets[i + 1] += offsets[i];
        }
        let total = offsets[count as usize] as usize;
        let mut fill = offsets.clone();
        let mut members = vec![0; total];
        let mut local = vec![0; n];
        for (v, &c) in component.iter().enumerate() {
            if c < count && c != skip {
                let slot = &mut fill[c as usize];
                members[*slot as usize] = v as VertexId;
                local[v] = *slot - offsets[c as usize];
                *slot += 1;
            }
        }
        Groups {
            offsets,
            members,
            local,
        }
    }

    /// Where each component's members start (`count + 1` offsets; `skip` has none), on the
    /// pool's threads. Each chunk of vertices counts into a small direct-mapped cache of
    /// components and adds an entry to the shared counter when it is evicted, so a large
    /// component's counter takes an atomic add per chunk and eviction rather than per member
    /// (one counter of most vertices would contend on every core), and the many singletons
    /// of random games an uncontended add each.
    fn offsets_parallel(component: &[u32], count: u32, skip: u32) -> Vec<u32> {
        const WAYS: usize = 64;
        const BLOCK: usize = 1 << 16;
        let limit = count;
        let count = count as usize;
        let sizes: Vec<AtomicU32> = (0..count).into_par_iter().map(|_| 0.into()).collect();
        component.par_chunks(GROUP_CHUNK).for_each(|chunk| {
            let mut cache = [(NO_COMPONENT, 0u32); WAYS];
            for &c in chunk {
                if c >= limit || c == skip {
                    continue;
                }
                let entry = &mut cache[c as usize % WAYS];
                if entry.0 != c {
                    if entry.0 != NO_COMPONENT {
                        sizes[entry.0 as usize].fetch_add(entry.1, Relaxed);
                    }
                    *entry = (c, 0);
                }
                entry.1 += 1;
            }
            for (c, members) in cache.into_iter().filter(|e| e.0 != NO_COMPONENT) {
                sizes[c as usize].fetch_add(members, Relaxed);
            }
        });
        let sizes: Vec<u32> = sizes.into_par_iter().map(AtomicU32::into_inner).collect();
        // An inclusive prefix sum by blocks: each block's total, their exclusive prefix
        // (few), then each block from its start.
        let totals: Vec<u32> = sizes.par_chunks(BLOCK).map(|b| b.iter().sum()).collect();
        let starts: Vec<u32> = totals
            .iter()
            .scan(0u32, |at, &t| {
                let start = *at;
                *at += t;
                Some(start)
            })
            .collect();
        let mut offsets = vec![0u32; count + 1];
        offsets[1..]
            .par_chunks_mut(BLOCK)
            .zip(sizes.par_chunks(BLOCK))
            .zip(starts)
            .for_each(|((out, sizes), start)| {
                let mut at = start;
                for (o, &size) in out.iter_mut().zip(sizes) {
                    at += size;
                    *o = at;
                }
            });
        offsets
    }

    /// The members in id order within each component, on the pool's threads, without a
    /// shared counter for the large components (one component of most vertices, each
    /// claiming its slot on one atomic counter, contends on every core): the vertices are
    /// taken in chunks of [`GROUP_CHUNK`]; a component of that many members or more gets
    /// a cursor per chunk from per-chunk counts, so each chunk writes its members of it in
    /// id order at their own place; a smaller one's members claim slots on its counter
    /// (few of them), and its slice is sorted afterwards.
    fn fill_parallel(component: &[u32], offsets: Vec<u32>, skip: u32) -> Groups {
        const NOT_LARGE: u32 = u32::MAX;
        let n = component.len();
        let count = offsets.len() - 1;
        let total = offsets[count] as usize;
        let size = |c: usize| (offsets[c + 1] - offsets[c]) as usize;
        let large_ids: Vec<usize> = (0..count)
            .into_par_iter()
            .filter(|&c| size(c) >= GROUP_CHUNK)
            .collect();
        let large = large_ids.len();
        let mut large_index = filled_in_parallel(count, NOT_LARGE);
        for (i, &c) in large_ids.iter().enumerate() {
            large_index[c] = i as u32;
        }
        let large_of = |c: u32| {
            if c as usize >= count {
                NOT_LARGE
            } else {
                large_index[c as usize]
            }
        };
        // Per chunk, its members of each large component; then, per large component, an
        // exclusive prefix over the chunks from the component's offset.
        let mut cursor: Vec<u32> = if large == 0 {
            Vec::new()
        } else {
            component
                .par_chunks(GROUP_CHUNK)
                .flat_map_iter(|chunk| {
                    let mut counts = vec![0u32; large];
                    for &c in chunk {
                        let i = large_of(c);
                        if i != NOT_LARGE {
                            counts[i as usize] += 1;
                        }
                    }
                    counts
                })
                .collect()
        };
        for (i, &c) in large_ids.iter().enumerate() {
            let mut at = offsets[c];
            for row in cursor.chunks_mut(large) {
                let here = row[i];
                row[i] = at;
                at += here;
            }
        }
        // Members of large components get their slot and position here; the others a slot
        // in any order, then their position once their slice is sorted.
        let fill: Vec<AtomicU32> = offsets[..count].par_iter().map(|&o| o.into()).collect();
        let slots: Vec<AtomicU32> = (0..total).into_par_iter().map(|_| 0.into()).collect();
        let local: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| 0.into()).collect();
        component
            .par_chunks(GROUP_CHUNK)
            .enumerate()
            .for_each(|(k, chunk)| {
                let mut mine = cursor[k * large..(k + 1) * large].to_vec();
                for (j, &c) in chunk.iter().enumerate() {
                    if c as usize >= count || c == skip {
                        continue;
                    }
                    let v = k * GROUP_CHUNK + j;
                    let i = large_of(c);
                    let slot = if i == NOT_LARGE {
                        fill[c as usize].fetch_add(1, Relaxed)
                    } else {
                        let at = mine[i as usize];
                        mine[i as usize] += 1;
                        local[v].store(at - offsets[c as usize], Relaxed);
                        at
                    };
                    slots[slot as usize].store(v as VertexId, Relaxed);
                }
            });
        // Each small component of several members: its slice sorted, its positions set (a
        // singleton's position is 0 already).
        (0..count)
            .into_par_iter()
            .filter(|&c| size(c) > 1 && large_index[c] == NOT_LARGE)
            .for_each(|c| {
                let slice = &slots[offsets[c] as usize..offsets[c + 1] as usize];
                let mut sorted: Vec<VertexId> = slice.iter().map(|v| v.load(Relaxed)).collect();
                sorted.sort_unstable();
                for (j, (&v, slot)) in sorted.iter().zip(slice).enumerate() {
                    slot.store(v, Relaxed);
                    local[v as usize].store(j as u32, Relaxed);
                }
            });
        let members: Vec<VertexId> = slots.into_par_iter().map(|m| m.into_inner()).collect();
        Groups {
            offsets,
            members,
            local: local.into_par_iter().map(|l| l.into_inner()).collect(),
        }
    }

    fn members(&self, c: usize) -> &[VertexId] {
        &self.members[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }
}

/// One component under test: its members and their internal edges, by position in the
/// component.
struct Component<'a, S> {
    graph: &'a S,
    component: &'a [u32],
    id: u32,
    members: &'a [VertexId],
    local: &'a [u32],
}

// Copy by hand: the derive would ask `S: Copy`, and only the reference is copied.
impl<S> Clone for Component<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Component<'_, S> {}

impl<'a, S: Successors> Component<'a, S> {
    fn new(
        graph: &'a S,
        component: &'a [u32],
        id: u32,
        members: &'a [VertexId],
        local: &'a [u32],
    ) -> Component<'a, S> {
        Component {
            graph,
            component,
            id,
            members,
            local,
        }
    }

    /// The internal edges of member `i`: (local index of the target, weight).
    fn internal(self, i: usize) -> impl Iterator<Item = (u32, i64)> + 'a {
        let (component, id, local) = (self.component, self.id, self.local);
        self.graph
            .successors(self.members[i])
            .filter(move |&(u, _)| component[u as usize] == id)
            .map(move |(u, w)| (local[u as usize], w))
    }

    /// With `parallel` (inside the solve's pool), a large component's per-member passes run
    /// on its threads: on random games one component holds most vertices.
    fn has_nonnegative_cycle(self, parallel: bool, control: &Control) -> Result<bool, Interrupted> {
        let size = self.members.len();
        let all_negative = |i: usize| self.internal(i).all(|(_, w)| w < 0);
        // The heaviest internal edge, its target's position looked up for it alone.
        let (component, id, local) = (self.component, self.id, self.local);
        let heaviest = |i: usize| {
            self.graph
                .successors(self.members[i])
                .filter(|&(u, _)| component[u as usize] == id)
                .max_by_key(|&(_, w)| w)
                .map_or((NO_PARENT, 0), |(u, w)| (local[u as usize], w))
        };
        let parallel = parallel && size >= PARALLEL_MEMBERS;
        let negative = if parallel {
            (0..size).into_par_iter().all(all_negative)
        } else {
            (0..size).all(all_negative)
        };
        if negative {
            return Ok(false);
        }
        if self.greedy_walk_is_nonnegative(heaviest) {
            return Ok(true);
        }
        // Greedy pointers point forward (to the heaviest successor), Bellman–Ford's
        // backward (to the predecessor that set the value); a cycle among either is a cycle
        // of the graph, and its weight is the sum of the recorded edge weights.
        let mut pointers = Pointers::new(size);
        if parallel {
            pointers
                .parent
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, p)| *p = heaviest(i));
        } else {
            for (i, p) in pointers.parent.iter_mut().enumerate() {
                *p = heaviest(i);
            }
        }
        let greedy_witness = if parallel {
            pointers.cycle_is_nonnegative_parallel()
        } else {
            pointers.cycle_is_nonnegative()
        };
        if greedy_witness {
            return Ok(true);
        }
        self.bellman_ford(&mut pointers, control)
    }

    /// Whether the greedy pointers (`heaviest`, local indices) followed from the first
    /// member close a cycle of weight `>= 0` ([`pointer_cycle_weight`]).
    fn greedy_walk_is_nonnegative(self, heaviest: impl Fn(usize) -> (u32, i64)) -> bool {
        let next = |i: u32| Some(heaviest(i as usize)).filter(|&(j, _)| j != NO_PARENT);
        pointer_cycle_weight(0, next).is_some_and(|total| total >= 0)
    }

    fn bellman_ford(self, pointers: &mut Pointers, control: &Control) -> Result<bool, Interrupted> {
        let size = self.members.len();
        let mut dist: Vec<PathValue> = vec![(0, 0); size];
        pointers.parent.fill((NO_PARENT, 0));
        let mut queued = vec![true; size];
        let mut queue: VecDeque<u32> = (0..size as u32).collect();
        let check_every = size as u64;
        let mut relaxations = 0u64;
        let mut next_check = check_every;
        while let Some(i) = queue.pop_front() {
            queued[i as usize] = false;
            let (dw, dl) = dist[i as usize];
            for (j, w) in self.internal(i as usize) {
                let candidate = (dw + w as i128, dl + 1);
                if candidate > dist[j as usize] {
                    dist[j as usize] = candidate;
                    pointers.parent[j as usize] = (i, w);
                    relaxations += 1;
                    if !queued[j as usize] {
                        queued[j as usize] = true;
                        queue.push_back(j);
                    }
                }
            }
            if relaxations >= next_check {
                next_check = relaxations + check_every;
                control.checkpoint()?;
                if pointers.cycle_is_nonnegative() {
                    return Ok(true);
                }
            }
        }
        // Certificate of "no nonnegative cycle": the potentials are feasible on every edge.
        let feasible = (0..size).all(|i| {
            let (dw, dl) = dist[i];
            self.internal(i)
                .all(|(j, w)| dist[j as usize] >= (dw + w as i128, dl + 1))
        });
        Ok(!feasible)
    }
}

/// One pointer per member (local index and the weight of the edge it stands for), and the
/// marks of a walk along them.
struct Pointers {
    parent: Vec<(u32, i64)>,
    walk: Vec<u32>,
}

impl Pointers {
    fn new(size: usize) -> Pointers {
        Pointers {
            parent: vec![(NO_PARENT, 0); size],
            walk: vec![0; size],
        }
    }

    /// Looks for a cycle among the pointers; true if one is found and its weight, summed
    /// from its edges, is `>= 0`.
    fn cycle_is_nonnegative(&mut self) -> bool {
        self.walk.fill(0);
        let mut walk_id = 0u32;
        for start in 0..self.parent.len() as u32 {
            if self.walk[start as usize] != 0 {
                continue;
            }
            walk_id += 1;
            let mut x = start;
            while x != NO_PARENT && self.walk[x as usize] == 0 {
                self.walk[x as usize] = walk_id;
                x = self.parent[x as usize].0;
            }
            if x != NO_PARENT && self.walk[x as usize] == walk_id {
                // x lies on a cycle of pointers: sum its weight.
                let mut total: i128 = 0;
                let mut y = x;
                loop {
                    let (p, w) = self.parent[y as usize];
                    total += w as i128;
                    y = p;
                    if y == x {
                        break;
                    }
                }
                if total >= 0 {
                    return true;
                }
            }
        }
        false
    }

    /// [`Self::cycle_is_nonnegative`] on the pool's threads (call inside
    /// [`Threads::install`]), the same answer: members no pointer leads to are peeled in
    /// parallel (a counter of incoming pointers per member, as the components' trim does),
    /// which leaves exactly the members on cycles of pointers; each cycle is then summed
    /// once. The sequential walk instead visits every member in turn, one random access
    /// after another (random p1 50 % game: one component of 2.16M members, 0.16 s on one
    /// thread of the build machine).
    fn cycle_is_nonnegative_parallel(&mut self) -> bool {
        let size = self.parent.len();
        let incoming: Vec<AtomicU32> = (0..size).into_par_iter().map(|_| 0.into()).collect();
        self.parent.par_iter().for_each(|&(p, _)| {
            if p != NO_PARENT {
                incoming[p as usize].fetch_add(1, Relaxed);
            }
        });
        let unreached = positions_where(&incoming[..size], |c| c.load(Relaxed) == 0);
        let parent = &self.parent;
        explore(unreached, |x, next| {
            let p = parent[x as usize].0;
            if p != NO_PARENT && incoming[p as usize].fetch_sub(1, Relaxed) == 1 {
                next.push(p);
            }
        });
        // Each member left has exactly one incoming pointer, from its cycle's previous one.
        let on_cycles: Vec<u32> = positions_where(&incoming[..size], |c| c.load(Relaxed) != 0);
        let mut incoming: Vec<u32> = incoming.into_par_iter().map(|c| c.into_inner()).collect();
        for start in on_cycles {
            if incoming[start as usize] == 0 {
                continue; // summed with its cycle already
            }
            let mut total: i128 = 0;
            let mut x = start;
            loop {
                incoming[x as usize] = 0;
                let (p, w) = self.parent[x as usize];
                total += w as i128;
                x = p;
                if x == start {
                    break;
                }
            }
            if total >= 0 {
                return true;
            }
        }
        false
    }
}

/// The members of component `c` that lie on a cycle of weight `>= 0` of its greedy pointers
/// (each member to its heaviest successor inside `c` in `graph`, the last of equal weights),
/// found by walking every member's pointers: what [`confirms_greedy_cycle`] and the device's
/// witness must agree with.
pub fn greedy_witnesses(graph: &Graph, component: &[u32], c: u32) -> Vec<VertexId> {
    let n = graph.len();
    let pointer = |v: usize| {
        graph
            .successors(v as VertexId)
            .filter(|&(u, _)| component[u as usize] == c)
            .max_by_key(|&(_, w)| w)
    };
    // 0: not seen, 1: on the current walk, 2: done.
    let mut state = vec![0u8; n];
    let mut witnesses = Vec::new();
    for start in (0..n).filter(|&v| component[v] == c) {
        let mut walk = Vec::new();
        let mut v = start;
        while state[v] == 0 {
            state[v] = 1;
            walk.push(v);
            match pointer(v) {
                Some((u, _)) => v = u as usize,
                None => break,
            }
        }
        if state[v] == 1 && pointer(v).is_some() {
            // A new cycle through v.
            let at = walk.iter().position(|&x| x == v).expect("on the walk");
            let cycle = &walk[at..];
            let weight: i128 = cycle.iter().map(|&x| pointer(x).unwrap().1 as i128).sum();
            if weight >= 0 {
                witnesses.extend(cycle.iter().map(|&x| x as VertexId));
            }
        }
        for x in walk {
            state[x] = 2;
        }
    }
    witnesses.sort_unstable();
    witnesses
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::solve::accel::scc::components;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

    /// A greedy witness is confirmed from the arena exactly at the members of nonnegative
    /// greedy cycles (found by walking the graph's pointers), on random games with parallel
    /// edges of player-1 vertices beside σ1's, fixed seeds and a fresh one; the settled
    /// component is neither grouped nor tested, and the other answers do not change.
    #[test]
    fn greedy_witnesses_are_confirmed_exactly_on_nonnegative_cycles() {
        use crate::arena::{EdgeList, Player};
        let fresh: u64 = rand::random();
        let (mut confirmed, mut rejected) = (0, 0);
        for seed in (0..40u64).chain([fresh]) {
            let base = random(
                RandomParams {
                    vertices: 200 + (seed % 5) as u32 * 700,
                    min_degree: 1,
                    max_degree: 2 + (seed % 3) as u32,
                    min_weight: -6,
                    max_weight: 4,
                    player1_percent: 40,
                },
                seed,
            );
            let n = base.vertex_count();
            let mut edges = EdgeList::default();
            for v in 0..n as VertexId {
                for (i, (u, w)) in base.successors(v).enumerate() {
                    edges.push(v, u, w);
                    if (v as usize + i) % 4 == 0 {
                        edges.push(v, u, w + 3);
                    }
                }
            }
            let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
            let active: Vec<bool> = (0..n).map(|v| v % 13 != 1).collect();
            // σ1: the lightest edge of each player-1 vertex (a parallel edge may be heavier).
            let sigma: Vec<u32> = (0..n as VertexId)
                .map(|v| {
                    let w = arena.succ_weights();
                    arena.succ_range(v).min_by_key(|&e| w.get(e)).unwrap() as u32
                })
                .collect();
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let (component, count) = components(&graph, &active, &Threads::one());
            let control = Control::new();
            let all = nonnegative_components(
                &graph,
                Numbers::of(&component, count),
                &Threads::one(),
                &control,
            )
            .expect("runs");
            for c in 0..count {
                let witnesses = greedy_witnesses(&graph, &component, c);
                for v in (0..n as VertexId).filter(|&v| component[v as usize] == c) {
                    let on = witnesses.binary_search(&v).is_ok();
                    let got = confirms_greedy_cycle(&arena, graph.keeps(), &sigma, &component, v);
                    assert_eq!(got, on, "seed {seed}: vertex {v} of component {c}");
                    confirmed += got as usize;
                    // A σ1 edge that is not the graph's (its target differs from the
                    // word's) breaks the walk: not confirmed.
                    let targets = arena.succ_targets();
                    let other = arena
                        .succ_range(v)
                        .find(|&e| targets[e] != targets[sigma[v as usize] as usize]);
                    if got && arena.owner(v) == Player::One && active[v as usize] {
                        if let Some(e) = other {
                            let mut moved = sigma.clone();
                            moved[v as usize] = e as u32;
                            assert!(
                                !confirms_greedy_cycle(
                                    &arena,
                                    graph.keeps(),
                                    &moved,
                                    &component,
                                    v
                                ),
                                "seed {seed}: vertex {v} with a σ1 edge outside H"
                            );
                            rejected += 1;
                        }
                    }
                }
                if !witnesses.is_empty() {
                    assert!(
                        all[c as usize],
                        "seed {seed}: a witness means a nonnegative cycle"
                    );
                    let settled = nonnegative_components(
                        &graph,
                        Numbers {
                            settled: Some(c),
                            ..Numbers::of(&component, count)
                        },
                        &Threads::new(2).with_parallel_from(0),
                        &control,
                    )
                    .expect("runs");
                    assert_eq!(settled, all, "seed {seed}: component {c} settled");
                }
            }
        }
        assert!(confirmed > 0, "some witnesses were confirmed");
        assert!(rejected > 0, "some σ1 edges outside H were tried");
    }

    /// Whether component `c` of `graph` holds a cycle of weight `>= 0`, by Bellman–Ford on
    /// its internal edges with weights `-(m + 1) w - 1` (`m` members): a simple cycle of
    /// length `l <= m` and weight `W` weighs `-(m + 1) W - l` there, negative exactly when
    /// `W >= 0`, and a nonnegative closed walk contains a nonnegative simple cycle.
    fn nonnegative_by_bellman_ford(graph: &Graph, component: &[u32], c: u32) -> bool {
        let members: Vec<VertexId> = (0..component.len() as VertexId)
            .filter(|&v| component[v as usize] == c)
            .collect();
        let m = members.len() as i64;
        let mut dist: HashMap<VertexId, i64> = members.iter().map(|&v| (v, 0)).collect();
        for round in 0..=m {
            let mut changed = false;
            for &v in &members {
                for (u, w) in graph
                    .successors(v)
                    .filter(|&(u, _)| component[u as usize] == c)
                {
                    let candidate = dist[&v] - (m + 1) * w - 1;
                    if candidate < dist[&u] {
                        dist.insert(u, candidate);
                        changed = true;
                    }
                }
            }
            if !changed {
                return false;
            }
            if round == m {
                return true;
            }
        }
        unreachable!()
    }

    /// Components alone across many of the answering pass's chunks (a chain of 100,000
    /// vertices with self-loops of either sign and an inactive tenth, every active vertex
    /// alone and numbered in id order, one of them settled): each answered by its self-loop,
    /// through the built graph and the arena read by the words, on one thread and several;
    /// a fixed seed and a fresh one.
    #[test]
    fn singles_are_answered_by_their_self_loops_in_every_chunk() {
        use crate::arena::{EdgeList, Player};
        for seed in [5, rand::random()] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 100_000u32;
            let mut edges = EdgeList::default();
            for v in 0..n {
                if rng.random_bool(0.5) {
                    edges.push(v, v, rng.random_range(-2..=2));
                }
                edges.push(v, (v + 1).min(n - 1), rng.random_range(-2..=2));
            }
            let arena =
                Arena::from_edges(vec![Player::Zero; n as usize], edges, None).expect("valid");
            let active: Vec<bool> = (0..n).map(|_| rng.random_bool(0.9)).collect();
            let sigma: Vec<u32> = (0..n).map(|v| arena.succ_range(v).start as u32).collect();
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let mut count = 0;
            let component: Vec<u32> = active
                .iter()
                .map(|&a| {
                    if !a {
                        return NO_COMPONENT;
                    }
                    count += 1;
                    count - 1
                })
                .collect();
            let settled = count / 2;
            let want: Vec<bool> = (0..n)
                .filter(|&v| active[v as usize])
                .map(|v| {
                    component[v as usize] == settled
                        || arena.successors(v).any(|(u, w)| u == v && w >= 0)
                })
                .collect();
            let holding = want.iter().filter(|&&b| b).count();
            assert!(
                holding > 20_000 && want.len() - holding > 20_000,
                "seed {seed}"
            );
            let numbers = Numbers {
                alone_from: 0,
                settled: Some(settled),
                ..Numbers::of(&component, count)
            };
            let control = Control::new();
            for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
                let built = nonnegative_components(&graph, numbers, &threads, &control);
                assert_eq!(built.expect("runs"), want, "seed {seed}: the built graph");
                let kept = graph.kept_successors(&arena);
                let read = nonnegative_components(&kept, numbers, &threads, &control);
                assert_eq!(read.expect("runs"), want, "seed {seed}: the words");
            }
        }
    }

    /// The cycle test answers as Bellman–Ford on every component (singletons with and
    /// without self-loops of either sign among them), through the built graph and through
    /// the arena read by the words, on one thread and several, and with the singletons
    /// numbered last and answered without grouping; fixed seeds and a fresh one.
    #[test]
    fn components_answer_as_bellman_ford() {
        use crate::arena::EdgeList;
        let fresh: u64 = rand::random();
        let mut answers = [0usize; 2];
        let mut singletons = [0usize; 2];
        // Walks that settled nothing, and that settled a component.
        let mut walked = [0usize; 2];
        for seed in (0..30u64).chain([fresh]) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let base = random(
                RandomParams {
                    vertices: 40 + (seed % 4) as u32 * 60,
                    min_degree: 1,
                    max_degree: 1 + (seed % 3) as u32,
                    min_weight: -5,
                    max_weight: 3,
                    player1_percent: 40,
                },
                seed,
            );
            let n = base.vertex_count();
            let mut edges = EdgeList::default();
            for v in 0..n as VertexId {
                for (u, w) in base.successors(v) {
                    edges.push(v, u, w);
                }
                if rng.random_bool(0.2) {
                    edges.push(v, v, rng.random_range(-2..=2));
                }
            }
            let arena = Arena::from_edges(base.owners().to_vec(), edges, None).expect("valid");
            let active: Vec<bool> = (0..n).map(|_| rng.random_bool(0.85)).collect();
            let sigma: Vec<u32> = (0..n as VertexId)
                .map(|v| {
                    let range = arena.succ_range(v);
                    rng.random_range(range.start..range.end) as u32
                })
                .collect();
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let (component, count) = components(&graph, &active, &Threads::one());
            let want: Vec<bool> = (0..count)
                .map(|c| nonnegative_by_bellman_ford(&graph, &component, c))
                .collect();
            let control = Control::new();
            for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
                let got = nonnegative_components(
                    &graph,
                    Numbers::of(&component, count),
                    &threads,
                    &control,
                )
                .expect("runs");
                assert_eq!(got, want, "seed {seed}: the built graph");
                let kept = graph.kept_successors(&arena);
                let got = nonnegative_components(
                    &kept,
                    Numbers::of(&component, count),
                    &threads,
                    &control,
                )
                .expect("runs");
                assert_eq!(got, want, "seed {seed}: the arena through the words");
                // The greedy walk tried first from any vertex (inside or not) settles
                // nothing that Bellman–Ford denies.
                for start in [0, rng.random_range(0..n as VertexId), n as VertexId - 1] {
                    let numbers = Numbers {
                        walk_from: Some(start),
                        ..Numbers::of(&component, count)
                    };
                    let got =
                        nonnegative_components(&graph, numbers, &threads, &control).expect("runs");
                    assert_eq!(got, want, "seed {seed}: walked from {start}");
                    walked[settled_by_walk(&graph, &component, start).is_some() as usize] += 1;
                }
            }
            let mut sizes = vec![0usize; count as usize];
            component
                .iter()
                .filter(|&&c| c != NO_COMPONENT)
                .for_each(|&c| sizes[c as usize] += 1);
            // Numbered as `representatives::numbered` numbers an engine's marks: the
            // components of several members first, the single vertices last in id order;
            // then the singles are answered without grouping, alike.
            let several = sizes.iter().filter(|&&s| s > 1).count() as u32;
            let mut new_of = vec![NO_COMPONENT; count as usize];
            let (mut next_several, mut next_alone) = (0, several);
            for c in 0..count as usize {
                if sizes[c] > 1 {
                    new_of[c] = next_several;
                    next_several += 1;
                }
            }
            for &c in component.iter().filter(|&&c| c != NO_COMPONENT) {
                if sizes[c as usize] == 1 {
                    new_of[c as usize] = next_alone;
                    next_alone += 1;
                }
            }
            let renumbered: Vec<u32> = component
                .iter()
                .map(|&c| {
                    if c == NO_COMPONENT {
                        c
                    } else {
                        new_of[c as usize]
                    }
                })
                .collect();
            for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
                let numbers = Numbers {
                    alone_from: several,
                    ..Numbers::of(&renumbered, count)
                };
                let kept = graph.kept_successors(&arena);
                let got = nonnegative_components(&kept, numbers, &threads, &control).expect("runs");
                for c in 0..count as usize {
                    assert_eq!(
                        got[new_of[c] as usize], want[c],
                        "seed {seed}: {c} numbered alone"
                    );
                }
            }
            for c in 0..count as usize {
                answers[want[c] as usize] += 1;
                if sizes[c] == 1 {
                    singletons[want[c] as usize] += 1;
                }
            }
        }
        assert!(answers.iter().all(|&a| a > 10), "both answers: {answers:?}");
        assert!(
            singletons.iter().all(|&a| a > 10),
            "both answers on singletons: {singletons:?}"
        );
        assert!(walked.iter().all(|&a| a > 10), "both walks: {walked:?}");
    }

    /// The greedy walk from the first member closes the cycle 0 → 1 → 0 (weight -2): the
    /// full tests still find 1 → 2 → 1 (weight 0, and weight -1 when 2 → 1 weighs 2).
    #[test]
    fn a_negative_greedy_walk_leaves_the_answer_to_the_full_tests() {
        use crate::arena::{EdgeList, Player};
        for (back, want) in [(3, true), (2, false)] {
            let mut edges = EdgeList::default();
            for (s, t, w) in [(0, 1, -1), (1, 0, -1), (1, 2, -3), (2, 1, back)] {
                edges.push(s, t, w);
            }
            let arena = Arena::from_edges(vec![Player::Zero; 3], edges, None).expect("valid");
            let active = vec![true; 3];
            let sigma = vec![0u32; 3];
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &sigma, &Threads::one());
            let (component, count) = components(&graph, &active, &Threads::one());
            assert_eq!(count, 1, "one component");
            let members: Vec<VertexId> = vec![0, 1, 2];
            let local: Vec<u32> = vec![0, 1, 2];
            let one = Component::new(&graph, &component, 0, &members, &local);
            let heaviest = |i: usize| match i {
                0 => (1, -1),
                1 => (0, -1),
                _ => (1, back),
            };
            assert!(
                !one.greedy_walk_is_nonnegative(heaviest),
                "the walk's cycle is negative"
            );
            for threads in [Threads::one(), Threads::new(2).with_parallel_from(0)] {
                let got = nonnegative_components(
                    &graph,
                    Numbers::of(&component, count),
                    &threads,
                    &Control::new(),
                )
                .expect("runs");
                assert_eq!(got, vec![want], "2 -> 1 weighs {back}");
            }
        }
    }

    /// Grouping members on several threads gives the sequential grouping exactly (members
    /// in id order within each component, each vertex's position): two components above
    /// [`GROUP_CHUNK`], many small and empty ones, vertices outside every component; and
    /// more components than vertices (mostly singletons and empty ones, offsets over several
    /// prefix blocks); with and without a skipped component.
    #[test]
    fn members_group_alike_on_any_number_of_threads() {
        let fresh: u64 = rand::random();
        for seed in [0, 1, fresh] {
            for (count, skip) in [(3000u32, None), (3000, Some(1)), (200_000, Some(0))] {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let n = 5 * GROUP_CHUNK;
                let component: Vec<u32> = (0..n)
                    .map(|_| match rng.random_range(0..100) {
                        0..50 => 0,
                        50..75 => 1,
                        75..80 => NO_COMPONENT,
                        _ => rng.random_range(2..count),
                    })
                    .collect();
                let one = Groups::new(&component, count, skip, &Threads::one());
                let many = Groups::new(
                    &component,
                    count,
                    skip,
                    &Threads::new(3).with_parallel_from(0),
                );
                let case = format!("seed {seed}, {count} components, skip {skip:?}");
                assert_eq!(one.offsets, many.offsets, "{case}");
                assert_eq!(one.members, many.members, "{case}");
                assert_eq!(one.local, many.local, "{case}");
                for c in [0, 1] {
                    let members = one.members(c as usize).len();
                    if skip == Some(c) {
                        assert_eq!(members, 0, "{case}: skipped");
                    } else {
                        assert!(members >= GROUP_CHUNK, "{case}");
                    }
                }
                assert!(one.members(0).is_sorted() && one.members(7).is_sorted());
            }
        }
    }

    /// The parallel search for a nonnegative cycle of pointers answers as the sequential
    /// walk on random pointer graphs (trees leading into cycles of either sign, members
    /// without a pointer), small ones and ones large enough for parallel peeling rounds;
    /// fixed seeds and a fresh one.
    #[test]
    fn pointer_cycles_answer_alike_in_parallel() {
        let threads = Threads::new(3);
        let fresh: u64 = rand::random();
        let mut answers = [0usize; 2];
        for seed in (0..200u64).chain([fresh]) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let largest = if seed % 4 == 0 { 40_000 } else { 3_000 };
            let size = rng.random_range(1..largest);
            let mut pointers = Pointers::new(size);
            for p in pointers.parent.iter_mut() {
                *p = if rng.random_bool(0.02) {
                    (NO_PARENT, 0)
                } else {
                    (rng.random_range(0..size as u32), rng.random_range(-5..=2))
                };
            }
            let want = pointers.cycle_is_nonnegative();
            let got = threads.install(|| pointers.cycle_is_nonnegative_parallel());
            assert_eq!(got, want, "seed {seed}, {size} members");
            answers[usize::from(got)] += 1;
        }
        assert!(
            answers.iter().all(|&a| a >= 10),
            "both answers occur: {answers:?}"
        );
    }

    /// Random player-0 games have one component of most vertices, above
    /// [`PARALLEL_MEMBERS`]: its per-member passes run in parallel and answer as on one
    /// thread, and all-negative / all-nonnegative weights give the known answers.
    #[test]
    fn a_large_component_answers_alike_on_any_number_of_threads() {
        for (seed, (min_weight, max_weight)) in [(-6, -1), (0, 6), (-6, 1), (-3, 1), (-2, 2)]
            .into_iter()
            .enumerate()
        {
            let arena = random(
                RandomParams {
                    vertices: 3 * PARALLEL_MEMBERS as u32,
                    min_degree: 1,
                    max_degree: 3,
                    min_weight,
                    max_weight,
                    player1_percent: 0,
                },
                seed as u64,
            );
            let n = arena.vertex_count();
            let active = vec![true; n];
            let mut graph = Graph::default();
            graph.rebuild(&arena, &active, &vec![0; n], &Threads::one());
            let (component, count) = components(&graph, &active, &Threads::one());
            let mut sizes = vec![0usize; count as usize];
            component.iter().for_each(|&c| sizes[c as usize] += 1);
            let largest = sizes.iter().copied().max().unwrap_or(0);
            assert!(largest >= PARALLEL_MEMBERS, "largest component {largest}");
            let control = Control::new();
            let one = nonnegative_components(
                &graph,
                Numbers::of(&component, count),
                &Threads::one(),
                &control,
            )
            .expect("not interrupted");
            let many = Threads::new(3).with_parallel_from(0);
            let got =
                nonnegative_components(&graph, Numbers::of(&component, count), &many, &control)
                    .expect("not interrupted");
            assert_eq!(one, got, "weights {min_weight}..={max_weight}");
            let big = sizes.iter().position(|&s| s == largest).expect("largest");
            match (min_weight, max_weight) {
                (_, max) if max < 0 => assert!(!got.contains(&true)),
                (min, _) if min >= 0 => assert!(got[big]),
                _ => {}
            }
        }
    }
}
