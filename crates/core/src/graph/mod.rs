//! The solvers' graph searches, in one place: the accelerated solver's evaluations and
//! player 1's strategy construction (`solve::strategy`) both run them, on the subgraphs
//! `G_σ1` of a positional strategy σ1 of player 1.
//!
//! - [`Graph`] (`view`): `G_σ1` restricted to a vertex subset, as CSR successors and CSC
//!   predecessors over the arena's ids, built on all of a solve's threads.
//! - [`scc`]: strongly connected components (trim, forward–backward splits, Tarjan).
//! - [`cycles`]: the cycle-sign test, per component.
//! - [`reach`]: backward reachability; [`attractor`]: player 1's attractors in layers;
//!   `frontier`: one round of a frontier search, on one thread or many.
//! - [`tarjan`]: the solvers' one Tarjan ([`tarjan::SccFinder`], its arrays reused across
//!   calls), which the parity solver and the priority compression run too.
//!
//! Each search computes a set or a fixpoint that does not depend on the thread count. They
//! run on the solve's pool (`solve::threads`) and stop on its cancel flag
//! (`solve::control`); they know nothing of the solvers that call them.

pub mod attractor;
pub mod cycles;
pub(crate) mod frontier;
pub mod reach;
pub mod scc;
pub mod tarjan;
mod view;

pub use self::view::Graph;
pub(crate) use self::view::{DROPS_ALL, KEEPS_ALL, Successors};
