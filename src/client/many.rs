//! `egsolve submit FILE…` with several files: each is submitted (uploaded, or by
//! reference) and, with `--wait`, waited for and its result written into the directory
//! `-o DIR`, `--in-flight` of them at a time over the one client's reused connections. One
//! line per file, in the order given: `ID STATE FILE`. The exit code is 1 when any file
//! was refused or, with `--wait`, any job did not succeed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use futures::StreamExt;

use super::cli::{SubmitArgs, reference_path, write_result};
use super::{Client, SubmitOptions};

/// The file name a result of `format` gets: json, txt, sol or bin.
fn extension(format: &str) -> &'static str {
    match format {
        "text" => "txt",
        "paritysol" => "sol",
        "binary" => "bin",
        _ => "json",
    }
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
            write_result(client, &id, &self.result_format, None, Some(result)).await?;
        } else {
            eprintln!("{}: {}", file.display(), super::cli::status_line(&job));
        }
        Ok((id, state(&job)))
    }
}
