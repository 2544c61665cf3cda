//! Which strongly connected components of a one-player [`Graph`] contain a cycle of
//! nonnegative weight.
//!
//! Per component, a longest-path Bellman–Ford (FIFO queue) with path values ordered
//! lexicographically as `(weight, length)`: a cycle is positive in that order exactly when its
//! weight is `>= 0` (its length is `> 0`), so "a nonnegative cycle exists" is "a positive
//! cycle exists". No scaling is needed, and sums stay far inside `i128`.
//! - **Yes** only with a witness: a cycle in the parent pointers whose weight, summed
//!   again from the edges, is `>= 0`. Parent pointers are checked for cycles every time the
//!   component's size in relaxations has been spent, so a positive cycle is found soon
//!   after it first shows.
//! - **No** only with a certificate: the queue emptied and the potentials satisfy
//!   `d(u) >= d(v) + (w, 1)` on every edge (checked again), which makes every cycle
//!   lexicographically `<= 0`, hence of weight `< 0`.
//!
//! Anything else (never expected) answers "yes", the cautious answer for every caller: fewer
//! vertices become ⊤, more vertices are pinned at 0, and a strategy is rejected.

use super::graph::{Graph, NO_COMPONENT};
use crate::arena::VertexId;
use crate::solve::control::{Control, Interrupted};

const NO_PARENT: VertexId = VertexId::MAX;

/// Path value: (weight, length), compared lexicographically.
type PathValue = (i128, i64);

/// Reusable buffers for [`nonnegative_components`].
pub(super) struct CycleFinder {
    dist: Vec<PathValue>,
    parent: Vec<(VertexId, i64)>,
    queued: Vec<bool>,
    walk: Vec<u32>,
    members: Vec<VertexId>,
    member_offsets: Vec<u32>,
}

impl CycleFinder {
    /// Buffers for graphs over `n` vertex slots (allocated on first use).
    pub(super) fn new(_n: usize) -> CycleFinder {
        CycleFinder {
            dist: Vec::new(),
            parent: Vec::new(),
            queued: Vec::new(),
            walk: Vec::new(),
            members: Vec::new(),
            member_offsets: Vec::new(),
        }
    }

    /// For each component (of `component`, `count` of them), whether it contains a cycle of
    /// weight `>= 0`.
    pub(super) fn nonnegative_components(
        &mut self,
        graph: &Graph,
        component: &[u32],
        count: u32,
        control: &Control,
    ) -> Result<Vec<bool>, Interrupted> {
        let n = component.len();
        if self.dist.len() < n {
            self.dist.resize(n, (0, 0));
            self.parent.resize(n, (NO_PARENT, 0));
            self.queued.resize(n, false);
            self.walk.resize(n, 0);
        }
        self.group(component, count);
        let mut result = vec![false; count as usize];
        for c in 0..count {
            let range = self.member_offsets[c as usize] as usize
                ..self.member_offsets[c as usize + 1] as usize;
            let members = std::mem::take(&mut self.members);
            let these = &members[range];
            result[c as usize] = if these.len() == 1 {
                let v = these[0];
                graph.successors(v).iter().any(|&(u, w)| u == v && w >= 0)
            } else {
                self.component_has_nonnegative_cycle(graph, component, c, these, control)?
            };
            self.members = members;
        }
        Ok(result)
    }

    /// Members of each component, contiguous (counting sort).
    fn group(&mut self, component: &[u32], count: u32) {
        self.member_offsets.clear();
        self.member_offsets.resize(count as usize + 1, 0);
        for &c in component.iter().filter(|&&c| c != NO_COMPONENT) {
            self.member_offsets[c as usize + 1] += 1;
        }
        for i in 0..count as usize {
            self.member_offsets[i + 1] += self.member_offsets[i];
        }
        let mut fill = self.member_offsets.clone();
        self.members.clear();
        self.members
            .resize(self.member_offsets[count as usize] as usize, 0);
        for (v, &c) in component.iter().enumerate() {
            if c != NO_COMPONENT {
                self.members[fill[c as usize] as usize] = v as VertexId;
                fill[c as usize] += 1;
            }
        }
    }

    fn component_has_nonnegative_cycle(
        &mut self,
        graph: &Graph,
        component: &[u32],
        c: u32,
        members: &[VertexId],
        control: &Control,
    ) -> Result<bool, Interrupted> {
        if self.greedy_cycle_is_nonnegative(graph, component, c, members) {
            return Ok(true);
        }
        let mut queue = std::collections::VecDeque::with_capacity(members.len());
        for &v in members {
            self.dist[v as usize] = (0, 0);
            self.parent[v as usize] = (NO_PARENT, 0);
            self.queued[v as usize] = true;
            queue.push_back(v);
        }
        let check_every = members.len() as u64;
        let mut relaxations = 0u64;
        let mut next_check = check_every;
        let mut walk_id = 0u32;
        let mut found = false;
        while let Some(v) = queue.pop_front() {
            self.queued[v as usize] = false;
            let (dw, dl) = self.dist[v as usize];
            for &(u, w) in graph.successors(v) {
                if component[u as usize] != c {
                    continue;
                }
                let candidate = (dw + w as i128, dl + 1);
                if candidate > self.dist[u as usize] {
                    self.dist[u as usize] = candidate;
                    self.parent[u as usize] = (v, w);
                    relaxations += 1;
                    if !self.queued[u as usize] {
                        self.queued[u as usize] = true;
                        queue.push_back(u);
                    }
                }
            }
            if relaxations >= next_check {
                next_check = relaxations + check_every;
                control.checkpoint()?;
                if self.parent_cycle_is_nonnegative(members, &mut walk_id) {
                    found = true;
                    break;
                }
            }
        }
        for &v in members {
            self.queued[v as usize] = false;
            self.walk[v as usize] = 0;
        }
        if found {
            return Ok(true);
        }
        // Certificate of "no nonnegative cycle": the potentials are feasible on every edge.
        let feasible = members.iter().all(|&v| {
            let (dw, dl) = self.dist[v as usize];
            graph
                .successors(v)
                .iter()
                .filter(|&&(u, _)| component[u as usize] == c)
                .all(|&(u, w)| self.dist[u as usize] >= (dw + w as i128, dl + 1))
        });
        Ok(!feasible)
    }

    /// A quick witness before Bellman–Ford: every member points to its heaviest successor in
    /// the component; true if a cycle of these pointers has weight `>= 0`.
    fn greedy_cycle_is_nonnegative(
        &mut self,
        graph: &Graph,
        component: &[u32],
        c: u32,
        members: &[VertexId],
    ) -> bool {
        for &v in members {
            let heaviest = graph
                .successors(v)
                .iter()
                .filter(|&&(u, _)| component[u as usize] == c)
                .max_by_key(|&&(_, w)| w)
                .copied()
                .map_or((NO_PARENT, 0), |(u, w)| (u, w));
            self.parent[v as usize] = heaviest;
        }
        let mut walk_id = 0;
        let found = self.parent_cycle_is_nonnegative(members, &mut walk_id);
        for &v in members {
            self.walk[v as usize] = 0;
        }
        found
    }

    /// Looks for a cycle among the parent pointers of `members`; true if one is found and
    /// its weight, summed from its edges, is `>= 0`.
    fn parent_cycle_is_nonnegative(&mut self, members: &[VertexId], walk_id: &mut u32) -> bool {
        for &start in members {
            if self.walk[start as usize] != 0 {
                continue;
            }
            *walk_id += 1;
            let id = *walk_id;
            let mut x = start;
            while x != NO_PARENT && self.walk[x as usize] == 0 {
                self.walk[x as usize] = id;
                x = self.parent[x as usize].0;
            }
            if x != NO_PARENT && self.walk[x as usize] == id {
                // x lies on a cycle of parent pointers: sum its weight.
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
        // Next check starts afresh.
        for &v in members {
            self.walk[v as usize] = 0;
        }
        false
    }
}
