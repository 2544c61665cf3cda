//! What handlers read from a request besides their own body: the caller (from the
//! bearer token), query parameters (parsed by hand, so every mistake is a problem+json
//! answer), a submission's options, the job a caller may see, and a job's full JSON view
//! with its live status. Shared by [`super::api`], [`super::submit`] and [`super::ui`];
//! imports none of them.

use std::collections::HashMap;

use axum::extract::Query;
use axum::http::{HeaderMap, header};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::job::{
    BackendChoice, InputFormat, JobId, JobOptions, JobRecord, JobState, ResultSummary, ReturnKind,
};
use super::result_file::ResultFormat;
use super::scheduler::LiveStatus;
use super::views::job_view;

/// Query parameters as given (parsed by hand so every mistake is a problem+json answer).
pub type Params = Query<HashMap<String, String>>;

/// Rejects parameters this endpoint does not know.
pub fn only_params(params: &HashMap<String, String>, known: &[&str]) -> Result<(), ApiError> {
    match params.keys().find(|k| !known.contains(&k.as_str())) {
        Some(_) => Err(ApiError::InvalidParameter {
            name: "query",
            message: format!(
                "unknown parameter(s) {:?}; this endpoint takes {}",
                params
                    .keys()
                    .filter(|k| !known.contains(&k.as_str()))
                    .collect::<Vec<_>>(),
                known.join(", ")
            ),
        }),
        None => Ok(()),
    }
}

/// Parses `name` with `parse`, or returns `default` if absent.
pub fn param<T>(
    params: &HashMap<String, String>,
    name: &'static str,
    default: T,
    parse: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Result<T, ApiError> {
    match params.get(name) {
        None => Ok(default),
        Some(value) => parse(value).ok_or_else(|| ApiError::InvalidParameter {
            name,
            message: format!("'{value}' is not {expected}"),
        }),
    }
}

/// The `format` of a result (`GET /v1/jobs/{id}/result`, a batch's results): json by
/// default.
pub fn result_format(params: &HashMap<String, String>) -> Result<ResultFormat, ApiError> {
    let expected = "json, text, paritysol or binary";
    param(
        params,
        "format",
        ResultFormat::Json,
        ResultFormat::parse,
        expected,
    )
}

/// A submission's `reuse` (true by default): whether an identical finished job's result
/// may answer it at once. `reuse=false` always solves anew (after an upgrade, to time a
/// solve, or to check a stored answer); the new result is then the one later jobs reuse.
/// Not one of the job's options: it decides only how the job is created.
pub fn reuse_results(params: &HashMap<String, String>) -> Result<bool, ApiError> {
    param(params, "reuse", true, |s| s.parse().ok(), "true or false")
}

/// The submission options from the query string.
pub fn job_options(
    params: &HashMap<String, String>,
    state: &AppState,
) -> Result<JobOptions, ApiError> {
    let config = &state.config;
    only_params(
        params,
        &[
            "backend",
            "priority",
            "time_limit",
            "format",
            "return",
            "credits",
            "reuse",
        ],
    )?;
    let options = JobOptions {
        backend: param(
            params,
            "backend",
            BackendChoice::Auto,
            BackendChoice::parse,
            "auto, gpu, cpu, reference or parity",
        )?,
        priority: param(
            params,
            "priority",
            0,
            |s| s.parse().ok().filter(|p: &i64| p.abs() <= 1000),
            "an integer from -1000 to 1000",
        )?,
        time_limit_secs: param(
            params,
            "time_limit",
            config.default_time_limit_secs,
            |s| {
                s.parse()
                    .ok()
                    .filter(|&t: &u64| t > 0 && t <= config.max_time_limit_secs)
            },
            &format!(
                "a number of seconds from 1 to {}",
                config.max_time_limit_secs
            ),
        )?,
        format: param(
            params,
            "format",
            InputFormat::Auto,
            InputFormat::parse,
            "auto, mpg, gm or json",
        )?,
        return_kind: param(
            params,
            "return",
            ReturnKind::Credits,
            ReturnKind::parse,
            "credits or strategies",
        )?,
        credits: param(
            params,
            "credits",
            false,
            |s| s.parse().ok(),
            "true or false",
        )?,
    };
    if options.backend == BackendChoice::Gpu && !state.scheduler.gpu_jobs_possible() {
        return Err(ApiError::BackendUnavailable(
            "backend=gpu needs a GPU and this server has none: use backend=auto or cpu".into(),
        ));
    }
    Ok(options)
}

/// The caller, from the `Authorization` header.
pub fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let header = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    state
        .auth
        .authenticate(header)
        .ok_or(ApiError::Unauthorized)
}

/// A job the caller may see, or 404 (other users' jobs do not exist for them).
pub async fn visible_job(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<JobRecord, ApiError> {
    let not_found = || ApiError::JobNotFound(id.to_string());
    let job_id = JobId::parse_str(id).map_err(|_| not_found())?;
    match state.store.job(job_id).await? {
        Some(job) if caller.may_access(&job.owner) => Ok(job),
        _ => Err(not_found()),
    }
}

/// The answer of job `id` as the caller may see it, rendered as `format`: the job, its
/// result's key and summary; `409 no-result` before it succeeded, `400` for a rendering the
/// answer has not (text of an answer without credits).
pub async fn stored_result(
    state: &AppState,
    caller: &Caller,
    id: &str,
    format: ResultFormat,
) -> Result<(JobRecord, String, ResultSummary), ApiError> {
    let job = visible_job(state, caller, id).await?;
    let key = match (job.state, &job.result_key) {
        (JobState::Succeeded, Some(key)) => key.clone(),
        _ => {
            return Err(ApiError::NoResult {
                id: id.to_string(),
                state: job.state.name(),
            });
        }
    };
    let summary = state
        .store
        .result_summary(&key)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("the result of job {id} is missing")))?;
    if !format.renders(&summary) {
        return Err(ApiError::InvalidParameter {
            name: "format",
            message: "format=text lists credits, and this parity game was answered by the \
                      parity solver without credits; use format=paritysol (ID WINNER \
                      [STRATEGY];) or json"
                .into(),
        });
    }
    Ok((job, key, summary))
}

/// The JSON view of `job`, with live status and summary filled in.
pub async fn full_view(state: &AppState, job: &JobRecord) -> Result<serde_json::Value, ApiError> {
    let live = match job.state {
        JobState::Queued | JobState::Running => state.scheduler.status(job).await,
        _ => LiveStatus::default(),
    };
    let summary = match (&job.result_key, job.state) {
        (Some(key), JobState::Succeeded) => state.store.result_summary(key).await?,
        _ => None,
    };
    Ok(job_view(job, live, summary.as_ref()))
}
