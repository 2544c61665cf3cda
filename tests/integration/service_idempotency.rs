//! `Idempotency-Key` on `POST /v1/jobs`: a retried submission gets the first request's job,
//! never a second one; a key reused for another submission, a malformed key and a key still
//! in use get their problems. Every response is validated against `openapi.yaml`.

use crate::service_support;

use std::time::Duration;

use service_support::*;

async fn submit_with_key(server: &Server, body: Vec<u8>, query: &str, key: &str) -> Reply {
    server
        .submit_with(body, query, ("idempotency-key", key))
        .await
}

async fn job_count(server: &Server) -> usize {
    server.get("/v1/jobs?limit=500", None).await.json()["jobs"]
        .as_array()
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_submission_gets_the_first_job() {
    let server = Server::start(|_| {}).await;
    let first = submit_with_key(&server, small_arena(40, 1), "", "key-1").await;
    assert_eq!(first.status, 202, "{}", first.text());
    assert!(first.headers.get("idempotent-replayed").is_none());
    let id = first.json()["id"].as_str().unwrap().to_string();
    server
        .wait_finished(&id, None, Duration::from_secs(30))
        .await;

    // The same request again (compressed this time: the arena is what counts).
    let again = server
        .submit_with_headers(
            gzip(&small_arena(40, 1)),
            "",
            None,
            &[("idempotency-key", "key-1"), ("content-encoding", "gzip")],
        )
        .await;
    assert_eq!(again.status, 202, "{}", again.text());
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.json()["id"], id.as_str());
    assert_eq!(again.json()["state"], "succeeded");
    assert_eq!(again.headers["location"], format!("/v1/jobs/{id}").as_str());
    assert_eq!(job_count(&server).await, 1);

    // Without a key the same arena is a new job (reusing the finished result).
    let fresh = server.submit(small_arena(40, 1), "", None).await;
    assert_eq!(fresh.status, 202);
    assert_ne!(fresh.json()["id"], id.as_str());
    assert_eq!(fresh.json()["reused"], true);
    // Another key is another job too.
    let other = submit_with_key(&server, small_arena(40, 1), "", "key-2").await;
    assert_ne!(other.json()["id"], id.as_str());
    assert_eq!(job_count(&server).await, 3);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_names_one_submission_and_one_user() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let alice = egsolve_service::add_token(&tokens, "alice", false).unwrap();
    let bob = egsolve_service::add_token(&tokens, "bob", false).unwrap();
    let server = Server::start(|c| {
        c.auth = true;
        c.tokens_file = Some(tokens.clone());
    })
    .await;
    let post = |token: String, body: Vec<u8>, query: &'static str| {
        let server = &server;
        async move {
            let key = ("idempotency-key", "shared-name");
            server
                .submit_with_headers(body, query, Some(&token), &[key])
                .await
        }
    };
    let a = post(alice.clone(), small_arena(30, 5), "").await;
    assert_eq!(a.status, 202, "{}", a.text());
    // Bob's key of the same name is his own.
    let b = post(bob.clone(), small_arena(30, 5), "").await;
    assert_eq!(b.status, 202);
    assert_ne!(a.json()["id"], b.json()["id"]);
    assert_eq!(b.json()["owner"], "bob");
    // Another arena, or other options, under Alice's key: refused, and no job is made.
    let reply = post(alice.clone(), small_arena(30, 6), "").await;
    reply.assert_problem(422, "idempotency-key-reused");
    assert!(reply.json()["detail"].as_str().unwrap().contains("new key"));
    let reply = post(alice.clone(), small_arena(30, 5), "?priority=3").await;
    reply.assert_problem(422, "idempotency-key-reused");
    let listed = server.get("/v1/jobs", Some(&alice)).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_keys_and_failed_first_requests() {
    let server = Server::start(|_| {}).await;
    for key in ["has space", &"k".repeat(256)] {
        let reply = submit_with_key(&server, small_arena(10, 1), "", key).await;
        reply.assert_problem(400, "invalid-parameter");
        assert!(
            reply.json()["detail"]
                .as_str()
                .unwrap()
                .contains("Idempotency-Key")
        );
    }
    // A first request that fails (malformed arena) releases its key: a corrected retry runs.
    let reply = submit_with_key(&server, b"1;\n0 MAX 1:x;\n".to_vec(), "", "retry-me").await;
    reply.assert_problem(422, "malformed-arena");
    let reply = submit_with_key(&server, small_arena(10, 2), "", "retry-me").await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    assert_eq!(job_count(&server).await, 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_use_answers_409_with_retry_after() {
    let server = Server::start(|_| {}).await;
    let rest: String = (0..10)
        .map(|v| format!("{v} MAX {}:-1;\n", (v + 1) % 10))
        .collect();
    // A first request whose body is still arriving holds its key. On a loaded machine the
    // probe may reach the server before the first request's headers do and take the key
    // itself; then that attempt proves nothing, and the next one (a fresh key) waits longer.
    for attempt in 0..6u64 {
        let key = format!("busy-{attempt}");
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
        let body = reqwest::Body::wrap_stream(tokio_stream_from(rx));
        let slow = server
            .http
            .post(format!("{}/v1/jobs", server.base))
            .header("idempotency-key", &key)
            .body(body)
            .send();
        let slow = tokio::spawn(slow);
        tx.send(Ok(b"9;\n".to_vec())).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
        let probe = submit_with_key(&server, small_arena(10, 3 + attempt), "", &key).await;
        let held = probe.status == 409;
        if held {
            probe.assert_problem(409, "idempotency-key-in-use");
            assert_eq!(probe.headers["retry-after"], "1");
        } else {
            assert_eq!(probe.status, 202, "{}", probe.text());
        }
        // The first request finishes; its job is what the key names from now on. (A
        // request refused at its headers has stopped reading its body: the send fails.)
        let sent = tx.send(Ok(rest.clone().into_bytes())).await;
        assert!(
            sent.is_ok() || !held,
            "the request holding the key stopped reading"
        );
        drop(tx);
        let first = slow.await.unwrap().unwrap();
        if !held {
            // The probe took the key first: the slow request came second (409 while the
            // probe ran, or 422 for reusing the probe's key with another arena).
            assert!(
                [409, 422].contains(&first.status().as_u16()),
                "{}",
                first.status()
            );
            continue;
        }
        assert_eq!(first.status(), 202);
        let first: serde_json::Value = first.json().await.unwrap();
        let replay = submit_with_key(&server, slow_cycle(10), "", &key).await;
        assert_eq!(replay.status, 202, "{}", replay.text());
        assert_eq!(replay.json()["id"], first["id"]);
        server.stop().await;
        return;
    }
    panic!("the first request never held its key before the probe arrived (6 attempts)");
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<Vec<u8>, std::io::Error>>,
) -> impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
