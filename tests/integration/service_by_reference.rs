//! Jobs by reference (`Content-Type: application/vnd.egsolve.reference+json`), end to end on
//! both stores: every refusal has its own problem type (no import roots, a token without the
//! permission, a relative or `..` path, outside the roots, a link out of them, no such file,
//! a directory, a FIFO that must not hang, a device); the job is about the bytes as copied
//! (the original overwritten and truncated right after the answer changes nothing), and a
//! file rewritten while it is copied is refused or answered, never a crash; through the real
//! binary, `egsolve submit --by-reference --wait --result-format binary` writes the bytes the
//! upload's job gives.

use crate::packaging_support;
use crate::service_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use service_support::*;

const ENERGY: &str = "energy/clique_500_cp4.mpg.gz";
const MEDIA: &str = "application/vnd.egsolve.reference+json";

/// POST /v1/jobs naming `path`.
pub(crate) async fn submit_reference(
    server: &Server,
    path: &Path,
    query: &str,
    token: Option<&str>,
) -> Reply {
    let body = serde_json::json!({ "path": path }).to_string();
    submit_raw_reference(server, body.into_bytes(), query, token).await
}

async fn submit_raw_reference(
    server: &Server,
    body: Vec<u8>,
    query: &str,
    token: Option<&str>,
) -> Reply {
    server
        .submit_with_headers(body, query, token, &[("content-type", MEDIA)])
        .await
}

/// An import root holding the energy game (plain text) as `game.mpg`.
fn import_root() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let game = gunzip(&std::fs::read(data_file(ENERGY)).unwrap());
    std::fs::write(root.join("game.mpg"), &game).unwrap();
    (dir, root, game)
}

/// Cuts the file at `path` to 7 bytes (what a writer truncating it mid-job leaves).
fn truncate_to_7_bytes(path: &Path) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(7)
        .unwrap();
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Each refusal, with its status and type; a token needs the permission; a server without
/// roots takes no references; FIFOs and devices are refused at once.
async fn every_bad_reference_has_its_own_answer(engine: Engine) {
    let (dir, root, _) = import_root();
    let tokens = dir.path().join("tokens");
    let alice = egsolve_service::add_token_with(&tokens, "alice", false, true).unwrap();
    let bob = egsolve_service::add_token(&tokens, "bob", false).unwrap();
    std::fs::write(dir.path().join("secret.mpg"), "0;\n0 MAX 0:1;\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.mpg"), root.join("out.mpg")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let server = Server::start_on(engine, |config| {
        config.auth = true;
        config.tokens_file = Some(tokens.clone());
        config.import_roots = vec![root.clone()];
    })
    .await;
    let game = root.join("game.mpg");
    submit_reference(&server, &game, "", Some(&bob))
        .await
        .assert_problem(403, "import-forbidden");
    let outside = |path: &Path| (json_path(path), 403, "outside-import-roots");
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (
            br#"{"path": "root/game.mpg"}"#.to_vec(),
            400,
            "invalid-reference",
        ),
        (
            format!(r#"{{"path": "{}/../root/game.mpg"}}"#, root.display()).into_bytes(),
            400,
            "invalid-reference",
        ),
        (b"not json".to_vec(), 400, "invalid-reference"),
        (vec![b' '; 100_000], 400, "invalid-reference"),
        outside(&dir.path().join("secret.mpg")),
        outside(&root.join("out.mpg")),
        outside(&root.join("zero")),
        outside(Path::new("/etc/passwd")),
        (
            json_path(&root.join("missing.mpg")),
            422,
            "reference-not-found",
        ),
        (json_path(&root.join("sub")), 422, "not-a-regular-file"),
        (json_path(&root.join("fifo")), 422, "not-a-regular-file"),
    ];
    for (body, status, kind) in cases {
        let shown = String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned();
        let reply = tokio::time::timeout(
            Duration::from_secs(20),
            submit_raw_reference(&server, body, "", Some(&alice)),
        )
        .await
        .unwrap_or_else(|_| panic!("{shown}: no answer (hung)"));
        reply.assert_refusal(status, kind, &shown);
    }
    let jobs = server.get("/v1/jobs", Some(&alice)).await.json();
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0, "no job was made");
    // The permitted token's job runs.
    let reply = submit_reference(&server, &game, "?backend=cpu", Some(&alice)).await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    server.stop().await;

    let server = Server::start_on(engine, |_| {}).await;
    submit_reference(&server, &game, "", None)
        .await
        .assert_problem(403, "import-disabled");
    server.stop().await;
}

/// `n` vertices with a self-loop of weight `w` each: megabytes of text solved at once.
fn self_loops(n: u32, w: u32) -> Vec<u8> {
    let mut text = format!("{};\n", n - 1);
    for v in 0..n {
        text += &format!("{v} MAX {v}:{w};\n");
    }
    text.into_bytes()
}

fn json_path(path: &Path) -> Vec<u8> {
    serde_json::json!({ "path": path }).to_string().into_bytes()
}

/// The job is about the bytes as copied: overwritten and then truncated right after the
/// `202` (its worker parses the store's copy, later), the original changes nothing; the
/// arena's hash is the original bytes', and an upload of them reuses the result.
async fn the_job_is_about_the_bytes_as_copied(engine: Engine) {
    let (_dir, root, game) = import_root();
    let server = Server::start_on(engine, |config| {
        config.import_roots = vec![root.clone()];
        config.inline_parse_bytes = 0;
    })
    .await;
    let path = root.join("game.mpg");
    let reply = submit_reference(&server, &path, "?backend=cpu&return=strategies", None).await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let job = reply.json();
    std::fs::write(&path, b"garbage, not a game\n".repeat(1000)).unwrap();
    truncate_to_7_bytes(&path);
    assert_eq!(job["arena"]["sha256"], sha256(&game), "{job}");
    let id = job["id"].as_str().unwrap();
    let done = server
        .wait_finished(id, None, Duration::from_secs(60))
        .await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let read = egsolve_core::format::read_bytes(&game, &Default::default()).unwrap();
    assert_eq!(
        done["summary"]["vertices"].as_u64(),
        Some(read.arena.vertex_count() as u64),
        "{done}"
    );
    let upload = server
        .submit(game.clone(), "?backend=cpu&return=strategies", None)
        .await;
    assert_eq!(upload.status, 202, "{}", upload.text());
    assert_eq!(upload.json()["reused"], true, "{}", upload.text());
    let by_reference = server
        .get(&format!("/v1/jobs/{id}/result?format=binary"), None)
        .await;
    let uploaded = server
        .get(
            &format!(
                "/v1/jobs/{}/result?format=binary",
                upload.json()["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(by_reference.body, uploaded.body);
    server.stop().await;
}

/// A file rewritten and truncated over and over while it is submitted: every answer is a
/// job about one complete version (the original's or the rewrite's), a refusal saying the
/// file changed while it was copied, or a malformed-arena refusal of a torn text; never a
/// hang or a crash, and the server goes on.
async fn a_file_changing_mid_copy_is_refused_or_answered(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let big = self_loops(400_000, 1);
    let other = self_loops(400_000, 2);
    let path = root.join("big.mpg");
    std::fs::write(&path, &big).unwrap();
    let server = Server::start_on(engine, |config| {
        config.import_roots = vec![root.clone()];
    })
    .await;
    let stop = Arc::new(AtomicBool::new(false));
    let mutator = {
        let (stop, path, big, other) = (stop.clone(), path.clone(), big.clone(), other.clone());
        std::thread::spawn(move || {
            use std::io::{Seek, Write};
            let mut round = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut file = std::fs::File::options().write(true).open(&path).unwrap();
                let content = if round % 2 == 0 { &other } else { &big };
                file.set_len(content.len() as u64 / 3).unwrap();
                std::thread::sleep(Duration::from_millis(3));
                file.seek(std::io::SeekFrom::Start(0)).unwrap();
                file.write_all(content).unwrap();
                file.set_len(content.len() as u64).unwrap();
                std::thread::sleep(Duration::from_millis(3));
                round += 1;
            }
        })
    };
    // Accepted as one whole version, accepted otherwise (a change the size and time stamps
    // did not show), refused as changed, refused as malformed.
    let (versions, mut tally) = ([sha256(&big), sha256(&other)], [0u32; 4]);
    let mut accepted = Vec::new();
    for _ in 0..12 {
        let reply = tokio::time::timeout(
            Duration::from_secs(60),
            submit_reference(&server, &path, "?backend=cpu", None),
        )
        .await
        .expect("an answer, not a hang");
        match reply.status {
            202 => {
                let job = reply.json();
                let whole = versions.iter().any(|v| job["arena"]["sha256"] == *v);
                tally[usize::from(!whole)] += 1;
                accepted.push(job["id"].as_str().unwrap().to_string());
            }
            409 => {
                reply.assert_problem(409, "reference-changed");
                tally[2] += 1;
            }
            _ => {
                reply.assert_problem(422, "malformed-arena");
                tally[3] += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    mutator.join().unwrap();
    eprintln!("whole version, other, changed, malformed: {tally:?}");
    // Every accepted job ends, about the bytes it copied.
    for id in accepted {
        let done = server
            .wait_finished(&id, None, Duration::from_secs(120))
            .await;
        assert!(
            done["state"] == "succeeded" || done["failure"]["type"] == "malformed-arena",
            "{done}"
        );
    }
    std::fs::write(&path, &big).unwrap();
    let (job, done) = submit_and_wait(&server, &path, || {}).await;
    assert_eq!(job["arena"]["sha256"], versions[0]);
    assert_eq!(done["state"], "succeeded", "{done}");
    server.stop().await;
}

/// Bytes of parts for a plain `egb` file's key, as an upload in parts of this size.
const PART: u64 = 8 << 20;

/// A plain `egb` file of `n` self-loops of weight `w`: over [`PART`] bytes for 10^6.
pub(crate) fn big_egb(n: u32, w: u32) -> Vec<u8> {
    let read = egsolve_core::format::read_bytes(&self_loops(n, w), &Default::default()).unwrap();
    let mut egb = Vec::new();
    egsolve_core::format::write_egb(&read, &mut egb).unwrap();
    assert!(
        egb.len() as u64 > PART,
        "{} bytes: one part only",
        egb.len()
    );
    egb
}

/// The key of `egb` as an upload in parts of [`PART`] (SHA-256 over the part size, the size
/// and each part's SHA-256).
pub(crate) fn parts_key(egb: &[u8]) -> String {
    use sha2::Digest;
    let mut key = sha2::Sha256::new();
    key.update(b"egsolve upload in parts v1\0");
    key.update(PART.to_le_bytes());
    key.update((egb.len() as u64).to_le_bytes());
    for part in egb.chunks(PART as usize) {
        key.update(sha2::Sha256::digest(part));
    }
    hex::encode(key.finalize())
}

/// Waits until the store in `data` holds the arena `key` (a copy written behind its job).
pub(crate) async fn stored_copy(data: &Path, key: &str) -> Vec<u8> {
    let path = data.join("arenas").join(key);
    for _ in 0..600 {
        if let Ok(bytes) = std::fs::read(&path) {
            return bytes;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the store never got its copy of {key}");
}

/// Waits until no thread of this process still writes a store copy behind its job
/// (`egsolve-copy-behind`, 15 characters of it in `comm`). Such a thread places the copy
/// before it forgets the bytes it offers to workers, at the lowest CPU priority: a test
/// that removes the placed copy and starts another server in this process must wait for
/// it, or that server's worker is answered from the bytes still offered.
async fn copies_behind_done() {
    let writing = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim_end() == "egsolve-copy-be")
            })
    };
    for _ in 0..1200 {
        if !writing() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("a store copy was still being written behind its job after a minute");
}

/// An import root (in a temporary directory) holding `egb` as `big.egb`.
fn root_holding(egb: &[u8]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let path = root.join("big.egb");
    std::fs::write(&path, egb).unwrap();
    (dir, root, path)
}

/// Submits `path` by reference, runs `then` right after the `202`, and waits for the job's
/// end: the job as accepted, and as ended.
async fn submit_and_wait(
    server: &Server,
    path: &Path,
    then: impl FnOnce(),
) -> (serde_json::Value, serde_json::Value) {
    let reply = submit_reference(server, path, "?backend=cpu", None).await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    then();
    let job = reply.json();
    let done = server
        .wait_finished(job["id"].as_str().unwrap(), None, Duration::from_secs(120))
        .await;
    (job, done)
}

/// [`submit_and_wait`], the file truncated right after the `202`; the arena keyed `key`.
async fn answered_after_truncating(server: &Server, path: &Path, key: &str) -> serde_json::Value {
    let (job, done) = submit_and_wait(server, path, || truncate_to_7_bytes(path)).await;
    assert_eq!(job["arena"]["sha256"], key, "{job}");
    done
}

/// A plain `egb` file of 8 MiB or more is keyed like an upload in parts of 8 MiB;
/// truncated right after the `202`, its job still answers about the bytes read. On SQLite
/// it is answered from memory and the store's copy, written behind the job, holds the
/// bytes read; a malformed one is refused before a job exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_egb_is_copied_in_parts_and_keyed_like_an_upload_in_parts() {
    let vertices = 1_000_000u32;
    let egb = big_egb(vertices, 3);
    let key = parts_key(&egb);
    let (_dir, root, path) = root_holding(&egb);
    let server = Server::start_on(Engine::Sqlite, |config| {
        config.import_roots = vec![root.clone()];
    })
    .await;
    let done = answered_after_truncating(&server, &path, &key).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["summary"]["vertices"], u64::from(vertices), "{done}");
    assert_eq!(done["summary"]["w0"], u64::from(vertices), "{done}");
    assert!(
        stored_copy(&server.dir, &key).await == egb,
        "the store's copy differs"
    );
    // A block's checksum no longer matches: refused as an upload of it would be.
    let mut damaged = egb.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x5a;
    std::fs::write(&path, &damaged).unwrap();
    submit_reference(&server, &path, "?backend=cpu", None)
        .await
        .assert_problem(422, "malformed-arena");
    assert!(!server.dir.join("arenas").join(parts_key(&damaged)).exists());
    server.stop().await;
}

/// The budget holds a file read into memory but not its game: the worker loads the game
/// from the bytes whose copy is still being written, not from the file (changed right after
/// the `202`). With no parsing at submission the file is copied at once, keyed alike, and a
/// malformed one fails its job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_egb_is_answered_from_its_bytes_in_memory_or_copied_at_once() {
    let egb = big_egb(1_000_000, 3);
    let key = parts_key(&egb);
    let (_dir, root, path) = root_holding(&egb);
    let server = Server::start_on(Engine::Sqlite, |config| {
        config.import_roots = vec![root.clone()];
        config.preparsed_memory_bytes = egb.len() as u64 + (1 << 20);
    })
    .await;
    let done = answered_after_truncating(&server, &path, &key).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["summary"]["w0"], 1_000_000, "{done}");
    assert!(
        stored_copy(&server.dir, &key).await == egb,
        "the store's copy differs"
    );
    server.stop().await;

    std::fs::write(&path, &egb).unwrap();
    let server = Server::start_on(Engine::Sqlite, |config| {
        config.import_roots = vec![root.clone()];
        config.inline_parse_bytes = 0;
    })
    .await;
    let reply = submit_reference(&server, &path, "?backend=cpu", None).await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    assert_eq!(reply.json()["arena"]["sha256"], key, "{}", reply.text());
    assert!(std::fs::read(server.dir.join("arenas").join(&key)).unwrap() == egb);
    let mut damaged = egb.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x5a;
    std::fs::write(&path, &damaged).unwrap();
    let (_, failed) = submit_and_wait(&server, &path, || {}).await;
    assert_eq!(failed["failure"]["type"], "malformed-arena", "{failed}");
    server.stop().await;
}

/// A job answered from memory whose store copy is missing when it runs (a server stopped
/// before it ran, the copy lost as a crash would lose it) reads the file again: the same
/// bytes are solved and stored; changed bytes fail the job with `reference-changed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_store_copy_is_missing_reads_its_file_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let (same, changed) = (root.join("same.egb"), root.join("changed.egb"));
    let (egb, other) = (big_egb(1_000_000, 3), big_egb(1_000_000, 4));
    std::fs::write(&same, &egb).unwrap();
    std::fs::write(&changed, &other).unwrap();
    let configure = |config: &mut egsolve_service::ServeConfig| {
        config.import_roots = vec![root.clone()];
        config.cpu_workers = 1;
    };
    // One worker, busy with a slow job: the two jobs wait in the queue.
    let first = Server::start_on(Engine::Sqlite, configure).await;
    let slow = first
        .submit(slow_cycle(30_000), "?backend=reference", None)
        .await;
    assert_eq!(slow.status, 202, "{}", slow.text());
    let mut ids = Vec::new();
    for path in [&same, &changed] {
        let reply = submit_reference(&first, path, "?backend=cpu", None).await;
        assert_eq!(reply.status, 202, "{}", reply.text());
        let job = reply.json();
        assert_eq!(job["state"], "queued", "{job}");
        let key = job["arena"]["sha256"].as_str().unwrap().to_string();
        ids.push((job["id"].as_str().unwrap().to_string(), key));
    }
    // The copies wait for their jobs to let go of the bytes: here, the stop.
    let data = first.dir.clone();
    let kept = first.stop().await;
    for (_, key) in &ids {
        stored_copy(&data, key).await;
    }
    copies_behind_done().await;
    for (_, key) in &ids {
        std::fs::remove_file(data.join("arenas").join(key)).unwrap();
    }
    std::fs::write(&changed, &egb).unwrap();
    let second = Server::start_in(&data, configure).await;
    let slow_id = slow.json()["id"].as_str().unwrap().to_string();
    second.delete(&format!("/v1/jobs/{slow_id}"), None).await;
    let done = second
        .wait_finished(&ids[0].0, None, Duration::from_secs(120))
        .await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["summary"]["w0"], 1_000_000, "{done}");
    assert!(std::fs::read(data.join("arenas").join(&ids[0].1)).unwrap() == egb);
    let failed = second
        .wait_finished(&ids[1].0, None, Duration::from_secs(120))
        .await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert_eq!(failed["failure"]["type"], "reference-changed", "{failed}");
    let message = failed["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("changed.egb") && message.contains("submit it again"),
        "{message}"
    );
    assert!(!data.join("arenas").join(&ids[1].1).exists());
    second.stop().await;
    drop(kept);
}

on_both_stores!(
    every_bad_reference_has_its_own_answer,
    the_job_is_about_the_bytes_as_copied,
    a_file_changing_mid_copy_is_refused_or_answered,
);

/// Through the real binary: `egsolve serve --import-root --export-root`, then `egsolve
/// submit --by-reference FILE --wait --result-format binary -o` writes what the uploaded
/// job's result is, and so does the server itself with `--result-by-reference` (a link to
/// its copy); `egsolve result ID -o FILE --by-reference` renders into FILE what the download
/// gives; outside the roots the CLI says why.
#[test]
fn the_cli_submits_by_reference() {
    use packaging_support::{Server as Binary, run_client};
    let dir = tempfile::tempdir().unwrap();
    let (root, exports) = (dir.path().join("root"), dir.path().join("exports"));
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&exports).unwrap();
    let game = root.join("game.mpg.gz");
    std::fs::copy(data_file(ENERGY), &game).unwrap();
    let server = Binary::start(
        &dir.path().join("store"),
        &[
            "--import-root",
            root.to_str().unwrap(),
            "--export-root",
            exports.to_str().unwrap(),
        ],
    );
    let run = |args: &[&str]| {
        let (code, _, stderr) = run_client(&server, args);
        (code, stderr)
    };
    let by_reference = dir.path().join("by-reference.bin");
    let uploaded = dir.path().join("uploaded.bin");
    let exported = exports.join("exported.bin");
    let both_ways = ["--by-reference", "--result-by-reference"];
    for (out, flags) in [
        (&by_reference, &both_ways[..1]),
        (&uploaded, &[][..]),
        (&exported, &both_ways[..]),
    ] {
        let mut args = vec![
            "submit",
            game.to_str().unwrap(),
            "--backend",
            "cpu",
            "--wait",
            "--result-format",
            "binary",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        let (code, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("succeeded"), "{stderr}");
        if out == &exported {
            assert!(stderr.contains("linked to the server's copy"), "{stderr}");
        }
    }
    let bytes = std::fs::read(&by_reference).unwrap();
    assert_eq!(&bytes[..8], b"EGSRESLT");
    assert_eq!(bytes, std::fs::read(&uploaded).unwrap());
    assert_eq!(bytes, std::fs::read(&exported).unwrap());
    // `result ID -o FILE --by-reference`: a rendering, FILE relative to the client's
    // directory.
    let (code, id, stderr) = run_client(&server, &["submit", game.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let id = id.trim();
    let (code, stderr) = run(&["status", id, "--wait", "30"]);
    assert_eq!(code, 0, "{stderr}");
    let mut json = None;
    for _ in 0..300 {
        let (code, text, _) = run_client(&server, &["result", id, "--format", "json"]);
        if code == 0 {
            json = Some(text);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let json = json.expect("the job succeeded within 30 s");
    let written = packaging_support::egsolve()
        .current_dir(&exports)
        .env("EGSOLVE_SERVER", server.url())
        .args([
            "result",
            id,
            "--format",
            "json",
            "-o",
            "job.json",
            "--by-reference",
        ])
        .output()
        .unwrap();
    assert_eq!(written.status.code(), Some(0), "{written:?}");
    assert_eq!(
        std::fs::read_to_string(exports.join("job.json")).unwrap(),
        json
    );
    // Outside the roots: the server's message, and a failing exit.
    let outside = dir.path().join("outside.mpg.gz");
    std::fs::copy(data_file(ENERGY), &outside).unwrap();
    let (code, stderr) = run(&["submit", "--by-reference", outside.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("outside the server's import roots"),
        "{stderr}"
    );
    let elsewhere = dir.path().join("elsewhere.bin");
    let (code, stderr) = run(&[
        "submit",
        game.to_str().unwrap(),
        "--wait",
        "-o",
        elsewhere.to_str().unwrap(),
        "--result-by-reference",
    ]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("outside the server's export roots"),
        "{stderr}"
    );
    assert!(!elsewhere.exists());
    drop(server);
}
