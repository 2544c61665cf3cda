//! The fast check that an arena's predecessor side is the transpose of its successor side
//! ([`super::parts`]'s step 2 by default): both sides read in order, never at random.
//!
//! Each edge is the tuple `(s, t, k, w)`: source, target, `k` (earlier edges from `s` to `t`:
//! counted in successor order on the CSR side, as the place in the run of source `s` in
//! `t`'s sorted predecessor list on the CSC side) and weight. The tuples of a stable
//! transpose are exactly those of the successor lists, and a CSC whose sources ascend in
//! every list (checked before) is fixed by its tuples: slot `p + k` of `t`'s list holds
//! `(s, w)`. So the two sides are equal exactly when their multisets of tuples are.
//!
//! The multisets are compared through two sums, modulo 2^64, of a keyed hash per tuple,
//! with four 64-bit keys drawn afresh for every check from the standard library's
//! randomly seeded hasher: the same multiset always gives the same sums; two different ones
//! give the same two sums only if the random keys happen to cancel their difference, which
//! for hashes that behave as random functions has probability at most 2^-64 (a tuple
//! counted `c` times more on one side vanishes from a sum with probability
//! `gcd(c, 2^64) / 2^64 ≤ 2^-32` per sum, `c < 2^32`). The keys are secret to the process, so
//! a file cannot be crafted against them. The check is thus probabilistic where
//! [`super::parts`]'s exact proof is not; `EGSOLVE_EGB_CHECK=exact` selects the proof.
//! When the sums differ, the exact check runs to name the first wrong edge, so errors are
//! the same either way.

use std::hash::{BuildHasher, RandomState};

use rayon::prelude::*;

use super::VertexId;
use super::repeats::{earlier, occurrences};

/// Vertices per parallel task.
const BLOCK: usize = 1 << 12;

/// The per-check random keys.
#[derive(Clone, Copy)]
struct Keys([u64; 4]);

impl Keys {
    fn fresh() -> Keys {
        let state = RandomState::new();
        Keys(std::array::from_fn(|i| state.hash_one(i as u64) | 1))
    }

    /// Two independent 64-bit hashes of one tuple (multiply-fold mixing of the keyed
    /// words, as in wyhash).
    #[inline(always)]
    fn hash(self, s: u32, t: u32, k: u32, w: i64) -> (u64, u64) {
        let st = (u64::from(s) << 32) | u64::from(t);
        let kw = (w as u64).rotate_left(17) ^ u64::from(k);
        let a = fold(st ^ self.0[0], kw ^ self.0[1]);
        let b = fold(st ^ self.0[2], kw ^ self.0[3]);
        (fold(a, self.0[3] ^ st), fold(b, self.0[0] ^ kw))
    }
}

/// The high and low halves of the 128-bit product, xored.
#[inline(always)]
fn fold(x: u64, y: u64) -> u64 {
    let p = u128::from(x) * u128::from(y);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Sums of two hash lanes.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Sums(u64, u64);

impl Sums {
    #[inline(always)]
    fn add(&mut self, (a, b): (u64, u64)) {
        self.0 = self.0.wrapping_add(a);
        self.1 = self.1.wrapping_add(b);
    }

    fn merge(self, other: Sums) -> Sums {
        Sums(self.0.wrapping_add(other.0), self.1.wrapping_add(other.1))
    }
}

/// Whether the CSC (offsets, sources ascending within each list, weights) holds the same
/// tuples as the CSR (module docs): `true` means the transpose except with probability at
/// most 2^-64; `false` means certainly not.
pub(super) fn same_edges<W: Copy + Into<i64> + Send + Sync>(
    (offsets, targets): (&[u32], &[VertexId]),
    weights: &[W],
    (pred_offsets, sources): (&[u32], &[VertexId]),
    pred_weights: &[W],
) -> bool {
    let keys = Keys::fresh();
    let n = offsets.len() - 1;
    let successors = |b: usize| {
        let mut sums = Sums::default();
        for s in b * BLOCK..((b + 1) * BLOCK).min(n) {
            let edges = offsets[s] as usize..offsets[s + 1] as usize;
            let list = &targets[edges.clone()];
            let repeats = occurrences(list);
            for (i, e) in edges.enumerate() {
                let k = earlier(list, &repeats, i);
                sums.add(keys.hash(s as u32, list[i], k, weights[e].into()));
            }
        }
        sums
    };
    let predecessors = |b: usize| {
        let mut sums = Sums::default();
        for t in b * BLOCK..((b + 1) * BLOCK).min(n) {
            let slots = pred_offsets[t] as usize..pred_offsets[t + 1] as usize;
            let mut k = 0u32;
            for i in slots.clone() {
                k = if i > slots.start && sources[i] == sources[i - 1] {
                    k + 1
                } else {
                    0
                };
                sums.add(keys.hash(sources[i], t as u32, k, pred_weights[i].into()));
            }
        }
        sums
    };
    let blocks = n.div_ceil(BLOCK);
    let (csr, csc) = if targets.len() < super::PARALLEL_EDGES {
        let all = |f: &dyn Fn(usize) -> Sums| (0..blocks).map(f).fold(Sums::default(), Sums::merge);
        (all(&successors), all(&predecessors))
    } else {
        rayon::join(
            || {
                (0..blocks)
                    .into_par_iter()
                    .map(successors)
                    .reduce(Sums::default, Sums::merge)
            },
            || {
                (0..blocks)
                    .into_par_iter()
                    .map(predecessors)
                    .reduce(Sums::default, Sums::merge)
            },
        )
    };
    csr == csc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_multisets_in_any_order_give_equal_sums_and_a_changed_tuple_does_not() {
        let keys = Keys::fresh();
        let tuples = [
            (0u32, 1u32, 0u32, 5i64),
            (0, 1, 1, -3),
            (2, 0, 0, 7),
            (3, 0, 0, 1),
        ];
        let sum = |ts: &[(u32, u32, u32, i64)]| {
            let mut s = Sums::default();
            for &(a, b, c, d) in ts {
                s.add(keys.hash(a, b, c, d));
            }
            s
        };
        let mut reversed = tuples;
        reversed.reverse();
        assert_eq!(sum(&tuples), sum(&reversed));
        for i in 0..tuples.len() {
            for change in 0..4 {
                let mut other = tuples;
                let t = &mut other[i];
                match change {
                    0 => t.0 += 1,
                    1 => t.1 += 1,
                    2 => t.2 += 1,
                    _ => t.3 -= 1,
                }
                assert_ne!(sum(&tuples), sum(&other), "tuple {i}, part {change}");
            }
        }
        // Two weights of parallel edges swapped: their k no longer matches.
        let swapped = [
            (0u32, 1u32, 0u32, -3i64),
            (0, 1, 1, 5),
            (2, 0, 0, 7),
            (3, 0, 0, 1),
        ];
        assert_ne!(sum(&tuples), sum(&swapped));
    }
}
