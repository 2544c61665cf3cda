//! The CPU backend on the real games in `../shared/data`, compared directly with their
//! independent answers: `.credits.gz` for energy games, Oink's winners (`.sol.gz`) for parity
//! games, with 1 and 2 threads (every round parallel for the latter, to exercise the
//! parallel rounds on real structure). Onebit…inevitably_sent (832 million lifts) and
//! rngame_n1000_p10_d2-5 (M ≈ 3.3·10^17) are too slow for plain lifting in CI; the CPU
//! benchmark (`benches/cpu.rs`) runs them.

use crate::shared_data::expected_credits;

use egsolve_test_support as common;

use std::path::Path;

use egsolve_core::format::{Game, ReadOptions, read_paritysol, read_path};
use egsolve_core::solve::cpu::{self, CpuOptions};
use egsolve_core::solve::energy::bound;
use egsolve_core::solve::{Control, TOP};

const TOO_SLOW_FOR_PLAIN_LIFTING: &[&str] = &[
    "Onebit_datasize=2_messages_read_are_inevitably_sent",
    "rngame_n1000_p10_d2-5",
];

fn configurations() -> [CpuOptions; 2] {
    [
        CpuOptions {
            threads: 1,
            ..CpuOptions::default()
        },
        CpuOptions {
            threads: 2,
            sequential_below_edges: 0,
            ..CpuOptions::default()
        },
    ]
}

/// The game at `path` (read once for every configuration).
fn read(path: &Path) -> Game {
    read_path(path, &ReadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The credits of `game` under `options` (credits only, no strategies).
fn credits(game: &Game, options: &CpuOptions) -> Vec<u64> {
    let m = bound(&game.arena).unwrap();
    let lifted = cpu::lift_from(
        &game.arena,
        m,
        vec![0; game.arena.vertex_count()],
        options,
        &Control::new(),
    )
    .unwrap();
    lifted.values
}

#[test]
fn energy_games_match_the_shared_credits() {
    let files = common::shared_files("energy", ".mpg.gz");
    assert_eq!(files.len(), 2);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let stem = name.strip_suffix(".mpg.gz").unwrap();
        let expected = expected_credits(&path.with_file_name(format!("{stem}.credits.gz")));
        let game = read(&path);
        for options in configurations() {
            let got = credits(&game, &options);
            let wrong: Vec<usize> = (0..expected.len())
                .filter(|&v| got[v] != expected[v])
                .take(5)
                .collect();
            assert_eq!(got.len(), expected.len(), "{name}");
            assert!(
                wrong.is_empty(),
                "{name}, {options:?}: credits differ at {wrong:?}"
            );
        }
    }
}

#[test]
fn parity_games_match_oinks_winners() {
    let mut seen = 0;
    for path in common::shared_files("parity", ".gm.gz") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let stem = name.strip_suffix(".gm.gz").unwrap();
        if TOO_SLOW_FOR_PLAIN_LIFTING.contains(&stem) {
            continue;
        }
        let oink = read_paritysol(
            std::fs::File::open(path.with_file_name(format!("{stem}.sol.gz"))).unwrap(),
        )
        .unwrap();
        let game = read(&path);
        for options in configurations() {
            let got = credits(&game, &options);
            assert_eq!(oink.len(), got.len(), "{name}");
            for &(v, winner, _) in &oink {
                let ours = u8::from(got[v as usize] == TOP);
                assert_eq!(ours, winner, "{name}, {options:?}: winner of vertex {v}");
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 11);
}
