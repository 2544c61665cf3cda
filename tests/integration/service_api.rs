//! The service end to end: a real server on 127.0.0.1:0 with a temporary data directory,
//! every response validated against `openapi.yaml` — each case on both stores (SQLite, and
//! a fresh database on a throwaway PostgreSQL server).

use crate::service_support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use reqwest::Method;
use service_support::*;

/// Every shared game (the `auto` backend solves each in seconds here).
const SHARED: &[(&str, &str)] = &[
    (
        "parity/ABP_datasize=2_infinitely_often_lost_mcrl2example.gm.gz",
        "parity/ABP_datasize=2_infinitely_often_lost_mcrl2example.sol.gz",
    ),
    (
        "parity/ABP_ABP(BW)_(datasize=4)eq=strong-bisim.gm.gz",
        "parity/ABP_ABP(BW)_(datasize=4)eq=strong-bisim.sol.gz",
    ),
    (
        "parity/Buffer_ABP_(datasize=4)eq=branching-bisim.gm.gz",
        "parity/Buffer_ABP_(datasize=4)eq=branching-bisim.sol.gz",
    ),
    (
        "parity/Lift_(Incorrect)_nlifts=2_nodeadlock.gm.gz",
        "parity/Lift_(Incorrect)_nlifts=2_nodeadlock.sol.gz",
    ),
    (
        "parity/CABP_datasize=2_infinitely_often_receive_for_all_d.gm.gz",
        "parity/CABP_datasize=2_infinitely_often_receive_for_all_d.sol.gz",
    ),
    (
        "parity/Hanoi_ndisks=8_eventually_done.gm.gz",
        "parity/Hanoi_ndisks=8_eventually_done.sol.gz",
    ),
    (
        "parity/ABP_CABP_(datasize=2)eq=weak-bisim.gm.gz",
        "parity/ABP_CABP_(datasize=2)eq=weak-bisim.sol.gz",
    ),
    (
        "parity/ABP_CABP_(datasize=2)eq=branching-bisim.gm.gz",
        "parity/ABP_CABP_(datasize=2)eq=branching-bisim.sol.gz",
    ),
    (
        "energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz",
        "energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.credits.gz",
    ),
    // Out of the reference solver's reach; the accelerated `auto` backend solves them.
    (
        "parity/rngame_n1000_p10_d2-5.gm.gz",
        "parity/rngame_n1000_p10_d2-5.sol.gz",
    ),
    (
        "parity/Onebit_datasize=2_messages_read_are_inevitably_sent.gm.gz",
        "parity/Onebit_datasize=2_messages_read_are_inevitably_sent.sol.gz",
    ),
    (
        "parity/Hanoi_ndisks=10_eventually_done.gm.gz",
        "parity/Hanoi_ndisks=10_eventually_done.sol.gz",
    ),
    (
        "parity/Lift_(Incorrect)_nlifts=3_liveness_1_1.gm.gz",
        "parity/Lift_(Incorrect)_nlifts=3_liveness_1_1.sol.gz",
    ),
    (
        "parity/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz",
        "parity/SWP_datasize=2_windowsize=3_nodeadlock.sol.gz",
    ),
    (
        "energy/clique_500_cp4.mpg.gz",
        "energy/clique_500_cp4.credits.gz",
    ),
];

async fn shared_games_plain_and_gzip_give_the_expected_answers(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    for (game, answer) in SHARED {
        let gz = std::fs::read(data_file(game)).unwrap();
        let plain = gunzip(&gz);
        let expected = expected(&data_file(answer));
        // The same decompressed bytes: the second submission reuses the first's result.
        // Parity games answer with credits only when asked (`credits=true`).
        for (body, reused) in [(plain, false), (gz, true)] {
            let id = server.submit_ok(body, "?credits=true", None).await;
            let job = server
                .wait_finished(&id, None, Duration::from_secs(120))
                .await;
            assert_eq!(job["state"], "succeeded", "{game}: {job}");
            assert_eq!(job["reused"], reused, "{game}: {job}");
            let text = server
                .get(&format!("/v1/jobs/{id}/result?format=text"), None)
                .await;
            assert_eq!(text.status, 200);
            let got = parse_text_result(&text.text());
            assert_eq!(got.len(), expected.len(), "{game}");
            for (v, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(g.0, e.0, "{game}: winner of vertex {v}");
                if e.1.is_some() {
                    assert_eq!(g.1, e.1, "{game}: credit of vertex {v}");
                }
            }
            let summary = &job["summary"];
            let w0 = expected.iter().filter(|e| e.0 == 0).count() as u64;
            assert_eq!(summary["w0"], w0, "{game}");
            assert_eq!(summary["initial"]["winner"], expected[0].0, "{game}");
        }
    }
    server.stop().await;
}

async fn result_formats_vertex_selection_and_gzip(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let game = std::fs::read(data_file(SHARED[0].0)).unwrap();
    let id = server.submit_ok(game, "?return=strategies", None).await;
    server
        .wait_finished(&id, None, Duration::from_secs(30))
        .await;
    let full = server
        .get(&format!("/v1/jobs/{id}/result"), None)
        .await
        .json();
    assert_eq!(full["vertices"].as_array().unwrap().len(), 119);
    let some = server
        .get(&format!("/v1/jobs/{id}/result?vertices=17,0"), None)
        .await
        .json();
    let ids = vertex_numbers(&some, "id");
    assert_eq!(ids, [17, 0]);
    assert_eq!(some["vertices"][1], full["vertices"][0]);
    assert!(full["vertices"][0].get("strategy").is_some());
    let sol = server
        .get(&format!("/v1/jobs/{id}/result?format=paritysol"), None)
        .await
        .text();
    assert!(sol.starts_with("paritysol 119;\n"), "{sol}");
    let bad = server
        .get(&format!("/v1/jobs/{id}/result?vertices=119"), None)
        .await;
    bad.assert_problem(400, "invalid-parameter");
    // A long poll longer than openapi.yaml's maximum is refused, not shortened unsaid.
    for wait in ["61", "1000", "-1"] {
        let long = server
            .get(&format!("/v1/jobs/{id}?wait={wait}"), None)
            .await;
        long.assert_problem(400, "invalid-parameter");
    }
    let zipped = server
        .get_accepting(&format!("/v1/jobs/{id}/result?format=text"), "gzip")
        .await;
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    let plain = server
        .get(&format!("/v1/jobs/{id}/result?format=text"), None)
        .await;
    assert_eq!(gunzip(&zipped.body), plain.body.to_vec());
    server.stop().await;
}

/// The service's JSON result is the document `egsolve solve --output json` writes (plus the
/// job id): same summary keys and figures, byte-identical vertex records; and `egsolve check`
/// certifies it.
async fn json_result_is_the_cli_document_and_certifies(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    for (game, _) in &SHARED[..3] {
        let bytes = std::fs::read(data_file(game)).unwrap();
        let (id, job) = server
            .submit_finished(bytes.clone(), "?return=strategies&backend=reference")
            .await;
        assert_eq!(job["state"], "succeeded", "{game}: {job}");
        let served = server.get(&format!("/v1/jobs/{id}/result"), None).await;
        assert_eq!(served.status, 200);
        let served_text = served.text();

        let parsed = egsolve_core::format::read(&bytes[..], &Default::default()).unwrap();
        // As `egsolve solve --backend reference` does: through `solve_game`, which adds the
        // parity summary for parity games.
        let options = egsolve_core::solve::SolveOptions {
            backend: egsolve_core::solve::Backend::Reference,
            ..Default::default()
        };
        let solution = egsolve_core::solve::solve_game(
            &parsed.arena,
            parsed.parity.as_ref().map(|p| p.view()),
            &options,
            &egsolve_core::solve::Control::new(),
        )
        .unwrap();
        let mut cli = Vec::new();
        egsolve_core::output::write_json(
            &mut cli,
            &parsed.arena,
            &solution,
            parsed.initial.unwrap_or(0),
            None,
        )
        .unwrap();
        let cli_text = String::from_utf8(cli).unwrap();
        // The vertex records are the same bytes.
        let records = |text: &str| text[text.find("\n \"vertices\": [").unwrap()..].to_string();
        assert_eq!(records(&served_text), records(&cli_text), "{game}");

        let served: serde_json::Value = serde_json::from_str(&served_text).unwrap();
        let cli: serde_json::Value = serde_json::from_str(&cli_text).unwrap();
        assert_eq!(served["job"], id.as_str(), "{game}");
        let keys = |v: &serde_json::Value| -> BTreeSet<String> {
            v["summary"].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(keys(&served), keys(&cli), "{game}");
        for key in [
            "vertices",
            "edges",
            "w0",
            "w1",
            "initial",
            "max_credit",
            "bound",
        ] {
            assert_eq!(served["summary"][key], cli["summary"][key], "{game}: {key}");
        }
        assert_eq!(
            job["summary"], served["summary"],
            "{game}: job view and result agree"
        );

        let (credit, strategy) = egsolve_core::output::read_json_solution(
            served_text.as_bytes(),
            parsed.arena.vertex_count(),
        )
        .unwrap();
        let report = egsolve_core::check::check(
            &parsed.arena,
            egsolve_core::check::Claim {
                credit: &credit,
                strategy: &strategy,
            },
        )
        .unwrap();
        assert!(report.passed(), "{game}: {report:?}");

        // Without `return=strategies` (the default, `credits`) the same records stop at
        // `winner`: what the README and docs/json-format.md say.
        let (id, _) = server
            .submit_finished(bytes.clone(), "?backend=reference")
            .await;
        let plain = server
            .get(&format!("/v1/jobs/{id}/result"), None)
            .await
            .json();
        for (record, full) in plain["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .zip(served["vertices"].as_array().unwrap())
        {
            assert!(record.get("strategy").is_none(), "{game}: {record}");
            assert_eq!(record["winner"], full["winner"], "{game}");
            assert_eq!(record["id"], full["id"], "{game}");
        }
    }
    server.stop().await;
}

async fn bad_bodies_get_the_right_problems(engine: Engine) {
    let server = Server::start_on(engine, |c| c.max_body_bytes = 1 << 20).await;
    let malformed = b"2;\n0 MAX 1:1;\n1 MAX 2:x;\n2 MIN 0:0;\n".to_vec();
    let reply = server.submit(malformed, "", None).await;
    reply.assert_problem(422, "malformed-arena");
    assert_eq!(
        (
            reply.json()["line"].as_u64(),
            reply.json()["column"].as_u64()
        ),
        (Some(3), Some(9))
    );

    // A well-formed start, cut by the limit.
    let mut oversized = b"200000;\n".to_vec();
    for v in 0..200_000 {
        oversized.extend_from_slice(format!("{v} MAX {}:-1;\n", (v + 1) % 200_000).as_bytes());
    }
    assert!(oversized.len() > 1 << 20);
    let reply = server.submit(oversized, "", None).await;
    reply.assert_problem(413, "too-large");

    // A game whose 64 MiB comment compresses to about 64 KiB: the limit counts decompressed
    // bytes (the parser accepts a comment, so only the limit can stop it).
    let mut text = b"1;\n0 MAX 1:1;\n# ".to_vec();
    text.resize(64 << 20, b'x');
    let bomb = gzip(&text);
    assert!(bomb.len() < 1 << 20);
    let reply = server.submit(bomb, "", None).await;
    reply.assert_problem(413, "too-large");
    assert_eq!(reply.json()["limit"], 1 << 20);

    let game = slow_cycle(3);
    let reply = server
        .submit_with(game.clone(), "", ("content-encoding", "br"))
        .await;
    reply.assert_problem(415, "unsupported-encoding");
    let reply = server
        .submit_with(game.clone(), "", ("content-type", "application/json"))
        .await;
    reply.assert_problem(415, "wrong-content");
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let reply = server.submit(png, "", None).await;
    reply.assert_problem(415, "wrong-content");
    let reply = server
        .submit_with(game.clone(), "", ("content-encoding", "gzip"))
        .await;
    reply.assert_problem(400, "bad-compression");
    let reply = server.submit(Vec::new(), "", None).await;
    reply.assert_problem(400, "empty-body");
    for query in [
        "?backend=quantum",
        "?priority=x",
        "?time_limit=0",
        "?colour=red",
        "?backend=gpu",
    ] {
        let reply = server.submit(game.clone(), query, None).await;
        assert!(
            reply.status == 400 || reply.status == 422,
            "{query}: {}",
            reply.status
        );
        let kind = reply.problem_type();
        assert!(
            kind == "invalid-parameter" || kind == "backend-unavailable",
            "{query}: {kind}"
        );
    }
    // Nothing refused left a job behind.
    let jobs = server.get("/v1/jobs", None).await.json();
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0);
    server.stop().await;
}

async fn large_malformed_arenas_fail_in_the_job_with_line_and_column(engine: Engine) {
    let server = Server::start_on(engine, |c| c.inline_parse_bytes = 0).await;
    let id = server
        .submit_ok(b"1;\n0 MAX 1:1;\n1 MIN 0:1,\n".to_vec(), "", None)
        .await;
    let job = server
        .wait_finished(&id, None, Duration::from_secs(30))
        .await;
    assert_eq!(job["state"], "failed");
    assert_eq!(job["failure"]["type"], "malformed-arena");
    assert_eq!(job["failure"]["line"], 4);
    let reply = server.get(&format!("/v1/jobs/{id}/result"), None).await;
    reply.assert_problem(409, "no-result");
    server.stop().await;
}

/// Parsed at upload with room in the memory budget, or past it (the worker parses the stored
/// file again): the same answer either way, and a malformed arena past the detection window
/// is refused during the upload with its line.
async fn arenas_parsed_while_uploading_with_and_without_memory_budget(engine: Engine) {
    let (game, answer) = SHARED[1];
    let bytes = std::fs::read(data_file(game)).unwrap();
    let expected = expected(&data_file(answer));
    for budget in [0, 1 << 30] {
        let server = Server::start_on(engine, |c| c.preparsed_memory_bytes = budget).await;
        let (id, job) = server.submit_finished(bytes.clone(), "?credits=true").await;
        assert_eq!(job["state"], "succeeded", "budget {budget}: {job}");
        assert!(job["durations_ms"]["parse"].as_f64().is_some(), "{job}");
        let text = server
            .get(&format!("/v1/jobs/{id}/result?format=text"), None)
            .await
            .text();
        let got = parse_text_result(&text);
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g.0, e.0, "budget {budget}");
        }

        let mut bad = b"100000;\n".to_vec();
        for v in 0..50_000 {
            bad.extend_from_slice(format!("{v} MAX {}:-1;\n", v + 1).as_bytes());
        }
        bad.extend_from_slice(b"50000 MAX oops;\n");
        let reply = server.submit(bad, "", None).await;
        reply.assert_problem(422, "malformed-arena");
        assert_eq!(reply.json()["line"], 50_002);
        server.stop().await;
    }
}

async fn unknown_ids_and_routes_are_404(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    for path in [
        "/v1/jobs/01a200f7-d182-7396-8152-480efd9f45f5",
        "/v1/jobs/not-a-uuid",
        "/v1/jobs/01a200f7-d182-7396-8152-480efd9f45f5/result",
    ] {
        let reply = server.get(path, None).await;
        assert_eq!(
            (reply.status, reply.problem_type().as_str()),
            (404, "job-not-found"),
            "{path}"
        );
    }
    let reply = server
        .delete("/v1/jobs/01a200f7-d182-7396-8152-480efd9f45f5", None)
        .await;
    assert_eq!(reply.status, 404);
    let reply = server
        .http
        .get(format!("{}/v2/nothing", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 404);
    server.stop().await;
}

async fn cancel_a_queued_and_a_running_job(engine: Engine) {
    let server = Server::start_on(engine, |c| c.cpu_workers = 1).await;
    let running = server.submit_blocker().await;
    let queued = server.submit_ok(slow_cycle(5), "", None).await;
    let job = server.get(&format!("/v1/jobs/{queued}"), None).await.json();
    assert_eq!(
        (job["state"].as_str(), job["queue_position"].as_u64()),
        (Some("queued"), Some(0))
    );
    let progress = server
        .get(&format!("/v1/jobs/{running}"), None)
        .await
        .json();
    assert!(progress["progress"]["lifts"].is_u64(), "{progress}");

    let reply = server.delete(&format!("/v1/jobs/{queued}"), None).await;
    assert_eq!(
        (reply.status, reply.json()["state"].as_str()),
        (200, Some("cancelled"))
    );
    let start = Instant::now();
    let reply = server.delete(&format!("/v1/jobs/{running}"), None).await;
    assert_eq!(reply.json()["state"], "cancelled");
    // The worker is free again within a second: a new job runs.
    let next = server.submit_ok(slow_cycle(4), "", None).await;
    let job = server
        .wait_finished(&next, None, Duration::from_secs(10))
        .await;
    assert_eq!(job["state"], "succeeded");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    // The slot is released just after the job's result is published: poll briefly.
    let mut devices = server.get("/v1/devices", None).await.json();
    let polling = Instant::now();
    while devices["cpu"]["busy"] != 0 && polling.elapsed() < Duration::from_secs(1) {
        tokio::time::sleep(Duration::from_millis(10)).await;
        devices = server.get("/v1/devices", None).await.json();
    }
    assert_eq!(devices["cpu"]["busy"], 0);
    // The cancelled queued job never ran.
    let job = server.get(&format!("/v1/jobs/{queued}"), None).await.json();
    assert_eq!(
        (job["attempts"].as_u64(), job["started_at"].is_null()),
        (Some(0), true)
    );
    let reply = server.delete(&format!("/v1/jobs/{queued}"), None).await;
    reply.assert_problem(409, "job-finished");
    server.stop().await;
}

async fn users_are_isolated_and_limited(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let alice = egsolve_service::add_token(&tokens, "alice", false).unwrap();
    let bob = egsolve_service::add_token(&tokens, "bob", false).unwrap();
    let root = egsolve_service::add_token(&tokens, "root", true).unwrap();
    let server = Server::start_on(engine, |c| {
        c.auth = true;
        c.tokens_file = Some(tokens.clone());
        c.per_user_job_limit = 2;
        c.cpu_workers = 1;
    })
    .await;
    let reply = server.submit(slow_cycle(3), "", None).await;
    reply.assert_problem(401, "unauthorized");
    let reply = server.submit(slow_cycle(3), "", Some("egs_forged")).await;
    assert_eq!(reply.status, 401);

    let a1 = server
        .submit_ok(slow_cycle(200_000), "?backend=reference", Some(&alice))
        .await;
    let _a2 = server.submit_ok(slow_cycle(6), "", Some(&alice)).await;
    let reply = server.submit(slow_cycle(7), "", Some(&alice)).await;
    reply.assert_problem(429, "too-many-jobs");
    assert!(reply.headers.get("retry-after").is_some());
    let b1 = server.submit_ok(slow_cycle(8), "", Some(&bob)).await;

    // Bob cannot see or cancel Alice's job; his listing holds only his own.
    assert_eq!(
        server
            .get(&format!("/v1/jobs/{a1}"), Some(&bob))
            .await
            .status,
        404
    );
    let reply = server.delete(&format!("/v1/jobs/{a1}"), Some(&bob)).await;
    assert_eq!(reply.status, 404);
    let listed = server.get("/v1/jobs", Some(&bob)).await.json();
    let ids: Vec<&str> = listed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [b1.as_str()]);
    // The admin sees everyone's jobs, newest first, and may cancel them.
    let listed = server.get("/v1/jobs?limit=2", Some(&root)).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 2);
    let cursor = listed["next_cursor"].as_str().unwrap().to_string();
    let rest = server
        .get(&format!("/v1/jobs?limit=2&cursor={cursor}"), Some(&root))
        .await
        .json();
    assert_eq!(rest["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(rest["jobs"][0]["id"], a1.as_str());
    assert!(rest["next_cursor"].is_null());
    let queued_only = server
        .get("/v1/jobs?state=running", Some(&root))
        .await
        .json();
    assert_eq!(queued_only["jobs"][0]["id"], a1.as_str());
    let reply = server.delete(&format!("/v1/jobs/{a1}"), Some(&root)).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    server
        .wait_finished(&b1, Some(&bob), Duration::from_secs(30))
        .await;
    assert_eq!(server.get("/healthz", None).await.status, 200);
    server.stop().await;
}

async fn two_hundred_concurrent_small_submissions_succeed(engine: Engine) {
    let server = std::sync::Arc::new(Server::start_on(engine, |_| {}).await);
    let mut tasks = Vec::new();
    for i in 0..200u64 {
        let server = server.clone();
        tasks.push(tokio::spawn(async move {
            let (id, job) = server.submit_finished(small_arena(50, i), "").await;
            assert_eq!(job["state"], "succeeded", "{job}");
            id
        }));
    }
    let mut ids = BTreeSet::new();
    for task in tasks {
        ids.insert(task.await.unwrap());
    }
    assert_eq!(ids.len(), 200);
    let metrics = server.get("/metrics", None).await.text();
    assert!(
        metrics.contains("egsolve_jobs{state=\"succeeded\"} 200"),
        "{metrics}"
    );
    assert!(
        metrics.contains("egsolve_phase_duration_seconds_count{phase=\"solve\""),
        "{metrics}"
    );
    std::sync::Arc::into_inner(server).unwrap().stop().await;
}

async fn long_polling_answers_when_the_state_changes(engine: Engine) {
    let server = Server::start_on(engine, |c| c.cpu_workers = 1).await;
    let blocker = server.submit_blocker().await;
    let waiting = server.submit_ok(slow_cycle(5), "", None).await;
    let cancel = {
        let http = server.http.clone();
        let url = format!("{}/v1/jobs/{blocker}", server.base);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            http.delete(url).send().await.unwrap();
        })
    };
    let start = Instant::now();
    let job = server
        .get(&format!("/v1/jobs/{waiting}?wait=30"), None)
        .await
        .json();
    assert_ne!(job["state"], "queued");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    cancel.await.unwrap();
    server.stop().await;
}

async fn service_endpoints_answer_as_specified(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    assert_eq!(server.get("/healthz", None).await.json()["status"], "ok");
    assert_eq!(server.get("/readyz", None).await.json()["status"], "ready");
    let devices = server.get("/v1/devices", None).await.json();
    assert_eq!(devices["gpus"].as_array().unwrap().len(), 0);
    assert_eq!(devices["cpu"]["workers"], 2);
    let metrics = server.get("/metrics", None).await;
    assert!(metrics.text().contains("egsolve_queue_depth 0"));
    let reply = server.call(Method::PUT, "/v1/jobs", None, &[], None).await;
    reply.assert_problem(405, "method-not-allowed");
    server.stop().await;
}

#[test]
fn router_routes_equal_the_spec_paths() {
    let routes: BTreeSet<(String, String)> = egsolve_service::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let mut documented = BTreeSet::new();
    for (path, item) in spec()["paths"].as_object().unwrap() {
        for method in ["get", "post", "put", "delete", "patch"] {
            if item.get(method).is_some() {
                documented.insert((method.to_string(), path.clone()));
            }
        }
    }
    assert_eq!(routes, documented);
}

/// `GET /v1/workers` lists this process (API and worker) with its slots and the job it runs,
/// and the job's view names that worker.
async fn workers_list_this_process_with_its_jobs(engine: Engine) {
    let server = Server::start_on(engine, |c| c.cpu_workers = 1).await;
    let running = server
        .submit_ok(slow_cycle(200_000), "?backend=reference", None)
        .await;
    let job = server.wait_state(&running, "running", None).await;
    let listing = server.get("/v1/workers", None).await.json();
    let expected_store = match engine {
        Engine::Sqlite => "sqlite",
        Engine::Postgres => "postgres",
    };
    assert_eq!(listing["store"], expected_store, "{listing}");
    let workers = listing["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{listing}");
    let me = &workers[0];
    assert_eq!(
        (me["api"].as_bool(), me["cpu"]["workers"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(me["jobs"][0]["id"], running.as_str(), "{listing}");
    assert_eq!(me["jobs"][0]["device"], "cpu");
    assert_eq!(job["worker"], me["id"], "{job}");
    let reply = server.delete(&format!("/v1/jobs/{running}"), None).await;
    assert_eq!(reply.status, 200);
    server.stop().await;
}

on_both_stores!(
    workers_list_this_process_with_its_jobs,
    shared_games_plain_and_gzip_give_the_expected_answers,
    result_formats_vertex_selection_and_gzip,
    json_result_is_the_cli_document_and_certifies,
    bad_bodies_get_the_right_problems,
    large_malformed_arenas_fail_in_the_job_with_line_and_column,
    arenas_parsed_while_uploading_with_and_without_memory_budget,
    unknown_ids_and_routes_are_404,
    cancel_a_queued_and_a_running_job,
    users_are_isolated_and_limited,
    two_hundred_concurrent_small_submissions_succeed,
    long_polling_answers_when_the_state_changes,
    service_endpoints_answer_as_specified,
);
