//! egsolve: solving energy games (and parity games through a fixed reduction) exactly.
//!
//! # Layout
//! - [`arena`]: the validated game graph (CSR successors, CSC predecessors, owners).
//! - [`solve`]: the backends behind [`solve::solve`], the [`solve::Solution`] they all
//!   produce, cancellation/progress, and strategy derivation.
//! - [`client`]: the API client behind `egsolve submit|status|result|cancel|jobs`.
//! - [`service`]: the HTTP job service (`egsolve serve`): API, SQLite queue, workers.
//!
//! The solver core (`arena`, `solve`, `check`) does no I/O and never imports tokio or axum.

pub mod arena;
pub mod client;
pub mod service;
pub mod solve;
