//! `egsolve migrate`, end to end. (The store's claims, leases and fence on both engines are
//! the service crate's own tests: `store::tests`.)

use crate::service_support;

use std::time::Duration;

use service_support::*;

/// `egsolve migrate` copies a stopped SQLite server's store into an empty PostgreSQL
/// database: a server on PostgreSQL then shows every job, serves the results, runs the job
/// that was still queued, and continues the sequence; a second copy is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_store_migrates_into_postgres() {
    let Some(Engine::Postgres) = Engine::postgres() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Parsed by the worker, so a malformed arena becomes a failed job.
    let sqlite = Server::start_in(dir.path(), |c| {
        c.cpu_workers = 1;
        c.inline_parse_bytes = 0;
    })
    .await;
    let (done, _) = sqlite.submit_finished(small_arena(40, 1), "").await;
    let expected = sqlite
        .get(&format!("/v1/jobs/{done}/result?format=text"), None)
        .await
        .text();
    let failed = sqlite
        .submit_ok(
            b"1;\n0 MAX 1:1;\n1 MIN 0:1,\n".to_vec(),
            "?format=mpg",
            None,
        )
        .await;
    sqlite
        .wait_finished(&failed, None, Duration::from_secs(60))
        .await;
    // A job still queued when the server stops: it waits behind one that runs (and goes
    // back to the queue at the stop).
    sqlite.submit_blocker().await;
    let queued = sqlite
        .submit_ok(small_arena(30, 2), "?priority=5", None)
        .await;
    sqlite.stop().await;

    let url = service_support::postgres::PgServer::shared()
        .unwrap()
        .create_database();
    let migrate = |url: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_egsolve"))
            .args(["migrate", "--data-dir"])
            .arg(dir.path())
            .args(["--database", url])
            .output()
            .unwrap()
    };
    let output = migrate(&url);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.contains("copied 4 jobs"), "{printed}");

    let cache = tempfile::tempdir().unwrap();
    let server = Server::start_in(cache.path(), |c| {
        c.database = Some(url.clone());
        c.cpu_workers = 1;
    })
    .await;
    let listed = server.get("/v1/jobs", None).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 4, "{listed}");
    let text = server
        .get(&format!("/v1/jobs/{done}/result?format=text"), None)
        .await
        .text();
    assert_eq!(text, expected, "the result moved with its bytes");
    let view = server.get(&format!("/v1/jobs/{failed}"), None).await.json();
    assert_eq!(view["failure"]["type"], "malformed-arena");
    let ran = server
        .wait_finished(&queued, None, Duration::from_secs(60))
        .await;
    assert_eq!(ran["state"], "succeeded", "{ran}");
    let fresh = server.submit_ok(small_arena(20, 3), "", None).await;
    let page = server.get("/v1/jobs?limit=1", None).await.json();
    assert_eq!(
        page["jobs"][0]["id"],
        fresh.as_str(),
        "the sequence continues"
    );
    server.stop().await;

    let again = migrate(&url);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already holds"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}
