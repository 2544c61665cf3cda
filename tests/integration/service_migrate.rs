//! `egsolve migrate`, end to end. (The store's claims, leases and fence on both engines are
//! the service crate's own tests: `store::tests`.)

use crate::service_by_reference as by_reference;
use crate::service_support;

use std::time::Duration;

use service_support::*;

/// `egsolve migrate` copies a stopped SQLite server's store into an empty PostgreSQL
/// database: a server on PostgreSQL then shows every job, serves the results, runs the jobs
/// that were still queued (one of them a large `egb` named by reference whose store copy
/// was lost: the migration reads its file again), and continues the sequence; a second copy
/// is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_store_migrates_into_postgres() {
    let Some(Engine::Postgres) = Engine::postgres() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    // Parsed by the worker, so a malformed arena becomes a failed job.
    let sqlite = Server::start_in(dir.path(), |c| {
        c.cpu_workers = 1;
        c.inline_parse_bytes = 0;
        c.import_roots = vec![root.path().to_owned()];
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
    let blocker = sqlite.submit_blocker().await;
    let queued = sqlite
        .submit_ok(small_arena(30, 2), "?priority=-5", None)
        .await;
    sqlite.stop().await;
    // A large egb named by reference, read into memory by a server parsing at submission,
    // its store copy lost as a stop before it landed would lose it: the migration reads
    // the file it was named by again.
    let egb = by_reference::big_egb(1_000_000, 5);
    let named = root.path().join("big.egb");
    std::fs::write(&named, &egb).unwrap();
    let sqlite = Server::start_in(dir.path(), |c| {
        c.cpu_workers = 1;
        c.import_roots = vec![root.path().to_owned()];
    })
    .await;
    sqlite.wait_state(&blocker, "running", None).await;
    let reply = by_reference::submit_reference(&sqlite, &named, "?backend=cpu", None).await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let by_reference = reply.json()["id"].as_str().unwrap().to_string();
    sqlite.stop().await;
    let key = by_reference::parts_key(&egb);
    by_reference::stored_copy(dir.path(), &key).await;
    std::fs::remove_file(dir.path().join("arenas").join(&key)).unwrap();

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
    assert!(printed.contains("copied 5 jobs"), "{printed}");

    let cache = tempfile::tempdir().unwrap();
    let server = Server::start_in(cache.path(), |c| {
        c.database = Some(url.clone());
        c.cpu_workers = 1;
    })
    .await;
    // The blocker would hold the one worker: cancelled, so the queued jobs run.
    server.delete(&format!("/v1/jobs/{blocker}"), None).await;
    let listed = server.get("/v1/jobs", None).await.json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 5, "{listed}");
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
    let ran = server
        .wait_finished(&by_reference, None, Duration::from_secs(60))
        .await;
    assert_eq!(ran["state"], "succeeded", "{ran}");
    assert_eq!(ran["summary"]["w0"], 1_000_000, "{ran}");
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
