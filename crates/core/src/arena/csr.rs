//! The second constructor, [`Arena::from_successors`]: an arena from successor lists already
//! in CSR form (what the parallel text readers and the binary `egb` loader hold), validated
//! in one parallel pass per array, with the predecessor side (CSC) built by a parallel,
//! stable transpose ([`super::transpose`]). It establishes exactly the invariants that
//! [`Arena::from_edges`] does, and reports the same [`ArenaError`]s in the same order.
//!
//! Parallel work runs on the current rayon pool (callers choose it with `ThreadPool::install`).

use super::build::{ArenaError, check_counts, kept_names};
use super::storage::Array;
use super::transpose::transpose;
use super::weights::{Weights, Width};
use super::{Arena, PARALLEL_EDGES, Player, VertexId};
use crate::solve::chunked;

/// Edge weights at a storage width chosen by the caller (any width that holds them; the
/// arena narrows them to the narrowest that does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EdgeWeights {
    /// 16-bit weights.
    I16(Vec<i16>),
    /// 32-bit weights.
    I32(Vec<i32>),
    /// 64-bit weights.
    I64(Vec<i64>),
}

impl EdgeWeights {
    /// Number of weights.
    pub fn len(&self) -> usize {
        match self {
            EdgeWeights::I16(w) => w.len(),
            EdgeWeights::I32(w) => w.len(),
            EdgeWeights::I64(w) => w.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Successor lists in CSR form: vertex `v`'s successors are
/// `targets[offsets[v]..offsets[v + 1]]`, weighing the same entries of `weights`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Successors {
    /// `n + 1` offsets into `targets`.
    pub offsets: Vec<u32>,
    /// Target of each edge.
    pub targets: Vec<VertexId>,
    /// Weight of each edge.
    pub weights: EdgeWeights,
}

impl Arena {
    /// Builds an arena of `owners.len()` vertices from successor lists in CSR form (the order
    /// of each vertex's successors is kept). `names`, if given, has one entry per vertex.
    /// Checks, in this order: at least one vertex, counts that fit `u32`, the names' count,
    /// offsets that start at 0, never decrease and end at the edge count, targets `< n`,
    /// every vertex with a successor.
    pub fn from_successors(
        owners: Vec<Player>,
        successors: Successors,
        names: Option<Vec<Option<Box<str>>>>,
    ) -> Result<Arena, ArenaError> {
        let Successors {
            offsets,
            targets,
            weights,
        } = successors;
        let n = owners.len();
        let m = targets.len();
        check_counts(n, m, names.as_deref())?;
        let started = std::time::Instant::now();
        check_offsets(&offsets, n, m, weights.len())?;
        check_targets(&offsets, &targets, n)?;
        if let Some(v) = first_without_successor(&offsets) {
            return Err(ArenaError::NoSuccessor(v));
        }
        let checked = started.elapsed();
        let (succ_weights, pred_offsets, pred_sources, pred_weights) = match weights {
            EdgeWeights::I16(w) => typed(&offsets, &targets, n, w, Weights::I16),
            EdgeWeights::I32(w) => narrowed(&offsets, &targets, n, w),
            EdgeWeights::I64(w) => narrowed(&offsets, &targets, n, w),
        };
        tracing::debug!(
            check_ms = checked.as_secs_f64() * 1e3,
            transpose_ms = (started.elapsed() - checked).as_secs_f64() * 1e3,
            "arena from successors"
        );
        let names = kept_names(names);
        Ok(Arena {
            owner: owners.into(),
            succ_offsets: offsets.into(),
            succ_targets: targets.into(),
            succ_weights,
            pred_offsets: pred_offsets.into(),
            pred_sources: pred_sources.into(),
            pred_weights,
            names,
        })
    }
}

/// The first index in `0..len` where `hit` holds, searched in parallel chunks of plain
/// loops for long lists (rayon's per-item `find_first` costs an atomic check per item).
pub(crate) fn first_index(len: usize, hit: impl Fn(usize) -> bool + Sync) -> Option<usize> {
    if len < PARALLEL_EDGES {
        return (0..len).find(|&i| hit(i));
    }
    chunked::find_first(len, hit)
}

/// Offsets: `n + 1` of them, from 0 to `m`, never decreasing; `m` weights.
fn check_offsets(offsets: &[u32], n: usize, m: usize, weights: usize) -> Result<(), ArenaError> {
    let bad = |detail: String| Err(ArenaError::BadOffsets(detail));
    if offsets.len() != n + 1 {
        return bad(format!("{} offsets for {n} vertices", offsets.len()));
    }
    if offsets[0] != 0 || offsets[n] as usize != m {
        return bad(format!(
            "the offsets run from {} to {}, expected 0 to the edge count {m}",
            offsets[0], offsets[n]
        ));
    }
    if weights != m {
        return bad(format!("{weights} weights for {m} edges"));
    }
    match first_index(n, |v| offsets[v] > offsets[v + 1]) {
        Some(v) => bad(format!("the offsets decrease after vertex {v}")),
        None => Ok(()),
    }
}

/// Every target `< n`; the first edge (in CSR order) that is not, as the error.
fn check_targets(offsets: &[u32], targets: &[VertexId], n: usize) -> Result<(), ArenaError> {
    let Some(e) = first_index(targets.len(), |e| targets[e] as usize >= n) else {
        return Ok(());
    };
    // The source is the vertex whose range holds edge `e` (error path only).
    let from = offsets.partition_point(|&o| o as usize <= e) - 1;
    Err(ArenaError::VertexOutOfRange {
        from: from as u64,
        to: u64::from(targets[e]),
        bad: u64::from(targets[e]),
        n,
    })
}

/// The first vertex whose successor range is empty (offsets known to be nondecreasing).
fn first_without_successor(offsets: &[u32]) -> Option<VertexId> {
    first_index(offsets.len() - 1, |v| offsets[v] == offsets[v + 1]).map(|v| v as VertexId)
}

/// What the constructor stores besides owners and the successor side.
type Built = (Weights, Box<[u32]>, Box<[VertexId]>, Weights);

/// Weights already at their narrowest storage width `W` (16 bits is the narrowest there is).
fn typed<W: Copy + Send + Sync + Default>(
    offsets: &[u32],
    targets: &[VertexId],
    n: usize,
    weights: Vec<W>,
    wrap: fn(Array<W>) -> Weights,
) -> Built {
    let (pred_offsets, pred_sources, pred_weights) = transpose(n, offsets, targets, &weights);
    (
        wrap(weights.into()),
        pred_offsets,
        pred_sources,
        wrap(pred_weights.into()),
    )
}

/// Weights given at 32 or 64 bits: stored at the narrowest width that holds them.
fn narrowed<W>(offsets: &[u32], targets: &[VertexId], n: usize, weights: Vec<W>) -> Built
where
    W: Copy + Send + Sync + Default + Into<i64>,
    Vec<W>: IntoNarrow,
{
    let (lo, hi) = extremes(&weights);
    let width = if lo >= i16::MIN as i64 && hi <= i16::MAX as i64 {
        Width::I16
    } else if lo >= i32::MIN as i64 && hi <= i32::MAX as i64 {
        Width::I32
    } else {
        Width::I64
    };
    match width {
        Width::I16 => typed(offsets, targets, n, weights.narrow::<i16>(), Weights::I16),
        Width::I32 => typed(offsets, targets, n, weights.narrow::<i32>(), Weights::I32),
        Width::I64 => typed(offsets, targets, n, weights.narrow::<i64>(), Weights::I64),
    }
}

/// Smallest and largest weight (0 and 0 for none), in parallel for long lists.
fn extremes<W: Copy + Send + Sync + Into<i64>>(weights: &[W]) -> (i64, i64) {
    let fold = |(lo, hi): (i64, i64), &w: &W| {
        let w: i64 = w.into();
        (lo.min(w), hi.max(w))
    };
    if weights.len() < PARALLEL_EDGES {
        weights.iter().fold((0, 0), fold)
    } else {
        chunked::chunk_values(weights.len(), |range| {
            weights[range].iter().fold((0, 0), fold)
        })
        .into_iter()
        .fold((0, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)))
    }
}

/// Conversion of a weight vector to a width known to hold every weight.
trait IntoNarrow {
    fn narrow<T: TryFromWeight>(self) -> Vec<T>;
}

/// A storage type that a checked-in-range weight converts to.
trait TryFromWeight: Copy + Send + Sync + Default + 'static {
    fn from_weight(w: i64) -> Self;
}

impl TryFromWeight for i16 {
    fn from_weight(w: i64) -> i16 {
        w as i16
    }
}
impl TryFromWeight for i32 {
    fn from_weight(w: i64) -> i32 {
        w as i32
    }
}
impl TryFromWeight for i64 {
    fn from_weight(w: i64) -> i64 {
        w
    }
}

impl<W: Copy + Send + Sync + Into<i64> + 'static> IntoNarrow for Vec<W> {
    fn narrow<T: TryFromWeight>(self) -> Vec<T> {
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<W>() {
            // Same width: keep the allocation.
            let mut this = std::mem::ManuallyDrop::new(self);
            let (ptr, len, cap) = (this.as_mut_ptr(), this.len(), this.capacity());
            // SAFETY: T and W are the same type (checked by TypeId), so the pointer, length
            // and capacity describe a valid Vec<T> that we now own alone.
            return unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, cap) };
        }
        if self.len() < PARALLEL_EDGES {
            self.iter().map(|&w| T::from_weight(w.into())).collect()
        } else {
            chunked::map(self.len(), |e| T::from_weight(self[e].into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::EdgeList;
    use super::*;

    fn csr(offsets: &[u32], targets: &[u32], weights: &[i64]) -> Successors {
        Successors {
            offsets: offsets.to_vec(),
            targets: targets.to_vec(),
            weights: EdgeWeights::I64(weights.to_vec()),
        }
    }

    #[test]
    fn equals_the_edge_list_constructor() {
        let owners = vec![Player::Zero, Player::One, Player::Zero];
        let from_csr = Arena::from_successors(
            owners.clone(),
            csr(&[0, 2, 3, 4], &[2, 1, 1, 0], &[-1, 3, 0, 70_000]),
            None,
        )
        .unwrap();
        let mut edges = EdgeList::default();
        for (s, t, w) in [(0, 2, -1), (0, 1, 3), (1, 1, 0), (2, 0, 70_000)] {
            edges.push(s, t, w);
        }
        assert_eq!(from_csr, Arena::from_edges(owners, edges, None).unwrap());
        assert_eq!(from_csr.weight_width(), Width::I32);
    }

    #[test]
    fn rejects_what_from_edges_rejects() {
        let two = || vec![Player::Zero, Player::One];
        assert_eq!(
            Arena::from_successors(vec![], csr(&[0], &[], &[]), None),
            Err(ArenaError::Empty)
        );
        assert_eq!(
            Arena::from_successors(two(), csr(&[0, 1, 1], &[1], &[0]), None),
            Err(ArenaError::NoSuccessor(1))
        );
        assert!(matches!(
            Arena::from_successors(two(), csr(&[0, 1, 2], &[1, 2], &[0, 0]), None),
            Err(ArenaError::VertexOutOfRange {
                from: 1,
                bad: 2,
                ..
            })
        ));
        for bad in [
            csr(&[0, 2], &[0, 1], &[0, 0]),
            csr(&[1, 1, 2], &[0, 1], &[0, 0]),
            csr(&[0, 2, 1], &[0], &[0]),
            csr(&[0, 1, 2], &[0, 1], &[0]),
        ] {
            assert!(
                matches!(
                    Arena::from_successors(two(), bad.clone(), None),
                    Err(ArenaError::BadOffsets(_))
                ),
                "{bad:?}"
            );
        }
    }
}
