//! What a job is: its id, owner, options, state machine and what it records along the way.
//! These are plain data shared by the store (rows), the scheduler (queue entries) and the API
//! (JSON views); no I/O here.
//!
//! States move only forward: `queued → running → succeeded | failed | cancelled`, or
//! `queued → cancelled`; a restart, a shutdown or an expired lease moves `running` back to
//! `queued` (the next start is a new attempt).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A job's id (UUIDv7: time-ordered).
pub type JobId = Uuid;

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Waiting for a worker.
    Queued,
    /// A worker is parsing or solving it.
    Running,
    /// The result is stored.
    Succeeded,
    /// It ended without a result; the failure says why.
    Failed,
    /// Cancelled by its owner or an admin.
    Cancelled,
}

impl JobState {
    /// Every state, in life order.
    pub const ALL: [JobState; 5] = [
        JobState::Queued,
        JobState::Running,
        JobState::Succeeded,
        JobState::Failed,
        JobState::Cancelled,
    ];

    /// The name stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    /// Whether the job will not change any more.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled
        )
    }
}

impl std::str::FromStr for JobState {
    type Err = String;
    fn from_str(s: &str) -> Result<JobState, String> {
        JobState::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown state '{s}': expected queued, running, succeeded, failed or cancelled"
                )
            })
    }
}

/// Which backend a job asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// A GPU when one is free, otherwise the CPU pool under the fallback rules.
    #[default]
    Auto,
    /// Only a GPU (waits for one).
    Gpu,
    /// Only the CPU pool (the parallel CPU backend).
    Cpu,
    /// The sequential reference solver, on the CPU pool.
    Reference,
    /// The native parity game solver, on the CPU pool (parity games only; winners and
    /// strategies, no credits).
    Parity,
}

impl BackendChoice {
    /// The name in the API.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Gpu => "gpu",
            BackendChoice::Cpu => "cpu",
            BackendChoice::Reference => "reference",
            BackendChoice::Parity => "parity",
        }
    }

    /// Parses an API name.
    pub fn parse(s: &str) -> Option<BackendChoice> {
        [
            BackendChoice::Auto,
            BackendChoice::Gpu,
            BackendChoice::Cpu,
            BackendChoice::Reference,
            BackendChoice::Parity,
        ]
        .into_iter()
        .find(|b| b.name() == s)
    }
}

/// The input syntax a job asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// Detected from the content.
    #[default]
    Auto,
    /// EGSolver energy arena.
    Mpg,
    /// PGSolver parity game.
    Gm,
    /// egsolve JSON.
    Json,
}

impl InputFormat {
    /// The name in the API.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Mpg => "mpg",
            InputFormat::Gm => "gm",
            InputFormat::Json => "json",
        }
    }

    /// Parses an API name (`egsolver`/`pgsolver` are accepted too).
    pub fn parse(s: &str) -> Option<InputFormat> {
        match s {
            "auto" => Some(InputFormat::Auto),
            "mpg" | "egsolver" => Some(InputFormat::Mpg),
            "gm" | "pgsolver" => Some(InputFormat::Gm),
            "json" => Some(InputFormat::Json),
            _ => None,
        }
    }
}

/// What the result holds per vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReturnKind {
    /// Winner and credit.
    #[default]
    Credits,
    /// Winner, credit and the winner's move.
    Strategies,
}

impl ReturnKind {
    /// The name in the API.
    pub fn name(self) -> &'static str {
        match self {
            ReturnKind::Credits => "credits",
            ReturnKind::Strategies => "strategies",
        }
    }

    /// Parses an API name.
    pub fn parse(s: &str) -> Option<ReturnKind> {
        match s {
            "credits" => Some(ReturnKind::Credits),
            "strategies" => Some(ReturnKind::Strategies),
            _ => None,
        }
    }
}

/// Options fixed at submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobOptions {
    /// Requested backend.
    pub backend: BackendChoice,
    /// Higher runs first.
    pub priority: i64,
    /// Seconds the solve may take.
    pub time_limit_secs: u64,
    /// Input syntax.
    pub format: InputFormat,
    /// What the result holds.
    pub return_kind: ReturnKind,
    /// Parity games with `backend=auto`: compute the energy reduction's credits too (the
    /// default answers winners and strategies with the parity solver).
    pub credits: bool,
}

/// Why a job failed (a failed job is data, not a panic).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Stable kind: `malformed-arena`, `too-large`, `exceeds-memory`, `time-limit`,
    /// `bound-overflow`, `backend-unavailable`, `worker-lost`, `insufficient-storage` (the
    /// result could not be written: the disk is full), `reference-changed` (a file named by
    /// reference, needed again before its store copy landed, has other bytes), `internal`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What went wrong, lowercase.
    pub message: String,
    /// 1-based line, for malformed arenas.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column, for malformed arenas.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
}

impl Failure {
    /// A failure not tied to a place in the input.
    pub fn new(kind: &str, message: impl Into<String>) -> Failure {
        Failure {
            kind: kind.to_string(),
            message: message.into(),
            line: None,
            column: None,
        }
    }
}

/// Size figures of a parsed arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArenaStats {
    /// Vertex count.
    pub vertices: u64,
    /// Edge count.
    pub edges: u64,
    /// The bound `M`.
    pub bound: u64,
    /// Whether it is a parity game (its priorities read): `auto` answers it with the parity
    /// solver unless credits are asked for. Not part of the views (the summary says it).
    #[serde(skip)]
    pub parity: bool,
}

/// A finished job's summary block: the one `egsolve solve --output json` writes.
pub type ResultSummary = egsolve_core::output::Summary;

/// One stored job, as the store returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    /// FIFO sequence number (also the list cursor).
    pub seq: i64,
    /// The id.
    pub id: JobId,
    /// The user who submitted it.
    pub owner: String,
    /// Current state.
    pub state: JobState,
    /// Submission options.
    pub options: JobOptions,
    /// SHA-256 of the decompressed arena bytes.
    pub arena_hash: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// When the last attempt started.
    pub started_at: Option<i64>,
    /// When it finished.
    pub finished_at: Option<i64>,
    /// Times started.
    pub attempts: i64,
    /// Times it reached `succeeded` (0 or 1).
    pub completions: i64,
    /// Backend that ran it.
    pub backend_used: Option<String>,
    /// Device that ran it (`cpu` or `gpu:N`).
    pub device: Option<String>,
    /// The worker process that holds (or held) its lease.
    pub worker: Option<String>,
    /// Arena figures, once parsed.
    pub arena: Option<ArenaStats>,
    /// Result key, once succeeded.
    pub result_key: Option<String>,
    /// Whether the result was reused from an identical earlier job.
    pub reused: bool,
    /// Why it failed.
    pub failure: Option<Failure>,
    /// Phase durations in milliseconds.
    pub upload_ms: Option<f64>,
    /// Parse phase.
    pub parse_ms: Option<f64>,
    /// Solve phase.
    pub solve_ms: Option<f64>,
    /// Counters from its worker's last heartbeat, while running.
    pub progress: Option<egsolve_core::solve::ProgressSnapshot>,
    /// The batch it came in, and its name there (`POST /v1/batches`).
    pub batch: Option<BatchMember>,
}

/// A job's place in the batch that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchMember {
    /// The batch's id.
    pub batch: JobId,
    /// The arena's name in the archive.
    pub name: String,
}
