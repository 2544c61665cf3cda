//! The parts of one evaluation, each taken from the engine where it computes it (a device)
//! or computed on the host: the components (with a confirmed greedy witness), which of them
//! hold a cycle of weight `>= 0`, the sources of the backward reachability, and the least
//! credits to the pinned vertices (Bellman–Ford).

use crate::arena::{Arena, VertexId};
use crate::graph::Graph;
use crate::graph::cycles::{Numbers, confirms_greedy_cycle, nonnegative_components};
use crate::graph::reach::reaching;
use crate::graph::scc::{NO_COMPONENT, components_alone_last};
use crate::solve::SolveError;
use crate::solve::accel::relax::credits_to_pinned;
use crate::solve::accel::remainder::complete_left;
use crate::solve::accel::representatives::{Numbered, numbered};
use crate::solve::control::{Control, Interrupted};
use crate::solve::engine::LiftEngine;
use crate::solve::engine::{CLOSED, OPEN, PINNED};
use crate::solve::threads::Threads;

use super::*;

/// Components of an evaluation's graph: each vertex's, their count, one known to hold a
/// cycle of weight `>= 0` (a confirmed greedy witness), if any, and whether the host computed
/// them (and so built the graph's successor side).
pub(super) struct Found {
    pub(super) component: Vec<u32>,
    pub(super) count: u32,
    /// Components `alone_from..count` are single vertices (`Numbered::alone_from`).
    pub(super) alone_from: u32,
    pub(super) settled: Option<u32>,
    /// Where the cycle test's greedy walk starts ([`super::cycles::Numbers::walk_from`]).
    pub(super) walk_from: Option<VertexId>,
    pub(super) on_host: bool,
}

/// The components `engine` computed for the graph whose words are `keeps`, when `started`
/// (it took them in [`LiftEngine::start_components`]), with its greedy witness where the host
/// confirms it; `None` if it was not started, gave up, or returned no partition.
pub(super) fn engine_components(
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
pub(super) fn host_components(
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
pub(super) fn nonnegative(
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
pub(super) fn reaching_sources(
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
pub(super) fn credits_to(
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
