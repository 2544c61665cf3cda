//! egsolve: solving energy games (and parity games through a fixed reduction) exactly.
//!
//! # Layout
//! - [`allocator`]: jemalloc for the binaries ([`global_allocator!`]).
//! - [`arena`]: the validated game graph (CSR successors, CSC predecessors, owners).
//! - [`format`]: reading games (EGSolver `.mpg`, PGSolver `.gm` through the parity
//!   reduction, JSON; gzip/bzip2/zstd) and writing them.
//! - [`parity`]: what parity games carry besides their arena (priority compression,
//!   SCCs, the summary of how they were prepared).
//! - [`solve`]: the backends behind [`solve::solve`] (and [`solve::solve_game`] for parity
//!   games, with the native parity solver), the [`solve::Solution`] they all produce,
//!   cancellation/progress, and strategy derivation.
//! - [`check`]: certificates for a claimed solution.
//! - [`output`]: solution writers (JSON, text, `paritysol`) and the JSON solution reader.
//! - [`generate`]: seeded game generators; [`oracle`]: brute force for tiny games.
//! - [`cli`]: the command line.
//! - [`service`]: the HTTP job service (`egsolve serve`): API, SQLite queue, workers.
//! - [`client`]: the API client behind `egsolve submit|status|result|cancel|jobs`.
//!
//! The solver core (`arena`, `parity`, `solve`, `check`) does no I/O and never imports tokio or axum.

pub mod allocator;
pub mod arena;
pub mod check;
pub mod cli;
pub mod client;
pub mod format;
pub mod generate;
pub mod oracle;
pub mod output;
pub mod parity;
pub mod service;
pub mod solve;
