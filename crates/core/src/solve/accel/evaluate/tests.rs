//! Tests of one evaluation: against the reference on random games, through engines that answer its parts as a device would, on any number of threads.

use super::*;
use crate::generate::{RandomParams, random};
use crate::graph::reach::reaching;
use crate::graph::scc::components;
use crate::solve::accel::relax::credits_to_pinned;
use crate::solve::energy;
use crate::solve::engine::{
    ALONE, CLOSED, EngineAttracted, EngineComponents, EngineSearches, LEFT_TO_HOST, LiftCall,
    LiftRun, OPEN, PINNED, WorklistEngine,
};

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
    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        WorklistEngine.lift(call, values)
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
            let members = crate::graph::cycles::greedy_witnesses(&graph, &component, c);
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
