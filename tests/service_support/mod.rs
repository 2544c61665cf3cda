//! Shared helpers of the service tests: a real server on 127.0.0.1:0 with a temporary data
//! directory, requests whose every response is validated against `openapi.yaml`, expected
//! answers from `../shared/data`, and generated arenas.
#![allow(dead_code)]

use egsolve_test_support as data;
pub use egsolve_test_support::postgres;

pub mod http;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use egsolve_service::{self as service, ServeConfig};
use reqwest::Method;
use serde_json::Value;

/// The OpenAPI document as JSON.
pub fn spec() -> &'static Value {
    static SPEC: OnceLock<Value> = OnceLock::new();
    SPEC.get_or_init(|| {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml"))
                .expect("openapi.yaml");
        serde_yaml_ng::from_str(&text).expect("openapi.yaml parses")
    })
}

/// The spec's path template matching a concrete path (`{x}` matches one segment).
pub fn template_for(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').collect();
    spec()["paths"]
        .as_object()?
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| t.starts_with('{') || t == s)
        })
        .cloned()
}

fn resolve(value: &Value) -> &Value {
    match value["$ref"].as_str() {
        Some(r) => {
            let pointer = r.trim_start_matches('#');
            resolve(
                spec()
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("dangling $ref {r}")),
            )
        }
        None => value,
    }
}

/// Panics unless the response is described by the spec and its body validates.
pub fn validate(method: &Method, path: &str, status: u16, content_type: Option<&str>, body: &[u8]) {
    let template = template_for(path).unwrap_or_else(|| panic!("{path} is not in openapi.yaml"));
    let operation = &spec()["paths"][&template][method.as_str().to_ascii_lowercase()];
    if status == 405 {
        // Methods the spec does not list: the answer is still a problem document.
        let problem = serde_json::json!({"$ref": "#/components/schemas/Problem", "components": spec()["components"]});
        let instance: Value = serde_json::from_slice(body).expect("405 body is JSON");
        assert!(
            jsonschema::validator_for(&problem)
                .unwrap()
                .is_valid(&instance),
            "{instance}"
        );
        return;
    }
    assert!(
        operation.is_object(),
        "{method} {template} is not in openapi.yaml"
    );
    let responses = &operation["responses"];
    let response = responses
        .get(status.to_string())
        .or_else(|| responses.get("default"));
    let response =
        resolve(response.unwrap_or_else(|| {
            panic!("{method} {template}: status {status} is not in openapi.yaml")
        }));
    let Some(content_type) = content_type else {
        assert!(
            body.is_empty(),
            "{method} {template} {status}: body without Content-Type"
        );
        return;
    };
    let media = content_type.split(';').next().unwrap().trim();
    let schema = &response["content"][media]["schema"];
    assert!(
        schema.is_object(),
        "{method} {template} {status}: media type {media} is not in openapi.yaml"
    );
    if media.ends_with("json") {
        let instance: Value = serde_json::from_slice(body)
            .unwrap_or_else(|e| panic!("{method} {template} {status}: invalid JSON: {e}"));
        let mut schema = schema.clone();
        schema["components"] = spec()["components"].clone();
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {template} {status}: {errors:?}\n{instance}"
        );
    }
}

/// An answer, already validated.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: bytes::Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// Asserts the status and the problem type (the `urn:egsolve:problem:` suffix).
    pub fn assert_problem(&self, status: u16, kind: &str) {
        assert_eq!(
            (self.status, self.problem_type().as_str()),
            (status, kind),
            "{}",
            self.text()
        );
    }

    /// Asserts the status and problem type of the refusal of `what`, and that its detail
    /// says what is wrong and what to do (a colon, no closing full stop).
    pub fn assert_refusal(&self, status: u16, kind: &str, what: &str) {
        assert_eq!(
            (self.status, self.problem_type().as_str()),
            (status, kind),
            "{what}: {}",
            self.text()
        );
        let detail = self.json()["detail"].as_str().unwrap().to_string();
        assert!(
            !detail.ends_with('.') && detail.contains(':'),
            "{what}: {detail}"
        );
    }
    pub fn problem_type(&self) -> String {
        assert_eq!(
            self.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/problem+json"),
            "status {}: {}",
            self.status,
            self.text()
        );
        self.json()["type"]
            .as_str()
            .unwrap()
            .trim_start_matches("urn:egsolve:problem:")
            .to_string()
    }
}

/// Which store a test server runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// The embedded SQLite store in the data directory.
    Sqlite,
    /// A fresh database on the test binary's throwaway PostgreSQL server.
    Postgres,
}

impl Engine {
    /// PostgreSQL when a server runs here; `None` (skip, reason printed) when it cannot
    /// start and `CI` is unset; a panic under `CI`.
    pub fn postgres() -> Option<Engine> {
        postgres::PgServer::shared().map(|_| Engine::Postgres)
    }

    /// Points `config` at this engine (a new database for PostgreSQL).
    pub fn configure(self, config: &mut ServeConfig) {
        if self == Engine::Postgres {
            let server = postgres::PgServer::shared().expect("checked by Engine::postgres");
            config.database = Some(server.create_database());
        }
    }
}

/// Declares each named `async fn CASE(engine: Engine)` as two tests, `sqlite::CASE` and
/// `postgres::CASE`: the same assertions on both stores.
#[macro_export]
macro_rules! on_both_stores {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::service_support::Engine::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(engine) = $crate::service_support::Engine::postgres() else {
                        return;
                    };
                    super::$case(engine).await
                }
            )*
        }
    };
}

/// A running in-process server.
pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    pub dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), service::ServiceError>>>,
}

impl Server {
    // The three starters configure first and then await one non-generic future: an async
    // body generic over the test's closure was compiled once per test (165 copies, a third
    // of this binary's code before; issue 44).

    /// Starts a server with a fresh data directory; `configure` adjusts the settings.
    pub fn start(configure: impl FnOnce(&mut ServeConfig)) -> impl Future<Output = Server> {
        let tmp = tempfile::tempdir().unwrap();
        let config = Server::configured(tmp.path(), configure);
        Server::start_with(tmp.path().to_owned(), config, Some(tmp))
    }

    /// Starts a server on `engine` with a fresh data directory.
    pub fn start_on(
        engine: Engine,
        configure: impl FnOnce(&mut ServeConfig),
    ) -> impl Future<Output = Server> {
        Server::start(move |config| {
            engine.configure(config);
            configure(config);
        })
    }

    /// Starts a server on an existing data directory.
    pub fn start_in(
        dir: &Path,
        configure: impl FnOnce(&mut ServeConfig),
    ) -> impl Future<Output = Server> {
        let config = Server::configured(dir, configure);
        Server::start_with(dir.to_owned(), config, None)
    }

    /// The tests' settings for a server on `dir`, adjusted by `configure`.
    fn configured(dir: &Path, configure: impl FnOnce(&mut ServeConfig)) -> ServeConfig {
        let mut config = ServeConfig::for_tests(dir);
        config.cpu_workers = 2;
        configure(&mut config);
        config
    }

    async fn start_with(
        dir: PathBuf,
        config: ServeConfig,
        tmp: Option<tempfile::TempDir>,
    ) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(service::run(listener, config, async move {
            let _ = stopped.await;
        }));
        let http = reqwest::Client::builder()
            .no_gzip()
            .no_zstd()
            .build()
            .unwrap();
        Server {
            base,
            http,
            dir,
            _tmp: tmp,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Graceful shutdown; returns the data directory's owner so it outlives the server.
    pub async fn stop(mut self) -> Option<tempfile::TempDir> {
        let _ = self.stop.take().unwrap().send(());
        self.task
            .take()
            .unwrap()
            .await
            .unwrap()
            .expect("clean shutdown");
        self._tmp.take()
    }

    /// Sends a request and validates the answer against the spec.
    pub async fn call(
        &self,
        method: Method,
        path_and_query: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Reply {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path_and_query}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("body read");
        let path = path_and_query.split('?').next().unwrap();
        let content_type = headers.get("content-type").and_then(|v| v.to_str().ok());
        let encoded = headers.get("content-encoding").is_some();
        if !encoded {
            validate(&method, path, status, content_type, &body);
        }
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.call(Method::GET, path, token, &[], None).await
    }

    pub async fn delete(&self, path: &str, token: Option<&str>) -> Reply {
        self.call(Method::DELETE, path, token, &[], None).await
    }

    /// GET `path` accepting `encoding` (`accept-encoding`).
    pub async fn get_accepting(&self, path: &str, encoding: &str) -> Reply {
        let header = ("accept-encoding", encoding);
        self.call(Method::GET, path, None, &[header], None).await
    }

    /// POST /v1/jobs with `body`.
    pub async fn submit(&self, body: Vec<u8>, query: &str, token: Option<&str>) -> Reply {
        self.submit_with_headers(body, query, token, &[]).await
    }

    /// POST /v1/jobs with `body` and one request header.
    pub async fn submit_with(&self, body: Vec<u8>, query: &str, header: (&str, &str)) -> Reply {
        self.submit_with_headers(body, query, None, &[header]).await
    }

    /// POST /v1/jobs with `body` and request headers.
    pub async fn submit_with_headers(
        &self,
        body: Vec<u8>,
        query: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let path = format!("/v1/jobs{query}");
        self.call(Method::POST, &path, token, headers, Some(body))
            .await
    }

    /// Submits and returns the job id, asserting 202.
    pub async fn submit_ok(&self, body: Vec<u8>, query: &str, token: Option<&str>) -> String {
        let reply = self.submit(body, query, token).await;
        assert_eq!(reply.status, 202, "{}", reply.text());
        let id = reply.json()["id"].as_str().unwrap().to_string();
        assert_eq!(
            reply.headers["location"].to_str().unwrap(),
            format!("/v1/jobs/{id}")
        );
        id
    }

    /// Long-polls until the job is finished (at most `limit`).
    pub async fn wait_finished(&self, id: &str, token: Option<&str>, limit: Duration) -> Value {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let job = self
                .get(&format!("/v1/jobs/{id}?wait=5"), token)
                .await
                .json();
            if matches!(
                job["state"].as_str(),
                Some("succeeded" | "failed" | "cancelled")
            ) {
                return job;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "job {id} did not finish: {job}"
            );
        }
    }

    /// Submits (asserting 202) and long-polls until the job is finished (at most a
    /// minute): its id and its last view.
    pub async fn submit_finished(&self, body: Vec<u8>, query: &str) -> (String, Value) {
        let id = self.submit_ok(body, query, None).await;
        let job = self.wait_finished(&id, None, Duration::from_secs(60)).await;
        (id, job)
    }

    /// A job the reference solver takes long on (a weight −1 cycle of 200,000 vertices),
    /// submitted and seen running; its id.
    pub async fn submit_blocker(&self) -> String {
        self.submit_running(slow_cycle(200_000), "?backend=reference")
            .await
    }

    /// Submits (asserting 202) and polls until the job runs; its id.
    pub async fn submit_running(&self, body: Vec<u8>, query: &str) -> String {
        let id = self.submit_ok(body, query, None).await;
        self.wait_state(&id, "running", None).await;
        id
    }

    /// Polls until the job reaches `state`.
    pub async fn wait_state(&self, id: &str, state: &str, token: Option<&str>) -> Value {
        for _ in 0..200 {
            let job = self
                .get(&format!("/v1/jobs/{id}?wait=1"), token)
                .await
                .json();
            if job["state"] == state {
                return job;
            }
        }
        panic!("job {id} never reached {state}");
    }
}

/// Field `field` (a number) of every record in the answer document's `vertices`, in order.
pub fn vertex_numbers(doc: &Value, field: &str) -> Vec<u64> {
    doc["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record[field].as_u64().unwrap())
        .collect()
}

/// Path of a shared data file (see `crates/test-support/src/data.rs`).
pub fn data_file(relative: &str) -> PathBuf {
    data::shared_data().join(relative)
}

pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out).unwrap();
    out
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Expected winners (0/1 per vertex) from a `.sol.gz`, or winners and credits from a
/// `.credits.gz` (`None` credit for ⊤).
pub fn expected(path: &Path) -> Vec<(u8, Option<u64>)> {
    let text = String::from_utf8(gunzip(&std::fs::read(path).unwrap())).unwrap();
    let mut rows: Vec<(u64, u8, Option<u64>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_end_matches(';');
        if line.is_empty() || line.starts_with("paritysol") {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let id: u64 = fields[0].parse().unwrap();
        if path.to_string_lossy().ends_with(".credits.gz") {
            let credit = if fields[1] == "T" {
                None
            } else {
                Some(fields[1].parse().unwrap())
            };
            rows.push((id, u8::from(credit.is_none()), credit));
        } else {
            rows.push((id, fields[1].parse().unwrap(), None));
        }
    }
    rows.sort();
    rows.into_iter().map(|(_, w, c)| (w, c)).collect()
}

/// Parses the text result format (`ID CREDIT [STRATEGY]`).
pub fn parse_text_result(text: &str) -> Vec<(u8, Option<u64>)> {
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields[1] == "T" {
                (1, None)
            } else {
                (0, Some(fields[1].parse().unwrap()))
            }
        })
        .collect()
}

/// A cycle of `n` player-0 vertices with weight −1 edges: every vertex climbs to ⊤ one step
/// at a time, about n² lifts for the reference solver — a slow job of tunable length
/// (submit it with `backend=reference`: the accelerated solver finishes it at once).
pub fn slow_cycle(n: u32) -> Vec<u8> {
    let mut out = format!("{};\n", n - 1);
    for v in 0..n {
        out += &format!("{v} MAX {}:-1;\n", (v + 1) % n);
    }
    out.into_bytes()
}

pub use egsolve_test_support::small_arena;

pub type Shared<T> = Arc<T>;

/// Starts the real binary's `egsolve serve` on a free loopback port, one CPU worker, `dir`
/// as its data directory; returns the child and its base URL.
pub fn spawn_server_binary(dir: &Path) -> (std::process::Child, String) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--cpu-workers",
            "1",
            "--data-dir",
        ])
        .arg(dir)
        .env("EGSOLVE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("egsolve binary starts");
    let base = listening_address(&mut child);
    (child, base)
}

/// The base URL a spawned `egsolve serve` prints first on its piped standard output.
pub fn listening_address(child: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("address line, got {line:?}"))
        .to_string()
}
