//! `POST /v1/jobs`: authenticate, read options, enforce the per-user limit, stream the body
//! to the content-addressed arena store (see [`super::upload`]), reuse a finished identical
//! result if there is one, parse small arenas at once (so malformed ones are refused with
//! line and column before a job exists), then record the job and queue it. The answer is
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
use super::api::{caller, full_view, job_options};
use super::error::ApiError;
use super::job::{ArenaStats, JobId, JobOptions};
use super::scheduler::QueuedJob;
use super::upload::{self, Encoding};
use super::worker::{
    PreparsedArena, arena_stats, malformed, memory_estimate, read_options, result_key,
};
use crate::format;

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

    let stored = upload::receive(
        body,
        encoding,
        state.config.max_body_bytes,
        state.store.tmp_dir(),
        state.store.arenas_dir(),
    )
    .await?;
    state.store.insert_arena(&stored.hash, stored.bytes).await?;
    state.metrics.observe_phase("upload", "any", stored.seconds);
    let id = JobId::now_v7();

    let key = result_key(&stored.hash, options.format);
    if let Some(summary) = state.store.result_summary(&key).await? {
        if state.store.result_path(&key).exists() {
            state
                .store
                .insert_reused_job(id, &caller.user, &options, &stored.hash, &key, &summary)
                .await?;
            return accepted(&state, id).await;
        }
    }

    let (preparsed, stats) = if stored.bytes <= state.config.inline_parse_bytes {
        let (arena, stats, parse_seconds) = parse_now(&state, &stored.path, options).await?;
        state.metrics.observe_phase("parse", "any", parse_seconds);
        (Some(arena), Some((stats, parse_seconds * 1e3)))
    } else {
        (None, None)
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

/// Parses a small arena on a blocking thread; a malformed or refused arena is the answer.
async fn parse_now(
    state: &AppState,
    path: &std::path::Path,
    options: JobOptions,
) -> Result<(PreparsedArena, ArenaStats, f64), ApiError> {
    let path = path.to_owned();
    let config = state.config.clone();
    let read = read_options(options.format, &config);
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let game = format::read_path(&path, &read).map_err(|e| {
            let failure = malformed(e);
            if failure.kind == "internal" {
                return ApiError::Internal(failure.message);
            }
            ApiError::Malformed {
                line: failure.line,
                column: failure.column,
                message: failure.message,
            }
        })?;
        let stats = arena_stats(&game.arena, &config).map_err(|f| ApiError::Refused {
            slug: refusal_slug(&f.kind),
            message: f.message,
        })?;
        Ok::<_, ApiError>((Arc::new(game), stats, start.elapsed().as_secs_f64()))
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
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
