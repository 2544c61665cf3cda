//! The web page for the people of a lab: the queue, the GPUs and CPU slots, the busy time of
//! the last hour, one's own jobs (everyone's for admins) with live progress, a job page with
//! plots of its result, and a submit form. Plain HTML, CSS and a little JavaScript, embedded
//! in the binary ([`assets`]); the page talks to the JSON API like any client (the bearer
//! token lives in the browser's session storage).
//!
//! Besides the pages this module serves three read-only endpoints the page needs and other
//! clients may use too: `GET /v1/usage` ([`usage`]: what the server is doing, without job ids
//! or owners, so it needs no token), `GET /v1/whoami` and
//! `GET /v1/jobs/{id}/result/histogram` ([`histogram`]). The routes are in
//! [`super::api::ROUTES`]; nothing here changes a job.

pub mod assets;
pub mod histogram;
pub mod usage;

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::AppState;
use super::auth::{Authenticator, Role};
use super::error::ApiError;
use super::request::caller;

/// `GET /v1/whoami`: the caller's user name and role, and whether tokens are checked at all.
/// Without an `Authorization` header (and auth on) the answer is `user: null` — nobody yet —
/// so a page can ask before it has a token; a wrong token is `401` as everywhere.
pub async fn whoami(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let auth = !matches!(state.auth, Authenticator::Off);
    if auth && !headers.contains_key(header::AUTHORIZATION) {
        return Ok(axum::Json(
            json!({"user": null, "role": null, "auth": true, "by_reference": false,
                "results_by_reference": false}),
        )
        .into_response());
    }
    let caller = caller(&state, &headers)?;
    let role = match caller.role {
        Role::Admin => "admin",
        Role::User => "user",
    };
    // Whether this caller may name a file on the server (the page then offers a path), and
    // have results written to one (the job page then offers that).
    let by_reference = caller.may_import && !state.import_roots.is_empty();
    let results_by_reference = caller.may_import && !state.export_roots.is_empty();
    Ok(axum::Json(json!({
        "user": caller.user,
        "role": role,
        "auth": auth,
        "by_reference": by_reference,
        "results_by_reference": results_by_reference,
    }))
    .into_response())
}
