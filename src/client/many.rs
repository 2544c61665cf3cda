//! `egsolve submit FILE…` with several files. Files of up to [`BATCH_BYTES`] in all go as
//! one batch (one request, see [`super::batch`]) and, with `--wait`, their results come
//! back in one stream, each written into the directory `-o DIR` as it arrives. Otherwise
//! (or with `--no-batch`, or `--by-reference`) each file is submitted on its own and, with
//! `--wait`, waited for, `--in-flight` of them at a time over the one client's reused
//! connections. Either way one line per file, in the order given: `ID STATE FILE`. The
//! exit code is 1 when any file was refused or, with `--wait`, any job did not succeed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use futures::StreamExt;
use serde_json::Value;

use super::batch::{BatchEntry, extension};
use super::cli::{RANGES, SubmitArgs, reference_path, write_result};
use super::{Client, SubmitOptions};

/// Files of up to this many bytes in all are sent as one batch.
pub const BATCH_BYTES: u64 = 64 << 20;

/// The files' sizes added up (`u64::MAX` when one cannot be read: the one-by-one path
/// reports it).
fn total_bytes(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(u64::MAX, |m| m.len()))
        .fold(0u64, u64::saturating_add)
}

/// Where each file's result goes in `dir`: `FILE_NAME.EXT`; two files of one name are
/// refused before anything is sent.
fn result_paths(files: &[PathBuf], dir: &Path, format: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut seen = HashSet::new();
    files
        .iter()
        .map(|file| {
            let name = file
                .file_name()
                .with_context(|| format!("{} names no file", file.display()))?;
            anyhow::ensure!(
                seen.insert(name.to_owned()),
                "two files are named {}: their results would both be {}; submit them separately",
                name.to_string_lossy(),
                dir.join(name).display()
            );
            let mut result = name.to_owned();
            result.push(".");
            result.push(extension(format));
            Ok(dir.join(result))
        })
        .collect()
}

impl SubmitArgs {
    /// Submits every file (and waits for each, with `--wait`); the exit code.
    pub(super) async fn run_many(
        &self,
        client: &Client,
        options: &SubmitOptions,
    ) -> anyhow::Result<i32> {
        let results = match (&self.output, self.wait) {
            (Some(dir), true) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot make the directory {}", dir.display()))?;
                Some(result_paths(&self.files, dir, &self.result_format)?)
            }
            (None, true) => anyhow::bail!(
                "--wait with several files writes one result per file: name a directory with -o DIR"
            ),
            (_, false) => None,
        };
        if !self.by_reference && !self.no_batch && total_bytes(&self.files) <= BATCH_BYTES {
            return self.run_batch(client, options, results.is_some()).await;
        }
        let outcomes: Vec<anyhow::Result<(String, String)>> =
            futures::stream::iter(self.files.iter().enumerate())
                .map(|(i, file)| {
                    let result = results.as_ref().map(|paths| paths[i].as_path());
                    self.one(client, options, file, result)
                })
                .buffered(self.in_flight.max(1))
                .collect()
                .await;
        let mut failed = false;
        for (file, outcome) in self.files.iter().zip(outcomes) {
            match outcome {
                Ok((id, state)) => {
                    println!("{id} {state} {}", file.display());
                    failed |= self.wait && state != "succeeded";
                }
                Err(e) => {
                    eprintln!("{}: {e:#}", file.display());
                    failed = true;
                }
            }
        }
        Ok(i32::from(failed))
    }

    /// Submits `file`; with `--wait`, waits for its job and writes its result to `result`.
    /// The job's id and (last seen) state.
    async fn one(
        &self,
        client: &Client,
        options: &SubmitOptions,
        file: &Path,
        result: Option<&Path>,
    ) -> anyhow::Result<(String, String)> {
        let mut job = if self.by_reference {
            client
                .submit_by_reference(&reference_path(file)?, options)
                .await?
        } else {
            client.submit(file, options, |_| {}).await?
        };
        let id = job["id"]
            .as_str()
            .context("the server answered without a job id")?
            .to_string();
        let state = |job: &serde_json::Value| job["state"].as_str().unwrap_or("?").to_string();
        let Some(result) = result else {
            return Ok((id, state(&job)));
        };
        while !matches!(
            job["state"].as_str(),
            Some("succeeded" | "failed" | "cancelled")
        ) {
            job = client.job(&id, Some(30)).await?;
        }
        if job["state"] == "succeeded" {
            write_result(client, &id, &self.result_format, None, Some(result), RANGES).await?;
        } else {
            eprintln!("{}: {}", file.display(), super::cli::status_line(&job));
        }
        Ok((id, state(&job)))
    }

    /// Sends every file as one batch; with `--wait`, writes each result into `-o DIR` as
    /// the results stream delivers it. The exit code.
    async fn run_batch(
        &self,
        client: &Client,
        options: &SubmitOptions,
        wait: bool,
    ) -> anyhow::Result<i32> {
        let names: Vec<String> = self
            .files
            .iter()
            .map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect::<Option<_>>()
            .context("a file argument names no file")?;
        let members = names
            .iter()
            .cloned()
            .zip(self.files.iter().cloned())
            .collect();
        // With --wait and -o, the results come in the POST's own answer, each written as it
        // arrives.
        let (tx, rx) = std::sync::mpsc::channel();
        let answer = match (wait, &self.output) {
            (true, Some(dir)) => {
                let (dir, suffix) = (dir.clone(), extension(&self.result_format));
                let each = move |entry| {
                    let (name, state) = match entry {
                        BatchEntry::Result { name, data } => {
                            std::fs::write(dir.join(format!("{name}.{suffix}")), data)?;
                            (name, "succeeded".to_string())
                        }
                        BatchEntry::Failed { name, state, error } => {
                            let line = match (error["line"].as_u64(), error["column"].as_u64()) {
                                (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
                                _ => String::new(),
                            };
                            eprintln!(
                                "{name}: {state}: {}{line}",
                                error["message"].as_str().unwrap_or("")
                            );
                            (name, state)
                        }
                    };
                    let _ = tx.send((name, state));
                    Ok(())
                };
                client
                    .submit_batch_with_results(members, options, &self.result_format, each)
                    .await?
            }
            _ => client.submit_batch(members, options).await?,
        };
        let jobs = answer["jobs"].as_array().cloned().unwrap_or_default();
        anyhow::ensure!(
            jobs.len() == self.files.len(),
            "the server answered for {} of the {} files",
            jobs.len(),
            self.files.len()
        );
        let mut states: HashMap<String, String> = jobs
            .iter()
            .filter_map(|job| {
                Some((
                    job["name"].as_str()?.to_string(),
                    job["state"].as_str()?.to_string(),
                ))
            })
            .collect();
        states.extend(rx.try_iter());
        // The answer lists the members in the order sent (largest first), each by name.
        let by_name: HashMap<&str, &Value> = jobs
            .iter()
            .filter_map(|job| Some((job["name"].as_str()?, job)))
            .collect();
        let mut failed = false;
        for (file, name) in self.files.iter().zip(&names) {
            let job = by_name.get(name.as_str()).copied().unwrap_or(&Value::Null);
            match job["id"].as_str() {
                Some(id) => {
                    let state = states
                        .get(job["name"].as_str().unwrap_or(""))
                        .map_or("?", String::as_str);
                    println!("{id} {state} {}", file.display());
                    failed |= wait && state != "succeeded";
                }
                None => {
                    eprintln!(
                        "{}: {}",
                        file.display(),
                        job["error"]["detail"].as_str().unwrap_or("refused")
                    );
                    failed = true;
                }
            }
        }
        Ok(i32::from(failed))
    }
}
