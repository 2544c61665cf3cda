//! The command line: argument definitions (clap) and one function per subcommand. The
//! binary's `main` only parses arguments, calls [`run`] and turns the error into an exit code
//! ([`exit_code`]). Exit codes are documented in the README and on [`ExitCode`]-like
//! constants below.

mod check;
mod convert;
mod detached_exit;
mod devices;
mod generate;
mod prepared_output;
mod progress;
mod serve;
mod service;
mod solve;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use crate::exit_codes::*;

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct CliError {
    /// The process exit code.
    pub code: i32,
    /// The message for stderr.
    pub message: String,
}

impl CliError {
    /// An error with exit code `code`.
    pub fn new(code: i32, message: impl std::fmt::Display) -> CliError {
        CliError {
            code,
            message: message.to_string(),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        CliError::new(EXIT_IO, e)
    }
}

impl From<egsolve_core::format::FormatError> for CliError {
    fn from(e: egsolve_core::format::FormatError) -> CliError {
        use egsolve_core::format::FormatError;
        let code = match e {
            FormatError::Open { .. } | FormatError::Io(_) => EXIT_IO,
            _ => EXIT_BAD_INPUT,
        };
        CliError::new(code, e)
    }
}

impl From<egsolve_core::solve::SolveError> for CliError {
    fn from(e: egsolve_core::solve::SolveError) -> CliError {
        use egsolve_core::solve::{Interrupted, SolveError};
        let code = match e {
            SolveError::Bound(_)
            | SolveError::ReductionTooLarge { .. }
            | SolveError::NotAParityGame => EXIT_BAD_INPUT,
            SolveError::Interrupted(Interrupted::Cancelled | Interrupted::TimedOut) => EXIT_TIMEOUT,
            SolveError::Unavailable { .. } => EXIT_UNAVAILABLE,
        };
        CliError::new(code, e)
    }
}

/// egsolve: exact solver for energy games and parity games.
#[derive(Debug, Parser)]
#[command(name = "egsolve", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Solve an arena file: credits, winners and strategies.
    Solve(solve::SolveArgs),
    /// Verify a solution (JSON from `solve --output json`) against an arena.
    Check(check::CheckArgs),
    /// Convert an arena to EGSolver (.mpg), JSON or the binary egb format.
    Convert(convert::ConvertArgs),
    /// Generate seeded games for tests and benchmarks.
    #[command(subcommand)]
    Gen(generate::GenCommand),
    /// List the GPUs the gpu backend can use.
    Devices(devices::DevicesArgs),
    /// Run the solving service (HTTP job API).
    Serve(service::ServeCommand),
    /// Run jobs from a shared PostgreSQL queue without serving HTTP (scale-out workers).
    Worker(service::WorkerCommand),
    /// Copy a SQLite service store into an empty PostgreSQL database.
    Migrate(service::MigrateCommand),
    /// Manage the service's bearer tokens.
    #[command(subcommand)]
    Token(service::TokenCommand),
    /// Submit an arena file to a service.
    Submit(crate::client::cli::SubmitArgs),
    /// Show a job of a service.
    Status(crate::client::cli::StatusArgs),
    /// Fetch a job's result.
    Result(crate::client::cli::ResultArgs),
    /// Cancel a job.
    Cancel(crate::client::cli::CancelArgs),
    /// List your jobs.
    Jobs(crate::client::cli::JobsArgs),
    /// Exit 0 if the service answers /healthz with 200, else 1.
    Healthcheck(crate::client::cli::HealthcheckArgs),
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Solve(args) => solve::run(args),
        Command::Check(args) => check::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Gen(command) => generate::run(command),
        Command::Devices(args) => devices::run(args),
        Command::Token(command) => exit_with(command.run()),
        Command::Serve(command) => exit_with(block_on(command.run())),
        Command::Worker(command) => exit_with(block_on(command.run())),
        Command::Migrate(command) => exit_with(block_on(command.run())),
        Command::Submit(args) => exit_with(block_on(args.run())),
        Command::Status(args) => exit_with(block_on(args.run())),
        Command::Result(args) => exit_with(block_on(args.run())),
        Command::Cancel(args) => exit_with(block_on(args.run())),
        Command::Jobs(args) => exit_with(block_on(args.run())),
        Command::Healthcheck(args) => exit_with(block_on(args.run())),
    }
}

/// Reads the game in `path`, in `format` (`None`: detected).
pub(crate) fn read_game(
    path: &std::path::Path,
    format: Option<egsolve_core::format::Format>,
) -> Result<egsolve_core::format::Game, CliError> {
    let options = egsolve_core::format::ReadOptions {
        format,
        ..Default::default()
    };
    Ok(egsolve_core::format::read_path(path, &options)?)
}

/// Opens `path` for writing, or stdout for `None` / `-`, buffered.
pub(crate) fn output_file(path: Option<&PathBuf>) -> Result<Box<dyn std::io::Write>, CliError> {
    Ok(match path {
        Some(p) if p.as_os_str() != "-" => Box::new(std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(p).map_err(|e| {
                CliError::new(EXIT_IO, format!("cannot create {}: {e}", p.display()))
            })?,
        )),
        _ => Box::new(std::io::BufWriter::with_capacity(
            1 << 20,
            std::io::stdout().lock(),
        )),
    })
}

/// Runs an async service or client command on a fresh tokio runtime.
fn block_on<T>(future: impl std::future::Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Runtime::new()?.block_on(future)
}

/// Maps a service/client command's outcome (an exit code or an error) to [`CliError`].
fn exit_with(outcome: anyhow::Result<i32>) -> Result<(), CliError> {
    match outcome {
        Ok(EXIT_OK) => Ok(()),
        Ok(code) => std::process::exit(code),
        Err(e) => Err(CliError::new(exit_code_of(&e), format!("{e:#}"))),
    }
}

/// The exit code of a service or client command's error (the README's table): the
/// server's refusal of a request (4xx) is bad input (3), but an unknown job (404) bad usage
/// (2) and a refusal for want of rights or room (401, 403, 429, 507) unavailability (5); a
/// local file the client cannot read 74; no answer from the server, a server that cannot
/// start, or anything else, 5.
fn exit_code_of(e: &anyhow::Error) -> i32 {
    use crate::client::ClientError;
    for cause in e.chain() {
        match cause.downcast_ref::<ClientError>() {
            Some(ClientError::Problem { status, .. }) => {
                return match status {
                    404 => EXIT_USAGE,
                    401 | 403 | 429 | 507 => EXIT_UNAVAILABLE,
                    400..=499 => EXIT_BAD_INPUT,
                    _ => EXIT_UNAVAILABLE,
                };
            }
            Some(ClientError::Io(_)) => return EXIT_IO,
            Some(ClientError::Http(_)) => return EXIT_UNAVAILABLE,
            None => {}
        }
    }
    EXIT_UNAVAILABLE
}
