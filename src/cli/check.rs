//! `egsolve check`: verify a JSON solution against an arena and say what failed where.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, EXIT_BAD_INPUT, EXIT_REJECTED};
use crate::check::{Claim, check};
use crate::format::{self, Format, ReadOptions};
use crate::output::read_json_solution;

/// Arguments of `egsolve check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The arena file.
    pub arena: PathBuf,
    /// The solution, as `egsolve solve --output json` writes it.
    pub solution: PathBuf,
    /// Input format of the arena (default: detected).
    #[arg(long)]
    pub format: Option<Format>,
}

/// Runs `egsolve check`: exit 0 and "ok" if every certificate holds, else exit 1 with the
/// violations.
pub fn run(args: CheckArgs) -> Result<(), CliError> {
    let game = format::read_path(
        &args.arena,
        &ReadOptions {
            format: args.format,
            ..ReadOptions::default()
        },
    )?;
    let file = std::fs::File::open(&args.solution).map_err(|e| {
        CliError::new(
            super::EXIT_IO,
            format!("cannot open {}: {e}", args.solution.display()),
        )
    })?;
    let (credit, strategy) = read_json_solution(file, game.arena.vertex_count())
        .map_err(|e| CliError::new(EXIT_BAD_INPUT, format!("{}: {e}", args.solution.display())))?;
    let report = check(
        &game.arena,
        Claim {
            credit: &credit,
            strategy: &strategy,
        },
    )
    .map_err(|e| CliError::new(EXIT_BAD_INPUT, e))?;
    if report.passed() {
        println!(
            "ok: {} vertices; credits form a progress measure and a fixpoint, player 0's strategy keeps them, W1 is closed and player 1's strategy makes every cycle in it negative",
            game.arena.vertex_count()
        );
        return Ok(());
    }
    let mut message = format!(
        "the solution is rejected ({} violations{}):",
        report.violations.len(),
        if report.truncated {
            ", more not listed"
        } else {
            ""
        }
    );
    for v in &report.violations {
        message.push_str(&format!("\n  {v}"));
    }
    Err(CliError::new(EXIT_REJECTED, message))
}
