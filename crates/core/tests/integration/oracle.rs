//! The reference solver against the brute-force oracle on ≥ 20,000 random tiny games (fixed
//! seeds, plus fresh ones whose seed is printed on failure), with every solution certified
//! by `check`.

use egsolve_core::check::{Claim, check};
use egsolve_core::generate::{RandomParams, random};
use egsolve_core::solve::{Control, reference};

fn tiny_params(seed: u64) -> RandomParams {
    let vertices = 1 + (seed % 6) as u32;
    let wide = seed % 7 == 0;
    RandomParams {
        vertices,
        min_degree: 1,
        max_degree: if vertices <= 4 { 3 } else { 2 },
        min_weight: if wide { -1000 } else { -4 },
        max_weight: if wide { 1000 } else { 3 },
        player1_percent: (seed % 5 * 25) as u8,
    }
}

/// Checks one seed; `Ok((player 1 wins somewhere, some credit is positive))`.
fn check_seed(seed: u64) -> Result<(bool, bool), String> {
    let arena = random(tiny_params(seed), seed);
    let expected = egsolve_core::oracle::credits(&arena, 1 << 12).expect("tiny");
    let solution = reference::solve(&arena, &Control::new()).map_err(|e| e.to_string())?;
    if solution.credit != expected {
        return Err(format!(
            "seed {seed}: reference {:?} != oracle {expected:?} on {arena:?}",
            solution.credit
        ));
    }
    let report = check(
        &arena,
        Claim {
            credit: &solution.credit,
            strategy: &solution.strategy,
        },
    )
    .unwrap();
    if !report.passed() {
        return Err(format!(
            "seed {seed}: certificate rejected: {:?}",
            report.violations
        ));
    }
    Ok((solution.w1_size() > 0, solution.max_credit() > 0))
}

#[test]
fn reference_matches_oracle_on_fixed_seeds() {
    let results: Vec<_> = (0..20_000).map(check_seed).collect();
    let failures: Vec<&String> = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .take(5)
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    // The seeds cover games player 1 wins somewhere and games needing positive credit.
    let ok: Vec<(bool, bool)> = results.into_iter().map(Result::unwrap).collect();
    assert!(
        ok.iter().filter(|r| r.0).count() > 2_000,
        "too few games with W1"
    );
    assert!(
        ok.iter().filter(|r| r.1).count() > 2_000,
        "too few games with positive credits"
    );
}

#[test]
fn reference_matches_oracle_on_fresh_seeds() {
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("fresh seeds start at {base}");
    let failures: Vec<String> = (0..3_000)
        .map(|i| base.wrapping_add(i * 7919))
        .filter_map(|s| check_seed(s).err())
        .take(5)
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
