//! Loading an `egb` version 2 file: a map plus a check. The header and the exact length
//! first, then the header's checksum (over the table of block checksums), then every block
//! of every section hashed in parallel against the table, then the arrays taken where they
//! lie in the buffer (no copy) and checked by [`Arena::from_parts`] (one parallel pass per
//! array, the predecessor side proved to be the successors' transpose). Every error names
//! the offset of the first offending byte.

use super::early::{EarlySuccessors, SuccessorsHook};
use super::header::{Counts, counts, flags_and_width, u32_at, u64_at};
use super::layout::{BLOCK_LOG2_RANGE, CHECKSUM_AT, HEADER, Layout, Shape, block_sums, header_sum};
use super::read::{check_offsets, names_of, numbers, vertex_weights};
use super::{Le, check_length, damaged, finished_game};
use crate::arena::{Arena, Array, EdgeWeights, Part, Parts, SharedBytes, Weights};
use crate::format::Game;
use crate::format::error::FormatError;
use crate::format::parity::ParityPlan;
use crate::solve::chunked;

/// The version 2 header at the start of `bytes` (at least [`HEADER`] long, version 2
/// already read), each field checked on its own; with its stored checksum.
fn parse_header(bytes: &[u8]) -> Result<(Shape, u64), FormatError> {
    let (flags, weight_bytes) = flags_and_width(bytes)?;
    let block_log2 = u32_at(bytes, 20);
    if !BLOCK_LOG2_RANGE.contains(&block_log2) {
        return Err(damaged(
            20,
            format!(
                "checksum blocks of 2^{block_log2} bytes, expected 2^{} to 2^{}",
                BLOCK_LOG2_RANGE.start(),
                BLOCK_LOG2_RANGE.end()
            ),
        ));
    }
    let Counts {
        n,
        m,
        initial,
        name_bytes,
    } = counts(bytes, flags)?;
    let shape = Shape {
        flags,
        weight_bytes,
        n,
        m,
        initial,
        name_bytes,
        block_log2,
    };
    Ok((shape, u64_at(bytes, CHECKSUM_AT)))
}

/// The layout of `bytes`' header, the length checked against it, and every checksum.
pub(super) fn checked_layout(bytes: &[u8]) -> Result<(Shape, Layout), FormatError> {
    let (shape, layout) = header_layout(bytes)?;
    check_blocks(bytes, &layout)?;
    Ok((shape, layout))
}

/// The layout of `bytes`' header, the length checked against it, and the header's own
/// checksum (over its fields and the block table): the sections lie inside `bytes`.
fn header_layout(bytes: &[u8]) -> Result<(Shape, Layout), FormatError> {
    let (shape, stored) = parse_header(bytes)?;
    let layout = Layout::of(&shape)
        .ok_or_else(|| damaged(48, "the section sizes the header gives overflow 64 bits"))?;
    check_length(bytes.len(), layout.total)?;
    let table = &bytes[layout.table.clone()];
    let computed = header_sum(&bytes[..HEADER], table);
    if computed != stored {
        return Err(damaged(
            CHECKSUM_AT,
            format!(
                "the header's checksum is {stored:#018x} but its fields' and the block table's \
                 is {computed:#018x}"
            ),
        ));
    }
    Ok((shape, layout))
}

/// Every block of every section against its checksum in the table, and the zero gaps.
fn check_blocks(bytes: &[u8], layout: &Layout) -> Result<(), FormatError> {
    let table = &bytes[layout.table.clone()];
    let blocks = layout.blocks();
    let sums = block_sums(&blocks, |b| &bytes[b]);
    let wrong = chunked::find_first(blocks.len(), |i| sums[i] != u64_at(table, 8 * i));
    if let Some(i) = wrong {
        let b = &blocks[i];
        return Err(damaged(
            b.start,
            format!(
                "bytes {}..{} do not match their checksum (block {i} of the table): the file \
                 is damaged there",
                b.start, b.end
            ),
        ));
    }
    for gap in layout.gaps() {
        if let Some(at) = bytes[gap.clone()].iter().position(|&b| b != 0) {
            return Err(damaged(
                gap.start + at,
                "a padding byte between sections is not zero",
            ));
        }
    }
    Ok(())
}

/// The `T`s of `range`, borrowed from the buffer (copied where they cannot be borrowed:
/// a big-endian machine, or a buffer not aligned for them).
fn array<T: Le>(bytes: &SharedBytes, range: std::ops::Range<usize>) -> Array<T> {
    if cfg!(target_endian = "little") {
        if let Some(array) = Array::shared(bytes, range.clone()) {
            return array;
        }
    }
    numbers::<T>(&bytes.bytes()[range]).into()
}

/// Loads the version 2 `egb` file held by `bytes` (see the module docs); `early` gets an
/// energy game's successor side as soon as the header and its checksum pass, before the
/// blocks are hashed ([`EarlySuccessors`]).
pub(crate) fn load_shared(
    bytes: &SharedBytes,
    early: Option<&SuccessorsHook>,
) -> Result<Game, FormatError> {
    let raw = bytes.bytes();
    let clock = std::time::Instant::now();
    let (shape, layout) = header_layout(raw)?;
    // The successor side where it lies (and an energy game's stored weights), before the
    // blocks are hashed: handed to `early` as it is.
    let succ_offsets: Array<u32> = array(bytes, layout.succ_offsets.clone());
    let succ_targets: Array<u32> = array(bytes, layout.succ_targets.clone());
    let stored_weights = (!shape.parity()).then(|| {
        let (s, p) = (layout.succ_weights.clone(), layout.pred_weights.clone());
        match shape.weight_bytes {
            2 => (Weights::I16(array(bytes, s)), Weights::I16(array(bytes, p))),
            4 => (Weights::I32(array(bytes, s)), Weights::I32(array(bytes, p))),
            _ => (Weights::I64(array(bytes, s)), Weights::I64(array(bytes, p))),
        }
    });
    if let (Some(hook), Some((weights, _))) = (early, &stored_weights) {
        if let Some(successors) = EarlySuccessors::of(&succ_offsets, &succ_targets, weights) {
            hook.call(successors);
        }
    }
    check_blocks(raw, &layout)?;
    tracing::debug!(
        ms = clock.elapsed().as_secs_f64() * 1e3,
        "egb checksums checked"
    );
    let n = shape.n as usize;
    let owners = match Array::shared_players(bytes, layout.owners.clone()) {
        Ok(owners) => owners,
        Err(Some(v)) => {
            return Err(damaged(
                layout.owners.start + v,
                format!(
                    "owner {} of vertex {v}, expected 0 or 1",
                    raw[layout.owners.start + v]
                ),
            ));
        }
        Err(None) => unreachable!("the layout lies inside the checked length"),
    };
    let pred_sources: Array<u32> = array(bytes, layout.pred_sources.clone());
    let (succ_weights, pred_weights, plan) = if let Some((s, p)) = stored_weights {
        (s, p, None)
    } else {
        // The weights come from the priorities: computed here (owned), per edge from its
        // source, once the successor offsets are known to be sound.
        check_offsets(&succ_offsets, shape.m, layout.succ_offsets.start)?;
        let plan = ParityPlan::new(numbers(&raw[layout.priorities.clone()]));
        let succ = vertex_weights(&succ_offsets, &plan);
        let pred = source_weights(&pred_sources, n, &plan, &succ);
        (owned(succ), pred, Some(plan))
    };
    let names = if shape.named() {
        Some(names_of(
            raw,
            (
                layout.name_flags.clone(),
                layout.name_offsets.clone(),
                layout.name_text.clone(),
            ),
            n,
        )?)
    } else {
        None
    };
    let parts = Parts {
        owners,
        succ_offsets,
        succ_targets,
        succ_weights,
        pred_offsets: array(bytes, layout.pred_offsets.clone()),
        pred_sources,
        pred_weights,
        names,
    };
    let w = shape.weight_bytes as usize;
    let arena = Arena::from_parts(parts).map_err(|e| {
        let at = match e.part {
            Part::Counts => HEADER,
            Part::SuccOffsets => layout.succ_offsets.start + 4 * e.index,
            Part::SuccTargets => layout.succ_targets.start + 4 * e.index,
            Part::PredOffsets => layout.pred_offsets.start + 4 * e.index,
            Part::PredSources => layout.pred_sources.start + 4 * e.index,
            // A parity game's weights are computed, not stored: name the source instead.
            Part::PredWeights if w == 0 => layout.pred_sources.start + 4 * e.index,
            Part::PredWeights => layout.pred_weights.start + w * e.index,
        };
        damaged(at, e.problem)
    })?;
    let initial = shape.has_initial().then_some(shape.initial as u32);
    Ok(finished_game(arena, plan, initial))
}

/// Owned weights of the arena from the loader's weights.
fn owned(weights: EdgeWeights) -> Weights {
    match weights {
        EdgeWeights::I16(w) => Weights::I16(w.into()),
        EdgeWeights::I32(w) => Weights::I32(w.into()),
        EdgeWeights::I64(w) => Weights::I64(w.into()),
    }
}

/// The predecessor side's weights of a parity game: each slot's source's weight, at the
/// width of the successor side's (a source out of range gets 0: the arena's checks refuse
/// it before anything reads these).
fn source_weights(sources: &[u32], n: usize, plan: &ParityPlan, like: &EdgeWeights) -> Weights {
    fn map<W: Copy + Default + Send + Sync>(
        sources: &[u32],
        n: usize,
        weight: impl Fn(usize) -> W + Sync,
    ) -> Vec<W> {
        let mut out = vec![W::default(); sources.len()];
        chunked::for_each_chunk_mut(&mut out, |start, out| {
            for (w, &s) in out.iter_mut().zip(sources.get(start..).unwrap_or_default()) {
                if (s as usize) < n {
                    *w = weight(s as usize);
                }
            }
        });
        out
    }
    let weight = |v: usize| plan.vertex_weight(v);
    match like {
        EdgeWeights::I16(_) => Weights::I16(map(sources, n, |v| weight(v) as i16).into()),
        EdgeWeights::I32(_) => Weights::I32(map(sources, n, |v| weight(v) as i32).into()),
        EdgeWeights::I64(_) => Weights::I64(map(sources, n, weight).into()),
    }
}
