//! What the scheduler and the workers both speak of: the slots jobs run in (a GPU or one
//! of the CPU pool's), a queued job, the assignment a worker receives, who holds each GPU
//! ([`GpuLoans`]) and what a worker reports back ([`WorkerEvent`]). The scheduler
//! ([`super::scheduler`]) and the workers ([`super::worker`]) import this module; it
//! imports neither, so the two depend on each other only through it.

use std::sync::Arc;
use std::time::Instant;

use super::job::{BackendChoice, JobId};
use super::preparse::PreparsedGame;
use egsolve_core::solve::{Backend, Control};

/// A GPU the service may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDevice {
    /// CUDA ordinal.
    pub ordinal: u32,
    /// Marketing name.
    pub name: String,
    /// Device memory in bytes (`u64::MAX` when unknown).
    pub memory_bytes: u64,
}

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotKind {
    /// GPU with this index into the device list.
    Gpu(usize),
    /// One of the CPU pool's slots.
    Cpu(usize),
}

impl SlotKind {
    /// The device name shown in job views (`gpu:0`, `cpu`).
    pub fn device_name(self, gpus: &[GpuDevice]) -> String {
        match self {
            SlotKind::Gpu(i) => format!("gpu:{}", gpus[i].ordinal),
            SlotKind::Cpu(_) => "cpu".to_string(),
        }
    }

    /// The backend this slot uses for a requested choice.
    pub fn backend_for(self, choice: BackendChoice) -> Backend {
        match (self, choice) {
            (_, BackendChoice::Reference) => Backend::Reference,
            (_, BackendChoice::Parity) => Backend::Parity,
            (SlotKind::Gpu(_), _) => Backend::Gpu,
            (SlotKind::Cpu(_), BackendChoice::Cpu) => Backend::Cpu,
            (SlotKind::Cpu(_), _) => Backend::Auto,
        }
    }
}

/// A job waiting in the queue.
#[derive(Debug, Clone)]
pub struct QueuedJob {
    /// The id.
    pub id: JobId,
    /// Requested backend.
    pub backend: BackendChoice,
    /// Edge count when known, else an estimate from the arena size.
    pub edges_estimate: u64,
    /// Bytes the solve needs on a device (estimate).
    pub memory_estimate: u64,
    /// When it entered the queue (this process's clock; for a job queued by another host,
    /// now minus the wait the database measured).
    pub enqueued: Instant,
    /// The arena if it was already parsed at submission.
    pub preparsed: Option<PreparsedArena>,
    /// `auto` on a parity game without credits: answered by the parity solver on the CPU
    /// (raced against the GPU route on a borrowed GPU where one is free), so it takes a CPU
    /// slot, never a GPU slot. False where the game is not known yet (not parsed).
    pub parity_answer: bool,
}

/// A game parsed at submission, handed to the worker so it is not parsed twice.
pub type PreparsedArena = Arc<PreparsedGame>;

/// A job handed to a worker: claimed already (`running` under this process's lease).
#[derive(Debug)]
pub struct Assignment {
    /// The job.
    pub job: QueuedJob,
    /// The attempt the claim started: every write about the job is fenced on it.
    pub attempt: i64,
    /// Its cancel flag, deadline holder and progress counters (the scheduler keeps a clone).
    pub control: Control,
}

/// Who holds each GPU of this process: the GPU slot's own job, or the GPU side of a race
/// that a CPU-slot job borrowed it for (`auto` on a parity game: `solve::race`). One state
/// per GPU, changed by compare-and-swap: the scheduler takes a free GPU's flag while it
/// claims jobs for that slot ([`GpuLoans::try_claim`]), keeps it for a job placed there
/// ([`GpuLoans::hold`]) or gives it back, and gives it back when the job finishes; a worker
/// borrows a GPU nobody holds and gives it back when its race ends. So a GPU runs one job's
/// device work at a time, and a CPU solve never holds one.
///
/// A claim round holds the flags of every free GPU for the length of one store query, often
/// just when a race asks (the round that placed the racing job, or the next). A borrower
/// that finds a GPU held by a claim waits for the round to end ([`CLAIM_WAIT`]) instead of
/// racing without it: on the H200 host a Hesselink job that lost its GPU so took 275 ms on
/// the CPU, where the race answers in 10–13 ms (session 53).
#[derive(Debug)]
pub struct GpuLoans {
    state: Vec<std::sync::atomic::AtomicU8>,
}

/// Nobody holds the GPU.
const FREE: u8 = 0;
/// A job or a race holds it.
const HELD: u8 = 1;
/// A claim round holds it until its query ends.
const CLAIMING: u8 = 2;

/// The longest a borrower waits for a claim round to let go of a GPU.
pub const CLAIM_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

impl GpuLoans {
    /// Flags for `gpus` GPUs, none held.
    pub fn new(gpus: usize) -> GpuLoans {
        GpuLoans {
            state: (0..gpus).map(|_| Default::default()).collect(),
        }
    }

    fn swap(&self, index: usize, from: u8, to: u8) -> Result<u8, u8> {
        use std::sync::atomic::Ordering;
        self.state[index].compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
    }

    /// Takes GPU `index` for a claim round if nobody holds it: [`GpuLoans::hold`] keeps
    /// it for the job placed on it, [`GpuLoans::give_back`] ends the round's hold.
    pub fn try_claim(&self, index: usize) -> bool {
        self.swap(index, FREE, CLAIMING).is_ok()
    }

    /// Keeps GPU `index`, which a claim round holds, for the job placed on it.
    pub fn hold(&self, index: usize) {
        self.state[index].store(HELD, std::sync::atomic::Ordering::Release);
    }

    /// Takes the first GPU nobody holds, waiting up to `wait` for GPUs that a claim round
    /// holds (it lets go when its query ends, unless it placed a job there).
    pub fn take_any(&self, wait: std::time::Duration) -> Option<usize> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            let mut claimed = false;
            for i in 0..self.state.len() {
                match self.swap(i, FREE, HELD) {
                    Ok(_) => return Some(i),
                    Err(CLAIMING) => claimed = true,
                    Err(_) => {}
                }
            }
            if !claimed || std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    /// Gives GPU `index` back.
    pub fn give_back(&self, index: usize) {
        self.state[index].store(FREE, std::sync::atomic::Ordering::Release);
    }
}

/// What a worker tells the scheduler.
#[derive(Debug, Clone, Copy)]
pub enum WorkerEvent {
    /// The job's assignment is over (the slot is free).
    Finished(JobId),
    /// A GPU borrowed for a race is given back after `seconds` of use.
    GpuReturned { gpu: usize, seconds: f64 },
}
