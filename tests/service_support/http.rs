//! Plain HTTP calls on the service that the integration tests and the benchmarks (which
//! include this file by path) make alike: submit a job, read a JSON document or a result,
//! run a server in this process; and the benchmarks' latency figures.
#![allow(dead_code)]

use std::time::Duration;

use egsolve_service::{self as service, ServeConfig, ServiceError};
use serde_json::Value;

/// Posts `body` to `{base}/v1/jobs{query}`, asserts `202 Accepted` and returns the job's view.
pub async fn post_job(
    http: &reqwest::Client,
    base: &str,
    query: &str,
    body: impl Into<reqwest::Body>,
) -> Value {
    let reply = http
        .post(format!("{base}/v1/jobs{query}"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 202);
    reply.json().await.unwrap()
}

/// `GET url`, its answer parsed as JSON; any failure panics.
pub async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    http.get(url).send().await.unwrap().json().await.unwrap()
}

/// `GET url`, asserted `200 OK`; returns the body.
pub async fn get_ok(http: &reqwest::Client, url: &str) -> bytes::Bytes {
    let reply = http.get(url).send().await.unwrap();
    assert_eq!(reply.status(), 200);
    reply.bytes().await.unwrap()
}

/// `egsolve_service::run` on a free loopback port in this process, until [`Self::stop`].
pub struct InProcess {
    pub base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), ServiceError>>,
}

impl InProcess {
    /// Starts serving with `config`.
    pub async fn start(config: ServeConfig) -> InProcess {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(service::run(listener, config, async move {
            let _ = stopped.await;
        }));
        InProcess { base, stop, task }
    }

    /// Graceful shutdown; returns how the server ended.
    pub async fn stop(self) -> Result<(), ServiceError> {
        let _ = self.stop.send(());
        self.task.await.unwrap()
    }
}

/// A client that asks for uncompressed answers, as `curl` without `--compressed`.
pub fn uncompressed_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_gzip()
        .no_zstd()
        .build()
        .unwrap()
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// A benchmark record's latency figures: p50, p99 and every latency, in ms, of `sorted`
/// joined to `fields` (an object).
pub fn with_latencies(mut fields: Value, sorted: &[Duration]) -> Value {
    let figures = fields.as_object_mut().expect("an object");
    figures.insert("p50_ms".into(), ms(percentile(sorted, 0.5)).into());
    figures.insert("p99_ms".into(), ms(percentile(sorted, 0.99)).into());
    let all: Vec<f64> = sorted.iter().map(|d| ms(*d)).collect();
    figures.insert("latencies_ms".into(), all.into());
    fields
}
