//! The output documents users read, pinned as snapshots (`expect-test`): the text, JSON and
//! `paritysol` answers of small games, the message of a malformed file, and the service's
//! problem documents. A change to one of them shows as a diff here; after an intended
//! change, `UPDATE_EXPECT=1 cargo test --release --test integration snapshots` rewrites the
//! expectations in place (review the diff before committing it). Timings, which differ in
//! every run, are replaced by `"<seconds>"` before the comparison.

use crate::cli::{egsolve, stdout};
use crate::service_parts::create;
use crate::service_support::{Server, data_file};

use expect_test::expect;
use serde_json::Value;

/// `document` pretty-printed with every timing replaced (keys ending in `_seconds`, and the
/// `phases` record of seconds).
fn without_timings(mut document: Value) -> String {
    fn scrub(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    if key.ends_with("_seconds") || key == "phases" {
                        *field = Value::from("<seconds>");
                    } else {
                        scrub(field);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    scrub(&mut document);
    serde_json::to_string_pretty(&document).unwrap()
}

#[test]
fn the_text_answer_lists_credits_in_id_order() {
    let out = egsolve(&["solve", "examples/small.mpg", "--output", "text"]);
    assert!(out.status.success());
    expect![[r#"
        0 5
        1 8
        2 0
        3 4
        4 T
        5 T
    "#]]
    .assert_eq(&stdout(&out));
}

#[test]
fn the_json_answer() {
    let out = egsolve(&["solve", "examples/small.mpg", "--output", "json"]);
    assert!(out.status.success());
    let document: Value = serde_json::from_slice(&out.stdout).unwrap();
    expect![[r#"
        {
          "summary": {
            "algorithm": "accelerated-lifting",
            "backend": "auto",
            "bound": 12,
            "credits_computed": true,
            "edges": 10,
            "evaluations": 0,
            "initial": {
              "credit": 5,
              "vertex": 0,
              "winner": 0
            },
            "lifts": 35,
            "max_credit": 8,
            "phases": "<seconds>",
            "rounds": 0,
            "solve_seconds": "<seconds>",
            "strategy_seconds": "<seconds>",
            "vertices": 6,
            "w0": 4,
            "w1": 2
          },
          "vertices": [
            {
              "credit": 5,
              "id": 0,
              "strategy": 2,
              "winner": 0
            },
            {
              "credit": 8,
              "id": 1,
              "strategy": null,
              "winner": 0
            },
            {
              "credit": 0,
              "id": 2,
              "strategy": 2,
              "winner": 0
            },
            {
              "credit": 4,
              "id": 3,
              "strategy": 0,
              "winner": 0
            },
            {
              "credit": null,
              "id": 4,
              "strategy": 4,
              "winner": 1
            },
            {
              "credit": null,
              "id": 5,
              "strategy": 5,
              "winner": 1
            }
          ]
        }"#]]
    .assert_eq(&without_timings(document));
}

#[test]
fn the_paritysol_answer_of_a_small_parity_game() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("small.gm");
    std::fs::write(
        &game,
        "parity 7;\n0 1 1 3,6;\n1 4 1 2;\n2 4 1 5,4;\n3 4 0 7,3;\n4 0 1 4;\n5 1 0 6,6;\n6 0 0 4;\n7 0 0 4,6;\n",
    )
    .unwrap();
    let out = egsolve(&["solve", game.to_str().unwrap(), "--output", "paritysol"]);
    assert!(out.status.success());
    expect![[r#"
        paritysol 8;
        0 0;
        1 0;
        2 0;
        3 0 3;
        4 0;
        5 0 6;
        6 0 4;
        7 0 4;
    "#]]
    .assert_eq(&stdout(&out));
}

#[test]
fn malformed_files_are_named_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let message = |text: &str| {
        let bad = dir.path().join("bad.mpg");
        std::fs::write(&bad, text).unwrap();
        let out = egsolve(&["solve", bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(3));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    expect![[r#"
        egsolve: line 1, column 3: found `MAX`, expected `;` ending the header `MAXID [EDGES];`; fix the file or check --format
    "#]]
    .assert_eq(&message("0 MAX 1 0:1;\n"));
    expect![[r#"
        egsolve: line 3, column 3: found owner `MAXI`, expected `MAX` (player 0, the energy player) or `MIN` (player 1)
    "#]]
    .assert_eq(&message("arena 1;\n0 MAX 1:2;\n1 MAXI 0:1;\n"));
}

/// The problem documents (RFC 9457) of a malformed upload, an unknown job and an upload in
/// parts asked for too early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_problem_documents() {
    let server = Server::start(|_| {}).await;
    let malformed = server.submit(b"0 MAX 1 0:1;\n".to_vec(), "", None).await;
    expect![[r#"
        {
          "column": 3,
          "detail": "malformed arena: line 1, column 3: found `MAX`, expected `;` ending the header `MAXID [EDGES];`; fix the file or check the format parameter",
          "line": 1,
          "status": 422,
          "title": "Malformed arena",
          "type": "urn:egsolve:problem:malformed-arena"
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&malformed.json()).unwrap());
    let unknown = server
        .get("/v1/jobs/01a22600-0000-7000-8000-000000000000", None)
        .await;
    expect![[r#"
        {
          "detail": "no job with id 01a22600-0000-7000-8000-000000000000",
          "status": 404,
          "title": "Job not found",
          "type": "urn:egsolve:problem:job-not-found"
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&unknown.json()).unwrap());
    let game = std::fs::read(data_file("energy/clique_500_cp4.mpg.gz")).unwrap();
    let made = create(&server, game.len(), 65536).await;
    let id = made.json()["id"].as_str().unwrap().to_string();
    let early = server
        .submit_with_headers(
            serde_json::json!({ "upload": id }).to_string().into_bytes(),
            "",
            None,
            &[("content-type", "application/vnd.egsolve.upload+json")],
        )
        .await;
    expect![[r#"
        {
          "detail": "the upload is missing 3 part(s), first [0, 1, 2]: send them, then ask for the job again",
          "missing": [
            0,
            1,
            2
          ],
          "status": 409,
          "title": "Upload incomplete",
          "type": "urn:egsolve:problem:upload-incomplete"
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&early.json()).unwrap());
    server.stop().await;
}
