//! The API's one error type and the one place it becomes HTTP: RFC 9457
//! `application/problem+json` with a stable `type` per kind (`urn:egsolve:problem:<slug>`),
//! a title, the status, a detail saying what to do, and extension members where useful
//! (`line`/`column` for malformed arenas, `limit` for size and job limits, `needed_bytes`,
//! `available_bytes` and `setting` for a game too large for the host's memory or a body too
//! large for the store's free disk space).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::admission::{ExceedsMemory, HOST_SETTING};
use super::export::ExportError;
use super::import::ReferenceError;
use super::metrics::StorageStage;
use super::parts::session::PartsError;
use super::preparse::malformed;
use super::storage::NoRoom;
use super::store::StoreError;
use super::upload::UploadError;
use egsolve_core::format::FormatError;

/// The setting that keeps disk space free, named in `507` answers.
pub const STORAGE_SETTING: &str = "storage_reserve_bytes";

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No or a wrong bearer token.
    #[error("a valid bearer token is required: pass 'Authorization: Bearer <token>'")]
    Unauthorized,
    /// No such job (or not the caller's).
    #[error("no job with id {0}")]
    JobNotFound(String),
    /// No such route.
    #[error("no such endpoint: see openapi.yaml for the API")]
    RouteNotFound,
    /// The route exists, the method does not.
    #[error("method not allowed on this endpoint")]
    MethodNotAllowed,
    /// A query parameter is wrong.
    #[error("invalid parameter '{name}': {message}")]
    InvalidParameter { name: &'static str, message: String },
    /// An upload problem.
    #[error(transparent)]
    Upload(#[from] UploadError),
    /// A job by reference refused.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// A result by reference refused or failed.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// An upload in parts refused.
    #[error(transparent)]
    Parts(#[from] PartsError),
    /// `Content-Encoding` names something the server cannot decompress.
    #[error("unsupported Content-Encoding '{0}': send identity, gzip, zstd or bzip2")]
    UnsupportedEncoding(String),
    /// The body is declared as something that is not a game file.
    #[error(
        "unsupported Content-Type '{0}': send the arena file itself (text/plain or application/octet-stream)"
    )]
    UnsupportedContentType(String),
    /// The arena does not parse.
    #[error("malformed arena: {message}")]
    Malformed {
        line: Option<u64>,
        column: Option<u64>,
        message: String,
    },
    /// The arena parses but is refused (too many vertices, bound overflow).
    #[error("{message}")]
    Refused { slug: &'static str, message: String },
    /// The game needs more memory than a job may have here.
    #[error(transparent)]
    ExceedsMemory(ExceedsMemory),
    /// The requested backend cannot run on this server.
    #[error("{0}")]
    BackendUnavailable(String),
    /// The caller has too many queued and running jobs.
    #[error("you have {limit} queued or running jobs, the most allowed: wait for some to finish")]
    TooManyJobs { limit: u64 },
    /// A request with the same `Idempotency-Key` is still being handled.
    #[error(
        "a request with idempotency key '{0}' is still being handled: retry in a second to get its job"
    )]
    IdempotencyKeyInUse(String),
    /// The `Idempotency-Key` was used before for another arena or other options.
    #[error(
        "idempotency key '{0}' was used for a different submission (arena or options): use a new key for a new job"
    )]
    IdempotencyKeyReused(String),
    /// No such batch (or not the caller's).
    #[error("no batch with id {0}")]
    BatchNotFound(String),
    /// The batch body is not a usable archive.
    #[error("malformed batch: {0}")]
    MalformedBatch(String),
    /// No arena of the batch was accepted: each member's problem.
    #[error("no arena of the batch was accepted ({} refused; see members)", .0.len())]
    BatchRefused(Vec<serde_json::Value>),
    /// The job already finished.
    #[error("job {0} already finished and cannot be cancelled")]
    AlreadyFinished(String),
    /// The job has no result (yet, or ever).
    #[error("job {id} has no result: it is {state}")]
    NoResult { id: String, state: &'static str },
    /// Starting up or shutting down.
    #[error("the service is not ready: {0}")]
    NotReady(String),
    /// A server-side failure.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::Internal(e.to_string())
    }
}

impl ApiError {
    /// Status, stable slug and title.
    fn kind(&self) -> (StatusCode, &'static str, &'static str) {
        use StatusCode as S;
        match self {
            ApiError::Unauthorized => (S::UNAUTHORIZED, "unauthorized", "Authentication required"),
            ApiError::JobNotFound(_) => (S::NOT_FOUND, "job-not-found", "Job not found"),
            ApiError::RouteNotFound => (S::NOT_FOUND, "not-found", "Not found"),
            ApiError::MethodNotAllowed => (
                S::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "Method not allowed",
            ),
            ApiError::InvalidParameter { .. } => {
                (S::BAD_REQUEST, "invalid-parameter", "Invalid parameter")
            }
            ApiError::Upload(e) => match e {
                UploadError::TooLarge { .. } => {
                    (S::PAYLOAD_TOO_LARGE, "too-large", "Arena too large")
                }
                UploadError::BadCompression(_) => (
                    S::BAD_REQUEST,
                    "bad-compression",
                    "Body cannot be decompressed",
                ),
                UploadError::WrongContent(_) => (
                    S::UNSUPPORTED_MEDIA_TYPE,
                    "wrong-content",
                    "Body is not a game file",
                ),
                UploadError::Empty => (S::BAD_REQUEST, "empty-body", "Empty body"),
                UploadError::Interrupted(_) => {
                    (S::BAD_REQUEST, "upload-interrupted", "Upload interrupted")
                }
                UploadError::InsufficientStorage(_) => (
                    S::INSUFFICIENT_STORAGE,
                    "insufficient-storage",
                    "Insufficient storage",
                ),
                UploadError::Io(_) => (S::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
                // Submissions map parse failures to `Malformed`/`Refused` first.
                UploadError::Parse(_) => (
                    S::UNPROCESSABLE_ENTITY,
                    "malformed-arena",
                    "Malformed arena",
                ),
            },
            ApiError::Export(e) => match e {
                ExportError::Disabled => (
                    S::FORBIDDEN,
                    "export-disabled",
                    "Results by reference are off",
                ),
                ExportError::Forbidden => (
                    S::FORBIDDEN,
                    "export-forbidden",
                    "Results by reference not allowed",
                ),
                ExportError::Invalid(_) => {
                    (S::BAD_REQUEST, "invalid-export", "Invalid export request")
                }
                ExportError::Outside { .. } | ExportError::Protected { .. } => (
                    S::FORBIDDEN,
                    "outside-export-roots",
                    "Path outside the export roots",
                ),
                ExportError::Exists(_) => (S::CONFLICT, "export-exists", "Export file exists"),
                ExportError::Stored(_) => (S::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
                ExportError::NoDirectory(_) => (
                    S::UNPROCESSABLE_ENTITY,
                    "export-directory-missing",
                    "Export directory missing",
                ),
                ExportError::Unwritable { .. } => (
                    S::UNPROCESSABLE_ENTITY,
                    "export-unwritable",
                    "Export file unwritable",
                ),
                ExportError::NoSpace(_) => (
                    S::INSUFFICIENT_STORAGE,
                    "insufficient-storage",
                    "Insufficient storage",
                ),
            },
            ApiError::Reference(e) => match e {
                ReferenceError::Disabled => {
                    (S::FORBIDDEN, "import-disabled", "Jobs by reference are off")
                }
                ReferenceError::Forbidden => (
                    S::FORBIDDEN,
                    "import-forbidden",
                    "Jobs by reference not allowed",
                ),
                ReferenceError::Invalid(_) => {
                    (S::BAD_REQUEST, "invalid-reference", "Invalid reference")
                }
                ReferenceError::Outside { .. } => (
                    S::FORBIDDEN,
                    "outside-import-roots",
                    "Path outside the import roots",
                ),
                ReferenceError::NotFound(_) => (
                    S::UNPROCESSABLE_ENTITY,
                    "reference-not-found",
                    "Referenced file not found",
                ),
                ReferenceError::NotRegular { .. } => (
                    S::UNPROCESSABLE_ENTITY,
                    "not-a-regular-file",
                    "Not a regular file",
                ),
                ReferenceError::Unreadable { .. } => (
                    S::UNPROCESSABLE_ENTITY,
                    "reference-unreadable",
                    "Referenced file unreadable",
                ),
                ReferenceError::Changed(_) => {
                    (S::CONFLICT, "reference-changed", "Referenced file changed")
                }
            },
            ApiError::Parts(e) => match e {
                PartsError::NotFound(_) => (S::NOT_FOUND, "upload-not-found", "Upload not found"),
                PartsError::Invalid(_) | PartsError::NoSuchPart { .. } => {
                    (S::BAD_REQUEST, "invalid-upload", "Invalid upload request")
                }
                PartsError::Damaged { .. } => (S::BAD_REQUEST, "part-damaged", "Part not received"),
                PartsError::InProgress(_) => {
                    (S::CONFLICT, "part-in-progress", "Part being received")
                }
                PartsError::Conflict(_) => (S::CONFLICT, "part-conflict", "Part received before"),
                PartsError::Closed(_) | PartsError::Used(_) => {
                    (S::CONFLICT, "upload-closed", "Upload closed")
                }
                PartsError::Incomplete { .. } => {
                    (S::CONFLICT, "upload-incomplete", "Upload incomplete")
                }
                PartsError::TooMany { .. } => {
                    (S::TOO_MANY_REQUESTS, "too-many-uploads", "Too many uploads")
                }
                PartsError::Io(_) => (S::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
            },
            ApiError::UnsupportedEncoding(_) => (
                S::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-encoding",
                "Unsupported encoding",
            ),
            ApiError::UnsupportedContentType(_) => (
                S::UNSUPPORTED_MEDIA_TYPE,
                "wrong-content",
                "Body is not a game file",
            ),
            ApiError::Malformed { .. } => (
                S::UNPROCESSABLE_ENTITY,
                "malformed-arena",
                "Malformed arena",
            ),
            ApiError::Refused {
                slug: "too-large", ..
            } => (S::PAYLOAD_TOO_LARGE, "too-large", "Arena too large"),
            ApiError::Refused { slug, .. } => (S::UNPROCESSABLE_ENTITY, slug, "Arena refused"),
            ApiError::ExceedsMemory(_) => (
                S::PAYLOAD_TOO_LARGE,
                "exceeds-memory",
                "Game too large for this server's memory",
            ),
            ApiError::BackendUnavailable(_) => (
                S::UNPROCESSABLE_ENTITY,
                "backend-unavailable",
                "Backend unavailable",
            ),
            ApiError::TooManyJobs { .. } => {
                (S::TOO_MANY_REQUESTS, "too-many-jobs", "Too many jobs")
            }
            ApiError::IdempotencyKeyInUse(_) => (
                S::CONFLICT,
                "idempotency-key-in-use",
                "Idempotency key in use",
            ),
            ApiError::IdempotencyKeyReused(_) => (
                S::UNPROCESSABLE_ENTITY,
                "idempotency-key-reused",
                "Idempotency key reused",
            ),
            ApiError::BatchNotFound(_) => (S::NOT_FOUND, "batch-not-found", "Batch not found"),
            ApiError::MalformedBatch(_) => (S::BAD_REQUEST, "malformed-batch", "Malformed batch"),
            ApiError::BatchRefused(_) => (S::BAD_REQUEST, "batch-refused", "Batch refused"),
            ApiError::AlreadyFinished(_) => (S::CONFLICT, "job-finished", "Job already finished"),
            ApiError::NoResult { .. } => (S::CONFLICT, "no-result", "No result"),
            ApiError::NotReady(_) => (S::SERVICE_UNAVAILABLE, "not-ready", "Not ready"),
            ApiError::Internal(_) => (S::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
        }
    }

    /// The stable `type` URI of this error.
    pub fn type_uri(&self) -> String {
        format!("urn:egsolve:problem:{}", self.kind().1)
    }
}

/// An upload's failure as the answer, counting those for want of disk space.
pub(crate) fn storage_refusal(state: &AppState, e: UploadError) -> ApiError {
    match e {
        UploadError::Parse(e) => format_refusal(e),
        UploadError::InsufficientStorage(no_room) => {
            let stage = match no_room {
                NoRoom::Declared { .. } => StorageStage::Admission,
                NoRoom::Full(_) => StorageStage::Upload,
            };
            state.metrics.count_insufficient_storage(stage);
            ApiError::Upload(UploadError::InsufficientStorage(no_room))
        }
        e => ApiError::Upload(e),
    }
}

/// The answer to an arena the parser refused: malformed, with line and column.
fn format_refusal(e: FormatError) -> ApiError {
    let failure = malformed(e);
    match failure.kind.as_str() {
        "internal" => ApiError::Internal(failure.message),
        _ => ApiError::Malformed {
            line: failure.line,
            column: failure.column,
            message: failure.message,
        },
    }
}

/// Seconds a client is told to wait after a 429.
pub const RETRY_AFTER_SECS: u64 = 5;

impl ApiError {
    /// The problem document (RFC 9457) the answer carries; also a batch member's `error`.
    pub fn problem(&self) -> serde_json::Value {
        let (status, _, title) = self.kind();
        let mut body = serde_json::json!({
            "type": self.type_uri(),
            "title": title,
            "status": status.as_u16(),
            "detail": self.to_string(),
        });
        match self {
            ApiError::Malformed { line, column, .. } => {
                if let (Some(line), Some(column)) = (line, column) {
                    body["line"] = (*line).into();
                    body["column"] = (*column).into();
                }
            }
            ApiError::Upload(UploadError::TooLarge { limit }) | ApiError::TooManyJobs { limit } => {
                body["limit"] = (*limit).into();
            }
            ApiError::Upload(UploadError::InsufficientStorage(NoRoom::Declared {
                needed,
                available,
                ..
            })) => {
                body["needed_bytes"] = (*needed).into();
                body["available_bytes"] = (*available).into();
                body["setting"] = STORAGE_SETTING.into();
            }
            ApiError::ExceedsMemory(e) => {
                body["needed_bytes"] = e.needed.into();
                body["available_bytes"] = e.available.into();
                body["limit"] = e.available.into();
                body["setting"] = HOST_SETTING.into();
            }
            ApiError::Parts(PartsError::Incomplete { missing }) => {
                body["missing"] = missing.clone().into();
            }
            ApiError::Parts(PartsError::TooMany { limit }) => {
                body["limit"] = (*limit).into();
            }
            ApiError::BatchRefused(members) => {
                body["members"] = members.clone().into();
            }
            _ => {}
        }
        body
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.kind().0;
        if status.is_server_error() {
            tracing::error!("{self}");
        }
        let body = self.problem();
        let mut response = (status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        match self {
            ApiError::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::TooManyJobs { .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
            }
            ApiError::IdempotencyKeyInUse(_) | ApiError::Parts(PartsError::InProgress(_)) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(1u64));
            }
            _ => {}
        }
        response
    }
}
