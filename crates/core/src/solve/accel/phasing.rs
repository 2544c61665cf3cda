//! The lengths of the driver's lifting phases ([`Phasing`], the module docs of [`super`]
//! say why a phase is a length of time), and when a phase that did not finish lifts on
//! instead of evaluating ([`FrontierTail`], [`Phasing::lifting_on`]).
//!
//! [`FrontierTail`]: crate::solve::engine::FrontierTail

use std::time::{Duration, Instant};

use super::{EVALUATION_NS_PER_ITEM, MIN_PHASE, Schedule};
use crate::arena::Arena;
use crate::solve::control::Budget;
use crate::solve::engine::{LiftEngine, LiftRun};

/// The lengths of lifting phases, from what the solve has measured.
pub(super) struct Phasing {
    schedule: Schedule,
    /// The next phase's length in lifts ([`Schedule::Lifts`]).
    lifts: u64,
    /// The next phase's length in time ([`Schedule::Measured`]).
    time: Duration,
    /// The next phase's length instead, once: lifting on to the fixpoint
    /// ([`Phasing::lifting_on`]).
    once: Option<Duration>,
    /// Phases lifted on since the last evaluation.
    lifted_on: u32,
}

/// Phases [`Phasing::lifting_on`] may add before an evaluation comes all the same.
const MAX_LIFTING_ON: u32 = 1;

impl Phasing {
    pub(super) fn new(
        schedule: Schedule,
        arena: &Arena,
        engine: &dyn LiftEngine,
        threads: usize,
    ) -> Self {
        let items = (arena.vertex_count() + arena.edge_count()) as f64;
        // Evaluations scale well below the thread count (memory-bound passes, long
        // sequential stretches in the searches): 16 cores gave 1.4x to 3.5x.
        let speedup = (threads as f64).sqrt();
        let estimate = items * EVALUATION_NS_PER_ITEM * 1e-9 / speedup;
        Phasing {
            schedule,
            lifts: match schedule {
                Schedule::Lifts(first) => first,
                Schedule::Measured => u64::MAX,
            },
            time: Duration::from_secs_f64(estimate * engine.phase_ratio()).max(MIN_PHASE),
            once: None,
            lifted_on: 0,
        }
    }

    /// Whether to lift on instead of evaluating after a phase that did not finish: yes when
    /// its frontier was closing in ([`FrontierTail::lifts_left`](crate::solve::engine::FrontierTail::lifts_left)) and the lifts left, at the
    /// phase's own rate (`run.lifts` in `seconds`), take at most a quarter of the phase's
    /// length (about what the evaluation is expected to cost). Then the next phase may last
    /// half that length (a tail of small rounds lifts more slowly than the phase did), and
    /// this answers it. Once before each evaluation: a phase that lifted on and still did
    /// not finish costs at most half an evaluation more.
    pub(super) fn lifting_on(&mut self, run: &LiftRun, seconds: f64) -> Option<Duration> {
        if self.schedule != Schedule::Measured || self.lifted_on >= MAX_LIFTING_ON {
            return None;
        }
        let left = run.tail?.lifts_left()?;
        if run.lifts == 0 || seconds <= 0.0 {
            return None;
        }
        let expected = Duration::from_secs_f64(left * seconds / run.lifts as f64);
        if expected * 4 > self.time {
            return None;
        }
        self.lifted_on += 1;
        let phase = (self.time / 2).max(MIN_PHASE);
        self.once = Some(phase);
        Some(phase)
    }

    pub(super) fn budget(&mut self) -> Budget {
        if let Some(phase) = self.once.take() {
            return Budget {
                lifts: u64::MAX,
                until: Some(Instant::now() + phase),
            };
        }
        match self.schedule {
            Schedule::Lifts(_) => Budget {
                lifts: self.lifts,
                until: None,
            },
            Schedule::Measured => Budget {
                lifts: u64::MAX,
                until: Some(Instant::now() + self.time),
            },
        }
    }

    /// After an evaluation that took `evaluation` and was `productive` (changed many
    /// values).
    pub(super) fn next(&mut self, evaluation: Duration, productive: bool, ratio: f64) {
        self.lifted_on = 0;
        match self.schedule {
            Schedule::Measured => {
                self.time = if productive {
                    evaluation.mul_f64(ratio).max(MIN_PHASE)
                } else {
                    (self.time * 2).max(evaluation * 5)
                };
            }
            Schedule::Lifts(_) => {
                if !productive {
                    self.lifts = self.lifts.saturating_mul(2);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::solve::accel::solve_scheduled;
    use crate::solve::engine::FrontierTail;
    use crate::solve::engine::{LiftCall, WorklistEngine};
    use crate::solve::{Control, SolveError, Threads};

    fn tail(now: u64, earlier: u64, rounds: u64) -> Option<FrontierTail> {
        Some(FrontierTail {
            now,
            earlier,
            rounds,
        })
    }

    fn measured(time: Duration) -> Phasing {
        Phasing {
            schedule: Schedule::Measured,
            lifts: u64::MAX,
            time,
            once: None,
            lifted_on: 0,
        }
    }

    #[test]
    fn a_geometric_tail_leaves_its_sum_and_a_steady_frontier_nothing() {
        // Halving each round over 4 rounds: 1600 → 100, then 50 + 25 + … = 100 left.
        let left = tail(100, 1600, 4)
            .unwrap()
            .lifts_left()
            .expect("closing in");
        assert!((left - 100.0).abs() < 1e-6, "{left}");
        // 2 % fewer a round: a climbing game's frontier.
        assert_eq!(tail(98, 100, 1).unwrap().lifts_left(), None);
        assert_eq!(tail(100, 100, 4).unwrap().lifts_left(), None);
        assert_eq!(tail(120, 100, 4).unwrap().lifts_left(), None);
        assert_eq!(tail(0, 100, 4).unwrap().lifts_left(), None);
        assert_eq!(tail(10, 100, 0).unwrap().lifts_left(), None);
    }

    #[test]
    fn lifting_on_needs_a_closing_frontier_that_ends_within_a_quarter_phase() {
        let run = |tail, lifts| LiftRun {
            lifts,
            rounds: 10,
            finished: false,
            tail,
        };
        // 1,000,000 lifts in 0.1 s, 100 left: 10 µs, far under a quarter of 0.4 s.
        let mut phasing = measured(Duration::from_millis(400));
        let on = phasing.lifting_on(&run(tail(100, 1600, 4), 1_000_000), 0.1);
        assert_eq!(on, Some(Duration::from_millis(200)), "half the phase");
        let before = Instant::now();
        let budget = phasing.budget();
        let until = budget.until.expect("a time budget");
        assert!(until >= before + Duration::from_millis(200));
        assert!(until <= Instant::now() + Duration::from_millis(200));
        // Once: the next phase is the phase's own length again, and no second lifting on.
        let until = phasing.budget().until.unwrap();
        assert!(until >= before + Duration::from_millis(400));
        assert_eq!(
            phasing.lifting_on(&run(tail(100, 1600, 4), 1_000_000), 0.1),
            None
        );
        // An evaluation allows it again.
        phasing.next(Duration::from_millis(400), true, 1.0);
        assert!(
            phasing
                .lifting_on(&run(tail(100, 1600, 4), 1_000_000), 0.1)
                .is_some()
        );
        // Too many lifts left for a quarter of the phase: 2,000,000 at 10^7 a second is
        // 0.2 s against 0.1.
        let mut phasing = measured(Duration::from_millis(400));
        assert_eq!(
            phasing.lifting_on(&run(tail(2_000_000, 32_000_000, 4), 1_000_000), 0.1),
            None
        );
        // No tail, a steady frontier, no lifts, or lifts counted instead of time: no.
        assert_eq!(phasing.lifting_on(&run(None, 1_000_000), 0.1), None);
        assert_eq!(
            phasing.lifting_on(&run(tail(100, 101, 4), 1_000_000), 0.1),
            None
        );
        assert_eq!(phasing.lifting_on(&run(tail(100, 1600, 4), 0), 0.1), None);
        let mut counted = Phasing {
            schedule: Schedule::Lifts(1000),
            ..measured(Duration::from_millis(400))
        };
        assert_eq!(
            counted.lifting_on(&run(tail(100, 1600, 4), 1_000_000), 0.1),
            None
        );
    }

    /// The worklist, stopped after `first` lifts on its first call, reporting `tail` then;
    /// later calls lift to the fixpoint. Whatever the driver's budgets: its choice between
    /// lifting on and evaluating is under test here, not the clock (the budget it gives is
    /// the unit test's above).
    struct StopsOnce {
        first: u64,
        tail: Option<FrontierTail>,
        calls: usize,
    }

    impl LiftEngine for StopsOnce {
        fn name(&self) -> &'static str {
            "stops-once"
        }

        fn records_topping(&self) -> bool {
            true
        }

        fn lift(
            &mut self,
            call: LiftCall<'_>,
            values: &mut Vec<u64>,
        ) -> Result<LiftRun, SolveError> {
            self.calls += 1;
            let budget = if self.calls == 1 {
                Budget {
                    lifts: self.first,
                    until: None,
                }
            } else {
                Budget::UNLIMITED
            };
            let run = WorklistEngine.lift(LiftCall { budget, ..call }, values)?;
            Ok(LiftRun {
                tail: if run.finished { None } else { self.tail },
                ..run
            })
        }
    }

    /// Through the driver: a first phase that stops with a closing frontier lifts on to the
    /// fixpoint without an evaluation; the same stop without a tail evaluates. Both give the
    /// reference's credits.
    #[test]
    fn the_driver_lifts_on_where_the_frontier_closes_in() {
        let arena = random(
            RandomParams {
                vertices: 3_000,
                min_degree: 1,
                max_degree: 3,
                player1_percent: 30,
                ..RandomParams::default()
            },
            11,
        );
        let control = Control::new();
        let reference = crate::solve::reference::solve(&arena, &control).expect("solves");
        // The whole climb's lifts, so that the first phase stops a few short of it.
        let bound = crate::solve::energy::bound(&arena).expect("fits");
        let mut values = vec![0; arena.vertex_count()];
        let all = WorklistEngine
            .lift(
                LiftCall {
                    arena: &arena,
                    bound,
                    topping: None,
                    budget: Budget::UNLIMITED,
                    threads: &Threads::one(),
                    control: &control,
                },
                &mut values,
            )
            .expect("lifts");
        assert!(all.finished && all.lifts > 1_000, "{all:?}");
        // A tail whose lifts left take no time at the phase's rate.
        for (tail, lifts_on) in [(tail(1, 1 << 20, 4), true), (None, false)] {
            let mut engine = StopsOnce {
                first: all.lifts - 20,
                tail,
                calls: 0,
            };
            let (solution, stats) =
                solve_scheduled(&arena, &mut engine, Schedule::Measured, &control).expect("solves");
            assert_eq!(solution.credit, reference.credit);
            if lifts_on {
                assert_eq!((stats.evaluations, engine.calls), (0, 2));
            } else {
                // An evaluation, or strategy improvement in its place (a small game).
                assert!(stats.evaluations + stats.improvements >= 1, "{stats:?}");
            }
        }
    }
}
