//! The parity → energy reduction of `FORMATS.md`, exactly:
//!
//! let `p_0 < p_1 < … < p_k` be the distinct priorities present and `c_j` the number of
//! vertices of priority `p_j`;
//! - `a_0 = 0` if `p_0` is even, else `1`;
//! - `a_i = 1 + Σ { c_j · a_j : j < i, p_j and p_i of different parity }` for `i >= 1`;
//!
//! every edge leaving a vertex of priority `p_i` weighs `+a_i` if `p_i` is even, `−a_i` if
//! odd; owners stay (owner 0 is player 0). Player 0 then wins the parity game from `v`
//! exactly when `credit(v)` is finite.
//!
//! All arithmetic is checked: an `a_i` above `i64::MAX`, or a bound
//! `M = Σ_v max(0, −weight leaving v)` that does not fit the solver's `u64` values, is a
//! [`ReductionOverflow`] naming the number of distinct priorities.
//!
//! The readers apply it to the **compressed** priorities ([`parity_arena`]): compression
//! ([`crate::parity::compress`]) keeps every play's winner and shrinks the weights, so the
//! credits are those of the reduction of the compressed game (for a game whose priorities
//! are already dense and alternate in parity, as model checkers write them, the same). When
//! the global compression leaves a reduction that does not fit, each strongly connected
//! component is compressed on its own and the reduction tried again; when that does not fit
//! either, the game keeps zero weights and is marked [`Reduction::TooLarge`]: only the
//! parity solver answers it.

use crate::arena::{Arena, ArenaError, EdgeList, Player};
use crate::parity::{Compressed, ParitySummary, ParityView, compress, compress_per_scc};

/// The reduced weights or their bound do not fit in 64 bits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the parity game has {priorities} distinct priorities: reduced to an energy game its \
     {what} does not fit in 64 bits; solve it as a parity game (--backend parity, or auto), \
     which gives winners and strategies but no credits"
)]
pub struct ReductionOverflow {
    /// Number of distinct priorities in the game.
    pub priorities: usize,
    /// What overflowed (`weight of priority 17`, `bound M`).
    pub what: String,
}

/// The weight `±a_i` of every distinct priority (ascending by priority), per the reduction.
/// Also checks that the bound `M` fits in a `u64` below ⊤ (`u64::MAX`).
pub fn reduce_parity(priorities: &[u64]) -> Result<Vec<(u64, i64)>, ReductionOverflow> {
    let mut sorted = priorities.to_vec();
    sorted.sort_unstable();
    // (priority, count), ascending.
    let mut classes: Vec<(u64, u64)> = Vec::new();
    for &p in &sorted {
        match classes.last_mut() {
            Some((q, count)) if *q == p => *count += 1,
            _ => classes.push((p, 1)),
        }
    }
    reduce_classes(&classes)
}

/// [`reduce_parity`] given the classes: `(priority, number of vertices)`, ascending by
/// priority, every count positive.
pub fn reduce_classes(classes: &[(u64, u64)]) -> Result<Vec<(u64, i64)>, ReductionOverflow> {
    let distinct = classes.len();
    let overflow = |what: String| ReductionOverflow {
        priorities: distinct,
        what,
    };

    // Running Σ c_j·a_j over the classes seen so far, split by parity of p_j; `None` once
    // it overflows (an error only if a later a_i needs it: the top class's sum is unused).
    let mut sum_by_parity: [Option<u64>; 2] = [Some(0), Some(0)];
    let mut bound: u64 = 0;
    let mut weights = Vec::with_capacity(distinct);
    for (i, &(p, count)) in classes.iter().enumerate() {
        let parity = (p % 2) as usize;
        let a = if i == 0 {
            parity as u64
        } else {
            sum_by_parity[1 - parity]
                .and_then(|sum| sum.checked_add(1))
                .filter(|&a| i64::try_from(a).is_ok())
                .ok_or_else(|| overflow(format!("weight of priority {p}")))?
        };
        let total = count.checked_mul(a);
        sum_by_parity[parity] = sum_by_parity[parity]
            .zip(total)
            .and_then(|(sum, t)| sum.checked_add(t));
        if parity == 1 {
            bound = total
                .and_then(|t| bound.checked_add(t))
                .filter(|&m| m < u64::MAX)
                .ok_or_else(|| overflow("bound M".to_string()))?;
        }
        let weight = if parity == 0 { a as i64 } else { -(a as i64) };
        weights.push((p, weight));
    }
    Ok(weights)
}

/// Whether a parity game's arena carries its energy reduction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reduction {
    /// The arena's weights are the reduction of the compressed priorities.
    Energy,
    /// The reduction does not fit in 64 bits even after compression: the arena's weights
    /// are all 0 and mean nothing; only the parity solver answers the game.
    TooLarge(ReductionOverflow),
}

/// The priorities of a parity game read from a `.gm` file (or JSON with priorities), kept so
/// that answers can be written back as `paritysol`, solved natively and certified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityInfo {
    /// The priority of each vertex, by id, as read.
    pub priorities: Vec<u64>,
    /// The weight `±a_i` given to each distinct compressed priority, ascending (empty when
    /// the reduction does not fit).
    pub weights_by_priority: Vec<(u64, i64)>,
    /// The compressed priorities the solvers use.
    pub compressed: Compressed,
    /// Whether the arena's weights are the energy reduction.
    pub reduction: Reduction,
}

impl ParityInfo {
    /// Whether the arena's weights are the energy reduction.
    pub fn reduction_fits(&self) -> bool {
        self.reduction == Reduction::Energy
    }

    /// How the game was prepared, for the answer's summary.
    pub fn summary(&self) -> ParitySummary {
        ParitySummary {
            priorities: self.compressed.input_distinct,
            compressed_priorities: self.compressed.distinct,
            per_scc: self.compressed.per_scc,
            reduction_fits: self.reduction_fits(),
        }
    }

    /// What the solvers need.
    pub fn view(&self) -> ParityView<'_> {
        ParityView {
            priorities: &self.compressed.priority,
            summary: self.summary(),
        }
    }
}

/// Builds a parity game's arena: compresses `priorities` (one per vertex), reduces the
/// compressed game to an energy game when that fits in 64 bits (globally compressed, else
/// per SCC) and gives every edge the weight of its source's class; otherwise keeps zero
/// weights and records [`Reduction::TooLarge`]. The weights in `edges` are overwritten.
pub fn parity_arena(
    owners: Vec<Player>,
    mut edges: EdgeList,
    names: Option<Vec<Option<Box<str>>>>,
    priorities: Vec<u64>,
) -> Result<(Arena, ParityInfo), ArenaError> {
    let plan = ParityPlan::new(priorities);
    for (weight, &source) in edges.weights.iter_mut().zip(&edges.sources) {
        *weight = plan.vertex_weight(source as usize);
    }
    let arena = Arena::from_edges(owners, edges, names)?;
    Ok(plan.finish(arena))
}

/// A parity game's reduction decided before its arena is built, so that readers can write
/// each edge's final weight as they lay the arena out: the priorities compressed globally
/// and, when that reduction fits, the weight of each compressed priority.
/// [`ParityPlan::finish`] completes the rare case that does not fit (per-SCC compression
/// needs the graph).
pub(crate) struct ParityPlan {
    priorities: Vec<u64>,
    compressed: Compressed,
    weights: Result<Vec<i64>, ReductionOverflow>,
}

impl ParityPlan {
    /// Compresses `priorities` (one per vertex, by id) and tries the global reduction.
    pub(crate) fn new(priorities: Vec<u64>) -> ParityPlan {
        let compressed = compress(&priorities);
        let weights = class_weights(&compressed);
        ParityPlan {
            priorities,
            compressed,
            weights,
        }
    }

    /// The weight of the edges leaving vertex `v`: 0 when the global reduction does not fit.
    #[inline]
    pub(crate) fn vertex_weight(&self, v: usize) -> i64 {
        match &self.weights {
            Ok(weights) => self
                .compressed
                .priority
                .get(v)
                .map_or(0, |&p| weights[p as usize]),
            Err(_) => 0,
        }
    }

    /// The largest weight magnitude (what the storage width must hold).
    pub(crate) fn widest(&self) -> u64 {
        self.weights.as_ref().map_or(0, |weights| {
            weights.iter().map(|w| w.unsigned_abs()).max().unwrap_or(0)
        })
    }

    /// The game's parity data, given its arena built with [`ParityPlan::vertex_weight`]:
    /// when the global reduction did not fit, each SCC is compressed on its own and the
    /// arena reweighted if that reduction fits, else kept with zero weights.
    pub(crate) fn finish(self, arena: Arena) -> (Arena, ParityInfo) {
        let ParityPlan {
            priorities,
            compressed,
            weights,
        } = self;
        if weights.is_ok() {
            return (arena, parity_info(priorities, compressed, weights));
        }
        let per_scc = compress_per_scc(&arena, &compressed);
        match class_weights(&per_scc) {
            Ok(weights) => {
                let arena =
                    arena.with_source_weights(|v| weights[per_scc.priority[v as usize] as usize]);
                (arena, parity_info(priorities, per_scc, Ok(weights)))
            }
            Err(overflow) => {
                // The solver gets whichever has fewer priorities.
                let best = if per_scc.distinct < compressed.distinct {
                    per_scc
                } else {
                    compressed
                };
                (arena, parity_info(priorities, best, Err(overflow)))
            }
        }
    }
}

/// The weight of each compressed priority (index = priority; absent ones 0).
fn class_weights(compressed: &Compressed) -> Result<Vec<i64>, ReductionOverflow> {
    let counts = compressed.counts();
    let classes: Vec<(u64, u64)> = counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(p, &c)| (p as u64, c))
        .collect();
    let table = reduce_classes(&classes)?;
    let mut weights = vec![0i64; counts.len()];
    for (p, w) in table {
        weights[p as usize] = w;
    }
    Ok(weights)
}

fn parity_info(
    priorities: Vec<u64>,
    compressed: Compressed,
    weights: Result<Vec<i64>, ReductionOverflow>,
) -> ParityInfo {
    let (weights_by_priority, reduction) = match weights {
        Ok(weights) => {
            let counts = compressed.counts();
            let table = weights
                .iter()
                .enumerate()
                .filter(|&(p, _)| counts[p] > 0)
                .map(|(p, &w)| (p as u64, w))
                .collect();
            (table, Reduction::Energy)
        }
        Err(overflow) => (Vec::new(), Reduction::TooLarge(overflow)),
    };
    ParityInfo {
        priorities,
        weights_by_priority,
        compressed,
        reduction,
    }
}

/// The weight of the edges leaving each vertex, given its priority and the table from
/// [`reduce_parity`] (which must contain every priority in `priorities`).
pub fn vertex_weights(priorities: &[u64], weights_by_priority: &[(u64, i64)]) -> Vec<i64> {
    priorities
        .iter()
        .map(|p| {
            let i = weights_by_priority
                .binary_search_by_key(p, |&(q, _)| q)
                .expect("weights_by_priority comes from reduce_parity over these priorities");
            weights_by_priority[i].1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_even_priority_gives_zero_weights() {
        assert_eq!(reduce_parity(&[0, 0, 0]).unwrap(), vec![(0, 0)]);
        assert_eq!(reduce_parity(&[4]).unwrap(), vec![(4, 0)]);
    }

    #[test]
    fn lowest_odd_priority_gets_minus_one() {
        assert_eq!(reduce_parity(&[1, 1]).unwrap(), vec![(1, -1)]);
    }

    #[test]
    fn weights_follow_the_formula() {
        // priorities 0 (x2), 1 (x3), 2 (x1), 5 (x1)
        // a0 = 0; a1 = 1 + 2*0 = 1; a2 = 1 + 3*1 = 4; a3 = 1 + (2*0 + 1*4) = 5
        let w = reduce_parity(&[0, 1, 0, 1, 2, 1, 5]).unwrap();
        assert_eq!(w, vec![(0, 0), (1, -1), (2, 4), (5, -5)]);
        assert_eq!(vertex_weights(&[5, 0, 2], &w), vec![-5, 0, 4]);
    }

    #[test]
    fn overflow_names_the_priority_count() {
        // Alternating parities with large classes grow a_i geometrically.
        let mut priorities = Vec::new();
        for p in 0..80u64 {
            priorities.extend(std::iter::repeat_n(p, 3));
        }
        let err = reduce_parity(&priorities).unwrap_err();
        assert_eq!(err.priorities, 80);
        assert!(err.to_string().contains("80 distinct priorities"), "{err}");
    }
}
