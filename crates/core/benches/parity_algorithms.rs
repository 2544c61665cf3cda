//! Benchmark: the parity algorithms on the lower-bound families and the SYNTCOMP games
//! (issue 38).
//!
//! `cargo bench -p egsolve-core --bench parity_algorithms -- [OPTIONS]` prints markdown
//! tables (and a JSON line per measurement to `$BENCH_JSON`):
//!
//! 1. **Families** (unless `--no-families`): per family of `generate::families` and size
//!    (Oink's sizes, `n` roughly geometric, up to `--max-vertices`, default 125,000), each
//!    algorithm's solve time on one thread: the median of `--runs` (default 5; one run
//!    past 0.5 s), parsing excluded, as CPU time of the solving thread (the machine is
//!    shared, and waiting for a core does not count there) and, for `auto`, wall time too.
//!    An algorithm that runs past `--limit-ms` (default 2,000) is not run at the larger
//!    sizes of that family. Every answer is certified once (outside the timing), and the
//!    algorithms' winners must agree.
//! 2. **auto against Oink** with `--oink FILE` (`families.csv` of the Oink baseline: its
//!    best solver per game, whole-process wall and CPU medians): every size where Oink's
//!    best takes under 50 ms wall.
//! 3. **SYNTCOMP** with `--syntcomp DIR` (`*.pg`, and Oink's `<stem>.sol` beside each where
//!    present): per algorithm, the total and the largest solve time over the games, and
//!    the slowest game; winners compared with Oink's.
//!
//! `--algorithms a,b` limits the algorithms (names as `--parity-algorithm` takes them);
//! `--families f,g` the families (`tc`, `counter_rr`, ... or egsolve's names).
//! `--threads N` (default 1) gives every solve `N` threads: with 2, `auto` races its two
//! searches, and its CPU time is that of the solving thread, which runs the flat search
//! until one side answers — the race's length in one core's time, what its wall time is
//! where each side has a core of its own.

use egsolve_test_support::bench;
use egsolve_test_support::record;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egsolve_core::arena::{Arena, VertexId};
use egsolve_core::check::{ParityClaim, check_parity};
use egsolve_core::format::{ReadOptions, read_paritysol, read_path};
use egsolve_core::generate::families::Family;
use egsolve_core::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
use egsolve_core::solve::{Control, Interrupted, Solution, SolveError};

struct Options {
    algorithms: Vec<ParityAlgorithm>,
    families: Vec<Family>,
    max_vertices: u64,
    runs: usize,
    limit: Duration,
    oink: Option<PathBuf>,
    syntcomp: Option<PathBuf>,
    run_families: bool,
    threads: usize,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        algorithms: ParityAlgorithm::ALL.to_vec(),
        families: Family::ALL.to_vec(),
        max_vertices: 125_000,
        runs: 5,
        limit: Duration::from_millis(2_000),
        oink: None,
        syntcomp: None,
        run_families: true,
        threads: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        let number = |text: String| text.parse::<u64>().map_err(|e| format!("{text}: {e}"));
        match arg.as_str() {
            "--algorithms" => {
                options.algorithms = value(&arg)?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            "--families" => {
                options.families = value(&arg)?
                    .split(',')
                    .map(|f| Family::from_name(f).ok_or(format!("unknown family {f}")))
                    .collect::<Result<_, _>>()?;
            }
            "--max-vertices" => options.max_vertices = number(value(&arg)?)?,
            "--runs" => options.runs = number(value(&arg)?)?.max(1) as usize,
            "--limit-ms" => options.limit = Duration::from_millis(number(value(&arg)?)?),
            "--oink" => options.oink = Some(PathBuf::from(value(&arg)?)),
            "--syntcomp" => options.syntcomp = Some(PathBuf::from(value(&arg)?)),
            "--no-families" => options.run_families = false,
            "--threads" => options.threads = number(value(&arg)?)? as usize,
            // What `cargo bench` passes to every bench program.
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

/// CPU seconds this thread has run (0 where the clock cannot be read). Not
/// `/proc/thread-self/schedstat`: for the running thread it lags by up to a scheduler tick
/// (4 ms here), more than most of these solves take.
fn thread_cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    /// Linux's `CLOCK_THREAD_CPUTIME_ID`.
    const THREAD_CPU_CLOCK: i32 = 3;
    let mut time = Timespec {
        seconds: 0,
        nanoseconds: 0,
    };
    // SAFETY: `clock_gettime` writes one `struct timespec` (two 64-bit fields on the 64-bit
    // Linux targets this benchmark runs on) to the pointer, which points to such a value.
    let ok = unsafe { clock_gettime(THREAD_CPU_CLOCK, &mut time) } == 0;
    if ok {
        time.seconds as f64 + time.nanoseconds as f64 * 1e-9
    } else {
        0.0
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One algorithm's figures on one game: median CPU and wall seconds, what the summary
/// named, and the answer of the first run.
struct Timing {
    cpu: f64,
    wall: f64,
    named: String,
    solution: Solution,
}

/// Times `algorithm` on the options' threads, as many runs as they ask; `None` when a run
/// passes their limit.
fn time(
    arena: &Arena,
    priorities: &[u32],
    algorithm: ParityAlgorithm,
    o: &Options,
) -> Option<Timing> {
    let (runs, threads, limit) = (o.runs, o.threads, o.limit);
    let options = ParityOptions::of(algorithm, threads);
    let (mut cpus, mut walls, mut first) = (Vec::new(), Vec::new(), None);
    for _ in 0..runs {
        let control = Control::new().with_deadline(Some(Instant::now() + limit));
        let (cpu_start, start) = (thread_cpu_seconds(), Instant::now());
        let result = solve_with(arena, priorities, &options, &control);
        let wall = start.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds() - cpu_start;
        match result {
            Ok(solution) => first = first.or(Some(solution)),
            Err(SolveError::Interrupted(Interrupted::TimedOut)) => return None,
            Err(e) => panic!("{algorithm}: {e}"),
        }
        cpus.push(cpu);
        walls.push(wall);
        if wall > 0.5 {
            break;
        }
    }
    let solution = first.expect("at least one run");
    Some(Timing {
        cpu: median(cpus),
        wall: median(walls),
        named: solution.stats.algorithm.clone(),
        solution,
    })
}

fn winners(solution: &Solution) -> Vec<u8> {
    (0..solution.credit.len() as VertexId)
        .map(|v| solution.winner(v).index())
        .collect()
}

fn certify(arena: &Arena, priorities: &[u64], solution: &Solution, what: &str) {
    let claim = ParityClaim {
        winner: &winners(solution),
        strategy: &solution.strategy,
    };
    let report = check_parity(arena, priorities, claim).expect("sizes match");
    assert!(report.passed(), "{what}: {:?}", report.violations);
}

/// Oink's sizes per family (its baseline's), kept where the game has at most `max` vertices.
fn sizes(family: Family, max: u64) -> Vec<u32> {
    let mut sizes: Vec<u32> = match family {
        Family::TwoCounters => vec![2, 4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 128, 180],
        _ => vec![
            2, 3, 4, 5, 8, 10, 12, 16, 20, 24, 30, 40, 100, 200, 500, 1_000, 2_000, 5_000, 10_000,
            20_000,
        ],
    };
    match family {
        Family::CounterM => sizes.push(30_000),
        Family::CounterQpt => sizes.push(50_000),
        _ => {}
    }
    sizes.retain(|&n| family.vertex_count(n) <= max);
    sizes
}

fn short(algorithm: ParityAlgorithm) -> &'static str {
    match algorithm {
        ParityAlgorithm::Auto => "auto",
        ParityAlgorithm::Zielonka => "zlk",
        ParityAlgorithm::TangleLearning => "tl",
        ParityAlgorithm::RecursiveTangleLearning => "rtl",
        ParityAlgorithm::PriorityPromotion => "pp",
        ParityAlgorithm::FixpointIteration => "fpi",
        ParityAlgorithm::GpuFixpoint => "gpu-fpi",
    }
}

fn ms(seconds: f64) -> String {
    let ms = seconds * 1e3;
    if ms < 1.0 {
        format!("{ms:.3}")
    } else if ms < 100.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.0}")
    }
}

/// `auto`'s figures per (family, n), for the comparison with Oink.
type AutoTimes = HashMap<(Family, u32), (u64, f64, f64)>;

fn families(options: &Options) -> AutoTimes {
    let algorithms = &options.algorithms;
    print!("| family | n | V | E |");
    for &a in algorithms {
        print!(" {} CPU ms |", short(a));
    }
    println!(" auto wall ms | auto answered by |");
    println!(
        "|---|---:|---:|---:|{}---:|---|",
        "---:|".repeat(algorithms.len())
    );
    let mut auto_times = AutoTimes::new();
    for &family in &options.families {
        let mut over: Vec<ParityAlgorithm> = Vec::new();
        for n in sizes(family, options.max_vertices) {
            let game = family.generate(n).to_game();
            let parity = game.parity.as_ref().expect("a parity game");
            let priorities = &parity.compressed.priority;
            let (v, e) = (game.arena.vertex_count(), game.arena.edge_count());
            print!("| {} | {n} | {v} | {e} |", family.oink_tool());
            let mut agreed: Option<Vec<u8>> = None;
            let mut auto_row = ("-".to_string(), "-".to_string());
            for &algorithm in algorithms {
                if over.contains(&algorithm) {
                    print!(" - |");
                    continue;
                }
                let Some(timing) = time(&game.arena, priorities, algorithm, options) else {
                    over.push(algorithm);
                    print!(" >{} |", options.limit.as_millis());
                    record::record(
                        "parity_algorithms",
                        serde_json::json!({"family": family.oink_tool(), "n": n, "vertices": v,
                            "edges": e, "algorithm": algorithm.name(), "over_limit_ms":
                            options.limit.as_millis() as u64}),
                    );
                    continue;
                };
                let what = format!("{family} n={n}: {algorithm}");
                certify(&game.arena, &parity.priorities, &timing.solution, &what);
                let w = winners(&timing.solution);
                assert!(
                    agreed.get_or_insert_with(|| w.clone()) == &w,
                    "{what}: winners differ"
                );
                print!(" {} |", ms(timing.cpu));
                record::record(
                    "parity_algorithms",
                    serde_json::json!({"family": family.oink_tool(), "n": n, "vertices": v,
                        "edges": e, "algorithm": algorithm.name(), "cpu_s": timing.cpu,
                        "wall_s": timing.wall, "answered_by": timing.named}),
                );
                if algorithm == ParityAlgorithm::Auto {
                    auto_row = (ms(timing.wall), timing.named.clone());
                    auto_times.insert((family, n), (v as u64, timing.cpu, timing.wall));
                }
            }
            println!(" {} | {} |", auto_row.0, auto_row.1);
        }
    }
    auto_times
}

/// Oink's best solver per game from the baseline's `families.csv`: (solver, wall ms,
/// CPU ms) per (family, n), over the rows with status `ok`.
fn oink_best(path: &Path) -> HashMap<(Family, u32), (String, f64, f64)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut best: HashMap<(Family, u32), (String, f64, f64)> = HashMap::new();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| header.iter().position(|&h| h == name);
    let (Some(tool), Some(n), Some(solver), Some(wall), Some(status), Some(cpu)) = (
        column("tool"),
        column("n"),
        column("solver"),
        column("median_ms"),
        column("status"),
        column("cpu_median_ms"),
    ) else {
        panic!("{}: not the Oink baseline's families.csv", path.display());
    };
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let get = |i: usize| fields.get(i).copied().unwrap_or_default();
        // Rows with preprocessing off ("tl --no") answer another question.
        if get(status) != "ok" || get(solver).contains(' ') {
            continue;
        }
        let (Some(family), Ok(n), Ok(wall), Ok(cpu)) = (
            Family::from_name(get(tool)),
            get(n).parse::<u32>(),
            get(wall).parse::<f64>(),
            get(cpu).parse::<f64>(),
        ) else {
            continue;
        };
        let entry = best
            .entry((family, n))
            .or_insert_with(|| (get(solver).to_string(), wall, cpu));
        if wall < entry.1 {
            *entry = (get(solver).to_string(), wall, cpu);
        }
    }
    best
}

fn against_oink(path: &Path, auto: &AutoTimes) {
    let oink = oink_best(path);
    println!();
    println!("auto against Oink's best solver, every size where it takes under 50 ms wall:");
    println!();
    println!(
        "| family | n | V | Oink best | Oink wall ms | Oink CPU ms | auto wall ms | auto CPU ms | auto wall / Oink wall |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|");
    let mut keys: Vec<_> = auto.keys().copied().collect();
    keys.sort_by_key(|&(f, n)| (f.oink_tool(), n));
    let mut worst: f64 = 0.0;
    for key in keys {
        let (Some((solver, wall, cpu)), Some(&(v, auto_cpu, auto_wall))) =
            (oink.get(&key), auto.get(&key))
        else {
            continue;
        };
        if *wall >= 50.0 {
            continue;
        }
        let ratio = auto_wall * 1e3 / wall;
        worst = worst.max(ratio);
        println!(
            "| {} | {} | {v} | {solver} | {wall:.0} | {cpu:.0} | {} | {} | {ratio:.3} |",
            key.0.oink_tool(),
            key.1,
            ms(auto_wall),
            ms(auto_cpu)
        );
    }
    println!();
    println!("largest ratio: {worst:.3}");
}

fn syntcomp(dir: &Path, options: &Options) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pg"))
        .collect();
    files.sort();
    let count = options.algorithms.len();
    let (mut total, mut worst) = (vec![0.0f64; count], vec![(0.0f64, String::new()); count]);
    let (mut over, mut checked) = (vec![0usize; count], 0usize);
    for path in &files {
        let game = read_path(path, &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let parity = game.parity.as_ref().expect("a parity game");
        let name = path
            .file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into());
        let oink = std::fs::File::open(path.with_extension("paritysol"))
            .ok()
            .and_then(|f| read_paritysol(f).ok());
        for (i, &algorithm) in options.algorithms.iter().enumerate() {
            let priorities = &parity.compressed.priority;
            let Some(timing) = time(&game.arena, priorities, algorithm, options) else {
                over[i] += 1;
                continue;
            };
            certify(&game.arena, &parity.priorities, &timing.solution, &name);
            if let Some(lines) = &oink {
                let w = winners(&timing.solution);
                for &(v, winner, _) in lines {
                    assert_eq!(w[v as usize], winner, "{name}: {algorithm}, vertex {v}");
                }
                checked += usize::from(i == 0);
            }
            total[i] += timing.cpu;
            if timing.cpu > worst[i].0 {
                worst[i] = (timing.cpu, name.clone());
            }
            record::record(
                "parity_algorithms_syntcomp",
                serde_json::json!({"game": name, "vertices": game.arena.vertex_count(),
                    "edges": game.arena.edge_count(), "algorithm": algorithm.name(),
                    "cpu_s": timing.cpu, "wall_s": timing.wall}),
            );
        }
    }
    println!();
    println!(
        "SYNTCOMP: {} games from {} ({checked} winners compared with Oink's), CPU time of one solve, median of {} runs:",
        files.len(),
        dir.display(),
        options.runs
    );
    println!();
    println!(
        "| algorithm | total ms | largest ms | slowest game | over {} ms |",
        options.limit.as_millis()
    );
    println!("|---|---:|---:|---|---:|");
    for (i, &algorithm) in options.algorithms.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} | {} |",
            algorithm.name(),
            ms(total[i]),
            ms(worst[i].0),
            worst[i].1,
            over[i]
        );
    }
}

fn main() {
    let options = match parse_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("parity_algorithms: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "cores: {}, load average: {}",
        std::thread::available_parallelism().map_or(1, usize::from),
        bench::load_average()
    );
    println!();
    let auto = if options.run_families {
        families(&options)
    } else {
        AutoTimes::new()
    };
    if let Some(path) = &options.oink {
        against_oink(path, &auto);
    }
    if let Some(dir) = &options.syntcomp {
        syntcomp(dir, &options);
    }
}
