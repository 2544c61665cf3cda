//! The `egsolve` binary: parses the command line and calls the library.

use clap::{Parser, Subcommand};
use egsolve::client::cli as client;
use egsolve::service::command::{ServeCommand, TokenCommand};

#[derive(Debug, Parser)]
#[command(name = "egsolve", version, about = "Solve energy games exactly")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the solving service (HTTP job API).
    Serve(ServeCommand),
    /// Manage bearer tokens of the service.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Submit an arena file to a service.
    Submit(client::SubmitArgs),
    /// Show a job.
    Status(client::StatusArgs),
    /// Fetch a job's result.
    Result(client::ResultArgs),
    /// Cancel a job.
    Cancel(client::CancelArgs),
    /// List your jobs.
    Jobs(client::JobsArgs),
    /// Exit 0 if the service answers /healthz, else 1.
    Healthcheck(client::HealthcheckArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("EGSOLVE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Command::Token(token) = &cli.command {
        std::process::exit(token.run()?);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let code = runtime.block_on(async {
        match &cli.command {
            Command::Serve(serve) => serve.run().await,
            Command::Submit(args) => args.run().await,
            Command::Status(args) => args.run().await,
            Command::Result(args) => args.run().await,
            Command::Cancel(args) => args.run().await,
            Command::Jobs(args) => args.run().await,
            Command::Healthcheck(args) => args.run().await,
            Command::Token(_) => unreachable!("handled above"),
        }
    })?;
    std::process::exit(code);
}
