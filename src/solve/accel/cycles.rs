//! Which strongly connected components of a one-player [`Graph`] contain a cycle of
//! nonnegative weight. Components are independent, so several threads test different
//! components at once; each answer depends only on its component.
//!
//! Per component, in order of cost:
//! 1. **One vertex**: a self-loop of weight `>= 0`.
//! 2. **Every internal edge negative**: no (every cycle is a sum of negative weights).
//! 3. **Greedy witness**: every member points to its heaviest successor inside; a cycle of
//!    these pointers of weight `>= 0` answers yes.
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
//! Anything else (never expected) answers "yes", the cautious answer for every caller: fewer
//! vertices become ⊤, more vertices are pinned at 0, and a strategy is rejected.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::graph::Graph;
use super::scc::NO_COMPONENT;
use crate::arena::VertexId;
use crate::solve::control::{Control, Interrupted};
use crate::solve::threads::Threads;

const NO_PARENT: u32 = u32::MAX;

/// Components of at least this many members run their per-member passes in parallel.
const PARALLEL_MEMBERS: usize = 1 << 14;

/// Path value: (weight, length), compared lexicographically.
type PathValue = (i128, i64);

/// For each component (of `component`, `count` of them), whether it contains a cycle of
/// weight `>= 0`.
pub(super) fn nonnegative_components(
    graph: &Graph,
    component: &[u32],
    count: u32,
    threads: &Threads,
    control: &Control,
) -> Result<Vec<bool>, Interrupted> {
    let groups = Groups::new(component, count, threads);
    let parallel = threads.parallel(groups.members.len());
    let test = |c: usize| -> Result<bool, Interrupted> {
        let members = groups.members(c);
        Ok(match members.len() {
            0 => false,
            1 => {
                let v = members[0];
                graph.successors(v).any(|(u, w)| u == v && w >= 0)
            }
            _ => Component::new(graph, component, c as u32, members, &groups.local)
                .has_nonnegative_cycle(parallel, control)?,
        })
    };
    if !parallel {
        return (0..count as usize).map(test).collect();
    }
    threads.install(|| (0..count as usize).into_par_iter().map(test).collect())
}

/// Members of each component, contiguous, and each member's position in its component.
struct Groups {
    offsets: Vec<u32>,
    members: Vec<VertexId>,
    local: Vec<u32>,
}

impl Groups {
    fn new(component: &[u32], count: u32, threads: &Threads) -> Groups {
        let n = component.len();
        let mut offsets = vec![0u32; count as usize + 1];
        for &c in component.iter().filter(|&&c| c != NO_COMPONENT) {
            offsets[c as usize + 1] += 1;
        }
        for i in 0..count as usize {
            offsets[i + 1] += offsets[i];
        }
        let total = offsets[count as usize] as usize;
        if !threads.parallel(n) {
            let mut fill = offsets.clone();
            let mut members = vec![0; total];
            let mut local = vec![0; n];
            for (v, &c) in component.iter().enumerate() {
                if c != NO_COMPONENT {
                    let slot = &mut fill[c as usize];
                    members[*slot as usize] = v as VertexId;
                    local[v] = *slot - offsets[c as usize];
                    *slot += 1;
                }
            }
            return Groups {
                offsets,
                members,
                local,
            };
        }
        // Vertices in id order within each component: claim slots chunk by chunk.
        threads.install(|| {
            let fill: Vec<AtomicU32> = offsets[..count as usize]
                .par_iter()
                .map(|&o| AtomicU32::new(o))
                .collect();
            let members: Vec<AtomicU32> = (0..total).into_par_iter().map(|_| 0.into()).collect();
            let local: Vec<u32> = component
                .par_iter()
                .enumerate()
                .map(|(v, &c)| {
                    if c == NO_COMPONENT {
                        return 0;
                    }
                    let slot = fill[c as usize].fetch_add(1, Relaxed);
                    members[slot as usize].store(v as VertexId, Relaxed);
                    slot - offsets[c as usize]
                })
                .collect();
            Groups {
                offsets,
                members: members.into_par_iter().map(|m| m.into_inner()).collect(),
                local,
            }
        })
    }

    fn members(&self, c: usize) -> &[VertexId] {
        &self.members[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }
}

/// One component under test: its members and their internal edges, by position in the
/// component.
#[derive(Clone, Copy)]
struct Component<'a> {
    graph: &'a Graph,
    component: &'a [u32],
    id: u32,
    members: &'a [VertexId],
    local: &'a [u32],
}

impl<'a> Component<'a> {
    fn new(
        graph: &'a Graph,
        component: &'a [u32],
        id: u32,
        members: &'a [VertexId],
        local: &'a [u32],
    ) -> Component<'a> {
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
        let heaviest = |i: usize| {
            self.internal(i)
                .max_by_key(|&(_, w)| w)
                .unwrap_or((NO_PARENT, 0))
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
        if pointers.cycle_is_nonnegative() {
            return Ok(true);
        }
        self.bellman_ford(&mut pointers, control)
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::solve::accel::scc::components;

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
            let one = nonnegative_components(&graph, &component, count, &Threads::one(), &control)
                .expect("not interrupted");
            let many = Threads::new(3).with_parallel_from(0);
            let got = nonnegative_components(&graph, &component, count, &many, &control)
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
