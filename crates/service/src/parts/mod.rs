//! Uploads in parts: a large arena sent over several connections at once, each part
//! checksummed, resumable after a dropped connection (or a restarted server). The
//! protocol, in the manner of S3's multipart uploads:
//!
//! 1. `POST /v1/uploads` `{"size": N, "part_size": P}` makes an upload (`201`, `Location:
//!    /v1/uploads/{id}`): the file is allocated at its size, so a disk that cannot hold it
//!    refuses now (`507`); `size` is bounded by `max_body_bytes`, open uploads per user by
//!    `max_open_uploads`.
//! 2. `PUT /v1/uploads/{id}/parts/{n}` sends part `n` (bytes `n·P ..`, exactly `P` of
//!    them but the last) with `Content-Digest: sha-256=:<base64>:` (RFC 9530), in any
//!    order, over any number of connections. A part counts once its bytes are written,
//!    synced and match the digest; one cut off or damaged counts for nothing and is sent
//!    again. See [`session`] for why nothing is lost or doubled.
//! 3. `GET /v1/uploads/{id}` says which parts arrived: a client that lost connections (or
//!    its own process) sends the rest.
//! 4. `POST /v1/jobs` with a body of media type [`MEDIA_TYPE`], `{"upload": "<id>"}`, and
//!    the usual options makes the job. A compressed file, or text small enough to be
//!    parsed at submission, goes through the single upload's pipeline (content SHA-256,
//!    parse); a plain `egb` file or large text is moved into the store as it is, keyed by
//!    the hash of its parts' hashes ([`session::Session::parts_key`]), so no pass over its bytes is needed before
//!    the job is queued — the worker checks it as it loads it.
//!
//! `DELETE /v1/uploads/{id}` ends an upload; an upload untouched for `upload_ttl_secs` is
//! removed. An upload lives on the host that made it (its files are local).

pub(crate) mod session;

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::AppState;
use super::error::ApiError;
use super::error::storage_refusal;
use super::import;
use super::request::caller;
use super::storage;
use super::upload::{self, Encoding, StoredArena, UploadError, UploadPhases, UploadTarget};
use session::{Finish, NewUpload, PartsError, Session};

/// How long a part's body may pause before the part is given up (and freed for a retry).
const PART_IDLE: std::time::Duration = std::time::Duration::from_secs(30);

/// The media type of a job request naming a finished upload.
pub const MEDIA_TYPE: &str = "application/vnd.egsolve.upload+json";

/// `POST /v1/uploads`.
pub(super) async fn create_upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Request {
        size: u64,
        part_size: Option<u64>,
    }
    let caller = caller(&state, &headers)?;
    let request: Request = serde_json::from_slice(&body).map_err(|e| {
        PartsError::Invalid(format!(
            "the body must be JSON like {{\"size\": 14250000000, \"part_size\": 67108864}} ({e})"
        ))
    })?;
    let part_size = request.part_size.unwrap_or(session::DEFAULT_PART_SIZE);
    if !(session::MIN_PART_SIZE..=session::MAX_PART_SIZE).contains(&part_size) {
        return Err(PartsError::Invalid(format!(
            "part_size must be {} to {} bytes",
            session::MIN_PART_SIZE,
            session::MAX_PART_SIZE
        ))
        .into());
    }
    if request.size == 0 {
        return Err(UploadError::Empty.into());
    }
    let limit = state.config.max_body_bytes;
    if request.size > limit {
        return Err(UploadError::TooLarge { limit }.into());
    }
    if request.size.div_ceil(part_size) > session::MAX_PARTS {
        return Err(PartsError::Invalid(format!(
            "{} bytes in parts of {part_size} make more than {} parts: choose larger parts",
            request.size,
            session::MAX_PARTS
        ))
        .into());
    }
    let reserve = state.config.storage_reserve_bytes;
    let uploads = state.uploads.clone();
    let new_dir = state.config.data_dir.clone();
    let max_open = state.config.max_open_uploads;
    let user = caller.user.clone();
    let made = tokio::task::spawn_blocking(move || {
        storage::check_room(&new_dir, request.size, reserve)
            .map_err(|e| ApiError::Upload(UploadError::InsufficientStorage(e)))?;
        uploads
            .create(&NewUpload {
                owner: &user,
                size: request.size,
                part_size,
                max_open,
            })
            .map_err(|e| match e {
                PartsError::Io(e) if storage::is_full(&e) => ApiError::Upload(
                    UploadError::InsufficientStorage(storage::NoRoom::Full(e.to_string())),
                ),
                e => e.into(),
            })
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    let session = made.map_err(|e| match e {
        ApiError::Upload(e) => storage_refusal(&state, e),
        e => e,
    })?;
    tracing::info!(upload = %session.id, size = session.size, parts = session.parts(), "upload in parts made");
    let mut response = (
        StatusCode::CREATED,
        axum::Json(session.view(ttl_ms(&state))),
    )
        .into_response();
    let location = HeaderValue::from_str(&format!("/v1/uploads/{}", session.id)).expect("ascii");
    response.headers_mut().insert(header::LOCATION, location);
    Ok(response)
}

fn ttl_ms(state: &AppState) -> i64 {
    i64::try_from(state.config.upload_ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX / 2)
}

/// `GET /v1/uploads/{id}` (the upload's view) and `DELETE /v1/uploads/{id}` (removed with
/// its files: `204`).
pub(super) async fn upload_by_id(
    State(state): State<AppState>,
    method: Method,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    if method != Method::DELETE {
        let session = state.uploads.get(&id, &caller.user)?;
        return Ok(axum::Json(session.view(ttl_ms(&state))).into_response());
    }
    let uploads = state.uploads.clone();
    tokio::task::spawn_blocking(move || uploads.remove(&id, &caller.user))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `PUT /v1/uploads/{id}/parts/{number}`.
pub(super) async fn put_part(
    State(state): State<AppState>,
    Path((id, number)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // A refused part is still read (within bounds), so that a client sending it reads
    // the answer instead of a broken connection.
    let claimed = claim_part(&state, &headers, &id, &number);
    let (session, number, digest, slot) = match claimed {
        Ok(claimed) => claimed,
        Err(e) => {
            upload::drain(body).await;
            return Err(e);
        }
    };
    let answer = |number: u64, bytes: u64| {
        axum::Json(serde_json::json!({
            "number": number,
            "bytes": bytes,
            "digest": format!("sha-256=:{}:", base64::engine::general_purpose::STANDARD.encode(digest)),
        }))
        .into_response()
    };
    let Some(slot) = slot else {
        // Received before with these very bytes: a retry whose answer was lost.
        let len = session
            .part_size
            .min(session.size - number * session.part_size);
        upload::drain(body).await;
        return Ok(answer(number, len));
    };
    let len = slot.len;
    let (tx, rx) = mpsc::channel::<Result<Bytes, String>>(64);
    let writing = tokio::task::spawn_blocking(move || {
        let outcome = write_part(slot.file(), slot.offset, len, rx, &digest);
        (slot, outcome)
    });
    let mut stream = body.into_data_stream();
    // A connection that goes quiet without closing must not hold its part for ever.
    loop {
        let Ok(next) = tokio::time::timeout(PART_IDLE, stream.next()).await else {
            let _ = tx
                .send(Err(format!(
                    "no byte arrived for {} s",
                    PART_IDLE.as_secs()
                )))
                .await;
            break;
        };
        let Some(chunk) = next else { break };
        let item = chunk.map_err(|e| e.to_string());
        let failed = item.is_err();
        if tx.send(item).await.is_err() || failed {
            break;
        }
    }
    drop(tx);
    let (slot, outcome) = writing
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    match outcome {
        Ok(()) => {
            let session = session.clone();
            tokio::task::spawn_blocking(move || session.receive_part(slot, &digest))
                .await
                .map_err(|e| ApiError::Internal(e.to_string()))??;
            Ok(answer(number, len))
        }
        Err(PartError::Damaged(reason)) => Err(PartsError::Damaged { number, reason }.into()),
        Err(PartError::Interrupted(reason)) => Err(UploadError::Interrupted(reason).into()),
        Err(PartError::Io(e)) if storage::is_full(&e) => Err(storage_refusal(
            &state,
            UploadError::InsufficientStorage(storage::NoRoom::Full(e.to_string())),
        )),
        Err(PartError::Io(e)) => Err(PartsError::Io(e).into()),
    }
}

/// What [`claim_part`] gives.
type ClaimedPart = (Arc<Session>, u64, [u8; 32], Option<session::PartSlot>);

/// A part request's upload, number and digest, and the part claimed for it (`None`: it
/// was received before with these bytes).
fn claim_part(
    state: &AppState,
    headers: &HeaderMap,
    id: &str,
    number: &str,
) -> Result<ClaimedPart, ApiError> {
    let caller = caller(state, headers)?;
    let session = state.uploads.get(id, &caller.user)?;
    let number: u64 = number.parse().map_err(|_| ApiError::InvalidParameter {
        name: "number",
        message: format!("'{number}' is not a part number (0, 1, 2, …)"),
    })?;
    let digest = content_digest(headers)?;
    let slot = session.begin_part(number, &digest)?;
    Ok((session, number, digest, slot))
}

/// The SHA-256 a part's `Content-Digest` header declares (RFC 9530: `sha-256=:<base64>:`,
/// perhaps among other algorithms).
fn content_digest(headers: &HeaderMap) -> Result<[u8; 32], PartsError> {
    let missing = || {
        PartsError::Invalid(
            "each part needs a 'Content-Digest: sha-256=:<base64 of its SHA-256>:' header".into(),
        )
    };
    let value = headers
        .get("content-digest")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(missing)?;
    let encoded = value
        .split(',')
        .find_map(|member| {
            member
                .trim()
                .strip_prefix("sha-256=:")
                .and_then(|rest| rest.strip_suffix(':'))
        })
        .ok_or_else(missing)?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| PartsError::Invalid(format!("'{encoded}' is not a base64 SHA-256")))
}

enum PartError {
    Damaged(String),
    Interrupted(String),
    Io(std::io::Error),
}

/// Writes a part's chunks at `offset` while hashing them; checks the length and the digest,
/// then syncs.
fn write_part(
    file: &std::fs::File,
    offset: u64,
    len: u64,
    mut rx: mpsc::Receiver<Result<Bytes, String>>,
    digest: &[u8; 32],
) -> Result<(), PartError> {
    use std::os::unix::fs::FileExt;
    let mut hash = Sha256::new();
    let mut written = 0u64;
    while let Some(chunk) = rx.blocking_recv() {
        let chunk = chunk.map_err(PartError::Interrupted)?;
        if written + chunk.len() as u64 > len {
            return Err(PartError::Damaged(format!(
                "it is longer than the part's {len} bytes"
            )));
        }
        hash.update(&chunk);
        file.write_all_at(&chunk, offset + written)
            .map_err(PartError::Io)?;
        written += chunk.len() as u64;
    }
    if written != len {
        return Err(PartError::Damaged(format!(
            "{written} bytes arrived where the part has {len}"
        )));
    }
    if hash.finalize()[..] != digest[..] {
        return Err(PartError::Damaged(
            "its bytes do not match its Content-Digest".into(),
        ));
    }
    file.sync_data().map_err(PartError::Io)
}

/// The arena a job request naming an upload (`{"upload": id}`) is about: the upload's file,
/// moved into the store (see the module's step 4). A file refused as an arena ends its
/// upload.
pub(super) async fn arena_from_upload(
    state: &AppState,
    user: &str,
    body: Body,
    target: UploadTarget,
) -> Result<StoredArena, ApiError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Request {
        upload: String,
    }
    let request = axum::body::to_bytes(body, 64 << 10)
        .await
        .map_err(|e| PartsError::Invalid(e.to_string()))?;
    let request: Request = serde_json::from_slice(&request).map_err(|e| {
        PartsError::Invalid(format!(
            "the body must be JSON like {{\"upload\": \"<id>\"}} ({e})"
        ))
    })?;
    let session = state.uploads.get(&request.upload, user)?;
    let guard = match session.begin_finish()? {
        Finish::Used(hash, bytes) => return Ok(stored(hash, bytes, 0.0)),
        Finish::Ready(guard) => guard,
    };
    let start = Instant::now();
    let data = session.data_path();
    let head = read_head(&data).map_err(PartsError::Io)?;
    let encoding = Encoding::sniff(&head);
    // `egb` is mapped and validated by its worker whatever its size (what a parse at
    // submission would do, after a hash pass of its own); small text is parsed here.
    let egb = head.starts_with(&egsolve_core::format::egb::MAGIC);
    let parsed_at_submission = !egb
        && target
            .parse
            .as_ref()
            .is_some_and(|p| session.size <= p.limit);
    let outcome = if encoding != Encoding::Identity || parsed_at_submission {
        let file = std::fs::File::open(&data).map_err(PartsError::Io)?;
        let target = UploadTarget {
            encoding,
            written: Some(data),
            ..target
        };
        upload::receive(import::file_body(file), target)
            .await
            .map_err(|e| storage_refusal(state, e))
    } else {
        let (key, arenas) = (session.parts_key(), target.arenas_dir.clone());
        let size = session.size;
        tokio::task::spawn_blocking(move || {
            upload::check_text(&head)?;
            upload::place(&data, &arenas.join(&key), false)?;
            Ok::<_, UploadError>(stored(key, size, start.elapsed().as_secs_f64()))
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| storage_refusal(state, e))
    };
    finish(state, &session, guard, outcome).await
}

async fn finish(
    state: &AppState,
    session: &Arc<Session>,
    guard: session::FinishGuard,
    outcome: Result<StoredArena, ApiError>,
) -> Result<StoredArena, ApiError> {
    let session = session.clone();
    let uploads = state.uploads.clone();
    tokio::task::spawn_blocking(move || match outcome {
        Ok(stored) => {
            session
                .used(guard, &stored.hash, stored.bytes)
                .map_err(PartsError::Io)?;
            Ok(stored)
        }
        Err(e) => {
            drop(guard);
            uploads.discard(&session);
            Err(e)
        }
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
}

/// An arena stored without the upload pipeline (nothing parsed at submission).
fn stored(hash: String, bytes: u64, seconds: f64) -> StoredArena {
    StoredArena {
        hash,
        bytes,
        seconds,
        phases: UploadPhases {
            place: seconds,
            ..UploadPhases::default()
        },
        parsed: None,
        source: None,
    }
}

/// The first bytes of `path` (up to 4 KiB): enough to tell compression and text apart.
fn read_head(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)?
        .take(4096)
        .read_to_end(&mut head)?;
    Ok(head)
}
