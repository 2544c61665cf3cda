//! How much host memory a solve needs, estimated from the game's size before it runs, so
//! that a service can refuse a job that cannot fit instead of dying in the middle of it
//! (and say what it needs and what is there).
//!
//! The estimate is the arena itself (owners, both adjacency copies with their weights at
//! the arena's width) plus the solve's working memory: credits, strategies, frontiers, and
//! the evaluations' graphs of player 1's strategy, whose size depends on the game, not only
//! on `n` and `m`. The working part is an upper bound fitted on measured peaks (resident
//! memory of `egsolve solve` from `egb`, `--output binary`, 1 and 2 threads, random games
//! of 10^7 edges, weights −10..10): degree 4 (`n` 2.5 M) 319 MB, degree 16 (`n` 0.625 M)
//! 428 MB, degree 1–3 (`n` 5 M) 864 MB; the estimate gives 782, 526 and 1,125 MB.

/// Working bytes per vertex beyond the arena (credits, strategies, frontiers, ranks,
/// evaluation state).
pub const WORKING_BYTES_PER_VERTEX: u64 = 128;
/// Working bytes per edge beyond the arena (the evaluations' subgraphs, predecessor lists).
pub const WORKING_BYTES_PER_EDGE: u64 = 32;

/// Bytes of an arena of `n` vertices and `m` edges with weights of `weight_bytes` bytes:
/// owners, CSR and CSC offsets, targets and sources, and both weight columns.
pub fn arena_bytes(n: u64, m: u64, weight_bytes: u64) -> u64 {
    n.saturating_add(2u64.saturating_mul(4).saturating_mul(n.saturating_add(1)))
        .saturating_add(2u64.saturating_mul(m).saturating_mul(4 + weight_bytes))
}

/// Host bytes a solve of such a game needs, arena included (see the module docs).
pub fn host_bytes(n: u64, m: u64, weight_bytes: u64) -> u64 {
    arena_bytes(n, m, weight_bytes)
        .saturating_add(n.saturating_mul(WORKING_BYTES_PER_VERTEX))
        .saturating_add(m.saturating_mul(WORKING_BYTES_PER_EDGE))
}

/// Bytes as a short human figure (`1.5 GiB`), for messages.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_covers_the_measured_peaks() {
        // (n, m, measured peak resident bytes) from the module docs.
        for (n, m, peak) in [
            (2_500_000, 10_000_000, 319_272_000),
            (625_000, 10_000_000, 428_312_000),
            (5_000_000, 10_000_000, 864_292_000),
        ] {
            let estimate = host_bytes(n, m, 2);
            assert!(estimate >= peak, "{n} {m}: {estimate} < {peak}");
            assert!(estimate <= 3 * peak, "{n} {m}: {estimate} far above {peak}");
        }
    }

    #[test]
    fn huge_games_saturate_instead_of_wrapping() {
        assert_eq!(host_bytes(u64::MAX, u64::MAX, 8), u64::MAX);
    }

    #[test]
    fn figures_read_well() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
