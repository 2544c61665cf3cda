//! A client of the service's API v1 (reqwest): submit an arena file (streamed, with upload
//! progress, or by reference to a file the server reads itself), read a job (optionally long-polling), fetch a result to a writer, cancel, list
//! jobs, health checks. Problem+json answers become [`ClientError::Problem`] with the
//! server's `type` and detail. The command-line front end is [`cli`].

mod batch;
pub mod cli;
mod file_body;
mod many;
mod parts;
mod ranged;

pub use parts::PartsPlan;

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

/// What can go wrong talking to the service.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No answer (connection refused, timeout, bad URL).
    #[error("cannot reach the server: {0}")]
    Http(#[from] reqwest::Error),
    /// The server answered with an error.
    #[error("{status}: {detail} ({kind})")]
    Problem {
        /// HTTP status.
        status: u16,
        /// The problem `type`.
        kind: String,
        /// The problem `detail`.
        detail: String,
    },
    /// A local file problem.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Submission options (query parameters of `POST /v1/jobs`); `None` leaves the server default.
#[derive(Debug, Clone, Default)]
pub struct SubmitOptions {
    /// `auto|gpu|cpu|reference`.
    pub backend: Option<String>,
    /// Higher first.
    pub priority: Option<i64>,
    /// Seconds.
    pub time_limit: Option<u64>,
    /// `auto|mpg|gm`.
    pub format: Option<String>,
    /// `credits|strategies`.
    pub returns: Option<String>,
    /// Parity games: also compute the energy reduction's credits (`credits=true`).
    pub credits: bool,
    /// Solve anew even when an identical finished job's result could answer (`reuse=false`).
    pub no_reuse: bool,
}

/// The media type of a by-reference submission (`{"path": …}`).
pub const REFERENCE_MEDIA_TYPE: &str = "application/vnd.egsolve.reference+json";

/// A connection to one server.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Client {
    /// A client for `server` (e.g. `http://127.0.0.1:8080`) with an optional bearer token.
    pub fn new(server: &str, token: Option<String>) -> Result<Client, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()?;
        Ok(Client {
            http,
            base: server.trim_end_matches('/').to_string(),
            token,
        })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    /// Sends a request and decodes a JSON answer, turning problem answers into errors.
    async fn json(&self, request: reqwest::RequestBuilder) -> Result<Value, ClientError> {
        let response = checked(request.send().await?).await?;
        Ok(response.json().await?)
    }

    /// Uploads `path` as a new job; `progress` is called with the bytes sent so far.
    pub async fn submit(
        &self,
        path: &Path,
        options: &SubmitOptions,
        progress: impl Fn(u64) + Send + Sync + 'static,
    ) -> Result<Value, ClientError> {
        let (length, chunks) = file_body::stream(path)?;
        let mut sent = 0u64;
        let stream = chunks.map(move |chunk| {
            if let Ok(bytes) = &chunk {
                sent += bytes.len() as u64;
                progress(sent);
            }
            chunk
        });
        let request = self
            .request(reqwest::Method::POST, "/v1/jobs")
            .query(&submit_query(options))
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .header(header::CONTENT_LENGTH, length)
            .body(reqwest::Body::wrap_stream(stream));
        self.json(request).await
    }

    /// Submits the file at `path` on the server's file system as a new job, by reference:
    /// the server copies it from one of its import roots instead of receiving the bytes.
    pub async fn submit_by_reference(
        &self,
        path: &Path,
        options: &SubmitOptions,
    ) -> Result<Value, ClientError> {
        let body = serde_json::json!({ "path": path });
        let request = self
            .request(reqwest::Method::POST, "/v1/jobs")
            .query(&submit_query(options))
            .header(header::CONTENT_TYPE, REFERENCE_MEDIA_TYPE)
            .body(body.to_string());
        self.json(request).await
    }

    /// Has the server write job `id`'s result as `format` to `path` on its file system
    /// (under one of its export roots), replacing a file of that name as `-o` does: the
    /// server's answer (`path`, `bytes`, `linked`).
    pub async fn export_result(
        &self,
        id: &str,
        path: &Path,
        format: &str,
    ) -> Result<Value, ClientError> {
        let body = serde_json::json!({ "path": path, "format": format, "replace": true });
        let request = self
            .request(
                reqwest::Method::POST,
                &format!("/v1/jobs/{id}/result/export"),
            )
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.json(request).await
    }

    /// A job; with `wait`, answers when its state changes or after that many seconds.
    pub async fn job(&self, id: &str, wait: Option<u64>) -> Result<Value, ClientError> {
        let mut request = self.request(reqwest::Method::GET, &format!("/v1/jobs/{id}"));
        if let Some(wait) = wait {
            request = request.query(&[("wait", wait)]);
        }
        self.json(request).await
    }

    /// Cancels a job.
    pub async fn cancel(&self, id: &str) -> Result<Value, ClientError> {
        self.json(self.request(reqwest::Method::DELETE, &format!("/v1/jobs/{id}")))
            .await
    }

    /// One page of the caller's jobs.
    pub async fn jobs(
        &self,
        state: Option<&str>,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut query: Vec<(&str, String)> = Vec::new();
        if let Some(s) = state {
            query.push(("state", s.to_string()));
        }
        if let Some(l) = limit {
            query.push(("limit", l.to_string()));
        }
        if let Some(c) = cursor {
            query.push(("cursor", c.to_string()));
        }
        self.json(self.request(reqwest::Method::GET, "/v1/jobs").query(&query))
            .await
    }

    /// Streams a job's result into `out`; returns the bytes written. A download the
    /// server can resume (it sent an `ETag`: binary results) that breaks off is resumed
    /// where it stopped, with `Range` and `If-Range`, up to [`RESUMES`] times.
    pub async fn result(
        &self,
        id: &str,
        format: Option<&str>,
        vertices: Option<&str>,
        out: &mut (impl tokio::io::AsyncWrite + Unpin),
    ) -> Result<u64, ClientError> {
        let mut query: Vec<(&str, &str)> = Vec::new();
        if let Some(f) = format {
            query.push(("format", f));
        }
        if let Some(v) = vertices {
            query.push(("vertices", v));
        }
        let path = format!("/v1/jobs/{id}/result");
        let mut written = 0u64;
        let mut tag: Option<header::HeaderValue> = None;
        let mut resumes = 0;
        loop {
            let mut request = self.request(reqwest::Method::GET, &path).query(&query);
            if let (Some(tag), true) = (&tag, written > 0) {
                request = request
                    .header(header::RANGE, format!("bytes={written}-"))
                    .header(header::IF_RANGE, tag.clone());
            }
            let response = match request.send().await {
                Ok(response) => checked(response).await?,
                Err(e) if written > 0 && resumes < RESUMES => {
                    resumes += 1;
                    tokio::time::sleep(resume_delay(resumes)).await;
                    tracing::debug!("resuming the result at byte {written}: {e}");
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if written == 0 {
                tag = response.headers().get(header::ETAG).cloned();
            } else if !resumes_at(&response, written) {
                return Err(ClientError::Problem {
                    status: response.status().as_u16(),
                    kind: "result-changed".into(),
                    detail: format!(
                        "resuming the result of job {id} at byte {written}, the server did not \
                         answer with those bytes; download it again"
                    ),
                });
            }
            let mut stream = response.bytes_stream();
            let broke = loop {
                match stream.next().await {
                    Some(Ok(chunk)) => {
                        out.write_all(&chunk).await?;
                        written += chunk.len() as u64;
                    }
                    Some(Err(e)) => break Some(e),
                    None => break None,
                }
            };
            match broke {
                None => break,
                Some(e) if tag.is_some() && resumes < RESUMES => {
                    resumes += 1;
                    tracing::debug!("the result broke off at byte {written}: {e}; resuming");
                    tokio::time::sleep(resume_delay(resumes)).await;
                }
                Some(e) => return Err(e.into()),
            }
        }
        out.flush().await?;
        Ok(written)
    }

    /// Whether `GET /healthz` answers 200.
    pub async fn healthy(&self) -> bool {
        let request = self
            .http
            .get(format!("{}/healthz", self.base))
            .timeout(Duration::from_secs(5));
        matches!(request.send().await, Ok(r) if r.status().is_success())
    }
}

/// How often [`Client::result`] resumes a broken-off download.
pub const RESUMES: u32 = 5;

/// The pause before the `attempt`th resume: 0.2 s, doubling, at most 3.2 s.
fn resume_delay(attempt: u32) -> Duration {
    Duration::from_millis(200 << attempt.saturating_sub(1).min(4))
}

/// Whether `response` is the rest of a result from byte `at` (`206` whose
/// `Content-Range` starts there).
fn resumes_at(response: &reqwest::Response, at: u64) -> bool {
    response.status() == reqwest::StatusCode::PARTIAL_CONTENT
        && response
            .headers()
            .get(header::CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("bytes "))
            .and_then(|v| v.split_once('-'))
            .is_some_and(|(first, _)| first.parse() == Ok(at))
}

/// The query parameters of a submission.
fn submit_query(options: &SubmitOptions) -> Vec<(&'static str, String)> {
    let mut query: Vec<(&str, String)> = Vec::new();
    if let Some(v) = &options.backend {
        query.push(("backend", v.clone()));
    }
    if let Some(v) = options.priority {
        query.push(("priority", v.to_string()));
    }
    if let Some(v) = options.time_limit {
        query.push(("time_limit", v.to_string()));
    }
    if let Some(v) = &options.format {
        query.push(("format", v.clone()));
    }
    if let Some(v) = &options.returns {
        query.push(("return", v.clone()));
    }
    if options.credits {
        query.push(("credits", "true".into()));
    }
    if options.no_reuse {
        query.push(("reuse", "false".into()));
    }
    query
}

/// Passes successful responses through; turns error answers into [`ClientError::Problem`].
async fn checked(response: reqwest::Response) -> Result<reqwest::Response, ClientError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let text = response.text().await.unwrap_or_default();
    let problem: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    Err(ClientError::Problem {
        status: status.as_u16(),
        kind: problem["type"].as_str().unwrap_or("unknown").to_string(),
        detail: problem["detail"]
            .as_str()
            .map(str::to_string)
            .unwrap_or(text),
    })
}
