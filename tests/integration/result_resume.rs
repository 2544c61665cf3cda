//! A binary result whose download breaks off resumes where it stopped (issue 43, part 3):
//! `egsolve result ID --format binary -o FILE` through a proxy that cuts the first
//! response 1 MiB into its body writes the same bytes as a direct download, after a
//! second request with `Range: bytes=N-`; the server's ranges are checked byte by byte in
//! `service_data_path.rs`.

use crate::packaging_support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use packaging_support::{Server, egsolve};

/// What the proxy saw: the request heads it forwarded, and how many responses it cut.
#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<String>>,
    cuts: AtomicUsize,
}

/// Where [`cutting_proxy`] cuts: this many bytes of the body (compressed, the client may
/// have decoded nothing of a first few kilobytes, and then starts over without a range).
const CUT_AFTER: usize = 1 << 20;

/// A TCP proxy on a free loopback port to `upstream` that cuts the response to the first
/// request for a binary result (without `Range`) [`CUT_AFTER`] bytes after its head,
/// closing both connections; every other exchange passes whole.
fn cutting_proxy(upstream: std::net::SocketAddr) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Seen::default());
    let cut_once = Arc::new(AtomicBool::new(false));
    let watch = Arc::clone(&seen);
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let server = TcpStream::connect(upstream).unwrap();
            let cut_this = Arc::new(AtomicBool::new(false));
            // Client to server: note each request head, and mark this connection to be cut.
            let (mut from, mut to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (seen, cut_once, mark) = (
                Arc::clone(&watch),
                Arc::clone(&cut_once),
                Arc::clone(&cut_this),
            );
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let head = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
                    if head.starts_with("get ") {
                        if head.contains("format=binary")
                            && !head.contains("\r\nrange:")
                            && !cut_once.swap(true, Ordering::SeqCst)
                        {
                            mark.store(true, Ordering::SeqCst);
                        }
                        seen.requests.lock().unwrap().push(head);
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
            // Server to client, cut CUT_AFTER bytes after the head where marked.
            let (mut from, mut to, seen) = (server, client, Arc::clone(&watch));
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let mut head = Vec::new();
                let mut body_left: Option<usize> = None;
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut chunk = &buf[..n];
                    if cut_this.load(Ordering::SeqCst) {
                        if body_left.is_none() {
                            head.extend_from_slice(chunk);
                            if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                                let in_head = end + 4 - (head.len() - chunk.len());
                                body_left = Some(CUT_AFTER + in_head);
                            }
                        }
                        if let Some(left) = body_left {
                            if chunk.len() >= left {
                                chunk = &chunk[..left];
                                let _ = to.write_all(chunk);
                                seen.cuts.fetch_add(1, Ordering::SeqCst);
                                let _ = to.shutdown(Shutdown::Both);
                                let _ = from.shutdown(Shutdown::Both);
                                return;
                            }
                            body_left = Some(left - chunk.len());
                        }
                    }
                    if to.write_all(chunk).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
        }
    });
    (url, seen)
}

/// Runs `egsolve ARGS` against `url`, asserting it exits 0; its standard output.
fn client_at(url: &str, args: &[&str]) -> String {
    let output = egsolve()
        .args(args)
        .env("EGSOLVE_SERVER", url)
        .output()
        .expect("run egsolve");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_binary_result_cut_off_mid_download_resumes_with_a_range() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(&data.path().join("store"), &["--cpu-workers", "1"]);
    // 400,000 vertices of random weights: 4.8 MB of credits and strategies, which
    // compress little, so the cut falls inside the body whatever the encoding.
    let game = data.path().join("random.mpg");
    let generated = egsolve()
        .args([
            "gen",
            "random",
            "--vertices",
            "400000",
            "--degree",
            "3",
            "--seed",
            "7",
        ])
        .args(["-o", game.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(generated.status.success());
    let id = client_at(&server.url(), &["submit", game.to_str().unwrap()]);
    let id = id.trim().to_string();
    let started = Instant::now();
    loop {
        let job: serde_json::Value =
            serde_json::from_str(&client_at(&server.url(), &["status", &id, "--wait", "5"]))
                .unwrap();
        if job["state"] == "succeeded" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{job}");
    }
    let direct = data.path().join("direct.bin");
    let resumed = data.path().join("resumed.bin");
    let download = |url: &str, to: &std::path::Path| {
        client_at(
            url,
            &[
                "result",
                &id,
                "--format",
                "binary",
                "-o",
                to.to_str().unwrap(),
            ],
        );
        std::fs::read(to).unwrap()
    };
    let whole = download(&server.url(), &direct);
    let (proxy, seen) = cutting_proxy(server.addr);
    let again = download(&proxy, &resumed);
    assert_eq!(
        seen.cuts.load(Ordering::SeqCst),
        1,
        "the first download was cut"
    );
    assert_eq!(again.len(), whole.len());
    assert!(again == whole, "the resumed download differs");
    let requests = seen.requests.lock().unwrap();
    let ranged: Vec<&String> = requests
        .iter()
        .filter(|head| head.contains("\r\nrange: bytes="))
        .collect();
    assert_eq!(ranged.len(), 1, "one resume: {requests:?}");
    assert!(ranged[0].contains("\r\nif-range: \""), "{}", ranged[0]);
    assert!(
        whole.len() > 2 * CUT_AFTER,
        "the body outlasts the cut: {}",
        whole.len()
    );
}
