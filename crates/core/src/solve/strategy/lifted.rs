//! Player 1's strategy on `W1` from the lifting's record ([`super::topping`]), checked only
//! where its cycles can be.
//!
//! **The moves.** A player-1 vertex of `W1` moves as the evaluations recorded if it is
//! ranked (`accel::ranks`), as the lift that topped it recorded otherwise, and as the seed
//! (the driver's last σ1) if neither knows. Call `G'` the graph of these moves inside `W1`
//! (player 0 keeps every edge).
//!
//! **Where the cycles are.** Call a vertex of `W1` *plain* if it is ranked and its edges in
//! `G'` all lead to ranked vertices of no higher rank, or if lifting topped it by successors
//! already at ⊤. Every other vertex is a *root*. A cycle of `G'` without a root is negative:
//! if it meets a ranked vertex it stays among ranked vertices of one rank, where every cycle
//! is negative (`accel::ranks`); otherwise each of its vertices read its successor on the
//! cycle at ⊤ before publishing its own ⊤, which no cycle can do (`super::topping`). So every
//! nonnegative cycle of `G'` passes through a root, and lies in the part of `G'` reachable
//! from the roots (the *core*, closed under `G'`'s edges).
//!
//! **The check.** The core, copied into a small arena of its own, gets the evaluations'
//! components and cycle-sign test (`graph::scc`, `graph::cycles`): no nonnegative cycle
//! there means none in `G'`, and with `W1` closed (player 0 cannot leave it, the moves never
//! do) the moves win on all of `W1`, which `egsolve check` certifies. On a parity game's
//! reduction only vertices with a negative weight can pass the bound, so the core is a small
//! part of `W1`; the cost is a pass over `W1`'s edges and the core's own.
//!
//! **Where the pass runs.** The pass that gives each vertex its move and kind
//! ([`RecordedMoves`]) runs on the host ([`recorded_on_host`]) or, for a solve without
//! evaluations (no ranks, no seed), where the values and the record are: the GPU classifies
//! its own record (`kernels/lift.cu` `recorded_moves`) and hands over only the moves and the
//! roots, so neither the record nor a pass over `W1` comes to the host (Hesselink's
//! reduction on the H200 host: 5.8–6.3 ms for the GPU route instead of 8.4–9.5). Either way
//! the check below is the host's.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::NO_RANK;
use super::topping::{NO_EDGE, ToppedBy, Topping};
use crate::arena::{Arena, EdgeWeights, Player, Successors, VertexId};
use crate::graph::Graph;
use crate::graph::cycles::{Numbers, nonnegative_components};
use crate::graph::reach::explore;
use crate::graph::scc::components_alone_last;
use crate::solve::chunked;
use crate::solve::control::{Control, Interrupted};
use crate::solve::energy::TOP;
use crate::solve::threads::{Threads, positions_where};

/// Player 1's recorded moves on `W1` and what their check needs of them (module docs):
/// classified on the host (`recorded_on_host`) or where the values and the record are (a
/// device, `EngineSearches::recorded_moves`, for a solve without evaluations), vertex for
/// vertex the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedMoves {
    /// An edge per vertex: player 1's move at its vertices of `W1`, [`NO_EDGE`] elsewhere
    /// (and everywhere when `broken`).
    pub moves: Vec<u32>,
    /// The roots, in any order (empty when `broken`).
    pub roots: Vec<VertexId>,
    /// Some vertex of `W1` is broken: a player-1 vertex without a move into `W1`, or a
    /// player-0 vertex with an edge out of it (nothing to certify then).
    pub broken: bool,
    /// Some vertex was topped by successors at ⊤.
    pub lifted: bool,
}

impl RecordedMoves {
    /// The host's classification of `topping` for a solve without evaluations (no ranks,
    /// no seed): what a device's classification must equal, roots apart from their order.
    pub fn of_record(
        arena: &Arena,
        credit: &[u64],
        topping: &Topping,
        threads: &Threads,
    ) -> RecordedMoves {
        threads.install(|| recorded_on_host(arena, credit, &[], None, topping))
    }

    /// Some of `W1` was topped by recording lifts (roots, or vertices topped by ⊤
    /// successors); else every vertex was ranked, and the moves are the evaluations'.
    pub fn from_lifts(&self) -> bool {
        !self.roots.is_empty() || self.lifted
    }
}

/// Player 1's moves on `W1` (where `credit` is ⊤) from `topping`, the evaluations' `ranks`
/// (with `seed`, their moves) if any, and the seed elsewhere, classified as the module docs
/// say. Runs on the calling thread's pool.
pub(super) fn recorded_on_host(
    arena: &Arena,
    credit: &[u64],
    seed: &[u32],
    ranks: Option<&[u32]>,
    topping: &Topping,
) -> RecordedMoves {
    let n = credit.len();
    let targets = arena.succ_targets();
    let in_w1 = |u: VertexId| credit[u as usize] == TOP;
    let rank = |u: VertexId| ranks.map_or(NO_RANK, |r| r[u as usize]);
    // One pass over W1: each vertex's move and what it is (module docs). Only roots and
    // ranked vertices read their edges: a vertex topped by ⊤ successors moves into W1 and
    // (player 0) has only successors in W1 by the way it was topped.
    let (moves, kinds): (Vec<u32>, Vec<Kind>) = chunked::map_pairs(n, |v| {
        let v = v as VertexId;
        if !in_w1(v) {
            return (NO_EDGE, Kind::Outside);
        }
        let (r, cause) = (rank(v), topping.cause(v));
        let player1 = arena.owner(v) == Player::One;
        if r == NO_RANK && cause == ToppedBy::TopSuccessors {
            return match (player1, topping.edge(v)) {
                (false, _) => (NO_EDGE, Kind::Lifted),
                // (A record without the edge: one past 2^30 - 2 successors.)
                (true, NO_EDGE) => (NO_EDGE, Kind::Broken),
                (true, e) => (e, Kind::Lifted),
            };
        }
        let edges = if player1 {
            let e = match (r, cause) {
                (NO_RANK, ToppedBy::PastBound) => topping.edge(v),
                _ => seed.get(v as usize).copied().unwrap_or(NO_EDGE),
            };
            if e == NO_EDGE || !in_w1(targets[e as usize]) {
                return (NO_EDGE, Kind::Broken);
            }
            e as usize..e as usize + 1
        } else {
            arena.succ_range(v)
        };
        let e = if player1 { edges.start as u32 } else { NO_EDGE };
        let successors = &targets[edges];
        if r != NO_RANK && successors.iter().all(|&u| rank(u) <= r) {
            (e, Kind::Plain)
        } else if successors.iter().all(|&u| in_w1(u)) {
            (e, Kind::Root)
        } else {
            (e, Kind::Broken)
        }
    });
    if chunked::any(n, |v| kinds[v] == Kind::Broken) {
        return RecordedMoves {
            moves: Vec::new(),
            roots: Vec::new(),
            broken: true,
            lifted: false,
        };
    }
    RecordedMoves {
        moves,
        roots: positions_where(&kinds, |&k| k == Kind::Root),
        broken: false,
        lifted: chunked::any(n, |v| kinds[v] == Kind::Lifted),
    }
}

/// Whether `recorded`'s moves win on all of `W1` (module docs: no nonnegative cycle in the
/// part of `G'` that the roots reach). Runs on the calling thread's pool.
pub(super) fn certified(
    arena: &Arena,
    recorded: &RecordedMoves,
    threads: &Threads,
    control: &Control,
) -> Result<bool, Interrupted> {
    if recorded.broken || recorded.moves.len() != arena.vertex_count() {
        return Ok(false);
    }
    control.checkpoint()?;
    let g = Moves {
        arena,
        moves: &recorded.moves,
    };
    let core = reachable(arena.vertex_count(), recorded.roots.clone(), |v| {
        g.successors(v)
    });
    tracing::debug!(
        roots = recorded.roots.len(),
        core = core.len(),
        "player 1's strategy: the recorded moves' core"
    );
    Ok(core.is_empty() || !has_nonnegative_cycle(&g, core, threads, control)?)
}

/// What a vertex is to the check (module docs).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not in `W1`.
    Outside,
    /// Ranked, its edges to no higher rank: on no nonnegative cycle without a root.
    Plain,
    /// Topped by ⊤ successors: on no cycle without a root.
    Lifted,
    /// Any other vertex of `W1`.
    Root,
    /// Player 1 without a move into `W1`, or player 0 with an edge out of it.
    Broken,
}

/// Every vertex reachable from `start` by `successors` (`start` included), in vertex order.
/// The vertices seen are a bit each: `n / 8` bytes to clear and scan, where the core is
/// usually a handful of vertices (a byte each took a good part of a millisecond at 10^6
/// vertices on the H200 host).
fn reachable<'a>(
    n: usize,
    start: Vec<VertexId>,
    successors: impl Fn(VertexId) -> &'a [VertexId] + Sync,
) -> Vec<VertexId> {
    if start.is_empty() {
        return start;
    }
    let seen: Vec<AtomicU64> = (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    let claim = |v: VertexId| {
        let (word, bit) = (&seen[v as usize / 64], 1u64 << (v % 64));
        word.load(Relaxed) & bit == 0 && word.fetch_or(bit, Relaxed) & bit == 0
    };
    let start: Vec<VertexId> = start.into_iter().filter(|&v| claim(v)).collect();
    explore(start, |v, next| {
        next.extend(successors(v).iter().copied().filter(|&u| claim(u)));
    });
    let pieces = chunked::chunk_values(seen.len(), |words| {
        let mut found = Vec::new();
        for w in words {
            let mut bits = seen[w].load(Relaxed);
            while bits != 0 {
                found.push((w * 64) as VertexId + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        found
    });
    chunked::concatenated(pieces)
}

/// `G'`: player 0's edges and player 1's moves (the edges of `moves`).
struct Moves<'a> {
    arena: &'a Arena,
    moves: &'a [u32],
}

impl Moves<'_> {
    /// `v`'s edges in `G'` (arena edge indices).
    fn edges(&self, v: VertexId) -> std::ops::Range<usize> {
        match self.arena.owner(v) {
            Player::Zero => self.arena.succ_range(v),
            Player::One => {
                let e = self.moves[v as usize] as usize;
                e..e + 1
            }
        }
    }

    /// The targets of `v`'s edges in `G'`.
    fn successors(&self, v: VertexId) -> &[VertexId] {
        &self.arena.succ_targets()[self.edges(v)]
    }
}

/// Whether `G'` restricted to `core` (sorted; closed under `G'`'s edges) has a cycle of
/// weight `>= 0`, by the evaluations' components and cycle-sign test on a copy of it with
/// vertices `0..core.len()` (every edge kept: each is owned by player 0).
fn has_nonnegative_cycle(
    g: &Moves<'_>,
    core: Vec<VertexId>,
    threads: &Threads,
    control: &Control,
) -> Result<bool, Interrupted> {
    let arena = g.arena;
    let local = |u: VertexId| core.binary_search(&u).expect("the core is closed") as VertexId;
    let mut offsets = Vec::with_capacity(core.len() + 1);
    offsets.push(0u32);
    for &v in &core {
        offsets.push(offsets[offsets.len() - 1] + g.edges(v).len() as u32);
    }
    let pieces = chunked::chunk_values(core.len(), |range| {
        core[range]
            .iter()
            .flat_map(|&v| g.edges(v))
            .map(|e| (local(arena.succ_targets()[e]), arena.weight(e)))
            .unzip::<_, _, Vec<VertexId>, Vec<i64>>()
    });
    let (targets, weights) = pieces.into_iter().fold(
        (Vec::new(), Vec::new()),
        |(mut targets, mut weights), (t, w)| {
            targets.extend(t);
            weights.extend(w);
            (targets, weights)
        },
    );
    let k = core.len();
    let copy = Arena::from_successors(
        vec![Player::Zero; k],
        Successors {
            offsets,
            targets,
            weights: EdgeWeights::I64(weights),
        },
        None,
    )
    .expect("a closed core is an arena");
    let all = vec![true; k];
    let mut graph = Graph::default();
    graph.rebuild(&copy, &all, &vec![NO_EDGE; k], threads);
    let partition = components_alone_last(&graph, &all, threads);
    let good = nonnegative_components(&graph, Numbers::of_partition(&partition), threads, control)?;
    Ok(chunked::any(good.len(), |c| good[c]))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::generate::random_varied;
    use crate::solve::control::Budget;
    use crate::solve::cpu::{CpuAlgorithm, CpuOptions, lift_budgeted};
    use crate::solve::energy::bound;
    use crate::solve::engine::LiftCall;
    use crate::solve::strategy::topping::assert_record_holds;
    use crate::solve::worklist::{Primal, solve_budgeted};

    /// The record of a lift from 0 to the fixpoint: by the worklist, or by the CPU
    /// backend's rounds on `threads` threads (every round parallel).
    fn lift_from_zero(arena: &Arena, threads: Option<usize>) -> (Vec<u64>, Topping) {
        let n = arena.vertex_count();
        let m = bound(arena).expect("fits");
        let topping = Topping::new(n);
        let values = match threads {
            None => {
                let game = Primal {
                    arena,
                    bound: m,
                    topping: Some(&topping),
                };
                let (lifted, finished) =
                    solve_budgeted(&game, vec![0; n], Budget::UNLIMITED, &Control::new())
                        .expect("lifts");
                assert!(finished);
                lifted.values
            }
            Some(count) => {
                let options = CpuOptions {
                    threads: count,
                    algorithm: CpuAlgorithm::Frontier,
                    sequential_below_edges: 0,
                };
                let threads = Threads::new(count).with_parallel_from(0);
                let control = Control::new();
                let call = LiftCall {
                    arena,
                    bound: m,
                    topping: Some(&topping),
                    budget: Budget::UNLIMITED,
                    threads: &threads,
                    control: &control,
                };
                let lifted = lift_budgeted(call, vec![0; n], &options).expect("lifts");
                assert!(lifted.finished);
                lifted.values
            }
        };
        (values, topping)
    }

    /// On random games (fixed seeds and a fresh one), every recording engine's record keeps
    /// its invariant: the worklist, and the CPU rounds on 1, 2 and 3 threads.
    #[test]
    fn every_lift_records_why_a_vertex_reached_top() {
        let fresh: u64 = rand::random();
        let (mut by_top, mut past_bound) = (0, 0);
        for seed in (0..120u64).chain([fresh]) {
            let arena = random_varied(seed, 20 + (seed % 9) as u32 * 60);
            for threads in [None, Some(1), Some(2), Some(3)] {
                let context = format!("seed {seed}, threads {threads:?}");
                let (values, topping) = lift_from_zero(&arena, threads);
                assert_record_holds(&arena, &values, &topping, &context);
                for v in 0..arena.vertex_count() as VertexId {
                    by_top += (topping.cause(v) == ToppedBy::TopSuccessors) as u64;
                    past_bound += (topping.cause(v) == ToppedBy::PastBound) as u64;
                }
            }
        }
        assert!(by_top > 1000 && past_bound > 1000, "{by_top} {past_bound}");
    }

    /// A record classified elsewhere (`Seed::recorded`, as a device hands it over) gives the
    /// strategy and source the record itself gives, on random games (fixed seeds and a fresh
    /// one); a broken classification leaves `W1` to the construction (or the dual game),
    /// whose strategy the checker passes.
    #[test]
    fn a_classified_record_gives_the_records_own_strategy() {
        use crate::check::{Claim, check};
        use crate::solve::strategy::player1_dual;
        use crate::solve::strategy::{Player1Source, Seed, certified_strategy, player0};
        let fresh: u64 = rand::random();
        eprintln!("fresh seed {fresh}");
        let (mut from_lifts, mut broken_record) = (0, 0);
        for seed in (0..60u64).chain([fresh]) {
            let arena = random_varied(seed, 20 + (seed % 7) as u32 * 90);
            let (values, topping) = lift_from_zero(&arena, None);
            let threads = Threads::one();
            let control = Control::new();
            let first = player0(&arena, &values, bound(&arena).expect("fits"), &threads);
            let run = |seed: Seed<'_>| {
                let mut strategy = first.clone();
                let source =
                    certified_strategy(&arena, &values, seed, &mut strategy, &threads, &control)
                        .expect("not cancelled");
                if !source.without_dual_game() {
                    player1_dual(&arena, &values, &mut strategy, &control).expect("solves");
                }
                (strategy, source)
            };
            let by_record = run(Seed {
                topping: Some(&topping),
                ..Seed::none()
            });
            let recorded = RecordedMoves::of_record(&arena, &values, &topping, &threads);
            broken_record += recorded.broken as u32;
            let by_class = run(Seed {
                recorded: Some(&recorded),
                ..Seed::none()
            });
            assert_eq!(by_class, by_record, "seed {seed}");
            from_lifts += (by_record.1 == Player1Source::Lifted) as u32;
            let broken = RecordedMoves {
                broken: true,
                ..RecordedMoves::default()
            };
            let (strategy, source) = run(Seed {
                recorded: Some(&broken),
                ..Seed::none()
            });
            assert!(
                !matches!(source, Player1Source::Lifted | Player1Source::Recorded),
                "seed {seed}: {source:?}"
            );
            let claim = Claim {
                credit: &values,
                strategy: &strategy,
            };
            let report = check(&arena, claim).expect("checkable");
            assert!(report.passed(), "seed {seed}");
        }
        assert!(
            from_lifts > 10,
            "{from_lifts} of 61 certified from the record"
        );
        assert!(broken_record < 61, "every record broken");
    }
}
