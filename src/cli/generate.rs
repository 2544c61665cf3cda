//! `egsolve gen`: seeded games (see [`egsolve_core::generate`]) written as EGSolver, JSON,
//! `egb` or, for parity games, PGSolver text. `gen random` generates on all threads
//! ([`egsolve_core::generate::RandomPlan`]: the game depends on the seed, never on the
//! thread count) and writes `egb` straight into a mapped output file, with no text and no
//! copy of the game in memory besides the file's pages. `egsolve gen family NAME --n N`:
//! the known lower-bound families of parity games
//! ([`egsolve_core::generate::families`]), PGSolver text by default.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::convert::{WriteFormat, write_game};
use super::{CliError, EXIT_IO, EXIT_USAGE, output_file};
use egsolve_core::arena::Arena;
use egsolve_core::format::egb::EgbWriter;
use egsolve_core::format::{Game, MAX_VERTEX_ID, Reduction};
use egsolve_core::generate::families::Family;
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
        /// Number of vertices (at least 1).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
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
        /// Number of vertices (at least 1).
        #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
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
        /// Number of vertices (at least 1).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
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
    /// A lower-bound family of parity games (two-counters, counter-rr, ...), PGSolver `.gm`.
    ///
    /// The same game as Oink's generator of that name writes for N, written as PGSolver
    /// `.gm` unless --to says otherwise.
    Family {
        /// Which family (Oink's tool names are accepted too: tc, counter_rr, ...).
        #[arg(value_enum)]
        name: FamilyName,
        /// Size: bits per counter for two-counters, Oink's N for the others (at least 1).
        #[arg(long)]
        n: u32,
        /// Output format: PGSolver text, or the game as `convert --to` writes it.
        #[arg(long, value_enum, default_value = "gm")]
        to: FamilyFormat,
        /// Write here instead of standard output.
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
}

/// The lower-bound families `gen family` makes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FamilyName {
    /// van Dijk's two binary counters (hard for tangle learning, Zielonka, priority
    /// promotion, small progress measures): 3N²+5N vertices.
    #[value(alias = "tc")]
    TwoCounters,
    /// Counterexample to priority promotion RR: 4N vertices.
    #[value(alias = "counter_rr")]
    CounterRr,
    /// Counterexample to priority promotion with delayed promotion: 4N+4 vertices.
    #[value(alias = "counter_dp")]
    CounterDp,
    /// Benerecetti et al.'s robust worst case for divide-et-impera solvers: 6N+3 vertices.
    #[value(alias = "counter_core")]
    CounterCore,
    /// Counterexample to one-sided recursive tangle learning: 5N+1 vertices.
    #[value(alias = "counter_ortl")]
    CounterOrtl,
    /// Gazda's counterexample (PhD thesis, Sec. 3.5): 3N+3 vertices.
    #[value(alias = "counter_m")]
    CounterM,
    /// Fearnley et al.'s counterexample to quasi-polynomial progress measures: 2N vertices.
    #[value(alias = "counter_qpt")]
    CounterQpt,
    /// The robust worst case joined into one SCC by gadgets between every two blocks:
    /// 3N²+8N+3 vertices.
    #[value(alias = "counter_rob")]
    CounterRob,
    /// Maat's counterexample to symmetric strategy improvement: 10N+2 vertices.
    #[value(alias = "counter_symsi")]
    CounterSymsi,
}

impl FamilyName {
    fn family(self) -> Family {
        match self {
            FamilyName::TwoCounters => Family::TwoCounters,
            FamilyName::CounterRr => Family::CounterRr,
            FamilyName::CounterDp => Family::CounterDp,
            FamilyName::CounterCore => Family::CounterCore,
            FamilyName::CounterOrtl => Family::CounterOrtl,
            FamilyName::CounterM => Family::CounterM,
            FamilyName::CounterQpt => Family::CounterQpt,
            FamilyName::CounterRob => Family::CounterRob,
            FamilyName::CounterSymsi => Family::CounterSymsi,
        }
    }
}

/// How `gen family` writes its game.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FamilyFormat {
    /// PGSolver `.gm` (priorities as generated, Oink's vertex names where it has them).
    Gm,
    /// EGSolver arena: the energy reduction (refused where it does not fit in 64 bits).
    Mpg,
    /// JSON (keeps the priorities).
    Json,
    /// egsolve's binary format.
    Egb,
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
            file.finish(Some(&mut stdout))?;
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
        GenCommand::Family { name, n, to, out } => return family(name.family(), n, to, out),
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

/// A family's size as the refusal states it (a count that does not fit in 64 bits
/// saturates: [`Family::vertex_count`]).
fn count(c: u64) -> String {
    if c == u64::MAX {
        "more than 1.8·10^19".into()
    } else {
        c.to_string()
    }
}

/// Runs `egsolve gen family`.
fn family(family: Family, n: u32, to: FamilyFormat, out: Option<PathBuf>) -> Result<(), CliError> {
    if n == 0 {
        return Err(CliError::new(EXIT_USAGE, "--n must be at least 1"));
    }
    // Vertex ids and edge offsets are 32-bit: refuse before building anything.
    let (vertices, edges) = (family.vertex_count(n), family.edge_count(n));
    if vertices > MAX_VERTEX_ID + 1 || edges > u64::from(u32::MAX) {
        return Err(CliError::new(
            EXIT_USAGE,
            format!(
                "{family} with --n {n} has {} vertices and {} edges: too large (at most {} vertices and {} edges); ask for a smaller --n",
                count(vertices),
                count(edges),
                MAX_VERTEX_ID + 1,
                u32::MAX
            ),
        ));
    }
    let named = family.generate_named(n);
    let mut sink = output_file(out.as_ref())?;
    let to = match to {
        FamilyFormat::Gm => {
            generate::write_pgsolver_named(&named.game, named.names.as_deref(), &mut sink)?;
            sink.flush()?;
            return Ok(());
        }
        FamilyFormat::Mpg => WriteFormat::Mpg,
        FamilyFormat::Json => WriteFormat::Json,
        FamilyFormat::Egb => WriteFormat::Egb,
    };
    let game = named.game.to_game();
    if let (WriteFormat::Mpg, Some(parity)) = (to, &game.parity) {
        if let Reduction::TooLarge(overflow) = &parity.reduction {
            return Err(CliError::new(
                EXIT_USAGE,
                format!(
                    "{family} with --n {n} does not fit an energy game (.mpg): {overflow}; \
                     write gm or json, which keep the priorities"
                ),
            ));
        }
    }
    write_game(&mut sink, &game, to)?;
    sink.flush()?;
    Ok(())
}
