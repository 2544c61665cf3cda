//! A full disk is an answer, not an internal error: a body whose declared size does not fit
//! the store's free space less its reserve is `507 insufficient-storage` before any byte is
//! stored; on a real small file system (a 40 MB tmpfs, mounted for the test: it needs root,
//! and is listed as ignored with the reason without it) a 50 MB upload sent without a length
//! fills the disk and is `507` too, the partial file removed and the server going on; a
//! result that cannot be written fails its job with `insufficient-storage`, and one written
//! by reference to a full disk is `507`. Each is counted
//! in `egsolve_insufficient_storage_total`. On a Btrfs loop file system (needs root and
//! `mkfs.btrfs`), a job by reference is a reflink: the stored copy shares the original's
//! extents, and the original overwritten after the answer changes nothing.

use crate::service_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use egsolve_test_support::{needing, needing_hardware};
use reqwest::Method;
use service_support::*;

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        Tmpfs::mount_on(dir.path(), size)?;
        Ok(Tmpfs { dir })
    }

    fn mount_on(path: &Path, size: &str) -> Result<(), String> {
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_owned()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Why a tmpfs cannot be mounted here, if it cannot.
fn no_tmpfs() -> Option<String> {
    Tmpfs::mount("1m")
        .err()
        .map(|why| format!("root to mount a tmpfs ({why})"))
}

fn block_on(test: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
}

/// `egsolve_insufficient_storage_total{stage="…"}`.
async fn refusals(server: &Server, stage: &str) -> u64 {
    let text = server.get("/metrics", None).await.text();
    let prefix = format!("egsolve_insufficient_storage_total{{stage=\"{stage}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {prefix}in {text}"))
        .parse()
        .unwrap()
}

/// `n` vertices with a self-loop of weight 1 each: solved at once, a result of 32 + 12·n bytes.
fn self_loops(n: u32) -> Vec<u8> {
    let mut text = format!("{};\n", n - 1);
    for v in 0..n {
        text += &format!("{v} MAX {v}:1;\n");
    }
    text.into_bytes()
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, std::iter::Iterator::count)
}

/// A declared size over the free space less the reserve: 507 with the figures and the
/// setting, before a byte is stored; nothing made; counted as `admission`.
async fn declared_sizes_that_do_not_fit_are_refused_first() {
    let server = Server::start(|config| {
        config.storage_reserve_bytes = u64::MAX / 2;
    })
    .await;
    let reply = server.submit(small_arena(50, 1), "", None).await;
    reply.assert_problem(507, "insufficient-storage");
    let problem = reply.json();
    assert_eq!(
        problem["needed_bytes"].as_u64(),
        Some(small_arena(50, 1).len() as u64)
    );
    assert_eq!(problem["available_bytes"].as_u64(), Some(0));
    assert_eq!(problem["setting"], "storage_reserve_bytes");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("free space"), "{detail}");
    assert_eq!(files_in(&server.dir.join("tmp")), 0);
    assert_eq!(files_in(&server.dir.join("arenas")), 0);
    assert_eq!(refusals(&server, "admission").await, 1);
    let jobs = server.get("/v1/jobs", None).await.json();
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0, "no job was made");
    server.stop().await;
}

/// On a 40 MB store, a 50 MB upload without a declared length fills the disk: 507, the
/// partial file removed, counted as `upload`; a 50 MB one with its length is refused before
/// a byte is stored; and the server takes the next (small) job.
async fn a_full_disk_is_507_and_the_server_goes_on() {
    let disk = Tmpfs::mount("40m").unwrap();
    let data = disk.path().join("data");
    let server = Server::start_in(&data, |config| {
        config.storage_reserve_bytes = 0;
    })
    .await;
    // Valid text all the way: only the disk stops it.
    let line = b"0 MAX 0:1;\n".repeat(1 << 10);
    let total = 50 << 20;
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..total / line.len()).map(|_| Ok(line.clone())).collect();
    let response = server
        .http
        .post(format!("{}/v1/jobs", server.base))
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .expect("the answer arrives before the body is sent");
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    let body = response.bytes().await.unwrap();
    validate(
        &Method::POST,
        "/v1/jobs",
        status,
        Some(&content_type),
        &body,
    );
    let problem: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 507, "{problem}");
    assert_eq!(problem["type"], "urn:egsolve:problem:insufficient-storage");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("partial file was removed"), "{detail}");
    assert_eq!(
        files_in(&data.join("tmp")),
        0,
        "the partial file is removed"
    );
    assert_eq!(refusals(&server, "upload").await, 1);

    let declared = vec![b'\n'; 50 << 20];
    server
        .submit(declared, "", None)
        .await
        .assert_problem(507, "insufficient-storage");
    assert_eq!(refusals(&server, "admission").await, 1);

    goes_on_then_stops(server, 3).await;
}

/// After a refusal the server goes on: a small job succeeds. Then it stops.
async fn goes_on_then_stops(server: Server, seed: u64) {
    let (_, done) = server
        .submit_finished(small_arena(100, seed), "?backend=cpu")
        .await;
    assert_eq!(done["state"], "succeeded", "{done}");
    server.stop().await;
}

/// The results directory on a 64 KB tmpfs: a job whose result (32 + 12·n bytes) does not
/// fit fails with `insufficient-storage`, counted as `result`; the server goes on.
async fn a_result_that_cannot_be_written_fails_its_job() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    Tmpfs::mount_on(&results, "64k").unwrap();
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(results.clone());
    let server = Server::start_in(tmp.path(), |_| {}).await;
    let (_, done) = server
        .submit_finished(self_loops(20_000), "?backend=cpu")
        .await;
    assert_eq!(done["state"], "failed", "{done}");
    assert_eq!(done["failure"]["type"], "insufficient-storage", "{done}");
    let message = done["failure"]["message"].as_str().unwrap();
    assert!(message.contains("disk is full"), "{message}");
    assert_eq!(refusals(&server, "result").await, 1);
    goes_on_then_stops(server, 6).await;
}

/// An export root on a 64 KB tmpfs: a result written there by reference (a copy: another
/// file system than the store's) that does not fit is `507 insufficient-storage`, counted
/// as `export`, and leaves no hidden file; the same result downloaded is whole.
async fn an_export_to_a_full_disk_is_507_and_counted() {
    let disk = Tmpfs::mount("64k").unwrap();
    let root = disk.path();
    let server = Server::start(|config| config.export_roots = vec![root.clone()]).await;
    let (id, done) = server
        .submit_finished(self_loops(20_000), "?backend=cpu")
        .await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let body = serde_json::json!({ "path": root.join("answer.bin"), "format": "binary" });
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/jobs/{id}/result/export"),
            None,
            &[("content-type", "application/json")],
            Some(body.to_string().into_bytes()),
        )
        .await;
    reply.assert_problem(507, "insufficient-storage");
    assert_eq!(refusals(&server, "export").await, 1);
    assert_eq!(files_in(&root), 0, "nothing left in the export root");
    let whole = server
        .get(&format!("/v1/jobs/{id}/result?format=binary"), None)
        .await;
    assert_eq!(whole.status, 200);
    assert_eq!(whole.body.len(), 32 + 12 * 20_000);
    server.stop().await;
}

/// A Btrfs file system in a 300 MB loop file, unmounted when dropped.
struct Btrfs {
    dir: tempfile::TempDir,
}

impl Btrfs {
    fn mount() -> Result<Btrfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = dir.path().join("image");
        let mount = dir.path().join("mnt");
        std::fs::create_dir(&mount).map_err(|e| e.to_string())?;
        let run = |command: &mut Command| {
            let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
            if output.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
            }
        };
        run(Command::new("truncate").args(["-s", "300M"]).arg(&image))?;
        run(Command::new("mkfs.btrfs").arg("-q").arg(&image))?;
        run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mount))?;
        Ok(Btrfs { dir })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }
}

impl Drop for Btrfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.path()).status();
    }
}

/// On Btrfs the file named by reference is reflinked into the store: the stored copy's
/// extents are shared with the original; the original overwritten right after the answer
/// changes nothing (the result is the upload's).
async fn references_are_reflinked_where_the_file_system_can(disk: Btrfs) {
    let root = disk.path().join("games");
    std::fs::create_dir(&root).unwrap();
    let game = self_loops(1_000_000);
    let path = root.join("loops.mpg");
    std::fs::write(&path, &game).unwrap();
    let server = Server::start_in(&disk.path().join("data"), |config| {
        config.import_roots = vec![root.clone()];
        config.storage_reserve_bytes = 0;
    })
    .await;
    let body = serde_json::json!({ "path": path }).to_string().into_bytes();
    let reply = server
        .submit_with(
            body,
            "?backend=cpu",
            ("content-type", "application/vnd.egsolve.reference+json"),
        )
        .await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    // The stored copy shares its extents with the original (FIEMAP's shared flag).
    let hash = reply.json()["arena"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = disk.path().join("data").join("arenas").join(hash);
    let extents = Command::new("filefrag")
        .arg("-v")
        .arg(&stored)
        .output()
        .unwrap();
    let extents = String::from_utf8_lossy(&extents.stdout).into_owned();
    assert!(extents.contains("shared"), "not a reflink: {extents}");
    std::fs::write(&path, b"overwritten").unwrap();
    let id = reply.json()["id"].as_str().unwrap().to_string();
    let done = server
        .wait_finished(&id, None, Duration::from_secs(60))
        .await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let upload = server.submit(game, "?backend=cpu", None).await;
    assert_eq!(upload.json()["reused"], true, "{}", upload.text());
    server.stop().await;
}

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let tmpfs = no_tmpfs();
    let btrfs = Btrfs::mount();
    let no_btrfs = btrfs
        .as_ref()
        .err()
        .map(|why| format!("root and mkfs.btrfs for a Btrfs loop file system ({why})"));
    vec![
        needing(
            "declared_sizes_that_do_not_fit_are_refused_first",
            None,
            || block_on(declared_sizes_that_do_not_fit_are_refused_first()),
        ),
        // Privileges, like hardware, are the machine's: ignored where missing, CI included.
        needing_hardware(
            "a_full_disk_is_507_and_the_server_goes_on",
            tmpfs.clone(),
            || block_on(a_full_disk_is_507_and_the_server_goes_on()),
        ),
        needing_hardware(
            "a_result_that_cannot_be_written_fails_its_job",
            tmpfs.clone(),
            || block_on(a_result_that_cannot_be_written_fails_its_job()),
        ),
        needing_hardware("an_export_to_a_full_disk_is_507_and_counted", tmpfs, || {
            block_on(an_export_to_a_full_disk_is_507_and_counted());
        }),
        needing_hardware(
            "references_are_reflinked_where_the_file_system_can",
            no_btrfs,
            move || {
                block_on(references_are_reflinked_where_the_file_system_can(
                    btrfs.unwrap(),
                ));
            },
        ),
    ]
}
