//! Fixpoint iteration with distractions and freezing (van Dijk, Rubbens, "Simple Fixpoint
//! Iteration To Solve Parity Games", GandALF 2019), data parallel over each priority.
//!
//! The nested fixpoint formula of parity games, evaluated bottom up: every vertex counts as
//! won by the parity of its priority unless it is a *distraction* (then by the other
//! player). The priorities are evaluated from the lowest up; a vertex of priority `p` (of
//! player `α = p mod 2`) becomes a distraction when `α` cannot win it in one step (move to,
//! or be forced to, a vertex currently won by `α`). When priority `p` gains distractions,
//! the inner fixpoints (lower priorities) are recomputed from the start, except that what
//! they won for the opponent stays won (monotonicity): those vertices are *frozen* at `p`
//! instead of being reset, and thawed when a higher priority of the other parity changes.
//! The fixpoint is reached when a sweep over all priorities changes nothing.
//!
//! One priority's vertices are evaluated independently of each other (a vertex reads its
//! successors' current winners, and the iteration converges to the same fixpoint whatever
//! order the updates land in), so each evaluation and each reset is a parallel loop over
//! a slice of the vertices sorted by priority ([`Buckets`]) when it holds at least
//! `parallel_from` vertices and a pool of several threads is installed. Distractions and
//! moves are atomics indexed by vertex (read across the slice by other vertices'
//! evaluations); the frozen marks are indexed by position in the sorted order, so that a
//! reset of "everything below `p`" is one contiguous prefix cut into chunks. Every vertex
//! records the move that won it in its last evaluation.
//!
//! Rounds are as small as one vertex, so the solve checks its control and reports progress
//! every [`super::pace::CHECK_EVERY`] vertices evaluated or reset rather than per round.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

use super::graph::{Buckets, Graph};
use super::pace::{Pacer, Stop};
use crate::arena::VertexId;
use crate::solve::NO_MOVE;
use crate::solve::chunked;

/// Vertices per parallel task.
const CHUNK: usize = 1024;

/// What a solve found: winners, the winners' moves ([`NO_MOVE`] where the loser owns the
/// vertex), and the number of restarts (priorities that gained distractions).
#[derive(Debug)]
pub struct Solved {
    /// Each vertex's winner (0 or 1).
    pub winner: Vec<u8>,
    /// Each vertex's winning move ([`crate::solve::NO_MOVE`] where its owner loses).
    pub strategy: Vec<u32>,
    /// Priorities that gained distractions.
    pub restarts: u64,
}

/// Solves `game` by fixpoint iteration, evaluating and resetting ranges of at least
/// `parallel_from` vertices in parallel when `parallel` (a pool of several threads is
/// installed by the caller).
pub fn solve(
    game: Graph<'_>,
    parallel: bool,
    parallel_from: usize,
    pacer: &mut Pacer<'_>,
) -> Result<Solved, Stop> {
    let buckets = Buckets::new(game.priority);
    let solver = Fixpoint::new(game, &buckets, parallel, parallel_from.max(1));
    solver.run(pacer)
}

struct Fixpoint<'a> {
    game: Graph<'a>,
    buckets: &'a Buckets,
    parallel: bool,
    parallel_from: usize,
    /// Whether each vertex is a distraction (won by the opponent of its priority's parity).
    distraction: Vec<AtomicBool>,
    /// The priority the vertex at each position of `buckets.order` is frozen at (0: not
    /// frozen; nothing freezes at priority 0).
    frozen: Vec<u32>,
    /// The move that won each vertex for its owner in its last evaluation.
    strategy: Vec<AtomicU32>,
}

impl<'a> Fixpoint<'a> {
    fn new(
        game: Graph<'a>,
        buckets: &'a Buckets,
        parallel: bool,
        parallel_from: usize,
    ) -> Fixpoint<'a> {
        let n = game.vertex_count();
        Fixpoint {
            game,
            buckets,
            parallel,
            parallel_from,
            distraction: (0..n).map(|_| AtomicBool::new(false)).collect(),
            frozen: vec![0; n],
            strategy: (0..n).map(|_| AtomicU32::new(NO_MOVE)).collect(),
        }
    }

    /// The current winner of `v`.
    #[inline]
    fn winner(&self, v: VertexId) -> u8 {
        self.game.parity(v) ^ u8::from(self.distraction[v as usize].load(Relaxed))
    }

    /// Re-evaluates the vertex at `position` of the sorted order; returns whether it became
    /// a distraction.
    #[inline]
    fn evaluate(&self, position: usize) -> bool {
        let v = self.buckets.order[position];
        let vi = v as usize;
        if self.frozen[position] != 0 || self.distraction[vi].load(Relaxed) {
            return false;
        }
        let owner = self.game.owner_of(v);
        let good = self
            .game
            .successors(v)
            .iter()
            .copied()
            .find(|&w| self.winner(w) == owner);
        let one_step = match good {
            Some(w) => {
                self.strategy[vi].store(w, Relaxed);
                owner
            }
            None => 1 - owner,
        };
        if one_step != self.game.parity(v) {
            self.distraction[vi].store(true, Relaxed);
            true
        } else {
            false
        }
    }

    /// After priority `p` gained distractions: freezes, thaws or resets a vertex below `p`
    /// of priority parity `parity`.
    #[inline]
    fn freeze_thaw_reset(frozen: &mut u32, distraction: &AtomicBool, parity: u8, p: u32) {
        let player = (p % 2) as u8;
        if *frozen >= p {
            return;
        }
        if *frozen != 0 {
            if (*frozen % 2) as u8 == player {
                *frozen = p;
            } else {
                *frozen = 0;
                distraction.store(false, Relaxed);
            }
        } else if distraction.load(Relaxed) {
            if parity == player {
                *frozen = p;
            } else {
                distraction.store(false, Relaxed);
            }
        } else if parity != player {
            *frozen = p;
        }
    }

    /// Evaluates priority `p`'s vertices; returns how many became distractions.
    fn evaluate_level(&self, p: u32) -> usize {
        let range = self.buckets.range(p);
        if self.parallel && range.len() >= self.parallel_from {
            let (first, len) = (range.start, range.len());
            let chunk = chunked::chunk_len(len).max(CHUNK.min(self.parallel_from));
            chunked::values_of_chunks(len, chunk, |_, part| {
                part.filter(|&i| self.evaluate(first + i)).count()
            })
            .into_iter()
            .sum()
        } else {
            range.filter(|&i| self.evaluate(i)).count()
        }
    }

    /// Freezes, thaws or resets every vertex below priority `p` (the first `below`
    /// positions of the sorted order).
    fn reset_below(&mut self, p: u32, below: usize) {
        let (game, order, distraction) = (self.game, &self.buckets.order, &self.distraction);
        let reset = |frozen: &mut [u32], vertices: &[VertexId]| {
            for (f, &v) in frozen.iter_mut().zip(vertices) {
                Self::freeze_thaw_reset(f, &distraction[v as usize], game.parity(v), p);
            }
        };
        if self.parallel && below >= self.parallel_from {
            chunked::for_each_chunk_mut(&mut self.frozen[..below], |start, frozen| {
                reset(frozen, &order[start..start + frozen.len()]);
            });
        } else {
            reset(&mut self.frozen[..below], &order[..below]);
        }
    }

    fn run(mut self, pacer: &mut Pacer<'_>) -> Result<Solved, Stop> {
        let levels = self.buckets.levels() as u32;
        let (mut restarts, mut work) = (0u64, 0u64);
        let mut p = 0u32;
        while p < levels {
            let range = self.buckets.range(p);
            let units = range.len() as u64 + 1;
            work += units;
            pacer.spend_reporting(units, || (restarts, u64::from(p), work))?;
            if self.evaluate_level(p) == 0 {
                p += 1;
                continue;
            }
            if p == 0 {
                continue;
            }
            restarts += 1;
            let below = range.start;
            work += below as u64;
            pacer.spend_reporting(below as u64, || (restarts, u64::from(p), work))?;
            self.reset_below(p, below);
            p = 0;
        }
        let n = self.game.vertex_count();
        let winner: Vec<u8> = (0..n as VertexId).map(|v| self.winner(v)).collect();
        let strategy = (0..n)
            .map(|v| {
                if self.game.owner_of(v as VertexId) == winner[v] {
                    self.strategy[v].load(Relaxed)
                } else {
                    NO_MOVE
                }
            })
            .collect();
        Ok(Solved {
            winner,
            strategy,
            restarts,
        })
    }
}
