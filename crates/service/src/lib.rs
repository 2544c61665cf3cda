//! The solving service behind `egsolve serve` and `egsolve worker`: an HTTP job API over a
//! persistent queue — embedded SQLite on one host, or PostgreSQL shared by any number of
//! API and worker hosts — with solver workers on their own threads.
//!
//! # Facade
//! The crate's public surface is its root: [`run`], [`run_worker`], [`migrate`],
//! [`shutdown_signal`], [`ServeConfig`] and [`ConfigError`], [`ServiceError`], tokens
//! ([`add_token_with`]), the store's job records ([`stored_jobs`], [`JobRecord`]) and the
//! route table ([`ROUTES`]). Every module is private; the command line (flags, subcommands)
//! is the binary's. A test (`tests/integration/architecture.rs`) holds the public items
//! at 60 or fewer.
//!
//! # Layout (request → store → scheduler → worker)
//! - [`config`]: [`ServeConfig`] — flags, `EGSOLVE_*` environment, optional TOML file.
//! - [`api`], [`submit`], [`views`], [`error`]: axum routes and handlers, JSON views, the one
//!   error type mapped to RFC 9457 problem+json.
//! - [`auth`]: bearer tokens (hashed tokens file, users, roles).
//! - [`upload`], [`offload`]: streaming bodies to disk — decompress, count, hash and write
//!   (large writes) on threads of their own, fsync beside the parse.
//! - [`import`]: jobs by reference — a file under an import root, resolved and checked,
//!   reflinked or copied into the store (then as an upload); [`export`]: results by
//!   reference, written under an export root; [`leftovers`]: what a crash left there,
//!   recorded in the data directory and removed at start-up.
//! - [`storage`]: the store's free disk space (507 before a byte is stored, or when the
//!   disk fills).
//! - [`preparse`]: parsing a body once received, on every core; the memory budget of parsed
//!   games.
//! - [`admission`]: one step, [`admission::admit`], at upload and in the worker: whether a
//!   game fits this host (refused before it runs), and the one estimate of its GPU memory
//!   that the job's row keeps for the claims.
//! - [`store`]: the jobs/arenas/results tables on SQLite or PostgreSQL, the bytes (files, or
//!   chunks shared by every host), claims, leases and fenced writes; the truth.
//! - [`scheduler`]: this process's slots, filled by claiming from the store's queue
//!   (priority, FIFO, GPU slots and the CPU fallback).
//! - [`worker`]: one thread per slot; a job is loaded (parsed and admitted if the upload
//!   did not), its route chosen, solved, and its result recorded.
//! - [`cluster`]: a process as a member of the cluster: heartbeat (leases, progress,
//!   expiry, registry) and store notifications.
//! - [`result_file`]: stored results and their JSON/text/paritysol renderings; [`byte_range`]:
//!   `Range` requests of a binary result (resumed downloads, one array).
//! - [`events`], [`metrics`]: long-poll wake-ups and Prometheus figures.
//! - [`idempotency`]: `Idempotency-Key` of submissions (a retried request gets its job).
//! - [`ui`]: the web page (embedded assets) and the read-only endpoints it adds.
//!
//! # Invariants
//! - Handlers never solve or parse large inputs on the runtime: blocking work runs on
//!   `spawn_blocking` threads (uploads), the rayon pool (parses) or worker threads (solves).
//! - A `202` is sent only after the arena is fsynced (and, on PostgreSQL, stored in the
//!   database) and the job row committed.
//! - A job runs only under a claim: `running`, an attempt number, a worker id and a lease
//!   its heartbeat renews. A job becomes `succeeded` only after its result is synced, in a
//!   transaction fenced on (id, attempt, worker): at most one result per job, ever. A job
//!   whose lease expires is queued again (SQLite: a restart re-queues `running` jobs).

mod admission;
mod api;
mod auth;
mod batch;
mod byte_range;
mod cluster;
mod config;
mod data_dir_lock;
mod error;
mod events;
mod export;
mod idempotency;
mod idle_release;
mod import;
mod job;
mod leftovers;
mod metrics;
mod offload;
mod parallel_write;
mod parts;
mod preparse;
mod request;
mod result_file;
mod scheduler;
mod slots;
mod storage;
mod store;
mod submit;
mod ui;
mod upload;
mod views;
mod worker;

use std::future::Future;
use std::net::SocketAddr;
use std::ops::Deref;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use api::ROUTES;
pub use auth::{add_token, add_token_with};
pub use config::{ConfigError, ServeConfig};
pub use job::{JobRecord, JobState};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use auth::Authenticator;
use cluster::Node;
use events::JobEvents;
use metrics::Metrics;
use scheduler::SchedulerHandle;
use store::Store;

/// Why the service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// The tokens file is unusable.
    #[error(transparent)]
    Auth(#[from] auth::AuthError),
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The worker node could not start (store, GPUs).
    #[error(transparent)]
    Node(#[from] cluster::NodeError),
    /// Serving failed.
    #[error("serving failed: {0}")]
    Io(#[from] std::io::Error),
    /// A command was given arguments it cannot use.
    #[error("{0}")]
    Usage(String),
}

/// What every handler shares; cheap to clone (one `Arc`).
#[derive(Debug, Clone)]
pub(crate) struct AppState(Arc<Shared>);

/// The shared parts of the service.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The job store (its own pool inside).
    pub(crate) store: Store,
    /// The queue actor.
    pub(crate) scheduler: SchedulerHandle,
    /// Settings, fixed at start-up.
    pub(crate) config: Arc<ServeConfig>,
    /// Token checks (read-only after start-up, so no lock).
    pub(crate) auth: Authenticator,
    /// Metrics registry.
    pub(crate) metrics: Arc<Metrics>,
    /// Long-poll wake-ups.
    pub(crate) events: Arc<JobEvents>,
    /// Threads of the parallel CPU backend.
    pub(crate) cpu_threads: usize,
    /// Cancelled when a shutdown signal arrives: long polls answer at once.
    pub(crate) stopping: CancellationToken,
    /// Memory for games parsed at submission and waiting in the queue.
    pub(crate) preparse_budget: Arc<preparse::MemoryBudget>,
    /// Idempotency keys of recent submissions (its own lock inside).
    pub(crate) idempotency: Arc<idempotency::IdempotencyKeys>,
    /// Busy time of every slot over the last hour, for the web page (its own lock inside).
    pub(crate) usage: Arc<ui::usage::UsageHistory>,
    /// The directories jobs by reference may name files under, resolved at start-up.
    pub(crate) import_roots: import::ImportRoots,
    /// The directories results by reference may be written under, resolved at start-up.
    pub(crate) export_roots: export::ExportTargets,
    /// Uploads in parts under way (their own lock inside).
    pub(crate) uploads: Arc<parts::session::Uploads>,
}

impl Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// Serves on `listener` until `shutdown` completes. Then, at once, it stops accepting,
/// answers open long polls and interrupts running jobs (they go back to `queued`); open
/// requests get up to `shutdown_grace_secs` to finish before they are dropped; last, the
/// store is closed. A job whose worker does not stop within the grace time stays `running`
/// in the store and is re-queued by the next start.
///
/// The signal is boxed at once, and the server comes back boxed, so the server (axum,
/// hyper and the job machinery behind them) is compiled once, in this crate: a future
/// awaited by its type is compiled again in every crate that polls it, once per caller's
/// signal type. The test harness, whose every test passes its own, took 95 s to build with
/// those copies and 34 s without (issue 44).
pub fn run(
    listener: TcpListener,
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Running {
    serve_boxed(listener, config, Box::pin(shutdown), Box::new(|_| {}))
}

/// [`run`], calling `ready` with the listening address once the server can answer: its
/// store is open and its data directory is this process's (a second server on the same
/// directory fails before). `egsolve serve` prints its "listening on" line there, so a
/// script that waits for that line never meets a server that is about to refuse to start.
pub fn run_announcing(
    listener: TcpListener,
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr) + Send + 'static,
) -> Running {
    serve_boxed(listener, config, Box::pin(shutdown), Box::new(ready))
}

/// What [`run_announcing`] calls once the server can answer.
type Ready = Box<dyn FnOnce(SocketAddr) + Send>;

/// A shutdown signal whose type does not multiply the code that awaits it.
type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A server or worker running until its signal, compiled in this crate ([`run`]).
pub type Running = Pin<Box<dyn Future<Output = Result<(), ServiceError>> + Send>>;

/// Boxes [`serve_until`] here, so that its code is generated in this crate only.
fn serve_boxed(
    listener: TcpListener,
    config: ServeConfig,
    shutdown: Signal,
    ready: Ready,
) -> Running {
    Box::pin(serve_until(listener, config, shutdown, ready))
}

/// [`run`]'s body.
async fn serve_until(
    listener: TcpListener,
    config: ServeConfig,
    shutdown: Signal,
    ready: Ready,
) -> Result<(), ServiceError> {
    let local = listener.local_addr()?;
    ServeConfig {
        bind: local,
        ..config.clone()
    }
    .validate()?;
    let auth = match (&config.tokens_file, config.auth) {
        (Some(path), true) => Authenticator::from_file(path)?,
        _ => Authenticator::Off,
    };
    let import_roots = import::ImportRoots::new(&config.import_roots).map_err(|e| {
        config::ConfigError::Invalid(format!("cannot resolve the import roots: {e}"))
    })?;
    let export_roots = export::ExportTargets::new(
        &config.export_roots,
        &config.data_dir,
        config.tokens_file.as_deref(),
    )
    .map_err(config::ConfigError::Invalid)?;
    sweep_leftovers(&export_roots);
    let config = Arc::new(config);
    let node = Node::start(config.clone(), true).await?;
    let uploads = Arc::new(parts::session::Uploads::open(
        config.data_dir.join("uploads"),
    )?);
    let store = node.store.clone();
    let scheduler = node.scheduler.clone();
    let events = node.events.clone();
    let cpu_threads = if config.cpu_threads > 0 {
        config.cpu_threads
    } else {
        config::cores()
    };
    let stopping = CancellationToken::new();
    let state = AppState(Arc::new(Shared {
        store: store.clone(),
        scheduler: scheduler.clone(),
        config: config.clone(),
        auth,
        metrics: node.metrics.clone(),
        events: events.clone(),
        cpu_threads,
        stopping: stopping.clone(),
        preparse_budget: preparse::MemoryBudget::new(config.preparsed_memory_bytes),
        idempotency: Arc::default(),
        usage: Arc::default(),
        import_roots,
        export_roots,
        uploads: uploads.clone(),
    }));
    let expiry = tokio::spawn(expire_forever(store.clone(), events, config.result_ttl()));
    let upload_expiry = tokio::spawn(expire_uploads_forever(
        uploads,
        Duration::from_secs(config.upload_ttl_secs),
    ));
    let sampler = tokio::spawn(ui::usage::sample_forever(
        state.scheduler.clone(),
        state.usage.clone(),
    ));
    tracing::info!(address = %local, store = store.engine(), data_dir = %config.data_dir.display(), "egsolve service listening");
    ready(local);
    // No Nagle delay: small answers (a job view, the end of a result) must not wait for an ACK.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let grace = config.shutdown_grace();
    let signalled = {
        let stopping = stopping.clone();
        async move {
            shutdown.await;
            tracing::info!(
                grace_secs = grace.as_secs(),
                "shutdown signal: no new connections"
            );
            stopping.cancel();
        }
    };
    let serve = async {
        let served = axum::serve(listener, api::router(state))
            .with_graceful_shutdown(signalled)
            .await;
        // Serving can also end with an error; stop the jobs then too.
        stopping.cancel();
        served
    };
    let stop_jobs = async {
        stopping.cancelled().await;
        tracing::info!("shutting down: re-queueing running jobs");
        scheduler.shutdown().await;
    };
    let grace_over = async {
        stopping.cancelled().await;
        tokio::time::sleep(grace).await;
    };
    let served = tokio::select! {
        (served, ()) = async { tokio::join!(serve, stop_jobs) } => served,
        () = grace_over => {
            tracing::warn!(
                grace_secs = grace.as_secs(),
                "grace time over: dropping open requests; jobs still running are re-queued at the next start"
            );
            Ok(())
        }
    };
    expiry.abort();
    upload_expiry.abort();
    sampler.abort();
    close(node).await;
    served.map_err(ServiceError::Io)
}

/// Removes the half-made exports a crash left under the export roots, as recorded in the
/// data directory ([`leftovers`]).
fn sweep_leftovers(targets: &export::ExportTargets) {
    if targets.is_empty() {
        return;
    }
    match leftovers::sweep(targets.records()) {
        Ok(0) => {}
        Ok(removed) => tracing::info!(removed, "half-made exports a crash left behind removed"),
        Err(e) => tracing::warn!("the records of exports under way are not read: {e}"),
    }
}

/// Runs jobs from a shared store without serving HTTP (`egsolve worker`) until `shutdown`
/// completes; then running jobs go back to the queue at once (other workers pick them up)
/// and the process leaves the worker registry.
pub fn run_worker(
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Running {
    work_boxed(config, Box::pin(shutdown))
}

/// Boxes [`work_until`] here (as [`serve_boxed`]).
fn work_boxed(config: ServeConfig, shutdown: Signal) -> Running {
    Box::pin(work_until(config, shutdown))
}

/// [`run_worker`]'s body, compiled once (as [`run`]'s).
async fn work_until(config: ServeConfig, shutdown: Signal) -> Result<(), ServiceError> {
    config.validate()?;
    let config = Arc::new(config);
    let node = Node::start(config.clone(), false).await?;
    let expiry = tokio::spawn(expire_forever(
        node.store.clone(),
        node.events.clone(),
        config.result_ttl(),
    ));
    shutdown.await;
    tracing::info!("shutting down: re-queueing running jobs");
    node.scheduler.shutdown().await;
    expiry.abort();
    close(node).await;
    Ok(())
}

/// `egsolve migrate`: copies the SQLite store in `data_dir` (a stopped server's data
/// directory) into the empty PostgreSQL database `database`. Returns the line that says
/// what moved. Boxed for the reason [`run`] is.
pub fn migrate<'a>(
    data_dir: &'a Path,
    database: &'a str,
) -> Pin<Box<dyn Future<Output = Result<String, ServiceError>> + Send + 'a>> {
    Box::pin(migrate_store(data_dir, database))
}

/// [`migrate`]'s body.
async fn migrate_store(data_dir: &Path, database: &str) -> Result<String, ServiceError> {
    if !store::is_postgres_url(database) {
        return Err(ServiceError::Usage(
            "--database must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB)".into(),
        ));
    }
    if !data_dir.join("jobs.db").exists() {
        return Err(ServiceError::Usage(format!(
            "{} holds no jobs.db: pass the data directory of the SQLite server",
            data_dir.display()
        )));
    }
    let source = Store::open(data_dir, true).await?;
    // A scratch directory for the target store's (unused) cache.
    let cache = std::env::temp_dir().join(format!("egsolve-migrate-{}", std::process::id()));
    std::fs::create_dir_all(&cache)?;
    let target = Store::open_postgres(database, &cache).await?;
    let copied = source.copy_into(&target).await;
    source.close().await;
    target.close().await;
    let _ = std::fs::remove_dir_all(&cache);
    let copied = copied?;
    Ok(format!(
        "copied {} jobs ({} were running and are queued again), {} arenas, {} results into {}",
        copied.jobs,
        copied.requeued,
        copied.arenas,
        copied.results,
        config::redact(database)
    ))
}

/// Every job of the store `config` names (its SQLite store in `data_dir`, or its
/// `database`; `data_dir` then holds the cache), newest first, as the store records it:
/// for tests and tools that look behind the API (attempts, completions, workers).
pub async fn stored_jobs(config: &ServeConfig) -> Result<Vec<JobRecord>, ServiceError> {
    let store = Store::open_configured(
        config.database.as_deref(),
        &config.data_dir,
        config.sync_commits,
    )
    .await?;
    let jobs = store.list_jobs(None, None, None, u32::MAX).await;
    store.close().await;
    Ok(jobs?)
}

/// Stops a node's tasks and closes its store.
async fn close(node: Node) {
    let store = node.store.clone();
    node.stop().await;
    if tokio::time::timeout(Duration::from_secs(5), store.close())
        .await
        .is_err()
    {
        tracing::warn!(
            "the store did not close within 5 s; exiting anyway (every commit is durable)"
        );
    }
}

/// Removes expired jobs and files at start-up and then every ten minutes.
async fn expire_forever(store: Store, events: Arc<JobEvents>, ttl: Duration) {
    let mut tick =
        tokio::time::interval(Duration::from_secs(600).min(ttl.max(Duration::from_secs(1))));
    loop {
        tick.tick().await;
        let cutoff = store::now_ms() - ttl.as_millis() as i64;
        match store.expire(cutoff).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(expired = n, "removed finished jobs past their TTL"),
            Err(e) => tracing::error!("expiry failed: {e}"),
        }
        events.prune();
    }
}

/// Removes uploads in parts left untouched for `ttl`.
async fn expire_uploads_forever(uploads: Arc<parts::session::Uploads>, ttl: Duration) {
    let mut tick = tokio::time::interval(Duration::from_secs(60).min(ttl));
    loop {
        tick.tick().await;
        let cutoff = store::now_ms() - i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let uploads = uploads.clone();
        match tokio::task::spawn_blocking(move || uploads.expire(cutoff)).await {
            Ok(0) | Err(_) => {}
            Ok(n) => tracing::info!(expired = n, "removed uploads in parts past their TTL"),
        }
    }
}

/// Completes on ctrl-c or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}
