//! What the benchmark programs share: reading their command-line options, the machine's
//! load, and the median time of repeated runs.

use std::time::Instant;

/// Calls `on(option, value)` for each of the program's command-line arguments, where
/// `value(name)` takes the option's value (the next argument; a panic naming `name` where
/// there is none). `--bench`, which `cargo bench` passes to every bench program, is
/// skipped.
pub fn each_option(mut on: impl FnMut(&str, &mut dyn FnMut(&str) -> String)) {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--bench" {
            continue;
        }
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        on(&arg, &mut value);
    }
}

/// The thread counts of a `--threads 1,2,16` option.
pub fn thread_counts(list: &str) -> Vec<usize> {
    list.split(',')
        .map(|t| t.parse().expect("--threads 1,2,16"))
        .collect()
}

/// Median wall-clock seconds of `runs` calls of `f`.
pub fn median_seconds<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    median_of(runs, || {
        let start = Instant::now();
        std::hint::black_box(f());
        start.elapsed().as_secs_f64()
    })
}

/// Median wall-clock seconds of `runs` calls of `f`, each result dropped only after its
/// time is taken (what a load returns is used after it, not unmade within it).
pub fn median_seconds_kept<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    median_of(runs, || {
        let start = Instant::now();
        let kept = std::hint::black_box(f());
        let seconds = start.elapsed().as_secs_f64();
        drop(kept);
        seconds
    })
}

/// The median of `runs` (at least one) figures `timed` returns.
fn median_of(runs: usize, timed: impl FnMut() -> f64) -> f64 {
    let mut times: Vec<f64> = std::iter::repeat_with(timed).take(runs.max(1)).collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The load averages (1, 5 and 15 minutes) from `/proc/loadavg`, as it writes them; empty
/// where there is none.
pub fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
