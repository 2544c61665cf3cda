//! The HTTP API v1 (axum): routes, query parsing and handlers. Handlers never block: they
//! stream uploads to disk on blocking threads, read the store, ask the scheduler actor, and
//! return; solving happens on worker threads. Every error goes through [`ApiError`].
//!
//! The route table [`ROUTES`] is the single list of (method, path) pairs — the web page's
//! ([`super::ui`]) included; the router is built from it and the tests compare it with
//! `openapi.yaml`.

use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use bytes::Bytes;
use serde_json::json;
use tower_http::compression::CompressionLayer;

use super::AppState;
use super::batch;
use super::byte_range;
use super::cluster;
use super::error::ApiError;
use super::export;
use super::job::JobState;
use super::metrics::StorageStage;
use super::parts;
use super::request::{
    Params, caller, full_view, only_params, param, result_format, stored_result, visible_job,
};
use super::result_file::{self, RenderRequest, ResultFormat};
use super::scheduler::LiveStatus;
use super::submit;
use super::ui;
use super::views::{devices_view, listed_job_view, workers_view};

/// Every (method, path) the API serves, as written in `openapi.yaml`.
pub const ROUTES: &[(&str, &str)] = &[
    ("post", "/v1/jobs"),
    ("get", "/v1/jobs"),
    ("get", "/v1/jobs/{id}"),
    ("delete", "/v1/jobs/{id}"),
    ("get", "/v1/jobs/{id}/result"),
    ("get", "/v1/devices"),
    ("get", "/v1/workers"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    ("get", "/v1/jobs/{id}/result/histogram"),
    ("get", "/v1/usage"),
    ("get", "/v1/whoami"),
    ("get", "/"),
    ("get", "/jobs/{id}"),
    ("get", "/ui/{asset}"),
    ("get", "/favicon.ico"),
    ("post", "/v1/batches"),
    ("get", "/v1/batches/{id}"),
    ("get", "/v1/batches/{id}/results"),
    ("post", "/v1/uploads"),
    ("get", "/v1/uploads/{id}"),
    ("delete", "/v1/uploads/{id}"),
    ("put", "/v1/uploads/{id}/parts/{number}"),
    ("post", "/v1/jobs/{id}/result/export"),
];

/// Longest `?wait=` accepted, seconds (a longer one is an invalid parameter).
pub const MAX_WAIT_SECS: u64 = 60;
/// Largest page of `GET /v1/jobs`.
pub const MAX_PAGE: u32 = 500;

/// The router over `state`.
pub fn router(state: AppState) -> Router {
    let mut router = Router::new();
    for &(method, path) in ROUTES {
        router = router.route(path, handler(method, path));
    }
    router
        .fallback(|| async { ApiError::RouteNotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
}

fn handler(method: &str, path: &str) -> MethodRouter<AppState> {
    use axum::routing::{delete, post, put};
    match (method, path) {
        ("post", "/v1/jobs") => post(submit::submit),
        ("get", "/v1/jobs") => get(list_jobs),
        ("get", "/v1/jobs/{id}") => get(get_job),
        ("delete", "/v1/jobs/{id}") => delete(cancel_job),
        ("get", "/v1/jobs/{id}/result") => get(get_result).layer(result_compression()),
        ("get", "/v1/devices") => get(devices),
        ("get", "/v1/workers") => get(workers),
        ("get", "/healthz") => get(|| async { axum::Json(json!({"status": "ok"})) }),
        ("get", "/readyz") => get(readyz),
        ("get", "/metrics") => get(metrics),
        ("get", "/v1/jobs/{id}/result/histogram") => get(ui::histogram::credit_histogram),
        ("get", "/v1/usage") => get(ui::usage::usage),
        ("get", "/v1/whoami") => get(ui::whoami),
        ("get", "/") => get(ui::assets::front_page).layer(CompressionLayer::new()),
        ("get", "/jobs/{id}") => get(ui::assets::job_page).layer(CompressionLayer::new()),
        ("get", "/ui/{asset}") => get(ui::assets::asset).layer(CompressionLayer::new()),
        ("get", "/favicon.ico") => get(ui::assets::favicon),
        ("post", "/v1/batches") => post(batch::submit_batch),
        ("get", "/v1/batches/{id}") => get(batch::get_batch),
        ("get", "/v1/batches/{id}/results") => get(batch::results::batch_results),
        ("post", "/v1/uploads") => post(parts::create_upload),
        ("get", "/v1/uploads/{id}") => get(parts::upload_by_id),
        ("delete", "/v1/uploads/{id}") => delete(parts::upload_by_id),
        ("put", "/v1/uploads/{id}/parts/{number}") => put(parts::put_part),
        ("post", "/v1/jobs/{id}/result/export") => post(export_result),
        _ => unreachable!("every entry of ROUTES has a handler"),
    }
}

/// Results are compressed on the fly for clients that accept it — except the binary
/// format: it is for speed (a single-threaded compressor runs at 150–500 MB/s, so a
/// 3 GB answer of 10^9 edges spent most of its download compressing) and it is served
/// with byte ranges, which must count the bytes as stored.
fn result_compression() -> CompressionLayer<impl tower_http::compression::Predicate> {
    use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
    CompressionLayer::new().compress_when(DefaultPredicate::new().and(
        NotForContentType::const_new(egsolve_core::output::binary::MEDIA_TYPE),
    ))
}

async fn get_job(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(params): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    only_params(&params, &["wait"])?;
    let wait = param(
        &params,
        "wait",
        0,
        |s| s.parse().ok().filter(|&w: &u64| w <= MAX_WAIT_SECS),
        "a number of seconds from 0 to 60",
    )?;
    let wait = Duration::from_secs(wait);
    let mut job = visible_job(&state, &caller, &id).await?;
    if !wait.is_zero() && !job.state.is_finished() {
        let deadline = Instant::now() + wait;
        let mut changes = state.events.subscribe(job.id);
        let initial = job.state;
        // Re-read once after subscribing: a change between the first read and the
        // subscription must not be missed.
        job = visible_job(&state, &caller, &id).await?;
        while job.state == initial {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() { break; }
                }
                _ = tokio::time::sleep_until(deadline.into()) => break,
                // Shutting down: answer now rather than hold the server open.
                _ = state.stopping.cancelled() => break,
            }
            job = visible_job(&state, &caller, &id).await?;
        }
    }
    Ok(axum::Json(full_view(&state, &job).await?).into_response())
}

async fn cancel_job(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    let job = visible_job(&state, &caller, &id).await?;
    if !state.store.cancel(job.id).await? {
        return Err(ApiError::AlreadyFinished(id));
    }
    state.scheduler.cancel(job.id).await;
    state.events.publish(job.id);
    let job = visible_job(&state, &caller, &id).await?;
    Ok(axum::Json(full_view(&state, &job).await?).into_response())
}

async fn list_jobs(
    State(state): State<AppState>,
    Query(params): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    only_params(&params, &["state", "limit", "cursor"])?;
    let filter = param(
        &params,
        "state",
        None,
        |s| s.parse().ok().map(Some),
        "a job state",
    )?;
    let limit = param(
        &params,
        "limit",
        50,
        |s| s.parse().ok().filter(|&l| (1..=MAX_PAGE).contains(&l)),
        "a page size from 1 to 500",
    )?;
    let cursor = param(
        &params,
        "cursor",
        None,
        |s| s.parse().ok().map(Some),
        "a cursor from next_cursor",
    )?;
    let jobs = state
        .store
        .list_jobs(caller.listing_scope(), filter, cursor, limit + 1)
        .await?;
    let more = jobs.len() > limit as usize;
    let page = &jobs[..jobs.len().min(limit as usize)];
    // Succeeded jobs name the renderings of their answer, which depend on its summary.
    let keys: Vec<&str> = page
        .iter()
        .filter(|j| j.state == JobState::Succeeded)
        .filter_map(|j| j.result_key.as_deref())
        .collect();
    let summaries = state.store.result_summaries(&keys).await?;
    // Live jobs carry their queue position or progress, as in `GET /v1/jobs/{id}`.
    let mut views = Vec::with_capacity(page.len());
    for job in page {
        let live = match job.state {
            JobState::Queued | JobState::Running => state.scheduler.status(job).await,
            _ => LiveStatus::default(),
        };
        let summary = job.result_key.as_ref().and_then(|k| summaries.get(k));
        views.push(listed_job_view(job, live, summary));
    }
    let next = if more {
        page.last().map(|j| j.seq.to_string())
    } else {
        None
    };
    Ok(axum::Json(json!({ "jobs": views, "next_cursor": next })).into_response())
}

async fn get_result(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(params): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    only_params(&params, &["format", "vertices"])?;
    let format = result_format(&params)?;
    let vertices = param(
        &params,
        "vertices",
        None,
        parse_vertices,
        "a comma-separated list of vertex ids",
    )?;
    if format == ResultFormat::Binary && vertices.is_some() {
        return Err(ApiError::InvalidParameter {
            name: "vertices",
            message: "format=binary holds every vertex (index the arrays instead); use json, \
                      text or paritysol for a selection"
                .into(),
        });
    }
    let (job, key, summary) = stored_result(&state, &caller, &id, format).await?;
    if let Some(list) = &vertices {
        result_file::check_vertices(list, summary.vertices as u64).map_err(|v| {
            ApiError::InvalidParameter {
                name: "vertices",
                message: format!(
                    "vertex {v} does not exist (the arena has {} vertices)",
                    summary.vertices
                ),
            }
        })?;
    }
    let binary_length = (format == ResultFormat::Binary).then(|| {
        egsolve_core::output::binary::Header {
            n: summary.vertices as u64,
            credits_computed: summary.credits_computed,
        }
        .total_bytes()
    });
    let request = RenderRequest {
        job: job.id,
        format,
        returns: job.options.return_kind,
        vertices,
        summary,
    };
    let path = state.store.local_result(&key).await?;
    if format == ResultFormat::Binary {
        // The stored arrays are the binary form: the mapped file goes out as it is.
        let mapped = tokio::task::spawn_blocking({
            let path = path.clone();
            move || result_file::mapped_binary(&path)
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| ApiError::Internal(format!("cannot read the result of job {id}: {e}")))?;
        if let Some(bytes) = mapped {
            // Ranges (resumed downloads, one array); the tag is the content key.
            let tag = format!("\"{key}\"");
            return Ok(byte_range::respond(
                bytes,
                &headers,
                &tag,
                format.content_type(),
            ));
        }
    }
    let mut chunks = result_file::render(path, request);
    // `poll_fn` over the channel may be polled again after its end (compression does that).
    let stream = futures::stream::poll_fn(move |cx| chunks.poll_recv(cx));
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if let Some(length) = binary_length {
        // Known in advance: a client can size its arrays before the body arrives.
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    Ok(response)
}

fn parse_vertices(s: &str) -> Option<Option<Vec<u64>>> {
    let list: Option<Vec<u64>> = s.split(',').map(|v| v.trim().parse().ok()).collect();
    list.filter(|l| !l.is_empty() && l.len() <= 100_000)
        .map(Some)
}

async fn devices(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    caller(&state, &headers)?;
    let (slots, depth) = state.scheduler.devices().await;
    let view = devices_view(&state.scheduler.gpus, &slots, depth, state.cpu_threads);
    Ok(axum::Json(view).into_response())
}

async fn workers(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    caller(&state, &headers)?;
    // Live: a heartbeat within three periods.
    let stale = cluster::heartbeat_period(state.config.lease_ms).as_millis() as u64 * 3 + 1000;
    let workers = state.store.live_workers(stale).await?;
    let depth = state.store.queue_depth().await?;
    Ok(axum::Json(workers_view(&workers, depth, state.store.engine())).into_response())
}

async fn readyz(State(state): State<AppState>) -> Result<Response, ApiError> {
    if !state.scheduler.is_alive() {
        return Err(ApiError::NotReady(
            "the scheduler is stopped (shutting down)".into(),
        ));
    }
    state
        .store
        .counts_by_state()
        .await
        .map_err(|e| ApiError::NotReady(e.to_string()))?;
    Ok((StatusCode::OK, axum::Json(json!({"status": "ready"}))).into_response())
}

async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let counts = state.store.counts_by_state().await?;
    let text = state.metrics.render(&counts);
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    Ok(response)
}

/// `POST /v1/jobs/{id}/result/export`: `201` with the file's path, format, size and whether
/// it was linked to the store's copy.
async fn export_result(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(params): Params,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    only_params(&params, &[])?;
    if state.export_roots.is_empty() {
        return Err(export::ExportError::Disabled.into());
    }
    if !caller.may_import {
        return Err(export::ExportError::Forbidden.into());
    }
    let request = export::parse_request(&body)?;
    let (job, key, summary) = stored_result(&state, &caller, &id, request.format).await?;
    let stored = state.store.local_result(&key).await?;
    let render = RenderRequest {
        job: job.id,
        format: request.format,
        returns: job.options.return_kind,
        vertices: None,
        summary,
    };
    let targets = state.export_roots.clone();
    let start = Instant::now();
    let (request, placed) = tokio::task::spawn_blocking(move || {
        let placed = export::place(&targets, &request, &stored, &render);
        (request, placed)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    if let Err(export::ExportError::NoSpace(_)) = &placed {
        state
            .metrics
            .count_insufficient_storage(StorageStage::Export);
    }
    let placed = placed?;
    let seconds = start.elapsed().as_secs_f64();
    tracing::info!(job = %job.id, path = %request.path.display(), linked = placed.linked, bytes = placed.bytes, seconds, "result written by reference");
    let answer = json!({
        "job": job.id.to_string(),
        "path": request.path,
        "format": request.format.name(),
        "bytes": placed.bytes,
        "linked": placed.linked,
        "seconds": seconds,
    });
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}
