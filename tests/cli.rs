//! The `egsolve` binary end to end: solve → check, outputs, convert round trip, gen, and the
//! documented exit codes for bad input, rejected solutions and usage errors.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn egsolve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_egsolve"))
        .args(args)
        .output()
        .expect("run egsolve")
}

fn stdout(o: &Output) -> String {
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
fn text_output_lists_credits_in_id_order() {
    let out = egsolve(&["solve", "examples/small.mpg", "--output", "text"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out), "0 5\n1 8\n2 0\n3 4\n4 T\n5 T\n");
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
        assert!(binary.stdout == text.stdout, "{file}: answers differ");
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
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // The last byte is in the block table, which the header's checksum covers.
    assert!(
        stderr(&out).contains("byte 56: the header's checksum"),
        "{}",
        stderr(&out)
    );
    std::fs::write(p("cut.egb"), &bytes[..100]).unwrap();
    let out = egsolve(&["solve", &p("cut.egb")]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("byte 100: the file ends"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_input_exits_3_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.mpg");
    std::fs::write(&bad, "arena 1;\n0 MAX 1:2;\n1 MAXI 0:1;\n").unwrap();
    let out = egsolve(&["solve", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("line 3"), "{}", stderr(&out));
    let out = egsolve(&["solve", "does/not/exist.mpg"]);
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    let out = egsolve(&["solve", "examples/small.mpg", "--output", "paritysol"]);
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
    let generated = egsolve(&[
        "gen",
        "parity",
        "--vertices",
        "3000",
        "--priorities",
        "99",
        "--degree",
        "3",
        "--seed",
        "9",
        "-o",
        &p("g.gm"),
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
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
    assert_eq!(
        again.stdout, sol.stdout,
        "the JSON copy has the same answer"
    );
}
