//! Uploads in parts from the client's side (the protocol: `POST /v1/uploads`, parts sent
//! with `PUT …/parts/{n}` and their `Content-Digest`, then `POST /v1/jobs` naming the
//! upload; `crates/service/src/parts/mod.rs` and `openapi.yaml` describe it). Parts go over
//! several connections at once; a part whose connection breaks, or that the server got
//! damaged, is sent again, and an upload left half-way (the process stopped) is finished
//! by naming it again (`resume`): only its missing parts are sent.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use reqwest::header;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Client, ClientError, SubmitOptions, checked, submit_query};

/// The media type of a job request naming an upload.
pub const UPLOAD_MEDIA_TYPE: &str = "application/vnd.egsolve.upload+json";
/// Times one part is sent before the upload gives up.
const ATTEMPTS: u32 = 6;

/// How a file is sent in parts.
#[derive(Debug, Clone)]
pub struct PartsPlan {
    /// Bytes per part (the server keeps what it was given when the upload was made).
    pub part_size: u64,
    /// Parts sent at once, each over its own connection.
    pub connections: usize,
    /// Finish this upload instead of making one.
    pub resume: Option<String>,
}

impl Client {
    /// Sends `path` in parts and makes a job of it; `progress` gets the bytes the server
    /// holds so far. Against a server without uploads in parts, a plain upload.
    pub async fn submit_in_parts(
        &self,
        path: &Path,
        options: &SubmitOptions,
        plan: &PartsPlan,
        progress: impl Fn(u64) + Send + Sync + 'static,
    ) -> Result<Value, ClientError> {
        let file = Arc::new(std::fs::File::open(path)?);
        let size = file.metadata()?.len();
        let upload = match &plan.resume {
            Some(id) => {
                self.json(self.request(reqwest::Method::GET, &format!("/v1/uploads/{id}")))
                    .await?
            }
            None => {
                let made = self
                    .json(
                        self.request(reqwest::Method::POST, "/v1/uploads")
                            .json(&serde_json::json!({"size": size, "part_size": plan.part_size})),
                    )
                    .await;
                match made {
                    // An older server: no uploads in parts.
                    Err(ClientError::Problem {
                        status: 404, kind, ..
                    }) if kind.ends_with(":not-found") => {
                        return self.submit(path, options, progress).await;
                    }
                    made => made?,
                }
            }
        };
        let id = upload["id"].as_str().unwrap_or_default().to_string();
        if upload["size"].as_u64() != Some(size) {
            return Err(std::io::Error::other(format!(
                "upload {id} is for a file of {} bytes and {} has {size}: name the upload of this file",
                upload["size"],
                path.display()
            ))
            .into());
        }
        let part_size = upload["part_size"]
            .as_u64()
            .unwrap_or(plan.part_size)
            .max(1);
        let received: Vec<u64> = upload["received"]
            .as_array()
            .map(|parts| parts.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let missing: VecDeque<u64> = (0..size.div_ceil(part_size))
            .filter(|n| !received.contains(n))
            .collect();
        let part_len = move |n: u64| part_size.min(size - n * part_size);
        let held = Arc::new(Mutex::new(
            received.iter().map(|&n| part_len(n)).sum::<u64>(),
        ));
        let progress = Arc::new(progress);
        progress(*held.lock().expect("progress"));
        let queue = Arc::new(Mutex::new(missing));
        let mut senders = tokio::task::JoinSet::<Result<(), ClientError>>::new();
        for _ in 0..plan.connections.max(1) {
            let (client, file, queue, id) = (self.clone(), file.clone(), queue.clone(), id.clone());
            let (held, progress) = (held.clone(), progress.clone());
            senders.spawn(async move {
                loop {
                    let next = queue.lock().expect("queue").pop_front();
                    let Some(number) = next else { return Ok(()) };
                    let len = part_len(number);
                    client
                        .send_part(&id, &file, number, number * part_size, len)
                        .await?;
                    let mut held = held.lock().expect("progress");
                    *held += len;
                    progress(*held);
                }
            });
        }
        while let Some(sent) = senders.join_next().await {
            sent.map_err(|e| std::io::Error::other(e.to_string()))??;
        }
        let request = self
            .request(reqwest::Method::POST, "/v1/jobs")
            .query(&submit_query(options))
            .header(header::CONTENT_TYPE, UPLOAD_MEDIA_TYPE)
            .body(serde_json::json!({ "upload": id }).to_string());
        self.json(request).await
    }

    /// Sends part `number` (`len` bytes of `file` from `offset`), again after a broken
    /// connection, a damaged part or a busy part, up to [`ATTEMPTS`] times.
    async fn send_part(
        &self,
        id: &str,
        file: &Arc<std::fs::File>,
        number: u64,
        offset: u64,
        len: u64,
    ) -> Result<(), ClientError> {
        let file = file.clone();
        let (bytes, digest) = tokio::task::spawn_blocking(move || {
            use std::os::unix::fs::FileExt;
            let mut bytes = vec![0u8; usize::try_from(len).map_err(std::io::Error::other)?];
            file.read_exact_at(&mut bytes, offset)?;
            let digest = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&bytes));
            Ok::<_, std::io::Error>((bytes::Bytes::from(bytes), digest))
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
        let path = format!("/v1/uploads/{id}/parts/{number}");
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = self
                .request(reqwest::Method::PUT, &path)
                .header(header::CONTENT_TYPE, "application/octet-stream")
                .header("content-digest", format!("sha-256=:{digest}:"))
                .body(bytes.clone())
                .send()
                .await;
            let failure = match sent {
                Ok(response) => match checked(response).await {
                    Ok(_) => return Ok(()),
                    Err(problem) => problem,
                },
                Err(e) => e.into(),
            };
            let again = match &failure {
                ClientError::Http(_) => true,
                ClientError::Problem { status, kind, .. } => {
                    *status >= 500
                        || ["part-in-progress", "part-damaged", "upload-interrupted"]
                            .iter()
                            .any(|k| kind.ends_with(k))
                }
                ClientError::Io(_) => false,
            };
            if !again || attempt >= ATTEMPTS {
                return Err(failure);
            }
            tracing::debug!("part {number} of upload {id}, attempt {attempt}: {failure}");
            tokio::time::sleep(Duration::from_millis(250 << attempt.min(4))).await;
        }
    }
}
