//! `egsolve gen`: seeded games (see [`egsolve_core::generate`]) written as EGSolver, JSON,
//! `egb` or, for parity games, PGSolver text. `gen random` generates on all threads
//! ([`egsolve_core::generate::RandomPlan`]: the game depends on the seed, never on the
//! thread count) and writes `egb` straight into a mapped output file, with no text and no
//! copy of the game in memory besides the file's pages.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::convert::{WriteFormat, write_game};
use super::{CliError, EXIT_IO, EXIT_USAGE, output_file};
use egsolve_core::arena::Arena;
use egsolve_core::format::Game;
use egsolve_core::format::egb::EgbWriter;
use egsolve_core::generate::{self, RandomParams, RandomPlan};

/// Where and how to write a generated game.
#[derive(Debug, Args)]
pub struct GenOutput {
    /// Output format.
    #[arg(long, value_enum, default_value = "mpg")]
    pub to: WriteFormat,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
}

/// The generator families.
#[derive(Debug, Subcommand)]
pub enum GenCommand {
    /// Uniform random energy game.
    Random {
        /// Number of vertices.
        #[arg(long, default_value_t = 1000)]
        vertices: u32,
        /// Out-degree range `MIN..MAX` (or one number).
        #[arg(long, default_value = "1..4")]
        degree: String,
        /// Weight range `MIN..MAX`.
        #[arg(long, default_value = "-10..10", allow_hyphen_values = true)]
        weights: String,
        /// Percentage of player-1 vertices.
        #[arg(long, default_value_t = 50)]
        player1: u8,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[command(flatten)]
        output: GenOutput,
    },
    /// A ladder of rungs (many rounds, narrow frontiers).
    Ladder {
        /// Number of rungs.
        #[arg(long, default_value_t = 1000)]
        rungs: u32,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[command(flatten)]
        output: GenOutput,
    },
    /// A complete graph with ±1 weights (dense).
    Clique {
        /// Number of vertices.
        #[arg(long, default_value_t = 500)]
        size: u32,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[command(flatten)]
        output: GenOutput,
    },
    /// A negative cycle of player-1 vertices behind a large M (a long climb to ⊤).
    Climb {
        /// Cycle length.
        #[arg(long, default_value_t = 100)]
        length: u32,
        /// Weight of the exit edges (their negation).
        #[arg(long, default_value_t = 1000)]
        exit: i64,
        #[command(flatten)]
        output: GenOutput,
    },
    /// Player 0 circles a negative cycle before escaping at cost `big` (a long climb to a
    /// large finite credit).
    CircleEscape {
        /// Number of gadgets.
        #[arg(long, default_value_t = 100)]
        copies: u32,
        /// Cost of the escape edge (its negation).
        #[arg(long, default_value_t = 100000)]
        big: i64,
        #[command(flatten)]
        output: GenOutput,
    },
    /// A random parity game, written as PGSolver `.gm` (solve it to apply the reduction).
    Parity {
        /// Number of vertices.
        #[arg(long, default_value_t = 1000)]
        vertices: u32,
        /// Highest priority.
        #[arg(long, default_value_t = 4)]
        priorities: u64,
        /// Largest out-degree.
        #[arg(long, default_value_t = 3)]
        degree: u32,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write here instead of standard output.
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
}

/// Parses `A..B` (or `A`) into an inclusive range.
fn range<T: std::str::FromStr + Copy>(text: &str, what: &str) -> Result<(T, T), CliError> {
    let bad = || {
        CliError::new(
            EXIT_USAGE,
            format!("--{what} '{text}': expected MIN..MAX or a single number"),
        )
    };
    match text.split_once("..") {
        Some((a, b)) => Ok((
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        )),
        None => {
            let x = text.trim().parse().map_err(|_| bad())?;
            Ok((x, x))
        }
    }
}

/// Writes the random game of `plan` as `egb` to `out` (a file: generated in place in its
/// map) or standard output (generated in memory, then written).
fn random_egb(plan: &RandomPlan, out: Option<&PathBuf>) -> Result<(), CliError> {
    let path = out.filter(|p| p.as_os_str() != "-");
    let mut file = EgbWriter::create(
        path.map(PathBuf::as_path),
        plan.vertices(),
        plan.edges(),
        plan.width(),
    )
    .map_err(|e| match path {
        Some(p) => CliError::new(EXIT_IO, format!("cannot create {}: {e}", p.display())),
        None => CliError::from(e),
    })?;
    plan.fill(file.sections());
    match path {
        Some(_) => file.finish(None)?,
        None => {
            let mut stdout = std::io::stdout().lock();
            file.finish(Some(&mut stdout))?
        }
    }
    Ok(())
}

/// Runs `egsolve gen`.
pub fn run(command: GenCommand) -> Result<(), CliError> {
    let (arena, output): (Arena, GenOutput) = match command {
        GenCommand::Random {
            vertices,
            degree,
            weights,
            player1,
            seed,
            output,
        } => {
            let (min_degree, max_degree) = range::<u32>(&degree, "degree")?;
            let (min_weight, max_weight) = range::<i64>(&weights, "weights")?;
            if min_degree == 0
                || min_degree > max_degree
                || min_weight > max_weight
                || player1 > 100
            {
                return Err(CliError::new(
                    EXIT_USAGE,
                    "need 1 <= min degree <= max degree, min weight <= max weight, --player1 <= 100",
                ));
            }
            let params = RandomParams {
                vertices,
                min_degree,
                max_degree,
                min_weight,
                max_weight,
                player1_percent: player1,
            };
            let plan = RandomPlan::new(params, seed).map_err(|e| {
                CliError::new(
                    EXIT_USAGE,
                    format!(
                        "cannot generate this game: {e}; ask for fewer vertices or a smaller degree"
                    ),
                )
            })?;
            if output.to == WriteFormat::Egb {
                return random_egb(&plan, output.out.as_ref());
            }
            let mut image = EgbWriter::create(None, plan.vertices(), plan.edges(), plan.width())?;
            plan.fill(image.sections());
            (image.into_game()?.arena, output)
        }
        GenCommand::Ladder {
            rungs,
            seed,
            output,
        } => (generate::ladder(rungs, seed), output),
        GenCommand::Clique { size, seed, output } => (generate::clique(size, seed), output),
        GenCommand::Climb {
            length,
            exit,
            output,
        } => (generate::climb(length, exit), output),
        GenCommand::CircleEscape {
            copies,
            big,
            output,
        } => {
            if copies == 0 || big < 1 {
                return Err(CliError::new(
                    EXIT_USAGE,
                    "--copies must be at least 1 and --big at least 1".to_string(),
                ));
            }
            let arena = egsolve_core::generate::climbing::circle_then_escape(copies, big);
            (arena, output)
        }
        GenCommand::Parity {
            vertices,
            priorities,
            degree,
            seed,
            out,
        } => {
            let game = generate::random_parity(vertices, priorities, degree, seed);
            let mut sink = output_file(out.as_ref())?;
            generate::write_pgsolver(&game, &mut sink)?;
            sink.flush()?;
            return Ok(());
        }
    };
    let mut sink = output_file(output.out.as_ref())?;
    write_game(
        &mut sink,
        &Game {
            arena,
            parity: None,
            initial: None,
        },
        output.to,
    )?;
    sink.flush()?;
    Ok(())
}
