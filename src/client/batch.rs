//! Batches, client side: several files sent as one tar archive (`POST /v1/batches`: one
//! request, one commit on the server for all their jobs), with its results streamed in the
//! same exchange (`?results=FORMAT`), each handed over as it arrives.

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use reqwest::header;
use serde_json::{Value, json};

use super::{Client, ClientError, SubmitOptions, checked, submit_query};

/// Threads writing a batch's results at once.
const WRITERS: usize = 4;

/// The media type of batch bodies and results.
pub const MEDIA_TYPE: &str = "application/x-tar";

/// One entry of a batch's results stream.
#[derive(Debug)]
pub enum BatchEntry {
    /// The result of the member `name`.
    Result {
        /// The member's name.
        name: String,
        /// The result in the format asked for.
        data: Vec<u8>,
    },
    /// The member `name`'s job ended without a result: its state and error.
    Failed {
        /// The member's name.
        name: String,
        /// `failed` or `cancelled`.
        state: String,
        /// The error object (`type`, `message`, and `line`/`column` for malformed arenas).
        error: Value,
    },
}

impl Client {
    /// Sends `members` (`(name, file)`) as one batch, the largest files first (the server
    /// starts on each member as it arrives, and the largest bound the batch). The answer
    /// lists each member in that order, by name, with its job id and state, or its `error`;
    /// a batch none of whose members was accepted is answered the same way (with
    /// `accepted: 0`) rather than as an error, so that the caller can report each member's
    /// problem.
    pub async fn submit_batch(
        &self,
        members: Vec<(String, PathBuf)>,
        options: &SubmitOptions,
    ) -> Result<Value, ClientError> {
        let archive = archive_of(members).await?;
        match self.post_batch(archive, options, None).await? {
            Ok(response) => Ok(response.json().await?),
            Err(refused) => Ok(refused),
        }
    }

    /// Sends `members` as [`Client::submit_batch`] does, asking for the results in the
    /// same exchange (`?results=FORMAT`): the server renders the members it solved while
    /// the batch arrived as it records the batch, and streams every result after its
    /// answer. Calls `each` (on a few blocking threads at once) for every entry as it
    /// arrives and returns the batch's answer once every job has ended. A server from
    /// before `?results=` is asked the older way: the batch, then its results stream.
    pub async fn submit_batch_with_results(
        &self,
        members: Vec<(String, PathBuf)>,
        options: &SubmitOptions,
        format: &str,
        each: impl Fn(BatchEntry) -> std::io::Result<()> + Send + Sync + 'static,
    ) -> Result<Value, ClientError> {
        // Whether the server takes `results` is asked while the files are read, so that
        // a server from before it never receives the batch only to refuse it (it answers
        // before reading the body, and a large body unread can reset the connection).
        let (archive, takes_results) = tokio::join!(archive_of(members), self.takes_results());
        let (archive, takes_results) = (archive?, takes_results?);
        let results = takes_results.then_some(format);
        let response = match self.post_batch(archive, options, results).await? {
            Ok(response) => response,
            Err(refused) => return Ok(refused),
        };
        if takes_results {
            let answer = read_entries(response, format, true, each).await?;
            return Ok(answer.expect("the first entry is the answer"));
        }
        let answer: Value = response.json().await?;
        if let Some(id) = answer["id"].as_str() {
            let path = format!("/v1/batches/{id}/results");
            let request = self
                .request(reqwest::Method::GET, &path)
                .query(&[("format", format)]);
            let response = checked(request.send().await?).await?;
            read_entries(response, format, false, each).await?;
        }
        Ok(answer)
    }

    /// Whether the server answers a batch's `POST` with its results (`?results=`), asked
    /// with an empty archive: a server that takes the parameter refuses that as a
    /// malformed batch, one from before it refuses the unknown parameter; neither makes
    /// anything.
    async fn takes_results(&self) -> Result<bool, ClientError> {
        let response = self
            .request(reqwest::Method::POST, "/v1/batches")
            .query(&[("results", "json")])
            .header(header::CONTENT_TYPE, MEDIA_TYPE)
            .body(Vec::new())
            .send()
            .await?;
        if response.status() != reqwest::StatusCode::BAD_REQUEST {
            return Ok(true);
        }
        let problem: Value = response.json().await.unwrap_or(Value::Null);
        let kind = problem["type"].as_str().unwrap_or("");
        let detail = problem["detail"].as_str().unwrap_or("");
        let unknown = detail.contains("unknown parameter") && detail.contains("results");
        Ok(!(kind.ends_with(":invalid-parameter") && unknown))
    }

    /// Posts `archive` (with `?results=FORMAT` when given); the response, or the answer of a
    /// batch none of whose members was accepted.
    async fn post_batch(
        &self,
        archive: Vec<u8>,
        options: &SubmitOptions,
        results: Option<&str>,
    ) -> Result<Result<reqwest::Response, Value>, ClientError> {
        let start = std::time::Instant::now();
        let mut query = submit_query(options);
        if let Some(format) = results {
            query.push(("results", format.to_string()));
        }
        let request = self
            .request(reqwest::Method::POST, "/v1/batches")
            .query(&query)
            .header(header::CONTENT_TYPE, MEDIA_TYPE)
            .body(archive);
        let response = request.send().await?;
        let answered_ms = start.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(status = %response.status(), answered_ms, "batch sent");
        if response.status() == reqwest::StatusCode::BAD_REQUEST {
            let text = response.text().await.unwrap_or_default();
            let problem: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if problem["type"]
                .as_str()
                .is_some_and(|t| t.ends_with(":batch-refused"))
            {
                return Ok(Err(json!({"accepted": 0, "jobs": problem["members"]})));
            }
            return Err(ClientError::Problem {
                status: 400,
                kind: problem["type"].as_str().unwrap_or("unknown").to_string(),
                detail: problem["detail"].as_str().map_or(text, str::to_string),
            });
        }
        Ok(Ok(checked(response).await?))
    }
}

/// `members` (`(name, file)`) as one tar archive, the largest files first (the server
/// starts on each member as it arrives, and the largest bound the batch).
async fn archive_of(members: Vec<(String, PathBuf)>) -> Result<Vec<u8>, ClientError> {
    let start = std::time::Instant::now();
    let archive = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let contents = read_all(&members)?;
        let mut order: Vec<usize> = (0..members.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(contents[i].len()));
        let bytes: usize = contents.iter().map(|c| c.len() + 1024).sum();
        let mut builder = tar::Builder::new(Vec::with_capacity(bytes + 1024));
        for i in order {
            let mut header = tar::Header::new_gnu();
            header.set_size(contents[i].len() as u64);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            builder.append_data(&mut header, &members[i].0, &contents[i][..])?;
        }
        builder.into_inner()
    })
    .await
    .map_err(std::io::Error::other)??;
    let read_ms = start.elapsed().as_secs_f64() * 1e3;
    tracing::debug!(bytes = archive.len(), read_ms, "batch archive built");
    Ok(archive)
}

/// Reads a batch's results archive, calling `each` for every entry; with `answer_first` (the
/// archive a `POST` answered with), its first entry is the batch's answer (a JSON document),
/// returned instead.
async fn read_entries(
    response: reqwest::Response,
    format: &str,
    answer_first: bool,
    each: impl Fn(BatchEntry) -> std::io::Result<()> + Send + Sync + 'static,
) -> Result<Option<Value>, ClientError> {
    let suffix = format!(".{}", extension(format));
    let stream = response.bytes_stream().map_err(std::io::Error::other);
    let reader = tokio_util::io::SyncIoBridge::new(tokio_util::io::StreamReader::new(stream));
    // Entries are handed to `each` on writer threads of their own, so that reading the
    // stream and writing results overlap, and the writes overlap each other (285 results
    // written one after another took 25–34 ms on the H200 host while the stream waited).
    // A writer that fails stops the reading (its error is the one reported).
    let (entries, handed) = std::sync::mpsc::sync_channel::<BatchEntry>(WRITERS * 2);
    let (handed, each) = (Arc::new(Mutex::new(handed)), Arc::new(each));
    let failed = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (handed, each, failed) = (handed.clone(), each.clone(), failed.clone());
            tokio::task::spawn_blocking(move || -> std::io::Result<()> {
                loop {
                    let next = handed.lock().expect("no writer panics holding it").recv();
                    let Ok(entry) = next else { return Ok(()) };
                    each(entry).inspect_err(|_| failed.store(true, Ordering::Relaxed))?;
                }
            })
        })
        .collect();
    let stop = failed.clone();
    let read = tokio::task::spawn_blocking(move || -> std::io::Result<Option<Value>> {
        let failed = stop;
        let start = std::time::Instant::now();
        let mut archive = tar::Archive::new(reader);
        let mut answer = None;
        for (i, entry) in archive.entries()?.enumerate() {
            let mut entry = entry?;
            let name = entry.path()?.to_string_lossy().into_owned();
            let mut data = Vec::with_capacity(entry.size() as usize);
            entry.read_to_end(&mut data)?;
            if answer_first && i == 0 {
                answer = Some(serde_json::from_slice(&data).map_err(std::io::Error::other)?);
            } else if failed.load(Ordering::Relaxed)
                || entries.send(split(&name, &suffix, data)?).is_err()
            {
                break;
            }
        }
        tracing::debug!(
            read_ms = start.elapsed().as_secs_f64() * 1e3,
            "batch results read"
        );
        match answer {
            None if answer_first => Err(std::io::Error::other(
                "the batch's answer ended before its first entry",
            )),
            answer => Ok(answer),
        }
    })
    .await
    .map_err(std::io::Error::other)?;
    for writer in writers {
        writer.await.map_err(std::io::Error::other)??;
    }
    let answer = read?;
    Ok(answer)
}

/// The files of `members`, read side by side (a batch is hundreds of files: `tar` of the
/// 285 SYNTCOMP games, one after another, took 20–26 ms on the H200 host, a tenth of the
/// whole batch).
fn read_all(members: &[(String, PathBuf)]) -> std::io::Result<Vec<Vec<u8>>> {
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let per_thread = members.len().div_ceil(threads).max(1);
    let read = |(_, path): &(String, PathBuf)| {
        std::fs::read(path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    };
    std::thread::scope(|scope| {
        let readers: Vec<_> = members
            .chunks(per_thread)
            .map(|chunk| scope.spawn(move || chunk.iter().map(read).collect::<Vec<_>>()))
            .collect();
        readers
            .into_iter()
            .flat_map(|reader| reader.join().expect("a reader thread does not panic"))
            .collect()
    })
}

/// The entry `name` as a result (`NAME{suffix}`) or an error document (`NAME.error.json`).
fn split(name: &str, suffix: &str, data: Vec<u8>) -> std::io::Result<BatchEntry> {
    if let Some(member) = name.strip_suffix(".error.json") {
        let document: Value = serde_json::from_slice(&data).map_err(std::io::Error::other)?;
        return Ok(BatchEntry::Failed {
            name: member.to_string(),
            state: document["state"].as_str().unwrap_or("failed").to_string(),
            error: document["error"].clone(),
        });
    }
    let member = name.strip_suffix(suffix).ok_or_else(|| {
        std::io::Error::other(format!(
            "the results stream has an entry '{name}' not ending in {suffix}"
        ))
    })?;
    Ok(BatchEntry::Result {
        name: member.to_string(),
        data,
    })
}

/// The file name extension of results in `format`: json, txt, sol or bin.
pub fn extension(format: &str) -> &'static str {
    match format {
        "text" => "txt",
        "paritysol" => "sol",
        "binary" => "bin",
        _ => "json",
    }
}
