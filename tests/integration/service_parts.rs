//! Uploads in parts (`POST /v1/uploads`, `PUT /v1/uploads/{id}/parts/{n}`, then a job
//! naming the upload), end to end on both stores: a connection killed mid-part leaves
//! nothing counted and the part is sent again; damaged, short and conflicting parts are
//! refused without harm; parts sent twice are not doubled; a job asked for too early names
//! the missing parts; the job's answer equals a plain upload's; uploads survive a restart;
//! every limit has its own problem. Through the real binary, `egsolve submit` sends a file
//! in parts over several connections and writes the same answer as a plain upload.

use crate::packaging_support;
use crate::service_support;

use std::io::Write;
use std::time::Duration;

use base64::Engine as _;
use reqwest::Method;
use serde_json::Value;
use service_support::*;
use sha2::Digest;

const ENERGY: &str = "energy/clique_500_cp4.mpg.gz";
const MEDIA: &str = "application/vnd.egsolve.upload+json";
const PART: usize = 1 << 20;

fn digest(bytes: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bytes));
    format!("sha-256=:{encoded}:")
}

pub(crate) async fn create(server: &Server, size: usize, part_size: usize) -> Reply {
    let body = serde_json::json!({"size": size, "part_size": part_size}).to_string();
    server
        .call(
            Method::POST,
            "/v1/uploads",
            None,
            &[("content-type", "application/json")],
            Some(body.into_bytes()),
        )
        .await
}

async fn put_part(server: &Server, id: &str, number: usize, bytes: &[u8], digest: &str) -> Reply {
    server
        .call(
            Method::PUT,
            &format!("/v1/uploads/{id}/parts/{number}"),
            None,
            &[
                ("content-digest", digest),
                ("content-type", "application/octet-stream"),
            ],
            Some(bytes.to_vec()),
        )
        .await
}

async fn job_from(server: &Server, id: &str, query: &str) -> Reply {
    let body = serde_json::json!({ "upload": id }).to_string();
    server
        .submit_with_headers(body.into_bytes(), query, None, &[("content-type", MEDIA)])
        .await
}

/// Sends the first half of part `number` on a raw connection, then kills the connection.
fn send_half_and_kill(base: &str, id: &str, number: usize, part: &[u8]) {
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let head = format!(
        "PUT /v1/uploads/{id}/parts/{number} HTTP/1.1\r\nhost: {address}\r\ncontent-length: {}\r\ncontent-digest: {}\r\n\r\n",
        part.len(),
        digest(part)
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&part[..part.len() / 2]).unwrap();
    stream.flush().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    stream.shutdown(std::net::Shutdown::Both).unwrap();
}

/// Each vertex's credit in an answer document (`null`: player 1 wins).
fn credit_column(doc: &Value) -> Vec<Value> {
    let vertices = doc["vertices"].as_array().unwrap();
    vertices
        .iter()
        .map(|record| record["credit"].clone())
        .collect()
}

/// The credits of a finished job's answer.
async fn credits(server: &Server, job: &str) -> Vec<Value> {
    let done = server
        .wait_finished(job, None, Duration::from_secs(120))
        .await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let doc = server
        .get(&format!("/v1/jobs/{job}/result"), None)
        .await
        .json();
    credit_column(&doc)
}

fn upload_id(reply: &Reply) -> String {
    assert_eq!(reply.status, 201, "{}", reply.text());
    let id = reply.json()["id"].as_str().unwrap().to_string();
    assert_eq!(
        reply.headers["location"].to_str().unwrap(),
        format!("/v1/uploads/{id}")
    );
    id
}

/// A killed connection, damaged and conflicting parts, a job asked for too early, parts
/// sent twice; the answer equals a plain upload's, for plain text (stored as it came,
/// keyed by its parts) and for gzip (through the upload pipeline, keyed by content).
async fn parts_arrive_whole_or_not_at_all(engine: Engine) {
    let server = Server::start_on(engine, |config| {
        // Larger than this: stored as it came, not parsed at submission.
        config.inline_parse_bytes = 1 << 20;
    })
    .await;
    let packed = std::fs::read(data_file(ENERGY)).unwrap();
    let game = gunzip(&packed);
    let plain = server.submit_ok(game.clone(), "?backend=cpu", None).await;
    let expected = credits(&server, &plain).await;
    let plain_view = server.get(&format!("/v1/jobs/{plain}"), None).await.json();

    let id = upload_id(&create(&server, game.len(), PART).await);
    let parts: Vec<&[u8]> = game.chunks(PART).collect();
    assert!(parts.len() >= 4);
    let view = server.get(&format!("/v1/uploads/{id}"), None).await.json();
    assert_eq!(
        (view["parts"].as_u64(), view["state"].as_str()),
        (Some(parts.len() as u64), Some("receiving"))
    );

    // Killed mid-part: nothing counted; the part is then sent whole (the server may not
    // have noticed the dead connection yet: 409 with Retry-After meanwhile).
    let (base, killed_id, part1) = (server.base.clone(), id.clone(), parts[1].to_vec());
    tokio::task::spawn_blocking(move || send_half_and_kill(&base, &killed_id, 1, &part1))
        .await
        .unwrap();
    let view = server.get(&format!("/v1/uploads/{id}"), None).await.json();
    assert_eq!(view["received"], serde_json::json!([]), "{view}");
    let mut accepted = None;
    for _ in 0..50 {
        let reply = put_part(&server, &id, 1, parts[1], &digest(parts[1])).await;
        if reply.status == 409 {
            reply.assert_problem(409, "part-in-progress");
            assert_eq!(reply.headers["retry-after"], "1");
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        accepted = Some(reply);
        break;
    }
    let accepted = accepted.expect("the killed part was freed");
    assert_eq!(accepted.status, 200, "{}", accepted.text());
    assert_eq!(accepted.json()["bytes"], parts[1].len());
    assert_eq!(accepted.json()["digest"], digest(parts[1]));

    // Damaged: other bytes than the digest says; too short; no digest; no such part.
    let mut other = parts[0].to_vec();
    other[10] ^= 1;
    put_part(&server, &id, 0, &other, &digest(parts[0]))
        .await
        .assert_problem(400, "part-damaged");
    put_part(&server, &id, 0, &parts[0][1..], &digest(&parts[0][1..]))
        .await
        .assert_problem(400, "part-damaged");
    server
        .call(
            Method::PUT,
            &format!("/v1/uploads/{id}/parts/0"),
            None,
            &[],
            Some(parts[0].to_vec()),
        )
        .await
        .assert_problem(400, "invalid-upload");
    put_part(&server, &id, parts.len(), parts[0], &digest(parts[0]))
        .await
        .assert_problem(400, "invalid-upload");
    // Too early: the missing parts are named.
    let early = job_from(&server, &id, "?backend=cpu").await;
    early.assert_problem(409, "upload-incomplete");
    let missing: Vec<u64> = (0..parts.len() as u64).filter(|&n| n != 1).collect();
    assert_eq!(early.json()["missing"], serde_json::json!(missing));

    // The rest, at once, part 1 among them again: acknowledged, not doubled.
    let digests: Vec<String> = parts.iter().map(|part| digest(part)).collect();
    let sends = (0..parts.len()).map(|n| put_part(&server, &id, n, parts[n], &digests[n]));
    for reply in futures::future::join_all(sends).await {
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    put_part(&server, &id, 2, &other, &digest(&other))
        .await
        .assert_problem(409, "part-conflict");
    let view = server.get(&format!("/v1/uploads/{id}"), None).await.json();
    assert_eq!(view["state"], "complete", "{view}");

    let reply = job_from(&server, &id, "?backend=cpu").await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let job = reply.json();
    let hash = job["arena"]["sha256"].as_str().unwrap().to_string();
    assert_ne!(
        hash, plain_view["arena"]["sha256"],
        "a large plain file is keyed by its parts"
    );
    assert_eq!(
        credits(&server, job["id"].as_str().unwrap()).await,
        expected
    );
    let view = server.get(&format!("/v1/uploads/{id}"), None).await.json();
    assert_eq!(
        (view["state"].as_str(), view["arena"].as_str()),
        (Some("used"), Some(hash.as_str()))
    );
    put_part(&server, &id, 0, parts[0], &digest(parts[0]))
        .await
        .assert_problem(409, "upload-closed");
    // Asked again: another job on the same arena.
    let again = job_from(&server, &id, "?backend=cpu").await;
    assert_eq!(again.status, 202, "{}", again.text());
    assert_eq!(again.json()["arena"]["sha256"], hash);
    assert_eq!(
        server
            .delete(&format!("/v1/uploads/{id}"), None)
            .await
            .status,
        204
    );
    server
        .get(&format!("/v1/uploads/{id}"), None)
        .await
        .assert_problem(404, "upload-not-found");

    // A small egb in parts: stored as it came (its worker maps and checks it), keyed by
    // its parts, although text of its size would be parsed at submission: the same answer.
    let small = std::fs::read("examples/small.mpg").unwrap();
    let whole = server.submit_ok(small.clone(), "?backend=cpu", None).await;
    let read = egsolve_core::format::read_bytes(&small, &Default::default()).unwrap();
    let mut egb = Vec::new();
    egsolve_core::format::write_egb(&read, &mut egb).unwrap();
    assert!(egb.len() < 64 << 10);
    let id = upload_id(&create(&server, egb.len(), 64 << 10).await);
    assert_eq!(
        put_part(&server, &id, 0, &egb, &digest(&egb)).await.status,
        200
    );
    // Both CPU workers busy, so that no worker has parsed the job by the time its 202 is
    // written (a free one once did, in 0.3 ms, on a loaded CI machine).
    let blockers = [server.submit_blocker().await, server.submit_blocker().await];
    let reply = job_from(&server, &id, "?backend=cpu").await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let job = reply.json();
    assert_eq!(
        job["arena"]["vertices"],
        Value::Null,
        "not parsed at submission: {job}"
    );
    for blocker in blockers {
        let cancelled = server.delete(&format!("/v1/jobs/{blocker}"), None).await;
        assert!(cancelled.status < 300, "{}", cancelled.text());
    }
    let in_parts = credits(&server, job["id"].as_str().unwrap()).await;
    assert_eq!(in_parts, credits(&server, &whole).await);

    // gzip in two parts: decompressed and hashed like an upload, so the plain job's arena.
    let id = upload_id(&create(&server, packed.len(), 64 << 10).await);
    for (n, part) in packed.chunks(64 << 10).enumerate() {
        assert_eq!(
            put_part(&server, &id, n, part, &digest(part)).await.status,
            200
        );
    }
    let reply = job_from(&server, &id, "?backend=cpu").await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    assert_eq!(
        reply.json()["arena"]["sha256"],
        plain_view["arena"]["sha256"]
    );
    server.stop().await;
}

/// Sizes and counts past the limits, a malformed arena (which ends its upload), and an
/// upload that outlives a restart of the server.
async fn limits_refusals_and_restarts(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let configure = move |config: &mut egsolve_service::ServeConfig| {
        engine.configure(config);
        config.max_body_bytes = 10 << 20;
        config.max_open_uploads = 2;
    };
    let server = Server::start_in(dir.path(), configure).await;
    create(&server, 11 << 20, PART)
        .await
        .assert_problem(413, "too-large");
    create(&server, 1 << 20, 1000)
        .await
        .assert_problem(400, "invalid-upload");
    create(&server, 0, PART)
        .await
        .assert_problem(400, "empty-body");
    let bad = b"0 MAX 1 0:1;\nthis is not a game\n".repeat(3000);
    let malformed = upload_id(&create(&server, bad.len(), 64 << 10).await);
    let kept = upload_id(&create(&server, 3 * PART / 2, PART).await);
    let third = create(&server, 100, 64 << 10).await;
    third.assert_problem(429, "too-many-uploads");
    assert_eq!(third.json()["limit"], 2);
    for (n, part) in bad.chunks(64 << 10).enumerate() {
        assert_eq!(
            put_part(&server, &malformed, n, part, &digest(part))
                .await
                .status,
            200
        );
    }
    job_from(&server, &malformed, "")
        .await
        .assert_problem(422, "malformed-arena");
    server
        .get(&format!("/v1/uploads/{malformed}"), None)
        .await
        .assert_problem(404, "upload-not-found");
    let game = gunzip(&std::fs::read(data_file(ENERGY)).unwrap())[..3 * PART / 2].to_vec();
    assert_eq!(
        put_part(&server, &kept, 0, &game[..PART], &digest(&game[..PART]))
            .await
            .status,
        200
    );
    let _ = server.stop().await;

    let server = Server::start_in(dir.path(), configure).await;
    let view = server
        .get(&format!("/v1/uploads/{kept}"), None)
        .await
        .json();
    assert_eq!(view["received"], serde_json::json!([0]), "{view}");
    job_from(&server, "not-an-upload", "")
        .await
        .assert_problem(404, "upload-not-found");
    let _ = server.stop().await;
}

on_both_stores!(
    parts_arrive_whole_or_not_at_all,
    limits_refusals_and_restarts
);

/// Through the real binary: `egsolve submit` sends a file in parts (`--parts-above 0`,
/// small parts, four connections) and writes the answer a plain upload gets; `egsolve
/// result --ranges-above 0` fetches the binary answer as several byte ranges at once.
#[test]
fn the_cli_sends_large_files_in_parts() {
    use packaging_support::{Server as Binary, run_client};
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game.mpg");
    std::fs::write(&game, gunzip(&std::fs::read(data_file(ENERGY)).unwrap())).unwrap();
    let server = Binary::start(
        &dir.path().join("store"),
        &["--inline-parse-bytes", "65536"],
    );
    let answer = |extra: &[&str]| -> Value {
        let out = dir.path().join("answer.json");
        let (game, out_path) = (game.to_str().unwrap(), out.to_str().unwrap());
        let fixed = ["submit", game, "--backend", "cpu", "--wait", "-o", out_path];
        let args: Vec<&str> = fixed.iter().chain(extra).copied().collect();
        let (code, _, stderr) = run_client(&server, &args);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("succeeded"), "{stderr}");
        serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap()
    };
    let in_parts = answer(&[
        "--parts-above",
        "0",
        "--part-size",
        "262144",
        "--connections",
        "4",
    ]);
    let plain = answer(&[]);
    assert_eq!(credit_column(&in_parts), credit_column(&plain));
    assert_ne!(in_parts["job"], plain["job"]);
    // The binary answer fetched as three byte ranges at once equals the one streamed.
    let job = in_parts["job"].as_str().unwrap();
    let fetch = |extra: &[&str]| -> Vec<u8> {
        let out = dir.path().join("answer.bin");
        let out_path = out.to_str().unwrap();
        let fixed = ["result", job, "--format", "binary", "-o", out_path];
        let args: Vec<&str> = fixed.iter().chain(extra).copied().collect();
        let (code, _, stderr) = run_client(&server, &args);
        assert_eq!(code, 0, "{stderr}");
        std::fs::read(out).unwrap()
    };
    let ranged = fetch(&["--ranges-above", "0", "--connections", "3"]);
    assert_eq!(&ranged[..8], b"EGSRESLT");
    assert_eq!(ranged, fetch(&[]));
    drop(server);
}
