//! `egsolve devices`: the GPUs the gpu backend can use (name, memory, compute capability),
//! or why there are none.

use clap::Args;

use super::{CliError, EXIT_INTERNAL};
use egsolve_gpu as gpu;

/// Arguments of `egsolve devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `egsolve devices`.
pub fn run(args: DevicesArgs) -> Result<(), CliError> {
    let devices = gpu::list_devices();
    if args.json {
        let text =
            serde_json::to_string_pretty(&devices).map_err(|e| CliError::new(EXIT_INTERNAL, e))?;
        println!("{text}");
        return Ok(());
    }
    if devices.is_empty() {
        let why = gpu::devices::probe().err().map(|e| e.to_string());
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
