//! Helpers shared by the packaging tests (`tests/integration/deploy.rs`, `shutdown.rs`): a private
//! copy of the `egsolve` binary, a real `egsolve serve` child process on a free loopback
//! port, a minimal blocking HTTP/1.0 client, and the deploy files read from the repository.

#![allow(dead_code)]

pub mod deploy_files;
/// The binary's own `egsolve serve` flags (`src/cli/serve.rs`), so the deploy files are
/// parsed by the real flag parser.
#[path = "../../src/cli/serve.rs"]
pub mod serve;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The repository root (where `Dockerfile` and `deploy/` live).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Reads a repository file as text.
pub fn repo_file(relative: &str) -> String {
    let path = repo_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A private copy of the binary cargo built for these tests: builds of other checkouts that
/// share the target directory cannot replace it while a test runs. One copy per build (named
/// by the binary's size and modification time) under cargo's per-target temporary
/// directory, shared by every test process: each test runs in its own process, and a copy
/// per process (the binary is 100+ MB with debug info) once filled the disk. Copies of
/// other builds older than a day are removed.
pub fn binary() -> &'static Path {
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    COPY.get_or_init(|| {
        let built = Path::new(env!("CARGO_BIN_EXE_egsolve"));
        let meta = std::fs::metadata(built).expect("the built egsolve binary");
        let stamp = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("egsolve-binaries");
        std::fs::create_dir_all(&dir).expect("the binaries directory");
        let path = dir.join(format!("egsolve-{}-{stamp}", meta.len()));
        if !path.is_file() {
            // Copied under a name of this process, then renamed: other processes see either
            // no file or the whole one.
            let partial = dir.join(format!(".partial-{}", std::process::id()));
            std::fs::copy(built, &partial).expect("copy the egsolve binary");
            std::fs::rename(&partial, &path).expect("rename the copied binary");
        }
        remove_stale_copies(&dir, &path);
        path
    })
}

fn remove_stale_copies(dir: &Path, keep: &Path) {
    let day = std::time::Duration::from_secs(24 * 3600);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        if path != keep && old {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// An `egsolve` command with no `EGSOLVE_*` variables inherited from the caller.
pub fn egsolve() -> Command {
    let mut command = Command::new(binary());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("EGSOLVE_") {
            command.env_remove(name);
        }
    }
    command
}

/// Runs `egsolve ARGS` and returns (exit status, stdout, stderr).
pub fn run_egsolve(args: &[&str]) -> (ExitStatus, String, String) {
    let output = egsolve().args(args).output().expect("run egsolve");
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs the client `egsolve ARGS` with `server`'s URL; (exit code, stdout, stderr).
pub fn run_client(server: &Server, args: &[&str]) -> (i32, String, String) {
    let output = egsolve()
        .args(args)
        .env("EGSOLVE_SERVER", server.url())
        .output()
        .expect("run egsolve");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A loopback port nobody listens on (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a free port")
        .port()
}

/// A running `egsolve serve` child process.
pub struct Server {
    /// The child process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its standard error (logs), collected by a thread until it exits.
    logs: Option<std::thread::JoinHandle<String>>,
}

impl Server {
    /// Starts `egsolve serve --bind 127.0.0.1:0 --data-dir DATA EXTRA…` and waits for its
    /// "listening on http://ADDR" line.
    pub fn start(data_dir: &Path, extra: &[&str]) -> Server {
        let mut child = egsolve()
            .arg("serve")
            .arg("--bind")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(data_dir)
            .args(extra)
            .env("EGSOLVE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn egsolve serve");
        let stderr = child.stderr.take().expect("stderr");
        let logs = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stderr).read_to_string(&mut text);
            text
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line of egsolve serve: {line:?}"))
            .parse()
            .expect("a socket address");
        Server {
            child,
            addr,
            logs: Some(logs),
        }
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Sends SIGTERM to the process (through `kill`, as an init system or kubelet would).
    pub fn sigterm(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed: {status}");
    }

    /// Waits up to `limit` for the process to exit; returns its status and how long it took.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<(ExitStatus, Duration)> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some((status, start.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The process's log output so far; only complete once it has exited.
    pub fn take_logs(&mut self) -> String {
        self.logs
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP/1.0 exchange (so the answer is never chunked); returns (status, body).
pub fn http(addr: SocketAddr, method: &str, target: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(90)))
        .expect("timeout");
    let head = format!(
        "{method} {target} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send head");
    stream.write_all(body).expect("send body");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read answer");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {text:?}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, body.to_string())
}

/// `GET target` parsed as JSON; panics unless the status is 200.
pub fn get_json(addr: SocketAddr, target: &str) -> serde_json::Value {
    let (status, body) = http(addr, "GET", target, b"");
    assert_eq!(status, 200, "GET {target}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {target}: {e}: {body}"))
}
