//! The `egsolve` binary end to end: solve → check, outputs, convert round trip, gen, and the
//! documented exit codes for bad input, rejected solutions and usage errors.

use crate::common;
use crate::service_support::vertex_numbers;

use std::path::Path;
use std::process::{Command, Output};

pub(crate) fn egsolve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args(args)
        .output()
        .expect("run egsolve")
}

/// Asserts that `out` exited with `code` and that its standard error says `words`.
fn assert_fails_with(out: &Output, code: i32, words: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
    assert!(stderr(out).contains(words), "{}", stderr(out));
}

/// `egsolve gen parity` of `vertices` vertices of out-degree 3 and `priorities`
/// priorities, seeded, written to `out`; asserted to succeed.
fn gen_parity(vertices: u32, priorities: u32, seed: u64, out: &str) {
    let [vertices, priorities, seed] = [vertices, priorities, seed as u32].map(|n| n.to_string());
    let generated = egsolve(&[
        "gen",
        "parity",
        "--vertices",
        &vertices,
        "--priorities",
        &priorities,
        "--degree",
        "3",
        "--seed",
        &seed,
        "-o",
        out,
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
}

/// The (vertex, winner) pairs of the `paritysol` answer `out` printed.
fn paritysol_winners(out: &Output) -> Vec<(u32, u8)> {
    egsolve_core::format::read_paritysol(&out.stdout[..])
        .unwrap()
        .into_iter()
        .map(|(v, w, _)| (v, w))
        .collect()
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn solve_example_then_check_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("small.json");
    let out = egsolve(&["solve", "examples/small.mpg", "-o", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["summary"]["initial"]["credit"], 5);
    assert_eq!(doc["summary"]["w1"], 2);
    let out = egsolve(&["check", "examples/small.mpg", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("ok"));

    // Lower vertex 0's credit: check must say where and exit 1.
    let text = std::fs::read_to_string(&json)
        .unwrap()
        .replace("{\"id\": 0, \"credit\": 5", "{\"id\": 0, \"credit\": 4");
    std::fs::write(&json, text).unwrap();
    let out = egsolve(&["check", "examples/small.mpg", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("vertex 0:"), "{}", stderr(&out));
}

#[test]
fn paritysol_output_agrees_with_oink() {
    let game = common::shared_data()
        .join("parity/ABP_datasize=2_infinitely_often_lost_mcrl2example.gm.gz");
    let out = egsolve(&["solve", game.to_str().unwrap(), "--output", "paritysol"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ours = egsolve_core::format::read_paritysol(&out.stdout[..]).unwrap();
    let sol = game.to_str().unwrap().replace(".gm.gz", ".sol.gz");
    let oink = egsolve_core::format::read_paritysol(std::fs::File::open(sol).unwrap()).unwrap();
    assert_eq!(ours.len(), oink.len());
    for (a, b) in ours.iter().zip(&oink) {
        assert_eq!((a.0, a.1), (b.0, b.1), "winner of vertex {}", a.0);
    }
    assert!(stdout(&out).starts_with("paritysol 119;\n"));
}

#[test]
fn convert_round_trips_and_gen_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for (family, extra) in [
        ("random", vec!["--vertices", "300", "--seed", "4"]),
        ("ladder", vec!["--rungs", "50"]),
        ("clique", vec!["--size", "20"]),
        ("climb", vec!["--length", "30"]),
    ] {
        let mut args = vec!["gen", family];
        args.extend(extra);
        let first = egsolve(&args);
        assert!(first.status.success(), "{family}: {}", stderr(&first));
        assert_eq!(
            first.stdout,
            egsolve(&args).stdout,
            "{family}: same seed, same game"
        );
        std::fs::write(p("g.mpg"), &first.stdout).unwrap();
        assert!(
            egsolve(&["convert", &p("g.mpg"), "--to", "json", "-o", &p("g.json")])
                .status
                .success()
        );
        assert!(
            egsolve(&["convert", &p("g.json"), "--to", "mpg", "-o", &p("back.mpg")])
                .status
                .success()
        );
        let a = egsolve(&["solve", &p("g.mpg"), "--output", "text"]);
        let b = egsolve(&["solve", &p("back.mpg"), "--output", "text"]);
        assert!(
            a.status.success() && a.stdout == b.stdout,
            "{family}: solving the converted game differs"
        );
    }
    // `gen random` straight to egb (a file generated in place) is the game it writes as
    // text, whatever the thread count.
    let random = [
        "gen",
        "random",
        "--vertices",
        "70000",
        "--degree",
        "1..5",
        "--seed",
        "9",
    ];
    let text = egsolve(&random);
    assert!(text.status.success(), "{}", stderr(&text));
    let egb_path = p("r.egb");
    let mut to_egb = random.to_vec();
    to_egb.extend(["--to", "egb", "-o", &egb_path]);
    assert!(egsolve(&to_egb).status.success());
    let back = egsolve(&["convert", &p("r.egb"), "--to", "mpg"]);
    assert!(
        back.status.success() && back.stdout == text.stdout,
        "{}",
        stderr(&back)
    );
    let one_thread = Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args(random)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(
        one_thread.stdout == text.stdout,
        "one thread, the same game"
    );
    let parity = egsolve(&[
        "gen",
        "parity",
        "--vertices",
        "50",
        "--priorities",
        "5",
        "--seed",
        "2",
        "-o",
        &p("g.gm"),
    ]);
    assert!(parity.status.success());
    assert!(
        egsolve(&["solve", &p("g.gm"), "--output", "paritysol"])
            .status
            .success()
    );
}

#[test]
fn gen_family_writes_oinks_games() {
    let oink = Path::new("crates/core/tests/data/families");
    // Below the header (Oink writes the vertex count, egsolve the largest id) these come
    // out as Oink's tools write them, names included.
    for (name, file) in [
        ("counter-qpt", "counter_qpt_3.pg"),
        ("counter_rr", "counter_rr_3.pg"),
        ("counter-dp", "counter_dp_3.pg"),
        ("counter-symsi", "counter_symsi_3.pg"),
        ("counter_rob", "counter_rob_3.pg"),
    ] {
        let out = egsolve(&["gen", "family", name, "--n", "3"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let theirs = std::fs::read_to_string(oink.join(file)).unwrap();
        let body = |text: &str| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(body(&stdout(&out)), body(&theirs), "{name}");
    }
    // The two counters solve to Oink's winners (matched by vertex name).
    let dir = tempfile::tempdir().unwrap();
    let gm = dir.path().join("tc.gm");
    let gm = gm.to_str().unwrap();
    let out = egsolve(&["gen", "family", "tc", "--n", "4", "-o", gm]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(gm).unwrap();
    assert!(text.contains("\"Even-3-S-2\";"));
    let solved = egsolve(&["solve", gm, "--output", "paritysol"]);
    assert!(solved.status.success(), "{}", stderr(&solved));
    let ours = egsolve_core::format::read_paritysol(&solved.stdout[..]).unwrap();
    let theirs_sol = std::fs::File::open(oink.join("tc_4.paritysol")).unwrap();
    let theirs = egsolve_core::format::read_paritysol(theirs_sol).unwrap();
    let names = |path: &Path| {
        let game = egsolve_core::format::read_path(path, &Default::default()).unwrap();
        (0..game.arena.vertex_count() as u32)
            .map(|v| game.arena.name(v).unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let (our_names, their_names) = (names(Path::new(gm)), names(&oink.join("tc_4.pg")));
    let mut won: std::collections::HashMap<String, u8> = std::collections::HashMap::new();
    for (v, winner, _) in ours {
        won.insert(our_names[v as usize].clone(), winner);
    }
    for (v, winner, _) in theirs {
        assert_eq!(
            won[&their_names[v as usize]], winner,
            "{}",
            their_names[v as usize]
        );
    }
    // Other formats, and the sizes refused.
    let json = egsolve(&["gen", "family", "counter-ortl", "--n", "5", "--to", "json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(doc.to_string().contains("priorit"));
    for n in ["0", "100000"] {
        let out = egsolve(&["gen", "family", "two-counters", "--n", n]);
        assert_eq!(out.status.code(), Some(2), "--n {n}: {}", stderr(&out));
    }
}

/// `--parity-algorithm` picks the parity solver's algorithm; every one answers the two
/// counters with the same winners, certified, and the summary names it; an unknown name is
/// a usage error that lists the names.
#[test]
fn parity_algorithm_is_chosen_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let gm = dir.path().join("tc.gm");
    let gm = gm.to_str().unwrap();
    let out = egsolve(&["gen", "family", "tc", "--n", "5", "-o", gm]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut answers = Vec::new();
    for name in [
        "auto",
        "zielonka",
        "tangle-learning",
        "recursive-tangle-learning",
        "priority-promotion",
        "fixpoint-iteration",
    ] {
        let json = dir.path().join(format!("{name}.json"));
        let json = json.to_str().unwrap();
        let args = ["solve", gm, "--parity-algorithm", name, "-o", json];
        let out = egsolve(&args);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
        let named = doc["summary"]["algorithm"].as_str().unwrap().to_string();
        if name == "auto" {
            assert!(named.starts_with("auto("), "{named}");
        } else {
            assert_eq!(named, name);
        }
        assert_eq!(doc["summary"]["backend"], "parity");
        let check = egsolve(&["check", gm, json]);
        assert!(check.status.success(), "{name}: {}", stderr(&check));
        let winners = vertex_numbers(&doc, "winner");
        answers.push(winners);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
    let out = egsolve(&["solve", gm, "--parity-algorithm", "fpi"]);
    assert_fails_with(&out, 2, "recursive-tangle-learning");
    let help = egsolve(&["solve", "--help"]);
    assert!(
        stdout(&help).contains("--parity-algorithm"),
        "{}",
        stdout(&help)
    );
}

#[test]
fn egb_converts_solves_checks_and_reports_damage_by_offset() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let game = common::shared_data().join("parity/Hanoi_ndisks=8_eventually_done.gm.gz");
    let game = game.to_str().unwrap();
    let out = egsolve(&["convert", game, "--to", "egb", "-o", &p("h.egb")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = std::fs::read(p("h.egb")).unwrap();
    assert!(egsolve_core::format::egb::is_egb(&bytes));
    // Solving the egb file (also compressed, under any name) answers as the text does.
    std::fs::write(p("h.egb.zst"), zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    let text = egsolve(&["solve", game, "--output", "paritysol"]);
    assert!(text.status.success(), "{}", stderr(&text));
    for file in [p("h.egb"), p("h.egb.zst")] {
        let binary = egsolve(&["solve", &file, "--output", "paritysol"]);
        assert!(binary.status.success(), "{}", stderr(&binary));
        // The same winners (the strategies are certified ones of either solve).
        assert!(
            paritysol_winners(&binary) == paritysol_winners(&text),
            "{file}: answers differ"
        );
    }
    let out = egsolve(&["solve", &p("h.egb"), "-o", &p("h.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = egsolve(&["check", &p("h.egb"), &p("h.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Back to text: the same .mpg as from the original.
    let a = egsolve(&["convert", game, "--to", "mpg"]);
    let b = egsolve(&["convert", &p("h.egb"), "--to", "mpg"]);
    assert!(a.status.success() && a.stdout == b.stdout);
    // A damaged copy: exit 3, the byte offset, what to do.
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    std::fs::write(p("bad.egb"), &bad).unwrap();
    let out = egsolve(&["solve", &p("bad.egb")]);
    // The last byte is in the block table, which the header's checksum covers.
    assert_fails_with(&out, 3, "byte 56: the header's checksum");
    std::fs::write(p("cut.egb"), &bytes[..100]).unwrap();
    let out = egsolve(&["solve", &p("cut.egb")]);
    assert_fails_with(&out, 3, "byte 100: the file ends");
}

/// A binary answer to a regular file is written in parts at its offsets; to a pipe (no
/// offsets) in order: the same bytes either way.
#[test]
fn binary_answers_reach_files_and_pipes_alike() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.bin");
    let answers: Vec<Vec<u8>> = [file.to_str().unwrap(), "/dev/stdout"]
        .into_iter()
        .map(|to| {
            let out = egsolve(&[
                "solve",
                "examples/small.mpg",
                "--output",
                "binary",
                "-o",
                to,
            ]);
            assert!(out.status.success(), "{}", stderr(&out));
            out.stdout
        })
        .collect();
    let written = std::fs::read(&file).unwrap();
    assert_eq!(&written[..8], b"EGSRESLT");
    assert!(answers[0].is_empty());
    assert_eq!(answers[1], written);
}

/// A large binary answer to a new file goes into an unnamed file given its space while the
/// game is solved, named once written (`src/cli/prepared_output.rs`): the same bytes as
/// through a pipe and as into an existing file; a solve that fails leaves no file behind.
#[test]
fn a_large_binary_answer_to_a_new_file_is_the_streamed_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    // 1.5 M vertices: an answer of 18 MB, above the size from which the file is prepared.
    let generated = egsolve(&[
        "gen",
        "random",
        "--vertices",
        "1500000",
        "--degree",
        "3..3",
        "--weights=-9..9",
        "--player1",
        "10",
        "--seed",
        "11",
        "--to",
        "egb",
        "-o",
        &p("g.egb"),
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let game = p("g.egb");
    let solve = |to: &str, more: &[&str]| {
        let mut args = vec![
            "solve",
            &game,
            "--backend",
            "cpu",
            "--output",
            "binary",
            "-o",
            to,
        ];
        args.extend(more);
        Command::new(env!("CARGO_BIN_EXE_egsolve"))
            .args(&args)
            .env("EGSOLVE_LOG", "egsolve=debug")
            .output()
            .expect("run egsolve")
    };
    let prepared = solve(&p("new.bin"), &[]);
    assert!(prepared.status.success(), "{}", stderr(&prepared));
    // This test's folder has unnamed files and `fallocate` (ext4, tmpfs): the file was
    // prepared, not written as a new one.
    assert!(
        stderr(&prepared).contains("the answer's file prepared"),
        "{}",
        stderr(&prepared)
    );
    let streamed = solve("/dev/stdout", &[]);
    assert!(streamed.status.success(), "{}", stderr(&streamed));
    let written = std::fs::read(p("new.bin")).unwrap();
    assert_eq!(written.len(), 32 + 12 * 1_500_000);
    assert!(
        written == streamed.stdout,
        "prepared file differs from the stream"
    );
    // Into the existing file (not prepared: it is replaced only once the answer is there).
    let again = solve(&p("new.bin"), &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stderr(&again).contains("the answer's file prepared"));
    assert!(std::fs::read(p("new.bin")).unwrap() == written);
    let failed = solve(&p("late.bin"), &["--timeout", "0"]);
    assert_eq!(failed.status.code(), Some(4), "{}", stderr(&failed));
    assert!(!Path::new(&p("late.bin")).exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// A solve that hands its exit's teardown to a child (`src/cli/detached_exit.rs`, forced
/// here for a small game) answers exactly as one that does not. The child, kept 5 s after
/// the process has gone, holds none of the caller's pipes (the output ends at once) and is
/// still there when the caller has its answer; then it ends.
#[test]
fn a_solve_handing_its_teardown_to_a_child_answers_the_same() {
    const LINGER_MS: u64 = 5_000;
    let solve = |detached: &str| {
        Command::new(env!("CARGO_BIN_EXE_egsolve"))
            .args(["solve", "examples/small.mpg", "--output", "text"])
            .env("EGSOLVE_DETACHED_EXIT", detached)
            .env("EGSOLVE_DETACHED_EXIT_LINGER_MS", LINGER_MS.to_string())
            .env("EGSOLVE_LOG", "egsolve::cli::detached_exit=debug")
            .env("NO_COLOR", "1")
            .output()
            .expect("run egsolve")
    };
    let inline = solve("0");
    assert!(inline.status.success(), "{}", stderr(&inline));
    assert!(!stderr(&inline).contains("handed to a child"));
    let start = std::time::Instant::now();
    let detached = solve("1");
    let answered = start.elapsed();
    assert!(detached.status.success(), "{}", stderr(&detached));
    assert!(!detached.stdout.is_empty() && detached.stdout == inline.stdout);
    // The pipes ended with the process, not with the lingering child.
    assert!(
        answered.as_millis() < u128::from(LINGER_MS) * 4 / 5,
        "the caller waited {answered:?}"
    );
    let log = stderr(&detached);
    let pid: u32 = log
        .split("handed to a child")
        .nth(1)
        .and_then(|rest| rest.split("pid=").nth(1))
        .map(|rest| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("no child's pid in the log: {log}"));
    // Gone, or a zombie waiting for whoever adopted it: either way it has exited.
    let ended = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
    };
    assert!(!ended(), "the child {pid} did not outlive the process");
    while !ended() {
        assert!(
            start.elapsed().as_secs() < 30,
            "the teardown child {pid} is still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn bad_input_exits_with_its_code() {
    // A malformed file (exit 3, line and column): `snapshots::malformed_files_are_named_with_line_and_column`.
    let out = egsolve(&["solve", "does/not/exist.mpg"]);
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    // An energy game on the parity solver: bad input (3), naming the backends that solve it.
    let out = egsolve(&["solve", "examples/small.mpg", "--backend", "parity"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = egsolve(&["solve", "examples/small.mpg", "--backend", "quantum"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(Path::new("examples/small.mpg").exists());
}

#[test]
fn timeout_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let climb = dir.path().join("climb.mpg");
    let out = egsolve(&[
        "gen",
        "climb",
        "--length",
        "2000",
        "--exit",
        "1000000",
        "-o",
        climb.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let out = egsolve(&[
        "solve",
        climb.to_str().unwrap(),
        "--backend",
        "reference",
        "--timeout",
        "0.2",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
}

/// A parity game beyond the energy reduction (100 priorities): `auto` answers it with the
/// parity solver (winners and strategies, no credits), `check` certifies the answer and
/// rejects a tampered one, `paritysol` works, text output and energy backends refuse it
/// clearly, and it converts to JSON but not to `.mpg`.
#[test]
fn parity_games_beyond_the_reduction_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    gen_parity(3000, 99, 9, &p("g.gm"));
    let out = egsolve(&["solve", &p("g.gm"), "-o", &p("s.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p("s.json")).unwrap()).unwrap();
    let summary = &doc["summary"];
    assert_eq!(summary["backend"], "parity");
    assert_eq!(summary["credits_computed"], false);
    assert_eq!(summary["parity"]["priorities"], 100);
    assert_eq!(summary["parity"]["reduction_fits"], false);
    let first = &doc["vertices"][0];
    assert!(
        first.get("credit").is_none() && first.get("winner").is_some(),
        "{first}"
    );
    let out = egsolve(&["check", &p("g.gm"), &p("s.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("highest priority"),
        "{}",
        stdout(&out)
    );

    // Claim the other winner for vertex 0: rejected, naming where.
    let winner = first["winner"].as_u64().unwrap();
    let text = std::fs::read_to_string(p("s.json")).unwrap().replacen(
        &format!("{{\"id\": 0, \"winner\": {winner}"),
        &format!("{{\"id\": 0, \"winner\": {}", 1 - winner),
        1,
    );
    std::fs::write(p("bad.json"), text).unwrap();
    let out = egsolve(&["check", &p("g.gm"), &p("bad.json")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let sol = egsolve(&["solve", &p("g.gm"), "--output", "paritysol"]);
    assert!(sol.status.success());
    let lines = egsolve_core::format::read_paritysol(&sol.stdout[..]).unwrap();
    assert_eq!(lines.len(), 3000);
    assert_eq!(u64::from(lines[0].1), winner);

    for args in [
        vec!["solve", &p("g.gm"), "--output", "text"],
        vec!["solve", &p("g.gm"), "--backend", "cpu"],
        vec!["solve", "examples/small.mpg", "--backend", "parity"],
        vec!["convert", &p("g.gm"), "--to", "mpg"],
    ] {
        let out = egsolve(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("parity"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = egsolve(&["convert", &p("g.gm"), "--to", "json", "-o", &p("g.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = egsolve(&[
        "solve",
        &p("g.json"),
        "--backend",
        "parity",
        "--output",
        "paritysol",
    ]);
    // The same winners (strategies are certified ones and may differ between two solves:
    // the portfolio's first search to finish answers).
    assert_eq!(
        paritysol_winners(&again),
        paritysol_winners(&sol),
        "the JSON copy has the same answer"
    );
}

/// A parity game whose reduction fits: `auto` answers it with the parity solver (winners
/// and strategies, no credits) unless `--credits` asks for the reduction's credits; text
/// output without credits is refused, naming `--credits`; both answers agree on the
/// winners and certify.
#[test]
fn parity_games_get_winners_by_default_and_credits_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    gen_parity(500, 4, 5, &p("g.gm"));
    let summary_of = |args: &[&str]| {
        let out = egsolve(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let natural = summary_of(&["solve", &p("g.gm")]);
    assert_eq!(natural["summary"]["credits_computed"], false);
    assert_eq!(natural["summary"]["backend"], "parity");
    assert_eq!(natural["summary"]["parity"]["reduction_fits"], true);
    let credits = summary_of(&["solve", &p("g.gm"), "--credits"]);
    assert_eq!(credits["summary"]["credits_computed"], true);
    assert_eq!(credits["summary"]["backend"], "auto");
    assert_eq!(
        vertex_numbers(&natural, "winner"),
        vertex_numbers(&credits, "winner")
    );

    let text = egsolve(&["solve", &p("g.gm"), "--output", "text"]);
    assert_fails_with(&text, 3, "--credits");
    let text = egsolve(&["solve", &p("g.gm"), "--output", "text", "--credits"]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert_eq!(stdout(&text).lines().count(), 500);

    for (name, doc) in [("natural", &natural), ("credits", &credits)] {
        std::fs::write(p(&format!("{name}.json")), doc.to_string()).unwrap();
        let out = egsolve(&["check", &p("g.gm"), &p(&format!("{name}.json"))]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
}

/// Arguments that make no sense are usage errors (2) naming what to give, never a panic nor
/// a false answer: a time limit that is negative, infinite or not a number (it had ended
/// every solve at once as "past its time limit", or panicked converting it), a generated
/// game of no vertices, a family too large for 64 bits (its size had wrapped around).
#[test]
fn senseless_arguments_are_usage_errors() {
    let small = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/small.mpg");
    for timeout in ["inf", "-1", "nan", "1e300", "2e9"] {
        let arg = format!("--timeout={timeout}");
        let out = egsolve(&["solve", small, &arg]);
        assert_eq!(out.status.code(), Some(2), "{timeout}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not a time limit"),
            "{}",
            stderr(&out)
        );
    }
    let out = egsolve(&["solve", small, "--timeout", "30", "--output", "text"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = egsolve(&["gen", "random", "--vertices", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = egsolve(&["gen", "family", "two-counters", "--n", "3000000000"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("more than 1.8·10^19 vertices"),
        "{}",
        stderr(&out)
    );
}

/// An energy game's answer is written in PGSolver's `paritysol` too (winners and the
/// winner's moves), as the service's `format=paritysol` serves it: the same winners as the
/// JSON document.
#[test]
fn an_energy_game_answer_writes_as_paritysol() {
    let small = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/small.mpg");
    let sol = egsolve(&["solve", small, "--output", "paritysol"]);
    assert!(sol.status.success(), "{}", stderr(&sol));
    let winners = paritysol_winners(&sol);
    let json = egsolve(&["solve", small, "--output", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let w0 = doc["summary"]["w0"].as_u64().unwrap() as usize;
    assert_eq!(winners.len(), 6);
    assert_eq!(winners.iter().filter(|(_, w)| *w == 0).count(), w0);
    for record in doc["vertices"].as_array().unwrap() {
        let v = record["id"].as_u64().unwrap() as u32;
        let winner = winners.iter().find(|(id, _)| *id == v).unwrap().1;
        assert_eq!(u64::from(winner), record["winner"], "vertex {v}: {record}");
    }
}
