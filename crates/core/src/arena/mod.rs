//! The game graph ("arena"): vertices `0..n`, an owner per vertex, weighted edges stored
//! twice — successors (CSR) and predecessors (CSC) — and optional vertex names.
//!
//! An [`Arena`] is valid by construction: its three constructors are the only ways to make
//! one — [`Arena::from_edges`] (an edge list in any order), [`Arena::from_successors`]
//! (successor lists already in CSR form, validated and transposed in parallel) and
//! `Arena::from_parts` (both sides as a binary file holds them, each array checked in one
//! parallel pass and the predecessor side proved to be exactly the transpose: `parts`) —
//! and all three establish:
//! - `succ_offsets` and `pred_offsets` have exactly `n + 1` entries, start at 0, never
//!   decrease and end at `m`;
//! - every vertex has at least one successor;
//! - every target and source id is `< n`;
//! - `m < u32::MAX`, so edge indices fit in `u32` (device buffers use the same layout);
//! - each vertex's predecessors are in ascending source order (a source's parallel edges in
//!   its successor order), so the arena is a function of the successor lists alone: the
//!   same game gives the same arena whatever the order of its file's lines or its format.
//!
//! Weights are `i64` in meaning but stored at the narrowest width that holds all of them
//! (`weights` module), the same width in both directions.
//!
//! Each array is an [`Array`]: owned, or borrowed from a shared read-only buffer (a
//! memory-mapped `egb` file: `storage`), so a mapped game costs no memory of its own and
//! is not copied; the accessors return plain slices either way.
//!
//! Later code never re-checks these. This module owns the layout only: it does no I/O and
//! knows nothing about file formats, solvers or the service.

mod build;
mod csr;
mod fingerprint;
mod parts;
mod repeats;
mod storage;
mod transpose;
mod weights;

pub use build::{ArenaError, EdgeList};
pub(crate) use csr::first_index;
pub use csr::{EdgeWeights, Successors};
pub(crate) use parts::{Part, Parts, check_successor_offsets};
pub use storage::{AlignedBytes, Array, SharedBytes, StableBytes};
pub(crate) use transpose::transpose_into;
pub(crate) use weights::Weights;
pub use weights::{Weight, WeightIter, WeightSlice, Width};

/// Below this many edges the passes run on the calling thread (no task overhead).
pub(crate) const PARALLEL_EDGES: usize = 1 << 15;

/// A vertex id, as written in the input file.
pub type VertexId = u32;

/// Who owns a vertex and so picks its successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum Player {
    /// The energy player (`MAX` in EGSolver files, owner `0` in PGSolver files): wants the
    /// energy level to stay nonnegative forever, and minimises the credit it needs.
    Zero = 0,
    /// The opponent (`MIN` in EGSolver files, owner `1` in PGSolver files).
    One = 1,
}

impl Player {
    /// The other player.
    pub fn opponent(self) -> Player {
        match self {
            Player::Zero => Player::One,
            Player::One => Player::Zero,
        }
    }

    /// 0 or 1.
    pub fn index(self) -> u8 {
        self as u8
    }

    /// [`Player::One`] if `one`, else [`Player::Zero`].
    pub fn one_if(one: bool) -> Player {
        if one { Player::One } else { Player::Zero }
    }
}

/// The edge-index range of vertex `v` in a CSR side with these `offsets`.
#[inline]
fn range_of(offsets: &[u32], v: VertexId) -> std::ops::Range<usize> {
    offsets[v as usize] as usize..offsets[v as usize + 1] as usize
}

/// `(other end, weight)` pairs of the edges in `range` of one side.
#[inline]
fn edges_in<'a>(
    ends: &'a [VertexId],
    weights: &'a Weights,
    range: std::ops::Range<usize>,
) -> impl ExactSizeIterator<Item = (VertexId, i64)> + 'a {
    ends[range.clone()]
        .iter()
        .copied()
        .zip(weights.view().slice(range).iter())
}

/// An immutable, validated game graph. See the module docs for its invariants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arena {
    owner: Array<Player>,
    succ_offsets: Array<u32>,
    succ_targets: Array<VertexId>,
    succ_weights: Weights,
    pred_offsets: Array<u32>,
    pred_sources: Array<VertexId>,
    pred_weights: Weights,
    names: Option<Box<[Option<Box<str>>]>>,
}

impl Arena {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.owner.len()
    }

    /// Number of edges (parallel edges count separately).
    pub fn edge_count(&self) -> usize {
        self.succ_targets.len()
    }

    /// The owner of `v`.
    #[inline]
    pub fn owner(&self, v: VertexId) -> Player {
        self.owner[v as usize]
    }

    /// Owners of all vertices, indexed by id.
    pub fn owners(&self) -> &[Player] {
        &self.owner
    }

    /// Edge-index range of `v`'s successors in [`Arena::succ_targets`] / [`Arena::succ_weights`].
    #[inline]
    pub fn succ_range(&self, v: VertexId) -> std::ops::Range<usize> {
        range_of(&self.succ_offsets, v)
    }

    /// Edge-index range of `v`'s predecessors in [`Arena::pred_sources`] / [`Arena::pred_weights`].
    #[inline]
    pub fn pred_range(&self, v: VertexId) -> std::ops::Range<usize> {
        range_of(&self.pred_offsets, v)
    }

    /// `(successor, weight)` pairs of `v`, in input order.
    #[inline]
    pub fn successors(&self, v: VertexId) -> impl ExactSizeIterator<Item = (VertexId, i64)> + '_ {
        edges_in(&self.succ_targets, &self.succ_weights, self.succ_range(v))
    }

    /// `(predecessor, weight of the edge predecessor → v)` pairs of `v`.
    #[inline]
    pub fn predecessors(&self, v: VertexId) -> impl ExactSizeIterator<Item = (VertexId, i64)> + '_ {
        edges_in(&self.pred_sources, &self.pred_weights, self.pred_range(v))
    }

    /// CSR offsets (`n + 1` entries).
    pub fn succ_offsets(&self) -> &[u32] {
        &self.succ_offsets
    }
    /// CSR targets (`m` entries).
    pub fn succ_targets(&self) -> &[VertexId] {
        &self.succ_targets
    }
    /// CSR weights (`m` entries), read as `i64` through [`WeightSlice::get`].
    #[inline]
    pub fn succ_weights(&self) -> WeightSlice<'_> {
        self.succ_weights.view()
    }
    /// The weight of successor edge `e` (an index in [`Arena::succ_range`] of its source).
    #[inline]
    pub fn weight(&self, e: usize) -> i64 {
        self.succ_weights.view().get(e)
    }
    /// The width the weights are stored at (the same for successors and predecessors).
    pub fn weight_width(&self) -> Width {
        self.succ_weights.width()
    }
    /// Successor and predecessor weights as slices of `W`, if they are stored at that width:
    /// for loops that dispatch once on [`Arena::weight_width`] and then read them directly.
    #[inline]
    pub fn typed_weights<W: Weight>(&self) -> Option<(&[W], &[W])> {
        Some((
            W::slice(self.succ_weights.view())?,
            W::slice(self.pred_weights.view())?,
        ))
    }
    /// CSC offsets (`n + 1` entries).
    pub fn pred_offsets(&self) -> &[u32] {
        &self.pred_offsets
    }
    /// CSC sources (`m` entries).
    pub fn pred_sources(&self) -> &[VertexId] {
        &self.pred_sources
    }
    /// CSC weights (`m` entries): entry `i` is the weight of edge `pred_sources[i] → v`.
    #[inline]
    pub fn pred_weights(&self) -> WeightSlice<'_> {
        self.pred_weights.view()
    }

    /// The name of `v`, if the input gave one.
    pub fn name(&self, v: VertexId) -> Option<&str> {
        self.names
            .as_ref()
            .and_then(|names| names[v as usize].as_deref())
    }

    /// Whether any vertex has a name.
    pub fn has_names(&self) -> bool {
        self.names.is_some()
    }

    /// Bytes of this arena's arrays (names excluded), whether owned or mapped.
    pub fn heap_bytes(&self) -> usize {
        let n = self.vertex_count();
        let m = self.edge_count();
        n + 2 * 4 * (n + 1) + 2 * m * (4 + self.weight_width().bytes())
    }

    /// Says that the predecessor side will not be read for a while (the GPU lists its own
    /// from the successors): where it lies in a mapped `egb` file, its pages leave the
    /// process's memory, to be read from the file again if something asks (at 10^9 edges
    /// half of the arena: 7 GB). Nothing observable changes.
    pub fn release_predecessors(&self) {
        self.pred_offsets.release();
        self.pred_sources.release();
        self.pred_weights.release();
    }

    /// Bytes of this arena's arrays that borrow a shared buffer (a memory-mapped `egb`
    /// file) instead of owning memory: 0 for an arena built from text, up to
    /// [`Arena::heap_bytes`] for one mapped whole. A mapped array costs no memory of its
    /// own: its pages are the file's, in the page cache, shared and reclaimable.
    pub fn mapped_bytes(&self) -> usize {
        let n = self.vertex_count();
        let m = self.edge_count();
        let w = self.weight_width().bytes();
        let shared = |shared: bool, bytes: usize| if shared { bytes } else { 0 };
        shared(self.owner.is_shared(), n)
            + shared(self.succ_offsets.is_shared(), 4 * (n + 1))
            + shared(self.succ_targets.is_shared(), 4 * m)
            + shared(self.succ_weights.is_shared(), w * m)
            + shared(self.pred_offsets.is_shared(), 4 * (n + 1))
            + shared(self.pred_sources.is_shared(), 4 * m)
            + shared(self.pred_weights.is_shared(), w * m)
    }

    /// The same arena with the weight of every edge set to `weight(source)` (the parity
    /// reduction gives all edges leaving a vertex one weight).
    pub fn with_source_weights(&self, mut weight: impl FnMut(VertexId) -> i64) -> Arena {
        let n = self.vertex_count();
        let mut succ = Vec::with_capacity(self.edge_count());
        for v in 0..n as VertexId {
            let w = weight(v);
            succ.extend(self.succ_range(v).map(|_| w));
        }
        let pred: Box<[i64]> = self
            .pred_sources
            .iter()
            .map(|&source| succ[self.succ_offsets[source as usize] as usize])
            .collect();
        self.reweighted(self.owner.clone(), succ.into_boxed_slice(), pred)
    }

    /// The same arena with these owners and weights (both directions at the wider width
    /// of the two).
    fn reweighted(&self, owner: Array<Player>, succ: Box<[i64]>, pred: Box<[i64]>) -> Arena {
        let width = Width::of(&succ).max(Width::of(&pred));
        Arena {
            owner,
            succ_offsets: self.succ_offsets.clone(),
            succ_targets: self.succ_targets.clone(),
            succ_weights: Weights::at_width(succ, width),
            pred_offsets: self.pred_offsets.clone(),
            pred_sources: self.pred_sources.clone(),
            pred_weights: Weights::at_width(pred, width),
            names: self.names.clone(),
        }
    }

    /// The same arena with every weight replaced by `f(weight)` and owners by `g(owner)`.
    /// Used for the dual game (roles swapped, weights rescaled).
    pub fn map(
        &self,
        mut weight: impl FnMut(i64) -> i64,
        mut owner: impl FnMut(Player) -> Player,
    ) -> Arena {
        let succ: Box<[i64]> = self.succ_weights().iter().map(&mut weight).collect();
        let pred: Box<[i64]> = self.pred_weights().iter().map(&mut weight).collect();
        let owners: Vec<Player> = self.owner.iter().map(|&p| owner(p)).collect();
        self.reweighted(owners.into(), succ, pred)
    }
}
