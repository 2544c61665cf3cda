//! The portfolio (`--parity-algorithm auto`, the default): tangle learning and recursive
//! tangle learning ([`super::tangle`]), time-sliced on one thread, so that each game gets
//! the better of the two at no more than about twice its time.
//!
//! Flat tangle learning is fast on practical games and on most lower-bound families, but
//! needs exponentially many decompositions on the two-counters family and quadratically
//! many on `counter-dp` and `counter-core`; recursive tangle learning solves those in a few
//! decompositions but spends quadratic time per decomposition on `counter-ortl` (built
//! against it). The two run as two searches on one shared state (solved vertices and
//! learned tangles: a dominion or a tangle is valid whoever found it), alternately:
//! - a flat decomposition runs whenever the flat side has used no more time than the
//!   recursive side (flat decompositions are linear in the game and its tangles, so they
//!   run whole);
//! - otherwise the recursive search runs for the difference, but at least a quarter of the
//!   time so far (and [`MIN_SLICE`]), and is cut there: switching sides costs cache
//!   refills, so slices grow with the run (in CPU time this took the portfolio from 2.2×
//!   to 1.7× the recursive learner on tc_48 and tc_64). Its decomposition keeps its place
//!   (an explicit stack of contexts in its own working state) and resumes in its next
//!   slice, unless the flat side solved a dominion meanwhile (then it starts over on what
//!   is left).
//!
//! The balance is kept in wall-clock time, not in work units: the two touch memory
//! differently (a flat decomposition sweeps the whole game, a recursive one mostly works
//! inside small regions), and balancing work units left the portfolio up to 1.6× slower in
//! CPU time on the two-counters games. The winners never depend on the timing; the
//! strategies may (both sides' moves are valid, and which side solves which dominion can
//! vary).
//!
//! Measured and dropped (in the scratch crate this was developed in): two searches with
//! separate states (nothing shared) doubled the total on SYNTCOMP, as each side redoes the
//! other's dominions; one state with recursive decompositions restarted from scratch when
//! cut (budgets doubling) cost up to 2.7× the recursive learner alone on `counter-dp` and
//! `counter-core`.

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
    let mut recursive: Option<Search<'_>> = None;
    let mut spent = Spent::default();
    let (mut flat_time, mut recursive_time) = (Duration::ZERO, Duration::ZERO);
    while !flat.is_solved() {
        let start = Instant::now();
        let dominions_before = flat.shared.stats.dominions;
        if flat_time <= recursive_time {
            flat.iterate(Mode::Flat, pacer)?;
            spent.flat_runs += 1;
            spent.flat_dominions += flat.shared.stats.dominions - dominions_before;
            flat_time += start.elapsed();
        } else {
            let search = recursive.get_or_insert_with(|| Search::sharing(game));
            Search::swap_shared(&mut flat, search);
            // At least a quarter of the time so far: switching sides costs cache refills,
            // so slices grow with the run (the flat side then catches up in one go).
            let share = (flat_time - recursive_time).max((flat_time + recursive_time) / 4);
            let mut slice = Pacer::slice(pacer.control(), start + share.max(MIN_SLICE));
            let result = search.iterate(Mode::Recursive, &mut slice);
            Search::swap_shared(&mut flat, search);
            spent.recursive_runs += 1;
            spent.recursive_dominions += flat.shared.stats.dominions - dominions_before;
            match result {
                Ok(()) => {}
                Err(Stop::SliceOver) => spent.recursive_cut += 1,
                Err(stop) => return Err(stop),
            }
            recursive_time += start.elapsed();
        }
        let shared = &flat.shared;
        pacer.round(
            spent.flat_runs + spent.recursive_runs,
            shared.unsolved.len() as u64,
            shared.stats.work,
        )?;
    }
    let shared = flat.shared;
    Ok((
        Solved {
            winner: shared.winner,
            strategy: shared.strategy,
            stats: shared.stats,
        },
        spent,
    ))
}
