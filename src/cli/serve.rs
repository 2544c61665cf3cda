//! The `egsolve serve` and `egsolve worker` flags ([`ServeArgs`]: every field optional, so
//! "not given" is distinguishable from "given the default"; the environment is read through
//! clap's `env` attribute, so a flag and its variable are one thing), resolved over the
//! service's defaults and TOML file into a validated [`ServeConfig`].
//!
//! Self-contained (clap, std and the service's facade only): the deploy tests include this
//! file to parse the deploy files' settings with the real flag parser.

use std::net::SocketAddr;
use std::path::PathBuf;

use egsolve_service::{ConfigError, ServeConfig};

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
    /// A directory under which the server writes results where clients ask (repeatable;
    /// `egsolve submit --result-by-reference`; tokens need the `import` permission)
    /// [default: none].
    #[arg(long = "export-root", env = "EGSOLVE_EXPORT_ROOT")]
    pub export_roots: Option<Vec<PathBuf>>,
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
    /// Most arenas one batch (`POST /v1/batches`) may carry [default: 1000].
    #[arg(long, env = "EGSOLVE_MAX_BATCH_JOBS")]
    pub max_batch_jobs: Option<u64>,
    /// A batch's small members are solved while it is received, each given this many
    /// milliseconds on one thread; the rest are queued (0: queue every member) [default: 50].
    #[arg(long, env = "EGSOLVE_BATCH_INLINE_MS")]
    pub batch_inline_ms: Option<u64>,
    /// The largest batch member (edges) solved while the batch is received [default: 2^20].
    #[arg(long, env = "EGSOLVE_BATCH_INLINE_MAX_EDGES")]
    pub batch_inline_max_edges: Option<u64>,
    /// Most uploads in parts (`POST /v1/uploads`) one user may have open [default: 16].
    #[arg(long, env = "EGSOLVE_MAX_OPEN_UPLOADS")]
    pub max_open_uploads: Option<u64>,
    /// Seconds an upload in parts is kept without a part received [default: 86400].
    #[arg(long, env = "EGSOLVE_UPLOAD_TTL_SECS")]
    pub upload_ttl_secs: Option<u64>,
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
            export_roots,
            max_vertices,
            max_edges,
            default_time_limit_secs,
            max_time_limit_secs,
            result_ttl_secs,
            per_user_job_limit,
            max_batch_jobs,
            batch_inline_ms,
            batch_inline_max_edges,
            max_open_uploads,
            upload_ttl_secs,
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
}
