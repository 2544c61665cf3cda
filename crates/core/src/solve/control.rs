//! What a running solve shares with whoever started it: a cancel flag, a deadline and live
//! progress counters. The CLI's progress bar and the service's job status read the same
//! [`Progress`] atomics; backends write them at least once per round and check
//! [`Control::checkpoint`] at least once per round and every ~10 ms inside long rounds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Live counters of a running solve (relaxed atomics: readers want a recent value, not a
/// consistent snapshot).
#[derive(Debug, Default)]
pub struct Progress {
    /// Rounds (or worklist passes) completed.
    pub round: AtomicU64,
    /// Vertices in the current frontier or worklist.
    pub frontier: AtomicU64,
    /// Lifts applied so far.
    pub lifts: AtomicU64,
}

/// A plain copy of [`Progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ProgressSnapshot {
    /// Rounds completed.
    pub round: u64,
    /// Current frontier size.
    pub frontier: u64,
    /// Lifts so far.
    pub lifts: u64,
}

impl Progress {
    /// Reads the counters.
    pub fn snapshot(&self) -> ProgressSnapshot {
        ProgressSnapshot {
            round: self.round.load(Ordering::Relaxed),
            frontier: self.frontier.load(Ordering::Relaxed),
            lifts: self.lifts.load(Ordering::Relaxed),
        }
    }

    /// Publishes new counter values.
    pub fn publish(&self, round: u64, frontier: u64, lifts: u64) {
        self.round.store(round, Ordering::Relaxed);
        self.frontier.store(frontier, Ordering::Relaxed);
        self.lifts.store(lifts, Ordering::Relaxed);
    }
}

/// Why a solve stopped before its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Interrupted {
    /// The cancel flag was raised.
    #[error("the solve was cancelled")]
    Cancelled,
    /// The deadline passed.
    #[error("the solve ran past its time limit")]
    TimedOut,
}

/// Cancel flag, deadline and progress of one solve. Cheap to clone: everything is shared.
#[derive(Debug, Clone, Default)]
pub struct Control {
    cancel: Arc<AtomicBool>,
    deadline: Option<Instant>,
    progress: Arc<Progress>,
}

impl Control {
    /// A control with no deadline.
    pub fn new() -> Control {
        Control::default()
    }

    /// The same control with a deadline.
    pub fn with_deadline(mut self, deadline: Option<Instant>) -> Control {
        self.deadline = deadline;
        self
    }

    /// Asks the solve to stop at its next checkpoint.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// A control for a part of this solve that can be stopped on its own: the same
    /// deadline and progress counters, a cancel flag of its own (raising this control's
    /// flag does not reach it; whoever links them forwards it, as [`super::race`] does).
    pub fn linked(&self) -> Control {
        Control {
            cancel: Arc::default(),
            deadline: self.deadline,
            progress: self.progress.clone(),
        }
    }

    /// The same control with progress counters of its own.
    pub fn with_own_progress(mut self) -> Control {
        self.progress = Arc::default();
        self
    }

    /// Whether the cancel flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The shared cancel flag (for backends that poll it from other threads or the GPU).
    pub fn cancel_flag(&self) -> &Arc<AtomicBool> {
        &self.cancel
    }

    /// The live counters.
    pub fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// The deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// `Err` once the solve must stop.
    #[inline]
    pub fn checkpoint(&self) -> Result<(), Interrupted> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Interrupted::Cancelled);
        }
        if let Some(deadline) = self.deadline {
            if Instant::now() >= deadline {
                return Err(Interrupted::TimedOut);
            }
        }
        Ok(())
    }
}

/// How long one lifting phase may run: it ends at the engine's first check after either
/// limit (a round boundary, a few thousand lifts, a kernel launch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Lifts (`u64::MAX`: no limit).
    pub lifts: u64,
    /// When the phase should end (`None`: no limit). Engines that cannot watch the clock
    /// may run on to their lift limit.
    pub until: Option<Instant>,
}

impl Budget {
    /// No limit: lift to the fixpoint.
    pub const UNLIMITED: Budget = Budget {
        lifts: u64::MAX,
        until: None,
    };

    /// Whether the time is up (checked at the engine's own intervals).
    pub fn expired(&self) -> bool {
        self.until.is_some_and(|t| Instant::now() >= t)
    }
}
