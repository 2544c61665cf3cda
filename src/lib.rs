//! egsolve: solving energy games (and parity games through a fixed reduction) exactly.
//!
//! # Layout
//! - [`arena`]: the validated game graph (CSR successors, CSC predecessors, owners).
//! - [`format`]: reading games (EGSolver `.mpg`, PGSolver `.gm` through the parity
//!   reduction, JSON; gzip/bzip2/zstd) and writing them.
//! - [`solve`]: the backends behind [`solve::solve`], the [`solve::Solution`] they all
//!   produce, cancellation/progress, and strategy derivation.
//!
//! The solver core (`arena`, `solve`, `check`) does no I/O and never imports tokio or axum.

pub mod arena;
pub mod format;
pub mod solve;
