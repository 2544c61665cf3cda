//! Parser throughput on the largest shared games: each file is decompressed to memory once,
//! then read (`egsolve::format::read`: tokenizing, integer parsing, vertex checks, the
//! parity reduction and building the CSR/CSC arena) several times; the median is printed in
//! MB/s of uncompressed text, beside a baseline measured in the same run on the same
//! buffer: a plain byte loop counting newlines (a memory scan with no parsing).
//!
//! Times are this thread's CPU time (from `/proc/thread-self/schedstat`, falling back to
//! wall time elsewhere), so that other processes on a busy machine distort them less.
//! The `build ms` column times `Arena::from_edges` alone on the same edges (part of `read`).
//!
//! Run: `cargo bench --bench parse` (optionally `-- RUNS`, default 7).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/record.rs"]
mod record;

use std::io::Read;
use std::time::Instant;

use egsolve::arena::{Arena, EdgeList};
use egsolve::format::{self, ReadOptions};

/// This thread's CPU time in seconds, or wall time where that is unavailable.
struct Clock(Option<Instant>);

impl Clock {
    fn start() -> (Clock, f64) {
        match thread_cpu_seconds() {
            Some(t) => (Clock(None), t),
            None => (Clock(Some(Instant::now())), 0.0),
        }
    }

    fn seconds_since(&self, start: f64) -> f64 {
        match self.0 {
            Some(instant) => instant.elapsed().as_secs_f64(),
            None => thread_cpu_seconds().unwrap_or(start) - start,
        }
    }
}

fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Times `f` on this thread's clock.
fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let (clock, start) = Clock::start();
    let out = f();
    (out, clock.seconds_since(start))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Counts newlines with a plain loop (the baseline: one pass over memory).
#[inline(never)]
fn count_lines(text: &[u8]) -> usize {
    let mut lines = 0;
    for &b in text {
        lines += usize::from(b == b'\n');
    }
    lines
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(7);
    let data = common::shared_data();
    let files = [
        "energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz",
        "energy/clique_500_cp4.mpg.gz",
        "parity/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz",
        "parity/Onebit_datasize=2_messages_read_are_inevitably_sent.gm.gz",
    ];
    println!(
        "{:<52} {:>6} {:>8} {:>9} {:>9} {:>8} {:>9} {:>6}",
        "file", "MB", "read ms", "read MB/s", "build ms", "scan ms", "scan MB/s", "ratio"
    );
    for file in files {
        let path = data.join(file);
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).expect("shared file"))
            .read_to_end(&mut text)
            .expect("decompress");
        let mb = text.len() as f64 / 1e6;
        let (mut read_s, mut build_s, mut scan_s) = (Vec::new(), Vec::new(), Vec::new());
        let mut checksum = 0usize;
        for _ in 0..runs {
            let (game, t) = time(|| {
                format::read(text.as_slice(), &ReadOptions::default()).expect("valid game")
            });
            read_s.push(t);
            let arena = &game.arena;
            let mut edges = EdgeList::with_capacity(arena.edge_count());
            for v in 0..arena.vertex_count() as u32 {
                for (target, weight) in arena.successors(v) {
                    edges.push(v, target, weight);
                }
            }
            let owners = arena.owners().to_vec();
            let (rebuilt, t) = time(|| Arena::from_edges(owners, edges, None).expect("same arena"));
            build_s.push(t);
            checksum += rebuilt.edge_count();
            let (lines, t) = time(|| count_lines(std::hint::black_box(&text)));
            scan_s.push(t);
            checksum += lines;
        }
        let (read, build, scan) = (median(read_s), median(build_s), median(scan_s));
        let short: String = file.chars().take(52).collect();
        println!(
            "{short:<52} {mb:>6.1} {:>8.1} {:>9.0} {:>9.1} {:>8.2} {:>9.0} {:>5.1}x",
            read * 1e3,
            mb / read,
            build * 1e3,
            scan * 1e3,
            mb / scan,
            read / scan
        );
        record::record(
            "parse",
            serde_json::json!({
                "file": file,
                "mb": mb,
                "runs": runs,
                "read_ms": read * 1e3,
                "read_mb_per_s": mb / read,
                "build_ms": build * 1e3,
                "scan_ms": scan * 1e3,
                "scan_mb_per_s": mb / scan,
            }),
        );
        std::hint::black_box(checksum);
    }
    println!("(median of {runs} runs, thread CPU time; ratio = read time / scan time; one thread)");
}
