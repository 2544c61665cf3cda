//! Parity games beside their arena: what the reader, the solvers, the certificate and the
//! writers share about priorities, without solving anything.
//!
//! - [`compress`]: priority compression, the step every parity solver takes first —
//!   renumber the priorities to the fewest that give every play the same winner (merge
//!   neighbours of equal parity, drop gaps; per strongly connected component when that
//!   makes the energy reduction fit, with the components of `crate::graph::tarjan`).
//!   Linear in the number of vertices.
//! - [`ParityView`] and [`ParitySummary`]: what a solve needs of a parity game besides its
//!   arena, and what the answer reports about it.
//!
//! This module owns no file format and no solver: `format` builds the compressed priorities
//! while reading, `solve::parity` solves with them, `check::parity` certifies answers
//! against the priorities as read.

pub mod compress;

pub use compress::{Compressed, compress, compress_per_scc};

/// How a parity game was prepared for solving, as the JSON summary reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ParitySummary {
    /// Distinct priorities in the input.
    pub priorities: usize,
    /// Distinct priorities after compression (what the solver or the reduction used).
    pub compressed_priorities: usize,
    /// Whether the priorities were compressed per strongly connected component (done only
    /// when the global compression leaves a reduction that does not fit in 64 bits).
    pub per_scc: bool,
    /// Whether the reduction of the compressed game to an energy game fits in 64 bits (the
    /// arena's weights are then that reduction; otherwise they are all 0 and only the parity
    /// solver answers).
    pub reduction_fits: bool,
}

/// What the solvers need of a parity game besides its arena.
#[derive(Debug, Clone, Copy)]
pub struct ParityView<'a> {
    /// The compressed priority of each vertex (see [`Compressed`]): any two plays have the
    /// same winner under these as under the input's priorities.
    pub priorities: &'a [u32],
    /// How the game was prepared.
    pub summary: ParitySummary,
}

impl ParityView<'_> {
    /// Whether the arena's weights are the energy reduction of [`ParityView::priorities`].
    pub fn reduction_fits(&self) -> bool {
        self.summary.reduction_fits
    }
}
