//! One evaluation: from values `f <= f*`, derive a positional strategy σ1 of player 1, and
//! raise `f` to a lower bound of `f*` computed in the one-player graph `G_σ1` (see the
//! module docs of [`super`] for why each step is sound). Every step runs on the solve's
//! threads and computes a set or a fixpoint that does not depend on them.

use rayon::prelude::*;

use super::LiftEngine;
use super::attractor::{apply_layers, attract_top};
use super::cycles::{Numbers, confirms_greedy_cycle, nonnegative_components};
use super::graph::{DROPS_ALL, Graph};
use super::ranks::TopRanks;
use super::reach::reaching;
use super::relax::{CLOSED, OPEN, PINNED, credits_to_pinned};
use super::remainder::complete_left;
use super::representatives::{Numbered, numbered};
use super::scc::{NO_COMPONENT, components_alone_last};
use crate::arena::{Arena, Player, VertexId};
use crate::solve::SolveError;
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::{TOP, minus};
use crate::solve::phases::{Phases, Stopwatch};
use crate::solve::threads::{Threads, mapped_in_parallel, mapped_pairs_in_parallel};

/// Vertices per parallel task of the per-vertex passes.
const CHUNK: usize = 1 << 14;

/// What one evaluation changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Outcome {
    /// Vertices set to ⊤ (they cannot reach a nonnegative cycle of `G_σ1`).
    pub topped: usize,
    /// Vertices raised to a larger finite value.
    pub raised: usize,
}

/// σ1 at every player-1 vertex with a finite value: the successor edge maximising
/// `f(u) ⊖ w`, ties broken by the smallest weight, then the first edge. Vertices at ⊤ keep
/// the edge they had (the one chosen while their value was finite, if any).
pub fn choose_strategy(
    arena: &Arena,
    values: &[u64],
    bound: u64,
    sigma_edge: &mut [u32],
    threads: &Threads,
) {
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    let choose = |v: usize, sigma: &mut u32| {
        if arena.owner(v as VertexId) != Player::One || values[v] == TOP {
            return;
        }
        let mut best = u32::MAX;
        let mut best_key = (0u64, 0i64);
        for e in arena.succ_range(v as VertexId) {
            let key = (
                minus(values[targets[e] as usize], weights.get(e), bound),
                -weights.get(e),
            );
            if best == u32::MAX || key > best_key {
                best = e as u32;
                best_key = key;
            }
        }
        *sigma = best;
    };
    if threads.parallel(arena.vertex_count() + arena.edge_count()) {
        threads.install(|| {
            sigma_edge
                .par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, chunk)| {
                    for (i, sigma) in chunk.iter_mut().enumerate() {
                        choose(c * CHUNK + i, sigma);
                    }
                })
        });
    } else {
        for (v, sigma) in sigma_edge.iter_mut().enumerate() {
            choose(v, sigma);
        }
    }
}

/// A per-vertex map over `0..n` on the solve's threads.
fn per_vertex<T: Copy + Send>(
    n: usize,
    threads: &Threads,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    if threads.parallel(n) {
        threads.install(|| mapped_in_parallel(n, f))
    } else {
        (0..n).map(f).collect()
    }
}

/// [`per_vertex`] of a pair, into two vectors.
fn per_vertex_pair<A: Copy + Send, B: Copy + Send>(
    n: usize,
    threads: &Threads,
    f: impl Fn(usize) -> (A, B) + Sync + Send,
) -> (Vec<A>, Vec<B>) {
    if threads.parallel(n) {
        threads.install(|| mapped_pairs_in_parallel(n, f))
    } else {
        (0..n).map(f).unzip()
    }
}

/// Applies `f` to every vertex's value on the solve's threads (each task a chunk in a
/// plain loop) and sums the pairs it returns.
fn update_values(
    values: &mut [u64],
    threads: &Threads,
    f: impl Fn(usize, &mut u64) -> (usize, usize) + Sync + Send,
) -> (usize, usize) {
    let add = |a: (usize, usize), b: (usize, usize)| (a.0 + b.0, a.1 + b.1);
    let chunk = |(c, chunk): (usize, &mut [u64])| {
        let base = c * CHUNK;
        chunk
            .iter_mut()
            .enumerate()
            .fold((0, 0), |sum, (i, value)| add(sum, f(base + i, value)))
    };
    if threads.parallel(values.len()) {
        threads.install(|| {
            values
                .par_chunks_mut(CHUNK)
                .enumerate()
                .map(chunk)
                .reduce(|| (0, 0), add)
        })
    } else {
        chunk((0, values))
    }
}

/// Whether `f` holds at some vertex of `0..n`: on `threads` in chunks of plain loops where
/// `n` is large (a scan of every vertex on one thread costs milliseconds at millions).
fn any_vertex(n: usize, threads: &Threads, f: impl Fn(usize) -> bool + Sync + Send) -> bool {
    if threads.parallel(n) {
        let chunks: Vec<std::ops::Range<usize>> = Threads::chunks(n, 1 << 14).collect();
        threads.install(|| {
            chunks
                .into_par_iter()
                .any(|chunk| chunk.into_iter().any(&f))
        })
    } else {
        (0..n).any(f)
    }
}

/// Components of an evaluation's graph: each vertex's, their count, one known to hold a
/// cycle of weight `>= 0` (a confirmed greedy witness), if any, and whether the host computed
/// them (and so built the graph's successor side).
struct Found {
    component: Vec<u32>,
    count: u32,
    /// Components `alone_from..count` are single vertices (`Numbered::alone_from`).
    alone_from: u32,
    settled: Option<u32>,
    /// Where the cycle test's greedy walk starts ([`super::cycles::Numbers::walk_from`]).
    walk_from: Option<VertexId>,
    on_host: bool,
}

/// The components `engine` computed for the graph whose words are `keeps`, when `started`
/// (it took them in [`LiftEngine::start_components`]), with its greedy witness where the host
/// confirms it; `None` if it was not started, gave up, or returned no partition.
fn engine_components(
    engine: &mut dyn LiftEngine,
    started: bool,
    arena: &Arena,
    keeps: &[VertexId],
    sigma_edge: &[u32],
    threads: &Threads,
) -> Result<Option<Found>, SolveError> {
    if !started {
        return Ok(None);
    }
    let Some(mut found) = (match engine.searches() {
        Some(device) => device.finish_components()?,
        None => None,
    }) else {
        return Ok(None);
    };
    let left = std::time::Instant::now();
    let left_count = complete_left(arena, keeps, &mut found.representatives, threads);
    if left_count > 0 {
        tracing::debug!(
            vertices = left_count,
            seconds = left.elapsed().as_secs_f64(),
            "components: those the engine left, on the host"
        );
    }
    let numbering = std::time::Instant::now();
    let Some(Numbered {
        component,
        count,
        alone_from,
    }) = numbered(found.representatives, threads)
    else {
        tracing::warn!(
            "the engine's components are not a map to representatives; computing them on the host"
        );
        return Ok(None);
    };
    let settled = found.witness.and_then(|(representative, member)| {
        let c = *component.get(representative as usize)?;
        let confirmed = c != NO_COMPONENT
            && component.get(member as usize) == Some(&c)
            && confirms_greedy_cycle(arena, keeps, sigma_edge, &component, member);
        if !confirmed {
            tracing::warn!("the engine's greedy witness does not sum to >= 0 here");
        }
        confirmed.then_some(c)
    });
    tracing::debug!(
        left = numbering.duration_since(left).as_secs_f64(),
        numbered = numbering.elapsed().as_secs_f64(),
        "components: the engine's completed and numbered, seconds"
    );
    Ok(Some(Found {
        component,
        count,
        alone_from,
        settled,
        walk_from: None,
        on_host: false,
    }))
}

/// The components of `graph` (marked for `built_for`) restricted to `inside ⊆ built_for`,
/// on the host, after building the graph's sides that are not yet.
fn host_components(
    graph: &mut Graph,
    arena: &Arena,
    built_for: &[bool],
    inside: &[bool],
    threads: &Threads,
) -> Found {
    if !graph.has_predecessors() {
        graph.build_predecessors(arena, built_for, threads);
    }
    if !graph.has_successors() {
        graph.build_successors(arena, built_for, threads);
    }
    let partition = components_alone_last(graph, inside, threads);
    Found {
        component: partition.component,
        count: partition.count,
        alone_from: partition.alone_from,
        settled: None,
        walk_from: partition.largest,
        on_host: true,
    }
}

/// Which components of `found` hold a cycle of weight `>= 0` in `graph`: read from the built
/// successor side where the host built it, else from the arena through the graph's words
/// (no successor side was built for the device's components; both list the same edges
/// inside every component).
fn nonnegative(
    graph: &Graph,
    arena: &Arena,
    found: &Found,
    threads: &Threads,
    control: &Control,
) -> Result<Vec<bool>, Interrupted> {
    let Found {
        component,
        count,
        alone_from,
        settled,
        walk_from,
        on_host,
    } = found;
    let numbers = Numbers {
        component,
        count: *count,
        alone_from: *alone_from,
        settled: *settled,
        walk_from: *walk_from,
    };
    if *on_host {
        nonnegative_components(graph, numbers, threads, control)
    } else {
        nonnegative_components(&graph.kept_successors(arena), numbers, threads, control)
    }
}

/// The vertices of `finite` with a path inside it to a vertex where `is_source`, and
/// whether `engine` computed them: it does where it took the evaluation's components
/// (`on_engine`; the device, which holds the arena: no predecessor side is built), else the
/// host does, building the graph's predecessor side first if need be.
#[allow(clippy::too_many_arguments)]
fn reaching_sources(
    engine: &mut dyn LiftEngine,
    on_engine: bool,
    graph: &mut Graph,
    arena: &Arena,
    finite: &[bool],
    is_source: impl Fn(usize) -> bool + Sync + Send,
    threads: &Threads,
) -> Result<(Vec<bool>, bool), SolveError> {
    if on_engine {
        let sources = per_vertex(finite.len(), threads, |v| (finite[v] && is_source(v)) as u8);
        let on_device = match engine.searches() {
            Some(device) => device.reaching(graph.keeps(), &sources)?,
            None => None,
        };
        if let Some(reach) = on_device {
            return Ok((reach, true));
        }
    }
    if !graph.has_predecessors() {
        graph.build_predecessors(arena, finite, threads);
    }
    Ok((reaching(graph, finite, is_source, threads), false))
}

/// The least credits to reach a `pinned` vertex through the `through` ones
/// ([`credits_to_pinned`]): computed by `engine` where it took the evaluation's components
/// (`on_engine`), else on the host, building the graph's predecessor side first if need be.
/// The engine reads σ1 from `sigma_edge` at the `through` vertices, where the attractor
/// (which records edges only at the vertices it sets to ⊤) left it as the graph was marked.
#[allow(clippy::too_many_arguments)]
fn credits_to(
    engine: &mut dyn LiftEngine,
    on_engine: bool,
    graph: &mut Graph,
    arena: &Arena,
    finite: &[bool],
    sigma_edge: &[u32],
    pinned: &[bool],
    through: &[bool],
    bound: u64,
    threads: &Threads,
    control: &Control,
) -> Result<Vec<u64>, SolveError> {
    if on_engine {
        let class = per_vertex(finite.len(), threads, |v| {
            if pinned[v] {
                PINNED
            } else if through[v] {
                OPEN
            } else {
                CLOSED
            }
        });
        let on_device = match engine.searches() {
            Some(device) => device.credits_to_pinned(graph.keeps(), sigma_edge, &class, bound)?,
            None => None,
        };
        if let Some(g) = on_device {
            return Ok(g);
        }
    }
    if !graph.has_predecessors() {
        graph.build_predecessors(arena, finite, threads);
    }
    Ok(credits_to_pinned(
        graph, pinned, through, bound, threads, control,
    )?)
}

/// One evaluation of σ1 (`sigma_edge`, chosen by [`choose_strategy`]) against `values`,
/// followed by player 1's attractor to ⊤ (which records its edges in `sigma_edge`); the
/// vertices it tops for a recorded reason get their `ranks`. The components, reachability,
/// the attractor's layers and Bellman–Ford come from `engine` where it takes them (the
/// device, which holds the arena: the host then builds neither side of its graph).
#[allow(clippy::too_many_arguments)]
pub(super) fn evaluate(
    engine: &mut dyn LiftEngine,
    arena: &Arena,
    values: &mut [u64],
    bound: u64,
    sigma_edge: &mut [u32],
    graph: &mut Graph,
    ranks: &mut TopRanks,
    threads: &Threads,
    phases: &mut Phases,
    control: &Control,
) -> Result<Outcome, SolveError> {
    let mut watch = Stopwatch::start();
    let n = arena.vertex_count();
    // The graph phase's parts, for the debug log.
    let mut parts = [0.0; 4];
    let mut part = Stopwatch::start();
    ranks.require_ranked(values, threads);
    let finite = per_vertex(n, threads, |v| values[v] != TOP);
    part.lap(&mut parts[0]);
    graph.mark(arena, &finite, sigma_edge, threads);
    part.lap(&mut parts[1]);
    let on_engine = match engine.searches() {
        Some(device) => device.start_components(graph.keeps(), sigma_edge)?,
        None => false,
    };
    part.lap(&mut parts[2]);
    if !on_engine {
        graph.build_predecessors(arena, &finite, threads);
    }
    part.lap(&mut parts[3]);
    tracing::debug!(
        ranked = parts[0],
        marked = parts[1],
        components_started = parts[2],
        predecessors = parts[3],
        "accel evaluation: the graph phase's seconds"
    );
    watch.lap(&mut phases.graph);

    // U: vertices that can reach a nonnegative cycle of G_σ1 (minus the ⊤ vertices).
    let found =
        match engine_components(engine, on_engine, arena, graph.keeps(), sigma_edge, threads)? {
            Some(found) => found,
            None => host_components(graph, arena, &finite, &finite, threads),
        };
    control.checkpoint()?;
    watch.lap(&mut phases.components);
    let mut cycle_parts = [0.0; 3];
    let mut part = Stopwatch::start();
    let good = nonnegative(graph, arena, &found, threads, control)?;
    part.lap(&mut cycle_parts[0]);
    let (component, count) = (&found.component, found.count);
    let in_good = |v: usize| component[v] != NO_COMPONENT && good[component[v] as usize];
    let (reach, reached_on_engine) =
        reaching_sources(engine, on_engine, graph, arena, &finite, in_good, threads)?;
    part.lap(&mut cycle_parts[1]);
    let (topped, _) = update_values(values, threads, |v, value| {
        if finite[v] && !reach[v] {
            *value = TOP;
            (1, 0)
        } else {
            (0, 0)
        }
    });
    part.lap(&mut cycle_parts[2]);
    tracing::debug!(
        tested = cycle_parts[0],
        reached = cycle_parts[1],
        topped = cycle_parts[2],
        "accel evaluation: the cycle test phase's seconds"
    );
    let mut outcome = Outcome { topped, raised: 0 };
    watch.lap(&mut phases.cycle_test);
    if outcome.topped > 0 {
        let mut parts = [0.0; 3];
        let mut part = Stopwatch::start();
        let trap = ranks.rank_trap(|v| finite[v] && !reach[v], threads);
        part.lap(&mut parts[0]);
        // The engine's layers come from its values and its reachability's answer, which
        // set to ⊤ exactly what the host just did.
        let engine_layers = match engine.searches() {
            Some(device) if reached_on_engine => device.attract_top()?,
            _ => None,
        };
        let attracted = match engine_layers {
            Some(layers) => apply_layers(arena, values, sigma_edge, layers, threads),
            None => attract_top(arena, values, bound, sigma_edge, threads),
        };
        part.lap(&mut parts[1]);
        outcome.topped += attracted.moved;
        if let Some(trap) = trap {
            ranks.rank_layers(
                trap,
                &attracted.layer,
                attracted.top_layers,
                attracted.recorded,
                threads,
            );
        }
        part.lap(&mut parts[2]);
        tracing::debug!(
            trap_ranked = parts[0],
            attracted = parts[1],
            layers_ranked = parts[2],
            "accel evaluation: the attractor phase's seconds"
        );
    }
    control.checkpoint()?;
    watch.lap(&mut phases.attractor);

    // Z': vertices of U at 0, plus every component of U \ Z' that still has a nonnegative
    // cycle, so that every nonnegative cycle of G_σ1 inside U meets Z'. The components of
    // U \ Z' refine those found above, and only those with a nonnegative cycle can still
    // hold one: only their remaining vertices are decomposed again.
    let mut redo_parts = [0.0; 4];
    let mut part = Stopwatch::start();
    // Z' so far, and the graph's words restricted to the vertices decomposed again (reached,
    // finite above 0, in a component with a nonnegative cycle) in the same pass: every other
    // vertex drops all its edges.
    let keeps = graph.keeps();
    let (mut pinned, redo_keeps) = per_vertex_pair(n, threads, |v| {
        let pin = reach[v] && values[v] == 0;
        let redo = reach[v] && !pin && values[v] != TOP && in_good(v);
        (pin, if redo { keeps[v] } else { DROPS_ALL })
    });
    if any_vertex(n, threads, |v| redo_keeps[v] != DROPS_ALL) {
        part.lap(&mut redo_parts[0]);
        let on_engine = match engine.searches() {
            Some(device) => device.start_components(&redo_keeps, sigma_edge)?,
            None => false,
        };
        part.lap(&mut redo_parts[1]);
        let redo_found =
            match engine_components(engine, on_engine, arena, &redo_keeps, sigma_edge, threads)? {
                Some(found) => found,
                None => {
                    // (A reached vertex is finite: it keeps something.)
                    let redo = per_vertex(n, threads, |v| redo_keeps[v] != DROPS_ALL);
                    host_components(graph, arena, &finite, &redo, threads)
                }
            };
        part.lap(&mut redo_parts[2]);
        watch.lap(&mut phases.components);
        let redo_good = nonnegative(graph, arena, &redo_found, threads, control)?;
        part.lap(&mut redo_parts[3]);
        tracing::debug!(
            marked = redo_parts[0],
            started = redo_parts[1],
            found = redo_parts[2],
            tested = redo_parts[3],
            "accel evaluation: the second decomposition's seconds"
        );
        let pin = |(v, pinned): (usize, &mut bool)| {
            let c = redo_found.component[v];
            if c != NO_COMPONENT && redo_good[c as usize] {
                *pinned = true;
            }
        };
        if threads.parallel(n) {
            threads.install(|| pinned.par_iter_mut().enumerate().for_each(pin));
        } else {
            pinned.iter_mut().enumerate().for_each(pin);
        }
        watch.lap(&mut phases.cycle_test);
    }
    let mut relax_parts = [0.0; 3];
    let mut part = Stopwatch::start();
    let through = per_vertex(n, threads, |v| reach[v] && values[v] != TOP);
    if !any_vertex(n, threads, |v| through[v] && !pinned[v]) {
        // Nothing finite above 0 in U outside Z': g = 0 there, nothing to raise.
        return Ok(outcome);
    }

    part.lap(&mut relax_parts[0]);
    // g: least deficit of a path to Z' (greatest fixpoint from above; every cycle outside
    // Z' is negative, so the relaxation ends).
    let g = credits_to(
        engine, on_engine, graph, arena, &finite, sigma_edge, &pinned, &through, bound, threads,
        control,
    )?;
    part.lap(&mut relax_parts[1]);
    let raise = |v: usize, value: &mut u64| -> (usize, usize) {
        if through[v] && g[v] > *value {
            *value = g[v];
            if g[v] == TOP { (1, 0) } else { (0, 1) }
        } else {
            (0, 0)
        }
    };
    let (topped, raised) = update_values(values, threads, raise);
    outcome.topped += topped;
    outcome.raised += raised;
    part.lap(&mut relax_parts[2]);
    tracing::debug!(
        prepared = relax_parts[0],
        relaxed = relax_parts[1],
        raised = relax_parts[2],
        "accel evaluation: the Bellman–Ford phase's seconds"
    );
    watch.lap(&mut phases.bellman_ford);
    tracing::debug!(
        components = count,
        topped = outcome.topped,
        raised = outcome.raised,
        "accel evaluation"
    );
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::solve::accel::scc::components;
    use crate::solve::accel::{
        ALONE, Budget, EngineAttracted, EngineComponents, EngineSearches, LEFT_TO_HOST, LiftRun,
        WorklistEngine,
    };
    use crate::solve::energy;

    /// An engine that computes the components it is asked for as the device would (one
    /// representative per vertex, from the words alone) and, if `witness`, reports the
    /// largest component's greedy witness: evaluations then take the engine's path (no
    /// successor side built, the cycle test reading the arena through the words). If
    /// `evaluates`, it also answers reachability and Bellman–Ford from a graph of its own
    /// (then the evaluation builds no predecessor side either); else it leaves them to the
    /// host, which builds that side when it first needs it.
    struct HostComponents<'a> {
        arena: &'a Arena,
        witness: bool,
        evaluates: bool,
        /// Leave every component but the largest to the host ([`LEFT_TO_HOST`]), as the
        /// device does after its forward–backward search.
        leaves: bool,
        /// Mark the components of one vertex [`ALONE`].
        alone: bool,
        started: Option<Vec<VertexId>>,
        calls: usize,
        /// Vertices left to the host.
        left: usize,
        witnesses: usize,
        /// Reachability and Bellman–Ford answered.
        reaches: usize,
        relaxations: usize,
        /// The values the engine holds (the evaluation's start, as a device's last lift
        /// leaves them) and its last reachability answer: with `evaluates`, it computes the
        /// attractor's layers from them as the device does.
        held: Vec<u64>,
        reached: Option<Vec<bool>>,
        bound: u64,
        /// Attractors answered, and those that moved a vertex.
        attractions: usize,
        attractions_moving: usize,
    }

    impl HostComponents<'_> {
        /// An edge of `v` to the target its word names (the first), or its first edge: σ1's
        /// edge as far as the words tell (its weight is not in them).
        fn edge_to_word(&self, keeps: &[VertexId], v: VertexId) -> u32 {
            let range = self.arena.succ_range(v);
            range
                .clone()
                .find(|&e| self.arena.succ_targets()[e] == keeps[v as usize])
                .unwrap_or(range.start) as u32
        }

        /// The graph of `keeps` with σ1's edges `sigma_edge`, built on one thread.
        fn graph(&self, keeps: &[VertexId], sigma_edge: &[u32]) -> (Graph, Vec<bool>) {
            let active: Vec<bool> = keeps.iter().map(|&k| k != DROPS_ALL).collect();
            let mut graph = Graph::default();
            graph.rebuild(self.arena, &active, sigma_edge, &Threads::one());
            assert_eq!(graph.keeps(), keeps, "the words describe this graph");
            (graph, active)
        }
    }

    impl LiftEngine for HostComponents<'_> {
        fn name(&self) -> &'static str {
            "host components"
        }
        fn lift(
            &mut self,
            arena: &Arena,
            bound: u64,
            values: &mut Vec<u64>,
            topping: Option<&crate::solve::accel::Topping>,
            budget: Budget,
            threads: &Threads,
            control: &Control,
        ) -> Result<LiftRun, SolveError> {
            WorklistEngine.lift(arena, bound, values, topping, budget, threads, control)
        }
        fn searches(&mut self) -> Option<&mut dyn EngineSearches> {
            Some(self)
        }
    }

    impl EngineSearches for HostComponents<'_> {
        fn start_components(
            &mut self,
            keeps: &[VertexId],
            _sigma_edge: &[u32],
        ) -> Result<bool, SolveError> {
            self.started = Some(keeps.to_vec());
            Ok(true)
        }
        fn finish_components(&mut self) -> Result<Option<EngineComponents>, SolveError> {
            let keeps = self.started.take().expect("started");
            self.calls += 1;
            let n = self.arena.vertex_count();
            let active: Vec<bool> = keeps.iter().map(|&k| k != DROPS_ALL).collect();
            // σ1 edges from the words: a player-1 vertex's first edge to its word's target.
            let sigma: Vec<u32> = (0..n as VertexId)
                .map(|v| self.edge_to_word(&keeps, v))
                .collect();
            let mut graph = Graph::default();
            graph.rebuild(self.arena, &active, &sigma, &Threads::one());
            let (component, count) = components(&graph, &active, &Threads::one());
            let mut representative = vec![u32::MAX; count as usize];
            for (v, &c) in component.iter().enumerate().rev() {
                if c != NO_COMPONENT {
                    representative[c as usize] = v as u32;
                }
            }
            let mut sizes = vec![0usize; count as usize];
            for &c in component.iter().filter(|&&c| c != NO_COMPONENT) {
                sizes[c as usize] += 1;
            }
            let largest = (0..count).max_by_key(|&c| (sizes[c as usize], c));
            let witness = largest.filter(|_| self.witness).and_then(|c| {
                let members = super::super::cycles::greedy_witnesses(&graph, &component, c);
                members
                    .first()
                    .map(|&member| (representative[c as usize], member))
            });
            self.witnesses += witness.is_some() as usize;
            if self.leaves {
                self.left += component
                    .iter()
                    .filter(|&&c| c != NO_COMPONENT && Some(c) != largest)
                    .count();
            }
            Ok(Some(EngineComponents {
                representatives: component
                    .iter()
                    .map(|&c| {
                        if c == NO_COMPONENT {
                            u32::MAX
                        } else if self.leaves && Some(c) != largest {
                            LEFT_TO_HOST
                        } else if self.alone && sizes[c as usize] == 1 {
                            representative[c as usize] | ALONE
                        } else {
                            representative[c as usize]
                        }
                    })
                    .collect(),
                witness,
            }))
        }
        fn reaching(
            &mut self,
            keeps: &[VertexId],
            sources: &[u8],
        ) -> Result<Option<Vec<bool>>, SolveError> {
            if !self.evaluates {
                return Ok(None);
            }
            self.reaches += 1;
            // σ1 edges from the words (reachability does not read weights).
            let sigma: Vec<u32> = (0..keeps.len() as VertexId)
                .map(|v| self.edge_to_word(keeps, v))
                .collect();
            let (graph, active) = self.graph(keeps, &sigma);
            let reach = reaching(&graph, &active, |v| sources[v] != 0, &Threads::one());
            self.reached = Some(reach.clone());
            Ok(Some(reach))
        }
        fn attract_top(&mut self) -> Result<Option<EngineAttracted>, SolveError> {
            let Some(reach) = self.reached.take().filter(|_| self.evaluates) else {
                return Ok(None);
            };
            self.attractions += 1;
            // The held values with every vertex not reached at ⊤, as the device reads them.
            let mut values: Vec<u64> = (self.held.iter().zip(&reach))
                .map(|(&f, &r)| if r { f } else { TOP })
                .collect();
            let mut sigma = vec![u32::MAX; values.len()];
            let attracted = attract_top(
                self.arena,
                &mut values,
                self.bound,
                &mut sigma,
                &Threads::one(),
            );
            self.attractions_moving += (attracted.moved > 0) as usize;
            Ok(Some(EngineAttracted {
                moved: attracted.moved,
                top_layers: attracted.top_layers,
                layer: if attracted.moved == 0 {
                    Vec::new()
                } else {
                    attracted.layer
                },
            }))
        }
        fn credits_to_pinned(
            &mut self,
            keeps: &[VertexId],
            sigma_edge: &[u32],
            class: &[u8],
            bound: u64,
        ) -> Result<Option<Vec<u64>>, SolveError> {
            self.reached = None;
            if !self.evaluates {
                return Ok(None);
            }
            self.relaxations += 1;
            // σ1 as given at the open vertices (the attractor may have moved it at the
            // others, which are ⊤ and so outside every open vertex's graph), elsewhere any
            // edge to the word's target.
            let sigma: Vec<u32> = (0..keeps.len() as VertexId)
                .map(|v| {
                    if class[v as usize] == OPEN {
                        sigma_edge[v as usize]
                    } else {
                        self.edge_to_word(keeps, v)
                    }
                })
                .collect();
            let (graph, _) = self.graph(keeps, &sigma);
            let pinned: Vec<bool> = class.iter().map(|&c| c == PINNED).collect();
            let through: Vec<bool> = class.iter().map(|&c| c != CLOSED).collect();
            Ok(Some(
                credits_to_pinned(
                    &graph,
                    &pinned,
                    &through,
                    bound,
                    &Threads::one(),
                    &Control::new(),
                )
                .expect("not interrupted"),
            ))
        }
    }

    /// One evaluation on several threads (every part parallel) gives the values, the
    /// recorded moves and the ranks of one thread, from the same start; so do components from
    /// an engine (which leave the successor side unbuilt), with and without its greedy
    /// witness, and its reachability, attractor layers (from the values it holds and its
    /// reachability's answer, as the device computes them) and Bellman–Ford.
    #[test]
    fn an_evaluation_does_not_depend_on_the_threads() {
        let (mut redo_passes, mut witnesses, mut relaxations, mut left) = (0, 0, 0, 0);
        let (mut attractions, mut attractions_moving) = (0, 0);
        for seed in 0..300u64 {
            let arena = random(
                RandomParams {
                    vertices: 30 + (seed % 7) as u32 * 40,
                    min_degree: 1,
                    max_degree: 1 + (seed % 4) as u32,
                    min_weight: -6,
                    max_weight: 6,
                    player1_percent: 50,
                },
                seed,
            );
            let n = arena.vertex_count();
            let bound = energy::bound(&arena).expect("fits");
            // A start below f*: a few sequential lifts' worth (plain lifting from 0).
            let start = crate::solve::worklist::solve_budgeted(
                &crate::solve::worklist::Primal {
                    arena: &arena,
                    bound,
                    topping: None,
                },
                vec![0; n],
                crate::solve::control::Budget {
                    lifts: (seed % 5) * n as u64 / 2,
                    until: None,
                },
                &Control::new(),
            )
            .expect("lifts")
            .0
            .values;
            // One evaluation from `start` through `engine`: values, moves, outcome, and
            // whether the graph's successor side was built.
            let run = |engine: &mut dyn LiftEngine, threads: &Threads| {
                let mut values = start.clone();
                let mut sigma = vec![u32::MAX; n];
                choose_strategy(&arena, &values, bound, &mut sigma, threads);
                let mut graph = Graph::default();
                let mut ranks = TopRanks::default();
                let outcome = evaluate(
                    engine,
                    &arena,
                    &mut values,
                    bound,
                    &mut sigma,
                    &mut graph,
                    &mut ranks,
                    threads,
                    &mut Phases::default(),
                    &Control::new(),
                )
                .expect("evaluates");
                let sides = (graph.has_successors(), graph.has_predecessors());
                (values, sigma, outcome, sides, ranks.ranks().to_vec())
            };
            let one = run(&mut WorklistEngine, &Threads::one());
            assert_eq!(
                one.3,
                (true, true),
                "seed {seed}: the host's components built both sides"
            );
            for t in [2, 3] {
                let many = run(&mut WorklistEngine, &Threads::new(t).with_parallel_from(0));
                assert_eq!(one.0, many.0, "seed {seed}: values on {t} threads");
                assert_eq!(one.2, many.2, "seed {seed}: outcome on {t} threads");
                assert_eq!(one.1, many.1, "seed {seed}: moves on {t} threads");
                assert_eq!(one.4, many.4, "seed {seed}: ranks on {t} threads");
            }
            // The engine's components (with and without its witness), reachability and
            // Bellman–Ford (or the host's, from a predecessor side built late) change
            // nothing.
            for (witness, evaluates, leaves, alone) in [
                (false, false, false, false),
                (true, false, false, true),
                (false, true, false, false),
                (true, true, false, true),
                (false, false, true, true),
                (true, true, true, false),
            ] {
                for threads in [Threads::one(), Threads::new(2).with_parallel_from(0)] {
                    let mut engine = HostComponents {
                        arena: &arena,
                        witness,
                        evaluates,
                        leaves,
                        alone,
                        started: None,
                        calls: 0,
                        left: 0,
                        witnesses: 0,
                        reaches: 0,
                        relaxations: 0,
                        held: start.clone(),
                        reached: None,
                        bound,
                        attractions: 0,
                        attractions_moving: 0,
                    };
                    let (values, sigma, outcome, sides, ranks) = run(&mut engine, &threads);
                    assert!(engine.calls >= 1);
                    redo_passes += (engine.calls >= 2) as usize;
                    witnesses += engine.witnesses;
                    left += engine.left;
                    if evaluates {
                        assert_eq!(engine.reaches, 1, "seed {seed}: one reachability");
                        relaxations += engine.relaxations;
                    }
                    assert!(!sides.0, "seed {seed}: no successor side built");
                    assert_eq!(
                        sides.1, !evaluates,
                        "seed {seed}: a predecessor side only for the host's searches"
                    );
                    let case = format!(
                        "seed {seed}: engine, witness {witness}, {evaluates}, leaves {leaves}, \
                         alone {alone}"
                    );
                    assert_eq!(one.0, values, "{case}: values");
                    assert_eq!(one.2, outcome, "{case}: outcome");
                    assert_eq!(one.1, sigma, "{case}: moves");
                    assert_eq!(one.4, ranks, "{case}: ranks");
                    attractions += engine.attractions;
                    attractions_moving += engine.attractions_moving;
                }
            }
        }
        // Every one of the engine's paths was taken: redo passes, confirmed witnesses,
        // Bellman–Ford, components left to the host, attractors that moved vertices and
        // attractors that moved none.
        assert!(
            redo_passes > 0 && witnesses > 0 && relaxations > 0 && left > 0,
            "{redo_passes} redo passes, {witnesses} witnesses, {relaxations} relaxations, \
             {left} vertices left"
        );
        assert!(
            attractions_moving > 0 && attractions > attractions_moving,
            "{attractions} attractors on the engine, {attractions_moving} moved vertices"
        );
    }
}
