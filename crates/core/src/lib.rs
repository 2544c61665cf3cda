//! egsolve-core: solving energy games (and parity games) exactly, with certificates.
//!
//! # Layout
//! - [`arena`]: the validated game graph (CSR successors, CSC predecessors, owners).
//! - [`format`]: reading games (EGSolver `.mpg`, PGSolver `.gm` through the parity
//!   reduction, JSON, the binary `egb`; gzip/bzip2/zstd) and writing them.
//! - [`parity`]: what parity games carry besides their arena (priority compression,
//!   SCCs, the summary of how they were prepared).
//! - [`solve`]: the backends behind [`solve::solve`] (and [`solve::solve_game`] for parity
//!   games, with the native parity solver), the [`solve::Solution`] they all produce,
//!   cancellation/progress, and strategy derivation. The GPU backend lives in the
//!   `egsolve-gpu` crate and reaches the solve through [`solve::DeviceSolver`].
//! - [`graph`]: the solvers' graph searches (components, cycle signs, reachability,
//!   attractors) on the subgraphs of player 1's strategies.
//! - [`check`]: certificates for a claimed solution.
//! - [`output`]: solution writers (JSON, text, `paritysol`) and the JSON solution reader.
//! - [`generate`]: seeded game generators; [`oracle`]: brute force for tiny games.
//!
//! # Architecture invariant
//! This crate is the pure core: it depends on no async runtime, web framework, database or
//! GPU driver (its `Cargo.toml` says so), and only the format readers touch the file
//! system. The solvers take and return values; callers on async runtimes run them on
//! threads of their own.

// The core is the library others build on: every public item says what it is.
#![warn(missing_docs)]

pub mod arena;
pub mod check;
pub mod format;
mod fresh;
pub mod generate;
pub mod graph;
pub mod oracle;
pub mod output;
pub mod parity;
pub mod solve;
