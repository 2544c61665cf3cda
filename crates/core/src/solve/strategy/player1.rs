//! Player 1's winning strategy on `W1`, built in layers and certified by its construction;
//! used by every backend ([`crate::solve::Solution::from_credits`]) before the dual game,
//! which stays the fallback. First, where the lifting engine recorded why it topped each
//! vertex (`super::topping`), the recorded moves, checked where their cycles can be
//! (`super::lifted`): if they pass, they are the strategy and nothing is built.
//! The accelerated solver's evaluations rank the vertices they top (`accel::ranks`), and
//! their recorded moves win on the ranked ones: if those cover `W1`, they are the strategy;
//! otherwise `S` below starts as the ranked vertices instead of empty.
//!
//! Start from a move σ1 for each player-1 vertex of `W1` (a seed: the accelerated driver's
//! last σ1, kept at each vertex from the evaluation or attractor that last saw it finite; a
//! lightest edge into `W1` where there is none or it leaves `W1`). Then grow a trap
//! `S ⊆ W1` in which σ1 makes every cycle negative, in layers:
//! - player 1's **attractor** to `S` inside `W1` (a player-1 vertex with a successor in
//!   `S` moves there; a player-0 vertex joins when all its successors have): its moves lead
//!   to lower layers, so they close no cycle;
//! - then the vertices of the rest `R = W1 \ S` that **cannot reach a nonnegative cycle** of
//!   `G_σ1` restricted to `R` (components, the cycle-sign test, backward reachability): their
//!   edges stay in that layer or lead into `S`, and every cycle in the layer is negative.
//!
//! Repeat until `S = W1`. Every cycle of the final strategy lies in one layer and is
//! negative, and `W1` is closed (player 0 cannot leave it, σ1 never does), which is what
//! `egsolve check` certifies. If a round adds nothing, `false`: the caller falls back.
//!
//! Cost: one graph build, then per round an attractor step and, on the part of `R` whose
//! components may still hold a nonnegative cycle (components of `R` refine those of the
//! round before, and a component without one keeps none), components and cycle tests. All
//! of it runs on the solve's threads, and every choice (layers, moves) is independent of
//! them.

use super::NO_RANK;
use super::lifted::{RecordedMoves, certified, recorded_on_host};
use super::topping::Topping;
use crate::arena::{Arena, Player, VertexId};
use crate::graph::Graph;
use crate::graph::attractor::{Layers, NO_LAYER};
use crate::graph::cycles::{Numbers, nonnegative_components};
use crate::graph::reach::reaching;
use crate::graph::scc::{NO_COMPONENT, components_alone_last};
use crate::solve::NO_MOVE;
use crate::solve::chunked;
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::TOP;
use crate::solve::phases::Stopwatch;
use crate::solve::threads::{Threads, positions_where};

/// No seed move at this vertex.
pub use super::topping::NO_EDGE;

/// What a backend knows of player 1's strategy when its credits are final.
#[derive(Debug, Clone, Copy)]
pub struct Seed<'a> {
    /// A move (edge index) per vertex, [`NO_EDGE`] for none; empty: none anywhere.
    pub edges: &'a [u32],
    /// The accelerated solver's ranks of the vertices at ⊤ (`accel::ranks`; possibly
    /// frozen, so covering part of `W1`): `edges` already win on the ranked vertices.
    pub ranks: Option<&'a [u32]>,
    /// Why lifting topped each vertex, from an engine that records it (`super::topping`).
    pub topping: Option<&'a Topping>,
    /// The record already classified where the engine keeps it (a device), for a solve
    /// without evaluations: used instead of `topping`.
    pub recorded: Option<&'a RecordedMoves>,
    /// Whether player 1 wins somewhere (some credit is ⊤), where the caller has looked
    /// already: [`certified_strategy`] then skips its own pass over the credits (on BRP's
    /// 2.2 million, half a millisecond of a 13 ms solve on the H200 host). It must be the
    /// truth about the credits passed with it: a wrong `Some(false)` would leave player 1
    /// without moves on `W1` (checked in debug builds only).
    pub player1_wins: Option<bool>,
}

impl Seed<'_> {
    /// No moves known.
    pub fn none() -> Seed<'static> {
        Seed {
            edges: &[],
            ranks: None,
            topping: None,
            recorded: None,
            player1_wins: None,
        }
    }
}

/// Where player 1's strategy came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Player1Source {
    /// Player 1 wins nowhere: nothing to choose.
    Empty,
    /// The moves recorded by the lifts that topped `W1` (and by the evaluations), checked
    /// where their cycles can be (`super::lifted`; no construction).
    Lifted,
    /// The evaluations' recorded moves, accepted by their ranks (no construction).
    Recorded,
    /// The recorded moves on part of `W1`, the layered construction on the rest.
    RecordedAndLayers,
    /// The layered construction of this module.
    Layers,
    /// The layered construction, after the evaluations' record failed its check (never
    /// expected: the ranks' construction makes it hold; tests assert it does not happen).
    LayersRecordRejected,
    /// The dual game (the fallback, or not computed yet).
    #[default]
    DualGame,
}

impl Player1Source {
    /// Whether the strategy came without the dual game.
    pub fn without_dual_game(self) -> bool {
        self != Player1Source::DualGame
    }
}

/// Player 1's strategy on `W1` (where `credit` is ⊤) from `seed`: writes `strategy[v]` at
/// the player-1 vertices of `W1` and nothing elsewhere. The recorded moves where the ranks
/// accept them ([`recorded_moves`]); the layered construction from those (or from nothing)
/// for the rest of `W1`; [`Player1Source::DualGame`] if the layers stop before covering
/// `W1` (those entries are then [`NO_MOVE`]).
pub fn certified_strategy(
    arena: &Arena,
    credit: &[u64],
    seed: Seed<'_>,
    strategy: &mut [VertexId],
    threads: &Threads,
    control: &Control,
) -> Result<Player1Source, Interrupted> {
    threads.install(|| {
        let player1_wins = seed
            .player1_wins
            .unwrap_or_else(|| chunked::any(credit.len(), |v| credit[v] == TOP));
        debug_assert_eq!(
            player1_wins,
            credit.contains(&TOP),
            "the seed's claim holds"
        );
        if !player1_wins {
            // Player 1 wins nowhere: no moves to choose, nothing to check.
            return Ok(Player1Source::Empty);
        }
        // Ranks and moves for every vertex, or nothing to go on.
        let n = credit.len();
        let ranks = seed.ranks.filter(|r| r.len() == n && seed.edges.len() == n);
        // The lifts' record first: its moves, if certified. If not, the layered
        // construction starts from the seed, not from these moves: the recorded moves lead
        // into the roots' cycles, from which its layers cannot peel (on random games it
        // then stopped short more often, leaving the dual game).
        let on_host;
        let recorded = match (seed.recorded, seed.topping) {
            (Some(recorded), _) => Some(recorded),
            (None, Some(topping)) if topping.len() == n => {
                on_host = recorded_on_host(arena, credit, seed.edges, ranks, topping);
                Some(&on_host)
            }
            _ => None,
        };
        if let Some(recorded) = recorded {
            if certified(arena, recorded, threads, control)? {
                write_recorded(arena, &recorded.moves, strategy);
                tracing::debug!("player 1's strategy: the recorded moves written");
                return Ok(if recorded.from_lifts() {
                    Player1Source::Lifted
                } else {
                    Player1Source::Recorded
                });
            }
        }
        let mut prefix = None;
        let mut layers = Player1Source::Layers;
        if let Some(ranks) = ranks {
            match recorded_moves(arena, credit, seed.edges, ranks, strategy) {
                Recorded::Everywhere => return Ok(Player1Source::Recorded),
                Recorded::Partly => {
                    prefix = Some(ranks);
                    layers = Player1Source::RecordedAndLayers;
                }
                Recorded::Nothing => {}
                Recorded::Rejected => {
                    tracing::warn!("player 1's recorded moves failed their check; building them");
                    layers = Player1Source::LayersRecordRejected;
                }
            }
        }
        if layered(
            arena, credit, seed.edges, prefix, strategy, threads, control,
        )? {
            return Ok(layers);
        }
        chunked::for_each_mut(strategy, |v, s| {
            if credit[v] == TOP && arena.owner(v as VertexId) == Player::One {
                *s = NO_MOVE;
            }
        });
        Ok(Player1Source::DualGame)
    })
}

/// How far the recorded moves go.
enum Recorded {
    /// They cover `W1`.
    Everywhere,
    /// They win on the ranked vertices, a part of `W1`.
    Partly,
    /// No vertex of `W1` is ranked (nothing written).
    Nothing,
    /// The record does not hold (nothing written).
    Rejected,
}

/// Player 1's moves on the ranked vertices of `W1` as the evaluations recorded them
/// (`accel::ranks`): each ranked player-1 vertex's seed move. They hold, and are written to
/// `strategy`, if every such move and every edge of a ranked player-0 vertex leads to a
/// vertex of `W1` of no higher rank: with the ranks' construction (every cycle within a rank
/// is negative) σ1 then wins on the ranked vertices, which neither player can leave. The
/// check is one pass over their edges; it catches a broken record, and relies on the
/// construction for the cycles.
fn recorded_moves(
    arena: &Arena,
    credit: &[u64],
    seed: &[u32],
    ranks: &[u32],
    strategy: &mut [VertexId],
) -> Recorded {
    let targets = arena.succ_targets();
    // (the record holds here, an unranked vertex of W1 is here, a ranked one is)
    let check = |v: usize| {
        if credit[v] != TOP {
            return (true, false, false);
        }
        let rank = ranks[v];
        if rank == NO_RANK {
            return (true, true, false);
        }
        let no_higher = |&u: &VertexId| credit[u as usize] == TOP && ranks[u as usize] <= rank;
        let holds = match arena.owner(v as VertexId) {
            Player::Zero => targets[arena.succ_range(v as VertexId)]
                .iter()
                .all(no_higher),
            Player::One => seed[v] != NO_EDGE && no_higher(&targets[seed[v] as usize]),
        };
        (holds, false, true)
    };
    let both = |a: (bool, bool, bool), b: (bool, bool, bool)| (a.0 && b.0, a.1 || b.1, a.2 || b.2);
    let (holds, unranked, ranked) = chunked::fold(
        credit.len(),
        || (true, false, false),
        |acc, v| both(acc, check(v)),
        both,
    );
    if !holds {
        return Recorded::Rejected;
    }
    if !ranked {
        return Recorded::Nothing;
    }
    write_moves(arena, credit, seed, |v| ranks[v] != NO_RANK, strategy);
    if unranked {
        Recorded::Partly
    } else {
        Recorded::Everywhere
    }
}

/// Writes the target of `moves[v]` as `strategy[v]` at every player-1 vertex `v` of `W1`
/// with `chosen(v)`.
fn write_moves(
    arena: &Arena,
    credit: &[u64],
    moves: &[u32],
    chosen: impl Fn(usize) -> bool + Sync,
    strategy: &mut [VertexId],
) {
    let targets = arena.succ_targets();
    chunked::for_each_mut(strategy, |v, s| {
        if credit[v] == TOP && arena.owner(v as VertexId) == Player::One && chosen(v) {
            *s = targets[moves[v] as usize];
        }
    });
}

/// Writes the target of every move of `moves` ([`RecordedMoves::moves`]: an edge at player
/// 1's vertices of `W1`, [`NO_EDGE`] elsewhere) as `strategy[v]`, in chunks of plain loops
/// (per vertex, a parallel iterator took 0.6 ms at 10^6 vertices on the H200 host).
fn write_recorded(arena: &Arena, moves: &[u32], strategy: &mut [VertexId]) {
    let targets = arena.succ_targets();
    chunked::for_each_chunk_mut(strategy, |start, strategy| {
        for (s, &e) in strategy
            .iter_mut()
            .zip(moves.get(start..).unwrap_or_default())
        {
            if e != NO_EDGE {
                *s = targets[e as usize];
            }
        }
    });
}

/// [`certified_strategy`] inside the solve's pool, `W1` not empty: every per-vertex pass is
/// a parallel iterator (the same result on any number of threads).
fn layered(
    arena: &Arena,
    credit: &[u64],
    seed: &[u32],
    prefix: Option<&[u32]>,
    strategy: &mut [VertexId],
    threads: &Threads,
    control: &Control,
) -> Result<bool, Interrupted> {
    let mut watch = Stopwatch::start();
    let mut seconds = PartSeconds::default();
    let n = arena.vertex_count();
    let in_w1: Vec<bool> = chunked::map(n, |v| credit[v] == TOP);
    let Some((edge, open)) = seed_moves(arena, &in_w1, seed) else {
        return Ok(false);
    };
    // S starts as the ranked vertices (their moves are written), all in layer 0.
    let ranked = |v: usize| prefix.is_some_and(|ranks| in_w1[v] && ranks[v] != NO_RANK);
    let mut layers = Layers {
        layer: chunked::map(n, |v| if ranked(v) { 0 } else { NO_LAYER }),
        open,
    };
    let mut frontier: Vec<VertexId> = positions_where(&layers.layer[..n], |&l| l == 0);
    let frontier_recorded = frontier.len();
    let mut next_layer = u32::from(!frontier.is_empty());
    watch.lap(&mut seconds.seed);
    // The layers beyond S look at the edges among the rest of W1 only.
    let unranked: Vec<bool> = chunked::map(n, |v| in_w1[v] && !ranked(v));
    let mut graph = Graph::default();
    graph.rebuild(arena, &unranked, &edge, threads);
    watch.lap(&mut seconds.graph);
    // Vertices whose component may still hold a nonnegative cycle.
    let mut maybe_good = unranked;
    loop {
        if !frontier.is_empty() {
            let first = next_layer - 1;
            let (_, next) = layers.grow(
                arena,
                std::mem::take(&mut frontier),
                first,
                |_, _, _| true,
                |p| in_w1[p as usize],
                threads,
            );
            next_layer = next;
        }
        watch.lap(&mut seconds.attractor);
        let rest: Vec<bool> = chunked::map(n, |v| in_w1[v] && layers.layer[v] == NO_LAYER);
        if !chunked::any(n, |v| rest[v]) {
            break;
        }
        control.checkpoint()?;
        // Next layer: the vertices of R that cannot reach a nonnegative cycle in G_σ1 on R.
        let redo: Vec<bool> = chunked::map(n, |v| rest[v] && maybe_good[v]);
        let partition = components_alone_last(&graph, &redo, threads);
        watch.lap(&mut seconds.components);
        let good =
            nonnegative_components(&graph, Numbers::of_partition(&partition), threads, control)?;
        let (component, count) = (partition.component, partition.count);
        watch.lap(&mut seconds.cycle_test);
        chunked::for_each_mut(&mut maybe_good, |v, m| {
            *m = redo[v] && component[v] != NO_COMPONENT && good[component[v] as usize];
        });
        let reach = reaching(&graph, &rest, |v| maybe_good[v], threads);
        let layer: Vec<VertexId> = chunked::positions(n, |v| rest[v] && !reach[v]);
        tracing::debug!(
            components = count,
            layer = layer.len(),
            "player 1's strategy: a layer"
        );
        if layer.is_empty() {
            return Ok(false);
        }
        let targets = arena.succ_targets();
        for &v in &layer {
            layers.layer[v as usize] = next_layer;
            if arena.owner(v) == Player::One {
                strategy[v as usize] = targets[edge[v as usize] as usize];
            }
        }
        next_layer += 1;
        // Player-0 vertices outside S lose the successors just added.
        frontier = layer;
        watch.lap(&mut seconds.reach);
    }
    // Moves of the vertices the attractor took: their first edge to a lower layer.
    chunked::for_each_mut(strategy, |v, s| {
        let v = v as VertexId;
        if in_w1[v as usize] && arena.owner(v) == Player::One && *s == NO_MOVE {
            let e = layers
                .downward_edge(arena, v)
                .expect("an attracted player-1 vertex has an edge to a lower layer");
            *s = arena.succ_targets()[e];
        }
    });
    watch.lap(&mut seconds.moves);
    tracing::debug!(
        layers = next_layer,
        recorded = frontier_recorded,
        seed = seconds.seed,
        graph = seconds.graph,
        components = seconds.components,
        cycle_test = seconds.cycle_test,
        reach = seconds.reach,
        attractor = seconds.attractor,
        moves = seconds.moves,
        "player 1's strategy: seconds per part"
    );
    Ok(true)
}

/// Seconds per part of [`layered`], for the debug log.
#[derive(Default)]
struct PartSeconds {
    seed: f64,
    graph: f64,
    components: f64,
    cycle_test: f64,
    /// Reachability to the good components, and the new layer.
    reach: f64,
    attractor: f64,
    /// The attracted vertices' moves.
    moves: f64,
}

/// σ1 on `W1` from the seed (a kept edge staying in `W1`, else a lightest edge into `W1`;
/// among parallel edges to the chosen successor, the lightest, which a move to it means),
/// and player 0's counters of successors. `None` if `W1` is not closed (a player-0 vertex
/// with a successor outside, or a player-1 vertex without one inside): not a true `W1`.
fn seed_moves(arena: &Arena, in_w1: &[bool], seed: &[u32]) -> Option<(Vec<u32>, Vec<u32>)> {
    let n = arena.vertex_count();
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    let mut edge = vec![NO_EDGE; n];
    let mut open = vec![0u32; n];
    let open_outside = std::sync::atomic::AtomicBool::new(false);
    chunked::for_each_mut2(&mut edge, &mut open, |v, edge, open| {
        if !in_w1[v] {
            return;
        }
        let v = v as VertexId;
        let closed = match arena.owner(v) {
            Player::Zero => {
                *open = arena.succ_range(v).len() as u32;
                arena.successors(v).all(|(u, _)| in_w1[u as usize])
            }
            Player::One => {
                let kept = seed.get(v as usize).copied().unwrap_or(NO_EDGE);
                let e = if kept != NO_EDGE && in_w1[targets[kept as usize] as usize] {
                    Some(kept as usize)
                } else {
                    arena
                        .succ_range(v)
                        .filter(|&e| in_w1[targets[e] as usize])
                        .min_by_key(|&e| weights.get(e))
                };
                e.map(|e| *edge = lightest_edge(arena, v, targets[e]))
                    .is_some()
            }
        };
        if !closed {
            open_outside.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    (!open_outside.into_inner()).then_some((edge, open))
}

/// The edge of least weight from `v` to `u` (a strategy names only the successor, and
/// player 1 moving to `u` takes the cheapest of parallel edges).
fn lightest_edge(arena: &Arena, v: VertexId, u: VertexId) -> u32 {
    let targets = arena.succ_targets();
    let weights = arena.succ_weights();
    arena
        .succ_range(v)
        .filter(|&e| targets[e] == u)
        .min_by_key(|&e| weights.get(e))
        .expect("u is a successor of v") as u32
}
