//! `egb` loading against text parsing, on one game (a program:
//! `cargo bench -p egsolve-core --bench egb -- [OPTIONS]`).
//!
//! The game is `gen random --vertices V --degree 4..4 --weights=-10..10 --player1 10
//! --seed 3` (default V = 2,500,000: 10^7 edges, the game). For it, with the median
//! of `--runs` wall-clock runs, in MB/s of the bytes each reads and as a ratio to the
//! one-thread text parse of the same game (its time over theirs):
//! - `text parse 1`: `format::read_bytes` of the `.mpg` text on one thread (the baseline);
//! - `egb v1 load T`: `format::read_bytes` of the game as `egb` version 1 (CRC-32, copy,
//!   validation, the transpose built) on T threads;
//! - `egb v2 load T`: `format::read_path` of the game as `egb` version 2 in a file (in the
//!   page cache) on a pool of T threads: a map, the block checksums, the arena's checks
//!   (the transpose fingerprinted), no copy; the game dropped after the clock stops (until
//!   session 63 this row was the next one's measurement);
//! - `+ pool start, unmap T`: the same with a pool of T threads started in each call
//!   (`ReadOptions::threads`) and the game dropped (unmapped) before the clock stops;
//! - `of which sums T`: the checksums alone (`format::egb::verify_checksums`, in memory),
//!   the rest of a load being the arena's checks;
//! - `egb v2 bytes T`: `format::read_bytes` of the same version 2 bytes in memory (one
//!   aligned copy, then the same checks);
//! - `gen egb T`: `gen random ... --to egb` into a file (generation, transpose, checksums).
//!
//! Options: `--vertices V`, `--threads 1,2` (default 1 and every core), `--runs N`
//! (default 5), `--dir DIR` (where the files go; default a temporary directory).

use egsolve_test_support::bench;

use std::path::PathBuf;

use egsolve_core::format::egb::EgbWriter;
use egsolve_core::format::{self, Game, ReadOptions};
use egsolve_core::generate::{RandomParams, RandomPlan, random_parallel};

struct Options {
    vertices: u32,
    threads: Vec<usize>,
    runs: usize,
    dir: Option<PathBuf>,
}

fn options() -> Options {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut o = Options {
        vertices: 2_500_000,
        threads: if cores > 1 { vec![1, cores] } else { vec![1] },
        runs: 5,
        dir: None,
    };
    bench::each_option(|arg, value| match arg {
        "--vertices" => o.vertices = value("--vertices").parse().expect("--vertices V"),
        "--threads" => o.threads = bench::thread_counts(&value("--threads")),
        "--runs" => o.runs = value("--runs").parse().expect("--runs N"),
        "--dir" => o.dir = Some(PathBuf::from(value("--dir"))),
        other => panic!("unknown option {other}"),
    });
    o
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
}

fn row(what: &str, seconds: f64, mb: f64, base: f64) {
    println!(
        "  {what:<26} {:>9.2} ms  {:>9.0} MB/s  {:>7.1}x the one-thread text parse",
        seconds * 1e3,
        mb / seconds,
        base / seconds
    );
}

fn main() {
    let o = options();
    let params = RandomParams {
        vertices: o.vertices,
        min_degree: 4,
        max_degree: 4,
        min_weight: -10,
        max_weight: 10,
        player1_percent: 10,
    };
    let temp = tempfile::tempdir().expect("temporary directory");
    let dir = o.dir.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let game = Game {
        arena: random_parallel(params, 3).expect("generates"),
        parity: None,
        initial: None,
    };
    let (n, m) = (game.arena.vertex_count(), game.arena.edge_count());
    let mut text = Vec::new();
    format::write_mpg(&game.arena, &mut text).expect("memory");
    let mut v1 = Vec::new();
    format::write_egb_v1(&game, &mut v1).expect("memory");
    let mut v2 = Vec::new();
    format::write_egb(&game, &mut v2).expect("memory");
    let path = dir.join("bench.egb");
    std::fs::write(&path, &v2).expect("write the egb file");
    let mb = |bytes: &[u8]| bytes.len() as f64 / 1e6;
    println!(
        "game: {n} vertices, {m} edges; .mpg {:.1} MB, egb v1 {:.1} MB, egb v2 {:.1} MB ({:.1} bytes per edge)",
        mb(&text),
        mb(&v1),
        mb(&v2),
        v2.len() as f64 / m as f64
    );
    let one = ReadOptions {
        threads: 1,
        ..ReadOptions::default()
    };
    let base = bench::median_seconds(o.runs, || format::read_bytes(&text, &one).expect("valid"));
    row("text parse 1", base, mb(&text), base);
    for &threads in &o.threads {
        let opts = ReadOptions {
            threads,
            ..ReadOptions::default()
        };
        let t = bench::median_seconds(o.runs, || format::read_bytes(&v1, &opts).expect("valid"));
        row(&format!("egb v1 load {threads}"), t, mb(&v1), base);
        // On the threads a program has (the CLI's and the service's pools), the game kept
        // past the clock; then as before, with a pool started and the game unmapped in
        // each call (`ReadOptions::threads`).
        let on_pool = pool(threads);
        let t = bench::median_seconds_kept(o.runs, || {
            on_pool.install(|| format::read_path(&path, &ReadOptions::default()).expect("valid"))
        });
        row(&format!("egb v2 load {threads}"), t, mb(&v2), base);
        let t = bench::median_seconds(o.runs, || {
            let game = format::read_path(&path, &opts).expect("valid");
            assert_eq!(game.arena.mapped_bytes(), game.arena.heap_bytes());
            game
        });
        row(
            &format!("  + pool start, unmap {threads}"),
            t,
            mb(&v2),
            base,
        );
        let t = bench::median_seconds(o.runs, || {
            pool(threads).install(|| format::egb::verify_checksums(&v2).expect("valid"));
        });
        row(&format!("  of which sums {threads}"), t, mb(&v2), base);
        let t = bench::median_seconds(o.runs, || format::read_bytes(&v2, &opts).expect("valid"));
        row(&format!("egb v2 bytes {threads}"), t, mb(&v2), base);
        let gen_path = dir.join("gen.egb");
        let t = bench::median_seconds(o.runs, || {
            pool(threads).install(|| {
                let plan = RandomPlan::new(params, 3).expect("fits");
                let mut out =
                    EgbWriter::create(Some(&gen_path), plan.vertices(), plan.edges(), plan.width())
                        .expect("create");
                plan.fill(out.sections());
                out.finish(None).expect("write");
            });
        });
        row(&format!("gen egb {threads}"), t, mb(&v2), base);
    }
}
