//! Helpers shared by the integration tests.
#![allow(dead_code)]

mod data;

use std::path::PathBuf;

pub use data::shared_data;

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

/// Runs a proptest property `cases` times under each seed of `fixed_seeds`, then under a
/// fresh seed (or `$EGSOLVE_SEED` when set, to replay one). A failure panics with the seed
/// and the minimal failing input.
pub fn proptest_seeded<S: proptest::strategy::Strategy>(
    cases: u32,
    fixed_seeds: &[u64],
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), proptest::test_runner::TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    let fresh = std::env::var("EGSOLVE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    for &seed in fixed_seeds.iter().chain([&fresh]) {
        let config = Config {
            cases,
            rng_seed: RngSeed::Fixed(seed),
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("property failed with seed {seed} (replay: EGSOLVE_SEED={seed}): {e}");
        }
    }
}
