//! Batches through the service (issue 43, part 5), on both stores: one tar archive of
//! arenas (energy and parity games, a compressed member, a malformed one) makes one job
//! per accepted member in one request; the refused member gets its problem with line and
//! column; the results stream holds one entry per job, each the bytes the job's own
//! result endpoint gives; a format a job cannot answer in is an error entry; the same batch
//! again is answered from the finished jobs; bad archives, a batch that fits nobody and one
//! past the per-user limit are clear 400s and 429s; an unknown batch is 404; a batch sent
//! again with its `Idempotency-Key` is the batch the first request made; small members are
//! solved while the batch is received, with the queue's results; members stored before the
//! batch was refused, or before its connection dropped, leave no file behind.

use crate::service_support;

use std::collections::BTreeMap;
use std::io::{Read, Write};

use egsolve_core::generate::{random_parity, write_pgsolver};
use egsolve_service::ServeConfig;
use futures::StreamExt;
use reqwest::Method;
use service_support::*;

/// A tar archive of `files` (name, bytes).
fn archive(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, &data[..]).unwrap();
    }
    builder.into_inner().unwrap()
}

/// The entries of a tar archive, by name.
fn entries(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    entries_in_order(bytes).into_iter().collect()
}

/// The entries of a tar archive, in its order.
fn entries_in_order(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = tar::Archive::new(bytes);
    archive
        .entries()
        .unwrap()
        .map(|entry| {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            (name, data)
        })
        .collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn parity_game(seed: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_pgsolver(&random_parity(60, 5, 3, seed), &mut bytes).unwrap();
    bytes
}

async fn post_batch(server: &Server, body: Vec<u8>, query: &str) -> Reply {
    let headers = [("content-type", "application/x-tar")];
    server
        .call(
            Method::POST,
            &format!("/v1/batches{query}"),
            None,
            &headers,
            Some(body),
        )
        .await
}

/// `GET /v1/batches/{batch}/results{query}`.
async fn results_of(server: &Server, batch: &str, query: &str) -> Reply {
    server
        .get(&format!("/v1/batches/{batch}/results{query}"), None)
        .await
}

async fn a_batch_makes_a_job_per_member_and_streams_their_results(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let files = [
        ("a.mpg", small_arena(30, 1)),
        ("b.mpg.gz", gzip(&small_arena(40, 2))),
        ("bad.mpg", b"2;\n0 MAX 1:-1;\n1 MIN 0:x;\n".to_vec()),
        ("dir/p.gm", parity_game(3)),
    ];
    let reply = post_batch(&server, archive(&files), "").await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let answer = reply.json();
    let batch = answer["id"].as_str().unwrap().to_string();
    assert_eq!(
        reply.headers["location"].to_str().unwrap(),
        format!("/v1/batches/{batch}")
    );
    assert_eq!(
        (answer["accepted"].as_u64(), answer["refused"].as_u64()),
        (Some(3), Some(1))
    );
    let members = answer["jobs"].as_array().unwrap();
    let names: Vec<&str> = members
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a.mpg", "b.mpg.gz", "bad.mpg", "dir/p.gm"]);
    let bad = &members[2];
    assert!(bad["id"].is_null(), "{bad}");
    assert_eq!(
        bad["error"]["type"], "urn:egsolve:problem:malformed-arena",
        "{bad}"
    );
    assert_eq!(
        (
            bad["error"]["line"].as_u64(),
            bad["error"]["column"].as_u64()
        ),
        (Some(3), Some(9))
    );

    // The results stream: one entry per job, each what the job's own endpoint gives.
    let reply = server
        .get(&format!("/v1/batches/{batch}/results"), None)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let results = entries(&reply.body);
    let expected: Vec<&str> = vec!["a.mpg.json", "b.mpg.gz.json", "dir/p.gm.json"];
    assert_eq!(
        results.keys().map(String::as_str).collect::<Vec<_>>(),
        expected
    );
    for member in members.iter().filter(|m| m["id"].is_string()) {
        let id = member["id"].as_str().unwrap();
        let alone = server.get(&format!("/v1/jobs/{id}/result"), None).await;
        assert_eq!(alone.status, 200);
        let name = format!("{}.json", member["name"].as_str().unwrap());
        assert_eq!(results[&name], alone.body.to_vec(), "{name}");
    }
    let paritysol = server
        .get(&format!("/v1/batches/{batch}/results?format=text"), None)
        .await;
    let texts = entries(&paritysol.body);
    // The parity game's answer has no credits: no text form, an error entry instead.
    let error: serde_json::Value = serde_json::from_slice(&texts["dir/p.gm.error.json"]).unwrap();
    assert_eq!(error["error"]["type"], "format-unavailable", "{error}");
    assert!(texts.contains_key("a.mpg.txt"), "{:?}", texts.keys());

    // The batch's view: every job with its name, all succeeded.
    let view = server
        .get(&format!("/v1/batches/{batch}"), None)
        .await
        .json();
    assert_eq!(view["finished"], true, "{view}");
    assert_eq!(view["counts"]["succeeded"], 3, "{view}");
    for job in view["jobs"].as_array().unwrap() {
        assert_eq!(job["batch"]["id"], batch.as_str());
        assert_eq!(job["batch"]["name"], job["name"]);
    }

    // The same games again: answered from the finished jobs at once.
    let again = post_batch(&server, archive(&files[..2]), "").await.json();
    for member in again["jobs"].as_array().unwrap() {
        assert_eq!(member["state"], "succeeded", "{again}");
    }
    server.stop().await;
}

/// Members of at most `batch_inline_max_edges` edges are answered while the batch is received
/// (`batch_inline_ms`): succeeded in the POST's answer, computed on the CPU (not reused),
/// counted as completed solves, and their results are what the queue's workers give for the
/// same games (a server with `batch_inline_ms = 0`); a larger member is queued.
async fn small_members_are_solved_while_the_batch_is_received(engine: Engine) {
    // The same game twice: one arena row and one result row, written once each.
    let files = [
        ("small.mpg", small_arena(30, 4)),
        ("p.gm", parity_game(5)),
        ("large.mpg", small_arena(400, 6)),
        ("copy.mpg", small_arena(30, 4)),
    ];
    let configure = |inline_ms| {
        move |config: &mut ServeConfig| {
            config.batch_inline_max_edges = 300;
            // Generous: a loaded CI machine must not push a tiny solve past it.
            config.batch_inline_ms = inline_ms;
        }
    };
    let inline = Server::start_on(engine, configure(10_000)).await;
    let answer = post_batch(&inline, archive(&files), "").await.json();
    let states: Vec<&str> = answer["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["succeeded", "succeeded", "queued", "succeeded"],
        "{answer}"
    );
    let batch = answer["id"].as_str().unwrap();
    for member in &answer["jobs"].as_array().unwrap()[..2] {
        let job = inline
            .get(
                &format!("/v1/jobs/{}", member["id"].as_str().unwrap()),
                None,
            )
            .await
            .json();
        assert_eq!(
            (&job["device"], &job["reused"], &job["attempts"]),
            (&"cpu".into(), &false.into(), &1.into()),
            "{job}"
        );
        assert!(job["durations_ms"]["solve"].as_f64().is_some(), "{job}");
        assert!(job["summary"]["vertices"].as_u64().unwrap() > 0, "{job}");
    }
    let metrics = inline.get("/metrics", None).await.text();
    let completed: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("egsolve_solves_completed_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(completed >= 2, "{metrics}");
    // The same games through the queue: the same results, byte for byte.
    let queued = Server::start_on(engine, configure(0)).await;
    let answer = post_batch(&queued, archive(&files), "").await.json();
    for member in answer["jobs"].as_array().unwrap() {
        assert_eq!(member["state"], "queued", "{answer}");
    }
    let other = answer["id"].as_str().unwrap();
    for query in ["", "?format=text"] {
        let mine = results_of(&inline, batch, query).await;
        let theirs = results_of(&queued, other, query).await;
        let (mine, theirs) = (entries(&mine.body), entries(&theirs.body));
        assert_eq!(mine.len(), 4);
        for (name, bytes) in &theirs {
            let strip = |b: &[u8]| -> serde_json::Value {
                let mut doc: serde_json::Value = match serde_json::from_slice(b) {
                    Ok(doc) => doc,
                    Err(_) => return String::from_utf8_lossy(b).into(),
                };
                // The job's own id and timings differ; the answer may not.
                for field in ["job", "summary", "id"] {
                    doc.as_object_mut().map(|o| o.remove(field));
                }
                doc
            };
            assert_eq!(strip(&mine[name]), strip(bytes), "{name}{query}");
        }
    }
    inline.stop().await;
    queued.stop().await;
}

/// A member that runs past `batch_inline_ms` is stopped there and queued; its worker solves
/// it (the reference solver: a cycle of 4,000 vertices climbing one step at a time, about
/// 1.6·10^7 lifts, 0.3 s on the build VM, six times the 50 ms given), while a tiny member of
/// the same batch is answered in the POST.
async fn a_member_past_its_inline_time_is_queued_and_solved_by_a_worker(engine: Engine) {
    let server = Server::start_on(engine, |config| config.batch_inline_ms = 50).await;
    let files = [
        ("tiny.mpg", small_arena(5, 1)),
        ("slow.mpg", slow_cycle(4000)),
    ];
    let answer = post_batch(&server, archive(&files), "?backend=reference")
        .await
        .json();
    let jobs = answer["jobs"].as_array().unwrap();
    assert_eq!(
        (&jobs[0]["state"], &jobs[1]["state"]),
        (&"succeeded".into(), &"queued".into()),
        "{answer}"
    );
    let slow = jobs[1]["id"].as_str().unwrap();
    let job = server
        .wait_finished(slow, None, std::time::Duration::from_secs(60))
        .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["attempts"], 1, "{job}");
    assert!(job["worker"].is_string(), "solved by a worker: {job}");
    server.stop().await;
}

/// `reuse=false` solves anew what an identical finished job could answer, for a single job
/// and for a batch's members; without it the same bytes are answered at once (`reused`),
/// with the same result. A value other than true or false is a 400 naming the parameter.
async fn reuse_false_solves_anew_and_reuse_answers_at_once(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let game = small_arena(30, 7);
    let mut texts = Vec::new();
    for (query, reused) in [
        ("", false),
        ("", true),
        ("?reuse=false", false),
        ("?reuse=true", true),
    ] {
        let id = server.submit_ok(game.clone(), query, None).await;
        let job = server
            .wait_finished(&id, None, std::time::Duration::from_secs(30))
            .await;
        assert_eq!(job["state"], "succeeded", "{query}: {job}");
        assert_eq!(job["reused"], reused, "{query}: {job}");
        let text = server
            .get(&format!("/v1/jobs/{id}/result?format=text"), None)
            .await;
        texts.push(text.text());
    }
    assert!(texts.iter().all(|t| *t == texts[0] && !t.is_empty()));
    let files = [("a.mpg", game.clone()), ("b.mpg", small_arena(12, 3))];
    for (query, reused) in [("", [true, false]), ("?reuse=false", [false, false])] {
        let answer = post_batch(&server, archive(&files), query).await.json();
        let jobs = answer["jobs"].as_array().unwrap();
        for (job, reused) in jobs.iter().zip(reused) {
            let id = job["id"].as_str().unwrap();
            let job = server
                .wait_finished(id, None, std::time::Duration::from_secs(30))
                .await;
            assert_eq!(job["reused"], reused, "batch{query}: {job}");
        }
    }
    let bad = server.submit(game, "?reuse=maybe", None).await;
    bad.assert_problem(400, "invalid-parameter");
    assert!(bad.text().contains("reuse"), "{}", bad.text());
    server.stop().await;
}

async fn bad_batches_are_refused_with_the_reason(engine: Engine) {
    let server = Server::start_on(engine, |config| config.per_user_job_limit = 2).await;
    let not_tar = post_batch(&server, small_arena(10, 1), "").await;
    not_tar.assert_problem(400, "malformed-batch");
    let empty = post_batch(&server, archive(&[]), "").await;
    empty.assert_problem(400, "malformed-batch");
    let twice = archive(&[("a", small_arena(10, 1)), ("a", small_arena(10, 2))]);
    post_batch(&server, twice, "")
        .await
        .assert_problem(400, "malformed-batch");
    // Nothing accepted: each member's problem.
    let refused = archive(&[
        ("x.mpg", b"1;\n0 MAX".to_vec()),
        ("y.mpg", b"\0\0".to_vec()),
    ]);
    let reply = post_batch(&server, refused, "").await;
    reply.assert_problem(400, "batch-refused");
    let members = reply.json()["members"].clone();
    assert_eq!(members[0]["name"], "x.mpg", "{members}");
    assert_eq!(
        members[0]["error"]["type"],
        "urn:egsolve:problem:malformed-arena"
    );
    assert_eq!(
        members[1]["error"]["type"],
        "urn:egsolve:problem:wrong-content"
    );
    // Three members for a limit of two: nothing made.
    let three: Vec<(String, Vec<u8>)> = (0..3)
        .map(|i| (format!("{i}.mpg"), small_arena(10, i)))
        .collect();
    let three: Vec<(&str, Vec<u8>)> = three.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    post_batch(&server, archive(&three), "")
        .await
        .assert_problem(429, "too-many-jobs");
    let listed = server.get("/v1/jobs", None).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 0, "{listed}");
    // Members are stored as they arrive, before the archive's end is read: those of a
    // batch refused later (a name used twice, past the limit) leave no file behind.
    for sub in ["tmp", "arenas"] {
        let left = files_in(&server, sub);
        assert!(left.is_empty(), "{sub}: {left:?}");
    }
    let unknown = format!("/v1/batches/{}", uuid::Uuid::now_v7());
    server
        .get(&unknown, None)
        .await
        .assert_problem(404, "batch-not-found");
    server
        .get(&format!("{unknown}/results"), None)
        .await
        .assert_problem(404, "batch-not-found");
    server.stop().await;
}

/// `?results=FORMAT`: the POST answers with the results archive itself: `batch.json` (the
/// `202`'s document) first, then one entry per accepted member, byte for byte what the
/// batch's results stream gives, whether the member was solved in the POST, queued for a
/// worker, or reused; a batch sent again with its key answers the same way.
async fn a_batch_posted_for_its_results_answers_them_in_the_same_exchange(engine: Engine) {
    let server = Server::start_on(engine, |config| {
        config.batch_inline_max_edges = 300;
        config.batch_inline_ms = 10_000;
    })
    .await;
    let files = [
        ("small.mpg", small_arena(30, 7)),
        ("p.gm", parity_game(8)),
        ("large.mpg", small_arena(400, 9)),
        ("bad.mpg", b"1;\n0 MAX".to_vec()),
    ];
    let reply = post_batch(&server, archive(&files), "?results=json").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.headers["content-type"], "application/x-tar");
    let in_order = entries_in_order(&reply.body);
    let mut names: Vec<&str> = in_order.iter().map(|(name, _)| name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        in_order.len(),
        "an entry sent twice: {names:?}"
    );
    let mut results = in_order.into_iter();
    let (first, document) = results.next().unwrap();
    assert_eq!(first, "batch.json");
    let answer: serde_json::Value = serde_json::from_slice(&document).unwrap();
    let batch = answer["id"].as_str().unwrap();
    assert_eq!(
        reply.headers["location"].to_str().unwrap(),
        format!("/v1/batches/{batch}")
    );
    let states: Vec<&str> = answer["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["state"].as_str().unwrap_or("refused"))
        .collect();
    assert_eq!(
        states,
        ["succeeded", "succeeded", "queued", "refused"],
        "{answer}"
    );
    let results: BTreeMap<String, Vec<u8>> = results.collect();
    let names: Vec<&str> = results.keys().map(String::as_str).collect();
    assert_eq!(names, ["large.mpg.json", "p.gm.json", "small.mpg.json"]);
    let streamed = results_of(&server, batch, "").await;
    let again = results_of(&server, batch, "").await;
    assert_eq!(streamed.body, again.body, "two reads, one archive");
    let streamed = entries(&streamed.body);
    for (name, bytes) in &results {
        assert_eq!(
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&streamed[name]),
            "{name}"
        );
    }
    assert_eq!(results.len(), streamed.len());

    // Sent again: every member reused, each entry found after the commit; the parity
    // answer has no text form.
    let again = post_batch(&server, archive(&files[..3]), "?results=text").await;
    assert_eq!(again.status, 200, "{}", again.text());
    let again = entries(&again.body);
    let names: Vec<&str> = again.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "batch.json",
            "large.mpg.txt",
            "p.gm.error.json",
            "small.mpg.txt"
        ]
    );
    let error: serde_json::Value = serde_json::from_slice(&again["p.gm.error.json"]).unwrap();
    assert_eq!(error["error"]["type"], "format-unavailable", "{error}");

    // With its key, sent twice: the second is the first's batch, its results again.
    let keyed = |query: &'static str| {
        let headers = [
            ("content-type", "application/x-tar"),
            ("idempotency-key", "results-key"),
        ];
        let body = archive(&files[..1]);
        let server = &server;
        async move {
            let path = format!("/v1/batches{query}");
            server
                .call(Method::POST, &path, None, &headers, Some(body))
                .await
        }
    };
    let first = keyed("?results=json").await;
    let replayed = keyed("?results=json").await;
    assert_eq!(replayed.headers["idempotent-replayed"], "true");
    let (first, replayed) = (entries(&first.body), entries(&replayed.body));
    let id = |entries: &BTreeMap<String, Vec<u8>>| -> serde_json::Value {
        serde_json::from_slice::<serde_json::Value>(&entries["batch.json"]).unwrap()["id"].clone()
    };
    assert_eq!(id(&first), id(&replayed));
    assert_eq!(first["small.mpg.json"], replayed["small.mpg.json"]);

    post_batch(&server, archive(&files), "?results=xml")
        .await
        .assert_problem(400, "invalid-parameter");
    server.stop().await;
}

async fn post_keyed(server: &Server, body: Vec<u8>) -> Reply {
    let headers = [
        ("content-type", "application/x-tar"),
        ("idempotency-key", "batch-key-1"),
    ];
    server
        .call(Method::POST, "/v1/batches", None, &headers, Some(body))
        .await
}

async fn a_batch_sent_again_with_its_key_is_the_same_batch(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let body = archive(&[
        ("a.mpg", small_arena(30, 5)),
        ("bad.mpg", b"1;\n0 MAX".to_vec()),
    ]);
    let post = |body: Vec<u8>| post_keyed(&server, body);
    let first = post(body.clone()).await;
    assert_eq!(first.status, 202, "{}", first.text());
    assert!(first.headers.get("idempotent-replayed").is_none());
    let again = post(body).await;
    assert_eq!(again.status, 202, "{}", again.text());
    assert_eq!(again.headers["idempotent-replayed"], "true");
    let (first, again) = (first.json(), again.json());
    assert_eq!(first["id"], again["id"], "{again}");
    assert_eq!(again["jobs"][0]["id"], first["jobs"][0]["id"], "{again}");
    assert_eq!(
        again["jobs"].as_array().unwrap().len(),
        1,
        "refused members are not kept: {again}"
    );
    // One job made, not two; the key with another body is refused.
    let listed = server.get("/v1/jobs", None).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 1, "{listed}");
    let other = archive(&[("b.mpg", small_arena(30, 6))]);
    post(other)
        .await
        .assert_problem(422, "idempotency-key-reused");
    server.stop().await;
}

/// The files in the store's directory `sub` (none before the store has made it).
fn files_in(server: &Server, sub: &str) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(server.dir.join(sub))
        .map(|dir| dir.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default()
}

/// Waits until `done` holds, for at most 20 s; `what` says what did not happen.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A batch whose connection drops mid-body: the members that had arrived were stored while
/// the rest was still to come (under temporary names, until the archive's end); they are
/// removed, no job is made, and the server goes on.
async fn a_connection_dropped_mid_batch_leaves_nothing_behind(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let files: Vec<(String, Vec<u8>)> = (0..3)
        .map(|i| (format!("{i}.mpg"), small_arena(400, 20 + i)))
        .collect();
    let named: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let body = archive(&named);
    // Two members whole; the connection fails once the test has seen them stored.
    let cut = body.len() - files[2].1.len() / 2;
    let (go, gone) = tokio::sync::oneshot::channel::<()>();
    let chunks = futures::stream::iter([Ok::<_, std::io::Error>(body[..cut].to_vec())]).chain(
        futures::stream::once(async move {
            let _ = gone.await;
            Err(std::io::Error::other("the client goes away"))
        }),
    );
    let sending = tokio::spawn(
        server
            .http
            .post(format!("{}/v1/batches", server.base))
            .header("content-type", "application/x-tar")
            .body(reqwest::Body::wrap_stream(chunks))
            .send(),
    );
    wait_until(
        "the two members that arrived are stored before the body ends",
        || files_in(&server, "tmp").len() >= 2,
    )
    .await;
    go.send(()).unwrap();
    let sent = sending.await.unwrap();
    assert!(sent.is_err(), "the request cannot complete: {sent:?}");
    wait_until("nothing is left behind", || {
        files_in(&server, "tmp").is_empty() && files_in(&server, "arenas").is_empty()
    })
    .await;
    let listed = server.get("/v1/jobs", None).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 0, "{listed}");
    let whole = post_batch(&server, body, "").await;
    assert_eq!(whole.status, 202, "{}", whole.text());
    assert_eq!(whole.json()["accepted"], 3);
    server.stop().await;
}

/// A client that sends the whole body before it reads the answer (Python's `urllib`, for
/// one) gets the answer of a batch refused early in a large body: the server reads and drops
/// the rest first, instead of closing a connection the client is still writing to.
async fn a_batch_refused_early_in_a_large_body_is_answered(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    // A name used twice, then 24 MB more: far more than the sockets' buffers hold.
    let filler: Vec<(String, Vec<u8>)> = (0..24)
        .map(|i| (format!("filler-{i}.mpg"), vec![b' '; 1 << 20]))
        .collect();
    let mut files: Vec<(&str, Vec<u8>)> =
        vec![("a", small_arena(10, 1)), ("a", small_arena(10, 2))];
    files.extend(filler.iter().map(|(n, b)| (n.as_str(), b.clone())));
    let body = archive(&files);
    let address = server.base.trim_start_matches("http://").to_string();
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        let head = format!(
            "POST /v1/batches HTTP/1.1\r\nHost: egsolve\r\nContent-Type: application/x-tar\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(&body)?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok::<_, std::io::Error>(answer)
    })
    .await
    .unwrap();
    let answer = answer.expect("the whole body is sent and the answer read");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("two entries are named 'a'"), "{answer}");
    server.stop().await;
}

on_both_stores!(
    reuse_false_solves_anew_and_reuse_answers_at_once,
    a_batch_refused_early_in_a_large_body_is_answered,
    a_connection_dropped_mid_batch_leaves_nothing_behind,
    a_batch_makes_a_job_per_member_and_streams_their_results,
    small_members_are_solved_while_the_batch_is_received,
    a_member_past_its_inline_time_is_queued_and_solved_by_a_worker,
    bad_batches_are_refused_with_the_reason,
    a_batch_sent_again_with_its_key_is_the_same_batch,
    a_batch_posted_for_its_results_answers_them_in_the_same_exchange,
);
