//! A batch's small members solved while the batch is received. A pipeline's batch is mostly
//! games that solve in well under a millisecond; queued, each would pay a claim, a job row
//! read, a result write and a commit of its own (3.8 ms p50 on the H200 host for a 0.1 ms
//! solve: `docs/bench/results/service/syntcomp-batch.md`). Here the members that qualify —
//! parsed at submission, at most `batch_inline_max_edges` edges, not `gpu` jobs, admitted —
//! are solved right after their parse, in the same task (`member`: as they arrive, the
//! largest waiting first, side by side), one thread each, each within `batch_inline_ms` (or
//! its own time limit, if shorter). An answered member's result file is written and synced
//! like a worker's, and its job is recorded as succeeded (device `cpu`) in the batch's one
//! transaction; a member that runs past its time, or fails, is queued as usual and its
//! worker records what happens. A batch refused after some members were solved (a bad
//! archive further on, a dropped connection) leaves their result files, named by their
//! content and options like any result, for a later job of the same game to write again.

use std::time::{Duration, Instant};

use egsolve_core::format::Game;
use egsolve_core::output::Summary;
use egsolve_core::solve::{self, Backend, Control, SolveOptions};

use super::{Accepted, AppState};
use crate::admission;
use crate::job::{BackendChoice, JobOptions};
use crate::result_file;
use crate::slots::SlotKind;
use crate::store::Store;
use crate::upload::StoredArena;

/// Where an inline answer was computed (the job's `device`).
pub(super) const DEVICE: &str = "cpu";

/// A member's own answer: its result file is written and synced.
pub(super) struct Answer {
    /// The result's key.
    pub key: String,
    /// Its summary.
    pub summary: Summary,
    /// The solve's time.
    pub solve_ms: f64,
}

/// What the batch's step made of a member parsed at submission.
pub(super) struct Checked {
    /// Admission's figures (the queue's own check, so that no refused member is solved).
    pub admitted: admission::Admitted,
    /// Its answer, when it qualifies (module docs) and was solved within its time.
    pub answer: Option<Answer>,
}

/// The backend an inline solve of a job asking for `choice` uses: a CPU slot's (none for
/// `gpu` jobs: they asked for the device).
fn backend(choice: BackendChoice) -> Option<Backend> {
    (choice != BackendChoice::Gpu).then(|| SlotKind::Cpu(0).backend_for(choice))
}

/// Admits a member parsed at submission (`None`: not parsed, or refused, which the queue's
/// admission then reports) and solves it when it qualifies.
pub(super) fn check_and_solve(
    state: &AppState,
    options: &JobOptions,
    stored: &StoredArena,
) -> Option<Checked> {
    let config = &state.config;
    let (game, _) = stored.parsed.as_ref()?;
    let admitted = admission::admit(game, config).ok()?;
    let small = usize::try_from(config.batch_inline_max_edges).unwrap_or(usize::MAX);
    let budget = Duration::from_millis(config.batch_inline_ms)
        .min(Duration::from_secs(options.time_limit_secs));
    let answer = backend(options.backend)
        .filter(|_| config.batch_inline_ms > 0 && game.arena.edge_count() <= small)
        .and_then(|backend| solve_one(&state.store, options, backend, budget, &stored.hash, game));
    if let Some(answer) = &answer {
        state
            .metrics
            .observe_phase("solve", &answer.summary.backend, answer.solve_ms / 1e3);
    }
    Some(Checked { admitted, answer })
}

/// One member's answer within `budget`, its result written; `None` when it ran past the
/// budget, failed, or its result could not be written (the member is then queued).
fn solve_one(
    store: &Store,
    options: &JobOptions,
    backend: Backend,
    budget: Duration,
    hash: &str,
    game: &Game,
) -> Option<Answer> {
    let mut solve_options = SolveOptions {
        backend,
        credits: options.credits,
        ..SolveOptions::default()
    };
    solve_options.cpu.threads = 1;
    let control = Control::new().with_deadline(Some(Instant::now() + budget));
    let parity = game.parity.as_ref().map(|p| p.view());
    let start = Instant::now();
    let solution = solve::solve_game(&game.arena, parity, &solve_options, &control).ok()?;
    let solve_ms = start.elapsed().as_secs_f64() * 1e3;
    let key = result_file::key(hash, options.format, options.backend);
    if let Err(e) = result_file::write(&store.result_path(&key), &solution) {
        tracing::warn!("a batch member's result could not be written ({e}); queued instead");
        return None;
    }
    let initial = game.initial.unwrap_or(0);
    Some(Answer {
        key,
        summary: Summary::new(&game.arena, &solution, initial),
        solve_ms,
    })
}

impl Accepted {
    /// Whether this member's job starts succeeded (reused or solved inline).
    pub(super) fn answered(&self) -> bool {
        self.reuse.is_some() || self.solved.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_jobs_are_left_to_the_device() {
        assert_eq!(backend(BackendChoice::Gpu), None);
        assert_eq!(backend(BackendChoice::Auto), Some(Backend::Auto));
        assert_eq!(backend(BackendChoice::Parity), Some(Backend::Parity));
    }
}
