//! `GET /v1/batches/{id}/results`: every job's result as one tar archive, streamed in the
//! order the jobs finish. An entry is `NAME.EXT` (the member's name, the format's extension:
//! `json`, `txt`, `sol`, `bin`), or `NAME.error.json` for a job that failed or was
//! cancelled, or whose answer has no form in that format. The archive ends once every job
//! of the batch has finished, so a client reads results while later ones still solve.
//!
//! A task follows the store's change notifications: each names a job, and a job of the
//! batch that finished is rendered and sent. Notifications may be lost (a lagging receiver,
//! a database reconnection), so the task also re-reads the whole batch now and then; a job
//! is sent once, whichever way it was found.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};

use super::archive::{self, END};
use super::{MEDIA_TYPE, visible_batch};
use crate::AppState;
use crate::error::ApiError;
use crate::job::{JobId, JobRecord, JobState, ResultSummary, ReturnKind};
use crate::request::{Params, caller, only_params, result_format};
use crate::result_file::{self, RenderRequest, ResultFormat};
use crate::store::StoreEvent;

/// The whole batch is read again this often, whatever the notifications said.
const RESCAN: Duration = Duration::from_secs(1);
/// Rendered entries queued ahead of a slow reader.
const QUEUED_ENTRIES: usize = 8;

type Chunk = Result<Bytes, std::io::Error>;

pub(crate) async fn batch_results(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(params): Params,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    only_params(&params, &["format"])?;
    let format = result_format(&params)?;
    // Subscribed before the first read: nothing that finishes after it is missed.
    let notifications = state.store.subscribe();
    let (batch, jobs) = visible_batch(&state, &caller, &id).await?;
    let (tx, rx) = mpsc::channel::<Chunk>(QUEUED_ENTRIES);
    tokio::spawn(follow(state, batch, jobs, format, notifications, tx));
    Ok(tar_response(rx))
}

/// Bytes per chunk handed to the response at most when entries are joined.
const JOINED_BYTES: usize = 1 << 20;

/// `chunks` with neighbours joined up to [`JOINED_BYTES`]: hundreds of small entries sent one
/// by one cost a wake-up and a write each on both sides (283 entries, 3.6 MB: 37 ms).
fn coalesced(chunks: Vec<Chunk>) -> Vec<Chunk> {
    let mut joined: Vec<Chunk> = Vec::new();
    let mut open: Vec<u8> = Vec::new();
    for chunk in chunks {
        match chunk {
            Ok(bytes) if open.len() + bytes.len() <= JOINED_BYTES => open.extend_from_slice(&bytes),
            other => {
                if !open.is_empty() {
                    joined.push(Ok(Bytes::from(std::mem::take(&mut open))));
                }
                match other {
                    Ok(bytes) if bytes.len() < JOINED_BYTES => open.extend_from_slice(&bytes),
                    other => joined.push(other),
                }
            }
        }
    }
    if !open.is_empty() {
        joined.push(Ok(Bytes::from(open)));
    }
    joined
}

/// A response whose body is the archive `rx` delivers.
fn tar_response(mut rx: mpsc::Receiver<Chunk>) -> Response {
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut response = Body::from_stream(stream).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_TYPE));
    response
}

/// A member solved while its batch was received: its result is on disk before the batch's
/// transaction commits.
pub(super) struct Solved {
    /// The member's name.
    pub name: String,
    /// Its job.
    pub id: JobId,
    /// What its job returns.
    pub returns: ReturnKind,
    /// Its result's summary.
    pub summary: ResultSummary,
    /// Its result file.
    pub path: PathBuf,
}

/// Renders members of `solved`, in order, up to [`GROUP_VERTICES`] vertices in all, on
/// the blocking pool and every core, while the batch's transaction runs: the ids taken, and
/// their entries when done.
pub(super) fn prerender(
    solved: Vec<Solved>,
    format: ResultFormat,
) -> (HashSet<JobId>, tokio::task::JoinHandle<Vec<Chunk>>) {
    let mut vertices = 0u64;
    let taken: Vec<Solved> = solved
        .into_iter()
        .take_while(|member| {
            vertices = vertices.saturating_add(member.summary.vertices as u64);
            vertices <= GROUP_VERTICES
        })
        .collect();
    let ids = taken.iter().map(|member| member.id).collect();
    let rendered = tokio::task::spawn_blocking(move || {
        use rayon::prelude::*;
        taken
            .into_par_iter()
            .map(|member| {
                let prepared = render_request(
                    member.id,
                    member.returns,
                    format,
                    member.summary,
                    member.path,
                );
                named_entry(
                    &member.name,
                    member.id,
                    JobState::Succeeded,
                    format,
                    prepared,
                )
            })
            .collect()
    });
    (ids, rendered)
}

/// The answer to a batch's `POST` that asked for its results (`?results=FORMAT`), `200`: one
/// archive whose first entry, `batch.json`, is the document a `202` would carry, then the
/// entries `rendered` already, then those of the jobs `rest` as they finish (as
/// `GET /v1/batches/{id}/results` streams them; `notifications`: subscribed before the
/// batch was recorded).
pub(super) fn answer_with_results(
    state: AppState,
    batch: JobId,
    answer: &serde_json::Value,
    rendered: tokio::task::JoinHandle<Vec<Chunk>>,
    rest: Vec<JobId>,
    format: ResultFormat,
    notifications: broadcast::Receiver<StoreEvent>,
) -> Response {
    let (tx, rx) = mpsc::channel::<Chunk>(QUEUED_ENTRIES);
    let document = serde_json::to_vec(answer).expect("json");
    tokio::spawn(async move {
        let start = std::time::Instant::now();
        let first = archive::entry("batch.json", &document).map(Bytes::from);
        if tx.send(first).await.is_err() {
            return;
        }
        let rendered = rendered
            .await
            .unwrap_or_else(|e| vec![Err(std::io::Error::other(e.to_string()))]);
        let ms = |at: std::time::Instant| at.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(%batch, entries = rendered.len(), after_commit_ms = ms(start), "batch entries rendered");
        for chunk in coalesced(rendered) {
            if tx.send(chunk).await.is_err() {
                return;
            }
        }
        let jobs = match rest.is_empty() {
            true => Vec::new(),
            false => match reread(&state, batch, &rest).await {
                Ok(jobs) => jobs,
                Err(e) => {
                    let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                    return;
                }
            },
        };
        follow(state, batch, jobs, format, notifications, tx).await;
        tracing::debug!(%batch, after_commit_ms = ms(start), "batch results sent");
    });
    let mut response = tar_response(rx);
    let location = HeaderValue::from_str(&format!("/v1/batches/{batch}")).expect("ascii");
    response.headers_mut().insert(header::LOCATION, location);
    response
}

/// Sends each job's entry as it finishes, then the archive's end. Returns early when the
/// client goes away (the channel closes).
async fn follow(
    state: AppState,
    batch: JobId,
    jobs: Vec<JobRecord>,
    format: ResultFormat,
    mut notifications: broadcast::Receiver<StoreEvent>,
    tx: mpsc::Sender<Chunk>,
) {
    let mut pending: HashMap<JobId, JobRecord> = jobs.into_iter().map(|j| (j.id, j)).collect();
    let mut sent: HashSet<JobId> = HashSet::new();
    let mut finished: Vec<JobRecord> = pending
        .values()
        .filter(|j| j.state.is_finished())
        .cloned()
        .collect();
    let renderers = std::thread::available_parallelism().map_or(2, usize::from);
    loop {
        // In the order they finished; those of one millisecond in the archive's order, so
        // that two reads of a batch's results give the same archive.
        finished.sort_by_key(|j| (j.finished_at, j.seq));
        let fresh: Vec<JobRecord> = finished
            .drain(..)
            .filter(|job| sent.insert(job.id))
            .collect();
        for job in &fresh {
            pending.remove(&job.id);
        }
        // Their summaries in one query, their files found side by side, then rendered in
        // groups, each on the blocking pool's thread and every core (a batch's finished jobs
        // are hundreds of small results: a query each took 0.6 ms each, and a task and a
        // channel each 0.1 ms), and sent in order.
        let keys: Vec<&str> = fresh
            .iter()
            .filter_map(|j| j.result_key.as_deref())
            .collect();
        // On a failure each entry looks its own summary up.
        let mut summaries = state
            .store
            .result_summaries(&keys)
            .await
            .unwrap_or_default();
        let prepared: Vec<(JobRecord, Prepared)> = futures::stream::iter(fresh)
            .map(|job| {
                let state = state.clone();
                let summary = job.result_key.as_ref().and_then(|k| summaries.remove(k));
                async move {
                    let prepared = prepare(&state, &job, format, summary).await;
                    (job, prepared)
                }
            })
            .buffered(renderers)
            .collect()
            .await;
        for group in groups(prepared) {
            let entries = tokio::task::spawn_blocking(move || {
                use rayon::prelude::*;
                group
                    .into_par_iter()
                    .map(|(job, prepared)| entry(&job, format, prepared))
                    .collect::<Vec<Chunk>>()
            })
            .await
            .unwrap_or_else(|e| vec![Err(std::io::Error::other(e.to_string()))]);
            for chunk in coalesced(entries) {
                if tx.send(chunk).await.is_err() {
                    return;
                }
            }
        }
        if pending.is_empty() {
            let _ = tx.send(Ok(Bytes::from_static(&END))).await;
            return;
        }
        let event = tokio::select! {
            event = notifications.recv() => event,
            () = tokio::time::sleep(RESCAN) => Err(broadcast::error::RecvError::Lagged(0)),
            () = tx.closed() => return,
        };
        let changed: Vec<JobId> = match event {
            Ok(StoreEvent::Changed(id) | StoreEvent::Cancelled(id))
                if pending.contains_key(&id) =>
            {
                vec![id]
            }
            Ok(_) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
            // Lagged, or time for a rescan: every pending job.
            Err(broadcast::error::RecvError::Lagged(_)) => pending.keys().copied().collect(),
        };
        match reread(&state, batch, &changed).await {
            Ok(jobs) => finished.extend(jobs.into_iter().filter(|j| j.state.is_finished())),
            Err(e) => {
                let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                return;
            }
        }
    }
}

/// The jobs `ids` of `batch` as stored now (one query for a rescan of many).
async fn reread(state: &AppState, batch: JobId, ids: &[JobId]) -> Result<Vec<JobRecord>, ApiError> {
    if let [id] = ids {
        return Ok(state.store.job(*id).await?.into_iter().collect());
    }
    let wanted: HashSet<&JobId> = ids.iter().collect();
    let jobs = state.store.batch_jobs(batch).await?;
    Ok(jobs
        .into_iter()
        .filter(|j| wanted.contains(&j.id))
        .collect())
}

/// Vertices rendered in one group at most (results held in memory together: about 50 MB
/// of text), unless one result alone is larger.
const GROUP_VERTICES: u64 = 1 << 22;

/// The prepared entries in groups of at most [`GROUP_VERTICES`] vertices, in order.
fn groups(prepared: Vec<(JobRecord, Prepared)>) -> Vec<Vec<(JobRecord, Prepared)>> {
    let mut groups: Vec<Vec<(JobRecord, Prepared)>> = Vec::new();
    let mut vertices = u64::MAX;
    for item in prepared {
        let size = item
            .1
            .as_ref()
            .map_or(0, |(_, request)| request.summary.vertices as u64);
        if vertices.saturating_add(size) > GROUP_VERTICES {
            groups.push(Vec::new());
            vertices = 0;
        }
        vertices += size;
        groups.last_mut().expect("a group was opened").push(item);
    }
    groups
}

/// The finished job's archive entry (blocking): its result, or why there is none.
fn entry(job: &JobRecord, format: ResultFormat, prepared: Prepared) -> Chunk {
    let name = job
        .batch
        .as_ref()
        .map_or_else(|| job.id.to_string(), |b| b.name.clone());
    named_entry(&name, job.id, job.state, format, prepared)
}

/// The entry of member `name` (job `id`, in `state`), blocking.
fn named_entry(
    name: &str,
    id: JobId,
    state: JobState,
    format: ResultFormat,
    prepared: Prepared,
) -> Chunk {
    let rendered = prepared.and_then(|(path, request)| {
        result_file::render_whole(&path, &request)
            .map_err(|e| json!({"type": "internal", "message": e.to_string()}))
    });
    let (name, data) = match rendered {
        Ok(data) => (format!("{name}.{}", extension(format)), data),
        Err(error) => {
            let document = json!({
                "id": id.to_string(),
                "state": state.name(),
                "error": error,
            });
            (
                format!("{name}.error.json"),
                document.to_string().into_bytes(),
            )
        }
    };
    archive::entry(&name, &data).map(Bytes::from)
}

/// The file extension of results in `format`.
pub fn extension(format: ResultFormat) -> &'static str {
    match format {
        ResultFormat::Json => "json",
        ResultFormat::Text => "txt",
        ResultFormat::Paritysol => "sol",
        ResultFormat::Binary => "bin",
    }
}

/// A finished job's result file, local, and how to render it; or the error entry's `error`
/// object.
type Prepared = Result<(PathBuf, RenderRequest), serde_json::Value>;

/// The job's result file (fetched from the database when it is not here) and its render
/// request, or why it has no entry in `format` (`summary`: its result's summary, when read
/// already).
async fn prepare(
    state: &AppState,
    job: &JobRecord,
    format: ResultFormat,
    summary: Option<ResultSummary>,
) -> Prepared {
    let failure = |kind: &str, message: String| json!({"type": kind, "message": message});
    let key = match (job.state, &job.result_key) {
        (JobState::Succeeded, Some(key)) => key.clone(),
        (JobState::Failed, _) => {
            return Err(job.failure.as_ref().map_or_else(
                || failure("internal", "failed without a recorded reason".into()),
                |f| serde_json::to_value(f).expect("json"),
            ));
        }
        (state, _) => {
            return Err(failure(
                state.name(),
                format!("the job was {}", state.name()),
            ));
        }
    };
    let internal = |e: String| failure("internal", e);
    let summary = match summary {
        Some(summary) => summary,
        None => state
            .store
            .result_summary(&key)
            .await
            .map_err(|e| internal(e.to_string()))?
            .ok_or_else(|| internal(format!("the result of job {} is missing", job.id)))?,
    };
    let path = state
        .store
        .local_result(&key)
        .await
        .map_err(|e| internal(e.to_string()))?;
    render_request(job.id, job.options.return_kind, format, summary, path)
}

/// How to render job `id`'s result at `path` in `format`, or why it has no such form.
fn render_request(
    id: JobId,
    returns: ReturnKind,
    format: ResultFormat,
    summary: ResultSummary,
    path: PathBuf,
) -> Prepared {
    if !format.renders(&summary) {
        return Err(json!({
            "type": "format-unavailable",
            "message": format!(
                "this answer has no {} form (a parity answer without credits): ask for \
                 paritysol or json",
                format.name()
            ),
        }));
    }
    let request = RenderRequest {
        job: id,
        format,
        returns,
        vertices: None,
        summary,
    };
    Ok((path, request))
}
