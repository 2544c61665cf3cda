//! Why each vertex is at ⊤: a rank per vertex, kept by the driver across evaluations, so
//! that player 1's strategy on `W1` can be the evaluations' own moves, with no construction
//! after the solve (`player1::recorded_moves`).
//!
//! An evaluation tops the vertices `T` of `H = G_σ1 − K` that cannot reach a nonnegative
//! cycle of `H` (`K`: the vertices at ⊤ when it starts). `T` is closed under `H`'s edges (a
//! successor outside `K` that reached a nonnegative cycle would let its predecessor reach
//! it), so from `T` player 0 can only stay in `T` or enter `K`, σ1 does the same, and every
//! cycle inside `T` is a cycle of `H`, hence negative. Player 1's attractor to ⊤ then adds
//! layers whose recorded moves lead strictly down.
//!
//! **Ranks.** If every vertex of `K` has a rank, `T` gets the next rank and the attractor's
//! layers the ones above it. Then every recorded move of player 1 (σ1 in `T`, the
//! attractor's edge above) and every edge of a ranked player-0 vertex leads to a rank no
//! higher, and every cycle within one rank lies inside one `T`, so is negative: σ1 wins on
//! the ranked vertices, and every play from them ends in a negative cycle.
//!
//! A vertex topped any other way — lifting past `M` or from a vertex at ⊤, the
//! Bellman–Ford step's ⊤, an attractor step that used a finite value above `M` — gets no
//! rank. Once an evaluation starts while such a vertex is at ⊤, its `T` could lean on it,
//! so the ranks are **frozen** for the rest of the solve: the ranked vertices stay a set
//! `S` that player 1's recorded moves keep (player 0 cannot leave it either, and every cycle
//! in it is negative), and player 1's strategy on the rest of `W1` is built by the layered
//! construction from `S` (the attractor to `S` first). On random games a handful of such
//! vertices is typical, so the construction is left with almost nothing.

use crate::graph::attractor::NO_LAYER;
use crate::solve::chunked;
use crate::solve::energy::TOP;
use crate::solve::threads::Threads;

pub(crate) use crate::solve::strategy::NO_RANK;

/// Vertices per task of the passes over every rank (plain loops in chunks, as
/// `threads::positions_where` for the same reason).
const CHUNK: usize = 1 << 14;

/// The ranks of the vertices at ⊤ (see the module docs), frozen once one was topped
/// without a recorded reason. `default()`: nothing ranked, nothing allocated.
#[derive(Debug, Default)]
pub(super) struct TopRanks {
    /// Each vertex's rank, [`NO_RANK`] if none.
    rank: Vec<u32>,
    /// The next free rank.
    next: u32,
    /// No more ranks are given.
    frozen: bool,
}

impl TopRanks {
    /// Each vertex's rank ([`NO_RANK`]: none); the ranked vertices are a set player 1's
    /// recorded moves win on. Empty before the first evaluation.
    pub fn ranks(&self) -> &[u32] {
        &self.rank
    }

    /// Freezes the ranks (for good) unless every vertex at ⊤ in `values` has one: called
    /// when an evaluation starts (the first allocates the ranks).
    pub fn require_ranked(&mut self, values: &[u64], threads: &Threads) {
        if self.frozen {
            return;
        }
        if self.rank.is_empty() {
            self.rank = threads.filled(values.len(), NO_RANK);
        }
        let unranked = |(&value, &rank): (&u64, &u32)| value == TOP && rank == NO_RANK;
        self.frozen = if threads.parallel(values.len()) {
            threads.install(|| {
                // (Pairs as far as both go, as the sequential `zip`.)
                let n = values.len().min(self.rank.len());
                let (values, rank) = (&values[..n], &self.rank[..n]);
                chunked::any(n.div_ceil(CHUNK), |c| {
                    let range = c * CHUNK..(c * CHUNK + CHUNK).min(n);
                    values[range.clone()].iter().zip(&rank[range]).any(unranked)
                })
            })
        } else {
            values.iter().zip(&self.rank).any(unranked)
        };
    }

    /// Ranks, with one new rank, the vertices an evaluation topped as unable to reach a
    /// nonnegative cycle (`topped(v)`); returns that rank, `None` if the ranks are frozen.
    pub fn rank_trap(
        &mut self,
        topped: impl Fn(usize) -> bool + Sync,
        threads: &Threads,
    ) -> Option<u32> {
        if self.frozen {
            return None;
        }
        let Some(after) = self.next.checked_add(1).filter(|&r| r != NO_RANK) else {
            self.frozen = true;
            return None;
        };
        let trap = self.next;
        let set = |(v, rank): (usize, &mut u32)| {
            if topped(v) {
                *rank = trap;
            }
        };
        if threads.parallel(self.rank.len()) {
            threads.install(|| {
                chunked::for_each_mut(&mut self.rank, |i, r| set((i, r)));
            });
        } else {
            self.rank.iter_mut().enumerate().for_each(set);
        }
        self.next = after;
        Some(trap)
    }

    /// Ranks the vertices of an attractor to ⊤ above `trap` (the rank of the vertices the
    /// same evaluation topped first): layer `L >= 1` of `layer` gets rank `trap + L`, layer
    /// 0 (at ⊤ already) keeps its own. `top_layers` is one above the highest layer; with
    /// `recorded` false (some vertex joined without a recorded reason) nothing is ranked
    /// and the ranks freeze at the next check.
    pub fn rank_layers(
        &mut self,
        trap: u32,
        layer: &[u32],
        top_layers: u32,
        recorded: bool,
        threads: &Threads,
    ) {
        if self.frozen || !recorded {
            return;
        }
        let Some(after) = trap
            .checked_add(top_layers)
            .filter(|&r| r != NO_RANK)
            .map(|r| r.max(self.next))
        else {
            self.frozen = true;
            return;
        };
        let set = |(rank, &l): (&mut u32, &u32)| {
            if l != 0 && l != NO_LAYER {
                *rank = trap + l;
            }
        };
        if threads.parallel(self.rank.len()) {
            threads.install(|| {
                chunked::for_each_chunk_mut(&mut self.rank, |start, ranks| {
                    ranks
                        .iter_mut()
                        .zip(layer.get(start..).unwrap_or_default())
                        .for_each(set);
                });
            });
        } else {
            self.rank.iter_mut().zip(layer).for_each(set);
        }
        self.next = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unranked_top_freezes_the_ranks_for_good() {
        let threads = Threads::one();
        let mut ranks = TopRanks::default();
        assert!(ranks.ranks().is_empty());
        ranks.require_ranked(&[0, 0, 5, 0], &threads);
        let trap = ranks.rank_trap(|v| v == 1, &threads).expect("not frozen");
        ranks.require_ranked(&[0, TOP, 5, 0], &threads);
        assert_eq!(ranks.ranks(), &[NO_RANK, trap, NO_RANK, NO_RANK]);
        // Vertex 3 reached ⊤ without a reason (lifting past M, say): what was ranked stays.
        ranks.require_ranked(&[0, TOP, 5, TOP], &threads);
        assert_eq!(ranks.rank_trap(|_| true, &threads), None);
        ranks.rank_layers(trap, &[1, 0, 1, 1], 2, true, &threads);
        ranks.require_ranked(&[TOP, TOP, TOP, TOP], &threads);
        assert_eq!(ranks.rank_trap(|_| true, &threads), None, "frozen for good");
        assert_eq!(ranks.ranks(), &[NO_RANK, trap, NO_RANK, NO_RANK]);
    }

    #[test]
    fn layers_rank_above_their_trap_only_when_recorded() {
        let threads = Threads::one();
        let mut ranks = TopRanks::default();
        ranks.require_ranked(&[0; 4], &threads);
        let trap = ranks.rank_trap(|v| v == 0, &threads).expect("not frozen");
        ranks.rank_layers(trap, &[0, 1, 2, NO_LAYER], 3, true, &threads);
        assert_eq!(ranks.ranks(), &[trap, trap + 1, trap + 2, NO_RANK]);
        let next = ranks.rank_trap(|v| v == 3, &threads).expect("not frozen");
        assert!(next > trap + 2, "the next trap ranks above every layer");
        let mut unrecorded = TopRanks::default();
        unrecorded.require_ranked(&[0; 2], &threads);
        let trap = unrecorded
            .rank_trap(|v| v == 0, &threads)
            .expect("not frozen");
        unrecorded.rank_layers(trap, &[0, 1], 2, false, &threads);
        assert_eq!(unrecorded.ranks(), &[trap, NO_RANK]);
        unrecorded.require_ranked(&[TOP, TOP], &threads);
        assert_eq!(unrecorded.rank_trap(|_| true, &threads), None);
    }
}
