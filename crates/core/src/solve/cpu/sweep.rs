//! The paper's naive parallel sweep (its Algorithm 2, "CPU EGn"): every round lifts every
//! vertex, in parallel and in place, until a round changes nothing. Kept for comparison with
//! the frontier rounds only: it does `n` lifts per round however few vertices are broken.
//!
//! In-place parallel lifting is sound because lifts only raise values and never past the
//! least fixpoint; a round that changes nothing read stable values, so its end is a fixpoint.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

use super::frontier::Stop;
use super::state::LiftState;
use super::values::Value;
use crate::arena::{Player, Weight};
use crate::solve::control::{Control, Interrupted};

/// Vertices per parallel task (and between checkpoints of a one-thread round).
const CHUNK: usize = 4096;

/// Counters of a finished run.
pub(super) struct SweepRun {
    pub rounds: u64,
    pub lifts: u64,
}

/// Sweeps `state` to the least fixpoint. `pool` is `None` for one thread.
pub(super) fn run<W: Weight, V: Value>(
    state: &LiftState<'_, W, V>,
    pool: Option<&rayon::ThreadPool>,
    control: &Control,
) -> Result<SweepRun, Interrupted> {
    let n = state.arena.vertex_count();
    let k = state.lifter();
    let (mut rounds, mut lifts) = (0u64, 0u64);
    loop {
        control.checkpoint()?;
        control.progress().publish(rounds, n as u64, lifts);
        let changed = AtomicBool::new(false);
        let sweep_chunk = |chunk: usize| {
            let first = chunk * CHUNK;
            let mut any = false;
            for v in first as u32..(first + CHUNK).min(n) as u32 {
                let old = k.value(v);
                // No counters here: the sweep never asks which edges are satisfied.
                let new = match k.owner(v) {
                    Player::Zero => k.lift_min(v).0.max(old),
                    Player::One => k.lift_max(v).max(old),
                };
                if new != old {
                    k.set_value(v, new);
                    any = true;
                }
            }
            if any {
                changed.store(true, Relaxed);
            }
        };
        match pool {
            None => {
                for chunk in 0..n.div_ceil(CHUNK) {
                    control.checkpoint()?;
                    sweep_chunk(chunk);
                }
            }
            Some(pool) => {
                let stop = Stop::default();
                crate::solve::threads::install_erased(pool, || {
                    (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|chunk| {
                        if !stop.should_stop(control) {
                            sweep_chunk(chunk);
                        }
                    });
                });
                stop.result()?;
            }
        }
        rounds += 1;
        lifts += n as u64;
        if !changed.load(Relaxed) {
            control.progress().publish(rounds, 0, lifts);
            return Ok(SweepRun { rounds, lifts });
        }
    }
}
