//! Batches: many small arenas in one request (`POST /v1/batches`), for pipelines that send
//! hundreds of games at once. The body is a tar archive, one arena per regular file; every
//! member goes through the single upload's path (stored content-addressed, parsed, admitted,
//! reused when an identical job finished before) and all the jobs are recorded in **one**
//! transaction, so a batch of hundreds costs one durable commit instead of hundreds, and one
//! HTTP exchange instead of three per game. Its small members are solved before that
//! transaction, while the batch is received ([`inline`]): they are recorded as succeeded,
//! without a trip through the queue. A member that is refused (malformed, too large)
//! gets its problem in the answer; the others run. Every job keeps its batch and its name
//! there, so that `GET /v1/batches/{id}` lists them and `GET /v1/batches/{id}/results`
//! streams their results as they finish, as one tar archive ([`results`]).

pub(super) mod archive;
mod inline;
mod member;
pub(super) mod results;

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio_util::io::{StreamReader, SyncIoBridge};

use super::AppState;
use super::auth::Caller;
use super::error::{ApiError, storage_refusal};
use super::idempotency::Fingerprint;
use super::job::{JobId, JobOptions, JobRecord, JobState};
use super::preparse::{ParseRequest, read_options};
use super::request::{caller, full_view, job_options, reuse_results};
use super::result_file::ResultFormat;
use super::storage;
use super::store::claim::Success;
use super::store::{BatchStart, NewJob, Reuse};
use super::submit::{self, Admitted};
use super::upload::{self, Encoding, StoredArena, UploadError, UploadTarget};
use member::Member;

/// The media type of a batch body (and of its results).
pub const MEDIA_TYPE: &str = "application/x-tar";

/// One member's outcome before the jobs are recorded.
enum Outcome {
    /// Queued (with what admission found) or answered from an identical finished job.
    Accepted(Box<Accepted>),
    /// Refused: its problem.
    Refused(ApiError),
}

/// An accepted member: its stored arena, and admission's figures (queued) or the result
/// it reuses; its own answer when it was solved while the batch was received
/// ([`inline`]).
struct Accepted {
    stored: StoredArena,
    admitted: Option<Admitted>,
    reuse: Option<(String, super::job::ResultSummary)>,
    solved: Option<inline::Answer>,
}

pub(super) async fn submit_batch(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
    body: Body,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    let mut params = params;
    let results =
        match params.remove("results") {
            None => None,
            Some(name) => Some(ResultFormat::parse(&name).ok_or_else(|| {
                ApiError::InvalidParameter {
                    name: "results",
                    message: format!(
                        "'{name}' is not a result format: ask for json, text, paritysol or binary"
                    ),
                }
            })?),
        };
    let options = job_options(&params, &state)?;
    let reuse = reuse_results(&params)?;
    if let Some(kind) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        let media = kind.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case(MEDIA_TYPE)
            && !media.eq_ignore_ascii_case("application/octet-stream")
        {
            return Err(ApiError::MalformedBatch(format!(
                "the body is declared as '{kind}': send a tar archive of arena files as \
                 {MEDIA_TYPE} (e.g. `tar -cf - *.pg | curl --data-binary @- -H \
                 'Content-Type: {MEDIA_TYPE}' …`)"
            )));
        }
    }
    let encoding_header = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok());
    let encoding = Encoding::from_header(encoding_header)
        .ok_or_else(|| ApiError::UnsupportedEncoding(encoding_header.unwrap_or("").to_string()))?;
    let config = &state.config;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Err(e) = storage::check_room(
        &state.store.tmp_dir(),
        declared.unwrap_or(0),
        config.storage_reserve_bytes,
    ) {
        upload::drain(body).await;
        return Err(storage_refusal(&state, UploadError::InsufficientStorage(e)));
    }
    let (guard, replay) = submit::idempotency_claim(&state, &caller.user, &headers)?;
    let start = Instant::now();
    let active = state.store.active_count(&caller.user).await?;
    // Read on a blocking thread, member by member, while the body streams in.
    let to_io: fn(axum::Error) -> std::io::Error = std::io::Error::other;
    let body = SyncIoBridge::new(StreamReader::new(body.into_data_stream().map_err(to_io)));
    // The body's hash identifies a keyed request's body; without a key it is not needed
    // (20 MB of SYNTCOMP games: 10–50 ms on one core).
    let keyed = guard.is_some() || replay.is_some();
    // On its own task: a client that goes away cannot stop the batch half-way.
    let batch = tokio::spawn(async move {
        let room = room_for(&state, active);
        let received = match receive(&state, options, body, encoding, keyed, room).await {
            Ok(received) => received,
            Err((e, rest)) => {
                // Refused mid-body: a client still sending gets to read the answer.
                if let Some(rest) = rest {
                    upload::drain_stream(rest.into_inner().into_inner().into_inner()).await;
                }
                return Err(e);
            }
        };
        let stored = start.elapsed();
        let fingerprint = Fingerprint {
            options,
            arena_hash: received.hash.unwrap_or_default(),
        };
        if let Some((key, batch, first)) = replay {
            member::discard(received.members);
            if first != fingerprint {
                return Err(ApiError::IdempotencyKeyReused(key));
            }
            return replayed(&state, batch, results).await;
        }
        let outcomes =
            admit_members(&state, &options, reuse, received.names, received.members).await;
        let admitted = start.elapsed();
        let batch = JobId::now_v7();
        let answer = record(&state, &caller, &options, batch, outcomes, results).await;
        if let (Ok(_), Some(guard)) = (&answer, guard) {
            guard.complete(batch, fingerprint);
        }
        tracing::info!(
            receive_store_and_solve_ms = stored.as_secs_f64() * 1e3,
            place_and_admit_ms = (admitted - stored).as_secs_f64() * 1e3,
            record_ms = (start.elapsed() - admitted).as_secs_f64() * 1e3,
            "batch submitted"
        );
        answer
    });
    batch.await.map_err(|e| ApiError::Internal(e.to_string()))?
}

/// How many more jobs the caller may have: the per-user limit less its `active` jobs.
fn room_for(state: &AppState, active: u64) -> u64 {
    state.config.per_user_job_limit.saturating_sub(active)
}

/// A batch body read: its members' names and what became of each, in archive order, and the
/// body's hash (for a keyed request).
struct ReadBatch {
    names: Vec<String>,
    members: member::Received<inline::Checked>,
    hash: Option<String>,
}

/// The request body as the batch reads it: its data stream, on a blocking thread.
type BodyReader = SyncIoBridge<
    StreamReader<
        futures::stream::MapErr<axum::body::BodyDataStream, fn(axum::Error) -> std::io::Error>,
        bytes::Bytes,
    >,
>;

/// Reads the batch `body` and stores each member as soon as it has arrived ([`member`]),
/// solving the small ones ([`inline`]); refused as a whole for a bad archive, a body past
/// `max_body_bytes`, or more members than the caller's `room` (with the body's unread rest,
/// to drain).
async fn receive(
    state: &AppState,
    options: JobOptions,
    mut body: BodyReader,
    encoding: Encoding,
    keyed: bool,
    room: u64,
) -> Result<ReadBatch, (ApiError, Option<Box<BodyReader>>)> {
    let target = member_target(state, &options);
    let state = state.clone();
    let read = tokio::task::spawn_blocking(move || {
        let config = &state.config;
        let (max_members, max_bytes) = (config.max_batch_jobs, config.max_body_bytes);
        let tally = RefCell::new(Tally {
            read: 0,
            fault: None,
            hasher: keyed.then(Sha256::new),
        });
        let counted = Counted {
            inner: &mut body,
            limit: max_bytes,
            tally: &tally,
        };
        let mut names = Vec::new();
        let then = |stored: &StoredArena| inline::check_and_solve(&state, &options, stored);
        let members = member::store_as_they_arrive(&target, then, |store| {
            archive::read_members(counted, encoding, max_members, max_bytes, |name, bytes| {
                if names.len() as u64 >= room {
                    return Err(ApiError::TooManyJobs {
                        limit: config.per_user_job_limit,
                    });
                }
                names.push(name);
                store(bytes);
                Ok(())
            })
        });
        let tally = tally.into_inner();
        // A failure of the connection, or a body past the limit, is what the archive's
        // reader then saw.
        if let Some(fault) = tally.fault {
            if let Ok(members) = members {
                member::discard(members);
            }
            return Err((ApiError::Upload(fault), Some(Box::new(body))));
        }
        match members {
            Ok(members) => Ok(ReadBatch {
                names,
                members,
                hash: tally.hasher.map(|h| hex::encode(h.finalize())),
            }),
            Err(e) => Err((e, Some(Box::new(body)))),
        }
    });
    read.await
        .map_err(|e| (ApiError::Internal(e.to_string()), None))?
}

/// What the body's reader has seen: bytes read, the failure that stopped it, the hash so far.
struct Tally {
    read: u64,
    fault: Option<UploadError>,
    hasher: Option<Sha256>,
}

/// The request body as the archive's reader reads it: counted against `limit`, hashed when
/// asked, its failures kept in the tally.
struct Counted<'a, R> {
    inner: R,
    limit: u64,
    tally: &'a RefCell<Tally>,
}

impl<R: std::io::Read> std::io::Read for Counted<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let mut tally = self.tally.borrow_mut();
        let n = self.inner.read(out).inspect_err(|e| {
            if e.kind() != std::io::ErrorKind::Interrupted {
                tally.fault = Some(UploadError::Interrupted(e.to_string()));
            }
        })?;
        tally.read += n as u64;
        if tally.read > self.limit {
            tally.fault = Some(UploadError::TooLarge { limit: self.limit });
            return Err(std::io::Error::other("the body is larger than the limit"));
        }
        if let Some(hasher) = &mut tally.hasher {
            hasher.update(&out[..n]);
        }
        Ok(n)
    }
}

/// The answer to a batch submitted again with its `Idempotency-Key`: the batch the first
/// request made, each job with its state now (refused members are not kept, so they are
/// not listed again).
async fn replayed(
    state: &AppState,
    batch: JobId,
    results: Option<ResultFormat>,
) -> Result<Response, ApiError> {
    let notifications = state.store.subscribe();
    let jobs = state.store.batch_jobs(batch).await?;
    if jobs.is_empty() {
        // The key outlived its batch (expired).
        return Err(ApiError::BatchNotFound(batch.to_string()));
    }
    let entries: Vec<Value> = jobs
        .iter()
        .map(|job| {
            let name = job.batch.as_ref().map(|b| b.name.as_str());
            json!({"name": name, "id": job.id.to_string(), "state": job.state.name()})
        })
        .collect();
    let body =
        json!({"id": batch.to_string(), "accepted": entries.len(), "refused": 0, "jobs": entries});
    let mut response = match results {
        None => answer_202(batch, body),
        Some(format) => {
            let (_, nothing) = results::prerender(Vec::new(), format);
            let ids = jobs.iter().map(|job| job.id).collect();
            let state = state.clone();
            results::answer_with_results(state, batch, &body, nothing, ids, format, notifications)
        }
    };
    response
        .headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
    Ok(response)
}

/// `202` with the batch's answer and its `Location`.
fn answer_202(batch: JobId, body: Value) -> Response {
    let mut response = (StatusCode::ACCEPTED, axum::Json(body)).into_response();
    let location = HeaderValue::from_str(&format!("/v1/batches/{batch}")).expect("ascii");
    response.headers_mut().insert(header::LOCATION, location);
    response
}

/// Where a batch's members are stored, and how they are parsed.
fn member_target(state: &AppState, options: &JobOptions) -> UploadTarget {
    let config = &state.config;
    UploadTarget {
        encoding: Encoding::Sniff,
        max_bytes: config.max_body_bytes,
        tmp_dir: state.store.tmp_dir(),
        arenas_dir: state.store.arenas_dir(),
        parse: (config.inline_parse_bytes > 0).then(|| ParseRequest {
            options: read_options(options.format, config),
            limit: config.inline_parse_bytes,
        }),
        written: None,
        copy_behind: None,
    }
}

/// Places the members' new files, then admits every member (`egb` ones through the single
/// upload's path); with `reuse`, a member an identical finished job answers reuses its
/// result.
async fn admit_members(
    state: &AppState,
    options: &JobOptions,
    reuse: bool,
    names: Vec<String>,
    received: member::Received<inline::Checked>,
) -> Vec<(String, Outcome)> {
    let target = member_target(state, options);
    let placed = tokio::task::spawn_blocking({
        let target = target.clone();
        move || member::place(received, &target)
    })
    .await;
    let placed = match placed {
        Ok(placed) => placed,
        Err(e) => {
            let failed = |name| (name, Outcome::Refused(ApiError::Internal(e.to_string())));
            return names.into_iter().map(failed).collect();
        }
    };
    let answered = placed
        .iter()
        .filter(|m| matches!(m, Member::Done(Ok((_, Some(checked)))) if checked.answer.is_some()))
        .count();
    tracing::debug!(answered, "batch members stored, the small ones solved");
    // The results the members may reuse, in one query (on a failure, each looks its own up).
    let hashes: Vec<&str> = placed
        .iter()
        .filter_map(|m| match m {
            Member::Done(Ok((stored, _))) => Some(stored.hash.as_str()),
            _ => None,
        })
        .collect();
    let reusable = if reuse {
        submit::reusable_results(state, &hashes, options).await.ok()
    } else {
        Some(HashMap::new())
    };
    drop(hashes);
    let reusable = &reusable;
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    futures::stream::iter(names.into_iter().zip(placed))
        .map(|(name, member)| {
            let target = target.clone();
            async move {
                // An `egb` member's arena is stored here: it looks its reusable result up.
                let (stored, checked, looked_up) = match member {
                    Member::Done(Ok((stored, checked))) => {
                        let found = reusable.as_ref().map(|r| r.get(&stored.hash).cloned());
                        (Ok(stored), checked, found)
                    }
                    Member::Done(Err(e)) => (Err(e), None, None),
                    Member::Egb(body) => {
                        let stored = upload::receive(Body::from(body), target).await;
                        // Without reuse, nothing to look up (`Some(None)`: looked, none).
                        (stored, None, (!reuse).then_some(None))
                    }
                };
                let outcome = match admit_member(state, options, stored, checked, looked_up).await {
                    Ok(outcome) => outcome,
                    Err(e) => Outcome::Refused(e),
                };
                (name, outcome)
            }
        })
        .buffered(cores)
        .collect()
        .await
}

/// A stored member's job: answered from an identical finished job, or admitted (queued, or
/// succeeded with its own answer; `checked`: what [`inline`] found, if it looked).
/// `looked_up`: the result it may reuse, when the batch's one query looked (else it looks).
async fn admit_member(
    state: &AppState,
    options: &JobOptions,
    stored: Result<StoredArena, UploadError>,
    checked: Option<inline::Checked>,
    looked_up: Option<Option<(String, super::job::ResultSummary)>>,
) -> Result<Outcome, ApiError> {
    let mut stored = stored.map_err(|e| storage_refusal(state, e))?;
    let reuse = match looked_up {
        Some(found) => found,
        None => submit::reusable_result(state, &stored.hash, options).await?,
    };
    if let Some(reuse) = reuse {
        return Ok(Outcome::Accepted(Box::new(Accepted {
            stored,
            admitted: None,
            reuse: Some(reuse),
            solved: None,
        })));
    }
    let (admission, solved) = checked.map_or((None, None), |c| (Some(c.admitted), c.answer));
    let admitted = submit::admit(
        state,
        &mut stored,
        options.backend,
        admission,
        solved.is_none(),
    )
    .await?;
    Ok(Outcome::Accepted(Box::new(Accepted {
        stored,
        admitted: Some(admitted),
        reuse: None,
        solved,
    })))
}

/// Records the accepted members' jobs in one transaction, queues them and answers `202`
/// (or `400` when no member was accepted); with `results`, answers the results archive
/// instead ([`results::answer_with_results`]), the members solved already rendered while
/// the transaction runs.
async fn record(
    state: &AppState,
    caller: &Caller,
    options: &JobOptions,
    batch: JobId,
    outcomes: Vec<(String, Outcome)>,
    results: Option<ResultFormat>,
) -> Result<Response, ApiError> {
    let ids: Vec<JobId> = outcomes.iter().map(|_| JobId::now_v7()).collect();
    let mut arenas = Vec::new();
    let mut rows = Vec::new();
    for ((name, outcome), &id) in outcomes.iter().zip(&ids) {
        if let Outcome::Accepted(accepted) = outcome {
            let Accepted {
                stored,
                admitted,
                reuse,
                solved,
            } = &**accepted;
            arenas.push((stored.hash.as_str(), stored.bytes));
            let member = Some((batch, name.as_str()));
            let job: NewJob<'_> =
                submit::new_job(id, &caller.user, options, stored, admitted.as_ref(), member);
            let start = match (reuse, solved) {
                (Some((key, summary)), _) => BatchStart::Reused(Reuse { key, summary }),
                (None, Some(answer)) => BatchStart::Solved(Success {
                    result_key: &answer.key,
                    summary: &answer.summary,
                    solve_ms: answer.solve_ms,
                    device: inline::DEVICE,
                }),
                (None, None) => BatchStart::Queued,
            };
            rows.push((job, start));
        }
    }
    let entries: Vec<Value> = outcomes
        .iter()
        .zip(&ids)
        .map(|((name, outcome), id)| match outcome {
            Outcome::Accepted(accepted) => json!({
                "name": name,
                "id": id.to_string(),
                "state": if accepted.answered() { "succeeded" } else { "queued" },
            }),
            Outcome::Refused(e) => json!({"name": name, "error": e.problem()}),
        })
        .collect();
    if rows.is_empty() {
        return Err(ApiError::BatchRefused(entries));
    }
    let follow = results.map(|format| {
        // Subscribed before the commit: nothing that finishes after it is missed.
        let notifications = state.store.subscribe();
        let solved = outcomes
            .iter()
            .zip(&ids)
            .filter_map(|((name, outcome), &id)| {
                let Outcome::Accepted(accepted) = outcome else {
                    return None;
                };
                let answer = accepted.solved.as_ref()?;
                Some(results::Solved {
                    name: name.clone(),
                    id,
                    returns: options.return_kind,
                    summary: answer.summary.clone(),
                    path: state.store.result_path(&answer.key),
                })
            });
        let (rendered_ids, rendered) = results::prerender(solved.collect(), format);
        (format, notifications, rendered_ids, rendered)
    });
    state.store.insert_batch(&arenas, &rows).await?;
    let accepted = rows.len();
    let solved = rows
        .iter()
        .filter(|(_, start)| matches!(start, BatchStart::Solved(_)))
        .count();
    drop(rows);
    for _ in 0..solved {
        state.metrics.count_completion();
    }
    let mut accepted_ids = Vec::with_capacity(accepted);
    for ((_, outcome), id) in outcomes.into_iter().zip(ids) {
        let Outcome::Accepted(accepted) = outcome else {
            continue;
        };
        accepted_ids.push(id);
        if let Accepted {
            stored,
            admitted: Some(admitted),
            reuse: None,
            solved: None,
        } = *accepted
        {
            state
                .scheduler
                .enqueue(admitted.queued(id, options, stored.bytes));
        }
    }
    tracing::info!(%batch, accepted, solved, refused = entries.len() - accepted, "batch accepted");
    let body = json!({
        "id": batch.to_string(),
        "accepted": accepted,
        "refused": entries.len() - accepted,
        "jobs": entries,
    });
    let Some((format, notifications, rendered_ids, rendered)) = follow else {
        return Ok(answer_202(batch, body));
    };
    let rest = accepted_ids
        .into_iter()
        .filter(|id| !rendered_ids.contains(id))
        .collect();
    let state = state.clone();
    Ok(results::answer_with_results(
        state,
        batch,
        &body,
        rendered,
        rest,
        format,
        notifications,
    ))
}

/// The jobs of batch `id` when the caller may see them (every job of a batch has its
/// submitter as owner), else 404.
pub(super) async fn visible_batch(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<(JobId, Vec<JobRecord>), ApiError> {
    let not_found = || ApiError::BatchNotFound(id.to_string());
    let batch = JobId::parse_str(id).map_err(|_| not_found())?;
    let jobs = state.store.batch_jobs(batch).await?;
    match jobs.first() {
        Some(job) if caller.may_access(&job.owner) => Ok((batch, jobs)),
        _ => Err(not_found()),
    }
}

/// `GET /v1/batches/{id}`: every job of the batch (its view, with its name), the count in
/// each state, and whether all have finished.
pub(super) async fn get_batch(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&state, &headers)?;
    let (batch, jobs) = visible_batch(&state, &caller, &id).await?;
    let mut counts: HashMap<&str, usize> = JobState::ALL.iter().map(|s| (s.name(), 0)).collect();
    let mut views = Vec::with_capacity(jobs.len());
    for job in &jobs {
        *counts.entry(job.state.name()).or_default() += 1;
        let mut view = full_view(&state, job).await?;
        view["name"] = job.batch.as_ref().map(|b| b.name.clone()).into();
        views.push(view);
    }
    let finished = jobs.iter().all(|j| j.state.is_finished());
    Ok(axum::Json(json!({
        "id": batch.to_string(),
        "jobs": views,
        "counts": counts,
        "finished": finished,
    }))
    .into_response())
}
