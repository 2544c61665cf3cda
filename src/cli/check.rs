//! `egsolve check`: verify a JSON solution against an arena and say what failed where.
//! Energy games are certified through their credits ([`egsolve_core::check::check`]); parity
//! games through their winners and strategies on the priorities
//! ([`egsolve_core::check::check_parity`]), and through their credits as well when the solution
//! gives them.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, EXIT_BAD_INPUT, EXIT_REJECTED, read_game};
use egsolve_core::check::{Claim, ParityClaim, Report, check, check_parity};
use egsolve_core::format::Format;
use egsolve_core::output::read_json_answer;

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
    let game = read_game(&args.arena, args.format)?;
    let file = std::fs::File::open(&args.solution).map_err(|e| {
        CliError::new(
            super::EXIT_IO,
            format!("cannot open {}: {e}", args.solution.display()),
        )
    })?;
    let bad_input = |e: &dyn std::fmt::Display| {
        CliError::new(EXIT_BAD_INPUT, format!("{}: {e}", args.solution.display()))
    };
    let answer = read_json_answer(file, game.arena.vertex_count()).map_err(|e| bad_input(&e))?;
    let n = game.arena.vertex_count();
    let mut report = Report::default();
    let mut certified = Vec::new();
    if let Some(parity) = &game.parity {
        let claim = ParityClaim {
            winner: &answer.winner,
            strategy: &answer.strategy,
        };
        report = check_parity(&game.arena, &parity.priorities, claim)
            .map_err(|e| CliError::new(EXIT_BAD_INPUT, e))?;
        certified.push(
            "both players' strategies keep their winning regions, and every cycle they allow \
             there has the highest priority of the winner's parity",
        );
        if answer.credit.is_some() && !parity.reduction_fits() {
            return Err(bad_input(
                &"the solution gives credits, but this parity game's energy reduction does not \
                  fit in 64 bits, so there are none to check: solve it again with \
                  `egsolve solve --output json`",
            ));
        }
    } else if answer.credit.is_none() {
        return Err(bad_input(
            &"the solution gives no credits, which an energy game's solution needs: write one \
              with `egsolve solve --output json`",
        ));
    }
    if let Some(credit) = &answer.credit {
        let energy = check(
            &game.arena,
            Claim {
                credit,
                strategy: &answer.strategy,
            },
        )
        .map_err(|e| CliError::new(EXIT_BAD_INPUT, e))?;
        report.truncated |= energy.truncated;
        report.violations.extend(energy.violations);
        certified.push(
            "credits form a progress measure and a fixpoint, player 0's strategy keeps them, W1 \
             is closed and player 1's strategy makes every cycle in it negative",
        );
    }
    if report.passed() {
        println!("ok: {n} vertices; {}", certified.join("; "));
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
