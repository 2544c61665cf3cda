//! `POST /v1/jobs`: authenticate, read options, enforce the per-user limit, stream the body
//! to the content-addressed arena store (see [`super::upload`]), reuse a finished identical
//! result if there is one — parsing it on the way (so a malformed arena is refused with line
//! and column before a job exists, and the worker need not parse) — then record the job and
//! queue it. The answer is
//! `202 Accepted` with `Location: /v1/jobs/{id}` — sent only after the arena is fsynced and
//! the job row committed, so an accepted job survives a crash.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;
use super::job::{BackendChoice, Failure, JobId};
use super::preparse::{ParseTee, PreparsedGame};
use super::request::{caller, full_view, job_options};
use super::slots::QueuedJob;
use super::upload::{self, Encoding, UploadError};
use super::worker::{arena_stats, malformed, memory_estimate, read_options, result_key};
use crate::format::FormatError;

/// Content types that are certainly not a game file (`application/x-www-form-urlencoded` is
/// allowed: it is what `curl --data-binary` sends by default).
const REFUSED_TYPES: &[&str] = &[
    "application/json",
    "multipart/",
    "image/",
    "video/",
    "audio/",
];

pub(super) async fn submit(
    State(state): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    let options = job_options(&params, &state)?;
    if let Some(kind) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        if REFUSED_TYPES
            .iter()
            .any(|t| kind.to_ascii_lowercase().starts_with(t))
        {
            return Err(ApiError::UnsupportedContentType(kind.to_string()));
        }
    }
    let encoding_header = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok());
    let encoding = Encoding::from_header(encoding_header)
        .ok_or_else(|| ApiError::UnsupportedEncoding(encoding_header.unwrap_or("").to_string()))?;
    let limit = state.config.per_user_job_limit;
    if state.store.active_count(&caller.user).await? >= limit {
        return Err(ApiError::TooManyJobs { limit });
    }

    let tee = (state.config.inline_parse_bytes > 0).then(|| {
        ParseTee::start(
            read_options(options.format, &state.config),
            state.config.inline_parse_bytes,
        )
    });
    let mut stored = upload::receive(
        body,
        encoding,
        state.config.max_body_bytes,
        state.store.tmp_dir(),
        state.store.arenas_dir(),
        tee,
    )
    .await
    .map_err(|e| match e {
        UploadError::Parse(e) => format_refusal(e),
        e => ApiError::Upload(e),
    })?;
    state.store.insert_arena(&stored.hash, stored.bytes).await?;
    state.metrics.observe_phase("upload", "any", stored.seconds);
    let id = JobId::now_v7();

    let key = result_key(&stored.hash, options.format, options.backend);
    // An answer without credits (the parity solver's) serves only jobs that leave the
    // choice to the server or ask for the parity solver: an energy backend asked for by
    // name runs (and says why it cannot solve the game).
    let reusable = state.store.reusable_result(&key).await?.filter(|summary| {
        summary.credits_computed
            || matches!(options.backend, BackendChoice::Auto | BackendChoice::Parity)
    });
    if let Some(summary) = reusable {
        state
            .store
            .insert_reused_job(id, &caller.user, &options, &stored.hash, &key, &summary)
            .await?;
        return accepted(&state, id).await;
    }

    let (preparsed, stats) = match stored.parsed.take() {
        Some((game, parse_seconds)) => {
            // The bound is a pass over every edge: off the runtime, like the parse.
            let config = state.config.clone();
            let (game, stats) = tokio::task::spawn_blocking(move || {
                arena_stats(&game.arena, &config).map(|stats| (game, stats))
            })
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?
            .map_err(refusal)?;
            state.metrics.observe_phase("parse", "any", parse_seconds);
            // Kept for the worker only while the budget allows; else it parses again.
            let preparsed = state
                .preparse_budget
                .try_reserve(game.arena.heap_bytes() as u64)
                .map(|r| Arc::new(PreparsedGame::reserved(game, r)));
            (preparsed, Some((stats, parse_seconds * 1e3)))
        }
        None => (None, None),
    };
    let seq = state
        .store
        .insert_job(
            id,
            &caller.user,
            &options,
            &stored.hash,
            stored.seconds * 1e3,
            stats,
        )
        .await?;
    let stats = stats.map(|(s, _)| s);
    let (edges_estimate, memory) = match stats {
        Some(s) => (s.edges, memory_estimate(s.vertices, s.edges)),
        // About 8 bytes of text per edge in both formats.
        None => (
            stored.bytes / 8,
            memory_estimate(stored.bytes / 32, stored.bytes / 8),
        ),
    };
    state.scheduler.enqueue(QueuedJob {
        id,
        seq,
        priority: options.priority,
        backend: options.backend,
        edges_estimate,
        memory_estimate: memory,
        enqueued: Instant::now(),
        preparsed,
    });
    accepted(&state, id).await
}

/// The answer to an arena the parser refused: malformed, with line and column.
fn format_refusal(e: FormatError) -> ApiError {
    let failure = malformed(e);
    match failure.kind.as_str() {
        "internal" => ApiError::Internal(failure.message),
        _ => ApiError::Malformed {
            line: failure.line,
            column: failure.column,
            message: failure.message,
        },
    }
}

/// An arena over a configured limit, or whose bound overflows.
fn refusal(failure: Failure) -> ApiError {
    ApiError::Refused {
        slug: refusal_slug(&failure.kind),
        message: failure.message,
    }
}

fn refusal_slug(kind: &str) -> &'static str {
    match kind {
        "too-large" => "too-large",
        _ => "bound-overflow",
    }
}

async fn accepted(state: &AppState, id: JobId) -> Result<Response, ApiError> {
    let job = state
        .store
        .job(id)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("job {id} vanished after insertion")))?;
    let view = full_view(state, &job).await?;
    let mut response = (StatusCode::ACCEPTED, axum::Json(view)).into_response();
    let location = HeaderValue::from_str(&format!("/v1/jobs/{id}")).expect("ascii");
    response.headers_mut().insert(header::LOCATION, location);
    Ok(response)
}
