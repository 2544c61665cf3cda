//! The portfolio (`--parity-algorithm auto`, the default): tangle learning and recursive
//! tangle learning ([`super::tangle`]) as two independent searches, each on its own state,
//! the first to solve the game answering. With more than one thread allowed they race on
//! two threads; with one they are time-sliced on it. Either way each game gets about the
//! better of the two.
//!
//! Flat tangle learning is fast on practical games and on most lower-bound families, but
//! needs exponentially many decompositions on the two-counters family and quadratically
//! many on `counter-dp`, `counter-core` and `counter-m`; recursive tangle learning solves
//! those in a few decompositions but spends quadratic time per decomposition on
//! `counter-ortl` (built against it).
//!
//! **Time slicing** (one thread, and the start of every solve): the two run alternately:
//! - a flat decomposition runs whenever the flat side has used no more time than the
//!   recursive side (flat decompositions are linear in the game and its tangles, so they
//!   run whole);
//! - otherwise the recursive search runs for the difference, but at least a quarter of the
//!   time so far (and [`MIN_SLICE`]), and is cut there: switching sides costs cache
//!   refills, so slices grow with the run. Its decomposition keeps its place (an explicit
//!   stack of contexts in its own working state) and resumes in its next slice.
//!
//! **First**, both searches take the winner-controlled winning cycles and their attractors
//! as solved ([`super::controlled::presolve`], on the solve's pool; Oink does the same
//! before every solver). On random games that is all of it, and no search starts.
//!
//! So on one thread the portfolio takes at most about twice the better learner's time. The
//! balance is kept in wall-clock time, not in work units: the two touch memory differently
//! (a flat decomposition sweeps the whole game, a recursive one mostly works inside small
//! regions).
//!
//! **The race** (more than one thread allowed): once time slicing has run for
//! [`super::ParityOptions::race_after`] ([`RACE_AFTER`] by default) without an answer, the
//! recursive search moves to a thread of its own, where its suspended decomposition
//! resumes, and the flat search goes on alone on the solve's thread. The first to finish
//! sets a shared flag that the other reads at its next check (every
//! [`super::pace::CHECK_EVERY`] work units, inside a region's attractor too: the loser
//! stopped 0.2–1.8 ms after the answer on `counter-ortl 20000`, 1.8–4.2 ms when it looked
//! only between regions), and the solve's own
//! [`crate::solve::Control`] (cancel, deadline) still stops both. The small games that
//! most inputs are (SYNTCOMP's answer in a tenth of a millisecond) so never pay for a
//! thread, and a long solve costs about the better learner's time plus the slicing of its
//! start. Games of [`RACE_AT_ONCE_FROM`] vertices or more race at once, with no slicing:
//! there a single flat decomposition outlasts [`RACE_AFTER`], and each search is set up
//! on its own thread (on counter-core 5,000 the slicing and the set-up on one thread came
//! to 4 ms of a 13 ms solve). An error of either side (a cancel, a broken invariant) ends
//! the race too, and is the answer.
//!
//! The winners never depend on the timing or the thread count; the strategies may (which
//! side finishes first can vary). [`Spent`] says what each side ran, whether they raced,
//! and which side answered.
//!
//! Measured and dropped: one state shared by the two searches (a dominion or tangle found
//! by either serves both; the recursive decomposition voided whenever the flat side solved
//! a dominion). It saved about a third on SYNTCOMP (70 against 90 ms in all), but on
//! `counter-m` the flat side solves a dominion in nearly every decomposition and the
//! recursive side, restarted each time on a state full of the flat side's tangles, never
//! finished: 121 ms at 6,003 vertices where the recursive learner alone takes 0.6 ms
//! (BENCHMARKS.md §8). Restarting cut recursive decompositions from scratch with doubling
//! budgets cost up to 2.7× the recursive learner on `counter-dp` and `counter-core`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use super::attractor::Rounds;
use super::controlled::{self, Presolved};
use super::graph::Graph;
use super::pace::{Pacer, Stop};
use super::tangle::{self, Mode, Search, Solved};

/// The shortest time slice of a recursive decomposition.
pub const MIN_SLICE: Duration = Duration::from_micros(20);

/// How long the searches are time-sliced before they race on two threads (when more than
/// one thread is allowed): long enough that games solved in well under a millisecond
/// start no thread, short enough that slicing costs a game of 10 ms at most a few percent.
pub const RACE_AFTER: Duration = Duration::from_millis(1);

/// Games of this many vertices or more race at once (when more than one thread is
/// allowed), with no time slicing first: there one flat decomposition alone takes about a
/// millisecond or more, so slicing would run it whole before the race and set the
/// recursive search up on the solve's thread. Racing at once, the recursive search is set
/// up on its own thread, side by side with the flat search's first decomposition.
pub const RACE_AT_ONCE_FROM: usize = 1 << 13;

/// What the portfolio spent, and which side answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// Flat decompositions (whole ones, and the one a race stopped).
    pub flat_runs: u64,
    /// Recursive slices (time-sliced) or decompositions (racing), and slices that were cut.
    pub recursive_runs: u64,
    /// … and slices that were cut.
    pub recursive_cut: u64,
    /// Whether the searches raced on two threads.
    pub raced: bool,
    /// Dominions solved by the side that answered (0 for the other side).
    pub flat_dominions: u64,
    /// The same for the recursive search.
    pub recursive_dominions: u64,
    /// Whether the winner-controlled cycles and their attractors left nothing to search.
    pub cycles_solved_all: bool,
}

impl Spent {
    /// The algorithm that answered, as the summary names it: `auto`, and in parentheses the
    /// learner that answered, or `winner-controlled-cycles` where no learner had to run
    /// (`auto` alone for a game without vertices).
    pub fn answered_by(&self) -> String {
        if self.cycles_solved_all {
            return "auto(winner-controlled-cycles)".into();
        }
        match (self.flat_dominions > 0, self.recursive_dominions > 0) {
            (true, true) => "auto(tangle-learning+recursive-tangle-learning)".into(),
            (true, false) => "auto(tangle-learning)".into(),
            (false, true) => "auto(recursive-tangle-learning)".into(),
            (false, false) => "auto".into(),
        }
    }
}

/// Solves `game` with the portfolio: time-sliced on the caller's thread, and, if
/// `race_after` is given, raced on two threads once that long has passed without an
/// answer (at once on games of [`RACE_AT_ONCE_FROM`] vertices or more). `pacer` checks the
/// solve's control between slices and inside the flat decompositions; each recursive
/// slice, and each side of a race, gets a pacer of its own.
pub fn solve(
    game: Graph<'_>,
    rounds: Rounds,
    pacer: &mut Pacer<'_>,
    race_after: Option<Duration>,
) -> Result<(Solved, Spent), Stop> {
    let clock = Instant::now();
    let at_once = race_after.is_some() && game.vertex_count() >= RACE_AT_ONCE_FROM;
    // Winner-controlled winning cycles and their attractors first, for both searches (on
    // random games they leave the searches little or nothing to do). Measured and
    // dropped: racing at once from before them, the recursive search on the whole game
    // (no wait for the cycles where they find nothing: 10 % of counter-core and
    // counter-dp); on random games of 30,000 vertices that they solve whole, the second
    // search's set-up beside them and the wait for it to stop took 10 → 14 ms.
    let presolved = controlled::presolve(game, rounds, pacer.control())?;
    tracing::debug!(
        vertices = presolved.count,
        ms = clock.elapsed().as_secs_f64() * 1e3,
        "parity: winner-controlled cycles and their attractors solved first"
    );
    if presolved.count == game.vertex_count() {
        // Nothing left for either search.
        let solved = Solved {
            winner: presolved.winner,
            strategy: presolved.strategy,
            stats: tangle::Stats {
                dominions: presolved.dominions,
                ..tangle::Stats::default()
            },
        };
        let spent = Spent {
            cycles_solved_all: true,
            ..Spent::default()
        };
        return Ok((solved, spent));
    }
    pacer.check()?;
    let mut spent = Spent::default();
    let mut sides = Sides {
        game,
        presolved: &presolved,
        flat: None,
        recursive: None,
        spent: &mut spent,
    };
    let start = Instant::now();
    let sliced_first = if at_once {
        None
    } else {
        sides.time_sliced(pacer, race_after.map(|after| start + after))?
    };
    let winner = match sliced_first {
        Some(side) => side,
        None => {
            tracing::debug!(
                flat_runs = sides.spent.flat_runs,
                recursive_runs = sides.spent.recursive_runs,
                ms = start.elapsed().as_secs_f64() * 1e3,
                "parity: the portfolio's searches race from here"
            );
            match sides.race(pacer)? {
                Some(side) => side,
                // No thread could be started: on with one.
                None => sides.time_sliced(pacer, None)?.ok_or(Stop::Broken(
                    "time slicing without a race ends with an answer",
                ))?,
            }
        }
    };
    let Sides {
        flat, recursive, ..
    } = sides;
    tracing::debug!(
        ?spent,
        ms = clock.elapsed().as_secs_f64() * 1e3,
        "parity: the portfolio's searches ended"
    );
    // Only the side that finished answers (the other's dominions are its own business).
    let shared = match (winner, flat, recursive) {
        (Side::Flat, Some(flat), _) => {
            spent.flat_dominions = flat.shared.stats.dominions;
            flat.shared
        }
        (Side::Recursive, _, Some(recursive)) => {
            spent.recursive_dominions = recursive.shared.stats.dominions;
            recursive.shared
        }
        _ => return Err(Stop::Broken("the side that answered exists")),
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Flat,
    Recursive,
}

/// The two searches and what they spent. Each is set up when it first runs: when the
/// race comes first, the recursive one on the race's thread, the flat one after that
/// thread has started. Both take the winner-controlled cycles (`presolved`) as solved.
struct Sides<'s, 'g> {
    game: Graph<'g>,
    presolved: &'s Presolved,
    flat: Option<Search<'g>>,
    recursive: Option<Search<'g>>,
    spent: &'s mut Spent,
}

/// A search in `game` that takes `presolved` as solved.
fn search_after<'g>(game: Graph<'g>, presolved: &Presolved) -> Search<'g> {
    let mut search = Search::new(game);
    search.adopt(presolved);
    search
}

impl<'g> Sides<'_, 'g> {
    /// The flat search, set up where it has not run.
    fn flat(&mut self) -> &mut Search<'g> {
        let (game, presolved) = (self.game, self.presolved);
        self.flat
            .get_or_insert_with(|| search_after(game, presolved))
    }

    /// Time-slices the two searches until one solves the game (`Some`), or `race_from` has
    /// passed (`None`: the caller starts the race).
    fn time_sliced(
        &mut self,
        pacer: &mut Pacer<'_>,
        race_from: Option<Instant>,
    ) -> Result<Option<Side>, Stop> {
        let (mut flat_time, mut recursive_time) = (Duration::ZERO, Duration::ZERO);
        loop {
            let start = Instant::now();
            if race_from.is_some_and(|at| start >= at) {
                return Ok(None);
            }
            if flat_time <= recursive_time {
                self.flat().iterate(Mode::Flat, pacer)?;
                self.spent.flat_runs += 1;
                flat_time += start.elapsed();
            } else {
                // At least a quarter of the time so far: switching sides costs cache
                // refills, so slices grow with the run (the flat side then catches up in
                // one go).
                let share = (flat_time - recursive_time).max((flat_time + recursive_time) / 4);
                let mut end = start + share.max(MIN_SLICE);
                if let Some(at) = race_from {
                    // The race resumes the slice where it was cut.
                    end = end.min(at.max(start + MIN_SLICE));
                }
                let mut slice = Pacer::slice(pacer.control(), end);
                let (game, presolved) = (self.game, self.presolved);
                let recursive = self
                    .recursive
                    .get_or_insert_with(|| search_after(game, presolved));
                let result = recursive.iterate(Mode::Recursive, &mut slice);
                self.spent.recursive_runs += 1;
                match result {
                    Ok(()) => {}
                    Err(Stop::SliceOver) => self.spent.recursive_cut += 1,
                    Err(stop) => return Err(stop),
                }
                recursive_time += start.elapsed();
            }
            let (Some(flat), recursive) = (
                self.flat.as_ref().map(|search| &search.shared),
                self.recursive.as_ref().map(|search| &search.shared),
            ) else {
                return Err(Stop::Broken("time slicing starts with the flat search"));
            };
            let (done, unsolved, work) = if flat.is_solved() {
                (Some(Side::Flat), 0, flat.stats.work)
            } else if let Some(recursive) = recursive.filter(|shared| shared.is_solved()) {
                (Some(Side::Recursive), 0, recursive.stats.work)
            } else {
                let unsolved = recursive.map_or(flat.unsolved.len(), |shared| {
                    flat.unsolved.len().min(shared.unsolved.len())
                });
                let work = flat.stats.work + recursive.map_or(0, |shared| shared.stats.work);
                (None, unsolved as u64, work)
            };
            let runs = self.spent.flat_runs + self.spent.recursive_runs;
            pacer.round(runs, unsolved, work)?;
            if done.is_some() {
                return Ok(done);
            }
        }
    }

    /// Races the two searches: the recursive one on a new thread, the flat one on this
    /// one, until either answers or fails. `Ok(None)` when no
    /// thread could be started (nothing was run then).
    fn race(&mut self, pacer: &mut Pacer<'_>) -> Result<Option<Side>, Stop> {
        let control = pacer.control();
        let finish = Finish::default();
        let (game, presolved) = (self.game, self.presolved);
        let flat_slot = &mut self.flat;
        // The recursive search: suspended by the time slicing, or set up on the race's
        // thread (side by side with the flat search's set-up).
        let suspended = self.recursive.take();
        // Runs count on from the time slicing (the flat side's are what the progress shows).
        let (mut flat_runs, mut recursive_runs) = (self.spent.flat_runs, self.spent.recursive_runs);
        let results = std::thread::scope(|scope| {
            let (finish, recursive_runs) = (&finish, &mut recursive_runs);
            let rival = std::thread::Builder::new()
                .name("egsolve-portfolio".into())
                .spawn_scoped(scope, move || {
                    let mut pacer = Pacer::racing(control, &finish.finished, false);
                    let mut search = suspended.unwrap_or_else(|| search_after(game, presolved));
                    let result = run(&mut search, Mode::Recursive, &mut pacer, recursive_runs);
                    finish.end(Side::Recursive, &result);
                    (result, search)
                });
            let rival = match rival {
                Ok(rival) => rival,
                Err(e) => {
                    tracing::warn!("the parity portfolio stays on one thread: {e}");
                    return None;
                }
            };
            let mut racing = Pacer::racing(control, &finish.finished, true);
            let flat = flat_slot.get_or_insert_with(|| search_after(game, presolved));
            let flat_result = run(flat, Mode::Flat, &mut racing, &mut flat_runs);
            finish.end(Side::Flat, &flat_result);
            let (recursive_result, search) = rival
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Some((flat_result, recursive_result, search))
        });
        let Some((flat_result, recursive_result, search)) = results else {
            return Ok(None);
        };
        if let Some(at) = finish.at.get() {
            tracing::debug!(
                ms = at.elapsed().as_secs_f64() * 1e3,
                "parity: the race's other side stopped"
            );
        }
        self.recursive = Some(search);
        self.spent.raced = true;
        self.spent.flat_runs = flat_runs;
        self.spent.recursive_runs = recursive_runs;
        let side = finish.first()?;
        let result = match side {
            Side::Flat => flat_result,
            Side::Recursive => recursive_result,
        };
        result.map(|()| Some(side))
    }
}

/// How a race ends: the flag both sides' pacers read, and which side set it first.
#[derive(Default)]
struct Finish {
    /// Shared: each search keeps a handle to it for its checks inside a step
    /// ([`super::pace::Halt`]).
    finished: Arc<AtomicBool>,
    /// `NOBODY`, or a [`Side`] as `side_code` writes it.
    first: AtomicU8,
    /// When the first side ended (for the log: how long the other took to stop).
    at: std::sync::OnceLock<Instant>,
}

impl Finish {
    /// `side` ended with `result`: unless it was overtaken, it ends the race (an answer
    /// or an error, whichever comes first).
    fn end(&self, side: Side, result: &Result<(), Stop>) {
        if *result != Err(Stop::Overtaken) {
            let _ = self.at.set(Instant::now());
            let _ = self.first.compare_exchange(
                NOBODY,
                side_code(side),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            self.finished.store(true, Ordering::Release);
        }
    }

    /// The side that ended the race.
    fn first(&self) -> Result<Side, Stop> {
        match self.first.load(Ordering::Acquire) {
            FLAT => Ok(Side::Flat),
            RECURSIVE => Ok(Side::Recursive),
            _ => Err(Stop::Broken("a race ends with one side first")),
        }
    }
}

/// Which side ended a race, as [`Finish`] records it.
const NOBODY: u8 = 0;
const FLAT: u8 = 1;
const RECURSIVE: u8 = 2;

fn side_code(side: Side) -> u8 {
    match side {
        Side::Flat => FLAT,
        Side::Recursive => RECURSIVE,
    }
}

/// Runs `search` in `mode` until it solves the game or its pacer stops it, counting its
/// decompositions in `runs` (one side of a race).
fn run(
    search: &mut Search<'_>,
    mode: Mode,
    pacer: &mut Pacer<'_>,
    runs: &mut u64,
) -> Result<(), Stop> {
    while !search.is_solved() {
        *runs += 1;
        search.iterate(mode, pacer)?;
        let shared = &search.shared;
        pacer.round(*runs, shared.unsolved.len() as u64, shared.stats.work)?;
    }
    Ok(())
}
