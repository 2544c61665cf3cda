//! A batch's small members solved while the batch is received. A pipeline's batch is mostly
//! games that solve in well under a millisecond; queued, each would pay a claim, a job row
//! read, a result write and a commit of its own (3.8 ms p50 on the H200 host for a 0.1 ms
//! solve: `docs/bench/results/service/syntcomp-batch.md`). Here the members that qualify —
//! parsed at submission, at most `batch_inline_max_edges` edges, not `gpu` jobs — are solved side by
//! side, one thread each, each within `batch_inline_ms` (or its own time limit, if shorter).
//! An answered member's result file is written and synced like a worker's, and its job is
//! recorded as succeeded (device `cpu`) in the batch's one transaction; a member that runs
//! past its time, or fails, is queued as usual and its worker records what happens.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use egsolve_core::output::Summary;
use egsolve_core::solve::{self, Backend, Control, SolveOptions};

use super::{Accepted, AppState, Outcome};
use crate::job::{BackendChoice, JobOptions};
use crate::preparse::PreparsedGame;
use crate::result_file;
use crate::store::Store;

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

/// The backend an inline solve of a job asking for `choice` uses (none for `gpu` jobs:
/// they asked for the device).
fn backend(choice: BackendChoice) -> Option<Backend> {
    match choice {
        BackendChoice::Auto => Some(Backend::Auto),
        BackendChoice::Cpu => Some(Backend::Cpu),
        BackendChoice::Reference => Some(Backend::Reference),
        BackendChoice::Parity => Some(Backend::Parity),
        BackendChoice::Gpu => None,
    }
}

/// Solves the members of `outcomes` that qualify (module docs) and sets their answers.
pub(super) async fn solve_small(
    state: &AppState,
    options: &JobOptions,
    outcomes: &mut [(String, Outcome)],
) {
    let config = &state.config;
    let Some(backend) = backend(options.backend).filter(|_| config.batch_inline_ms > 0) else {
        return;
    };
    let budget = Duration::from_millis(config.batch_inline_ms)
        .min(Duration::from_secs(options.time_limit_secs));
    let small = usize::try_from(config.batch_inline_max_edges).unwrap_or(usize::MAX);
    let mut work: Vec<(usize, String, Arc<PreparsedGame>)> = Vec::new();
    for (index, (_, outcome)) in outcomes.iter().enumerate() {
        if let Outcome::Accepted(accepted) = outcome
            && accepted.reuse.is_none()
            && let Some(game) = accepted.admitted.as_ref().and_then(|a| a.game())
            && game.game.arena.edge_count() <= small
        {
            work.push((index, accepted.stored.hash.clone(), game.clone()));
        }
    }
    if work.is_empty() {
        return;
    }
    let tried = work.len();
    let shared = state.clone();
    let options = *options;
    let start = Instant::now();
    let Ok(answers) = tokio::task::spawn_blocking(move || {
        work.into_par_iter()
            .filter_map(|(index, hash, game)| {
                let answer = solve_one(&shared.store, &options, backend, budget, &hash, &game)?;
                Some((index, answer))
            })
            .collect::<Vec<_>>()
    })
    .await
    else {
        return; // a panic in a solve: every member stays queued
    };
    let metrics = &state.metrics;
    let (tried, answered) = (tried, answers.len());
    let slowest_ms = answers.iter().map(|(_, a)| a.solve_ms).fold(0.0, f64::max);
    for (index, answer) in answers {
        metrics.observe_phase("solve", &answer.summary.backend, answer.solve_ms / 1e3);
        if let Outcome::Accepted(accepted) = &mut outcomes[index].1 {
            accepted.solved = Some(answer);
        }
    }
    tracing::debug!(
        ms = start.elapsed().as_secs_f64() * 1e3,
        tried,
        answered,
        slowest_ms,
        "batch members solved inline"
    );
}

/// One member's answer within `budget`, its result written; `None` when it ran past the
/// budget, failed, or its result could not be written (the member is then queued).
fn solve_one(
    store: &Store,
    options: &JobOptions,
    backend: Backend,
    budget: Duration,
    hash: &str,
    game: &PreparsedGame,
) -> Option<Answer> {
    let mut solve_options = SolveOptions {
        backend,
        credits: options.credits,
        ..SolveOptions::default()
    };
    solve_options.cpu.threads = 1;
    let control = Control::new().with_deadline(Some(Instant::now() + budget));
    let parity = game.game.parity.as_ref().map(|p| p.view());
    let start = Instant::now();
    let solution = solve::solve_game(&game.game.arena, parity, &solve_options, &control).ok()?;
    let solve_ms = start.elapsed().as_secs_f64() * 1e3;
    let key = result_file::key(hash, options.format, options.backend);
    if let Err(e) = result_file::write(&store.result_path(&key), &solution) {
        tracing::warn!("a batch member's result could not be written ({e}); queued instead");
        return None;
    }
    let initial = game.game.initial.unwrap_or(0);
    Some(Answer {
        key,
        summary: Summary::new(&game.game.arena, &solution, initial),
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
