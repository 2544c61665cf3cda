//! One component under test: the greedy walk, the longest-path Bellman–Ford with its
//! witness or its certificate, and the parent pointers' cycle test (in parallel for large
//! components).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::arena::VertexId;
use crate::graph::Successors;
use crate::graph::reach::explore;
use crate::solve::chunked;
use crate::solve::control::{Control, Interrupted};
use crate::solve::threads::positions_where;

use super::*;

/// One component under test: its members and their internal edges, by position in the
/// component.
pub(super) struct Component<'a, S> {
    pub(super) graph: &'a S,
    pub(super) component: &'a [u32],
    pub(super) id: u32,
    pub(super) members: &'a [VertexId],
    pub(super) local: &'a [u32],
}

// Copy by hand: the derive would ask `S: Copy`, and only the reference is copied.
impl<S> Clone for Component<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Component<'_, S> {}

impl<'a, S: Successors> Component<'a, S> {
    pub(super) fn new(
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
    pub(super) fn internal(self, i: usize) -> impl Iterator<Item = (u32, i64)> + 'a {
        let (component, id, local) = (self.component, self.id, self.local);
        self.graph
            .successors(self.members[i])
            .filter(move |&(u, _)| component[u as usize] == id)
            .map(move |(u, w)| (local[u as usize], w))
    }

    /// With `parallel` (inside the solve's pool), a large component's per-member passes run
    /// on its threads: on random games one component holds most vertices.
    pub(super) fn has_nonnegative_cycle(
        self,
        parallel: bool,
        control: &Control,
    ) -> Result<bool, Interrupted> {
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
            chunked::all(size, all_negative)
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
            chunked::for_each_mut(&mut pointers.parent, |i, p| *p = heaviest(i));
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
    pub(super) fn greedy_walk_is_nonnegative(self, heaviest: impl Fn(usize) -> (u32, i64)) -> bool {
        let next = |i: u32| Some(heaviest(i as usize)).filter(|&(j, _)| j != NO_PARENT);
        pointer_cycle_weight(0, next).is_some_and(|total| total >= 0)
    }

    pub(super) fn bellman_ford(
        self,
        pointers: &mut Pointers,
        control: &Control,
    ) -> Result<bool, Interrupted> {
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
pub(super) struct Pointers {
    pub(super) parent: Vec<(u32, i64)>,
    pub(super) walk: Vec<u32>,
}

impl Pointers {
    pub(super) fn new(size: usize) -> Pointers {
        Pointers {
            parent: vec![(NO_PARENT, 0); size],
            walk: vec![0; size],
        }
    }

    /// Looks for a cycle among the pointers; true if one is found and its weight, summed
    /// from its edges, is `>= 0`.
    pub(super) fn cycle_is_nonnegative(&mut self) -> bool {
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
    pub(super) fn cycle_is_nonnegative_parallel(&mut self) -> bool {
        let size = self.parent.len();
        let incoming: Vec<AtomicU32> = chunked::map(size, |_| AtomicU32::new(0));
        let parents = &self.parent;
        chunked::for_each(size, |i| {
            let p = parents[i].0;
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
        let mut incoming: Vec<u32> = chunked::into_values(incoming);
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
