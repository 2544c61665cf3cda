//! A throwaway PostgreSQL server for tests and benchmarks: `initdb` + `pg_ctl` in a temporary
//! directory, listening on a free loopback port with trust authentication. The binaries are
//! found under `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package; the newest
//! version wins) or through `pg_config --bindir`. PostgreSQL refuses to run as root, so as
//! root the server runs as the `postgres` user (or `nobody`) through `runuser`.
//!
//! With the environment variable `CI` set, a server that cannot start is a failure (the
//! tests must run there); without it, [`PgServer::shared`] returns `None` and callers skip
//! with the printed reason. A watchdog process stops the server and removes its directory
//! when the test process exits, however it exits.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// A running server.
#[derive(Debug)]
pub struct PgServer {
    /// The loopback port it listens on.
    pub port: u16,
    bin: PathBuf,
    dir: PathBuf,
    user: Option<String>,
}

/// Where the server binaries are.
fn bin_dir() -> Result<PathBuf, String> {
    let mut candidates: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    candidates.sort();
    if let Some((_, bin)) = candidates.pop() {
        return Ok(bin);
    }
    let output = Command::new("pg_config").arg("--bindir").output();
    if let Ok(output) = output {
        let bin = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if bin.join("initdb").exists() {
            return Ok(bin);
        }
    }
    Err(
        "no PostgreSQL server binaries (initdb) under /usr/lib/postgresql/*/bin: \
         apt-get install -y postgresql"
            .into(),
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The unprivileged user to run the server as, when this process is root.
fn server_user() -> Option<String> {
    if !is_root() {
        return None;
    }
    ["postgres", "nobody"]
        .into_iter()
        .find(|u| {
            Command::new("id")
                .arg(u)
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The server `started`, or `None` when it could not start and `CI` is unset (the reason
/// is printed); panics under `CI`.
fn started_or_skipped<T>(started: Result<T, impl std::fmt::Display>) -> Option<T> {
    match started {
        Ok(server) => Some(server),
        Err(reason) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "PostgreSQL must run in CI but cannot start: {reason}"
            );
            eprintln!("skipped: PostgreSQL cannot start here ({reason})");
            None
        }
    }
}

impl PgServer {
    /// The server shared by a whole test binary (started on first use), or `None` when it
    /// cannot start and `CI` is unset (the reason is printed). Panics under `CI`.
    pub fn shared() -> Option<&'static PgServer> {
        static SHARED: OnceLock<Result<PgServer, String>> = OnceLock::new();
        started_or_skipped(SHARED.get_or_init(|| PgServer::start(false)).as_ref())
    }

    /// A dedicated server (for tests that restart it), or `None` as [`PgServer::shared`].
    pub fn dedicated() -> Option<PgServer> {
        started_or_skipped(PgServer::start(false))
    }

    /// Starts a server; `durable` keeps fsync on (benchmarks), else it is off (tests).
    pub fn start(durable: bool) -> Result<PgServer, String> {
        let bin = bin_dir()?;
        let user = server_user();
        let dir = std::env::temp_dir().join(format!(
            "egsolve-pg-{}-{}",
            std::process::id(),
            uuid::Uuid::now_v7().simple()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let server = PgServer {
            port: free_port(),
            bin,
            dir,
            user,
        };
        if let Some(user) = &server.user {
            let chown = Command::new("chown")
                .args([user.as_str(), server.dir.to_str().unwrap()])
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !chown.success() {
                return Err(format!("chown {user} {} failed", server.dir.display()));
            }
        }
        server.watchdog();
        let data = server.dir.join("data");
        server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "egsolve",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        let conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
             max_connections = 400\nfsync = {}\nsynchronous_commit = {}\n\
             full_page_writes = {}\nshared_buffers = 64MB\n",
            server.port,
            server.dir.display(),
            on_off(durable),
            on_off(durable),
            on_off(durable),
        );
        std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, conf.as_bytes()))
            .map_err(|e| format!("postgresql.conf: {e}"))?;
        server.pg_ctl("start")?;
        Ok(server)
    }

    /// Runs a server binary as the server's user.
    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let path = self.bin.join(program);
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        let output = command
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} {args:?} failed: {}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }

    fn pg_ctl(&self, action: &str) -> Result<(), String> {
        let data = self.dir.join("data");
        let log = self.dir.join("server.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "-m",
                "fast",
                action,
            ],
        )
    }

    /// Stops the server when this process exits, and removes its directory.
    fn watchdog(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let as_user = self
            .user
            .as_ref()
            .map(|u| format!("runuser -u {u} -- "))
            .unwrap_or_default();
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
             {as_user}{pg_ctl} -D {dir}/data -m immediate stop >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            pg_ctl = pg_ctl.display(),
            dir = self.dir.display(),
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://egsolve@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates a fresh, empty database; its URL.
    pub fn create_database(&self) -> String {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let status = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "egsolve",
            ])
            .arg(&name)
            .status()
            .expect("createdb runs");
        assert!(status.success(), "createdb {name}");
        self.url(&name)
    }

    /// Restarts the server (fast shutdown: open connections are closed).
    pub fn restart(&self) {
        self.pg_ctl("restart").expect("pg_ctl restart");
    }

    /// Stops the server (fast shutdown).
    pub fn stop(&self) {
        self.pg_ctl("stop").expect("pg_ctl stop");
    }

    /// Starts a stopped server again.
    pub fn start_again(&self) {
        self.pg_ctl("start").expect("pg_ctl start");
    }

    /// The server's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.run(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
