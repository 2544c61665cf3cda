//! Reading a JSON solution (as [`super::write_json`] writes it) back into credits, winners
//! and strategies, for `egsolve check`.

use std::io::Read;

use serde::{Deserialize, Deserializer};

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
    /// Some vertices have a `credit` and others do not.
    #[error(
        "vertex {0} has no `credit` although other vertices have one: a solution gives credits \
         for every vertex or (parity solver answers) for none"
    )]
    MixedCredits(VertexId),
    /// A vertex has neither a credit nor a winner.
    #[error("vertex {0} has neither `credit` nor `winner`")]
    NoOutcome(VertexId),
    /// A vertex's winner is not 0 or 1, or contradicts its credit.
    #[error(
        "vertex {0}: `winner` must be 0 or 1 and agree with `credit` (null, for ⊤, exactly \
         when player 1 wins)"
    )]
    BadWinner(VertexId),
}

#[derive(Deserialize)]
struct Document {
    vertices: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    id: VertexId,
    /// Missing (`None`), `null` (`Some(None)`, ⊤) or a number.
    #[serde(default, deserialize_with = "present")]
    credit: Option<Option<u64>>,
    #[serde(default)]
    winner: Option<u8>,
    strategy: Option<VertexId>,
}

/// Tells a present `null` from a missing key.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

/// A claimed answer as read from a JSON solution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonAnswer {
    /// Credit per vertex ([`TOP`] for ⊤), if the solution gives credits.
    pub credit: Option<Vec<u64>>,
    /// Winner per vertex (0 or 1).
    pub winner: Vec<u8>,
    /// Strategy successor per vertex ([`NO_MOVE`] for none).
    pub strategy: Vec<VertexId>,
}

/// The answer in a JSON solution of `n` vertices: credits if every record has one (none
/// if no record has), winners (from `winner`, or from the credit where `winner` is absent)
/// and strategies.
pub fn read_json_answer(reader: impl Read, n: usize) -> Result<JsonAnswer, SolutionFileError> {
    let doc: Document = serde_json::from_reader(std::io::BufReader::new(reader))?;
    let with_credits = doc.vertices.first().is_none_or(|e| e.credit.is_some());
    let mut credit = vec![TOP; if with_credits { n } else { 0 }];
    let mut winner = vec![0u8; n];
    let mut strategy = vec![NO_MOVE; n];
    let mut seen = vec![false; n];
    for e in doc.vertices {
        let i = e.id as usize;
        if i >= n || seen[i] {
            return Err(SolutionFileError::BadVertex(e.id));
        }
        seen[i] = true;
        if e.credit.is_some() != with_credits {
            return Err(SolutionFileError::MixedCredits(e.id));
        }
        let from_credit = e.credit.map(|c| u8::from(c.is_none()));
        winner[i] = match (e.winner, from_credit) {
            (Some(w @ 0..=1), None) => w,
            (Some(w), Some(c)) if w == c => w,
            (None, Some(c)) => c,
            (None, None) => return Err(SolutionFileError::NoOutcome(e.id)),
            _ => return Err(SolutionFileError::BadWinner(e.id)),
        };
        if let Some(c) = e.credit {
            credit[i] = c.unwrap_or(TOP);
        }
        strategy[i] = e.strategy.unwrap_or(NO_MOVE);
    }
    if let Some(missing) = seen.iter().position(|&s| !s) {
        return Err(SolutionFileError::Missing(missing as VertexId));
    }
    Ok(JsonAnswer {
        credit: with_credits.then_some(credit),
        winner,
        strategy,
    })
}

/// Credits and strategies read from a JSON solution of `n` vertices (a solution without
/// credits gives 0 on `W0` and ⊤ on `W1`).
pub fn read_json_solution(
    reader: impl Read,
    n: usize,
) -> Result<(Vec<u64>, Vec<VertexId>), SolutionFileError> {
    let answer = read_json_answer(reader, n)?;
    let credit = answer.credit.unwrap_or_else(|| {
        answer
            .winner
            .iter()
            .map(|&w| if w == 0 { 0 } else { TOP })
            .collect()
    });
    Ok((credit, answer.strategy))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, n: usize) -> Result<JsonAnswer, SolutionFileError> {
        read_json_answer(text.as_bytes(), n)
    }

    #[test]
    fn reads_credits_or_winners_only() {
        let with = read(
            r#"{"vertices": [{"id": 1, "credit": null, "winner": 1, "strategy": 0},
                             {"id": 0, "credit": 3, "winner": 0}]}"#,
            2,
        )
        .unwrap();
        assert_eq!(with.credit, Some(vec![3, TOP]));
        assert_eq!((with.winner, with.strategy), (vec![0, 1], vec![NO_MOVE, 0]));
        let without = read(
            r#"{"vertices": [{"id": 0, "winner": 1, "strategy": 1}, {"id": 1, "winner": 0}]}"#,
            2,
        )
        .unwrap();
        assert_eq!(without.credit, None);
        assert_eq!(without.winner, vec![1, 0]);
    }

    #[test]
    fn rejects_mixed_or_contradicting_records() {
        let mixed = r#"{"vertices": [{"id": 0, "credit": 1}, {"id": 1, "winner": 0}]}"#;
        assert!(matches!(
            read(mixed, 2),
            Err(SolutionFileError::MixedCredits(1))
        ));
        let contradiction = r#"{"vertices": [{"id": 0, "credit": null, "winner": 0}]}"#;
        assert!(matches!(
            read(contradiction, 1),
            Err(SolutionFileError::BadWinner(0))
        ));
        let neither = r#"{"vertices": [{"id": 0, "strategy": null}]}"#;
        assert!(matches!(
            read(neither, 1),
            Err(SolutionFileError::NoOutcome(0))
        ));
        let bad = r#"{"vertices": [{"id": 0, "winner": 2}]}"#;
        assert!(matches!(read(bad, 1), Err(SolutionFileError::BadWinner(0))));
    }
}
