//! `GET /v1/jobs/{id}/result/histogram?bins=N`: how a solved game's finite credits spread
//! over `[0, max_credit]` in equal-width bins, and how many vertices each player wins — what
//! the job page plots, without sending every vertex to the browser. Computed from the stored
//! result on a blocking thread. An answer of the parity solver (`credits_computed: false`)
//! has winners only: its bins are empty.

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;
use crate::request::{Params, caller, only_params, param, stored_result};
use crate::result_file::{self, ResultFormat};

/// Most bins a caller may ask for.
pub const MAX_BINS: u64 = 200;

/// Finite credits counted per bin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// Credits per bin: bin `i` holds `[i·width, (i+1)·width − 1]`.
    pub width: u64,
    /// Counts.
    pub counts: Vec<u64>,
    /// Vertices with a finite credit (player 0 wins).
    pub w0: u64,
    /// Vertices with credit ⊤ (player 1 wins).
    pub w1: u64,
}

impl Histogram {
    /// Empty bins over `[0, max_credit]`: at most `bins`, each at least one credit wide.
    pub fn new(max_credit: u64, bins: u64) -> Histogram {
        let span = u128::from(max_credit) + 1;
        let width = span.div_ceil(u128::from(bins.max(1))).max(1);
        let count = span.div_ceil(width);
        Histogram {
            width: width as u64,
            counts: vec![0; count as usize],
            w0: 0,
            w1: 0,
        }
    }

    /// Counts one vertex's credit (`u64::MAX` is ⊤).
    pub fn add(&mut self, credit: u64) {
        if credit == u64::MAX {
            self.w1 += 1;
            return;
        }
        self.w0 += 1;
        let bin = ((credit / self.width) as usize).min(self.counts.len() - 1);
        self.counts[bin] += 1;
    }

    /// The JSON view (`from`/`to` inclusive).
    pub fn view(&self, max_credit: u64) -> Value {
        let bins: Vec<Value> = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, &count)| {
                let from = i as u64 * self.width;
                let to = from.saturating_add(self.width - 1).min(max_credit);
                json!({"from": from, "to": to, "count": count})
            })
            .collect();
        json!({"w0": self.w0, "w1": self.w1, "max_credit": max_credit, "bins": bins})
    }
}

/// The handler.
pub async fn credit_histogram(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(params): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    only_params(&params, &["bins"])?;
    let bins = param(
        &params,
        "bins",
        20,
        |s| s.parse().ok().filter(|b| (1..=MAX_BINS).contains(b)),
        "a number of bins from 1 to 200",
    )?;
    let (job, key, summary) = stored_result(&state, &caller, &id, ResultFormat::Json).await?;
    let max_credit = summary.max_credit;
    let credits_computed = summary.credits_computed;
    let path = state.store.result_path(&key);
    let histogram = tokio::task::spawn_blocking(move || {
        let mut histogram = Histogram::new(max_credit, bins);
        result_file::for_each_credit(&path, |c| histogram.add(c)).map(|()| histogram)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
    .map_err(|e| ApiError::Internal(format!("reading the result of job {id}: {e}")))?;
    let mut view = histogram.view(max_credit);
    view["job"] = job.id.to_string().into();
    view["credits_computed"] = credits_computed.into();
    if !credits_computed {
        // The parity solver's answers store 0 for every W0 vertex: winners, no credits.
        view["bins"] = Value::Array(Vec::new());
    }
    Ok(axum::Json(view).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(credits: &[u64], max_credit: u64, bins: u64) -> Histogram {
        let mut h = Histogram::new(max_credit, bins);
        credits.iter().for_each(|&c| h.add(c));
        h
    }

    #[test]
    fn bins_cover_zero_to_the_largest_credit() {
        // credits, max, bins asked → width, counts
        type Case = (&'static [u64], u64, u64, u64, &'static [u64]);
        let cases: &[Case] = &[
            // credits, max, bins asked → width, counts
            (&[0, 0, 1, 2, u64::MAX], 2, 20, 1, &[2, 1, 1]),
            (&[0, 9, 10, 19, 20], 20, 2, 11, &[3, 2]),
            (&[0, 5, 99], 99, 10, 10, &[2, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            (&[0], 0, 1, 1, &[1]),
            (&[u64::MAX - 1, 0], u64::MAX - 1, 4, 1 << 62, &[1, 0, 0, 1]),
        ];
        for &(credits, max, bins, width, counts) in cases {
            let h = histogram(credits, max, bins);
            assert_eq!(
                (h.width, h.counts.as_slice()),
                (width, counts),
                "{credits:?}"
            );
            assert_eq!(h.w0 + h.w1, credits.len() as u64);
        }
    }

    #[test]
    fn the_view_names_inclusive_ranges_and_the_winners() {
        let view = histogram(&[0, 3, 7, u64::MAX], 7, 3).view(7);
        assert_eq!(
            view,
            json!({"w0": 3, "w1": 1, "max_credit": 7, "bins": [
                {"from": 0, "to": 2, "count": 1},
                {"from": 3, "to": 5, "count": 1},
                {"from": 6, "to": 7, "count": 1},
            ]})
        );
    }
}
