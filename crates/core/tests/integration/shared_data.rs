//! The reference solver on the real games in `../shared/data`: credits equal the independent
//! `.credits.gz` files, winners equal Oink's `.sol.gz` solutions, and every solution passes
//! `check`. Onebit…inevitably_sent (93 s of plain lifting) and rngame_n1000_p10_d2-5
//! (M ≈ 3.3·10^17) are left to the accelerated solver's tests.

use egsolve_test_support as common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use egsolve_core::check::{Claim, check};
use egsolve_core::format::{ReadOptions, read_paritysol, read_path};
use egsolve_core::solve::{Control, Solution, TOP, reference};

const TOO_SLOW_FOR_PLAIN_LIFTING: &[&str] = &[
    "Onebit_datasize=2_messages_read_are_inevitably_sent",
    "rngame_n1000_p10_d2-5",
];

fn solve_and_check(path: &Path) -> (egsolve_core::format::Game, Solution) {
    let game = read_path(path, &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let solution = reference::solve(&game.arena, &Control::new()).unwrap();
    let report = check(
        &game.arena,
        Claim {
            credit: &solution.credit,
            strategy: &solution.strategy,
        },
    )
    .unwrap();
    assert!(
        report.passed(),
        "{}: certificate rejected: {:?}",
        path.display(),
        report.violations
    );
    (game, solution)
}

/// `ID CREDIT` lines (`T` for ⊤) from a gzipped credits file.
pub(crate) fn expected_credits(path: &Path) -> Vec<u64> {
    let file = std::fs::File::open(path).unwrap();
    let reader = BufReader::new(flate2::read::MultiGzDecoder::new(file));
    let mut credits = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.unwrap();
        let (id, credit) = line.split_once(' ').unwrap();
        assert_eq!(
            id.parse::<usize>().unwrap(),
            i,
            "{}: ids in order",
            path.display()
        );
        credits.push(if credit == "T" {
            TOP
        } else {
            credit.parse().unwrap()
        });
    }
    credits
}

/// The shared files in `sub` whose names end in `suffix`: each one's path, name, and name
/// without the suffix.
fn named_files(sub: &str, suffix: &str) -> Vec<(PathBuf, String, String)> {
    common::shared_files(sub, suffix)
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let stem = name.strip_suffix(suffix).unwrap().to_string();
            (path, name, stem)
        })
        .collect()
}

#[test]
fn energy_games_match_the_shared_credits() {
    let dir = common::shared_data().join("energy");
    let mut seen = 0;
    for (path, name, stem) in named_files("energy", ".mpg.gz") {
        let (_, solution) = solve_and_check(&path);
        let expected = expected_credits(&dir.join(format!("{stem}.credits.gz")));
        assert_eq!(solution.credit.len(), expected.len(), "{name}");
        let wrong: Vec<usize> = (0..expected.len())
            .filter(|&v| solution.credit[v] != expected[v])
            .take(5)
            .collect();
        assert!(wrong.is_empty(), "{name}: credits differ at {wrong:?}");
        seen += 1;
    }
    assert_eq!(seen, 2);
}

#[test]
fn parity_games_match_oinks_winners() {
    let dir = common::shared_data().join("parity");
    let mut seen = 0;
    for (path, name, stem) in named_files("parity", ".gm.gz") {
        if TOO_SLOW_FOR_PLAIN_LIFTING.contains(&stem.as_str()) {
            continue;
        }
        let (game, solution) = solve_and_check(&path);
        let sol_file = std::fs::File::open(dir.join(format!("{stem}.sol.gz"))).unwrap();
        let oink = read_paritysol(sol_file).unwrap();
        assert_eq!(oink.len(), game.arena.vertex_count(), "{name}");
        for (v, winner, _) in oink {
            assert_eq!(solution.winner(v).index(), winner, "{name}: vertex {v}");
        }
        seen += 1;
    }
    assert_eq!(seen, 11);
}
