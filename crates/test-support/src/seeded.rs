//! Property tests under fixed seeds and a fresh one, replayable by seed.

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
        .unwrap_or_else(|| {
            use std::hash::{BuildHasher, RandomState};
            RandomState::new().hash_one(std::time::SystemTime::now())
        });
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
