//! The client subcommands: `submit`, `status`, `result`, `cancel`, `jobs`, `healthcheck`.
//! Server and token come from `--server`/`--token` or `EGSOLVE_SERVER`/`EGSOLVE_TOKEN`.
//! Each `run` returns the process exit code.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use super::{Client, ClientError, PartsPlan, SubmitOptions};

/// Where the server is and who we are.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Service URL.
    #[arg(long, env = "EGSOLVE_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// Bearer token (from `egsolve token add`).
    #[arg(long, env = "EGSOLVE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

impl ServerArgs {
    fn client(&self) -> anyhow::Result<Client> {
        Ok(Client::new(&self.server, self.token.clone())?)
    }
}

/// `egsolve submit FILE…`.
#[derive(Debug, Clone, clap::Args)]
pub struct SubmitArgs {
    /// Arena files (any supported format, plain or compressed). Several are submitted side
    /// by side over reused connections (`--in-flight`); with `--wait`, each result goes to
    /// the directory `-o DIR` as `FILE_NAME.json` (`.txt`, `.sol`, `.bin` by format), and
    /// one line per file says `ID STATE FILE`.
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Several files: how many are submitted (and waited for) at once.
    #[arg(long, default_value_t = 16)]
    pub in_flight: usize,
    /// Do not upload FILE: name it, and the server copies it from its file system (FILE must
    /// lie under one of the server's --import-root directories, at the same path there, and
    /// the token needs the import permission).
    #[arg(long)]
    pub by_reference: bool,
    /// Several files: submit each on its own instead of as one batch (files of up to 64 MiB
    /// in all go as one request, `POST /v1/batches`, and their results come back in one
    /// stream).
    #[arg(long)]
    pub no_batch: bool,
    /// A file of at least this many bytes is sent in parts over several connections
    /// (`POST /v1/uploads`), each part checksummed and sent again if its connection breaks
    /// [default: 256 MiB].
    #[arg(long, default_value_t = 256 << 20)]
    pub parts_above: u64,
    /// Bytes per part of an upload in parts (64 KiB to 1 GiB).
    #[arg(long, default_value_t = 64 << 20)]
    pub part_size: u64,
    /// Parts sent at once, each over its own connection.
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// Finish the upload in parts with this id (printed when one is made; see `GET
    /// /v1/uploads/{id}`): only the parts the server lacks are sent.
    #[arg(long)]
    pub upload: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Backend: auto, gpu, cpu, reference or parity (the parity solver, for parity games).
    #[arg(long)]
    pub backend: Option<String>,
    /// Priority (higher runs first, -1000..1000).
    #[arg(long)]
    pub priority: Option<i64>,
    /// Time limit in seconds.
    #[arg(long)]
    pub time_limit: Option<u64>,
    /// Input format: auto, mpg or gm.
    #[arg(long)]
    pub format: Option<String>,
    /// What the result holds: credits or strategies.
    #[arg(long = "return")]
    pub returns: Option<String>,
    /// Parity games: also compute the credits of the energy reduction (by default a
    /// parity game is answered with winners and strategies).
    #[arg(long)]
    pub credits: bool,
    /// Solve anew even when the server holds the answer of an identical finished job (by
    /// default such a job is answered at once from it, `"reused": true`).
    #[arg(long)]
    pub no_reuse: bool,
    /// Wait for the job to finish (live status line), then fetch the result.
    #[arg(long)]
    pub wait: bool,
    /// Where to write the result (with --wait); standard output if absent. With several
    /// files, a directory (made if missing) for one result per file.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Result format: json, text, paritysol or binary (with --wait; binary: the arrays of
    /// docs/result-binary.md, the bytes `egsolve solve --output binary` writes).
    #[arg(long, default_value = "json", value_parser = ["json", "text", "paritysol", "binary"])]
    pub result_format: String,
    /// With --wait and -o FILE: the server writes the result to FILE itself, instead of
    /// sending it (a link to its stored copy where the file system allows). FILE must lie
    /// under one of the server's --export-root directories, at the same path there, and the
    /// token needs the import permission.
    #[arg(long, requires_all = ["wait", "output"])]
    pub result_by_reference: bool,
}

/// `egsolve status ID`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// Job id.
    pub id: String,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Wait up to this many seconds for a state change.
    #[arg(long)]
    pub wait: Option<u64>,
}

/// `egsolve result ID`.
#[derive(Debug, Clone, clap::Args)]
pub struct ResultArgs {
    /// Job id.
    pub id: String,
    #[command(flatten)]
    pub server: ServerArgs,
    /// json, text, paritysol or binary (credits and strategies as little-endian arrays:
    /// docs/result-binary.md; the bytes `egsolve solve --output binary` writes).
    #[arg(long, default_value = "json")]
    pub format: String,
    /// Only these vertices, e.g. `0,17`.
    #[arg(long)]
    pub vertices: Option<String>,
    /// Output file; standard output if absent.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// A binary result of at least this many bytes written to a file is fetched as several
    /// byte ranges at once.
    #[arg(long, default_value_t = 256 << 20)]
    pub ranges_above: u64,
    /// Byte ranges fetched at once.
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// With -o FILE: the server writes the result to FILE itself (see `submit
    /// --result-by-reference`).
    #[arg(long, requires = "output", conflicts_with = "vertices")]
    pub by_reference: bool,
}

/// `egsolve cancel ID`.
#[derive(Debug, Clone, clap::Args)]
pub struct CancelArgs {
    /// Job id.
    pub id: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `egsolve jobs`.
#[derive(Debug, Clone, clap::Args)]
pub struct JobsArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Only jobs in this state.
    #[arg(long)]
    pub state: Option<String>,
    /// Page size.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Cursor from a previous page.
    #[arg(long)]
    pub cursor: Option<String>,
}

/// `egsolve healthcheck`.
#[derive(Debug, Clone, clap::Args)]
pub struct HealthcheckArgs {
    /// Service URL.
    #[arg(long, env = "EGSOLVE_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
}

fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("json"));
}

/// One status line: state, position or progress.
pub fn status_line(job: &Value) -> String {
    let mut line = format!(
        "{} {}",
        job["id"].as_str().unwrap_or("?"),
        job["state"].as_str().unwrap_or("?")
    );
    if let Some(position) = job["queue_position"].as_u64() {
        line += &format!(" (position {position})");
    }
    if let Some(device) = job["device"].as_str() {
        line += &format!(" on {device}");
    }
    let progress = &job["progress"];
    if progress.is_object() {
        line += &format!(
            " round {} frontier {} lifts {}",
            progress["round"], progress["frontier"], progress["lifts"]
        );
    }
    if let Some(detail) = job["failure"]["message"].as_str() {
        line += &format!(": {detail}");
        if let (Some(l), Some(c)) = (
            job["failure"]["line"].as_u64(),
            job["failure"]["column"].as_u64(),
        ) {
            line += &format!(" (line {l}, column {c})");
        }
    }
    line
}

impl SubmitArgs {
    /// Uploads, optionally waits and fetches the result.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let client = self.server.client()?;
        let options = SubmitOptions {
            backend: self.backend.clone(),
            priority: self.priority,
            time_limit: self.time_limit,
            format: self.format.clone(),
            returns: self.returns.clone(),
            credits: self.credits,
            no_reuse: self.no_reuse,
        };
        if let [_, _, ..] = self.files.as_slice() {
            anyhow::ensure!(
                !self.result_by_reference,
                "--result-by-reference takes one file: submit the others on their own"
            );
            return self.run_many(&client, &options).await;
        }
        let file = &self.files[0];
        let mut job = if self.by_reference {
            client
                .submit_by_reference(&reference_path(file)?, &options)
                .await?
        } else {
            self.upload(&client, file, &options).await?
        };
        let id = job["id"]
            .as_str()
            .context("the server answered without a job id")?
            .to_string();
        if !self.wait {
            println!("{id}");
            return Ok(0);
        }
        let spinner = ProgressBar::new_spinner();
        spinner.enable_steady_tick(Duration::from_millis(200));
        while !matches!(
            job["state"].as_str(),
            Some("succeeded" | "failed" | "cancelled")
        ) {
            spinner.set_message(status_line(&job));
            // Short waits so progress counters refresh while running.
            job = client.job(&id, Some(1)).await?;
        }
        spinner.finish_and_clear();
        eprintln!("{}", status_line(&job));
        if job["state"] != "succeeded" {
            return Ok(unanswered_exit_code(&job));
        }
        if self.result_by_reference {
            let output = self.output.as_deref().expect("clap requires -o");
            export_result(&client, &id, &self.result_format, output).await?;
            return Ok(0);
        }
        let ranges = Ranges {
            connections: self.connections,
            ..RANGES
        };
        write_result(
            &client,
            &id,
            &self.result_format,
            None,
            self.output.as_deref(),
            ranges,
        )
        .await?;
        Ok(0)
    }
}

/// The exit code of a job waited for that ended without an answer: its failure's kind
/// in the CLI's own codes (the README's table: the time limit 4, an `M` that does not fit 3,
/// a backend or memory or disk the server lacks 5, a bug 70), else 1 (cancelled, or the
/// arena's file changed under a job by reference).
fn unanswered_exit_code(job: &Value) -> i32 {
    use crate::exit_codes::{EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_TIMEOUT, EXIT_UNAVAILABLE};
    match job["failure"]["type"].as_str() {
        Some("time-limit") => EXIT_TIMEOUT,
        Some("bound-overflow" | "malformed-arena") => EXIT_BAD_INPUT,
        Some("backend-unavailable" | "exceeds-memory" | "insufficient-storage") => EXIT_UNAVAILABLE,
        Some("internal") => EXIT_INTERNAL,
        _ => 1,
    }
}

/// Has the server write job `id`'s result as `format` to `output` (`POST
/// /v1/jobs/{id}/result/export`), named by its absolute path; says how on standard error.
async fn export_result(
    client: &Client,
    id: &str,
    format: &str,
    output: &std::path::Path,
) -> anyhow::Result<()> {
    let name = output
        .file_name()
        .with_context(|| format!("{} names no file", output.display()))?;
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    let dir = std::fs::canonicalize(dir).with_context(|| {
        format!(
            "--result-by-reference needs the directory of {} as the server sees it",
            output.display()
        )
    })?;
    let placed = client.export_result(id, &dir.join(name), format).await?;
    let how = if placed["linked"] == true {
        "linked to the server's copy"
    } else {
        "written by the server"
    };
    eprintln!("{} ({} bytes, {how})", output.display(), placed["bytes"]);
    Ok(())
}

impl SubmitArgs {
    /// Uploads `file` with a progress bar; the job.
    async fn upload(
        &self,
        client: &Client,
        file: &std::path::Path,
        options: &SubmitOptions,
    ) -> anyhow::Result<Value> {
        // A local file's problem (exit code 74), said before anything is sent: a directory
        // would otherwise fail as the upload's body, which looks like the server's fault.
        let local = |problem: String| ClientError::Io(std::io::Error::other(problem));
        let metadata = std::fs::metadata(file)
            .map_err(|e| local(format!("cannot read {}: {e}", file.display())))?;
        if metadata.is_dir() {
            let problem = format!("{} is a directory: name a game file", file.display());
            return Err(local(problem).into());
        }
        let length = metadata.len();
        let bar = ProgressBar::new(length).with_style(
            ProgressStyle::with_template(
                "uploading {bar:30} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .expect("template"),
        );
        let progress = bar.clone();
        let job = if length >= self.parts_above || self.upload.is_some() {
            let plan = PartsPlan {
                part_size: self.part_size,
                connections: self.connections,
                resume: self.upload.clone(),
            };
            client
                .submit_in_parts(file, options, &plan, move |held| {
                    progress.set_position(held);
                })
                .await
        } else {
            client
                .submit(file, options, move |sent| progress.set_position(sent))
                .await
        };
        bar.finish_and_clear();
        Ok(job?)
    }
}

/// The path a job by reference names: the file resolved here (links followed) when it
/// exists here, else as given, which must then be absolute (the server's view of it).
pub(super) fn reference_path(file: &std::path::Path) -> anyhow::Result<PathBuf> {
    match std::fs::canonicalize(file) {
        Ok(path) => Ok(path),
        Err(_) if file.is_absolute() => Ok(file.to_owned()),
        Err(e) => anyhow::bail!(
            "--by-reference needs the file's path as the server sees it: {} cannot be resolved here ({e}); pass an absolute path",
            file.display()
        ),
    }
}

/// When a binary result written to a file is fetched as several byte ranges at once.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ranges {
    /// From this many bytes.
    pub(super) above: u64,
    /// Ranges at once.
    pub(super) connections: usize,
}

/// The default: results of 256 MiB or more, 8 ranges at once.
pub(super) const RANGES: Ranges = Ranges {
    above: 256 << 20,
    connections: 8,
};

pub(super) async fn write_result(
    client: &Client,
    id: &str,
    format: &str,
    vertices: Option<&str>,
    output: Option<&std::path::Path>,
    ranges: Ranges,
) -> anyhow::Result<()> {
    match output {
        Some(path) if format == "binary" && vertices.is_none() => {
            let ranged = client
                .result_in_ranges(id, path, ranges.above, ranges.connections)
                .await?;
            if ranged.is_none() {
                let file = tokio::fs::File::create(path)
                    .await
                    .with_context(|| format!("cannot create {}", path.display()))?;
                let mut file = tokio::io::BufWriter::with_capacity(1 << 20, file);
                client.result(id, Some(format), None, &mut file).await?;
            }
        }
        Some(path) => {
            let file = tokio::fs::File::create(path)
                .await
                .with_context(|| format!("cannot create {}", path.display()))?;
            // Large writes (each is a hop to a blocking thread); flushed at the end and not
            // fsynced, like `egsolve solve -o`.
            let mut file = tokio::io::BufWriter::with_capacity(1 << 20, file);
            client.result(id, Some(format), vertices, &mut file).await?;
        }
        None => {
            client
                .result(id, Some(format), vertices, &mut tokio::io::stdout())
                .await?;
        }
    }
    Ok(())
}

impl StatusArgs {
    /// Prints the job as JSON.
    pub async fn run(&self) -> anyhow::Result<i32> {
        print_json(&self.server.client()?.job(&self.id, self.wait).await?);
        Ok(0)
    }
}

impl ResultArgs {
    /// Writes the result.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let client = self.server.client()?;
        if self.by_reference {
            let output = self.output.as_deref().expect("clap requires -o");
            export_result(&client, &self.id, &self.format, output).await?;
            return Ok(0);
        }
        let ranges = Ranges {
            above: self.ranges_above,
            connections: self.connections,
        };
        write_result(
            &client,
            &self.id,
            &self.format,
            self.vertices.as_deref(),
            self.output.as_deref(),
            ranges,
        )
        .await?;
        Ok(0)
    }
}

impl CancelArgs {
    /// Cancels and prints the job.
    pub async fn run(&self) -> anyhow::Result<i32> {
        print_json(&self.server.client()?.cancel(&self.id).await?);
        Ok(0)
    }
}

impl JobsArgs {
    /// Prints one status line per job, then the next cursor if any.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let client = self.server.client()?;
        let page = client
            .jobs(
                self.state.as_deref(),
                Some(self.limit),
                self.cursor.as_deref(),
            )
            .await?;
        for job in page["jobs"].as_array().into_iter().flatten() {
            println!("{}", status_line(job));
        }
        if let Some(cursor) = page["next_cursor"].as_str() {
            eprintln!("more: --cursor {cursor}");
        }
        Ok(0)
    }
}

impl HealthcheckArgs {
    /// 0 if `/healthz` answers 200, else 1.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let client = Client::new(&self.server, None)?;
        Ok(i32::from(!client.healthy().await))
    }
}
