//! Results by reference (`POST /v1/jobs/{id}/result/export`), end to end on both stores:
//! the binary result is linked to the store's read-only copy (same inode) and holds the
//! bytes `GET /v1/jobs/{id}/result?format=binary` sends; other formats are rendered into
//! the file as the `GET` sends them; a second export replaces the file whole and leaves no
//! hidden file behind; every refusal has its own problem type (no export roots, a token
//! without the permission, a relative or `..` path, a directory named, outside the roots, a
//! directory linked out of them, a missing directory, a rendering the answer has not, a
//! job without a result). The command line's side (`submit --result-by-reference`, `result
//! --by-reference`) is tested with jobs by reference, in `service_by_reference.rs`.

use crate::service_support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use service_support::*;

const ENERGY: &str = "energy/clique_500_cp4.mpg.gz";
const PARITY: &str = "parity/Hanoi_ndisks=8_eventually_done.gm.gz";

/// `POST /v1/jobs/{id}/result/export` with `body`.
async fn export(server: &Server, id: &str, body: String, token: Option<&str>) -> Reply {
    server
        .call(
            Method::POST,
            &format!("/v1/jobs/{id}/result/export"),
            token,
            &[("content-type", "application/json")],
            Some(body.into_bytes()),
        )
        .await
}

fn request(path: &Path, format: &str) -> String {
    serde_json::json!({ "path": path, "format": format, "replace": true }).to_string()
}

/// Hidden files the server left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect()
}

async fn results_are_linked_rendered_and_replaced(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("exports");
    std::fs::create_dir(&root).unwrap();
    let server = Server::start_on(engine, |config| {
        config.export_roots = vec![root.clone()];
    })
    .await;
    let game = gunzip(&std::fs::read(data_file(ENERGY)).unwrap());
    let (id, job) = server.submit_finished(game, "?backend=cpu").await;
    assert_eq!(job["state"], "succeeded", "{job}");

    let out = root.join("answer.bin");
    let reply = export(&server, &id, request(&out, "binary"), None).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    let placed = reply.json();
    assert_eq!(placed["linked"], true, "same file system: a link, {placed}");
    assert_eq!(placed["format"], "binary");
    let downloaded = server
        .get(&format!("/v1/jobs/{id}/result?format=binary"), None)
        .await;
    assert_eq!(downloaded.status, 200);
    let written = std::fs::read(&out).unwrap();
    assert!(
        written == downloaded.body,
        "the export holds the download's bytes"
    );
    assert_eq!(placed["bytes"], written.len() as u64);
    // The link shares the store's copy, which is read-only.
    let meta = std::fs::metadata(&out).unwrap();
    assert!(meta.nlink() >= 2, "a hard link: {} names", meta.nlink());
    assert_eq!(meta.permissions().mode() & 0o222, 0, "read-only");

    // Another format is rendered, and replaces the file whole.
    // Again over itself (a rename onto the same file renames nothing): no hidden link left.
    let reply = export(&server, &id, request(&out, "binary"), None).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert!(leftovers(&root).is_empty(), "{:?}", leftovers(&root));
    // Without `replace`, an existing name is refused and kept.
    let keep = serde_json::json!({ "path": out, "format": "json" }).to_string();
    export(&server, &id, keep, None)
        .await
        .assert_refusal(409, "export-exists", "no replace");
    assert!(std::fs::read(&out).unwrap() == downloaded.body);
    let reply = export(&server, &id, request(&out, "json"), None).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert_eq!(reply.json()["linked"], false);
    let json = server
        .get(&format!("/v1/jobs/{id}/result?format=json"), None)
        .await;
    assert!(std::fs::read(&out).unwrap() == json.body, "the rendering");
    assert_eq!(std::fs::metadata(&out).unwrap().nlink(), 1);
    let text = root.join("answer.txt");
    let reply = export(&server, &id, request(&text, "text"), None).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    let body = server
        .get(&format!("/v1/jobs/{id}/result?format=text"), None)
        .await;
    assert!(std::fs::read(&text).unwrap() == body.body);
    // The store's copy is untouched by the replacement: the download is as before.
    let again = server
        .get(&format!("/v1/jobs/{id}/result?format=binary"), None)
        .await;
    assert!(again.body == downloaded.body);
    // Without a format: binary.
    let plain = root.join("plain.bin");
    let reply = export(
        &server,
        &id,
        serde_json::json!({ "path": plain }).to_string(),
        None,
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert!(std::fs::read(&plain).unwrap() == downloaded.body);
    assert!(leftovers(&root).is_empty(), "{:?}", leftovers(&root));
    server.stop().await;
}

async fn every_bad_export_has_its_own_answer(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("exports");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("out")).unwrap();
    let tokens = dir.path().join("tokens");
    let alice = egsolve_service::add_token_with(&tokens, "alice", false, true).unwrap();
    let bob = egsolve_service::add_token(&tokens, "bob", false).unwrap();
    let server = Server::start_on(engine, |config| {
        config.auth = true;
        config.tokens_file = Some(tokens.clone());
        config.export_roots = vec![root.clone()];
    })
    .await;
    let parity = std::fs::read(data_file(PARITY)).unwrap();
    let id = server
        .submit_ok(parity, "?backend=parity", Some(&alice))
        .await;
    let job = server
        .wait_finished(&id, Some(&alice), Duration::from_secs(60))
        .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let bob_id = server
        .submit_ok(slow_cycle(30_000), "?backend=reference", Some(&bob))
        .await;

    let target = root.join("a.bin");
    export(&server, &id, request(&target, "binary"), Some(&bob))
        .await
        .assert_problem(403, "export-forbidden");
    let invalid = |body: String| (body, 400, "invalid-export");
    let outside = |path: &Path| (request(path, "binary"), 403, "outside-export-roots");
    let cases: Vec<(String, u16, &str)> = vec![
        invalid(r#"{"path": "exports/a.bin"}"#.into()),
        invalid(format!(
            r#"{{"path": "{}/../exports/a.bin"}}"#,
            root.display()
        )),
        invalid(format!(r#"{{"path": "{}/"}}"#, root.display())),
        invalid("not json".into()),
        invalid(request(&target, "csv")),
        outside(&elsewhere.join("a.bin")),
        outside(&root.join("out/a.bin")),
        outside(Path::new("/etc/a.bin")),
        (
            request(&root.join("missing/a.bin"), "binary"),
            422,
            "export-directory-missing",
        ),
        (
            request(&root.join("sub"), "binary"),
            422,
            "export-unwritable",
        ),
        // A parity answer has no credits to list.
        (request(&target, "text"), 400, "invalid-parameter"),
    ];
    for (body, status, kind) in cases {
        let reply = export(&server, &id, body.clone(), Some(&alice)).await;
        reply.assert_refusal(status, kind, &body);
    }
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
    assert!(root.join("sub").is_dir(), "the directory named stays one");
    assert!(leftovers(&root).is_empty(), "{:?}", leftovers(&root));
    // Another user's job does not exist for alice; a running job has no result yet.
    export(&server, &bob_id, request(&target, "binary"), Some(&alice))
        .await
        .assert_problem(404, "job-not-found");
    server.wait_state(&bob_id, "running", Some(&bob)).await;
    // The permitted token's export of a parity answer: paritysol, rendered.
    let reply = export(&server, &id, request(&target, "paritysol"), Some(&alice)).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    let sol = server
        .get(
            &format!("/v1/jobs/{id}/result?format=paritysol"),
            Some(&alice),
        )
        .await;
    assert!(std::fs::read(&target).unwrap() == sol.body);
    server
        .delete(&format!("/v1/jobs/{bob_id}"), Some(&bob))
        .await;
    server.stop().await;

    // No export roots: results by reference are off.
    let server = Server::start_on(engine, |_| {}).await;
    let game = gunzip(&std::fs::read(data_file(ENERGY)).unwrap());
    let (id, _) = server.submit_finished(game, "?backend=cpu").await;
    export(&server, &id, request(&target, "binary"), None)
        .await
        .assert_problem(403, "export-disabled");
    server.stop().await;
}

/// An export root above the server's data directory: the store's files are no target.
async fn the_servers_own_data_is_no_export_target(engine: Engine) {
    let above = tempfile::tempdir().unwrap();
    let (root, data) = (above.path().to_owned(), above.path().join("store"));
    std::fs::create_dir(&data).unwrap();
    let server = Server::start_in(&data, |config| {
        engine.configure(config);
        config.export_roots = vec![root.clone()];
    })
    .await;
    let game = gunzip(&std::fs::read(data_file(ENERGY)).unwrap());
    let (id, _) = server.submit_finished(game, "?backend=cpu").await;
    let stored: Vec<_> = std::fs::read_dir(data.join("results"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(stored.len(), 1);
    let target = stored[0].path();
    let before = std::fs::read(&target).unwrap();
    for path in [target.clone(), data.join("jobs.db"), data.join("new.bin")] {
        export(&server, &id, request(&path, "json"), None)
            .await
            .assert_refusal(403, "outside-export-roots", &path.display().to_string());
    }
    assert!(
        std::fs::read(&target).unwrap() == before,
        "the stored result is untouched"
    );
    assert!(!data.join("new.bin").exists());
    let beside = root.join("beside.bin");
    let reply = export(&server, &id, request(&beside, "binary"), None).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    server.stop().await;
}

/// A server that died mid-export left its hidden file behind, and its record in the data
/// directory (`exports-pending/<uuid>`: the file's path); the next start removes the file
/// and the record, and leaves a hidden file it has no record of (an export under way,
/// perhaps another server's) and everything else.
async fn a_start_sweeps_the_half_made_exports_a_crash_left(engine: Engine) {
    let roots = tempfile::tempdir().unwrap();
    let root = roots.path().join("exports");
    std::fs::create_dir_all(root.join("lab/alice")).unwrap();
    let id = "0192a9d0-0000-7000-8000-000000000001";
    let stale = root.join(format!("lab/alice/.egsolve-export-{id}.part"));
    let young = root.join(".egsolve-export-0192a9d0-0000-7000-8000-000000000002.part");
    let answer = root.join("lab/answer.bin");
    for path in [&stale, &young, &answer] {
        std::fs::write(path, b"bytes").unwrap();
    }
    let data = roots.path().join("data");
    let records = data.join("exports-pending");
    std::fs::create_dir_all(&records).unwrap();
    std::fs::write(records.join(id), stale.as_os_str().as_encoded_bytes()).unwrap();
    let server = Server::start_in(&data, |config| {
        engine.configure(config);
        config.export_roots = vec![root.clone()];
    })
    .await;
    let clock = std::time::Instant::now();
    while stale.exists() && clock.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!stale.exists(), "the leftover is removed");
    assert!(young.exists() && answer.exists(), "the rest is kept");
    assert_eq!(
        std::fs::read_dir(&records).unwrap().count(),
        0,
        "its record too"
    );
    // An export records its hidden file only while it runs.
    let game = gunzip(&std::fs::read(data_file(ENERGY)).unwrap());
    let (id, _) = server.submit_finished(game, "?backend=cpu").await;
    let reply = export(&server, &id, request(&root.join("out.bin"), "binary"), None).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    server.stop().await;
}

on_both_stores!(
    results_are_linked_rendered_and_replaced,
    every_bad_export_has_its_own_answer,
    the_servers_own_data_is_no_export_target,
    a_start_sweeps_the_half_made_exports_a_crash_left,
);
