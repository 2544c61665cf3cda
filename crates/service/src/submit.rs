//! `POST /v1/jobs`: authenticate, read options, enforce the per-user limit, refuse a body
//! whose declared size does not fit the store's free disk space (507, see
//! [`super::storage`]), stream the body to the content-addressed arena store (see
//! [`super::upload`]) — or, for a job by reference, copy the file it names there (see
//! [`super::import`]) — reuse a finished identical
//! result if there is one — parsing it on the way (so a malformed arena is refused with line
//! and column before a job exists, and the worker need not parse) — then record the job and
//! queue it. The answer is
//! `202 Accepted` with `Location: /v1/jobs/{id}` — sent only after the arena is fsynced and
//! the job row committed, so an accepted job survives a crash.
//!
//! With an `Idempotency-Key` header a retried submission gets the job its first attempt
//! made (see [`super::idempotency`]). Everything from the job row to the queue runs on its
//! own task, so a client that goes away cannot interrupt it half-way.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::admission::{self, Refused};
use super::error::{ApiError, storage_refusal};
use super::idempotency::{self, Claim, ClaimGuard, Fingerprint};
use super::import::{self, ImportError, ReferenceError};
use super::job::{ArenaStats, BackendChoice, Failure, JobId, JobOptions, ResultSummary};
use super::parts;
use super::preparse::{ParseRequest, PreparsedGame, read_options};
use super::request::{caller, full_view, job_options, reuse_results};
use super::result_file;
use super::slots::QueuedJob;
use super::storage;
use super::store::{NewJob, Reuse};
use super::upload::{self, Encoding, StoredArena, UploadError, UploadTarget};

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
    let reuse = reuse_results(&params)?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let media = content_type.map(|kind| kind.split(';').next().unwrap_or("").trim());
    let by_reference = media.is_some_and(|m| m.eq_ignore_ascii_case(import::MEDIA_TYPE));
    let from_upload = media.is_some_and(|m| m.eq_ignore_ascii_case(parts::MEDIA_TYPE));
    if by_reference {
        if state.import_roots.is_empty() {
            return Err(ReferenceError::Disabled.into());
        }
        if !caller.may_import {
            return Err(ReferenceError::Forbidden.into());
        }
    } else if from_upload {
        // The upload's own checks run below.
    } else if let Some(kind) = content_type {
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
    // A referenced file's (or finished upload's) compression is read from its magic bytes.
    let encoding = if by_reference || from_upload {
        Encoding::Sniff
    } else {
        encoding
    };
    let (guard, replay) = idempotency_claim(&state, &caller.user, &headers)?;
    let limit = state.config.per_user_job_limit;
    if replay.is_none() && state.store.active_count(&caller.user).await? >= limit {
        return Err(ApiError::TooManyJobs { limit });
    }

    // A replayed request's arena was parsed the first time.
    let parse = (state.config.inline_parse_bytes > 0 && replay.is_none()).then(|| ParseRequest {
        options: read_options(options.format, &state.config),
        limit: state.config.inline_parse_bytes,
    });
    let target = UploadTarget {
        encoding,
        max_bytes: state.config.max_body_bytes,
        tmp_dir: state.store.tmp_dir(),
        arenas_dir: state.store.arenas_dir(),
        parse,
        written: None,
        copy_behind: (!state.store.is_shared()).then(|| state.preparse_budget.clone()),
    };
    let stored = if by_reference {
        by_reference_arena(&state, body, target).await?
    } else if from_upload {
        parts::arena_from_upload(&state, &caller.user, body, target).await?
    } else {
        // The body is stored as it comes (compressed if it came so): its declared length is
        // what it takes on disk.
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let reserve = state.config.storage_reserve_bytes;
        if let Err(e) = storage::check_room(&target.tmp_dir, declared.unwrap_or(0), reserve) {
            upload::drain(body).await;
            return Err(storage_refusal(&state, UploadError::InsufficientStorage(e)));
        }
        upload::receive(body, target)
            .await
            .map_err(|e| storage_refusal(&state, e))?
    };
    let store_start = Instant::now();
    state
        .store
        .insert_arena(&stored.hash, stored.bytes, stored.source.as_deref())
        .await?;
    if let Some((key, job, fingerprint)) = replay {
        let asked = Fingerprint {
            options,
            arena_hash: stored.hash,
        };
        if asked != fingerprint {
            return Err(ApiError::IdempotencyKeyReused(key));
        }
        return answer(&state, job, true).await;
    }
    // From here on the job is being created: a client that goes away must not leave a row
    // without a queue entry (or a job without its idempotency record).
    let stored_arena = store_start.elapsed().as_secs_f64();
    let committing = tokio::spawn(commit(
        state,
        caller.user,
        (options, reuse),
        stored,
        guard,
        stored_arena,
    ));
    committing
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
}

/// What an earlier request with the same `Idempotency-Key` made: the key, the job (or
/// batch) id, and what that request was.
pub(super) type Replay = (String, JobId, Fingerprint);

/// A request's `Idempotency-Key` claimed for `user`: the guard of a fresh key (completed
/// once the job, or batch, exists), or what an earlier request with the key made (key, id,
/// fingerprint). No header: neither. A key still in use by a running request is `409`.
pub(super) fn idempotency_claim(
    state: &AppState,
    user: &str,
    headers: &HeaderMap,
) -> Result<(Option<ClaimGuard>, Option<Replay>), ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok((None, None));
    };
    let key = value
        .to_str()
        .ok()
        .filter(|k| idempotency::valid_key(k))
        .ok_or_else(|| ApiError::InvalidParameter {
            name: "Idempotency-Key",
            message: format!(
                "the header must be 1 to {} visible ASCII characters, e.g. a UUID",
                idempotency::MAX_KEY_BYTES
            ),
        })?;
    match state.idempotency.claim(user, key) {
        Claim::Fresh(guard) => Ok((Some(guard), None)),
        Claim::Replay { job, fingerprint } => Ok((None, Some((key.to_string(), job, fingerprint)))),
        Claim::InUse => Err(ApiError::IdempotencyKeyInUse(key.to_string())),
    }
}

/// Records the job (or, with `reuse`, reuses an identical finished one), queues it,
/// completes the idempotency claim and answers `202`.
async fn commit(
    state: AppState,
    owner: String,
    (options, reuse): (JobOptions, bool),
    mut stored: StoredArena,
    guard: Option<ClaimGuard>,
    stored_arena: f64,
) -> Result<Response, ApiError> {
    let commit_start = Instant::now();
    let phases = stored.phases;
    for (phase, seconds) in [
        ("upload", stored.seconds),
        ("receive", phases.receive),
        ("hash", phases.hash),
        ("write", phases.write),
        ("fsync", phases.fsync),
        ("place", phases.place),
    ] {
        state.metrics.observe_phase(phase, "any", seconds);
    }
    let id = JobId::now_v7();
    let complete = |guard: Option<ClaimGuard>, hash: &str| {
        if let Some(guard) = guard {
            guard.complete(
                id,
                Fingerprint {
                    options,
                    arena_hash: hash.to_string(),
                },
            );
        }
    };

    let reusable = if reuse {
        reusable_result(&state, &stored.hash, &options).await?
    } else {
        None
    };
    if let Some((key, summary)) = reusable {
        let job = new_job(id, &owner, &options, &stored, None, None);
        let reuse = Reuse {
            key: &key,
            summary: &summary,
        };
        state.store.insert_reused_job(&job, reuse).await?;
        complete(guard, &stored.hash);
        return answer(&state, id, false).await;
    }

    let admitted = admit(&state, &mut stored, options.backend, None, true).await?;
    let stats_seconds = admitted.stats_seconds;
    let job = new_job(id, &owner, &options, &stored, Some(&admitted), None);
    state.store.insert_job(&job).await?;
    complete(guard, &stored.hash);
    let store_seconds = stored_arena + commit_start.elapsed().as_secs_f64() - stats_seconds;
    state.metrics.observe_phase("store", "any", store_seconds);
    tracing::info!(
        job = %id,
        bytes = stored.bytes,
        receive = phases.receive,
        hash = phases.hash,
        write = phases.write,
        fsync = phases.fsync,
        parse = phases.parse,
        place = phases.place,
        stats = stats_seconds,
        store = store_seconds,
        "accepted"
    );
    state
        .scheduler
        .enqueue(admitted.queued(id, &options, stored.bytes));
    answer(&state, id, false).await
}

/// A finished identical job's result that a job with `options` may take instead of
/// running: its key and summary. An answer without credits (the parity solver's) serves
/// only jobs that ask for the parity solver or leave the choice to the server without
/// asking for credits: an energy backend asked for by name, or `credits=true`, runs (and
/// says why it cannot where the reduction does not fit).
pub(super) async fn reusable_result(
    state: &AppState,
    arena_hash: &str,
    options: &JobOptions,
) -> Result<Option<(String, ResultSummary)>, ApiError> {
    Ok(reusable_results(state, &[arena_hash], options)
        .await?
        .remove(arena_hash))
}

/// [`reusable_result`] of many arenas in one query (a batch's members): by arena hash.
pub(super) async fn reusable_results(
    state: &AppState,
    arena_hashes: &[&str],
    options: &JobOptions,
) -> Result<HashMap<String, (String, ResultSummary)>, ApiError> {
    let keys: Vec<String> = arena_hashes
        .iter()
        .map(|hash| result_file::key(hash, options.format, options.backend))
        .collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let summaries = state.store.reusable_results(&refs).await?;
    Ok(arena_hashes
        .iter()
        .zip(keys)
        .filter_map(|(hash, key)| {
            let summary = summaries.get(&key).filter(|s| answers(s, options))?.clone();
            Some((hash.to_string(), (key, summary)))
        })
        .collect())
}

/// Whether a stored result answers a job with `options`: it has credits, or the job asks
/// for none of them.
fn answers(summary: &ResultSummary, options: &JobOptions) -> bool {
    summary.credits_computed
        || options.backend == BackendChoice::Parity
        || (options.backend == BackendChoice::Auto && !options.credits)
}

/// An upload admitted to the queue: what its job row and queue entry record.
pub(super) struct Admitted {
    /// The parsed game, kept for the worker while the pre-parse budget allows.
    preparsed: Option<Arc<PreparsedGame>>,
    /// The arena's figures and the parse's milliseconds (when the upload parsed it).
    parsed: Option<(ArenaStats, f64)>,
    /// Admission's one GPU estimate: the queue's claims compare it with the devices.
    gpu_memory: u64,
    /// The admission checks' seconds.
    pub(super) stats_seconds: f64,
}

/// Runs admission on the upload's parsed game (off the runtime: the bound is a pass over
/// every edge), or estimates from its size when it was left to the worker to parse.
/// `checked`: admission's figures computed already (a batch member checked before its
/// inline solve); `keep_game`: whether the parsed game is kept for the worker (not for a
/// job answered already).
pub(super) async fn admit(
    state: &AppState,
    stored: &mut StoredArena,
    backend: BackendChoice,
    checked: Option<admission::Admitted>,
    keep_game: bool,
) -> Result<Admitted, ApiError> {
    if let Some((game, _)) = &stored.parsed {
        // The parity solver has nothing to solve in an energy game: refused now, as
        // `backend=gpu` without a GPU is, not failed by the worker (a game left to the
        // worker to parse fails there).
        if backend == BackendChoice::Parity && game.parity.is_none() {
            return Err(ApiError::BackendUnavailable(
                "backend=parity solves parity games (.gm, or JSON with priorities) and this arena is an energy game: use backend=auto, cpu or reference".into(),
            ));
        }
    }
    let Some((game, parse_seconds)) = stored.parsed.take() else {
        return Ok(Admitted {
            preparsed: None,
            parsed: None,
            gpu_memory: admission::gpu_need_unparsed(stored.bytes),
            stats_seconds: 0.0,
        });
    };
    state.metrics.observe_phase("parse", "any", parse_seconds);
    let stats_start = Instant::now();
    let (game, admitted) = match checked {
        Some(admitted) => (game, admitted),
        None => {
            let config = state.config.clone();
            let checked = tokio::task::spawn_blocking(move || {
                admission::admit(&game, &config)
                    .map(|admitted| (game, admitted))
                    .map_err(|refused| match refused {
                        Refused::Memory(e) => ApiError::ExceedsMemory(e),
                        Refused::Other(failure) => refusal(failure),
                    })
            })
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))??;
            state
                .metrics
                .observe_phase("stats", "any", stats_start.elapsed().as_secs_f64());
            checked
        }
    };
    let stats_seconds = stats_start.elapsed().as_secs_f64();
    // Kept for the worker only while the budget allows; else it parses again.
    let preparsed = keep_game
        .then(|| {
            state
                .preparse_budget
                .try_reserve(game.arena.heap_bytes() as u64)
        })
        .flatten()
        .map(|r| Arc::new(PreparsedGame::reserved(game, r)));
    Ok(Admitted {
        preparsed,
        parsed: Some((admitted.stats, parse_seconds * 1e3)),
        gpu_memory: admitted.gpu_memory,
        stats_seconds,
    })
}

impl Admitted {
    /// The scheduler's queue entry of job `id` (`bytes`: the stored arena's size).
    pub(super) fn queued(self, id: JobId, options: &JobOptions, bytes: u64) -> QueuedJob {
        let stats = self.parsed.map(|(s, _)| s);
        QueuedJob {
            id,
            backend: options.backend,
            // About 8 bytes of text per edge in both formats.
            edges_estimate: stats.map_or(bytes / 8, |s| s.edges),
            memory_estimate: self.gpu_memory,
            enqueued: Instant::now(),
            preparsed: self.preparsed,
            parity_answer: stats.is_some_and(|s| s.parity) && !options.credits,
        }
    }
}

/// The row of job `id` for `stored` (`admitted`: none for a job that reuses a result).
pub(super) fn new_job<'a>(
    id: JobId,
    owner: &'a str,
    options: &'a JobOptions,
    stored: &'a StoredArena,
    admitted: Option<&Admitted>,
    member: Option<(JobId, &'a str)>,
) -> NewJob<'a> {
    NewJob {
        id,
        owner,
        options,
        arena_hash: &stored.hash,
        upload_ms: stored.seconds * 1e3,
        parsed: admitted.and_then(|a| a.parsed),
        gpu_memory: admitted.map_or(0, |a| a.gpu_memory),
        member,
    }
}

/// Copies the file a by-reference body names into the store (see [`super::import`]).
async fn by_reference_arena(
    state: &AppState,
    body: Body,
    target: UploadTarget,
) -> Result<StoredArena, ApiError> {
    let request = axum::body::to_bytes(body, import::MAX_REQUEST_BYTES)
        .await
        .map_err(|_| {
            ReferenceError::Invalid(format!(
                "the body must be a JSON object naming the file, at most {} bytes",
                import::MAX_REQUEST_BYTES
            ))
        })?;
    let path = import::parse_request(&request)?;
    let roots = state.import_roots.clone();
    let source = tokio::task::spawn_blocking(move || import::open(&roots, &path))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
    let start = Instant::now();
    let (stored, reflinked) = import::receive(source, target, state.config.storage_reserve_bytes)
        .await
        .map_err(|e| match e {
            ImportError::Reference(e) => ApiError::Reference(e),
            ImportError::Upload(e) => storage_refusal(state, e),
        })?;
    tracing::info!(
        bytes = stored.bytes,
        reflinked,
        seconds = start.elapsed().as_secs_f64(),
        "file named by reference stored (or read into memory, its copy to follow)"
    );
    Ok(stored)
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

/// `202` with the job's view and `Location`; `Idempotent-Replayed: true` when the job was
/// made by an earlier request with the same idempotency key.
async fn answer(state: &AppState, id: JobId, replayed: bool) -> Result<Response, ApiError> {
    let job = match state.store.job(id).await? {
        Some(job) => job,
        // The key outlived its job (expired): say so rather than make another.
        None if replayed => return Err(ApiError::JobNotFound(id.to_string())),
        None => {
            return Err(ApiError::Internal(format!(
                "job {id} vanished after insertion"
            )));
        }
    };
    let view = full_view(state, &job).await?;
    let mut response = (StatusCode::ACCEPTED, axum::Json(view)).into_response();
    let location = HeaderValue::from_str(&format!("/v1/jobs/{id}")).expect("ascii");
    response.headers_mut().insert(header::LOCATION, location);
    if replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(response)
}
