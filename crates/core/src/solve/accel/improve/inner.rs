//! The inner problem of strategy improvement: with player 1's moves σ1 fixed, the least
//! fixpoint `h >= f` of `h(v) = max(f(v), min_u h(u) − w)` (player 0's vertices take the
//! minimum over their edges, player 1's have the one edge σ1), in exact integers (no `⊖`
//! clamp and no bound: `f >= 0` is the floor; the caller caps at `M`). ⊤ (`INF`) where no
//! credit suffices: every path leads to a negative cycle or to a vertex at ⊤ in `f`.
//!
//! Computed from above by policy iteration over player 0's positional choices τ (see the
//! module docs of [`super`] for why it ends at the least fixpoint): evaluate τ exactly (each
//! vertex's path under τ and σ1 is a lasso; a walk gives every value in linear time), switch
//! player 0 to strictly better edges; when none is, either unlock the vertices at ⊤ that can
//! still reach a nonnegative cycle among themselves, or the zero cycles of tight edges above
//! the floor, or stop.

use std::collections::VecDeque;

use crate::arena::{Arena, Player, VertexId};
use crate::graph::tarjan::{Csr, nontrivial_components};
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::TOP;

/// ⊤ in the inner values.
pub(super) const INF: i128 = i128::MAX;

/// Why the inner problem gave up before its fixpoint.
#[derive(Debug)]
pub(super) enum Stopped {
    /// Its share of work ran out (the caller goes on without it).
    Budget,
    /// The solve was interrupted.
    Interrupted(Interrupted),
}

impl From<Interrupted> for Stopped {
    fn from(i: Interrupted) -> Stopped {
        Stopped::Interrupted(i)
    }
}

/// The one-player game: floors `f` (⊤ = [`TOP`]: the vertex is out of the game) and player
/// 1's edges `sigma` (read at player-1 vertices with a finite floor).
pub(super) struct OnePlayer<'a> {
    pub arena: &'a Arena,
    pub floors: &'a [u64],
    pub sigma: &'a [u32],
}

/// Work counters shared with the caller's budget: edges and vertices scanned.
pub(super) struct Work<'a> {
    pub done: u64,
    pub limit: u64,
    pub control: &'a Control,
    /// Policy iterations run (statistics).
    pub iterations: u64,
    /// Stalls unlocked: at ⊤, and on zero cycles (statistics).
    pub unlocked: u64,
    pub zero_cycles: u64,
}

impl Work<'_> {
    fn add(&mut self, items: usize) -> Result<(), Stopped> {
        self.done += items as u64;
        self.control.checkpoint()?;
        if self.done > self.limit {
            return Err(Stopped::Budget);
        }
        Ok(())
    }
}

impl OnePlayer<'_> {
    fn floor(&self, v: usize) -> i128 {
        let f = self.floors[v];
        if f == TOP { INF } else { f as i128 }
    }

    /// `max(f(v), x − w(e))`, ⊤ when `x` is.
    fn need(&self, v: usize, e: usize, x: i128) -> i128 {
        if x == INF {
            return INF;
        }
        (x - self.arena.succ_weights().get(e) as i128).max(self.floor(v))
    }

    /// The least fixpoint above the floors, starting from player 0's edges `tau` (at
    /// player-0 vertices; replaced as it improves).
    pub(super) fn least_fixpoint(
        &self,
        tau: &mut [u32],
        work: &mut Work<'_>,
    ) -> Result<Vec<i128>, Stopped> {
        let arena = self.arena;
        let n = arena.vertex_count();
        let mut policy: Vec<u32> = (0..n)
            .map(|v| match arena.owner(v as VertexId) {
                Player::Zero => tau[v],
                Player::One => self.sigma[v],
            })
            .collect();
        let mut queue = VecDeque::new();
        let mut queued = vec![false; n];
        loop {
            work.iterations += 1;
            let mut values = self.evaluate(&policy);
            work.add(n + arena.edge_count())?;
            // Player 0 switches to strictly better edges, in place (Gauss–Seidel); `v`
            // indexes several per-vertex arrays.
            #[allow(clippy::needless_range_loop)]
            for v in 0..n {
                if arena.owner(v as VertexId) == Player::Zero
                    && self.floors[v] != TOP
                    && self.improve_at(v, &mut values, &mut policy)
                {
                    queued[v] = true;
                    queue.push_back(v);
                }
            }
            if !queue.is_empty() {
                self.descend(&mut values, &mut policy, &mut queue, &mut queued, work)?;
                continue;
            }
            if self.unlock_top(&values, &mut policy, work)? {
                work.unlocked += 1;
                continue;
            }
            if self.drop_zero_cycles(&values, &mut policy) {
                work.zero_cycles += 1;
                continue;
            }
            for v in 0..n {
                if arena.owner(v as VertexId) == Player::Zero {
                    tau[v] = policy[v];
                }
            }
            return Ok(values);
        }
    }

    /// Switches player 0's vertex `v` to its best edge under `values` if that is strictly
    /// better than `values[v]`, lowering `values[v]` to it; answers whether it did.
    fn improve_at(&self, v: usize, values: &mut [i128], policy: &mut [u32]) -> bool {
        let targets = self.arena.succ_targets();
        let (mut best, mut edge) = (values[v], u32::MAX);
        for e in self.arena.succ_range(v as VertexId) {
            let need = self.need(v, e, values[targets[e] as usize]);
            if need < best {
                best = need;
                edge = e as u32;
            }
        }
        if edge == u32::MAX {
            return false;
        }
        values[v] = best;
        policy[v] = edge;
        true
    }

    /// Carries lowered values back to predecessors before the next evaluation, within a
    /// share of `n + m` steps (what is left in the queue waits for the next evaluation):
    /// player 0 switches where that is strictly better, player 1 lowers along σ1. Every value
    /// stays one of the new profile's post-fixpoint (each is the need of its vertex's edge
    /// under values that only fall since), so the next evaluation is at most these values
    /// and strictly below the last one where a switch happened.
    fn descend(
        &self,
        values: &mut [i128],
        policy: &mut [u32],
        queue: &mut VecDeque<usize>,
        queued: &mut [bool],
        work: &mut Work<'_>,
    ) -> Result<(), Stopped> {
        let arena = self.arena;
        let targets = arena.succ_targets();
        let sources = arena.pred_sources();
        let mut steps = 0usize;
        let share = arena.vertex_count() + arena.edge_count();
        while let Some(u) = queue.pop_front() {
            queued[u] = false;
            let range = arena.pred_range(u as VertexId);
            steps += range.len() + 1;
            let mut last = usize::MAX;
            for pe in range {
                let p = sources[pe] as usize;
                if p == last || self.floors[p] == TOP {
                    continue;
                }
                last = p;
                let lowered = match arena.owner(p as VertexId) {
                    Player::Zero => {
                        steps += arena.succ_range(p as VertexId).len();
                        self.improve_at(p, values, policy)
                    }
                    Player::One => {
                        let e = policy[p] as usize;
                        let need = self.need(p, e, values[targets[e] as usize]);
                        let lower = targets[e] as usize == u && need < values[p];
                        if lower {
                            values[p] = need;
                        }
                        lower
                    }
                };
                if lowered && !queued[p] {
                    queued[p] = true;
                    queue.push_back(p);
                }
            }
            if steps > share {
                break;
            }
        }
        for v in queue.drain(..) {
            queued[v] = false;
        }
        work.add(steps)
    }

    /// The values of the positional profile `policy`: each vertex's path is a lasso; a
    /// negative cycle (or a vertex at ⊤) makes ⊤, a nonnegative one the largest floor
    /// deficit along one lap, and a path before it adds its own deficits.
    fn evaluate(&self, policy: &[u32]) -> Vec<i128> {
        let arena = self.arena;
        let n = arena.vertex_count();
        let targets = arena.succ_targets();
        let weights = arena.succ_weights();
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut values = vec![INF; n];
        let mut state: Vec<u8> = (0..n)
            .map(|v| if self.floors[v] == TOP { DONE } else { NEW })
            .collect();
        let mut position = vec![0u32; n];
        let mut path: Vec<usize> = Vec::new();
        for start in 0..n {
            if state[start] == DONE {
                continue;
            }
            path.clear();
            let mut v = start;
            while state[v] == NEW {
                state[v] = ON_PATH;
                position[v] = path.len() as u32;
                path.push(v);
                v = targets[policy[v] as usize] as usize;
            }
            if state[v] == ON_PATH {
                // A cycle: `path[k..]`.
                let k = position[v] as usize;
                let cycle = &path[k..];
                let weight: i128 = cycle
                    .iter()
                    .map(|&x| weights.get(policy[x] as usize) as i128)
                    .sum();
                if weight >= 0 {
                    // Later laps gain `weight >= 0`, so one lap ahead decides: two backward
                    // passes carry every deficit of a lap to every vertex.
                    for &x in cycle {
                        values[x] = self.floor(x);
                    }
                    for _ in 0..2 {
                        for j in (0..cycle.len()).rev() {
                            let x = cycle[j];
                            let next = cycle[(j + 1) % cycle.len()];
                            values[x] = self.need(x, policy[x] as usize, values[next]);
                        }
                    }
                }
                for &x in cycle {
                    state[x] = DONE;
                }
                path.truncate(k);
            }
            for &x in path.iter().rev() {
                let e = policy[x] as usize;
                values[x] = self.need(x, e, values[targets[e] as usize]);
                state[x] = DONE;
            }
        }
        values
    }

    /// Stalled with vertices at ⊤ (under the current profile) that hold a nonnegative cycle
    /// among themselves (player 0's edges and player 1's σ1 inside them): points player 0
    /// along such cycles, one or more, and answers whether it did. None: they are at ⊤ in
    /// the least fixpoint (every path from them stays among them, as every switch out of
    /// them would have improved, or meets a negative cycle).
    ///
    /// The search ([`nonnegative_cycles`]) runs on the components of that subgraph.
    fn unlock_top(
        &self,
        values: &[i128],
        policy: &mut [u32],
        work: &mut Work<'_>,
    ) -> Result<bool, Stopped> {
        let arena = self.arena;
        let n = arena.vertex_count();
        let targets = arena.succ_targets();
        let stuck = |v: usize| self.floors[v] != TOP && values[v] == INF;
        let graph = Csr::of(n, |v, push| {
            if stuck(v) {
                for e in arena.succ_range(v as VertexId) {
                    let inside = stuck(targets[e] as usize)
                        && (arena.owner(v as VertexId) == Player::Zero
                            || self.sigma[v] == e as u32);
                    if inside {
                        push(targets[e], e as u32);
                    }
                }
            }
        });
        if graph.is_empty() {
            return Ok(false);
        }
        let component = nontrivial_components(&graph);
        let cycles = nonnegative_cycles(arena, &graph, &component, work)?;
        let mut any = false;
        for cycle in cycles {
            for (v, e) in cycle {
                if arena.owner(v as VertexId) == Player::Zero {
                    any |= policy[v] != e;
                    policy[v] = e;
                }
            }
        }
        // Every nonnegative cycle here has a player-0 edge off the profile (the profile's
        // own cycles among these vertices are negative), so something switched.
        Ok(any)
    }

    /// Stalled at a fixpoint with cycles of tight edges (`values[v] = values[u] − w`)
    /// among vertices above their floors: those cycles have weight 0 and could be lowered,
    /// so the fixpoint is not the least. Points player 0 along tight edges inside each such
    /// component and answers whether there was one.
    fn drop_zero_cycles(&self, values: &[i128], policy: &mut [u32]) -> bool {
        let arena = self.arena;
        let n = arena.vertex_count();
        let targets = arena.succ_targets();
        let weights = arena.succ_weights();
        let above = |v: usize| values[v] != INF && values[v] > self.floor(v);
        let graph = Csr::of(n, |v, push| {
            if !above(v) {
                return;
            }
            let tight = |e: usize| {
                let u = targets[e] as usize;
                above(u) && values[u] - weights.get(e) as i128 == values[v]
            };
            match arena.owner(v as VertexId) {
                Player::Zero => {
                    for e in arena.succ_range(v as VertexId) {
                        if tight(e) {
                            push(targets[e], e as u32);
                        }
                    }
                }
                Player::One => {
                    let e = policy[v] as usize;
                    if tight(e) {
                        push(targets[e], e as u32);
                    }
                }
            }
        });
        if graph.is_empty() {
            return false;
        }
        let component = nontrivial_components(&graph);
        let mut switched = false;
        for v in 0..n {
            if component[v] == u32::MAX || arena.owner(v as VertexId) != Player::Zero {
                continue;
            }
            if let Some((_, e)) = graph
                .edges(v)
                .find(|&(u, _)| component[u as usize] == component[v])
            {
                switched |= policy[v] != e;
                policy[v] = e;
            }
        }
        switched
    }
}

/// Some cycles of weight `>= 0` inside the components of `graph` (`component`: numbers of
/// the components with a cycle, `u32::MAX` elsewhere), as (vertex, edge) lists; empty
/// when there is none. As `super::super::cycles` tests components, in order of cost: the
/// greedy pointers (each member to its heaviest successor inside its component) and their
/// cycles of weight `>= 0`; then longest-path Bellman–Ford from 0 (a FIFO queue) with path
/// values `(weight, length)` ordered lexicographically, where a cycle is positive exactly
/// when its weight is `>= 0`: an emptied queue proves there is none, and a cycle of the
/// parent pointers (looked for each time as many relaxations as there are members were
/// spent) is one, summed again before it counts.
fn nonnegative_cycles(
    arena: &Arena,
    graph: &Csr,
    component: &[u32],
    work: &mut Work<'_>,
) -> Result<Vec<Vec<(usize, u32)>>, Stopped> {
    let n = graph.vertices();
    let weights = arena.succ_weights();
    let members: Vec<usize> = (0..n).filter(|&v| component[v] != u32::MAX).collect();
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let inside = |v: usize| {
        graph
            .edges(v)
            .filter(move |&(u, _)| component[u as usize] == component[v])
    };
    // The greedy pointers.
    let mut parent_edge = vec![u32::MAX; n];
    for &v in &members {
        if let Some((_, e)) = inside(v).max_by_key(|&(_, e)| weights.get(e as usize)) {
            parent_edge[v] = e;
        }
    }
    // Forward pointers: `next[v]` through `parent_edge[v]`.
    let targets = arena.succ_targets();
    let next: Vec<u32> = (0..n)
        .map(|v| match parent_edge[v] {
            u32::MAX => u32::MAX,
            e => targets[e as usize],
        })
        .collect();
    let greedy = pointer_cycles(&members, &next)
        .into_iter()
        .filter(|cycle| {
            cycle
                .iter()
                .map(|&v| weights.get(parent_edge[v] as usize) as i128)
                .sum::<i128>()
                >= 0
        })
        .map(|cycle| {
            cycle
                .into_iter()
                .map(|v| (v, parent_edge[v]))
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>();
    work.add(graph.len() + members.len())?;
    if !greedy.is_empty() {
        return Ok(greedy);
    }
    // Bellman–Ford, longest paths, on the components with an edge of weight >= 0 (in the
    // others every cycle is negative).
    let mut hopeful = vec![false; n];
    for &v in &members {
        if inside(v).any(|(_, e)| weights.get(e as usize) >= 0) {
            hopeful[component[v] as usize] = true;
        }
    }
    let mut distance = vec![(0i128, 0i64); n];
    let mut parent = vec![u32::MAX; n];
    let mut queued = vec![false; n];
    let mut queue: std::collections::VecDeque<usize> = members
        .iter()
        .copied()
        .filter(|&v| hopeful[component[v] as usize])
        .collect();
    for &v in &queue {
        queued[v] = true;
    }
    let active: Vec<usize> = queue.iter().copied().collect();
    if active.is_empty() {
        return Ok(Vec::new());
    }
    let mut relaxations = 0usize;
    while let Some(v) = queue.pop_front() {
        queued[v] = false;
        let (dw, dl) = distance[v];
        for (u, e) in inside(v) {
            let u = u as usize;
            let candidate = (dw + weights.get(e as usize) as i128, dl + 1);
            if candidate <= distance[u] {
                continue;
            }
            distance[u] = candidate;
            parent[u] = v as u32;
            parent_edge[u] = e;
            if !queued[u] {
                queued[u] = true;
                queue.push_back(u);
            }
            relaxations += 1;
            if relaxations % active.len() == 0 {
                work.add(active.len())?;
                // Parent pointers run from `u` back to `v`: reversed, each is an edge.
                let found: Vec<Vec<(usize, u32)>> = pointer_cycles(&active, &parent)
                    .into_iter()
                    .map(|cycle| {
                        cycle
                            .into_iter()
                            .map(|u| (parent[u] as usize, parent_edge[u]))
                            .collect::<Vec<_>>()
                    })
                    .filter(|cycle| {
                        cycle
                            .iter()
                            .map(|&(_, e)| weights.get(e as usize) as i128)
                            .sum::<i128>()
                            >= 0
                    })
                    .collect();
                if !found.is_empty() {
                    return Ok(found);
                }
            }
        }
    }
    work.add(relaxations)?;
    Ok(Vec::new())
}

/// The cycles of the pointers `next` (`u32::MAX`: none) reached from `starts`, each as the
/// list of its vertices.
fn pointer_cycles(starts: &[usize], next: &[u32]) -> Vec<Vec<usize>> {
    let mut mark = vec![usize::MAX; next.len()];
    let mut cycles = Vec::new();
    for (walk, &start) in starts.iter().enumerate() {
        let mut v = start;
        loop {
            if mark[v] == walk {
                // Closed a cycle in this walk: collect it.
                let mut cycle = vec![v];
                let mut u = next[v] as usize;
                while u != v {
                    cycle.push(u);
                    u = next[u] as usize;
                }
                cycles.push(cycle);
                break;
            }
            if mark[v] != usize::MAX || next[v] == u32::MAX {
                break;
            }
            mark[v] = walk;
            v = next[v] as usize;
        }
    }
    cycles
}
