//! Parity games through the service (issue 17), on both stores: a `format=gm` upload
//! whose energy reduction does not fit in 64 bits is answered by the parity solver (the job
//! view and the metrics name it, the JSON has no credits, `check_parity` certifies it,
//! `paritysol` works, `format=text` is a clear 400); `auto` answers a parity game with the
//! parity solver by default and solves the reduction only with `credits=true`; a
//! `backend=parity` answer never serves a later job that expects credits; energy backends
//! fail with messages that say what to do, and `backend=parity` on an energy game is refused
//! at submission.

use crate::service_support;

use egsolve_core::check::{ParityClaim, check_parity};
use egsolve_core::format::{ReadOptions, read, read_paritysol};
use egsolve_core::generate::{ParityGame, random_parity, write_pgsolver};
use egsolve_core::output::read_json_answer;
use service_support::*;

fn gm_bytes(game: &ParityGame) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_pgsolver(game, &mut bytes).unwrap();
    bytes
}

/// Winners of the native parity solver run here, for comparison.
fn local_winners(bytes: &[u8]) -> Vec<u8> {
    let game = read(bytes, &ReadOptions::default()).unwrap();
    let parity = game.parity.as_ref().unwrap();
    let solution = egsolve_core::solve::parity::solve_with(
        &game.arena,
        &parity.compressed.priority,
        &egsolve_core::solve::parity::ParityOptions::with_threads(1),
        &egsolve_core::solve::Control::new(),
    )
    .unwrap();
    (0..game.arena.vertex_count() as u32)
        .map(|v| solution.winner(v).index())
        .collect()
}

async fn a_game_beyond_the_reduction_is_answered_by_the_parity_solver(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let bytes = gm_bytes(&random_parity(3_000, 99, 3, 17));
    let game = read(&bytes[..], &ReadOptions::default()).unwrap();
    let parity = game.parity.as_ref().unwrap();
    assert!(
        !parity.reduction_fits(),
        "the test needs a game beyond the reduction"
    );

    let (id, job) = server
        .submit_finished(bytes.clone(), "?format=gm&return=strategies")
        .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let summary = &job["summary"];
    assert_eq!(summary["backend"], "parity", "{job}");
    assert_eq!(summary["credits_computed"], false, "{job}");
    assert_eq!(summary["parity"]["reduction_fits"], false, "{job}");
    assert_eq!(summary["parity"]["priorities"], 100, "{job}");
    assert!(summary["initial"]["credit"].is_null(), "{job}");

    let served = server.get(&format!("/v1/jobs/{id}/result"), None).await;
    assert_eq!(served.status, 200);
    let doc = served.json();
    assert!(
        doc["vertices"][0].get("credit").is_none(),
        "{}",
        doc["vertices"][0]
    );
    let answer = read_json_answer(&served.body[..], 3_000).unwrap();
    assert!(answer.credit.is_none());
    assert_eq!(answer.winner, local_winners(&bytes));
    let claim = ParityClaim {
        winner: &answer.winner,
        strategy: &answer.strategy,
    };
    let report = check_parity(&game.arena, &parity.priorities, claim).unwrap();
    assert!(report.passed(), "{:?}", report.violations);

    let sol = server
        .get(&format!("/v1/jobs/{id}/result?format=paritysol"), None)
        .await;
    assert_eq!(sol.status, 200);
    let lines = read_paritysol(&sol.body[..]).unwrap();
    assert_eq!(lines.len(), 3_000);
    assert!(
        lines
            .iter()
            .all(|&(v, w, _)| w == answer.winner[v as usize])
    );

    let text = server
        .get(&format!("/v1/jobs/{id}/result?format=text"), None)
        .await;
    text.assert_problem(400, "invalid-parameter");
    assert!(text.text().contains("paritysol"), "{}", text.text());

    // The web page's histogram: winners counted, no credit bins.
    let histogram = server
        .get(&format!("/v1/jobs/{id}/result/histogram?bins=10"), None)
        .await;
    assert_eq!(histogram.status, 200);
    let histogram = histogram.json();
    assert_eq!(histogram["credits_computed"], false, "{histogram}");
    assert_eq!(
        histogram["bins"].as_array().map(Vec::len),
        Some(0),
        "{histogram}"
    );
    let w0 = answer.winner.iter().filter(|&&w| w == 0).count();
    assert_eq!(histogram["w0"], w0, "{histogram}");
    assert_eq!(histogram["w1"], 3_000 - w0, "{histogram}");

    let metrics = server.get("/metrics", None).await.text();
    assert!(
        metrics.contains("phase=\"solve\",backend=\"parity\""),
        "{metrics}"
    );

    // An energy backend cannot take it: the job fails and names the way out.
    let (_, job) = server
        .submit_finished(bytes.clone(), "?format=gm&backend=cpu")
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    let message = job["failure"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("backend parity"), "{job}");
    server.stop().await;
}

async fn forced_parity_answers_never_serve_jobs_that_expect_credits(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    // Few priorities: the reduction fits, so `auto` gives credits when asked.
    let bytes = gm_bytes(&random_parity(200, 5, 3, 3));
    let (_, job) = server
        .submit_finished(bytes.clone(), "?format=gm&backend=parity")
        .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["summary"]["backend"], "parity", "{job}");
    assert_eq!(job["summary"]["credits_computed"], false, "{job}");
    assert_eq!(job["summary"]["parity"]["reduction_fits"], true, "{job}");

    // `auto` answers a parity game with the parity solver by default: no credits.
    let (_, job) = server.submit_finished(bytes.clone(), "?format=gm").await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["options"]["credits"], false, "{job}");
    assert_eq!(job["summary"]["backend"], "parity", "{job}");
    assert_eq!(job["summary"]["credits_computed"], false, "{job}");

    // With `credits=true` the reduction is solved: credits, and the same winners.
    let (auto, job) = server
        .submit_finished(bytes.clone(), "?format=gm&credits=true")
        .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["options"]["credits"], true, "{job}");
    assert_eq!(job["reused"], false, "{job}");
    assert_eq!(job["summary"]["credits_computed"], true, "{job}");
    let text = server
        .get(&format!("/v1/jobs/{auto}/result?format=text"), None)
        .await;
    assert_eq!(text.status, 200);
    let winners: Vec<u8> = parse_text_result(&text.text())
        .iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(
        winners,
        local_winners(&bytes),
        "reduction and parity solver agree"
    );

    // The same forced job again reuses the forced answer.
    let (_, job) = server
        .submit_finished(bytes, "?format=gm&backend=parity")
        .await;
    assert_eq!(job["reused"], true, "{job}");
    assert_eq!(job["summary"]["credits_computed"], false, "{job}");

    // backend=parity on an energy game: refused at submission (it is parsed there), naming
    // the backends that solve it.
    let refused = server
        .submit(small_arena(20, 1), "?backend=parity", None)
        .await;
    refused.assert_problem(422, "backend-unavailable");
    let message = refused.json()["detail"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("use backend=auto"), "{message}");
    server.stop().await;
}

on_both_stores!(
    a_game_beyond_the_reduction_is_answered_by_the_parity_solver,
    forced_parity_answers_never_serve_jobs_that_expect_credits,
);
