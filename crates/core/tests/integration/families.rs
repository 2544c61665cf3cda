//! The lower-bound families ([`egsolve_core::generate::families`]) against Oink's generators:
//! sizes as functions of `n`, priorities and owners, valid arenas that survive a `.gm`
//! round trip, the same game as Oink's tool writes (the small instances bundled in
//! `tests/data/families/`, always; every instance of a full set of Oink's output when
//! present, `EGSOLVE_FAMILIES_DIR` or `/work/scratch/games/families`), and the winners Oink
//! found, recomputed by egsolve's parity solver on small games.

#[path = "families/same_game.rs"]
mod same_game;

use std::path::{Path, PathBuf};

use egsolve_core::arena::{Player, VertexId};
use egsolve_core::format::{ReadOptions, read_bytes, read_paritysol, read_path};
use egsolve_core::generate::families::{Family, NamedGame};
use egsolve_core::generate::{ParityGame, write_pgsolver_named};
use egsolve_core::solve::Control;
use egsolve_core::solve::parity::{ParityOptions, solve_with};
use same_game::{Match, same_game};

/// A game read from a `.pg`/`.gm` file, with its names if it has any.
struct FileGame {
    game: ParityGame,
    names: Option<Vec<String>>,
}

/// Reads a PGSolver file with egsolve's own reader (priorities as written, successors in
/// input order, names kept).
fn read_game(path: &Path) -> FileGame {
    let game = read_path(path, &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    from_read(&game)
}

fn from_read(game: &egsolve_core::format::Game) -> FileGame {
    let arena = &game.arena;
    let n = arena.vertex_count() as VertexId;
    let parity = game.parity.as_ref().expect("a parity game");
    FileGame {
        game: ParityGame {
            owners: arena.owners().to_vec(),
            priorities: parity.priorities.clone(),
            successors: (0..n)
                .map(|v| arena.successors(v).map(|(u, _)| u).collect())
                .collect(),
        },
        names: arena.has_names().then(|| {
            (0..n)
                .map(|v| arena.name(v).unwrap_or("").to_string())
                .collect()
        }),
    }
}

/// Compares the generated game for `n` with the file; returns the correspondence.
fn compare(family: Family, n: u32, file: &FileGame) -> Match {
    let NamedGame { game, names } = family.generate_named(n);
    let found = same_game(&game, names.as_deref(), &file.game, file.names.as_deref())
        .unwrap_or_else(|e| panic!("{family} n={n}: {e}"));
    // What each family is expected to reach (see the module docs of `families`).
    let expected = match (family, &found) {
        (Family::TwoCounters, Match::SameNames(_)) => true,
        (Family::CounterOrtl, Match::Isomorphic(_)) => n >= 4,
        (Family::CounterOrtl, Match::Identical) => n < 4,
        (Family::TwoCounters | Family::CounterOrtl, _) => false,
        (_, found) => *found == Match::Identical,
    };
    assert!(expected, "{family} n={n}: matched as {found:?}");
    if matches!(family, Family::CounterQpt | Family::CounterSymsi) {
        assert_eq!(names, file.names, "{family} n={n}: names");
    }
    found
}

/// `<tool>_<n>.pg` files in `dir`, by family and `n`.
fn instances(dir: &Path) -> Vec<(Family, u32, PathBuf)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the instance folder") {
        let path = entry.unwrap().path();
        let Some(stem) = path
            .file_name()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_suffix(".pg"))
        else {
            continue;
        };
        let Some((tool, n)) = stem.rsplit_once('_') else {
            continue;
        };
        if let (Some(family), Ok(n)) = (Family::from_name(tool), n.parse()) {
            found.push((family, n, path));
        }
    }
    found.sort_by_key(|(f, n, _)| (f.oink_tool(), *n));
    found
}

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/families")
}

#[test]
fn sizes_grow_as_the_formulas_say() {
    for family in Family::ALL {
        for n in 1..=40 {
            let g = family.generate(n);
            let edges: usize = g.successors.iter().map(Vec::len).sum();
            assert_eq!(
                g.owners.len() as u64,
                family.vertex_count(n),
                "{family} n={n}"
            );
            assert_eq!(edges as u64, family.edge_count(n), "{family} n={n}");
        }
    }
    // The closed forms, spelled out once more: quadratic for the two counters, linear else.
    let v = |f: Family, n| f.vertex_count(n);
    assert_eq!(v(Family::TwoCounters, 10), 350);
    assert_eq!(
        v(Family::TwoCounters, 20) - 2 * v(Family::TwoCounters, 10),
        600
    );
    for (family, per_n) in [
        (Family::CounterRr, 4),
        (Family::CounterDp, 4),
        (Family::CounterCore, 6),
        (Family::CounterOrtl, 5),
        (Family::CounterM, 3),
        (Family::CounterQpt, 2),
        (Family::CounterSymsi, 10),
    ] {
        assert_eq!(v(family, 11) - v(family, 10), per_n, "{family}");
    }
}

#[test]
fn priorities_and_owners_follow_the_gadgets() {
    for n in [1, 2, 5, 9] {
        let top = |f: Family| *f.generate(n).priorities.iter().max().unwrap();
        let n64 = u64::from(n);
        assert_eq!(top(Family::TwoCounters), 4 * n64 + 3);
        assert_eq!(top(Family::CounterRr), 2 * n64);
        assert_eq!(top(Family::CounterDp), n64 + 3);
        assert_eq!(top(Family::CounterCore), 4 * n64 + 1);
        assert_eq!(top(Family::CounterOrtl), 4 * n64 + 1);
        assert_eq!(top(Family::CounterM), n64 + 2);
        assert_eq!(top(Family::CounterRob), 4 * n64 + 1);
        assert_eq!(top(Family::CounterSymsi), 18 * n64 + 14);
        assert_eq!(top(Family::CounterQpt), 2 * n64);

        // Two counters: the counters mirror each other, so each player owns half; the
        // chains' priorities are 0–2 and every other priority belongs to one L or one H.
        let tc = Family::TwoCounters.generate(n);
        let ones = tc.owners.iter().filter(|&&o| o == Player::One).count();
        assert_eq!(2 * ones, tc.owners.len());
        let high: Vec<u64> = tc.priorities.iter().copied().filter(|&p| p > 2).collect();
        assert_eq!(high.len() as u32, 4 * n);
        let mut distinct = high.clone();
        distinct.dedup();
        assert_eq!(distinct, high);
        // counter-rr: every priority but n, each on one pair.
        let rr = Family::CounterRr.generate(n);
        let mut p = rr.priorities.clone();
        p.sort_unstable();
        p.dedup();
        let want: Vec<u64> = (0..=2 * n64).filter(|&q| q != n64).collect();
        assert_eq!(p, want);
        // counter-qpt: one player, priorities 1..=2n in order.
        let qpt = Family::CounterQpt.generate(n);
        assert!(qpt.owners.iter().all(|&o| o == Player::Zero));
        assert!(qpt.priorities.iter().copied().eq(1..=2 * n64));
    }
}

#[test]
fn games_are_valid_arenas_and_round_trip_through_gm() {
    for family in Family::ALL {
        for n in [1, 2, 3, 6] {
            let named = family.generate_named(n);
            let game = named.game.to_game();
            assert_eq!(game.arena.vertex_count(), named.game.owners.len());
            let mut text = Vec::new();
            write_pgsolver_named(&named.game, named.names.as_deref(), &mut text).unwrap();
            let back = from_read(&read_bytes(&text, &ReadOptions::default()).unwrap());
            assert_eq!(back.game, named.game, "{family} n={n}");
            assert_eq!(back.names, named.names, "{family} n={n}");
        }
    }
}

#[test]
fn bundled_oink_instances_are_reproduced() {
    let found = instances(&bundled());
    for family in Family::ALL {
        let count = found.iter().filter(|(f, _, _)| *f == family).count();
        assert!(count >= 2, "{family}: {count} bundled instances");
    }
    for (family, n, path) in &found {
        compare(*family, *n, &read_game(path));
    }
}

#[test]
fn every_oink_instance_is_reproduced() {
    let dir = std::env::var_os("EGSOLVE_FAMILIES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/scratch/games/families"));
    if !dir.is_dir() {
        println!(
            "skipped: no folder of Oink's instances at {} (set EGSOLVE_FAMILIES_DIR); \
             the bundled ones are checked by bundled_oink_instances_are_reproduced",
            dir.display()
        );
        return;
    }
    let found = instances(&dir);
    let mut summary: Vec<String> = Vec::new();
    for family in Family::ALL {
        let sizes: Vec<u32> = found
            .iter()
            .filter(|(f, _, _)| *f == family)
            .map(|(_, n, _)| *n)
            .collect();
        summary.push(format!("{family}: n = {sizes:?}"));
    }
    for (family, n, path) in &found {
        compare(*family, *n, &read_game(path));
    }
    println!(
        "{} instances reproduced\n{}",
        found.len(),
        summary.join("\n")
    );
}

#[test]
fn the_comparison_notices_a_changed_game() {
    // One family per way of matching: names, isomorphism, identical ids.
    for (family, n) in [
        (Family::TwoCounters, 4),
        (Family::CounterOrtl, 5),
        (Family::CounterCore, 3),
    ] {
        let file = read_game(&bundled().join(format!("{}_{n}.pg", family.oink_tool())));
        let (file_game, file_names) = (&file.game, file.names.as_deref());
        let named = family.generate_named(n);
        let names = named.names.as_deref();
        assert!(same_game(&named.game, names, file_game, file_names).is_ok());

        let mut raised = named.game.clone();
        raised.priorities[0] += 1;
        assert!(
            same_game(&raised, names, file_game, file_names).is_err(),
            "{family}: a priority raised"
        );
        let mut flipped = named.game.clone();
        let v = flipped.owners.len() - 1;
        flipped.owners[v] = flipped.owners[v].opponent();
        assert!(
            same_game(&flipped, names, file_game, file_names).is_err(),
            "{family}: an owner flipped"
        );
        // An edge of the hub-like vertex with the most successors turned to another target.
        let mut moved = named.game.clone();
        let v = (0..moved.successors.len())
            .max_by_key(|&v| moved.successors[v].len())
            .unwrap();
        let last = moved.successors[v].last_mut().unwrap();
        *last = (*last + 1) % moved.owners.len() as VertexId;
        assert!(
            same_game(&moved, names, file_game, file_names).is_err(),
            "{family}: an edge moved"
        );
    }
}

/// Winners by egsolve's parity solver (Zielonka: exponential on these, so tiny `n` only).
fn winners(game: &ParityGame) -> Vec<u8> {
    let read = game.to_game();
    let parity = read.parity.as_ref().unwrap();
    let options = ParityOptions::with_threads(1);
    let solution = solve_with(
        &read.arena,
        &parity.compressed.priority,
        &options,
        &Control::new(),
    )
    .expect("the parity solver answers");
    (0..game.owners.len() as VertexId)
        .map(|v| solution.winner(v).index())
        .collect()
}

#[test]
fn winners_agree_with_oinks_solutions() {
    let mut checked = 0;
    for (family, n, path) in instances(&bundled()) {
        let sol_path = path.with_extension("paritysol");
        let Ok(sol) = std::fs::File::open(&sol_path) else {
            continue;
        };
        let oink = read_paritysol(sol).unwrap();
        let file = read_game(&path);
        let map = compare(family, n, &file).map(file.game.owners.len());
        let ours = winners(&family.generate(n));
        for (v, winner, _) in oink {
            assert_eq!(
                ours[map[v as usize] as usize], winner,
                "{family} n={n}: winner of Oink's vertex {v}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 9, "{checked} solutions checked");
}

/// Who wins, as Oink's solutions say for every size in the full set: `(|W0|, |W1|)`.
fn recorded_winners(family: Family, n: u32) -> (usize, usize) {
    let v = family.vertex_count(n) as usize;
    let even = n % 2 == 0;
    match family {
        // Half the vertices each, every size.
        Family::TwoCounters => (v / 2, v / 2),
        Family::CounterRr
        | Family::CounterCore
        | Family::CounterOrtl
        | Family::CounterQpt
        | Family::CounterRob
        | Family::CounterSymsi => (v, 0),
        Family::CounterDp if even => (v, 0),
        Family::CounterDp => (0, v),
        Family::CounterM if even => (0, v),
        Family::CounterM => (v, 0),
    }
}

#[test]
fn winners_are_the_recorded_ones() {
    for family in Family::ALL {
        let sizes: &[u32] = match family {
            Family::TwoCounters => &[2, 4],
            _ => &[2, 3, 4, 5, 8],
        };
        for &n in sizes {
            let w = winners(&family.generate(n));
            let w1 = w.iter().filter(|&&x| x == 1).count();
            assert_eq!(
                (w.len() - w1, w1),
                recorded_winners(family, n),
                "{family} n={n}"
            );
        }
    }
}
