//! Reading throughput, phase by phase, on any files and thread counts (a program:
//! `cargo bench -p egsolve-core --bench parse -- [OPTIONS] [FILE...]`, or the built executable on its own,
//! e.g. copied to another machine: `cargo bench -p egsolve-core --bench parse --no-run` prints its path).
//!
//! For each input (the files given, default the largest shared games, plus a generated
//! `.mpg` of `--generate-mb` megabytes) it prints, with the median of `--runs` wall-clock
//! runs, in MB/s of decompressed text (binary: of `egb` bytes):
//! - `decompress`: the file's compression alone, into memory (one thread: the formats are
//!   sequential);
//! - `sequential`: the baseline, `format::read_bytes` as one sequential pass (one thread,
//!   the whole text one chunk: what the reader did before it was parallel);
//! - `parse+build T`: `format::read_bytes` on the text in memory with T threads (tokenizing,
//!   vertex checks, the parity reduction, CSR and CSC), and its speed-up over `sequential`;
//! - `stream T`: `format::read` on the compressed file as it is (decompression on the
//!   calling thread overlapping the parse on T threads);
//! - `egb load T`: `format::read_bytes` on the game written as `egb` (checksum, copy and
//!   validation, CSC), and its speed-up over 1 thread;
//! - `scan`: a plain newline count over the text (a memory-speed baseline, one thread).
//!
//! Then the solution writer: `output::write_text` of a synthetic solution of
//! `--write-vertices` vertices (default 10^7) on T threads against the sequential record
//! loop it replaced, in MB/s of text written to memory.
//!
//! Options: `--threads 1,2,16` (default 1 and every core), `--runs N` (default 5),
//! `--generate-mb MB` (default 100; 0 for none), `--no-default` (only the files given),
//! `--write-vertices N` (0 for none).
//! `EGSOLVE_DATA` points at the shared data when the default files are wanted elsewhere.

use egsolve_test_support as data;
use egsolve_test_support::bench;
use egsolve_test_support::record;

use std::io::Read;
use std::path::PathBuf;

use egsolve_core::format::{self, ReadOptions};
use egsolve_core::generate::{RandomParams, random};
use egsolve_core::output::{
    self,
    records::{RecordBuffer, StrategyField},
};
use egsolve_core::solve::{Solution, TOP};

const DEFAULT_FILES: &[&str] = &[
    "parity/BRP_datasize=2_counting.gm.zst",
    "energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz",
];

struct Options {
    threads: Vec<usize>,
    runs: usize,
    generate_mb: f64,
    files: Vec<PathBuf>,
    defaults: bool,
    write_vertices: usize,
}

fn options() -> Options {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut o = Options {
        threads: if cores > 1 { vec![1, cores] } else { vec![1] },
        runs: 5,
        generate_mb: 100.0,
        files: Vec::new(),
        defaults: true,
        write_vertices: 10_000_000,
    };
    bench::each_option(|arg, value| match arg {
        "--threads" => o.threads = bench::thread_counts(&value("--threads")),
        "--runs" => o.runs = value("--runs").parse().expect("--runs N"),
        "--generate-mb" => o.generate_mb = value("--generate-mb").parse().expect("MB"),
        "--no-default" => o.defaults = false,
        "--write-vertices" => o.write_vertices = value("--write-vertices").parse().expect("N"),
        other if other.starts_with("--") => panic!("unknown option {other}"),
        file => o.files.push(PathBuf::from(file)),
    });
    if o.defaults && o.files.is_empty() {
        let data = data::shared_data();
        o.files = DEFAULT_FILES.iter().map(|f| data.join(f)).collect();
    }
    o
}

#[inline(never)]
fn count_lines(text: &[u8]) -> usize {
    text.iter().filter(|&&b| b == b'\n').count()
}

fn opts(threads: usize) -> ReadOptions {
    ReadOptions {
        threads,
        ..ReadOptions::default()
    }
}

/// About `mb` megabytes of random `.mpg` text (seed 1).
fn generated(mb: f64) -> Vec<u8> {
    let params = |vertices| RandomParams {
        vertices,
        min_degree: 1,
        max_degree: 6,
        min_weight: -1000,
        max_weight: 1000,
        player1_percent: 50,
    };
    let mut sample = Vec::new();
    format::write_mpg(&random(params(100_000), 1), &mut sample).expect("memory");
    let vertices = (mb * 1e6 / sample.len() as f64 * 100_000.0) as u32;
    let mut text = Vec::new();
    format::write_mpg(&random(params(vertices.max(1)), 1), &mut text).expect("memory");
    text
}

/// Prints one measurement of `input` and appends it to `$BENCH_JSON` (see `record`).
fn row(input: &str, label: &str, seconds: f64, mb: f64, ratio: Option<f64>) {
    record::record(
        "parse",
        serde_json::json!({
            "input": input,
            "measure": label,
            "ms": seconds * 1e3,
            "mb": mb,
            "mb_per_s": mb / seconds,
            "speedup": ratio,
        }),
    );
    let ratio = ratio.map_or(String::new(), |r| format!("  {r:>5.2}x"));
    println!(
        "  {label:<18} {:>9.1} ms {:>9.0} MB/s{ratio}",
        seconds * 1e3,
        mb / seconds
    );
}

fn measure(name: &str, raw: &[u8], text: &[u8], o: &Options) {
    let mb = text.len() as f64 / 1e6;
    println!(
        "{name}: {:.1} MB of text, {:.1} MB as given",
        mb,
        raw.len() as f64 / 1e6
    );
    let game = format::read_bytes(text, &ReadOptions::default()).expect("a valid game");
    println!(
        "  {} vertices, {} edges, {}-bit weights",
        game.arena.vertex_count(),
        game.arena.edge_count(),
        game.arena.weight_width().bits()
    );
    if raw.len() != text.len() {
        let t = bench::median_seconds(o.runs, || {
            let mut out = Vec::with_capacity(text.len());
            let mut source = zstd_or_gzip(raw);
            source.read_to_end(&mut out).expect("decompress");
            out.len()
        });
        row(name, "decompress", t, mb, None);
    }
    let t = bench::median_seconds(o.runs, || count_lines(text));
    row(name, "scan (newlines)", t, mb, None);
    let one_pass = ReadOptions {
        threads: 1,
        chunk_bytes: Some(usize::MAX),
        ..ReadOptions::default()
    };
    let base_t = bench::median_seconds(o.runs, || {
        format::read_bytes(text, &one_pass).expect("valid")
    });
    row(name, "sequential", base_t, mb, None);
    for &threads in &o.threads {
        let t = bench::median_seconds(o.runs, || {
            format::read_bytes(text, &opts(threads)).expect("valid")
        });
        row(
            name,
            &format!("parse+build {threads}"),
            t,
            mb,
            Some(base_t / t),
        );
    }
    if raw.len() != text.len() {
        for &threads in &o.threads {
            let t =
                bench::median_seconds(o.runs, || format::read(raw, &opts(threads)).expect("valid"));
            row(name, &format!("stream {threads}"), t, mb, None);
        }
    }
    let mut egb = Vec::new();
    format::write_egb(&game, &mut egb).expect("memory");
    let egb_mb = egb.len() as f64 / 1e6;
    println!(
        "  egb: {egb_mb:.1} MB ({:.2} bytes per text byte)",
        egb_mb / mb
    );
    let mut base = None;
    for &threads in &o.threads {
        let t = bench::median_seconds(o.runs, || {
            format::read_bytes(&egb, &opts(threads)).expect("valid")
        });
        let base_t = *base.get_or_insert(t);
        row(
            name,
            &format!("egb load {threads}"),
            t,
            egb_mb,
            Some(base_t / t),
        );
    }
}

/// A decoder for the compressed `raw` (gzip or zstd, by magic).
fn zstd_or_gzip(raw: &[u8]) -> Box<dyn Read + '_> {
    if raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(zstd::stream::read::Decoder::new(raw).expect("zstd"))
    } else if raw.starts_with(b"BZh") {
        Box::new(bzip2::read::MultiBzDecoder::new(raw))
    } else {
        Box::new(flate2::read::MultiGzDecoder::new(raw))
    }
}

/// Solution writers on `n` vertices (credits of up to 5 digits, every fifth ⊤, a
/// strategy each): `write text` through `output::write_text` (pieces formatted on T
/// threads, written in order) against `sequential`, the record loop the writer was before
/// (one thread, one buffer).
fn measure_writers(n: usize, o: &Options) {
    let solution = Solution {
        credit: (0..n as u64)
            .map(|v| if v % 5 == 0 { TOP } else { v * 7919 % 100_000 })
            .collect(),
        strategy: (0..n as u32)
            .map(|v| v.wrapping_mul(31) % n as u32)
            .collect(),
        stats: Default::default(),
        credits_computed: true,
        parity: None,
    };
    let mut out = Vec::with_capacity(n * 16);
    let base_t = bench::median_seconds(o.runs, || {
        out.clear();
        let mut buffer = RecordBuffer::default();
        for v in 0..n {
            let (credit, strategy) = (solution.credit[v], solution.strategy[v]);
            buffer.text_line(v as u32, credit, strategy, StrategyField::Omitted);
            if buffer.is_full() {
                buffer.drain_into(&mut out).expect("memory");
            }
        }
        buffer.drain_into(&mut out).expect("memory");
        out.len()
    });
    let expected = out.clone();
    let mb = out.len() as f64 / 1e6;
    let name = &format!("solution text of {n} vertices");
    println!("{name}: {mb:.1} MB");
    row(name, "sequential", base_t, mb, None);
    for &threads in &o.threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool");
        let t = bench::median_seconds(o.runs, || {
            out.clear();
            pool.install(|| output::write_text(&mut out, &solution, None))
                .expect("memory");
            out.len()
        });
        assert!(out == expected, "the parallel writer wrote other bytes");
        row(
            name,
            &format!("write text {threads}"),
            t,
            mb,
            Some(base_t / t),
        );
    }
}

fn main() {
    let o = options();
    println!(
        "parse benchmark: {} cores, threads {:?}, median of {} runs (wall clock), load average {}",
        std::thread::available_parallelism().map_or(1, usize::from),
        o.threads,
        o.runs,
        bench::load_average()
    );
    for file in &o.files {
        let raw = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut text = Vec::new();
        if raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
            || raw.starts_with(&[0x1f, 0x8b])
            || raw.starts_with(b"BZh")
        {
            zstd_or_gzip(&raw)
                .read_to_end(&mut text)
                .expect("decompress");
        } else {
            text = raw.clone();
        }
        let name = file.file_name().map_or("?".into(), |n| n.to_string_lossy());
        measure(&name, &raw, &text, &o);
    }
    if o.write_vertices > 0 {
        measure_writers(o.write_vertices, &o);
    }
    if o.generate_mb > 0.0 {
        let text = generated(o.generate_mb);
        let raw = zstd::encode_all(&text[..], 3).expect("compress");
        measure(
            &format!("generated random .mpg ({} MB target)", o.generate_mb),
            &raw,
            &text,
            &o,
        );
    }
}
