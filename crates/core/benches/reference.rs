//! Benchmark: parse speed and the reference solver on every shared game.
//!
//! `cargo bench -p egsolve-core --bench reference [-- --timeout SECONDS]` prints a markdown table: file,
//! vertices, edges, uncompressed MB, parse time and MB/s (median of 3, from memory), a
//! baseline line-count scan over the same bytes (MB/s, the memory-speed ceiling), reference
//! solve time, lifts, strategy time. Solves that pass the timeout (default 120 s) are
//! reported as such.

use egsolve_test_support as common;

use std::io::Read;
use std::time::{Duration, Instant};

use egsolve_core::format::{ReadOptions, read};
use egsolve_core::solve::{Control, SolveError, reference};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let timeout = args
        .iter()
        .position(|a| a == "--timeout")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(120.0);
    let mut files = common::shared_files("energy", ".mpg.gz");
    files.extend(common::shared_files("parity", ".gm.gz"));
    println!(
        "| game | vertices | edges | MB | parse s | parse MB/s | line scan MB/s | ratio | solve s | lifts | strategies s |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for path in files {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_end(&mut text)
            .unwrap();
        let mb = text.len() as f64 / 1e6;
        let mut parse_times = Vec::new();
        let mut game = None;
        for _ in 0..3 {
            let start = Instant::now();
            game = Some(read(&text[..], &ReadOptions::default()).unwrap());
            parse_times.push(start.elapsed().as_secs_f64());
        }
        let parse = median(parse_times);
        let scan = median(
            (0..3)
                .map(|_| {
                    let start = Instant::now();
                    let lines = text.iter().filter(|&&b| b == b'\n').count();
                    std::hint::black_box(lines);
                    start.elapsed().as_secs_f64()
                })
                .collect(),
        );
        let game = game.unwrap();
        let control =
            Control::new().with_deadline(Some(Instant::now() + Duration::from_secs_f64(timeout)));
        let solved = reference::solve(&game.arena, &control);
        let (solve, lifts, strategies) = match solved {
            Ok(s) => (
                format!("{:.3}", s.stats.solve_seconds),
                s.stats.lifts.to_string(),
                format!("{:.3}", s.stats.strategy_seconds),
            ),
            Err(SolveError::Interrupted(_)) => (
                format!("> {timeout:.0}"),
                format!("> {}", control.progress().snapshot().lifts),
                "-".into(),
            ),
            Err(e) => (format!("error: {e}"), "-".into(), "-".into()),
        };
        let name = path.file_name().unwrap().to_string_lossy();
        println!(
            "| {name} | {} | {} | {mb:.1} | {parse:.3} | {:.0} | {:.0} | {:.2} | {solve} | {lifts} | {strategies} |",
            game.arena.vertex_count(),
            game.arena.edge_count(),
            mb / parse,
            mb / scan,
            parse / scan,
        );
    }
}
