//! The third constructor, [`Arena::from_parts`]: an arena from all of its arrays at once —
//! successors (CSR) *and* predecessors (CSC) — as a binary file holds them, typically
//! borrowed from a memory map ([`super::storage`]). Nothing is rebuilt; instead every
//! invariant of the module docs is checked, each array in one parallel pass, so that a
//! mapped arena is valid by construction exactly like a built one.
//!
//! The predecessor side must be *exactly* the stable transpose of the successor side (the
//! one [`Arena::from_successors`] would build), which is checked soundly, without
//! building it, in one parallel pass over the successor lists:
//! 1. the CSC offsets run from 0 to `m` without decreasing, sources are `< n`, and each
//!    vertex's sources are in ascending order;
//! 2. each successor edge `e = s → t` of weight `w`, the `k`-th edge of `s` to `t` (parallel
//!    edges counted in successor order), is looked up at slot `p + k` of `t`'s predecessor
//!    list, where `p` is where the run of source `s` starts in that (sorted) list; the slot
//!    must lie in `t`'s list and hold source `s` and weight `w`.
//!
//! Step 2 maps the `m` edges to `m` slots injectively: edges to different targets land in
//! disjoint lists, edges from different sources on slots holding different sources, and
//! parallel edges on different `k`. An injective map between two sets of `m` elements is a
//! bijection, so every slot is the image of exactly one edge, with the edge's source and
//! weight: the predecessor lists hold exactly the edges, in ascending source order (step 1)
//! and parallel edges in successor order (`p + k`) — the stable transpose, no more and no
//! less. The pass reads the CSC at random (a binary search per edge in its target's list),
//! which is what it costs instead of rebuilding the transpose (a radix sort through two
//! scratch copies of every edge). By default step 2 is instead decided by a random-keyed
//! fingerprint of both sides read in order ([`super::fingerprint`], wrong with probability
//! at most 2^-64), in one pass with step 1, the successor checks and the weights' range,
//! each array read once; only where that pass finds something wrong do the checks run
//! array by array (and the proof), to name the first wrong entry.
//! `EGSOLVE_EGB_CHECK=exact` ([`TransposeCheck`]) selects them and the proof.

use super::fingerprint;
use super::repeats::{earlier, occurrences};
use super::storage::Array;
use super::weights::Weights;
use super::{Arena, Player, VertexId, first_index};

/// All of an arena's arrays, as a file stores them (not yet checked).
pub(crate) struct Parts {
    /// Owner per vertex (`n` of them; checked where they were made).
    pub owners: Array<Player>,
    /// CSR offsets, `n + 1`.
    pub succ_offsets: Array<u32>,
    /// CSR targets, `m`.
    pub succ_targets: Array<VertexId>,
    /// CSR weights, `m`.
    pub succ_weights: Weights,
    /// CSC offsets, `n + 1`.
    pub pred_offsets: Array<u32>,
    /// CSC sources, `m`.
    pub pred_sources: Array<VertexId>,
    /// CSC weights, `m`, at the width of the CSR weights.
    pub pred_weights: Weights,
    /// Names, one per vertex, if any.
    pub names: Option<Vec<Option<Box<str>>>>,
}

/// Which array an [`Invalid`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The counts and lengths of the arrays (index 0).
    Counts,
    /// CSR offsets.
    SuccOffsets,
    /// CSR targets.
    SuccTargets,
    /// CSC offsets.
    PredOffsets,
    /// CSC sources.
    PredSources,
    /// CSC weights.
    PredWeights,
}

/// The first entry found wrong: which array, which index in it, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub part: Part,
    pub index: usize,
    pub problem: String,
}

fn invalid<T>(part: Part, index: usize, problem: String) -> Result<T, Invalid> {
    Err(Invalid {
        part,
        index,
        problem,
    })
}

impl Arena {
    /// Checks `parts` against every invariant of an arena (module docs) and makes the arena
    /// of them, keeping each array where it is (shared arrays stay shared; weights stored
    /// wider than they need are narrowed into a copy). The first problem found, in the
    /// order of the module docs and in index order within an array, is the error.
    pub(crate) fn from_parts(parts: Parts) -> Result<Arena, Invalid> {
        let Parts {
            owners,
            succ_offsets,
            succ_targets,
            succ_weights,
            pred_offsets,
            pred_sources,
            pred_weights,
            names,
        } = parts;
        let n = owners.len();
        let m = succ_targets.len();
        let counts = |problem: String| invalid(Part::Counts, 0, problem);
        if n == 0 || n >= u32::MAX as usize || m >= u32::MAX as usize {
            return counts(format!(
                "{n} vertices and {m} edges, expected 1 to {} of each (at least 1 vertex)",
                u32::MAX - 1
            ));
        }
        if succ_offsets.len() != n + 1 || pred_offsets.len() != n + 1 {
            return counts(format!(
                "{} successor and {} predecessor offsets for {n} vertices",
                succ_offsets.len(),
                pred_offsets.len()
            ));
        }
        if pred_sources.len() != m
            || succ_weights.view().len() != m
            || pred_weights.view().len() != m
        {
            return counts(format!(
                "{} predecessors, {} and {} weights for {m} edges",
                pred_sources.len(),
                succ_weights.view().len(),
                pred_weights.view().len()
            ));
        }
        if succ_weights.width() != pred_weights.width() {
            return counts("the two directions' weights have different widths".into());
        }
        if let Some(names) = &names {
            if names.len() != n {
                return counts(format!("{} names for {n} vertices", names.len()));
            }
        }
        let clock = std::time::Instant::now();
        let phase = |what: &str| {
            tracing::debug!(
                phase = what,
                ms = clock.elapsed().as_secs_f64() * 1e3,
                "arena from parts"
            );
        };
        let csr = (&succ_offsets[..], &succ_targets[..]);
        let csc = (&pred_offsets[..], &pred_sources[..]);
        // The default: one pass over both sides (structure, fingerprint, weights' range);
        // only where it finds something wrong, or under `EGSOLVE_EGB_CHECK=exact`, the
        // array-by-array checks and the exact proof, which name the first wrong entry.
        let scan = match TransposeCheck::from_env() {
            TransposeCheck::Exact => None,
            TransposeCheck::Fingerprint => Some(match (&succ_weights, &pred_weights) {
                (Weights::I16(s), Weights::I16(p)) => fingerprint::scan(csr, s, csc, p),
                (Weights::I32(s), Weights::I32(p)) => fingerprint::scan(csr, s, csc, p),
                (Weights::I64(s), Weights::I64(p)) => fingerprint::scan(csr, s, csc, p),
                _ => unreachable!("widths compared above"),
            }),
        };
        phase("both sides scanned");
        let range = match scan {
            Some(scan) if scan.well_formed && scan.same => Some(scan.range),
            _ => {
                check_each_array(csr, &succ_weights, csc, &pred_weights)?;
                phase("transpose proved");
                None
            }
        };
        let narrowest = |weights: Weights| match range {
            Some((lo, hi)) => weights.narrowed_to(lo, hi),
            None => weights.narrowest(),
        };
        let names = names
            .filter(|names| names.iter().any(Option::is_some))
            .map(Vec::into_boxed_slice);
        let arena = Arena {
            owner: owners,
            succ_offsets,
            succ_targets,
            succ_weights: narrowest(succ_weights),
            pred_offsets,
            pred_sources,
            pred_weights: narrowest(pred_weights),
            names,
        };
        phase("weights' width checked");
        Ok(arena)
    }
}

/// CSR offsets from 0 to `m`, strictly increasing (every vertex has a successor).
pub(crate) fn check_successor_offsets(offsets: &[u32], m: usize) -> Result<(), Invalid> {
    let n = offsets.len() - 1;
    if offsets[0] != 0 {
        return invalid(
            Part::SuccOffsets,
            0,
            format!("the first successor offset is {}, expected 0", offsets[0]),
        );
    }
    if let Some(v) = first_index(n, |v| offsets[v] >= offsets[v + 1]) {
        let (a, b) = (offsets[v], offsets[v + 1]);
        let problem = if a == b {
            format!(
                "vertex {v} has no successor (its offsets are both {a}): every vertex needs an \
                 outgoing edge"
            )
        } else {
            format!(
                "the successor offset of vertex {} is {b}, below vertex {v}'s {a}",
                v + 1
            )
        };
        return invalid(Part::SuccOffsets, v + 1, problem);
    }
    check_last_offset(Part::SuccOffsets, "successor", offsets, m)
}

/// The last of `offsets` (of the `side` named) is the edge count `m`.
fn check_last_offset(part: Part, side: &str, offsets: &[u32], m: usize) -> Result<(), Invalid> {
    let n = offsets.len() - 1;
    if offsets[n] as usize != m {
        return invalid(
            part,
            n,
            format!(
                "the last {side} offset is {}, expected the edge count {m}",
                offsets[n]
            ),
        );
    }
    Ok(())
}

/// CSC offsets from 0 to `m`, never decreasing (a vertex may have no predecessor).
fn check_predecessor_offsets(offsets: &[u32], m: usize) -> Result<(), Invalid> {
    let n = offsets.len() - 1;
    if offsets[0] != 0 {
        return invalid(
            Part::PredOffsets,
            0,
            format!("the first predecessor offset is {}, expected 0", offsets[0]),
        );
    }
    if let Some(v) = first_index(n, |v| offsets[v] > offsets[v + 1]) {
        return invalid(
            Part::PredOffsets,
            v + 1,
            format!(
                "the predecessor offset of vertex {} is {}, below vertex {v}'s {}",
                v + 1,
                offsets[v + 1],
                offsets[v]
            ),
        );
    }
    check_last_offset(Part::PredOffsets, "predecessor", offsets, m)
}

/// Sources `< n`, ascending within each vertex's list (offsets already checked).
fn check_predecessor_sources(
    offsets: &[u32],
    sources: &[VertexId],
    n: usize,
) -> Result<(), Invalid> {
    if let Some(i) = first_index(sources.len(), |i| sources[i] as usize >= n) {
        return invalid(
            Part::PredSources,
            i,
            format!(
                "predecessor {i} is vertex {}, but there are {n} vertices",
                sources[i]
            ),
        );
    }
    let list = |v: usize| &sources[offsets[v] as usize..offsets[v + 1] as usize];
    if let Some(v) = first_index(n, |v| list(v).windows(2).any(|w| w[0] > w[1])) {
        let at = list(v).windows(2).position(|w| w[0] > w[1]).expect("found") + 1;
        let i = offsets[v] as usize + at;
        return invalid(
            Part::PredSources,
            i,
            format!(
                "the predecessors of vertex {v} are not in ascending order: {} after {}",
                sources[i],
                sources[i - 1]
            ),
        );
    }
    Ok(())
}

/// How step 2 (the transpose) is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransposeCheck {
    /// Random-keyed sums over both sides read in order ([`super::fingerprint`]): memory
    /// speed, wrong with probability at most 2^-64. The default.
    Fingerprint,
    /// The exact proof (module docs): a random read per edge.
    Exact,
}

impl TransposeCheck {
    /// `EGSOLVE_EGB_CHECK=exact` selects the proof; anything else the fingerprint.
    pub(crate) fn from_env() -> TransposeCheck {
        match std::env::var("EGSOLVE_EGB_CHECK") {
            Ok(v) if v.eq_ignore_ascii_case("exact") => TransposeCheck::Exact,
            _ => TransposeCheck::Fingerprint,
        }
    }
}

/// Every check of the module docs, array by array, the transpose by the exact proof: the
/// first problem found, in the order of the module docs and in index order within an array,
/// is the error.
fn check_each_array(
    csr: (&[u32], &[VertexId]),
    weights: &Weights,
    csc: (&[u32], &[VertexId]),
    pred_weights: &Weights,
) -> Result<(), Invalid> {
    let ((succ_offsets, succ_targets), (pred_offsets, pred_sources)) = (csr, csc);
    let (n, m) = (succ_offsets.len() - 1, succ_targets.len());
    check_successor_offsets(succ_offsets, m)?;
    if let Some(e) = first_index(m, |e| succ_targets[e] as usize >= n) {
        return invalid(
            Part::SuccTargets,
            e,
            format!(
                "edge {e} leads to vertex {}, but there are {n} vertices",
                succ_targets[e]
            ),
        );
    }
    check_predecessor_offsets(pred_offsets, m)?;
    check_predecessor_sources(pred_offsets, pred_sources, n)?;
    match (weights, pred_weights) {
        (Weights::I16(s), Weights::I16(p)) => check_transpose(csr, s, csc, p),
        (Weights::I32(s), Weights::I32(p)) => check_transpose(csr, s, csc, p),
        (Weights::I64(s), Weights::I64(p)) => check_transpose(csr, s, csc, p),
        _ => unreachable!("widths compared before"),
    }
}

/// Vertices per parallel task of the transpose check.
const CHECK_VERTICES: usize = 1 << 12;

/// Edges looked up together: their random reads are issued one stage at a time over the
/// whole batch (all offsets, then all lists' first lines, then the comparisons), so that
/// the cache misses of different edges overlap instead of waiting one after the other —
/// the check is bound by memory latency, not by its arithmetic (a plain loop per edge
/// measured 3× slower).
const BATCH: usize = 64;

/// Step 2 of the module docs: every edge at its slot of the CSC (offsets and sources
/// already checked). Blocks of vertices in parallel, each in batches; a failing block is
/// checked again edge by edge to name the first wrong edge.
fn check_transpose<W: Copy + PartialEq + Into<i64> + Send + Sync + std::fmt::Display>(
    (offsets, targets): (&[u32], &[VertexId]),
    weights: &[W],
    (pred_offsets, sources): (&[u32], &[VertexId]),
    pred_weights: &[W],
) -> Result<(), Invalid> {
    let n = offsets.len() - 1;
    let blocks = n.div_ceil(CHECK_VERTICES);
    let block_ok = |b: usize| {
        let mut batch = Batch::default();
        let mut ok = true;
        for s in b * CHECK_VERTICES..((b + 1) * CHECK_VERTICES).min(n) {
            let edges = offsets[s] as usize..offsets[s + 1] as usize;
            let list = &targets[edges.clone()];
            let repeats = occurrences(list);
            for (i, e) in edges.enumerate() {
                let k = earlier(list, &repeats, i);
                batch.push(s as u32, e as u32, k);
                if batch.len == BATCH {
                    ok &= batch.check((targets, weights), (pred_offsets, sources, pred_weights));
                    batch.len = 0;
                }
            }
        }
        ok & batch.check((targets, weights), (pred_offsets, sources, pred_weights))
    };
    let failing = if targets.len() < super::PARALLEL_EDGES {
        (0..blocks).find(|&b| !block_ok(b))
    } else {
        crate::solve::chunked::find_first(blocks, |b| !block_ok(b))
    };
    let Some(b) = failing else {
        return Ok(());
    };
    let vertices = b * CHECK_VERTICES..((b + 1) * CHECK_VERTICES).min(n);
    let first = vertices
        .filter_map(|s| {
            first_wrong(
                s,
                (offsets, targets),
                weights,
                (pred_offsets, sources),
                pred_weights,
            )
        })
        .next();
    Err(first.expect("a failing block has a wrong edge"))
}

/// Edges of one batch: source, edge index, and `k` (earlier edges of the source to the
/// same target).
struct Batch {
    source: [u32; BATCH],
    edge: [u32; BATCH],
    k: [u32; BATCH],
    len: usize,
}

impl Default for Batch {
    fn default() -> Batch {
        Batch {
            source: [0; BATCH],
            edge: [0; BATCH],
            k: [0; BATCH],
            len: 0,
        }
    }
}

impl Batch {
    #[inline(always)]
    fn push(&mut self, source: u32, edge: u32, k: u32) {
        self.source[self.len] = source;
        self.edge[self.len] = edge;
        self.k[self.len] = k;
        self.len += 1;
    }

    /// Whether every edge of the batch is at its slot, with its source and weight.
    #[inline(always)]
    fn check<W: Copy + PartialEq + Into<i64>>(
        &self,
        (targets, weights): (&[VertexId], &[W]),
        (pred_offsets, sources, pred_weights): (&[u32], &[VertexId], &[W]),
    ) -> bool {
        let len = self.len;
        let (mut lo, mut hi) = ([0usize; BATCH], [0usize; BATCH]);
        // Stage 1: every target's list bounds (independent random reads).
        for i in 0..len {
            let t = targets[self.edge[i] as usize] as usize;
            lo[i] = pred_offsets[t] as usize;
            hi[i] = pred_offsets[t + 1] as usize;
        }
        // Stage 2: the first line of every list and of its weights, read for their cache
        // lines (independent random reads; a vertex without predecessors reads nothing).
        let mut touched = 0u64;
        for &at in &lo[..len] {
            touched ^= u64::from(sources.get(at).copied().unwrap_or(0));
            touched ^= pred_weights.get(at).map_or(0, |&w| w.into() as u64);
        }
        std::hint::black_box(touched);
        // Stage 3: the slots, compared (mostly in cache now).
        let mut ok = true;
        for i in 0..len {
            let s = self.source[i];
            let list = &sources[lo[i]..hi[i]];
            let before = if list.len() <= 16 {
                list.iter().filter(|&&x| x < s).count()
            } else {
                list.partition_point(|&x| x < s)
            };
            let slot = lo[i] + before + self.k[i] as usize;
            ok &= slot < hi[i]
                && sources[slot] == s
                && pred_weights[slot] == weights[self.edge[i] as usize];
        }
        ok
    }
}

/// The first wrong edge of vertex `s`, as an [`Invalid`], if any (the edge-by-edge check
/// that names it).
fn first_wrong<W: Copy + PartialEq + std::fmt::Display>(
    s: usize,
    (offsets, targets): (&[u32], &[VertexId]),
    weights: &[W],
    (pred_offsets, sources): (&[u32], &[VertexId]),
    pred_weights: &[W],
) -> Option<Invalid> {
    let edges = offsets[s] as usize..offsets[s + 1] as usize;
    let list = &targets[edges.clone()];
    let repeats = occurrences(list);
    for (i, e) in edges.enumerate() {
        let t = targets[e] as usize;
        let k = earlier(list, &repeats, i) as usize;
        let (lo, hi) = (pred_offsets[t] as usize, pred_offsets[t + 1] as usize);
        let slot = lo + sources[lo..hi].partition_point(|&x| (x as usize) < s) + k;
        if slot >= hi || sources[slot] as usize != s {
            let (part, index) = if slot < hi {
                (Part::PredSources, slot)
            } else {
                (Part::PredOffsets, t + 1)
            };
            return Some(Invalid {
                part,
                index,
                problem: format!(
                    "the predecessors of vertex {t} lack edge {e} ({s} -> {t}, its {}{} \
                     from {s}): the predecessor lists are not the successor lists' transpose",
                    k + 1,
                    ordinal(k + 1)
                ),
            });
        }
        if pred_weights[slot] != weights[e] {
            return Some(Invalid {
                part: Part::PredWeights,
                index: slot,
                problem: format!(
                    "predecessor {slot} ({s} -> {t}) weighs {}, but the edge weighs {}",
                    pred_weights[slot], weights[e]
                ),
            });
        }
    }
    None
}

/// "st", "nd", "rd" or "th" after `k`.
fn ordinal(k: usize) -> &'static str {
    match (k % 10, k % 100) {
        (1, x) if x != 11 => "st",
        (2, x) if x != 12 => "nd",
        (3, x) if x != 13 => "rd",
        _ => "th",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::EdgeList;

    /// The parts of a built arena, owned.
    fn parts_of(a: &Arena) -> Parts {
        Parts {
            owners: a.owner.clone(),
            succ_offsets: a.succ_offsets.clone(),
            succ_targets: a.succ_targets.clone(),
            succ_weights: a.succ_weights.clone(),
            pred_offsets: a.pred_offsets.clone(),
            pred_sources: a.pred_sources.clone(),
            pred_weights: a.pred_weights.clone(),
            names: None,
        }
    }

    /// A game with parallel edges of different weights, a long list with repeats, a vertex
    /// without predecessors.
    fn sample() -> Arena {
        let mut edges = EdgeList::default();
        for (s, t, w) in [
            (0, 1, 5),
            (0, 1, -3),
            (0, 2, 1),
            (1, 1, 0),
            (2, 0, 7),
            (3, 0, 1),
        ] {
            edges.push(s, t, w);
        }
        for i in 0..40u32 {
            edges.push(2, i % 3, i64::from(i));
        }
        Arena::from_edges(vec![Player::Zero; 4], edges, None).unwrap()
    }

    #[test]
    fn the_parts_of_an_arena_make_it_again() {
        let a = sample();
        assert_eq!(Arena::from_parts(parts_of(&a)).unwrap(), a);
    }

    /// Both ways of checking step 2 accept a true transpose, and the fingerprint is the
    /// same whichever keys it draws.
    #[test]
    fn proof_and_fingerprint_accept_the_transpose() {
        let a = sample();
        let (Weights::I16(s), Weights::I16(p)) = (&a.succ_weights, &a.pred_weights) else {
            panic!("the sample's weights fit 16 bits")
        };
        let csr = (&a.succ_offsets[..], &a.succ_targets[..]);
        let csc = (&a.pred_offsets[..], &a.pred_sources[..]);
        check_transpose(csr, s, csc, p).unwrap();
        for _ in 0..100 {
            let scan = fingerprint::scan(csr, s, csc, p);
            assert!(scan.well_formed && scan.same, "{scan:?}");
            assert_eq!(scan.range, (-3, 39));
        }
    }

    #[test]
    fn every_change_of_the_predecessor_side_is_caught() {
        let a = sample();
        let m = a.edge_count();
        // Swap two predecessor entries, change one source or weight, move an offset: each
        // is refused.
        for i in 0..m {
            for j in i + 1..m {
                let mut p = parts_of(&a);
                let mut sources = a.pred_sources.to_vec();
                let mut weights: Vec<i16> = match &a.pred_weights {
                    Weights::I16(w) => w.to_vec(),
                    _ => unreachable!(),
                };
                sources.swap(i, j);
                weights.swap(i, j);
                if sources == a.pred_sources.to_vec()
                    && weights[..]
                        == *match &a.pred_weights {
                            Weights::I16(w) => &w[..],
                            _ => unreachable!(),
                        }
                {
                    continue; // an identical swap
                }
                p.pred_sources = sources.into();
                p.pred_weights = Weights::I16(weights.into());
                assert!(Arena::from_parts(p).is_err(), "swap {i} {j}");
            }
            let mut p = parts_of(&a);
            let mut sources = a.pred_sources.to_vec();
            sources[i] = (sources[i] + 1) % 4;
            p.pred_sources = sources.into();
            assert!(Arena::from_parts(p).is_err(), "source {i}");
        }
        for v in 1..4 {
            let mut p = parts_of(&a);
            let mut offsets = a.pred_offsets.to_vec();
            if offsets[v] == offsets[v + 1] {
                continue;
            }
            offsets[v] += 1;
            p.pred_offsets = offsets.into();
            assert!(Arena::from_parts(p).is_err(), "offset {v}");
        }
    }

    #[test]
    fn successor_problems_name_their_index() {
        let a = sample();
        let mut p = parts_of(&a);
        let mut targets = a.succ_targets.to_vec();
        targets[3] = 9;
        p.succ_targets = targets.into();
        let e = Arena::from_parts(p).unwrap_err();
        assert_eq!((e.part, e.index), (Part::SuccTargets, 3), "{}", e.problem);
        let mut p = parts_of(&a);
        let mut offsets = a.succ_offsets.to_vec();
        offsets[2] = offsets[1];
        p.succ_offsets = offsets.into();
        let e = Arena::from_parts(p).unwrap_err();
        assert_eq!((e.part, e.index), (Part::SuccOffsets, 2), "{}", e.problem);
        assert!(e.problem.contains("no successor"));
    }
}
