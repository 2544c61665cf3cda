//! Building an [`Arena`] from an edge list: one of the two constructors (the other is
//! [`Arena::from_successors`]), where the invariants are established (counting sort into
//! CSR and CSC, every vertex has a successor, ids in range).

use super::weights::{Weights, Width};
use super::{Arena, Player, VertexId};

/// Edges as parallel arrays, in any order. Readers append to it while parsing.
#[derive(Debug, Default, Clone)]
pub struct EdgeList {
    /// Source vertex of each edge.
    pub sources: Vec<VertexId>,
    /// Target vertex of each edge.
    pub targets: Vec<VertexId>,
    /// Weight of each edge.
    pub weights: Vec<i64>,
}

impl EdgeList {
    /// An empty list with room for `m` edges.
    pub fn with_capacity(m: usize) -> EdgeList {
        EdgeList {
            sources: Vec::with_capacity(m),
            targets: Vec::with_capacity(m),
            weights: Vec::with_capacity(m),
        }
    }

    /// Appends the edge `source → target` of weight `weight`.
    #[inline]
    pub fn push(&mut self, source: VertexId, target: VertexId, weight: i64) {
        self.sources.push(source);
        self.targets.push(target);
        self.weights.push(weight);
    }

    /// Number of edges.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// Why an edge list does not make an arena. Readers check these themselves first where they
/// can point at a line and column; this is the last line of defence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArenaError {
    /// The arena has no vertex at all.
    #[error("the arena has no vertices")]
    Empty,
    /// More vertices than `u32` ids allow.
    #[error("{0} vertices is more than this build supports (at most {max})", max = u32::MAX - 1)]
    TooManyVertices(usize),
    /// More edges than `u32` edge indices allow.
    #[error("{0} edges is more than this build supports (at most {max})", max = u32::MAX - 1)]
    TooManyEdges(usize),
    /// An edge names a vertex that does not exist.
    #[error("edge {from} -> {to}: vertex {bad} does not exist (the arena has {n} vertices)")]
    VertexOutOfRange {
        /// The edge's source.
        from: u64,
        /// The edge's target.
        to: u64,
        /// The endpoint that does not exist.
        bad: u64,
        /// The number of vertices.
        n: usize,
    },
    /// A vertex has no outgoing edge, so plays from it would end.
    #[error("vertex {0} has no successor: every vertex needs at least one outgoing edge")]
    NoSuccessor(VertexId),
    /// The names array does not have one entry per vertex.
    #[error("{names} names given for {n} vertices")]
    NameCount {
        /// Names given.
        names: usize,
        /// Vertices.
        n: usize,
    },
    /// CSR offsets that do not describe successor lists ([`Arena::from_successors`]).
    #[error("the successor offsets are inconsistent: {0}")]
    BadOffsets(String),
}

impl Arena {
    /// Builds an arena of `owners.len()` vertices from `edges` (any order; the order of a
    /// vertex's successors is kept). `names`, if given, has one entry per vertex.
    pub fn from_edges(
        owners: Vec<Player>,
        edges: EdgeList,
        names: Option<Vec<Option<Box<str>>>>,
    ) -> Result<Arena, ArenaError> {
        let n = owners.len();
        check_counts(n, edges.len(), names.as_deref())?;
        for (&s, &t) in edges.sources.iter().zip(&edges.targets) {
            if s as usize >= n || t as usize >= n {
                let bad = if s as usize >= n { s } else { t };
                return Err(ArenaError::VertexOutOfRange {
                    from: s as u64,
                    to: t as u64,
                    bad: bad as u64,
                    n,
                });
            }
        }
        let (succ_offsets, succ_targets, succ_weights) =
            group_by(n, &edges.sources, edges.targets, edges.weights);
        // Predecessors from the successor lists (in source order, as `from_successors`
        // gives them), so that an arena does not depend on the order of the file's lines.
        let sources: Vec<VertexId> = (0..n)
            .flat_map(|v| {
                let count = succ_offsets[v + 1] - succ_offsets[v];
                std::iter::repeat_n(v as VertexId, count as usize)
            })
            .collect();
        let (pred_offsets, pred_sources, pred_weights) =
            group_by(n, &succ_targets, sources, succ_weights.to_vec());
        if let Some(v) = (0..n).find(|&v| succ_offsets[v] == succ_offsets[v + 1]) {
            return Err(ArenaError::NoSuccessor(v as VertexId));
        }
        let width = Width::of(&succ_weights);
        let names = kept_names(names);
        Ok(Arena {
            owner: owners.into(),
            succ_offsets: succ_offsets.into(),
            succ_targets: succ_targets.into(),
            succ_weights: Weights::at_width(succ_weights, width),
            pred_offsets: pred_offsets.into(),
            pred_sources: pred_sources.into(),
            pred_weights: Weights::at_width(pred_weights, width),
            names,
        })
    }
}

/// Offsets, values and weights grouped by key.
type Grouped = (Box<[u32]>, Box<[VertexId]>, Box<[i64]>);

/// At least one vertex, vertex and edge counts (`n`, `m`) that fit `u32`, and one name
/// per vertex where there are names.
pub(super) fn check_counts(
    n: usize,
    m: usize,
    names: Option<&[Option<Box<str>>]>,
) -> Result<(), ArenaError> {
    if n == 0 {
        return Err(ArenaError::Empty);
    }
    if n >= u32::MAX as usize {
        return Err(ArenaError::TooManyVertices(n));
    }
    if m >= u32::MAX as usize {
        return Err(ArenaError::TooManyEdges(m));
    }
    match names {
        Some(names) if names.len() != n => Err(ArenaError::NameCount {
            names: names.len(),
            n,
        }),
        _ => Ok(()),
    }
}

/// The names an arena keeps: none where no vertex has one.
pub(super) fn kept_names(names: Option<Vec<Option<Box<str>>>>) -> Option<Box<[Option<Box<str>>]>> {
    names
        .filter(|names| names.iter().any(Option::is_some))
        .map(Vec::into_boxed_slice)
}

/// Counting sort of `(key, value, weight)` triples by `key` (stable): returns offsets
/// (`n + 1` entries), values and weights grouped by key. Already-sorted input (the common
/// case for successors: files list vertices in order) keeps the vectors it was given.
fn group_by(n: usize, keys: &[VertexId], values: Vec<VertexId>, weights: Vec<i64>) -> Grouped {
    let mut offsets = vec![0u32; n + 1];
    for &k in keys {
        offsets[k as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    if keys.windows(2).all(|w| w[0] <= w[1]) {
        return (
            offsets.into_boxed_slice(),
            values.into_boxed_slice(),
            weights.into_boxed_slice(),
        );
    }
    let mut next: Vec<u32> = offsets[..n].to_vec();
    let mut out_values = vec![0 as VertexId; keys.len()];
    let mut out_weights = vec![0i64; keys.len()];
    for ((&k, &v), &w) in keys.iter().zip(&values).zip(&weights) {
        let slot = &mut next[k as usize];
        out_values[*slot as usize] = v;
        out_weights[*slot as usize] = w;
        *slot += 1;
    }
    (
        offsets.into_boxed_slice(),
        out_values.into_boxed_slice(),
        out_weights.into_boxed_slice(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(list: &[(u32, u32, i64)]) -> EdgeList {
        let mut e = EdgeList::default();
        for &(s, t, w) in list {
            e.push(s, t, w);
        }
        e
    }

    #[test]
    fn csr_and_csc_agree_and_keep_successor_order() {
        let a = Arena::from_edges(
            vec![Player::Zero, Player::One, Player::Zero],
            edges(&[(2, 0, 5), (0, 2, -1), (0, 1, 3), (1, 1, 0)]),
            None,
        )
        .unwrap();
        assert_eq!(a.successors(0).collect::<Vec<_>>(), vec![(2, -1), (1, 3)]);
        assert_eq!(a.successors(2).collect::<Vec<_>>(), vec![(0, 5)]);
        assert_eq!(a.predecessors(1).collect::<Vec<_>>(), vec![(0, 3), (1, 0)]);
        assert_eq!(a.predecessors(0).collect::<Vec<_>>(), vec![(2, 5)]);
        assert_eq!(a.succ_offsets().len(), 4);
        assert_eq!(a.edge_count(), 4);
    }

    #[test]
    fn rejects_invalid_graphs() {
        let two = || vec![Player::Zero, Player::One];
        assert_eq!(
            Arena::from_edges(vec![], EdgeList::default(), None),
            Err(ArenaError::Empty)
        );
        assert_eq!(
            Arena::from_edges(two(), edges(&[(0, 1, 0)]), None),
            Err(ArenaError::NoSuccessor(1))
        );
        assert!(matches!(
            Arena::from_edges(two(), edges(&[(0, 2, 0), (1, 0, 0)]), None),
            Err(ArenaError::VertexOutOfRange { bad: 2, .. })
        ));
        assert!(matches!(
            Arena::from_edges(two(), edges(&[(0, 1, 0), (1, 0, 0)]), Some(vec![None])),
            Err(ArenaError::NameCount { .. })
        ));
    }
}
