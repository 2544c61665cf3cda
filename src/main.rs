//! The `egsolve` binary: parses the command line and calls the library.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "egsolve", version, about = "Solve energy games exactly")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the GPUs the gpu backend can use (name, memory, compute capability).
    Devices {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Devices { json } => devices(json),
    }
}

fn devices(json: bool) -> anyhow::Result<()> {
    let devices = egsolve::solve::gpu::list_devices();
    if json {
        println!("{}", serde_json::to_string_pretty(&devices)?);
        return Ok(());
    }
    if devices.is_empty() {
        let why = egsolve::solve::gpu::devices::probe()
            .err()
            .map(|e| e.to_string());
        println!(
            "no GPU: {}",
            why.unwrap_or_else(|| "no usable device".into())
        );
        return Ok(());
    }
    println!(
        "{:<4} {:<32} {:>12} {:>12} {:>8} {:>5}",
        "id", "name", "total MiB", "free MiB", "cc", "SMs"
    );
    for d in devices {
        println!(
            "{:<4} {:<32} {:>12} {:>12} {:>8} {:>5}",
            d.ordinal,
            d.name,
            d.memory_total >> 20,
            d.memory_free >> 20,
            format!("{}.{}", d.compute_capability.0, d.compute_capability.1),
            d.multiprocessors
        );
    }
    Ok(())
}
