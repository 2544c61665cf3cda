//! The service's configuration: one [`ServeConfig`] with every knob, resolved from (lowest to
//! highest precedence) built-in defaults, an optional TOML file, environment variables
//! `EGSOLVE_<NAME>` and command-line flags. [`ServeArgs`] is the clap side (every field
//! optional, so "not given" is distinguishable from "given the default"); the environment
//! is read through clap's `env` attribute, so a flag and its variable are one thing.
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
            max_vertices: 50_000_000,
            max_edges: 200_000_000,
            default_time_limit_secs: 3600,
            max_time_limit_secs: 24 * 3600,
            result_ttl_secs: 7 * 24 * 3600,
            per_user_job_limit: 1000,
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

/// The `egsolve serve` flags; each also reads `EGSOLVE_<NAME>` from the environment.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// TOML file with any of the settings below (flags and environment override it).
    #[arg(long, env = "EGSOLVE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "EGSOLVE_BIND")]
    pub bind: Option<SocketAddr>,
    /// Directory for the job database, arenas and results [default: ./egsolve-data]; with
    /// --database, this host's cache of arenas and results.
    #[arg(long, env = "EGSOLVE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Shared job store for several hosts: postgres://USER:PASSWORD@HOST:PORT/DB
    /// [default: SQLite in the data directory, one host].
    #[arg(long, env = "EGSOLVE_DATABASE")]
    pub database: Option<String>,
    /// Serve the HTTP API only and run no jobs here (needs --database; run `egsolve worker`
    /// on the solving hosts).
    #[arg(long, env = "EGSOLVE_NO_WORKER", num_args = 0..=1, default_missing_value = "true")]
    pub no_worker: Option<bool>,
    /// Lease of a claimed job, ms: a worker silent this long loses its job to the queue
    /// [default: 10000].
    #[arg(long, env = "EGSOLVE_LEASE_MS")]
    pub lease_ms: Option<u64>,
    /// Attempts a job may lose to expired leases before it fails [default: 3].
    #[arg(long, env = "EGSOLVE_MAX_ATTEMPTS")]
    pub max_attempts: Option<u32>,
    /// Largest accepted arena in decompressed bytes [default: 1 GiB].
    #[arg(long, env = "EGSOLVE_MAX_BODY_BYTES")]
    pub max_body_bytes: Option<u64>,
    /// Bytes of the data directory's disk kept free: uploads whose declared size would eat
    /// into them are refused with 507 [default: 128 MiB].
    #[arg(long, env = "EGSOLVE_STORAGE_RESERVE_BYTES")]
    pub storage_reserve_bytes: Option<u64>,
    /// A directory whose files jobs may name instead of uploading them (repeatable; tokens
    /// need the `import` permission: `egsolve token add NAME --import`) [default: none].
    #[arg(long = "import-root", env = "EGSOLVE_IMPORT_ROOT")]
    pub import_roots: Option<Vec<PathBuf>>,
    /// Largest accepted vertex count.
    #[arg(long, env = "EGSOLVE_MAX_VERTICES")]
    pub max_vertices: Option<u64>,
    /// Largest accepted edge count.
    #[arg(long, env = "EGSOLVE_MAX_EDGES")]
    pub max_edges: Option<u64>,
    /// Time limit of jobs that ask for none, seconds [default: 3600].
    #[arg(long, env = "EGSOLVE_DEFAULT_TIME_LIMIT_SECS")]
    pub default_time_limit_secs: Option<u64>,
    /// Largest time limit a job may ask for, seconds [default: 86400].
    #[arg(long, env = "EGSOLVE_MAX_TIME_LIMIT_SECS")]
    pub max_time_limit_secs: Option<u64>,
    /// How long finished jobs and results are kept, seconds [default: 604800 = 7 days].
    #[arg(long, env = "EGSOLVE_RESULT_TTL_SECS")]
    pub result_ttl_secs: Option<u64>,
    /// Most queued + running jobs per user [default: 1000].
    #[arg(long, env = "EGSOLVE_PER_USER_JOB_LIMIT")]
    pub per_user_job_limit: Option<u64>,
    /// Jobs the CPU pool runs at once [default: one per core].
    #[arg(long, env = "EGSOLVE_CPU_WORKERS")]
    pub cpu_workers: Option<usize>,
    /// Threads of each CPU solve (the parallel CPU backend, and `auto`'s lifting on games of
    /// 2^19+ edges) [default: the cores divided by the CPU solves running when it starts].
    #[arg(long, env = "EGSOLVE_CPU_THREADS")]
    pub cpu_threads: Option<usize>,
    /// GPU ordinals to use, comma-separated (e.g. `0,1`) [default: every GPU listed].
    #[arg(long, env = "EGSOLVE_GPU_DEVICES", value_delimiter = ',')]
    pub gpu_devices: Option<Vec<u32>>,
    /// While all GPUs are busy, jobs waiting this long (ms) run on the CPU [default: 2000].
    #[arg(long, env = "EGSOLVE_CPU_FALLBACK_WAIT_MS")]
    pub cpu_fallback_wait_ms: Option<u64>,
    /// While all GPUs are busy, arenas with at most this many edges run on the CPU.
    #[arg(long, env = "EGSOLVE_CPU_SMALL_EDGES")]
    pub cpu_small_edges: Option<u64>,
    /// Bodies up to this many decompressed bytes are parsed while they upload, before the
    /// answer (0: never) [default: 256 MiB].
    #[arg(long, env = "EGSOLVE_INLINE_PARSE_BYTES")]
    pub inline_parse_bytes: Option<u64>,
    /// Memory for parsed games of queued jobs, bytes [default: 2 GiB].
    #[arg(long, env = "EGSOLVE_PREPARSED_MEMORY_BYTES")]
    pub preparsed_memory_bytes: Option<u64>,
    /// Host memory one job may need, bytes (the arena plus the solve's working memory,
    /// estimated from its size); larger jobs are refused with 413 [default: 0 = the host's
    /// physical memory].
    #[arg(long, env = "EGSOLVE_MAX_JOB_MEMORY_BYTES")]
    pub max_job_memory_bytes: Option<u64>,
    /// GPU memory one job may need on a device, bytes; jobs that fit no GPU run on the CPU
    /// [default: 0 = the device's memory].
    #[arg(long, env = "EGSOLVE_MAX_GPU_JOB_MEMORY_BYTES")]
    pub max_gpu_job_memory_bytes: Option<u64>,
    /// Bearer tokens file (made by `egsolve token add`).
    #[arg(long, env = "EGSOLVE_TOKENS_FILE")]
    pub tokens_file: Option<PathBuf>,
    /// Require bearer tokens (`true`/`false`; off is allowed on loopback only).
    #[arg(long, env = "EGSOLVE_AUTH")]
    pub auth: Option<bool>,
    /// fsync every job-table commit (`true`/`false`; false survives kill -9, not power loss).
    #[arg(long, env = "EGSOLVE_SYNC_COMMITS")]
    pub sync_commits: Option<bool>,
    /// On SIGTERM, seconds open requests may take before the server exits anyway; running
    /// jobs are re-queued at once [default: 30].
    #[arg(long, env = "EGSOLVE_SHUTDOWN_GRACE_SECS")]
    pub shutdown_grace_secs: Option<u64>,
}

impl ServeArgs {
    /// Defaults, then the config file, then these flags/environment values; validated.
    pub fn resolve(&self) -> Result<ServeConfig, ConfigError> {
        let mut config = match &self.config {
            Some(path) => ServeConfig::from_file(path)?,
            None => ServeConfig::default(),
        };
        macro_rules! take {
            ($($field:ident),*) => {$(
                if let Some(value) = &self.$field {
                    config.$field = value.clone();
                }
            )*};
        }
        take!(
            bind,
            data_dir,
            no_worker,
            lease_ms,
            max_attempts,
            max_body_bytes,
            storage_reserve_bytes,
            import_roots,
            max_vertices,
            max_edges,
            default_time_limit_secs,
            max_time_limit_secs,
            result_ttl_secs,
            per_user_job_limit,
            cpu_workers,
            cpu_threads,
            gpu_devices,
            cpu_fallback_wait_ms,
            cpu_small_edges,
            inline_parse_bytes,
            preparsed_memory_bytes,
            max_job_memory_bytes,
            max_gpu_job_memory_bytes,
            auth,
            sync_commits,
            shutdown_grace_secs
        );
        if self.tokens_file.is_some() {
            config.tokens_file = self.tokens_file.clone();
        }
        if self.database.is_some() {
            config.database = self.database.clone();
        }
        config.validate()?;
        Ok(config)
    }

    /// The settings of `egsolve worker`: as [`ServeArgs::resolve`], but a worker serves no
    /// HTTP, so its bind and authentication settings (perhaps from a file or environment
    /// shared with the API hosts) do not apply; a shared database is required.
    pub fn resolve_worker(&self) -> Result<ServeConfig, ConfigError> {
        let args = ServeArgs {
            bind: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            auth: Some(false),
            no_worker: Some(false),
            ..self.clone()
        };
        let config = args.resolve()?;
        if !config.is_shared() {
            return Err(ConfigError::Invalid(
                "egsolve worker needs a shared store: pass --database postgres://… (with the \
                 SQLite store, `egsolve serve` runs the jobs itself)"
                    .into(),
            ));
        }
        Ok(config)
    }
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
        if self.max_body_bytes == 0 || self.per_user_job_limit == 0 {
            return Err(ConfigError::Invalid(
                "max_body_bytes and per_user_job_limit must be positive".into(),
            ));
        }
        for root in &self.import_roots {
            if !root.is_absolute() || !root.is_dir() {
                return Err(ConfigError::Invalid(format!(
                    "import root '{}' is not an absolute path to a directory: name existing \
                     directories (--import-root /data/games)",
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
    pub fn cpu_worker_count(&self) -> usize {
        if self.cpu_workers > 0 {
            self.cpu_workers
        } else {
            cores()
        }
    }

    /// How long open requests may take after a shutdown signal.
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }

    /// The result TTL.
    pub fn result_ttl(&self) -> Duration {
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

fn cores() -> usize {
    std::thread::available_parallelism()
        .map(std::num::NonZero::get)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_config_is_loopback_without_auth() {
        let config = ServeArgs::default().resolve().unwrap();
        assert_eq!(config.bind, SocketAddr::from(([127, 0, 0, 1], 8080)));
        assert!(!config.auth);
    }

    #[test]
    fn auth_off_is_refused_on_a_public_bind() {
        let args = ServeArgs {
            bind: Some("0.0.0.0:8080".parse().unwrap()),
            ..Default::default()
        };
        let err = args.resolve().unwrap_err();
        assert!(err.to_string().contains("without authentication"), "{err}");
    }

    #[test]
    fn flags_override_the_file_which_overrides_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, "per_user_job_limit = 7\nmax_body_bytes = 99\n").unwrap();
        let args = ServeArgs {
            config: Some(path),
            max_body_bytes: Some(5),
            ..Default::default()
        };
        let config = args.resolve().unwrap();
        assert_eq!(config.per_user_job_limit, 7);
        assert_eq!(config.max_body_bytes, 5);
        assert_eq!(config.result_ttl_secs, 7 * 24 * 3600);
        std::fs::write(
            dir.path().join("memory.toml"),
            "max_job_memory_bytes = 4096\n",
        )
        .unwrap();
        let memory = ServeArgs {
            config: Some(dir.path().join("memory.toml")),
            max_gpu_job_memory_bytes: Some(77),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(memory.max_job_memory_bytes, 4096);
        assert_eq!(memory.max_gpu_job_memory_bytes, 77);
    }

    #[test]
    fn database_settings_are_checked() {
        let shared = ServeArgs {
            database: Some("postgres://egsolve:secret@db:5432/egsolve".into()),
            no_worker: Some(true),
            ..Default::default()
        };
        let config = shared.resolve().unwrap();
        assert!(config.is_shared() && config.no_worker);
        let err = ServeArgs {
            database: Some("mysql://egsolve:secret@db/egsolve".into()),
            ..Default::default()
        }
        .resolve()
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("not a PostgreSQL URL") && !err.contains("secret"),
            "{err}"
        );
        let err = ServeArgs {
            no_worker: Some(true),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert!(err.to_string().contains("shared database"), "{err}");
        let err = ServeArgs::default().resolve_worker().unwrap_err();
        assert!(err.to_string().contains("needs a shared store"), "{err}");
        // A worker ignores the HTTP settings a shared configuration file gives the API.
        let worker = ServeArgs {
            bind: Some("0.0.0.0:8080".parse().unwrap()),
            ..shared
        };
        assert!(!worker.resolve_worker().unwrap().no_worker);
    }

    #[test]
    fn import_roots_come_from_flags_or_the_file_and_must_be_directories() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.toml");
        let root = dir.path().display().to_string();
        std::fs::write(&path, format!("import_roots = [{root:?}]\n")).unwrap();
        let config = ServeArgs {
            config: Some(path.clone()),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(config.import_roots, vec![dir.path().to_owned()]);
        let err = ServeArgs {
            import_roots: Some(vec![dir.path().join("missing")]),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert!(err.to_string().contains("import root"), "{err}");
        let err = ServeArgs {
            import_roots: Some(vec![PathBuf::from("relative")]),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert!(err.to_string().contains("absolute"), "{err}");
    }

    #[test]
    fn unknown_file_keys_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, "max_bodybytes = 99\n").unwrap();
        assert!(ServeConfig::from_file(&path).is_err());
    }
}
