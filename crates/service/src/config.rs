//! The service's configuration: one [`ServeConfig`] with every knob, resolved from (lowest to
//! highest precedence) built-in defaults, an optional TOML file, environment variables
//! `EGSOLVE_<NAME>` and command-line flags. The flags are the binary's (`src/cli/serve.rs`
//! resolves them over [`ServeConfig::from_file`] and validates).
//!
//! This module only describes and validates settings; it starts nothing.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every setting of a running service, with its default.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Address to listen on (default `127.0.0.1:8080`).
    pub bind: SocketAddr,
    /// Directory holding the SQLite database, arenas and results; with a PostgreSQL
    /// `database`, this host's cache of arena and result bytes.
    pub data_dir: PathBuf,
    /// The shared job store of several hosts, `postgres://USER:PASSWORD@HOST:PORT/DB`
    /// (unset: the embedded SQLite store in `data_dir`, one host).
    pub database: Option<String>,
    /// Whether `serve` runs no jobs itself (an API-only host; needs a shared `database`).
    pub no_worker: bool,
    /// How long a claimed job stays its worker's without a heartbeat, milliseconds; past
    /// it the job goes back to the queue (its worker died, froze or lost the database).
    pub lease_ms: u64,
    /// Attempts a job may lose to expired leases before it ends `failed`.
    pub max_attempts: u32,
    /// Largest accepted arena, counted in decompressed bytes.
    pub max_body_bytes: u64,
    /// Bytes of the data directory's file system kept free: an upload whose declared size
    /// (`Content-Length`, the bytes as stored) would eat into it is refused with 507 before
    /// any byte is stored.
    pub storage_reserve_bytes: u64,
    /// Directories whose files jobs may name instead of uploading them (jobs by reference;
    /// the token needs the `import` permission). Empty: no jobs by reference.
    pub import_roots: Vec<PathBuf>,
    /// Directories under which the server writes results where a client asks (results by
    /// reference, `POST /v1/jobs/{id}/result/export`; the token needs the `import`
    /// permission too). Empty: no results by reference.
    pub export_roots: Vec<PathBuf>,
    /// Largest accepted vertex count.
    pub max_vertices: u64,
    /// Largest accepted edge count.
    pub max_edges: u64,
    /// Time limit of a job that asks for none, in seconds.
    pub default_time_limit_secs: u64,
    /// Largest time limit a job may ask for, in seconds.
    pub max_time_limit_secs: u64,
    /// How long finished jobs and their files are kept, in seconds (default 7 days).
    pub result_ttl_secs: u64,
    /// Most queued + running jobs one user may have at once.
    pub per_user_job_limit: u64,
    /// Most arenas one batch (`POST /v1/batches`) may carry.
    pub max_batch_jobs: u64,
    /// A batch's small members (at most `batch_inline_max_edges` edges, parsed at
    /// submission, not `gpu` jobs) are solved while the batch is received, one thread each
    /// and side by side, each given this many milliseconds: those answered are recorded as
    /// succeeded in the batch's one transaction, with their results; the others are queued
    /// as usual (0: every member is queued). 50 by default: members are solved as they
    /// stream in, so the slowest of the 285 SYNTCOMP games (30–40 ms beside the others)
    /// finish while the rest of the body arrives; with 20, two or three of them ran past it,
    /// were queued, solved again after the commit, and held the results 25–35 ms longer
    /// (H200 host, `scripts/batch-ab-session.sh`, BENCHMARKS.md §5).
    pub batch_inline_ms: u64,
    /// The largest batch member (edges) tried while the batch is received.
    pub batch_inline_max_edges: u64,
    /// Most uploads in parts (`POST /v1/uploads`) one user may have open at once.
    pub max_open_uploads: u64,
    /// Seconds an upload in parts may stay without a part received before it is removed.
    pub upload_ttl_secs: u64,
    /// Jobs the CPU pool runs at once (0: one per core).
    pub cpu_workers: usize,
    /// Threads of each CPU solve: the parallel CPU backend and `auto`'s lifting on large
    /// games (0: the cores divided by the CPU solves running when it starts, at least one).
    pub cpu_threads: usize,
    /// GPU ordinals to serve jobs on (empty: every GPU the driver lists, none without one).
    pub gpu_devices: Vec<u32>,
    /// While every GPU is busy, a job that waited this long (milliseconds) runs on the CPU.
    pub cpu_fallback_wait_ms: u64,
    /// While every GPU is busy, arenas with at most this many edges run on the CPU at once.
    pub cpu_small_edges: u64,
    /// Bodies up to this many decompressed bytes are parsed while they upload, before the
    /// 202: a malformed arena is refused at once with line and column, and the worker starts
    /// solving without parsing. Larger ones are parsed by their worker (0: always).
    pub inline_parse_bytes: u64,
    /// Memory (bytes) that games parsed at submission may hold while their jobs wait; past
    /// it, a parsed game is dropped and its worker parses the stored file again.
    pub preparsed_memory_bytes: u64,
    /// Host memory one job may need, in bytes (estimated from its vertices and edges: the
    /// arena plus the solve's working memory); a larger job is refused (0: the host's
    /// physical memory).
    pub max_job_memory_bytes: u64,
    /// GPU memory one job may need, in bytes, on any device (0: the device's memory); a job
    /// that fits no GPU runs on the CPU.
    pub max_gpu_job_memory_bytes: u64,
    /// The bearer tokens file (hashed tokens, users, roles).
    pub tokens_file: Option<PathBuf>,
    /// Whether requests need a bearer token. Off is allowed on loopback binds only.
    pub auth: bool,
    /// Whether every job-table commit is fsynced (SQLite `synchronous = FULL`). Off
    /// (`NORMAL`) is still safe against process crashes and kill -9 — the WAL survives in
    /// the page cache — but a power loss may roll back the last commits. Arena and result
    /// files are fsynced either way.
    pub sync_commits: bool,
    /// On SIGTERM or ctrl-c, how long (seconds) open requests — uploads, downloads, long
    /// polls — may take to finish before the server exits anyway. Running jobs are stopped
    /// and re-queued at once; a long poll is answered at once with the job's state.
    pub shutdown_grace_secs: u64,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("egsolve-data"),
            database: None,
            no_worker: false,
            lease_ms: 10_000,
            max_attempts: 3,
            max_body_bytes: 1 << 30,
            storage_reserve_bytes: 128 << 20,
            import_roots: Vec::new(),
            export_roots: Vec::new(),
            max_vertices: 50_000_000,
            max_edges: 200_000_000,
            default_time_limit_secs: 3600,
            max_time_limit_secs: 24 * 3600,
            result_ttl_secs: 7 * 24 * 3600,
            per_user_job_limit: 1000,
            max_batch_jobs: 1000,
            batch_inline_ms: 50,
            batch_inline_max_edges: 1 << 20,
            max_open_uploads: 16,
            upload_ttl_secs: 24 * 3600,
            cpu_workers: 0,
            cpu_threads: 0,
            gpu_devices: Vec::new(),
            cpu_fallback_wait_ms: 2000,
            cpu_small_edges: 100_000,
            inline_parse_bytes: 256 << 20,
            preparsed_memory_bytes: 2 << 30,
            max_job_memory_bytes: 0,
            max_gpu_job_memory_bytes: 0,
            tokens_file: None,
            auth: false,
            sync_commits: true,
            shutdown_grace_secs: 30,
        }
    }
}

/// Why a configuration is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The TOML file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The TOML file is not a valid configuration.
    #[error("invalid config file {path}: {source}")]
    Parse {
        path: PathBuf,
        source: Box<toml::de::Error>,
    },
    /// Auth is off on an address others can reach.
    #[error(
        "refusing to serve without authentication on {0}: bind a loopback address or pass --auth true with --tokens-file"
    )]
    AuthOffOffLoopback(SocketAddr),
    /// Auth is on but no tokens file is set.
    #[error("authentication is on but no tokens file is set: pass --tokens-file PATH")]
    NoTokensFile,
    /// A limit is zero or inconsistent.
    #[error("invalid setting: {0}")]
    Invalid(String),
}

impl ServeConfig {
    /// Reads a TOML file; missing keys keep their defaults, unknown keys are an error.
    pub fn from_file(path: &Path) -> Result<ServeConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })
    }

    /// A configuration for tests: everything in `data_dir`, port chosen by the caller.
    pub fn for_tests(data_dir: &Path) -> ServeConfig {
        ServeConfig {
            data_dir: data_dir.to_owned(),
            ..ServeConfig::default()
        }
    }

    /// Whether the store is shared by several hosts (a PostgreSQL `database`).
    pub fn is_shared(&self) -> bool {
        self.database
            .as_deref()
            .is_some_and(super::store::is_postgres_url)
    }

    /// Checks cross-field rules (auth on non-loopback binds, non-zero limits, the database
    /// URL and lease settings).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.database {
            if !super::store::is_postgres_url(url) {
                return Err(ConfigError::Invalid(format!(
                    "database '{}' is not a PostgreSQL URL: pass postgres://USER:PASSWORD@HOST:PORT/DB, \
                     or leave it unset for the SQLite store in the data directory",
                    redact(url)
                )));
            }
        }
        if self.no_worker && !self.is_shared() {
            return Err(ConfigError::Invalid(
                "no_worker needs a shared database (--database postgres://…): with the SQLite \
                 store nothing else would run the jobs"
                    .into(),
            ));
        }
        if self.lease_ms < 300 || self.max_attempts == 0 {
            return Err(ConfigError::Invalid(
                "lease_ms must be at least 300 and max_attempts at least 1".into(),
            ));
        }
        if self.auth && self.tokens_file.is_none() {
            return Err(ConfigError::NoTokensFile);
        }
        if !self.auth && !self.bind.ip().is_loopback() {
            return Err(ConfigError::AuthOffOffLoopback(self.bind));
        }
        if [
            self.max_body_bytes,
            self.per_user_job_limit,
            self.max_batch_jobs,
            self.max_open_uploads,
            self.upload_ttl_secs,
        ]
        .contains(&0)
        {
            return Err(ConfigError::Invalid(
                "max_body_bytes, per_user_job_limit, max_batch_jobs, max_open_uploads and upload_ttl_secs must be positive".into(),
            ));
        }
        let roots = [
            ("import", &self.import_roots),
            ("export", &self.export_roots),
        ];
        for (kind, root) in roots
            .iter()
            .flat_map(|(k, r)| r.iter().map(move |r| (k, r)))
        {
            if !root.is_absolute() || !root.is_dir() {
                return Err(ConfigError::Invalid(format!(
                    "{kind} root '{}' is not an absolute path to a directory: name existing \
                     directories (--{kind}-root /data/games)",
                    root.display()
                )));
            }
        }
        if self.default_time_limit_secs == 0
            || self.default_time_limit_secs > self.max_time_limit_secs
        {
            return Err(ConfigError::Invalid(
                "default_time_limit_secs must be positive and at most max_time_limit_secs".into(),
            ));
        }
        Ok(())
    }

    /// Jobs run at once on the CPU pool.
    pub(crate) fn cpu_worker_count(&self) -> usize {
        if self.cpu_workers > 0 {
            self.cpu_workers
        } else {
            cores()
        }
    }

    /// How long open requests may take after a shutdown signal.
    pub(crate) fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }

    /// The result TTL.
    pub(crate) fn result_ttl(&self) -> Duration {
        Duration::from_secs(self.result_ttl_secs)
    }
}

/// A database URL with its password replaced, for messages and logs.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// The cores this process may use (1 where that cannot be told).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism()
        .map(std::num::NonZero::get)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_file_keys_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, "max_bodybytes = 99\n").unwrap();
        assert!(ServeConfig::from_file(&path).is_err());
    }
}
