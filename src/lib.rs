//! egsolve: solving energy games (and parity games through a fixed reduction) exactly.
//!
//! # Layout
//! - [`arena`]: the validated game graph (CSR successors, CSC predecessors, owners).
//! - [`solve`]: the backends behind [`solve::solve`], the [`solve::Solution`] they all
//!   produce, cancellation/progress, and strategy derivation.
//!
//! The solver core (`arena`, `solve`, `check`) does no I/O and never imports tokio or axum.

pub mod arena;
pub mod check;
pub mod generate;
pub mod oracle;
pub mod output;
pub mod solve;
