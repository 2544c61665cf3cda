//! `egsolve solve`: read an arena, solve it, write the answer.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use super::prepared_output::PreparedOutput;
use super::progress::ProgressDisplay;
use super::{CliError, EXIT_BAD_INPUT, EXIT_IO, output_file};
use clap::builder::TypedValueParser;
use egsolve_core::format::{self, Format, ParityInfo, ReadOptions};
use egsolve_core::output::{self, OutputFormat};
use egsolve_core::solve::cpu::CpuAlgorithm;
use egsolve_core::solve::{self, Backend, Control, ParityAlgorithm, SolveOptions, VertexOrder};

/// Arguments of `egsolve solve`.
#[derive(Debug, Args)]
pub struct SolveArgs {
    /// The arena file (`-` for standard input); gzip, bzip2 and zstd are detected.
    pub file: PathBuf,
    /// Input format (default: detected from the content): mpg, gm or json.
    #[arg(long)]
    pub format: Option<Format>,
    /// Backend: auto (energy games: the accelerated exact solver; parity games: the parity
    /// solver, winners and strategies, unless --credits), reference (Algorithm 1), cpu
    /// (parallel frontier lifting), gpu (CUDA) or parity (the native parity game solver:
    /// winners and strategies, no credits).
    #[arg(long, default_value = "auto")]
    pub backend: Backend,
    /// Parity games with auto: also compute the credits of the energy reduction (the
    /// accelerated energy solver on the reduced game, where its weights fit in 64 bits).
    /// Without it a parity game gets winners and strategies only.
    #[arg(long)]
    pub credits: bool,
    /// Parity games answered by the parity solver (--backend parity, or auto without
    /// --credits): the algorithm. auto (default): the winner-controlled cycles solved
    /// first, then tangle learning and recursive tangle learning raced on two threads
    /// (time-sliced on one), about the better of the two on every game;
    /// zielonka (Zielonka's recursive algorithm, parallel attractors: the reference,
    /// exponential on the lower-bound families); tangle-learning; recursive-tangle-learning;
    /// priority-promotion; fixpoint-iteration (parallel rounds); gpu-fixpoint (fixpoint
    /// iteration on the GPU, any number of priorities). The JSON summary's
    /// `algorithm` names the one that answered.
    #[arg(
        long,
        default_value = "auto",
        value_parser = clap::builder::PossibleValuesParser::new(
            ParityAlgorithm::SELECTABLE.map(ParityAlgorithm::name)
        )
        .map(|name| name.parse::<ParityAlgorithm>().expect("a possible value"))
    )]
    pub parity_algorithm: ParityAlgorithm,
    /// Output: json, text (`ID CREDIT`, `T` for ⊤; needs credits, so not for answers of
    /// the parity solver), paritysol (PGSolver: winners and strategies) or binary (credits and strategies as
    /// little-endian arrays after a 32-byte header: docs/result-binary.md).
    #[arg(long, default_value = "json")]
    pub output: OutputFormat,
    /// Write the answer here instead of standard output.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Give up after this many seconds (exit code 4): from 0 to 10^9.
    #[arg(long, value_parser = parse_timeout)]
    pub timeout: Option<f64>,
    /// cpu backend, auto's lifting on games of 2^19 edges or more, and the parity solver on
    /// games of 2^16 vertices or more: worker threads (default: one per core; 1 = auto lifts
    /// with the sequential worklist, the parity solver attracts sequentially).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// cpu backend: `frontier` (default) or `sweep` (the paper's Algorithm 2, for comparison).
    #[arg(long, value_parser = parse_algorithm, default_value = "frontier")]
    pub algorithm: CpuAlgorithm,
    /// gpu backend: lanes per vertex (1 = vertex-parallel; 2, 4, 8, 16, 32 = warp-centric).
    /// Default: chosen from the degree distribution.
    #[arg(long)]
    pub lanes: Option<u32>,
    /// gpu backend: vertex order on the device: `input` (default: no renumbering, players
    /// read from a byte array) or `players-first` (the paper's layout, renumbered on the host).
    #[arg(
        long,
        default_value = "input",
        value_parser = clap::builder::PossibleValuesParser::new(["players-first", "input"])
            .map(|order| order.parse::<VertexOrder>().expect("a possible value"))
    )]
    pub vertex_order: VertexOrder,
    /// gpu backend: device ordinal (default: the one with most free memory that fits).
    #[arg(long)]
    pub device: Option<usize>,
    /// gpu backend: plain frontier lifting to the fixpoint, without the accelerated
    /// driver's strategy evaluations (for comparison; can take very long).
    #[arg(long)]
    pub gpu_plain: bool,
    /// gpu backend: length of each lifting phase in percent of the last evaluation's time
    /// (0: the CPU driver's lift budgets). Default: 10.
    #[arg(long)]
    pub gpu_lift_percent: Option<u32>,
    /// gpu backend: compute the evaluations' strongly connected components on the device
    /// on games of at least this many vertices (0: always; 18446744073709551615: never).
    /// Default: 32768.
    #[arg(long, value_name = "VERTICES")]
    pub gpu_components_from: Option<u64>,
}

/// The longest `--timeout`: about 31 years, far inside what a clock can add.
const MAX_TIMEOUT_SECONDS: f64 = 1e9;

/// `--timeout`: seconds from 0 to [`MAX_TIMEOUT_SECONDS`] (a negative, infinite or NaN
/// value would otherwise end every solve at once, or overflow the clock).
fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(seconds) if (0.0..=MAX_TIMEOUT_SECONDS).contains(&seconds) => Ok(seconds),
        _ => Err(format!(
            "'{s}' is not a time limit: expected seconds from 0 to {MAX_TIMEOUT_SECONDS:e} (leave --timeout out for none)"
        )),
    }
}

fn parse_algorithm(s: &str) -> Result<CpuAlgorithm, String> {
    match s {
        "frontier" => Ok(CpuAlgorithm::Frontier),
        "sweep" => Ok(CpuAlgorithm::Sweep),
        _ => Err(format!(
            "unknown algorithm '{s}': expected frontier or sweep"
        )),
    }
}

/// Compressed inputs from this size (plain ones from four times it) start the driver during
/// the parse when `auto` may race: smaller files hold games below
/// `solve::race::FRESH_PROCESS_RACE_FROM` vertices (BRP, 2.2 M vertices, is 6.5 MB as zstd,
/// 12.8 MB as gzip; Hesselink, 1.08 M, 5.6 and 9.3 MB), and a driver starting beside the
/// parser costs a game the CPU answers in 0.1 s about as much again (measured on the H200
/// host).
const RACE_WARM_UP_FROM_BYTES: u64 = 4 << 20;

/// Inputs from this size copy an `egb` game's successors to the device beside the load's
/// checks (`--backend gpu`): at 10^9 edges the checks take 0.8 s and the upload 0.5 s, on
/// the H200 host; a small game's upload is a few milliseconds, not worth a thread.
const EARLY_UPLOAD_FROM_BYTES: u64 = 64 << 20;

/// Threads that write a binary answer into a file prepared ahead ([`PreparedOutput`]).
const PREPARED_WRITERS: usize = 8;

/// [`RACE_WARM_UP_FROM_BYTES`] for a compressed file (by its name), four times it for plain
/// text.
fn race_warm_up_from(file: &std::path::Path) -> u64 {
    let name = file.to_string_lossy();
    let compressed = [".gz", ".zst", ".bz2"]
        .iter()
        .any(|ext| name.ends_with(ext));
    if compressed {
        RACE_WARM_UP_FROM_BYTES
    } else {
        4 * RACE_WARM_UP_FROM_BYTES
    }
}

/// Whether `auto` may race the GPU on this input (`solve::race`): a parity game (by
/// `--format gm` or the file's name) without `--credits`. The driver then starts during the
/// parse, as for `--backend gpu`, so that the GPU side is ready when the race begins.
fn may_race(args: &SolveArgs) -> bool {
    let named_gm = args
        .file
        .file_name()
        .is_some_and(|name| name.to_string_lossy().contains(".gm"));
    args.backend == Backend::Auto
        && !args.credits
        && (args.format == Some(Format::PgSolver) || (args.format.is_none() && named_gm))
}

/// Runs `egsolve solve`.
pub fn run(args: SolveArgs) -> Result<(), CliError> {
    let input_bytes = std::fs::metadata(&args.file).map_or(0, |m| m.len());
    // A large `egb` energy game for the GPU: its successor side goes to the device while
    // the load checks the arena (`egsolve_gpu::early_upload_hook`).
    let early = args.backend == Backend::Gpu
        && args.vertex_order == VertexOrder::Input
        && input_bytes >= EARLY_UPLOAD_FROM_BYTES;
    let failed = solve_and_write(args, input_bytes, early);
    if early {
        // An answer ends the process from inside; an error may leave a copy that nothing
        // will take, and the process must not end while it is inside the driver.
        egsolve_gpu::discard_early_upload();
    }
    failed
}

/// Solves the game and writes the answer, ending the process (see
/// [`exit_with_the_answer_written`]); returns only with an error.
fn solve_and_write(args: SolveArgs, input_bytes: u64, early: bool) -> Result<(), CliError> {
    // The driver's start-up overlaps the parse; inputs of a few megabytes (compressed or
    // not) make arrays that go through the staging buffers.
    if args.backend == Backend::Gpu {
        egsolve_gpu::warm_up(args.device, input_bytes >= 2 << 20, false);
    } else if args.parity_algorithm == ParityAlgorithm::GpuFixpoint {
        egsolve_gpu::warm_up(args.device, false, false);
    } else if may_race(&args) && input_bytes >= race_warm_up_from(&args.file) {
        // Only the context and kernels: page-locking the staging buffers takes longer
        // than many a race, which the CPU may win.
        egsolve_gpu::warm_up(args.device, false, false);
    }
    let progress = ProgressDisplay::start(&args.file);
    let opts = ReadOptions {
        format: args.format,
        bytes_read: Some(progress.bytes_read()),
        early_successors: early.then(|| egsolve_gpu::early_upload_hook(args.device)),
        ..ReadOptions::default()
    };
    let parse_start = Instant::now();
    // Shared, so that a race's loser need not be waited for.
    let game = std::sync::Arc::new(format::read_path(&args.file, &opts)?);
    tracing::info!(
        vertices = game.arena.vertex_count(),
        edges = game.arena.edge_count(),
        seconds = parse_start.elapsed().as_secs_f64(),
        "parsed"
    );
    // A large binary answer's file gets its space while the game is solved.
    let prepared =
        PreparedOutput::start(args.out.as_deref(), args.output, game.arena.vertex_count());
    if args.backend == Backend::Gpu {
        // The device lists the predecessors itself; the host's, checked by the load, are
        // not read again (the peak memory at 10^9 edges: BENCHMARKS.md §9). Released on a
        // thread of their own, beside the upload: unmapping 7 GB took 0.18-0.35 s.
        let game = game.clone();
        std::thread::spawn(move || game.arena.release_predecessors());
    }
    let parity = game.parity.as_ref().map(ParityInfo::view);
    if args.output == OutputFormat::Text
        && solve::runs_parity_solver(parity, args.backend, args.credits)
    {
        return Err(CliError::new(EXIT_BAD_INPUT, output::NoCredits));
    }
    let deadline = args
        .timeout
        .and_then(|s| Instant::now().checked_add(Duration::from_secs_f64(s)));
    let control = Control::new().with_deadline(deadline);
    progress.solving(control.progress().clone());
    let mut options = SolveOptions {
        backend: args.backend,
        device: Some(egsolve_gpu::SOLVER),
        credits: args.credits,
        parity_algorithm: args.parity_algorithm,
        // A fresh process: the GPU side starts the driver before it can answer.
        race_from_vertices: solve::race::FRESH_PROCESS_RACE_FROM,
        ..SolveOptions::default()
    };
    options.cpu.threads = args.threads;
    options.cpu.algorithm = args.algorithm;
    options.gpu.lanes = args.lanes;
    options.gpu.device = args.device;
    options.gpu.order = args.vertex_order;
    options.gpu.plain = args.gpu_plain;
    options.gpu.lift_percent = args.gpu_lift_percent;
    options.gpu.device_components_from = args.gpu_components_from;
    let solution = solve::solve_game_detached(&game, &options, &control);
    progress.finish();
    let solution = solution?;
    tracing::info!(
        solve = solution.stats.solve_seconds,
        strategies = solution.stats.strategy_seconds,
        "solved"
    );
    let write_start = Instant::now();
    let file = args.out.as_ref().filter(|p| p.as_os_str() != "-");
    // A binary answer to a regular file: its arrays written from two threads at their
    // offsets, or eight into a prepared file (a pipe or a device, which has no offsets, is
    // written in order).
    let regular = file.filter(|p| std::fs::metadata(p).map_or(true, |m| m.is_file()));
    if let (OutputFormat::Binary, Some(path)) = (args.output, regular) {
        use std::os::unix::fs::FileExt;
        let bytes = output::binary::Header::of(&solution).total_bytes();
        let mut named = false;
        if let Some(ready) = prepared.and_then(|p| p.take(bytes)) {
            // Its space exists: the writers only copy into its pages; then it is named.
            let file = ready.file();
            output::binary::write_binary_at_with(
                |bytes, at| file.write_all_at(bytes, at),
                &solution,
                PREPARED_WRITERS,
            )?;
            named = ready.name();
        }
        if !named {
            let file = std::fs::File::create(path).map_err(|e| {
                CliError::new(EXIT_IO, format!("cannot create {}: {e}", path.display()))
            })?;
            output::binary::write_binary_at(|bytes, at| file.write_all_at(bytes, at), &solution)?;
        }
    } else {
        let mut out = output_file(args.out.as_ref())?;
        let initial = game.initial.unwrap_or(0);
        match args.output {
            OutputFormat::Json => {
                output::write_json(&mut out, &game.arena, &solution, initial, None)?;
            }
            OutputFormat::Text => output::write_text(&mut out, &solution, None)?,
            OutputFormat::Paritysol => output::write_paritysol(&mut out, &solution, None)?,
            OutputFormat::Binary => output::binary::write_binary(&mut out, &solution)?,
        }
        out.flush()?;
    }
    tracing::info!(seconds = write_start.elapsed().as_secs_f64(), "written");
    exit_with_the_answer_written()
}

/// Ends the process now, its answer written, without unwinding what it holds:
/// - a race's loser, or the driver's warm-up, may still be inside the GPU driver (its
///   start-up, a large copy), and the driver's exit handlers would wait for it (measured on
///   the H200 host: +180 ms on Onebit, whose answer the CPU had in 82 ms) or crash beside it
///   (a segmentation fault when a 0.1 s CPU solve of a 30 MB game ended while its warm-up was
///   starting the driver);
/// - at 10^9 edges, dropping the game and the answer (a 14 GB file map, 3 GB of arrays, the
///   device's buffers and context) took about 0.4 s after the answer was written; the
///   kernel's own teardown at the exit, 0.35–0.6 s more, is handed to a child for a large
///   process ([`super::detached_exit`]).
fn exit_with_the_answer_written() -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    super::detached_exit::exit_zero()
}
