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

use super::Graph;
use super::scc::{NO_COMPONENT, Partition};
use super::{DROPS_ALL, KEEPS_ALL, Successors};
use crate::arena::Arena;
use crate::arena::VertexId;
use crate::solve::chunked;
use crate::solve::control::{Control, Interrupted};
use crate::solve::threads::Threads;

mod component;
mod groups;
use component::*;
use groups::*;

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
pub(crate) struct Numbers<'a> {
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
pub(crate) fn nonnegative_components<S: Successors>(
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
        let pieces = threads.install(|| {
            chunked::chunk_values(alone_from as usize, |range| {
                range.map(test).collect::<Result<Vec<bool>, Interrupted>>()
            })
        });
        chunked::concatenated(
            pieces
                .into_iter()
                .collect::<Result<Vec<_>, Interrupted>>()?,
        )
    };
    let grouped_tested = testing.elapsed().as_secs_f64();
    if alone_from < count {
        // In the order of their members' ids, as numbered; each task a chunk in a plain loop
        // (as `threads::positions_where`, for the same reason).
        if threads.parallel(component.len()) {
            threads.install(|| {
                let pieces = chunked::values_of_chunks(component.len(), ALONE_CHUNK, |c, chunk| {
                    alone_answers(
                        graph,
                        settled,
                        alone_from,
                        c * ALONE_CHUNK,
                        &component[chunk],
                    )
                    .collect::<Vec<bool>>()
                });
                for piece in pieces {
                    result.extend(piece);
                }
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
mod tests;
