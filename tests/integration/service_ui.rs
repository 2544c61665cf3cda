//! The web page's routes, the read-only endpoints it adds (`/v1/usage`, `/v1/whoami`,
//! `/v1/jobs/{id}/result/histogram`) and the renderings job views name for the page's
//! download links (`result_formats`), every response validated against `openapi.yaml`. The
//! page itself is driven in a real browser by `tests/external/web_ui.rs`.

use crate::service_support;

use std::time::Duration;

use service_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_assets_are_embedded_cacheable_and_locked_down() {
    let server = Server::start(|_| {}).await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/jobs/0190c0de-0000-7000-8000-000000000000", "text/html"),
        ("/ui/app.js", "text/javascript"),
        ("/ui/style.css", "text/css"),
        ("/ui/favicon.svg", "image/svg+xml"),
        // Where browsers ask whatever the page names: the same icon, not a 404.
        ("/favicon.ico", "image/svg+xml"),
    ] {
        let reply = server.get(path, None).await;
        assert_eq!(reply.status, 200, "{path}");
        let content_type = reply.headers["content-type"].to_str().unwrap();
        assert!(content_type.starts_with(kind), "{path}: {content_type}");
        assert!(!reply.body.is_empty());
        assert_eq!(reply.headers["cache-control"], "no-cache");
        assert_eq!(reply.headers["x-content-type-options"], "nosniff");
        if kind == "text/html" {
            let policy = reply.headers["content-security-policy"].to_str().unwrap();
            assert!(policy.contains("script-src 'self'"), "{policy}");
            assert!(reply.text().contains("ui/app.js"));
        }
        // Revalidation: the ETag answers 304 with no body.
        let etag = reply.headers["etag"].to_str().unwrap().to_string();
        let again = server
            .call(
                reqwest::Method::GET,
                path,
                None,
                &[("if-none-match", &etag)],
                None,
            )
            .await;
        assert_eq!(again.status, 304, "{path}");
        assert!(again.body.is_empty());
    }
    // Compressed when asked.
    let gzipped = server
        .call(
            reqwest::Method::GET,
            "/ui/app.js",
            None,
            &[("accept-encoding", "gzip")],
            None,
        )
        .await;
    assert_eq!(gzipped.headers["content-encoding"], "gzip");
    let plain = server.get("/ui/app.js", None).await;
    assert_eq!(gunzip(&gzipped.body), plain.body.to_vec());
    // Only the embedded files exist under /ui/.
    server
        .get("/ui/secret.txt", None)
        .await
        .assert_problem(404, "not-found");
    server
        .get("/ui/", None)
        .await
        .assert_problem(404, "not-found");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoami_and_usage_with_auth_on_and_off() {
    let open = Server::start(|_| {}).await;
    let me = open.get("/v1/whoami", None).await.json();
    assert_eq!(
        me,
        serde_json::json!({"user": "local", "role": "admin", "auth": false, "by_reference": false,
            "results_by_reference": false})
    );
    open.stop().await;
    // With an import root, a caller who may import (everyone, auth off) is told so; with an
    // export root, that results may be written by reference.
    let roots = tempfile::tempdir().unwrap();
    let importing = Server::start(|c| c.import_roots = vec![roots.path().to_owned()]).await;
    let me = importing.get("/v1/whoami", None).await.json();
    assert_eq!(me["by_reference"], true, "{me}");
    assert_eq!(me["results_by_reference"], false, "{me}");
    importing.stop().await;
    let exporting = Server::start(|c| c.export_roots = vec![roots.path().to_owned()]).await;
    let me = exporting.get("/v1/whoami", None).await.json();
    assert_eq!(
        (&me["by_reference"], &me["results_by_reference"]),
        (&serde_json::json!(false), &serde_json::json!(true)),
        "{me}"
    );
    exporting.stop().await;

    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let alice = egsolve_service::add_token(&tokens, "alice", false).unwrap();
    let server = Server::start(|c| {
        c.auth = true;
        c.tokens_file = Some(tokens.clone());
        c.cpu_workers = 1;
    })
    .await;
    let nobody = server.get("/v1/whoami", None).await.json();
    assert_eq!(
        nobody,
        serde_json::json!({"user": null, "role": null, "auth": true, "by_reference": false,
            "results_by_reference": false})
    );
    server
        .get("/v1/whoami", Some("egs_wrong"))
        .await
        .assert_problem(401, "unauthorized");
    let me = server.get("/v1/whoami", Some(&alice)).await.json();
    assert_eq!(
        (me["user"].as_str(), me["role"].as_str()),
        (Some("alice"), Some("user"))
    );
    assert_eq!(me["by_reference"], false, "no import roots here: {me}");

    // Usage needs no token and names no job; the live point shows a busy slot.
    let id = server
        .submit_ok(slow_cycle(200_000), "?backend=reference", Some(&alice))
        .await;
    server.wait_state(&id, "running", Some(&alice)).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let usage = server.get("/v1/usage", None).await;
    assert!(!usage.text().contains(&id), "{}", usage.text());
    let usage = usage.json();
    assert_eq!(usage["cpu"], serde_json::json!({"workers": 1, "busy": 1}));
    assert_eq!(usage["window_seconds"], 3600);
    let series = usage["series"].as_array().unwrap();
    let last = series.last().expect("a live point after a second");
    assert!(last["cpu"].as_f64().unwrap() > 0.5, "{usage}");
    server.delete(&format!("/v1/jobs/{id}"), Some(&alice)).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_credit_histogram_counts_the_stored_result() {
    let server = Server::start(|_| {}).await;
    let path = data_file("parity/Lift_(Incorrect)_nlifts=2_nodeadlock.gm.gz");
    let expected = expected(&data_file(
        "parity/Lift_(Incorrect)_nlifts=2_nodeadlock.sol.gz",
    ));
    let (id, job) = server
        .submit_finished(std::fs::read(&path).unwrap(), "?credits=true")
        .await;
    let text = server
        .get(&format!("/v1/jobs/{id}/result?format=text"), None)
        .await
        .text();
    let credits: Vec<Option<u64>> = parse_text_result(&text)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(credits.len(), expected.len());
    let max = job["summary"]["max_credit"].as_u64().unwrap();
    for bins in [1u64, 7, 200] {
        let h = server
            .get(&format!("/v1/jobs/{id}/result/histogram?bins={bins}"), None)
            .await
            .json();
        assert_eq!(h["job"], id.as_str());
        let w0 = expected.iter().filter(|(w, _)| *w == 0).count() as u64;
        assert_eq!(
            (h["w0"].as_u64(), h["w1"].as_u64()),
            (Some(w0), Some(expected.len() as u64 - w0))
        );
        assert_eq!(h["max_credit"].as_u64(), Some(max));
        let listed = h["bins"].as_array().unwrap();
        assert!(listed.len() as u64 <= bins && !listed.is_empty());
        // Each bin holds exactly the finite credits in its range.
        for bin in listed {
            let (from, to) = (bin["from"].as_u64().unwrap(), bin["to"].as_u64().unwrap());
            let count = credits
                .iter()
                .filter(|c| matches!(c, Some(c) if (from..=to).contains(c)))
                .count() as u64;
            assert_eq!(bin["count"].as_u64(), Some(count), "{bin}");
        }
        assert_eq!(listed.last().unwrap()["to"].as_u64(), Some(max));
    }
    server
        .get(&format!("/v1/jobs/{id}/result/histogram?bins=0"), None)
        .await
        .assert_problem(400, "invalid-parameter");
    let queued = server
        .submit_ok(slow_cycle(200_000), "?backend=reference", None)
        .await;
    server
        .get(&format!("/v1/jobs/{queued}/result/histogram"), None)
        .await
        .assert_problem(409, "no-result");
    server.delete(&format!("/v1/jobs/{queued}"), None).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_listings_carry_live_progress_and_queue_positions() {
    let server = Server::start(|c| c.cpu_workers = 1).await;
    let running = server.submit_blocker().await;
    let queued = server.submit_ok(slow_cycle(9), "", None).await;
    let mut progress = serde_json::Value::Null;
    for _ in 0..100 {
        let listed = server.get("/v1/jobs", None).await.json();
        let jobs = listed["jobs"].as_array().unwrap();
        let find = |id: &str| jobs.iter().find(|j| j["id"] == id).unwrap().clone();
        assert_eq!(find(&queued)["queue_position"], 0);
        progress = find(&running)["progress"].clone();
        if progress["lifts"].as_u64().is_some_and(|l| l > 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(progress["lifts"].as_u64().unwrap() > 0, "{progress}");
    for id in [&running, &queued] {
        server.delete(&format!("/v1/jobs/{id}"), None).await;
    }
    server.stop().await;
}

/// On both stores: a list page reads its answers' summaries in one query.
async fn result_formats_name_the_renderings_each_answer_has(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let game = std::fs::read(data_file(
        "parity/Lift_(Incorrect)_nlifts=2_nodeadlock.gm.gz",
    ))
    .unwrap();
    // (submission, the formats its answer has): a parity game answered by the parity solver
    // has no text (it lists credits); with credits, or for an energy game, it has.
    let cases = [
        (game.clone(), "", vec!["json", "paritysol", "binary"]),
        (
            game,
            "?credits=true",
            vec!["json", "text", "paritysol", "binary"],
        ),
        (
            small_arena(40, 7),
            "",
            vec!["json", "text", "paritysol", "binary"],
        ),
    ];
    for (body, query, formats) in cases {
        let (id, job) = server.submit_finished(body, query).await;
        assert_eq!(job["state"], "succeeded", "{job}");
        assert_eq!(job["result_formats"], serde_json::json!(formats), "{query}");
        // The list says the same, without the summary.
        let listed = server.get("/v1/jobs", None).await.json();
        let row = listed["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == id.as_str())
            .unwrap()
            .clone();
        assert_eq!(row["result_formats"], job["result_formats"]);
        assert!(row["summary"].is_null());
        for format in ["json", "text", "paritysol", "binary"] {
            let reply = server
                .get(&format!("/v1/jobs/{id}/result?format={format}"), None)
                .await;
            if formats.contains(&format) {
                assert_eq!(reply.status, 200, "{query} {format}: {}", reply.text());
            } else {
                reply.assert_problem(400, "invalid-parameter");
            }
        }
    }
    // No answer yet, no formats.
    let running = server
        .submit_ok(slow_cycle(200_000), "?backend=reference", None)
        .await;
    let job = server.wait_state(&running, "running", None).await;
    assert!(job["result_formats"].is_null(), "{job}");
    server.delete(&format!("/v1/jobs/{running}"), None).await;
    server.stop().await;
}

on_both_stores!(result_formats_name_the_renderings_each_answer_has);
