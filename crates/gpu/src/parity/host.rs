//! The kernel's passes on the CPU, one thread, step for step as `kernels/parity.cu` takes
//! them (the same status bytes, frozen words and decisions per pass): what the tests run
//! the host orchestration ([`super::solve_on`]) against where there is no GPU. A "launch"
//! here is [`PASSES_PER_RUN`] passes.

use egsolve_core::arena::Arena;

use super::{DISTRACTION, FixpointLayout, FixpointMachine, OWNER, PARITY, Progress, winner};
use crate::error::GpuSolveError;

/// Passes per [`FixpointMachine::run`] (the device's launches end on time instead).
pub const PASSES_PER_RUN: u64 = 1 << 12;

/// The CPU mirror of the device's loop.
#[derive(Debug)]
pub struct HostFixpoint<'a> {
    succ_offsets: &'a [u32],
    succ_targets: &'a [u32],
    order: &'a [u32],
    level_start: &'a [u32],
    status: Vec<u8>,
    frozen: Vec<u32>,
    strategy: Vec<u32>,
    level: u32,
    gained: bool,
    progress: Progress,
}

impl<'a> HostFixpoint<'a> {
    /// The loop at its start on `arena` laid out as `layout`.
    pub fn new(arena: &'a Arena, layout: &'a FixpointLayout) -> HostFixpoint<'a> {
        let n = layout.status.len();
        HostFixpoint {
            succ_offsets: arena.succ_offsets(),
            succ_targets: arena.succ_targets(),
            order: &layout.order,
            level_start: &layout.level_start,
            status: layout.status.clone(),
            frozen: vec![0; n],
            strategy: vec![egsolve_core::solve::NO_MOVE; n],
            level: 0,
            gained: false,
            progress: Progress::default(),
        }
    }

    fn levels(&self) -> u32 {
        (self.level_start.len() - 1) as u32
    }

    /// `evaluate` of the kernel.
    fn evaluate(&mut self, pos: usize) -> bool {
        if self.frozen[pos] != 0 {
            return false;
        }
        let v = self.order[pos] as usize;
        let s = self.status[v];
        if s & DISTRACTION != 0 {
            return false;
        }
        let owner = u8::from(s & OWNER != 0);
        let mut one_step = owner ^ 1;
        let edges = self.succ_offsets[v] as usize..self.succ_offsets[v + 1] as usize;
        for &w in &self.succ_targets[edges] {
            if winner(self.status[w as usize]) == owner {
                self.strategy[v] = w;
                one_step = owner;
                break;
            }
        }
        if one_step == s & PARITY {
            return false;
        }
        self.status[v] = s | DISTRACTION;
        true
    }

    /// `freeze_thaw_reset` of the kernel.
    fn freeze_thaw_reset(&mut self, pos: usize, level: u32) {
        let f = self.frozen[pos];
        if f >= level {
            return;
        }
        let player = (level & 1) as u8;
        let v = self.order[pos] as usize;
        let s = self.status[v];
        if f != 0 {
            if (f & 1) as u8 == player {
                self.frozen[pos] = level;
            } else {
                self.frozen[pos] = 0;
                self.status[v] = s & !DISTRACTION;
            }
        } else if s & DISTRACTION != 0 {
            if s & PARITY == player {
                self.frozen[pos] = level;
            } else {
                self.status[v] = s & !DISTRACTION;
            }
        } else if s & PARITY != player {
            self.frozen[pos] = level;
        }
    }
}

impl FixpointMachine for HostFixpoint<'_> {
    fn run(&mut self) -> Result<Progress, GpuSolveError> {
        let mut passes = 0;
        while self.level < self.levels() && passes < PASSES_PER_RUN {
            let begin = self.level_start[self.level as usize] as usize;
            let end = self.level_start[self.level as usize + 1] as usize;
            let mut changed = false;
            for pos in begin..end {
                changed |= self.evaluate(pos);
            }
            passes += 1;
            if changed {
                self.gained = true;
            } else if self.gained && self.level > 0 {
                for pos in 0..begin {
                    self.freeze_thaw_reset(pos, self.level);
                }
                passes += 1;
                self.progress.restarts += 1;
                self.level = 0;
                self.gained = false;
            } else {
                self.level += 1;
                self.gained = false;
            }
        }
        self.progress.passes += passes;
        self.progress.done = self.level >= self.levels();
        Ok(self.progress)
    }

    fn finish(self) -> Result<(Vec<u8>, Vec<u32>), GpuSolveError> {
        Ok((self.status, self.strategy))
    }
}
