//! The client commands end to end, as processes against a real `egsolve serve`:
//! `submit --wait -o` writes a result that `egsolve check` certifies; `submit` then
//! `status --wait`, `result` (its binary form is the bytes of `solve --output binary`), `jobs`
//! (one line per job); `cancel` of a long job; `submit` of several files (a result each,
//! also from a server from before results in the batch's POST); a bearer token from the
//! environment; clear failures for an unknown job and for no server.

use crate::common;
use crate::packaging_support;
use crate::service_support::vertex_numbers;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use packaging_support::{Server, egsolve, run_client as client, run_egsolve};

fn shared(relative: &str) -> PathBuf {
    common::shared_data().join(relative)
}

/// Runs the client with `server`'s URL, asserting it exits 0; its standard output.
fn client_ok(server: &Server, args: &[&str]) -> String {
    let (code, stdout, stderr) = client(server, args);
    assert_eq!(code, 0, "{stderr}");
    stdout
}

/// Runs `egsolve ARGS`, asserting it succeeds; its standard output.
fn egsolve_ok(args: &[&str]) -> String {
    let (status, stdout, stderr) = run_egsolve(args);
    assert!(status.success(), "{stderr}");
    stdout
}

const GAME: &str = "parity/ABP_datasize=2_infinitely_often_lost_mcrl2example.gm.gz";

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn submit_wait_writes_a_result_that_check_certifies() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(&data.path().join("store"), &[]);
    let game = shared(GAME);
    let game = game.to_str().unwrap();
    let out = data.path().join("answer.json");
    let out = out.to_str().unwrap();
    let (code, _, stderr) = client(
        &server,
        &[
            "submit",
            game,
            "--return",
            "strategies",
            "--wait",
            "-o",
            out,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("succeeded"), "status line: {stderr}");
    let answer = json(&std::fs::read_to_string(out).unwrap());
    assert!(answer["job"].is_string(), "the job id is in the result");
    assert_eq!(answer["vertices"].as_array().unwrap().len(), 119);
    let (status, report, stderr) = run_egsolve(&["check", game, out]);
    assert!(status.success(), "egsolve check: {report}{stderr}");
}

#[test]
fn submit_status_result_jobs_and_cancel() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(&data.path().join("store"), &["--cpu-workers", "1"]);
    let game = shared(GAME);
    // A parity game: `--credits` asks for the reduction's credits (text results need them).
    let id = client_ok(&server, &["submit", game.to_str().unwrap(), "--credits"]);
    let id = id.trim().to_string();
    assert_eq!(id.len(), 36, "a job id on stdout: {id}");

    let started = Instant::now();
    let job = loop {
        let out = client_ok(&server, &["status", &id, "--wait", "5"]);
        let job = json(&out);
        if job["state"] == "succeeded" {
            break job;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{job}");
    };
    assert_eq!(job["options"]["credits"], true, "{job}");
    assert_eq!(job["summary"]["credits_computed"], true, "{job}");
    assert_eq!(job["id"], id.as_str());

    let text = data.path().join("answer.txt");
    client_ok(
        &server,
        &[
            "result",
            &id,
            "--format",
            "text",
            "-o",
            text.to_str().unwrap(),
        ],
    );
    assert_eq!(std::fs::read_to_string(&text).unwrap().lines().count(), 119);
    let some = client_ok(&server, &["result", &id, "--vertices", "0,17"]);
    let ids = vertex_numbers(&json(&some), "id");
    assert_eq!(ids, [0, 17]);

    // The binary result is the bytes `egsolve solve --output binary` writes.
    let served = data.path().join("answer.bin");
    client_ok(
        &server,
        &[
            "result",
            &id,
            "--format",
            "binary",
            "-o",
            served.to_str().unwrap(),
        ],
    );
    let local = data.path().join("local.bin");
    egsolve_ok(&[
        "solve",
        game.to_str().unwrap(),
        "--credits",
        "--output",
        "binary",
        "-o",
        local.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(&served).unwrap();
    let local = std::fs::read(&local).unwrap();
    // Header and credits as the CLI writes them; the strategies are certified winning ones
    // of either solve, which may differ (the accelerated solver's seed is timed).
    assert_eq!(bytes[..32 + 8 * 119], local[..32 + 8 * 119]);
    assert_eq!(&bytes[..8], b"EGSRESLT");
    assert_eq!(bytes.len(), 32 + 12 * 119);
    assert_eq!(local.len(), bytes.len());

    // A long solve, cancelled while it runs.
    let climb = data.path().join("climb.mpg");
    egsolve_ok(&[
        "gen",
        "climb",
        "--length",
        "3000",
        "--exit",
        "20",
        "-o",
        climb.to_str().unwrap(),
    ]);
    let slow = client_ok(
        &server,
        &["submit", climb.to_str().unwrap(), "--backend", "reference"],
    );
    let slow = slow.trim().to_string();
    let cancelled = client_ok(&server, &["cancel", &slow]);
    assert_eq!(json(&cancelled)["state"], "cancelled");

    // One line per job, newest first: `ID STATE …`.
    let listed = client_ok(&server, &["jobs"]);
    let rows: Vec<(&str, &str)> = listed
        .lines()
        .map(|l| {
            let mut words = l.split_whitespace();
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect();
    assert_eq!(
        rows,
        [(slow.as_str(), "cancelled"), (id.as_str(), "succeeded")],
        "{listed}"
    );
    let (code, only, _) = client(&server, &["jobs", "--state", "cancelled"]);
    assert_eq!(code, 0);
    assert_eq!(only.lines().count(), 1, "{only}");
    // The same file again is answered from that job; `--no-reuse` solves it anew.
    for (flag, reused) in [(None, true), (Some("--no-reuse"), false)] {
        let mut args = vec!["submit", game.to_str().unwrap(), "--credits"];
        args.extend(flag);
        let again = client_ok(&server, &args);
        let view = json(&client_ok(
            &server,
            &["status", again.trim(), "--wait", "30"],
        ));
        assert_eq!(view["reused"], reused, "{flag:?}: {view}");
    }
}

#[test]
fn submit_many_files_waits_for_each_and_writes_each_result() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(&data.path().join("store"), &["--cpu-workers", "2"]);
    let mut files = vec![shared(GAME)];
    files.extend((1..=4).map(|seed| random_game(data.path(), seed)));
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let results = data.path().join("results");
    // As one batch (the default: one request, one results stream), and one request each.
    for way in [None, Some("--no-batch")] {
        let mut args = vec![
            "submit",
            "--wait",
            "--in-flight",
            "3",
            "-o",
            results.to_str().unwrap(),
        ];
        args.extend(way);
        args.extend(&names);
        let out = client_ok(&server, &args);
        check_each_result(&out, &files, &results);
    }
    // A malformed file in a batch: refused with its line, the others written, exit 1.
    let bad = data.path().join("bad.mpg");
    std::fs::write(&bad, "2;\n0 MAX 1:-1;\n1 MIN 0:x;\n").unwrap();
    let (code, out, stderr) = client(
        &server,
        &[
            "submit",
            "--wait",
            "-o",
            results.to_str().unwrap(),
            names[1],
            bad.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{out}{stderr}");
    assert!(
        stderr.contains("bad.mpg") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert!(
        out.contains(" succeeded ") && out.lines().count() == 1,
        "{out}"
    );
    check_more_files(&server, &names, &files, &results, data.path());
}

/// A random game of 300 vertices from `seed`, written as `random-SEED.mpg` in `dir`.
fn random_game(dir: &std::path::Path, seed: u64) -> PathBuf {
    let file = dir.join(format!("random-{seed}.mpg"));
    let seed = seed.to_string();
    let path = file.to_str().unwrap();
    egsolve_ok(&[
        "gen",
        "random",
        "--vertices",
        "300",
        "--degree",
        "3",
        "--seed",
        &seed,
        "-o",
        path,
    ]);
    file
}

/// `submit --wait -o DIR FILE…` against a server from before `POST /v1/batches?results=`
/// (this server behind a proxy that refuses the parameter as that server's query check
/// did): the batch is sent again without it and the results come from the batch's results
/// stream, each written as before.
#[test]
fn submit_many_files_works_with_a_server_from_before_results_in_the_post() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(&data.path().join("store"), &[]);
    let older = older_server(server.url());
    let files: Vec<PathBuf> = (5..=6).map(|seed| random_game(data.path(), seed)).collect();
    let results = data.path().join("results");
    let mut args = vec!["submit", "--wait", "-o", results.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let output = egsolve()
        .args(&args)
        .env("EGSOLVE_SERVER", &older)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{out}{err}");
    check_each_result(&out, &files, &results);
}

/// A proxy to `upstream` that answers `POST /v1/batches?results=…` as a server from before
/// that parameter did (`400 invalid-parameter`, naming it) and passes everything else on.
fn older_server(upstream: String) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let client = reqwest::Client::new();
            let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
                pass_on(client.clone(), upstream.clone(), request)
            });
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    url
}

async fn pass_on(
    client: reqwest::Client,
    upstream: String,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = request.into_parts();
    let query = parts.uri.query().unwrap_or("");
    if parts.uri.path() == "/v1/batches" && query.split('&').any(|p| p.starts_with("results=")) {
        let problem = serde_json::json!({
            "type": "urn:egsolve:problem:invalid-parameter",
            "title": "Invalid parameter",
            "status": 400,
            "detail": "unknown parameter(s) [\"results\"]; this endpoint takes backend, \
                       priority, time_limit, format, return, credits",
        });
        let headers = [("content-type", "application/problem+json")];
        return (
            axum::http::StatusCode::BAD_REQUEST,
            headers,
            problem.to_string(),
        )
            .into_response();
    }
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut forward = client
        .request(parts.method, format!("{upstream}{path}"))
        .body(body);
    for (name, value) in &parts.headers {
        if name != "host" && name != "content-length" {
            forward = forward.header(name, value);
        }
    }
    let answer = forward.send().await.unwrap();
    let (status, mut headers) = (answer.status(), answer.headers().clone());
    headers.remove("content-length");
    headers.remove("transfer-encoding");
    let mut response = (status, answer.bytes().await.unwrap()).into_response();
    response.headers_mut().extend(headers);
    response
}

/// One line per file, `ID succeeded FILE`, and each result under its file's name.
fn check_each_result(out: &str, files: &[PathBuf], results: &std::path::Path) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), files.len(), "{out}");
    for (line, file) in lines.iter().zip(files) {
        let words: Vec<&str> = line.splitn(3, ' ').collect();
        assert_eq!(words[0].len(), 36, "a job id first: {line}");
        assert_eq!(words[1], "succeeded", "{line}");
        assert_eq!(words[2], file.to_str().unwrap());
        // Each result under its file's name, the answer to that file's game.
        let name = file.file_name().unwrap().to_str().unwrap();
        let result = json(&std::fs::read_to_string(results.join(format!("{name}.json"))).unwrap());
        assert_eq!(result["job"], words[0]);
        let vertices = result["vertices"].as_array().unwrap().len();
        assert_eq!(
            vertices,
            if name.ends_with(".mpg") { 300 } else { 119 },
            "{name}"
        );
    }
}

/// Several files without --wait, two files of one name, --wait without a directory.
fn check_more_files(
    server: &Server,
    names: &[&str],
    files: &[PathBuf],
    results: &std::path::Path,
    data: &std::path::Path,
) {
    let server = &server;
    // Without --wait: one id per file, nothing waited for.
    let (code, out, _) = client(server, &["submit", names[1], names[2]]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 2, "{out}");
    // Two files of one name would write one result: refused before anything is sent.
    let twin = data.join("twin");
    std::fs::create_dir(&twin).unwrap();
    let same = twin.join("random-1.mpg");
    std::fs::copy(&files[1], &same).unwrap();
    let (code, _, stderr) = client(
        server,
        &[
            "submit",
            "--wait",
            "-o",
            results.to_str().unwrap(),
            names[1],
            same.to_str().unwrap(),
        ],
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("two files are named random-1.mpg"),
        "{stderr}"
    );
    // --wait with several files needs a directory.
    let (code, _, stderr) = client(server, &["submit", "--wait", names[1], names[2]]);
    assert_ne!(code, 0);
    assert!(stderr.contains("-o DIR"), "{stderr}");
}

#[test]
fn tokens_come_from_the_environment_and_failures_are_clear() {
    let data = tempfile::tempdir().unwrap();
    let tokens = data.path().join("tokens");
    let tokens = tokens.to_str().unwrap();
    let token = egsolve_ok(&["token", "add", "alice", "--tokens-file", tokens]);
    let token = token.trim().to_string();
    let server = Server::start(
        &data.path().join("store"),
        &["--auth", "true", "--tokens-file", tokens],
    );
    let game = shared(GAME);
    let (code, _, stderr) = client(&server, &["submit", game.to_str().unwrap()]);
    assert_ne!(code, 0, "no token must be refused");
    assert!(
        stderr.contains("401") || stderr.to_lowercase().contains("token"),
        "{stderr}"
    );
    let output = egsolve()
        .args(["submit", game.to_str().unwrap()])
        .env("EGSOLVE_SERVER", server.url())
        .env("EGSOLVE_TOKEN", &token)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let unknown = "01a200f7-d182-7396-8152-480efd9f45f5";
    let output = egsolve()
        .args(["status", unknown])
        .env("EGSOLVE_SERVER", server.url())
        .env("EGSOLVE_TOKEN", &token)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not found") || stderr.contains("404"),
        "{stderr}"
    );

    let port = packaging_support::free_port();
    let output = egsolve()
        .args(["status", unknown])
        .env("EGSOLVE_SERVER", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&port.to_string()) || stderr.contains("connect"),
        "{stderr}"
    );

    // A result format the server has no name for is refused before anything is sent.
    let output = egsolve()
        .args([
            "submit",
            "--wait",
            "--result-format",
            "txt",
            "a.mpg",
            "b.mpg",
        ])
        .env("EGSOLVE_SERVER", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("paritysol"), "{stderr}");
}

/// The client's exit codes follow the README's table: a malformed arena the server refuses
/// is bad input (3), a file that cannot be read or a directory 74, an unknown job bad usage
/// (2), no server 5; and a second server on the same data directory refuses to start (5)
/// without announcing a port or touching the first one's jobs.
#[test]
fn client_exit_codes_follow_the_table_and_a_data_directory_has_one_server() {
    let data = tempfile::tempdir().unwrap();
    let store = data.path().join("store");
    let server = Server::start(&store, &[]);
    let malformed = data.path().join("cut.mpg");
    std::fs::write(&malformed, "1;\n0 MAX 1:2;\n1 MIN").unwrap();
    let missing = data.path().join("missing.mpg");
    let cases: [(&[&str], i32); 4] = [
        (&["submit", malformed.to_str().unwrap()], 3),
        (&["submit", missing.to_str().unwrap()], 74),
        (&["submit", data.path().to_str().unwrap()], 74),
        (&["status", "01a200f7-d182-7396-8152-480efd9f45f5"], 2),
    ];
    for (args, expected) in cases {
        let (code, _, stderr) = client(&server, args);
        assert_eq!(code, expected, "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.is_empty(),
            "{stderr}"
        );
    }
    let (code, _, stderr) = client(&server, &["submit", data.path().to_str().unwrap()]);
    assert!(stderr.contains("is a directory"), "{code}: {stderr}");

    let (status, stdout, stderr) = run_egsolve(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data-dir",
        store.to_str().unwrap(),
    ]);
    assert_eq!(status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("is in use by another egsolve process"),
        "{stderr}"
    );
    // It never announced itself: scripts wait for the "listening on" line.
    assert!(!stdout.contains("listening"), "{stdout}");
    // The first server still answers.
    let id = client_ok(&server, &["submit", shared(GAME).to_str().unwrap()]);
    client_ok(&server, &["status", id.trim(), "--wait", "30"]);
}
