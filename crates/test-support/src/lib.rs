//! What egsolve's tests (and benchmarks) share, in every crate: where the shared data is
//! ([`shared_data`], [`shared_files`]), property tests under fixed and fresh seeds
//! ([`proptest_seeded`]), and checks that need something a machine may lack — a GPU,
//! NVRTC, a Python package, a browser, a database server — listed as ignored with the
//! reason instead of passing silently ([`needing`], [`run_trials`]); a throwaway PostgreSQL
//! server ([`postgres`]); benchmark figures as JSON lines for `scripts/bench-report`
//! ([`record`]) and the benchmark programs' options and timings ([`bench`]); a small seeded
//! game ([`small_arena`]).
//!
//! Nothing here is part of the product; the crate is never published.

pub mod bench;
mod data;
mod needs;
pub mod postgres;
pub mod record;
mod seeded;

use std::path::PathBuf;

pub use data::shared_data;
pub use needs::{Trial, needing, needing_hardware, run_trials, under_ci};
pub use seeded::proptest_seeded;

/// The files in `shared_data()/sub` whose names end with `suffix`, sorted.
pub fn shared_files(sub: &str, suffix: &str) -> Vec<PathBuf> {
    let dir = shared_data().join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// A small random-looking arena of `n` vertices (deterministic in `seed`).
pub fn small_arena(n: u32, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut out = format!("{};\n", n - 1);
    for v in 0..n {
        let owner = if next() % 2 == 0 { "MAX" } else { "MIN" };
        let edges: Vec<String> = (0..2)
            .map(|_| format!("{}:{}", next() % n, (next() % 11) as i64 - 5))
            .collect();
        out += &format!("{v} {owner} {};\n", edges.join(","));
    }
    out.into_bytes()
}
