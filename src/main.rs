//! The `egsolve` binary: parses the command line, runs it, maps errors to exit codes.

use clap::Parser;

egsolve::global_allocator!();

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("EGSOLVE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = egsolve::cli::Cli::parse();
    if let Err(e) = egsolve::cli::run(cli) {
        eprintln!("egsolve: {}", e.message);
        std::process::exit(e.code);
    }
}
