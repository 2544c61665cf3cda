//! The portfolio (`--parity-algorithm auto`, the default): tangle learning and recursive
//! tangle learning ([`super::tangle`]), time-sliced on one thread, so that each game gets
//! the better of the two at no more than about twice its time.
//!
//! Flat tangle learning is fast on practical games and on most lower-bound families, but
//! needs exponentially many decompositions on the two-counters family and quadratically
//! many on `counter-dp`, `counter-core` and `counter-m`; recursive tangle learning solves
//! those in a few decompositions but spends quadratic time per decomposition on
//! `counter-ortl` (built against it). The two run as two independent searches, each on its
//! own state, alternately, and the first to solve the game answers:
//! - a flat decomposition runs whenever the flat side has used no more time than the
//!   recursive side (flat decompositions are linear in the game and its tangles, so they
//!   run whole);
//! - otherwise the recursive search runs for the difference, but at least a quarter of the
//!   time so far (and [`MIN_SLICE`]), and is cut there: switching sides costs cache
//!   refills, so slices grow with the run. Its decomposition keeps its place (an explicit
//!   stack of contexts in its own working state) and resumes in its next slice.
//!
//! So the portfolio takes at most about twice the better learner's time on every game. The
//! balance is kept in wall-clock time, not in work units: the two touch memory differently
//! (a flat decomposition sweeps the whole game, a recursive one mostly works inside small
//! regions). The winners never depend on the timing; the strategies may (which side
//! finishes first can vary).
//!
//! Measured and dropped: one state shared by the two searches (a dominion or tangle found
//! by either serves both; the recursive decomposition voided whenever the flat side solved
//! a dominion). It saved about a third on SYNTCOMP (70 against 90 ms in all), but on
//! `counter-m` the flat side solves a dominion in nearly every decomposition and the
//! recursive side, restarted each time on a state full of the flat side's tangles, never
//! finished: 121 ms at 6,003 vertices where the recursive learner alone takes 0.6 ms
//! (BENCHMARKS.md §8). Restarting cut recursive decompositions from scratch with doubling
//! budgets cost up to 2.7× the recursive learner on `counter-dp` and `counter-core`.

use std::time::{Duration, Instant};

use super::graph::Graph;
use super::pace::{Pacer, Stop};
use super::tangle::{Mode, Search, Solved};

/// The shortest time slice of a recursive decomposition.
pub const MIN_SLICE: Duration = Duration::from_micros(20);

/// What the portfolio spent, and which side solved dominions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// Flat decompositions, recursive slices, and slices that were cut.
    pub flat_runs: u64,
    pub recursive_runs: u64,
    pub recursive_cut: u64,
    /// Dominions solved by each side.
    pub flat_dominions: u64,
    pub recursive_dominions: u64,
}

impl Spent {
    /// The algorithm that answered, as the summary names it: `auto`, and in parentheses the
    /// learners that solved dominions (`auto` alone for a game without vertices).
    pub fn answered_by(&self) -> String {
        match (self.flat_dominions > 0, self.recursive_dominions > 0) {
            (true, true) => "auto(tangle-learning+recursive-tangle-learning)".into(),
            (true, false) => "auto(tangle-learning)".into(),
            (false, true) => "auto(recursive-tangle-learning)".into(),
            (false, false) => "auto".into(),
        }
    }
}

/// Solves `game` with the portfolio. `pacer` checks the solve's control between slices
/// and inside the flat decompositions; each recursive slice gets a pacer of its own.
pub fn solve(game: Graph<'_>, pacer: &mut Pacer<'_>) -> Result<(Solved, Spent), Stop> {
    let mut flat = Search::new(game);
    let mut recursive = Search::new(game);
    let mut spent = Spent::default();
    let (mut flat_time, mut recursive_time) = (Duration::ZERO, Duration::ZERO);
    let winner = loop {
        let start = Instant::now();
        if flat_time <= recursive_time {
            let dominions_before = flat.shared.stats.dominions;
            flat.iterate(Mode::Flat, pacer)?;
            spent.flat_runs += 1;
            spent.flat_dominions += flat.shared.stats.dominions - dominions_before;
            flat_time += start.elapsed();
        } else {
            // At least a quarter of the time so far: switching sides costs cache refills,
            // so slices grow with the run (the flat side then catches up in one go).
            let share = (flat_time - recursive_time).max((flat_time + recursive_time) / 4);
            let mut slice = Pacer::slice(pacer.control(), start + share.max(MIN_SLICE));
            let dominions_before = recursive.shared.stats.dominions;
            let result = recursive.iterate(Mode::Recursive, &mut slice);
            spent.recursive_runs += 1;
            spent.recursive_dominions += recursive.shared.stats.dominions - dominions_before;
            match result {
                Ok(()) => {}
                Err(Stop::SliceOver) => spent.recursive_cut += 1,
                Err(stop) => return Err(stop),
            }
            recursive_time += start.elapsed();
        }
        let (done, unsolved, work) = if flat.is_solved() {
            (Some(Side::Flat), 0, flat.shared.stats.work)
        } else if recursive.is_solved() {
            (Some(Side::Recursive), 0, recursive.shared.stats.work)
        } else {
            let unsolved = flat
                .shared
                .unsolved
                .len()
                .min(recursive.shared.unsolved.len());
            (
                None,
                unsolved as u64,
                flat.shared.stats.work + recursive.shared.stats.work,
            )
        };
        pacer.round(spent.flat_runs + spent.recursive_runs, unsolved, work)?;
        if let Some(side) = done {
            break side;
        }
    };
    // Only the side that finished answers (the other's dominions are its own business).
    let shared = match winner {
        Side::Flat => {
            spent.recursive_dominions = 0;
            flat.shared
        }
        Side::Recursive => {
            spent.flat_dominions = 0;
            recursive.shared
        }
    };
    Ok((
        Solved {
            winner: shared.winner,
            strategy: shared.strategy,
            stats: shared.stats,
        },
        spent,
    ))
}

/// Which search finished first.
#[derive(Clone, Copy)]
enum Side {
    Flat,
    Recursive,
}
