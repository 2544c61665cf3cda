//! One evaluation: from values `f <= f*`, derive a positional strategy σ1 of player 1, and
//! raise `f` to a lower bound of `f*` computed in the one-player graph `G_σ1` (see the
//! module docs of [`super`] for why each step is sound). Every step runs on the solve's
//! threads and computes a set or a fixpoint that does not depend on them.

use super::ranks::TopRanks;
use crate::arena::{Arena, Player, VertexId};
use crate::graph::attractor::{apply_layers, attract_top};
use crate::graph::scc::NO_COMPONENT;
use crate::graph::{DROPS_ALL, Graph};
use crate::solve::SolveError;
use crate::solve::chunked;
use crate::solve::control::Control;
use crate::solve::energy::{TOP, minus};
use crate::solve::engine::LiftEngine;
use crate::solve::phases::{Phases, Stopwatch};
use crate::solve::threads::Threads;

mod parts;
use parts::*;

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
            chunked::for_each_mut(sigma_edge, choose);
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
        threads.install(|| chunked::map(n, f))
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
        threads.install(|| chunked::map_pairs(n, f))
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
            chunked::values_of_chunks_mut(values, CHUNK, |c, part| chunk((c, part)))
                .into_iter()
                .fold((0, 0), add)
        })
    } else {
        chunk((0, values))
    }
}

/// Whether `f` holds at some vertex of `0..n`: on `threads` in chunks of plain loops where
/// `n` is large (a scan of every vertex on one thread costs milliseconds at millions).
fn any_vertex(n: usize, threads: &Threads, f: impl Fn(usize) -> bool + Sync + Send) -> bool {
    if threads.parallel(n) {
        threads.install(|| chunked::any(n, f))
    } else {
        (0..n).any(f)
    }
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
            threads.install(|| chunked::for_each_mut(&mut pinned, |v, p| pin((v, p))));
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
mod tests;
