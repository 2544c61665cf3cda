//! The service's subcommands: `egsolve serve` (bind, then [`egsolve_service::run_announcing`] until
//! ctrl-c or SIGTERM), `egsolve worker` ([`egsolve_service::run_worker`]: jobs from a shared
//! store, no HTTP), `egsolve migrate` (a SQLite store into PostgreSQL) and
//! `egsolve token add NAME [--admin] [--import]`.

use std::path::PathBuf;

use anyhow::Context;

use super::serve::ServeArgs;

/// `egsolve serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeCommand {
    #[command(flatten)]
    pub args: ServeArgs,
}

impl ServeCommand {
    /// Serves until a shutdown signal.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let config = self.args.resolve()?;
        let listener = tokio::net::TcpListener::bind(config.bind)
            .await
            .with_context(|| format!("cannot listen on {}", config.bind))?;
        // One line on stdout, so scripts and tests learn the port of `--bind 127.0.0.1:0`:
        // printed once the server can answer (its store open, its data directory locked),
        // not when the port is bound, so a server that refuses to start never announces one.
        let announce = |address| println!("listening on http://{address}");
        let running = egsolve_service::run_announcing(
            listener,
            config,
            egsolve_service::shutdown_signal(),
            announce,
        );
        running.await?;
        Ok(0)
    }
}

/// `egsolve worker`: runs jobs from a shared PostgreSQL store, serving no HTTP. It reads
/// the same settings as `egsolve serve` (flags, `EGSOLVE_*`, TOML); the HTTP ones
/// (bind, auth, tokens, limits of uploads) do not apply.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkerCommand {
    #[command(flatten)]
    pub args: ServeArgs,
}

impl WorkerCommand {
    /// Works until a shutdown signal.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let config = self.args.resolve_worker()?;
        egsolve_service::run_worker(config, egsolve_service::shutdown_signal()).await?;
        Ok(0)
    }
}

/// `egsolve migrate`: copies a SQLite store (a stopped server's data directory) into an
/// empty PostgreSQL database.
#[derive(Debug, Clone, clap::Args)]
pub struct MigrateCommand {
    /// The SQLite server's data directory (stop the server first).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// The PostgreSQL database to fill: postgres://USER:PASSWORD@HOST:PORT/DB.
    #[arg(long, env = "EGSOLVE_DATABASE")]
    pub database: String,
}

impl MigrateCommand {
    /// Copies the store; prints what moved.
    pub async fn run(&self) -> anyhow::Result<i32> {
        let report = egsolve_service::migrate(&self.data_dir, &self.database).await?;
        println!("{report}");
        Ok(0)
    }
}

/// `egsolve token …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum TokenCommand {
    /// Makes a token for NAME, appends its hash to the tokens file and prints it once.
    Add {
        /// User name.
        name: String,
        /// Give the user the admin role (sees and cancels every job).
        #[arg(long)]
        admin: bool,
        /// Let the token submit jobs by reference (files under the server's --import-root
        /// directories) instead of uploading them.
        #[arg(long)]
        import: bool,
        /// The tokens file.
        #[arg(long, env = "EGSOLVE_TOKENS_FILE")]
        tokens_file: PathBuf,
    },
}

impl TokenCommand {
    /// Runs the token command.
    pub fn run(&self) -> anyhow::Result<i32> {
        match self {
            TokenCommand::Add {
                name,
                admin,
                import,
                tokens_file,
            } => {
                let token = egsolve_service::add_token_with(tokens_file, name, *admin, *import)?;
                eprintln!("token for {name} (shown once; store it safely):");
                println!("{token}");
                Ok(0)
            }
        }
    }
}
