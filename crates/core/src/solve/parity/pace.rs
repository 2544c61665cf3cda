//! How the parity algorithms stop, and what they tell whoever watches: a [`Pacer`] checks
//! the solve's [`Control`] (cancel flag, deadline), for a time slice of the portfolio the
//! slice's end, and for a search racing another on its own thread the race's finish flag
//! ([`Pacer::racing`]); it publishes progress at each round (unless it is the quiet side
//! of a race). [`Stop`] is every way a solver's run ends early, [`Stop::into_error`] what
//! the caller sees of it.
//!
//! Solvers call [`Pacer::round`] once per decomposition, promotion search or fixpoint round
//! (a check and a progress report, unconditionally) and [`Pacer::spend`] at finer points
//! (a region, an attractor) with the work done since, which checks only every
//! [`CHECK_EVERY`] units: reading the clock costs about as much as a small region, and
//! a cancel is still seen within about a millisecond. A time slice checks at every
//! [`Pacer::spend`], since its end is what the portfolio balances on.
//!
//! A single step can outlast that millisecond by far: one region's attractor spans the
//! whole game when a priority's attractor takes it all (`counter-ortl 20000`, recursive
//! tangle learning: 900,000 work units, 7–9 ms between two checks on the 2-core build
//! machine, and a race it lost waited 1.8–4.2 ms for it to stop; the steps grow with the
//! game). So the tangle searches also look inside their steps, every
//! [`CHECK_EVERY`] units, at what ends a run for good ([`Halt`]: a cancel, the deadline, a
//! lost race), never at a time slice's end: a slice ends only where the search can resume,
//! while a run halted inside a step is never resumed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::solve::{Control, Interrupted, SolveError};

/// Work units (about one per vertex or edge touched) between two checks outside a slice.
pub const CHECK_EVERY: u64 = 1 << 14;

/// Why a solver's run ended before its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Cancelled or out of time (the solve's [`Control`]).
    Interrupted(Interrupted),
    /// The portfolio's time slice ended (the search keeps its place and resumes).
    SliceOver,
    /// The other search of a race answered first (the portfolio takes it).
    Overtaken,
    /// A proved invariant did not hold (a bug, never the input's fault); the text says which.
    Broken(&'static str),
    /// An id sequence ran out (games far beyond what the algorithm answers in hours).
    Exhausted(&'static str),
}

impl From<Interrupted> for Stop {
    fn from(interrupted: Interrupted) -> Stop {
        Stop::Interrupted(interrupted)
    }
}

impl Stop {
    /// The error a caller of `algorithm` gets. A [`Stop::SliceOver`] or [`Stop::Overtaken`]
    /// never reaches a caller (the portfolio takes it); should one escape, it is reported
    /// as a broken invariant.
    pub fn into_error(self, algorithm: &'static str) -> SolveError {
        match self {
            Stop::Interrupted(interrupted) => SolveError::Interrupted(interrupted),
            Stop::Broken(invariant) => SolveError::Unavailable {
                backend: "parity",
                reason: format!(
                    "the {algorithm} algorithm broke its invariant '{invariant}' (a bug: please \
                     report the game); --parity-algorithm zielonka answers it"
                ),
            },
            Stop::SliceOver => {
                Stop::Broken("a time slice ended outside the portfolio").into_error(algorithm)
            }
            Stop::Overtaken => {
                Stop::Broken("a race was lost outside the portfolio").into_error(algorithm)
            }
            Stop::Exhausted(what) => SolveError::Unavailable {
                backend: "parity",
                reason: format!(
                    "the {algorithm} algorithm needs more than 4·10^9 {what} on this game; it \
                     stops there (try --parity-algorithm zielonka)"
                ),
            },
        }
    }
}

/// Checks and progress reports of one run (or one slice of it).
#[derive(Debug)]
pub struct Pacer<'a> {
    control: &'a Control,
    /// The end of the portfolio's time slice, if this run is one.
    slice_end: Option<Instant>,
    /// Work since the last check, and how much to allow between checks.
    since_check: u64,
    check_every: u64,
    /// Work left in a slice measured in work units ([`Pacer::work_slice`]).
    work_left: Option<u64>,
    /// Set once either search of a race has answered ([`Pacer::racing`]).
    finished: Option<&'a Arc<AtomicBool>>,
    /// Whether [`Pacer::round`] publishes progress (the racing side does not: one search
    /// reports, so the counters stay one run's).
    publishes: bool,
}

impl<'a> Pacer<'a> {
    /// A pacer for a whole run under `control`.
    pub fn new(control: &'a Control) -> Pacer<'a> {
        Pacer {
            control,
            slice_end: None,
            since_check: 0,
            check_every: CHECK_EVERY,
            work_left: None,
            finished: None,
            publishes: true,
        }
    }

    /// A pacer for a search that races another on its own thread: it also stops
    /// ([`Stop::Overtaken`]) once `finished` is set, and publishes progress only if
    /// `publishes`.
    pub fn racing(
        control: &'a Control,
        finished: &'a Arc<AtomicBool>,
        publishes: bool,
    ) -> Pacer<'a> {
        Pacer {
            finished: Some(finished),
            publishes,
            ..Pacer::new(control)
        }
    }

    /// A pacer for a time slice that ends at `end` (checked at every [`Pacer::spend`]).
    pub fn slice(control: &'a Control, end: Instant) -> Pacer<'a> {
        Pacer {
            slice_end: Some(end),
            check_every: 0,
            ..Pacer::new(control)
        }
    }

    /// A slice that ends after `units` work units: deterministic, for tests that cut
    /// searches at every possible point.
    pub fn work_slice(control: &'a Control, units: u64) -> Pacer<'a> {
        Pacer {
            work_left: Some(units),
            ..Pacer::new(control)
        }
    }

    /// The solve's control.
    pub fn control(&self) -> &'a Control {
        self.control
    }

    /// What ends this run for good, for checks inside a step ([`Halt`]).
    pub fn halt(&self) -> Halt {
        Halt {
            cancel: Arc::clone(self.control.cancel_flag()),
            finished: self.finished.map(Arc::clone),
            deadline: self.control.deadline(),
        }
    }

    /// Counts `work` units; checks when enough have been spent since the last check.
    #[inline]
    pub fn spend(&mut self, work: u64) -> Result<(), Stop> {
        if let Some(left) = &mut self.work_left {
            *left = left.saturating_sub(work);
            if *left == 0 {
                return Err(Stop::SliceOver);
            }
        }
        self.since_check += work;
        if self.since_check >= self.check_every {
            self.check()
        } else {
            Ok(())
        }
    }

    /// Checks now: `Err` once the solve must stop, the slice is over or the race is lost.
    /// The clock is read once for both limits.
    pub fn check(&mut self) -> Result<(), Stop> {
        self.since_check = 0;
        if self.control.cancel_flag().load(Ordering::Relaxed) {
            return Err(Stop::Interrupted(Interrupted::Cancelled));
        }
        if self.finished.is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(Stop::Overtaken);
        }
        if self.control.deadline().is_none() && self.slice_end.is_none() {
            return Ok(());
        }
        let now = Instant::now();
        if self.control.deadline().is_some_and(|d| now >= d) {
            return Err(Stop::Interrupted(Interrupted::TimedOut));
        }
        if self.slice_end.is_some_and(|end| now >= end) {
            return Err(Stop::SliceOver);
        }
        Ok(())
    }

    /// Counts `work` units like [`Pacer::spend`]; when a check is due, also publishes
    /// `progress()` (for solvers whose rounds are too small to report each one).
    #[inline]
    pub fn spend_reporting(
        &mut self,
        work: u64,
        progress: impl FnOnce() -> (u64, u64, u64),
    ) -> Result<(), Stop> {
        self.since_check += work;
        if self.since_check >= self.check_every {
            let (rounds, frontier, total) = progress();
            self.round(rounds, frontier, total)
        } else {
            Ok(())
        }
    }

    /// One round done: publishes `(rounds, frontier, work)` (the [`crate::solve::Progress`]
    /// counters `round`, `frontier` and `lifts`) and checks.
    pub fn round(&mut self, rounds: u64, frontier: u64, work: u64) -> Result<(), Stop> {
        if self.publishes {
            self.control.progress().publish(rounds, frontier, work);
        }
        self.check()
    }
}

/// What ends a run for good: the solve's cancel flag and deadline, and for a side of a
/// race the race's finish flag. An owned copy of what a [`Pacer`] checks, less the time
/// slice's end, that a search keeps for the checks inside its steps (see the module doc);
/// the default halts nothing.
#[derive(Debug, Clone, Default)]
pub struct Halt {
    cancel: Arc<AtomicBool>,
    finished: Option<Arc<AtomicBool>>,
    deadline: Option<Instant>,
}

impl Halt {
    /// `Err` once the run must end: cancelled, out of time, or its race lost.
    pub fn check(&self) -> Result<(), Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Interrupted(Interrupted::Cancelled));
        }
        if self
            .finished
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            return Err(Stop::Overtaken);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stop::Interrupted(Interrupted::TimedOut));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn checks_cancel_deadline_and_slice() {
        let control = Control::new();
        let mut pacer = Pacer::new(&control);
        assert_eq!(pacer.spend(10), Ok(()));
        assert_eq!(pacer.round(1, 2, 3), Ok(()));
        assert_eq!(control.progress().snapshot().frontier, 2);
        let past = Instant::now() - Duration::from_millis(1);
        let mut slice = Pacer::slice(&control, past);
        assert_eq!(slice.spend(1), Err(Stop::SliceOver));
        let late = Control::new().with_deadline(Some(past));
        assert_eq!(
            Pacer::slice(&late, past).check(),
            Err(Stop::Interrupted(Interrupted::TimedOut))
        );
        // Outside a slice, a check waits for enough work.
        let mut pacer = Pacer::new(&late);
        assert_eq!(pacer.spend(1), Ok(()));
        assert!(pacer.spend(CHECK_EVERY).is_err());
        let mut counted = Pacer::work_slice(&control, 5);
        assert_eq!(counted.spend(4), Ok(()));
        assert_eq!(counted.spend(1), Err(Stop::SliceOver));
        control.cancel();
        assert_eq!(
            Pacer::new(&control).check(),
            Err(Stop::Interrupted(Interrupted::Cancelled))
        );
        let finished = Arc::new(AtomicBool::new(false));
        let fresh = Control::new();
        let mut racing = Pacer::racing(&fresh, &finished, false);
        let halt = racing.halt();
        assert_eq!(halt.check(), Ok(()));
        assert_eq!(racing.round(7, 8, 9), Ok(()));
        assert_eq!(
            fresh.progress().snapshot().frontier,
            0,
            "the quiet side publishes nothing"
        );
        finished.store(true, Ordering::Relaxed);
        assert_eq!(racing.spend(1), Ok(()), "checked only every so often");
        assert_eq!(racing.check(), Err(Stop::Overtaken));
        assert_eq!(
            halt.check(),
            Err(Stop::Overtaken),
            "the halt sees the race end"
        );
        assert_eq!(
            Pacer::slice(&Control::new(), past).halt().check(),
            Ok(()),
            "a halt never ends a time slice"
        );
        assert_eq!(
            Pacer::new(&late).halt().check(),
            Err(Stop::Interrupted(Interrupted::TimedOut))
        );
        assert_eq!(
            Pacer::new(&control).halt().check(),
            Err(Stop::Interrupted(Interrupted::Cancelled))
        );
        assert_eq!(Halt::default().check(), Ok(()));
        let error = Stop::Broken("x").into_error("tangle-learning");
        assert!(error.to_string().contains("invariant 'x'"), "{error}");
    }
}
