//! Reading a JSON solution (as [`super::write_json`] writes it) back into credits and
//! strategies, for `egsolve check`.

use std::io::Read;

use serde::Deserialize;

use crate::arena::VertexId;
use crate::solve::{NO_MOVE, TOP};

/// Why a solution file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SolutionFileError {
    /// Not the JSON document `egsolve solve --output json` writes.
    #[error("not a JSON solution ({0}); write one with `egsolve solve --output json`")]
    Json(#[from] serde_json::Error),
    /// A vertex id outside `0..n` or listed twice.
    #[error("vertex {0} is out of range or listed twice in the solution")]
    BadVertex(VertexId),
    /// A vertex is missing.
    #[error("vertex {0} is missing from the solution")]
    Missing(VertexId),
}

#[derive(Deserialize)]
struct Document {
    vertices: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    id: VertexId,
    credit: Option<u64>,
    strategy: Option<VertexId>,
}

/// Credits and strategies read from a JSON solution of `n` vertices.
pub fn read_json_solution(
    reader: impl Read,
    n: usize,
) -> Result<(Vec<u64>, Vec<VertexId>), SolutionFileError> {
    let doc: Document = serde_json::from_reader(std::io::BufReader::new(reader))?;
    let mut credit = vec![TOP; n];
    let mut strategy = vec![NO_MOVE; n];
    let mut seen = vec![false; n];
    for e in doc.vertices {
        let i = e.id as usize;
        if i >= n || seen[i] {
            return Err(SolutionFileError::BadVertex(e.id));
        }
        seen[i] = true;
        credit[i] = e.credit.unwrap_or(TOP);
        strategy[i] = e.strategy.unwrap_or(NO_MOVE);
    }
    if let Some(missing) = seen.iter().position(|&s| !s) {
        return Err(SolutionFileError::Missing(missing as VertexId));
    }
    Ok((credit, strategy))
}
