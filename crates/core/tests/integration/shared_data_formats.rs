//! Every game in the shared data set reads, with the sizes listed in its README, and every
//! Oink solution file parses and covers every vertex.

use egsolve_test_support as common;

use std::fs::File;
use std::path::Path;

use egsolve_core::format::{self, ReadOptions};

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

/// rngame_n1000_p10_d2-5: 11 priorities, and the bound M of the reduced game equals the
/// value computed here from the formula of FORMATS.md with 128-bit arithmetic, straight from
/// the file's text (about 3.3·10^17, as the README says).
#[test]
fn rngame_reduces_with_the_exact_bound() {
    use std::io::Read;
    let path = common::shared_data().join("parity/rngame_n1000_p10_d2-5.gm.gz");
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(File::open(&path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    // Independent parse: node lines are `ID PRIORITY OWNER SUCC,...;`.
    let mut priority_of = std::collections::BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with("parity") && !l.trim().is_empty())
    {
        let mut fields = line.split_whitespace();
        let id: u32 = fields.next().unwrap().parse().unwrap();
        let priority: u64 = fields.next().unwrap().parse().unwrap();
        priority_of.insert(id, priority);
    }
    let mut classes: Vec<(u64, i128)> = Vec::new();
    let mut sorted: Vec<u64> = priority_of.values().copied().collect();
    sorted.sort();
    for p in sorted {
        match classes.last_mut() {
            Some((q, c)) if *q == p => *c += 1,
            _ => classes.push((p, 1)),
        }
    }
    assert_eq!(classes.len(), 11);
    let mut a: Vec<i128> = Vec::new();
    for i in 0..classes.len() {
        let (p, _) = classes[i];
        let value = if i == 0 {
            i128::from(p % 2)
        } else {
            1 + (0..i)
                .filter(|&j| classes[j].0 % 2 != p % 2)
                .map(|j| classes[j].1 * a[j])
                .sum::<i128>()
        };
        a.push(value);
    }
    let m: i128 = classes
        .iter()
        .zip(&a)
        .filter(|((p, _), _)| p % 2 == 1)
        .map(|((_, c), a)| c * a)
        .sum();
    assert!((3.2e17..3.4e17).contains(&(m as f64)), "M = {m}");

    let game = format::read_path(&path, &ReadOptions::default()).unwrap();
    let bound = egsolve_core::solve::energy::bound(&game.arena).unwrap();
    assert_eq!(i128::from(bound), m);
    let parity = game.parity.unwrap();
    for (v, &p) in &priority_of {
        assert_eq!(parity.priorities[*v as usize], p);
        let i = classes.iter().position(|c| c.0 == p).unwrap();
        let weight = if p % 2 == 0 { a[i] } else { -a[i] };
        for (_, w) in game.arena.successors(*v) {
            assert_eq!(i128::from(w), weight, "vertex {v}");
        }
    }
}
