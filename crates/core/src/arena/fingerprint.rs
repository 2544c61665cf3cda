//! The fast check that an arena's predecessor side is the transpose of its successor side
//! ([`super::parts`]'s step 2 by default): both sides read in order, never at random, in
//! one pass ([`scan`]) that also checks their structure and takes the weights' range, so
//! that each array of a mapped file is read once.
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

/// The per-check random keys (odd).
#[derive(Clone, Copy)]
struct Keys([u64; 5]);

impl Keys {
    fn fresh() -> Keys {
        let state = RandomState::new();
        Keys(std::array::from_fn(|i| state.hash_one(i as u64) | 1))
    }

    /// Two independent 64-bit hashes of one tuple: the tuple's two words, each xored with
    /// a key of the lane, multiplied and folded (wyhash's mixing step). One multiplication
    /// per lane: a second round of folding per lane cost the load's pass a third more time
    /// (10^7 edges, one core) for no property the check relies on.
    ///
    /// `(s, t)` fill one word exactly; `(k, w)` do not fit one, so `k` enters through a
    /// multiple of an odd key: two pairs give the same word only where the key makes them
    /// (probability about 2^-63 per pair), never for every key. (A fixed mixing of the
    /// two, such as `w` rotated and xored with `k`, gives some pairs the same word whatever
    /// the keys: a file with 2^17 parallel edges could have matched sums with a wrong
    /// predecessor side.)
    #[inline(always)]
    fn hash(self, s: u32, t: u32, k: u32, w: i64) -> (u64, u64) {
        let st = (u64::from(s) << 32) | u64::from(t);
        let kw = (w as u64) ^ u64::from(k).wrapping_mul(self.0[4]);
        (
            fold(st ^ self.0[0], kw ^ self.0[1]),
            fold(st ^ self.0[2], kw ^ self.0[3]),
        )
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

/// What one pass over both sides found ([`scan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Scan {
    /// Whether both sides are well formed: offsets from 0 to `m` (the successors' strictly
    /// increasing, the predecessors' never decreasing), every id `< n`, every predecessor
    /// list ascending. When not, the other fields mean nothing.
    pub well_formed: bool,
    /// Whether the two sides' sums are equal: the transpose except with probability at
    /// most 2^-64 (module docs).
    pub same: bool,
    /// The least and the greatest successor weight, and 0 (the weights' width).
    pub range: (i64, i64),
}

/// One side's figures over a block of vertices.
#[derive(Clone, Copy)]
struct Side {
    ok: bool,
    sums: Sums,
    lo: i64,
    hi: i64,
}

impl Default for Side {
    fn default() -> Side {
        Side {
            ok: true,
            sums: Sums::default(),
            lo: 0,
            hi: 0,
        }
    }
}

impl Side {
    fn merge(self, other: Side) -> Side {
        Side {
            ok: self.ok && other.ok,
            sums: self.sums.merge(other.sums),
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// Both sides of an arena checked and fingerprinted in one pass, each array read once in
/// order ([`super::parts`]'s fast path): the structural checks of the CSR and the CSC
/// (what [`super::parts`] checks array by array, reported here only as a yes or no), the
/// sums of the module docs, and the weights' range. Where something is wrong the caller
/// runs the array-by-array checks, which name the first offending entry.
pub(super) fn scan<W: Copy + Into<i64> + Send + Sync>(
    (offsets, targets): (&[u32], &[VertexId]),
    weights: &[W],
    (pred_offsets, sources): (&[u32], &[VertexId]),
    pred_weights: &[W],
) -> Scan {
    let keys = Keys::fresh();
    let n = offsets.len() - 1;
    let m = targets.len();
    let ends_ok = |o: &[u32]| o.len() == n + 1 && o[0] == 0 && o[n] as usize == m;
    if !ends_ok(offsets) || !ends_ok(pred_offsets) || sources.len() != m {
        return Scan {
            well_formed: false,
            same: false,
            range: (0, 0),
        };
    }
    let successors = |b: usize| {
        let mut side = Side::default();
        for s in b * BLOCK..((b + 1) * BLOCK).min(n) {
            let (a, z) = (offsets[s] as usize, offsets[s + 1] as usize);
            if a >= z || z > m {
                side.ok = false;
                break;
            }
            let list = &targets[a..z];
            let repeats = occurrences(list);
            let mut bad = false;
            for (i, (&t, &w)) in list.iter().zip(&weights[a..z]).enumerate() {
                let w = w.into();
                bad |= t as usize >= n;
                side.lo = side.lo.min(w);
                side.hi = side.hi.max(w);
                let k = earlier(list, &repeats, i);
                side.sums.add(keys.hash(s as u32, t, k, w));
            }
            if bad {
                side.ok = false;
                break;
            }
        }
        side
    };
    let predecessors = |b: usize| {
        let mut side = Side::default();
        for t in b * BLOCK..((b + 1) * BLOCK).min(n) {
            let (a, z) = (pred_offsets[t] as usize, pred_offsets[t + 1] as usize);
            if a > z || z > m {
                side.ok = false;
                break;
            }
            let mut k = 0u32;
            let mut bad = false;
            // The previous source (none before the first: `u64::MAX` equals no id).
            let mut previous = u64::MAX;
            for (&s, &w) in sources[a..z].iter().zip(&pred_weights[a..z]) {
                bad |= s as usize >= n;
                k = if u64::from(s) == previous {
                    k + 1
                } else {
                    bad |= previous != u64::MAX && u64::from(s) < previous;
                    0
                };
                previous = u64::from(s);
                side.sums.add(keys.hash(s, t as u32, k, w.into()));
            }
            if bad {
                side.ok = false;
                break;
            }
        }
        side
    };
    let blocks = n.div_ceil(BLOCK);
    let (csr, csc) = if m < super::PARALLEL_EDGES {
        let all = |f: &dyn Fn(usize) -> Side| (0..blocks).map(f).fold(Side::default(), Side::merge);
        (all(&successors), all(&predecessors))
    } else {
        rayon::join(
            || {
                (0..blocks)
                    .into_par_iter()
                    .map(successors)
                    .reduce(Side::default, Side::merge)
            },
            || {
                (0..blocks)
                    .into_par_iter()
                    .map(predecessors)
                    .reduce(Side::default, Side::merge)
            },
        )
    };
    Scan {
        well_formed: csr.ok && csc.ok,
        same: csr.sums == csc.sums,
        range: (csr.lo, csr.hi),
    }
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
        // `k` and `w` never trade bits: pairs that a fixed mixing (w rotated by 17, xored
        // with k) made equal for every key differ here.
        assert_ne!(keys.hash(0, 1, 1 << 17, 0), keys.hash(0, 1, 0, 1));
        assert_ne!(keys.hash(0, 1, 1, 0), keys.hash(0, 1, 0, 1));
    }

    /// The scan answers "well formed" for a true transpose and "not" for each structural
    /// fault the array-by-array checks name; a changed weight keeps the structure but not
    /// the sums.
    #[test]
    fn the_scan_finds_every_structural_fault_and_a_changed_weight() {
        /// A game's arrays: offsets, targets, weights, then the predecessor side's (every
        /// array of four entries here).
        #[derive(Clone)]
        struct Sides([Vec<u32>; 2], Vec<i16>, [Vec<u32>; 2], Vec<i16>);
        impl Sides {
            fn scan(&self) -> Scan {
                let Sides([o, t], w, [po, s], pw) = self;
                scan((o, t), w, (po, s), pw)
            }
            /// These sides with array `which` (0 offsets, 1 targets, 2 predecessor
            /// offsets, 3 sources) set to `to`.
            fn with(&self, which: usize, to: [u32; 4]) -> Sides {
                let mut other = self.clone();
                let array = match which {
                    0 => &mut other.0[0],
                    1 => &mut other.0[1],
                    2 => &mut other.2[0],
                    _ => &mut other.2[1],
                };
                *array = to.to_vec();
                other
            }
        }
        // 0 -> 1 (5), 0 -> 1 (-3), 1 -> 0 (7), 2 -> 0 (1); predecessors: 0 <- 1, 2; 1 <- 0, 0.
        let good = Sides(
            [vec![0, 2, 3, 4], vec![1, 1, 0, 0]],
            vec![5, -3, 7, 1],
            [vec![0, 2, 4, 4], vec![1, 2, 0, 0]],
            vec![7, 1, 5, -3],
        );
        let expected = Scan {
            well_formed: true,
            same: true,
            range: (-3, 7),
        };
        assert_eq!(good.scan(), expected);
        for (what, which, to) in [
            ("a target out of range", 1, [1, 3, 0, 0]),
            ("a vertex without successors", 0, [0, 2, 2, 4]),
            ("the last successor offset", 0, [0, 2, 3, 3]),
            ("predecessor offsets decreasing", 2, [0, 3, 2, 4]),
            ("a source out of range", 3, [1, 2, 0, 4]),
            ("sources descending", 3, [2, 1, 0, 0]),
        ] {
            let scan = good.with(which, to).scan();
            assert!(!scan.well_formed, "{what}: {scan:?}");
        }
        let mut changed = good.clone();
        changed.3[3] = -4;
        let scan = changed.scan();
        assert!(scan.well_formed && !scan.same, "{scan:?}");
    }
}
