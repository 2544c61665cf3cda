//! From chunk records to arena arrays. Files almost always list their vertices in id order
//! (`0, 1, 2, …`): then the records already are the CSR, and the arrays are the chunks'
//! arrays laid end to end — offsets from prefix sums of per-chunk counts, each chunk copied
//! to its place on its own thread ([`Layout`]). Other orders go through the vertex-line
//! check and the edge-list constructor, as a sequential reader would.

use std::mem::MaybeUninit;

use crate::arena::{Arena, ArenaError, EdgeList, EdgeWeights, Successors};
use crate::fresh::for_writing;
use crate::solve::chunked;

use super::error::{FormatError, Position};
use super::records::{ChunkWeights, Parsed, Records};
use super::vertices::{Arrangement, VertexLines};

/// How the records' ids are laid out.
pub(crate) enum Placement {
    /// Exactly `0..count`, in file order.
    InOrder(usize),
    /// Anything else (out of order, repeated or with holes).
    Shuffled,
}

/// Whether the records define `0, 1, 2, …` in file order.
pub(crate) fn placement(parsed: &Parsed) -> Placement {
    let mut next = 0usize;
    for chunk in &parsed.chunks {
        let r = &chunk.records;
        if !r.consecutive() || r.first_id() as usize != next {
            return Placement::Shuffled;
        }
        next += r.len();
    }
    Placement::InOrder(next)
}

/// The error for id `id` without a line, reported at `at`.
pub(crate) fn missing(id: usize, at: Position, expected: &str) -> FormatError {
    FormatError::MissingVertex {
        at,
        id: id as u64,
        expected: expected.to_string(),
    }
}

/// Every record's id and absolute position, for the full check of
/// [`VertexLines::arrange`].
pub(crate) fn vertex_lines(parsed: &Parsed) -> VertexLines {
    let count = parsed.record_count();
    let mut ids = Vec::with_capacity(count);
    let mut positions = Vec::with_capacity(count);
    for chunk in &parsed.chunks {
        ids.extend(chunk.records.ids());
        positions
            .extend((0..chunk.records.len()).map(|i| chunk.records.position(i, chunk.first_line)));
    }
    VertexLines::from_parts(ids, positions)
}

/// The arena of records whose ids are not `0, 1, 2, …` in file order (already checked to
/// be `0..n` once each, put in id order by `arrangement`), through the edge-list
/// constructor; every edge of record `i` of a chunk `r` weighs `weight(r, i, edge)`.
pub(crate) fn shuffled_arena(
    parsed: &Parsed,
    arrangement: &Arrangement,
    n: usize,
    weight: impl Fn(&Records, usize, usize) -> i64,
) -> Result<Arena, ArenaError> {
    let mut edges =
        EdgeList::with_capacity(parsed.chunks.iter().map(|c| c.records.targets.len()).sum());
    let mut owners = Vec::with_capacity(parsed.record_count());
    let mut names = Vec::new();
    for chunk in &parsed.chunks {
        let r = &chunk.records;
        let base = owners.len() as u32;
        let mut start = 0;
        for (i, &end) in r.ends.iter().enumerate() {
            let id = r.id(i);
            for e in start..end as usize {
                edges.push(id, r.targets[e], weight(r, i, e));
            }
            start = end as usize;
        }
        owners.extend_from_slice(&r.owners);
        names.extend(r.names.iter().map(|(i, name)| (base + i, name.clone())));
    }
    let owners = arrangement.apply(owners);
    let names = arrangement.names(n, names);
    Arena::from_edges(owners, edges, names)
}

/// The arena of records that define `0..n` in file order: the chunks' arrays laid end to
/// end as the CSR, with `weights` (one per edge, laid out by the caller). The records are
/// freed, on the pool, before the arena's own passes run.
pub(crate) fn in_order_arena(
    parsed: Parsed,
    layout: &Layout,
    weights: EdgeWeights,
    n: usize,
) -> Result<Arena, ArenaError> {
    let successors = Successors {
        offsets: layout.offsets(&parsed),
        targets: layout.gather(&parsed, |r| &r.targets, |t| t),
        weights,
    };
    let owners = layout.per_record(&parsed, |r| &r.owners);
    let names = names_in_order(&parsed, n);
    parsed.free();
    Arena::from_successors(owners, successors, names)
}

/// Names by id for in-order records, `None` if no record has one.
pub(crate) fn names_in_order(parsed: &Parsed, n: usize) -> Option<Vec<Option<Box<str>>>> {
    if parsed.chunks.iter().all(|c| c.records.names.is_empty()) {
        return None;
    }
    let mut names = vec![None; n];
    let mut base = 0usize;
    for chunk in &parsed.chunks {
        for (i, name) in &chunk.records.names {
            names[base + *i as usize] = Some(name.clone());
        }
        base += chunk.records.len();
    }
    Some(names)
}

/// Where each chunk's records and edges go in the arena's arrays (records in order).
pub(crate) struct Layout {
    records: Vec<usize>,
    edges: Vec<usize>,
}

impl Layout {
    /// The prefix sums of the chunks' record and edge counts.
    pub(crate) fn of(parsed: &Parsed) -> Layout {
        let mut records = vec![0];
        let mut edges = vec![0];
        for chunk in &parsed.chunks {
            records.push(records.last().expect("starts with 0") + chunk.records.len());
            edges.push(edges.last().expect("starts with 0") + chunk.records.edge_count());
        }
        Layout { records, edges }
    }

    /// CSR offsets of in-order records (`records + 1` entries).
    pub(crate) fn offsets(&self, parsed: &Parsed) -> Vec<u32> {
        fill(
            parsed,
            &self.records,
            Some(0),
            |c, out: &mut [MaybeUninit<u32>]| {
                let base = self.edges[c] as u32;
                write_all(
                    out,
                    parsed.chunks[c].records.ends.iter().map(|&end| base + end),
                )
            },
        )
    }

    /// One value per edge: `map` of each chunk's `field`, chunk after chunk.
    pub(crate) fn gather<T: Copy + Sync, U: Send>(
        &self,
        parsed: &Parsed,
        field: impl Fn(&Records) -> &Vec<T> + Sync,
        map: impl Fn(T) -> U + Sync,
    ) -> Vec<U> {
        fill(parsed, &self.edges, None, |c, out| {
            write_all(
                out,
                field(&parsed.chunks[c].records).iter().map(|&v| map(v)),
            )
        })
    }

    /// The `.mpg` weights, chunk after chunk, each converted by `narrow` (to a width the
    /// caller has checked holds every weight).
    pub(crate) fn weights<U: Send>(
        &self,
        parsed: &Parsed,
        narrow: impl Fn(i64) -> U + Sync,
    ) -> Vec<U> {
        fill(parsed, &self.edges, None, |c, out| {
            match &parsed.chunks[c].records.weights {
                ChunkWeights::Narrow(w) => write_all(out, w.iter().map(|&w| narrow(w.into()))),
                ChunkWeights::Wide(w) => write_all(out, w.iter().map(|&w| narrow(w))),
            }
        })
    }

    /// One value per record: each chunk's `field`, chunk after chunk.
    pub(crate) fn per_record<T: Copy + Send + Sync>(
        &self,
        parsed: &Parsed,
        field: impl Fn(&Records) -> &Vec<T> + Sync,
    ) -> Vec<T> {
        fill(parsed, &self.records, None, |c, out| {
            write_all(out, field(&parsed.chunks[c].records).iter().copied())
        })
    }

    /// One value per edge, computed per record: `value(chunk, record)` on each of its edges.
    pub(crate) fn per_edge_of_record<U: Copy + Send>(
        &self,
        parsed: &Parsed,
        value: impl Fn(&Records, usize) -> U + Sync,
    ) -> Vec<U> {
        fill(parsed, &self.edges, None, |c, out| {
            let r = &parsed.chunks[c].records;
            let mut start = 0;
            for (i, &end) in r.ends.iter().enumerate() {
                let v = value(r, i);
                for slot in &mut out[start..end as usize] {
                    slot.write(v);
                }
                start = end as usize;
            }
            start
        })
    }
}

/// Writes `values` into the first slots of `out`; returns how many it wrote.
fn write_all<U>(out: &mut [MaybeUninit<U>], values: impl Iterator<Item = U>) -> usize {
    let mut written = 0;
    for (slot, value) in out.iter_mut().zip(values) {
        slot.write(value);
        written += 1;
    }
    written
}

/// A vector of `lead` (if any) then `bounds.last()` values whose part
/// `bounds[c]..bounds[c + 1]` chunk `c`'s `write` fills, the chunks in parallel; `write`
/// returns how many slots it wrote, which must be all of its part.
fn fill<U: Send>(
    parsed: &Parsed,
    bounds: &[usize],
    lead: Option<U>,
    write: impl Fn(usize, &mut [MaybeUninit<U>]) -> usize + Sync,
) -> Vec<U> {
    let total = *bounds.last().expect("starts with 0");
    // Exactly the capacity needed (the vector becomes a boxed slice without reallocating),
    // not cleared: the chunks' threads write every slot, first touching its page.
    let mut out: Vec<U> = for_writing(total + usize::from(lead.is_some()));
    let start = out.len() + usize::from(lead.is_some());
    if let Some(lead) = lead {
        out.push(lead);
    }
    let mut parts = Vec::with_capacity(parsed.chunks.len());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for c in 0..parsed.chunks.len() {
        let (part, tail) = rest.split_at_mut(bounds[c + 1] - bounds[c]);
        parts.push(part);
        rest = tail;
    }
    let filled = std::sync::atomic::AtomicUsize::new(0);
    chunked::for_each_owned(parts.into_iter().enumerate().collect(), |(c, part)| {
        let len = part.len();
        assert_eq!(write(c, part), len, "a chunk filled part of its slots");
        filled.fetch_add(len, std::sync::atomic::Ordering::Relaxed);
    });
    let filled = filled.into_inner();
    assert_eq!(filled, total);
    // SAFETY: the parts cover the `total` slots after `start` exactly, and every part was
    // written whole (asserted above, before this point is reached).
    unsafe { out.set_len(start + total) };
    out
}
