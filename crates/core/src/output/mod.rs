//! Writing solutions (JSON, text, `paritysol`, the binary arrays of [`binary`]) and reading a JSON solution back for
//! `egsolve check`. Writers stream: one line per vertex, formatted in pieces on every core
//! and written in order ([`parallel`]), never a whole-document buffer.
//!
//! The JSON document:
//! ```json
//! {"summary": {"vertices": 3, "edges": 4, "w0": 2, "w1": 1,
//!              "initial": {"vertex": 0, "winner": 0, "credit": 5},
//!              "max_credit": 5, "bound": 9, "lifts": 7, "rounds": 0,
//!              "solve_seconds": 0.001, "strategy_seconds": 0.0, "backend": "reference"},
//!  "vertices": [
//!   {"id": 0, "credit": 5, "winner": 0, "strategy": 2},
//!   {"id": 1, "credit": null, "winner": 1, "strategy": 1},
//!   ...]}
//! ```
//! `credit` is `null` for ⊤; `strategy` is the successor the owner picks where the owner
//! wins, else `null`. The initial vertex is the file's `start` vertex if it names one, else 0.
//!
//! For parity games the summary adds `"parity": {"priorities", "compressed_priorities",
//! "per_scc", "reduction_fits"}`. When the parity solver answered (no credits:
//! `"credits_computed": false` in the summary, `true` otherwise), the vertex records have
//! no `credit` key — `{"id": 0, "winner": 0, "strategy": 2}` — and the summary's
//! `max_credit`, `bound`, `initial.credit` are 0, 0 and `null`. Text output needs credits
//! and refuses such answers; `paritysol` writes them as usual.

pub mod binary;
pub mod parallel;
mod read;
pub mod records;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::arena::{Arena, VertexId};
use crate::parity::ParitySummary;
use crate::solve::{Solution, TOP};
pub use read::{JsonAnswer, SolutionFileError, read_json_answer, read_json_solution};
use records::{CreditField, RecordBuffer, StrategyField};

/// The kinds of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// The JSON document described in the module docs.
    Json,
    /// `ID CREDIT` per line, `T` for ⊤.
    Text,
    /// PGSolver's `paritysol` (parity inputs only).
    Paritysol,
    /// Credits and strategies as little-endian arrays after a small header ([`binary`]).
    Binary,
}

impl std::str::FromStr for OutputFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<OutputFormat, String> {
        match s {
            "json" => Ok(OutputFormat::Json),
            "text" => Ok(OutputFormat::Text),
            "paritysol" => Ok(OutputFormat::Paritysol),
            "binary" => Ok(OutputFormat::Binary),
            _ => Err(format!(
                "unknown output format '{s}': expected json, text, paritysol or binary"
            )),
        }
    }
}

/// The initial vertex and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Initial {
    /// The vertex.
    pub vertex: VertexId,
    /// 0 or 1.
    pub winner: u8,
    /// Its credit, `None` for ⊤.
    pub credit: Option<u64>,
}

/// The summary block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of vertices.
    pub vertices: usize,
    /// Number of edges.
    pub edges: usize,
    /// `|W0|`.
    pub w0: usize,
    /// `|W1|`.
    pub w1: usize,
    /// The initial vertex's outcome.
    pub initial: Initial,
    /// Largest finite credit.
    pub max_credit: u64,
    /// The bound `M`.
    pub bound: u64,
    /// Lifts to reach the least measure.
    pub lifts: u64,
    /// Rounds (parallel backends).
    pub rounds: u64,
    /// Seconds to compute the credits.
    pub solve_seconds: f64,
    /// Seconds to compute the strategies.
    pub strategy_seconds: f64,
    /// Backend used.
    pub backend: String,
    /// The algorithm that answered (see [`crate::solve::SolveStats::algorithm`]).
    /// Summaries stored before this field existed read as empty.
    #[serde(default)]
    pub algorithm: String,
    /// Evaluations of player 1's strategies (the accelerated solver; 0 elsewhere).
    #[serde(default)]
    pub evaluations: u64,
    /// Seconds per phase of the solve.
    #[serde(default)]
    pub phases: crate::solve::Phases,
    /// Whether the credits were computed (false: a parity game answered by the parity
    /// solver — winners and strategies only, `max_credit` and `bound` are 0). Summaries
    /// stored before this field existed read as `true`.
    #[serde(default = "computed")]
    pub credits_computed: bool,
    /// For parity games: the priorities and how they were compressed and solved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<ParitySummary>,
}

fn computed() -> bool {
    true
}

impl Summary {
    /// The summary of `solution` for `arena`, with `initial` as the initial vertex.
    pub fn new(arena: &Arena, solution: &Solution, initial: VertexId) -> Summary {
        let credit = solution.credit[initial as usize];
        let (w0, max_credit) = solution.tally();
        Summary {
            vertices: arena.vertex_count(),
            edges: arena.edge_count(),
            w0,
            w1: solution.credit.len() - w0,
            initial: Initial {
                vertex: initial,
                winner: solution.winner(initial).index(),
                credit: (credit != TOP && solution.credits_computed).then_some(credit),
            },
            max_credit,
            bound: solution.stats.bound,
            lifts: solution.stats.lifts,
            rounds: solution.stats.rounds,
            solve_seconds: solution.stats.solve_seconds,
            strategy_seconds: solution.stats.strategy_seconds,
            backend: solution.stats.backend.clone(),
            algorithm: solution.stats.algorithm.clone(),
            evaluations: solution.stats.evaluations,
            phases: solution.stats.phases,
            credits_computed: solution.credits_computed,
            parity: solution.parity,
        }
    }
}

/// Which vertices to write: all, or a selection (in the given order).
pub type Selection<'a> = Option<&'a [VertexId]>;

/// Writes the JSON document of the module docs (strategies included).
pub fn write_json(
    out: &mut impl Write,
    arena: &Arena,
    solution: &Solution,
    initial: VertexId,
    selection: Selection<'_>,
) -> io::Result<()> {
    records::json_head(out, None, &Summary::new(arena, solution, initial))?;
    let credits = CreditField::of(solution.credits_computed);
    write_records(out, solution, selection, |buffer, v, credit, strategy| {
        buffer.json_record(v, credit, strategy, credits, StrategyField::Included);
    })?;
    out.write_all(records::JSON_TAIL)
}

/// Text output needs credits, and this answer has none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "text output lists credits, and a parity game is answered by the parity solver without \
     credits; use --output paritysol for `ID WINNER [STRATEGY];` lines or json, or add \
     --credits to compute the credits of its energy reduction (where they fit in 64 bits)"
)]
pub struct NoCredits;

/// Writes `ID CREDIT` lines (`T` for ⊤) in id order; an answer without credits is
/// [`NoCredits`] (nothing written).
pub fn write_text(
    out: &mut impl Write,
    solution: &Solution,
    selection: Selection<'_>,
) -> io::Result<()> {
    if !solution.credits_computed {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, NoCredits));
    }
    write_records(out, solution, selection, |buffer, v, credit, strategy| {
        buffer.text_line(v, credit, strategy, StrategyField::Omitted);
    })
}

/// Writes PGSolver's `paritysol`: `paritysol N;` then `ID WINNER [STRATEGY];` per vertex
/// (the strategy only where the winner owns the vertex), as Oink writes it.
pub fn write_paritysol(
    out: &mut impl Write,
    solution: &Solution,
    selection: Selection<'_>,
) -> io::Result<()> {
    records::paritysol_head(out, solution.credit.len())?;
    write_records(out, solution, selection, |buffer, v, credit, strategy| {
        buffer.paritysol_line(v, credit, strategy);
    })
}

/// Formats one record per selected vertex on every core ([`parallel`]) and writes them to
/// `out` in order.
fn write_records(
    out: &mut impl Write,
    solution: &Solution,
    selection: Selection<'_>,
    record: impl Fn(&mut RecordBuffer, VertexId, u64, u32) + Sync,
) -> io::Result<()> {
    let vertex = |i: usize| match selection {
        Some(list) => list[i],
        None => i as VertexId,
    };
    let count = selection.map_or(solution.credit.len(), <[VertexId]>::len);
    parallel::format_in_order(
        count,
        true,
        |buffer, i| {
            let v = vertex(i);
            record(
                buffer,
                v,
                solution.credit[v as usize],
                solution.strategy[v as usize],
            );
        },
        |bytes| out.write_all(&bytes),
    )
}
