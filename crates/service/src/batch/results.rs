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
use crate::job::{JobId, JobRecord, JobState, ResultSummary};
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
    let (tx, mut rx) = mpsc::channel::<Chunk>(QUEUED_ENTRIES);
    tokio::spawn(follow(state, batch, jobs, format, notifications, tx));
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut response = Body::from_stream(stream).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_TYPE));
    Ok(response)
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
        finished.sort_by_key(|j| j.finished_at);
        let fresh: Vec<JobRecord> = finished
            .drain(..)
            .filter(|job| sent.insert(job.id))
            .collect();
        for job in &fresh {
            pending.remove(&job.id);
        }
        // Their summaries in one query, then rendered side by side (a batch's finished jobs
        // are hundreds of small results: one after another, with a query each, they took
        // 0.6 ms each), sent in order.
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
        let mut entries = futures::stream::iter(fresh)
            .map(|job| {
                let state = state.clone();
                let summary = job.result_key.as_ref().and_then(|k| summaries.remove(k));
                async move { entry(&state, &job, format, summary).await }
            })
            .buffered(renderers);
        while let Some(chunk) = entries.next().await {
            if tx.send(chunk).await.is_err() {
                return;
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

/// The finished job's archive entry: its result, or why there is none (`summary`: its
/// result's summary, when read already).
async fn entry(
    state: &AppState,
    job: &JobRecord,
    format: ResultFormat,
    summary: Option<ResultSummary>,
) -> Chunk {
    let name = job
        .batch
        .as_ref()
        .map_or_else(|| job.id.to_string(), |b| b.name.clone());
    let (name, data) = match rendered(state, job, format, summary).await {
        Ok(data) => (format!("{name}.{}", extension(format)), data),
        Err(error) => {
            let document = json!({
                "id": job.id.to_string(),
                "state": job.state.name(),
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

/// The job's whole result in `format`, or the error entry's `error` object.
async fn rendered(
    state: &AppState,
    job: &JobRecord,
    format: ResultFormat,
    summary: Option<ResultSummary>,
) -> Result<Vec<u8>, serde_json::Value> {
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
    if !format.renders(&summary) {
        return Err(failure(
            "format-unavailable",
            format!(
                "this answer has no {} form (a parity answer without credits): ask for \
                 paritysol or json",
                format.name()
            ),
        ));
    }
    let path = state
        .store
        .local_result(&key)
        .await
        .map_err(|e| internal(e.to_string()))?;
    if format == ResultFormat::Binary {
        let mapped = tokio::task::spawn_blocking({
            let path = path.clone();
            move || result_file::mapped_binary(&path)
        })
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|e| internal(e.to_string()))?;
        if let Some(bytes) = mapped {
            return Ok(bytes.to_vec());
        }
    }
    let request = RenderRequest {
        job: job.id,
        format,
        returns: job.options.return_kind,
        vertices: None,
        summary,
    };
    let mut chunks = result_file::render(path, request);
    let mut data = Vec::new();
    while let Some(chunk) = chunks.recv().await {
        data.extend_from_slice(&chunk.map_err(|e| internal(e.to_string()))?);
    }
    Ok(data)
}
