//! Attractors, sequential or as parallel frontier rounds.
//!
//! An attractor grows a set by the rule "a vertex of the attracting player joins when one
//! successor is in the set, a vertex of the other player when all its successors in the
//! game are". The "all" rule counts down ([`State::touch_other`]): the first time a vertex
//! is touched, its counter is set to its ways out, and every successor that joins takes one
//! off. The ways out do not change during an attractor call — joining the set does not
//! change which vertices are in the game, and the opponent attractor reads winners that it
//! only updates after it ends — so any thread may count them, and exactly one thread sees
//! the counter reach zero and claims the vertex.
//!
//! Counts even outlive their call: after the heads' attractor of a frame, the counter of a
//! free vertex is the number of its successors in the subgame (the game minus the
//! attractor), which is exactly what the child frame's attractor needs. So the counts of
//! the heads' attractors along a chain of first children stay valid (`valid_from` is the
//! first call of the chain), and only a vertex first touched in the chain is counted,
//! which at the root is its out-degree. The chain ends where a frame's game is
//! rebuilt after the opponent's attractor took part of it.

pub use super::graph::Graph;
pub use super::state::{FREE, State};
use crate::arena::VertexId;
use crate::solve::NO_MOVE;
use crate::solve::chunked;

/// Vertices per task in a parallel round.
const CHUNK: usize = 512;

/// When rounds of an attractor run in parallel.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    /// Whether a thread pool is installed (more than one thread).
    pub parallel: bool,
    /// Rounds with at least this many vertices in their frontier run in parallel.
    pub parallel_from: usize,
}

impl Rounds {
    /// Every round on the caller's thread.
    pub const SEQUENTIAL: Rounds = Rounds {
        parallel: false,
        parallel_from: usize::MAX,
    };

    /// Runs `visit` on every vertex of `items` (each pushing what it claims into its
    /// output), in parallel chunks when there are enough of them, and appends the claims
    /// to `out`.
    fn for_each(
        &self,
        items: &[VertexId],
        out: &mut Vec<VertexId>,
        visit: impl Fn(VertexId, bool, &mut Vec<VertexId>) + Sync,
    ) {
        if self.parallel && items.len() >= self.parallel_from {
            let parts: Vec<Vec<VertexId>> = chunked::values_of_chunks(
                items.len(),
                chunked::chunk_len(items.len()).max(CHUNK),
                |_, chunk| {
                    let mut claimed = Vec::new();
                    for &u in &items[chunk] {
                        visit(u, true, &mut claimed);
                    }
                    claimed
                },
            );
            for part in parts {
                out.extend_from_slice(&part);
            }
        } else {
            for &u in items {
                visit(u, false, out);
            }
        }
    }

    /// Visits `list[from..]` and everything the visits append to it: a FIFO worklist,
    /// whose pending part is visited as one parallel round whenever it is large enough.
    fn grow(
        &self,
        list: &mut Vec<VertexId>,
        from: usize,
        visit: impl Fn(VertexId, bool, &mut Vec<VertexId>) + Sync,
    ) {
        let mut next = from;
        while next < list.len() {
            if self.parallel && list.len() - next >= self.parallel_from {
                let frontier = list[next..].to_vec();
                next = list.len();
                self.for_each(&frontier, list, &visit);
            } else {
                let u = list[next];
                next += 1;
                visit(u, false, list);
            }
        }
    }
}

/// Where an attractor of the heads runs: the frame and the counts it may take over.
#[derive(Debug, Clone, Copy)]
pub struct HeadsCall {
    /// The attractor call number.
    pub call: u32,
    /// Counters of calls from this one on are still valid (the chain of first children).
    pub valid_from: u32,
    /// Whether the chain started at the root, whose game is every vertex (so a vertex
    /// first touched in it has its out-degree as ways out).
    pub whole_game: bool,
    /// The frame: the region its claims get.
    pub id: u32,
    /// Who attracts.
    pub player: u8,
}

/// The attractor of frame `at.id` for `at.player` from the vertices of `set[from..]`
/// (already claimed: region `at.id`, winner `at.player`): adds every free vertex that the
/// player can force into the set to it, claimed alike, with the player's moves as
/// strategies. Returns the number of vertices added.
pub fn attract_own(
    graph: &Graph<'_>,
    state: &State,
    rounds: &Rounds,
    at: HeadsCall,
    set: &mut Vec<VertexId>,
    from: usize,
) -> usize {
    let start = set.len();
    let HeadsCall {
        call,
        valid_from,
        whole_game,
        id,
        player,
    } = at;
    let visit = |u: VertexId, parallel: bool, claimed: &mut Vec<VertexId>| {
        for &x in graph.predecessors(u) {
            let (region, owner, _) = state.view(x);
            if region != FREE {
                continue;
            }
            let joins = if owner == player {
                state.touch_own(x, call, parallel)
            } else {
                state.touch_other(x, call, valid_from, parallel, || {
                    if whole_game {
                        graph.degree(x)
                    } else {
                        graph
                            .successors(x)
                            .iter()
                            .filter(|&&w| state.region(w) >= id)
                            .count() as u32
                    }
                })
            };
            if joins {
                let via = if owner == player { u } else { NO_MOVE };
                state.settle(x, id, player, via);
                claimed.push(x);
            }
        }
    };
    rounds.grow(set, from, visit);
    set.len() - start
}

/// The attractor for the opponent of `player` (who won `set` in the game of frame `id`) to
/// what the opponent won there: the vertices of `set` with an edge into it (or all edges,
/// for `player`'s own), then their attractor inside the frame's game among the vertices
/// `player` won. The claimed vertices are appended to `claimed` with the opponent's moves
/// as strategies; their winners are switched to the opponent only after the computation
/// (so counts taken during it stay valid). Returns the number claimed.
#[allow(clippy::too_many_arguments)]
pub fn attract_opponent(
    graph: &Graph<'_>,
    state: &State,
    rounds: &Rounds,
    call: u32,
    id: u32,
    player: u8,
    set: &[VertexId],
    claimed: &mut Vec<VertexId>,
) -> usize {
    let opponent = 1 - player;
    let start = claimed.len();
    // Ways out of `x` for `player`: successors in the frame that `player` still wins.
    let escapes = |x: VertexId| {
        graph
            .successors(x)
            .iter()
            .filter(|&&w| {
                let (region, _, winner) = state.view(w);
                region >= id && winner == player
            })
            .count() as u32
    };
    // Direct attraction of the set's vertices (the rest of `player`'s region is a trap for
    // the opponent in the subgame, so it has no edge into the opponent's part).
    let direct = |x: VertexId, _parallel: bool, out: &mut Vec<VertexId>| {
        let (_, owner, _) = state.view(x);
        if owner == opponent {
            if let Some(&w) = graph.successors(x).iter().find(|&&w| {
                let (region, _, winner) = state.view(w);
                region >= id && winner == opponent
            }) {
                state.mark_claimed(x, call);
                state.set_strategy(x, w);
                out.push(x);
            }
        } else {
            match escapes(x) {
                0 => {
                    state.mark_claimed(x, call);
                    state.set_strategy(x, NO_MOVE);
                    out.push(x);
                }
                remaining => state.set_remaining(x, call, remaining),
            }
        }
    };
    rounds.for_each(set, claimed, direct);
    let visit = |u: VertexId, parallel: bool, out: &mut Vec<VertexId>| {
        for &x in graph.predecessors(u) {
            let (region, owner, winner) = state.view(x);
            if region < id || winner != player {
                continue;
            }
            let own = owner == opponent;
            let joins = if own {
                state.touch_own(x, call, parallel)
            } else {
                state.touch_other(x, call, call, parallel, || escapes(x))
            };
            if joins {
                state.set_strategy(x, if own { u } else { NO_MOVE });
                out.push(x);
            }
        }
    };
    rounds.grow(claimed, start, visit);
    for &x in &claimed[start..] {
        state.set_winner(x, opponent);
    }
    claimed.len() - start
}
