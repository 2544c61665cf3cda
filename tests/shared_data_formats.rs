//! Every game in the shared data set reads, with the sizes listed in its README, and every
//! Oink solution file parses and covers every vertex.

mod common;

use std::fs::File;
use std::path::Path;

use egsolve::format::{self, ReadOptions};

fn stem(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    name.split(".gm.gz")
        .next()
        .unwrap()
        .split(".mpg.gz")
        .next()
        .unwrap()
        .to_string()
}

/// (file stem, vertices, edges, distinct priorities) from `shared/data/README.md`.
const PARITY: &[(&str, usize, usize, usize)] = &[
    (
        "ABP_datasize=2_infinitely_often_lost_mcrl2example",
        119,
        149,
        3,
    ),
    ("ABP_ABP(BW)_(datasize=4)eq=strong-bisim", 613, 1_027, 2),
    ("Buffer_ABP_(datasize=4)eq=branching-bisim", 844, 1_530, 2),
    ("Lift_(Incorrect)_nlifts=2_nodeadlock", 845, 2_171, 2),
    (
        "CABP_datasize=2_infinitely_often_receive_for_all_d",
        1_027,
        3_364,
        2,
    ),
    ("rngame_n1000_p10_d2-5", 1_000, 3_558, 11),
    ("Hanoi_ndisks=8_eventually_done", 6_562, 19_680, 2),
    ("ABP_CABP_(datasize=2)eq=weak-bisim", 50_864, 168_208, 2),
    (
        "ABP_CABP_(datasize=2)eq=branching-bisim",
        57_904,
        147_936,
        2,
    ),
    ("Hanoi_ndisks=10_eventually_done", 59_050, 177_144, 2),
    ("Lift_(Incorrect)_nlifts=3_liveness_1_1", 63_906, 240_611, 4),
    (
        "Onebit_datasize=2_messages_read_are_inevitably_sent",
        153_984,
        870_976,
        2,
    ),
    (
        "SWP_datasize=2_windowsize=3_nodeadlock",
        223_392,
        964_512,
        1,
    ),
];

const ENERGY: &[(&str, usize, usize)] = &[
    (
        "IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4",
        571_378,
        996_970,
    ),
    ("clique_500_cp4", 2_000, 1_746_500),
];

#[test]
fn every_parity_game_reads_with_the_listed_sizes() {
    let files = common::shared_files("parity", ".gm.gz");
    assert_eq!(
        files.len(),
        PARITY.len(),
        "the README lists {} parity games",
        PARITY.len()
    );
    for path in files {
        let name = stem(&path);
        let &(_, n, m, k) = PARITY
            .iter()
            .find(|row| row.0 == name)
            .unwrap_or_else(|| panic!("{name} not in README table"));
        let game = format::read_path(&path, &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(game.arena.vertex_count(), n, "{name} vertices");
        assert_eq!(game.arena.edge_count(), m, "{name} edges");
        let parity = game.parity.as_ref().expect("a .gm file is a parity game");
        assert_eq!(parity.weights_by_priority.len(), k, "{name} priorities");
        assert_eq!(parity.priorities.len(), n);
    }
}

#[test]
fn every_energy_game_reads_with_the_listed_sizes() {
    let files = common::shared_files("energy", ".mpg.gz");
    assert_eq!(files.len(), ENERGY.len());
    for path in files {
        let name = stem(&path);
        let &(_, n, m) = ENERGY.iter().find(|row| row.0 == name).unwrap();
        let game = format::read_path(&path, &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(game.arena.vertex_count(), n, "{name} vertices");
        assert_eq!(game.arena.edge_count(), m, "{name} edges");
        assert!(game.parity.is_none());
    }
}

#[test]
fn every_oink_solution_parses_and_covers_every_vertex() {
    for path in common::shared_files("parity", ".sol.gz") {
        let name = path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".sol.gz", "");
        let &(_, n, _, _) = PARITY.iter().find(|row| row.0 == name).unwrap();
        let lines = format::read_paritysol(File::open(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(lines.len(), n, "{name}");
        let mut seen = vec![false; n];
        for (v, winner, _) in lines {
            assert!(winner <= 1);
            assert!(
                !std::mem::replace(&mut seen[v as usize], true),
                "{name}: vertex {v} twice"
            );
        }
    }
}
