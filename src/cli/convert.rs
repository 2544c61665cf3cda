//! `egsolve convert`: rewrite an arena as EGSolver (.mpg), JSON or the binary `egb`
//! (`docs/egb-format.md`).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CliError, EXIT_BAD_INPUT, output_file, read_game};
use egsolve_core::format::{self, Format, Reduction};

/// Target formats of `convert` and `gen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WriteFormat {
    /// EGSolver arena format.
    Mpg,
    /// JSON (see docs/json-format.md).
    Json,
    /// egsolve's binary arena format (see docs/egb-format.md): loads at memory speed.
    Egb,
}

/// Arguments of `egsolve convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The arena file (`-` for standard input).
    pub file: PathBuf,
    /// Input format (default: detected).
    #[arg(long)]
    pub format: Option<Format>,
    /// Output format.
    #[arg(long, value_enum)]
    pub to: WriteFormat,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
}

/// Runs `egsolve convert`.
pub fn run(args: ConvertArgs) -> Result<(), CliError> {
    let game = read_game(&args.file, args.format)?;
    if let (WriteFormat::Mpg, Some(parity)) = (args.to, &game.parity) {
        if let Reduction::TooLarge(overflow) = &parity.reduction {
            return Err(CliError::new(
                EXIT_BAD_INPUT,
                format!(
                    "cannot write this parity game as an energy game (.mpg): {overflow}; \
                     convert it to json, which keeps the priorities"
                ),
            ));
        }
    }
    let mut out = output_file(args.out.as_ref())?;
    write_game(&mut out, &game, args.to)?;
    out.flush()?;
    Ok(())
}

/// Writes `game` in `to`.
pub(crate) fn write_game(
    out: &mut impl Write,
    game: &format::Game,
    to: WriteFormat,
) -> std::io::Result<()> {
    match to {
        WriteFormat::Mpg => format::write_mpg(&game.arena, out),
        WriteFormat::Json => format::write_json(game, out),
        WriteFormat::Egb => format::write_egb(game, out),
    }
}
