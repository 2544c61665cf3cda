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
//! Counting `k` on the successor side costs a scan of each list's earlier entries, so the
//! pass takes `k = 0` there and mends afterwards only the lists of the sources that the
//! predecessor side shows in runs ([`repeats_corrected`] says why nothing escapes this).
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
use super::repeats::occurrences;
use crate::solve::chunked;

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

    #[inline(always)]
    fn take(&mut self, (a, b): (u64, u64)) {
        self.0 = self.0.wrapping_sub(a);
        self.1 = self.1.wrapping_sub(b);
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
struct Side {
    ok: bool,
    sums: Sums,
    lo: i64,
    hi: i64,
    /// Predecessor side: the sources of its runs (an entry per run of two or more).
    repeated: Vec<VertexId>,
}

impl Default for Side {
    fn default() -> Side {
        Side {
            ok: true,
            sums: Sums::default(),
            lo: 0,
            hi: 0,
            repeated: Vec::new(),
        }
    }
}

impl Side {
    /// A block whose offsets are wrong: nothing else of it is read.
    fn failed() -> Side {
        Side {
            ok: false,
            ..Side::default()
        }
    }

    fn merge(mut self, mut other: Side) -> Side {
        if self.repeated.len() < other.repeated.len() {
            std::mem::swap(&mut self.repeated, &mut other.repeated);
        }
        self.repeated.append(&mut other.repeated);
        Side {
            ok: self.ok && other.ok,
            sums: self.sums.merge(other.sums),
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            repeated: self.repeated,
        }
    }
}

/// Whether each offset is in relation `order` to the next (one vectorisable fold, no early
/// exit: a well-formed arena is read whole anyway).
#[inline(always)]
fn increasing(offsets: &[u32], order: impl Fn(u32, u32) -> bool) -> bool {
    offsets
        .iter()
        .zip(&offsets[1..])
        .fold(true, |ok, (&a, &z)| ok & order(a, z))
}

/// Whether every id is below `n` (a vectorisable maximum).
#[inline(always)]
fn below(ids: &[VertexId], n: usize) -> bool {
    (ids.iter().fold(0, |most: VertexId, &id| most.max(id)) as usize) < n
}

/// The least and the greatest of `weights`, and 0 (a vectorisable fold).
#[inline(always)]
fn range<W: Copy + Into<i64>>(weights: &[W]) -> (i64, i64) {
    weights.iter().fold((0, 0), |(lo, hi), &w| {
        let w = w.into();
        (lo.min(w), hi.max(w))
    })
}

/// Entry `i`'s earlier equals in a short list (at most [`super::repeats::SHORT_LIST`]
/// entries): a count over the entries before it.
#[inline(always)]
fn earlier_in_short(list: &[VertexId], i: usize) -> u32 {
    list[..i].iter().map(|&x| u32::from(x == list[i])).sum()
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
        let (first, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
        let offsets = &offsets[first..=last];
        // Strictly increasing offsets (so no list is empty) ending within the edges: then
        // the block's edges are one range, checked as a whole before any list is read.
        if !increasing(offsets, |a, z| a < z) || offsets[offsets.len() - 1] as usize > m {
            return Side::failed();
        }
        let edges = offsets[0] as usize..offsets[offsets.len() - 1] as usize;
        let (block_targets, block_weights) = (&targets[edges.clone()], &weights[edges.clone()]);
        let (lo, hi) = range(block_weights);
        let mut side = Side {
            ok: below(block_targets, n),
            lo,
            hi,
            ..Side::default()
        };
        for (s, ends) in (first..).zip(offsets.windows(2)) {
            let (a, z) = (
                ends[0] as usize - edges.start,
                ends[1] as usize - edges.start,
            );
            // `k` taken as 0 here; [`repeats_corrected`] mends the lists with repeats.
            for (&t, &w) in block_targets[a..z].iter().zip(&block_weights[a..z]) {
                side.sums.add(keys.hash(s as u32, t, 0, w.into()));
            }
        }
        side
    };
    let predecessors = |b: usize| {
        let (first, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
        let offsets = &pred_offsets[first..=last];
        if !increasing(offsets, |a, z| a <= z) || offsets[offsets.len() - 1] as usize > m {
            return Side::failed();
        }
        let edges = offsets[0] as usize..offsets[offsets.len() - 1] as usize;
        let (block_sources, block_weights) =
            (&sources[edges.clone()], &pred_weights[edges.clone()]);
        let mut side = Side {
            ok: below(block_sources, n),
            ..Side::default()
        };
        let mut descending = false;
        for (t, ends) in (first..).zip(offsets.windows(2)) {
            let (a, z) = (
                ends[0] as usize - edges.start,
                ends[1] as usize - edges.start,
            );
            // `k` counts the sources equal to the one before; a list's first entry has
            // none before it (its `previous` is itself, and `k` starts one below 0).
            let Some(&head) = block_sources[a..z].first() else {
                continue;
            };
            let mut previous = head;
            let mut k = u32::MAX;
            for (&s, &w) in block_sources[a..z].iter().zip(&block_weights[a..z]) {
                descending |= s < previous;
                k = if s == previous { k.wrapping_add(1) } else { 0 };
                previous = s;
                side.sums.add(keys.hash(s, t as u32, k, w.into()));
                if k == 1 {
                    side.repeated.push(s);
                }
            }
        }
        side.ok &= !descending;
        side
    };
    let blocks = n.div_ceil(BLOCK);
    let (csr, csc) = if m < super::PARALLEL_EDGES {
        let all = |f: &dyn Fn(usize) -> Side| (0..blocks).map(f).fold(Side::default(), Side::merge);
        (all(&successors), all(&predecessors))
    } else {
        let all = |f: &(dyn Fn(usize) -> Side + Sync)| {
            chunked::fold(
                blocks,
                Side::default,
                |side, b| side.merge(f(b)),
                Side::merge,
            )
        };
        chunked::join(|| all(&successors), || all(&predecessors))
    };
    let well_formed = csr.ok && csc.ok;
    let csr_sums = if well_formed {
        repeats_corrected(keys, (offsets, targets), weights, csc.repeated, csr.sums)
    } else {
        csr.sums
    };
    Scan {
        well_formed,
        same: csr_sums == csc.sums,
        range: (csr.lo, csr.hi),
    }
}

/// The successor side's sums mended where its lists repeat a target: [`scan`] hashed every
/// successor edge with `k = 0`, its true `k` except at a repeat. For each source that the
/// predecessor side shows in a run (`repeated`: ids already checked `< n`), each repeat's
/// hash with `k = 0` is taken out of `sums` and its hash with its true `k` put in.
///
/// Why a repeat at another source cannot hide: let `R` be the sources in runs. Outside `R`,
/// a source appears at most once in each predecessor list, so the predecessor side holds at
/// most one tuple per `(s, t)` for `s ∉ R`. If the mended sums equal the predecessor side's
/// (equal multisets, module docs), the successor tuples of a source `s ∉ R` therefore have
/// distinct targets: its list repeats none, every `k` taken as 0 was 0, and the two sides'
/// true tuples are equal.
fn repeats_corrected<W: Copy + Into<i64> + Send + Sync>(
    keys: Keys,
    (offsets, targets): (&[u32], &[VertexId]),
    weights: &[W],
    mut repeated: Vec<VertexId>,
    sums: Sums,
) -> Sums {
    if repeated.is_empty() {
        return sums;
    }
    repeated.par_sort_unstable();
    repeated.dedup();
    let mend = |s: &VertexId| {
        let (a, z) = (
            offsets[*s as usize] as usize,
            offsets[*s as usize + 1] as usize,
        );
        let list = &targets[a..z];
        let repeats = occurrences(list);
        let mut change = Sums::default();
        for (i, (&t, &w)) in list.iter().zip(&weights[a..z]).enumerate() {
            let k = match &repeats {
                Some(r) => r[i],
                None => earlier_in_short(list, i),
            };
            if k > 0 {
                let w = w.into();
                change.add(keys.hash(*s, t, k, w));
                change.take(keys.hash(*s, t, 0, w));
            }
        }
        change
    };
    let change = if repeated.len() < 1 << 10 {
        repeated.iter().map(mend).fold(Sums::default(), Sums::merge)
    } else {
        chunked::fold(
            repeated.len(),
            Sums::default,
            |sums, i| sums.merge(mend(&repeated[i])),
            Sums::merge,
        )
    };
    sums.merge(change)
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
        // A repeated target that the predecessor side does not show as a run: 0 -> 1 twice;
        // predecessors 1 <- 0 and 2 <- 0 (the right counts and ranges, the wrong target).
        let hidden = Sides(
            [vec![0, 2, 3, 4], vec![1, 1, 0, 0]],
            vec![5, 5, 7, 1],
            [vec![0, 2, 3, 4], vec![1, 2, 0, 0]],
            vec![7, 1, 5, 5],
        );
        let scan = hidden.scan();
        assert!(scan.well_formed && !scan.same, "{scan:?}");
        // The run shown, with its weights in the successors' order and swapped.
        let shown = Sides(
            [vec![0, 2, 3, 4], vec![1, 1, 0, 0]],
            vec![5, -3, 7, 1],
            [vec![0, 2, 4, 4], vec![1, 2, 0, 0]],
            vec![7, 1, 5, -3],
        );
        assert!(shown.scan().same);
        let mut swapped = shown.clone();
        swapped.3.swap(2, 3);
        let scan = swapped.scan();
        assert!(scan.well_formed && !scan.same, "{scan:?}");
        let mut changed = good.clone();
        changed.3[3] = -4;
        let scan = changed.scan();
        assert!(scan.well_formed && !scan.same, "{scan:?}");
    }
}
