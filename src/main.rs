//! The `egsolve` binary: parses the command line, runs it, maps errors to exit codes.
//!
//! # Layout
//! The binary only wires the libraries together: [`cli`] holds the subcommands (solving,
//! checking, converting and generating through `egsolve-core`, devices through
//! `egsolve-gpu`, `serve`/`worker`/`migrate` through `egsolve-service`), [`client`] the
//! HTTP client behind `submit`, `status`, `result`, `cancel`, `jobs` and `healthcheck`,
//! [`exit_codes`] the codes both end with.

mod cli;
mod client;
mod exit_codes;

use clap::Parser;

egsolve_alloc::global_allocator!();

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("EGSOLVE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = cli::Cli::parse();
    if let Err(e) = cli::run(cli) {
        eprintln!("egsolve: {}", e.message);
        std::process::exit(e.code);
    }
}
