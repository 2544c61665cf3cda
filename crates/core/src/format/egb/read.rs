//! Loading an `egb` version 1 file from memory (a memory map, or the whole decompressed
//! stream): the header and the file length first, then the CRC-32 (blocks in parallel,
//! combined), then each array copied and checked in parallel; the arena's constructor
//! builds the predecessor side. Every error names the offset of the first offending byte.
//! Version 2 (`super::load`) shares the helpers for names, offsets and parity weights.

use super::header::{Counts, counts, flags_and_width, u32_at};
use super::{
    CHECKSUM_AT, FLAG_INITIAL, FLAG_NAMES, FLAG_PRIORITIES, HEADER, Layout, Le, VERSION_1,
    check_length, damaged, finished_game,
};
use crate::arena::{
    Arena, ArenaError, EdgeWeights, Player, Successors, check_successor_offsets, first_index,
};
use crate::format::Game;
use crate::format::error::FormatError;
use crate::format::parity::ParityPlan;
use crate::solve::chunked;

/// Bytes per parallel piece of copying and checking.
const PIECE: usize = 1 << 20;

/// The header fields.
struct Header {
    flags: u32,
    weight_bytes: u32,
    n: u64,
    m: u64,
    initial: u64,
    name_bytes: u64,
    checksum: u32,
}

impl Header {
    /// The header at the start of `bytes`, each field checked on its own.
    fn parse(bytes: &[u8]) -> Result<Header, FormatError> {
        let version = super::version(bytes)?;
        if version != VERSION_1 {
            return Err(damaged(
                8,
                format!("version {version} is not supported (this build reads versions 1 and 2)"),
            ));
        }
        let (flags, weight_bytes) = flags_and_width(bytes)?;
        for at in [20, 60] {
            if u32_at(bytes, at) != 0 {
                return Err(damaged(at, "a reserved field is not zero"));
            }
        }
        let Counts {
            n,
            m,
            initial,
            name_bytes,
        } = counts(bytes, flags)?;
        Ok(Header {
            flags,
            weight_bytes,
            n,
            m,
            initial,
            name_bytes,
            checksum: u32_at(bytes, CHECKSUM_AT),
        })
    }
}

/// The CRC-32 of `bytes[..56]` then `bytes[64..]`, pieces hashed in parallel and combined.
pub(super) fn checksum(bytes: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..CHECKSUM_AT]);
    let body = &bytes[HEADER..];
    let pieces: Vec<crc32fast::Hasher> =
        chunked::values_of_chunks(body.len(), 4 * PIECE, |_, piece| {
            let mut h = crc32fast::Hasher::new();
            h.update(&body[piece]);
            h
        });
    for piece in &pieces {
        hasher.combine(piece);
    }
    hasher.finalize()
}

/// The little-endian numbers of `bytes` (whose length is a multiple of their size), copied
/// in parallel.
pub(super) fn numbers<T: Le>(bytes: &[u8]) -> Vec<T> {
    let size = size_of::<T>();
    let mut out = vec![T::default(); bytes.len() / size];
    chunked::values_of_chunks_mut(&mut out, PIECE / size, |k, values| {
        for (value, raw) in values.iter_mut().zip(bytes[k * PIECE..].chunks_exact(size)) {
            *value = T::read_le(raw);
        }
    });
    out
}

/// Loads the version 1 `egb` file `bytes` (see the module docs of [`super`]).
pub(super) fn load_v1(bytes: &[u8]) -> Result<Game, FormatError> {
    let header = Header::parse(bytes)?;
    let parity = header.flags & FLAG_PRIORITIES != 0;
    let names = (header.flags & FLAG_NAMES != 0).then_some(header.name_bytes);
    let layout = Layout::of(
        header.n,
        header.m,
        u64::from(header.weight_bytes),
        parity,
        names,
    )
    .ok_or_else(|| damaged(48, "the section sizes the header gives overflow 64 bits"))?;
    check_length(bytes.len(), layout.total)?;
    let computed = checksum(bytes);
    if computed != header.checksum {
        return Err(damaged(
            CHECKSUM_AT,
            format!(
                "the checksum is {:#010x} but the content's is {computed:#010x}",
                header.checksum
            ),
        ));
    }
    let n = header.n as usize;
    let owners = owners(&bytes[layout.owners.clone()], layout.owners.start)?;
    let offsets: Vec<u32> = numbers(&bytes[layout.offsets.clone()]);
    check_offsets(&offsets, header.m, layout.offsets.start)?;
    let targets: Vec<u32> = numbers(&bytes[layout.targets.clone()]);
    let (weights, plan) = if parity {
        let priorities: Vec<u64> = numbers(&bytes[layout.priorities.clone()]);
        let plan = ParityPlan::new(priorities);
        (vertex_weights(&offsets, &plan), Some(plan))
    } else {
        let section = &bytes[layout.weights.clone()];
        let weights = match header.weight_bytes {
            2 => EdgeWeights::I16(numbers(section)),
            4 => EdgeWeights::I32(numbers(section)),
            _ => EdgeWeights::I64(numbers(section)),
        };
        (weights, None)
    };
    let names = match names {
        Some(_) => Some(names_of(
            bytes,
            (
                layout.name_flags.clone(),
                layout.name_offsets.clone(),
                layout.name_text.clone(),
            ),
            n,
        )?),
        None => None,
    };
    let successors = Successors {
        offsets,
        targets,
        weights,
    };
    let arena = Arena::from_successors(owners, successors, names).map_err(|e| match e {
        ArenaError::VertexOutOfRange { .. } => {
            let targets = &bytes[layout.targets.clone()];
            let e = first_index(header.m as usize, |e| {
                u64::from(u32_at(targets, 4 * e)) >= header.n
            })
            .unwrap_or(0);
            damaged(
                layout.targets.start + 4 * e,
                format!(
                    "edge {e} leads to vertex {}, but there are {n} vertices",
                    u32_at(targets, 4 * e)
                ),
            )
        }
        other => damaged(HEADER, other.to_string()),
    })?;
    let initial = (header.flags & FLAG_INITIAL != 0).then_some(header.initial as u32);
    Ok(finished_game(arena, plan, initial))
}

/// Owner bytes as players (each 0 or 1).
fn owners(bytes: &[u8], start: usize) -> Result<Vec<Player>, FormatError> {
    if let Some(v) = first_index(bytes.len(), |v| bytes[v] > 1) {
        return Err(damaged(
            start + v,
            format!("owner {} of vertex {v}, expected 0 or 1", bytes[v]),
        ));
    }
    let mut owners = vec![Player::Zero; bytes.len()];
    chunked::for_each_chunk_mut(&mut owners, |start, owners| {
        for (owner, &b) in owners
            .iter_mut()
            .zip(bytes.get(start..).unwrap_or_default())
        {
            if b == 1 {
                *owner = Player::One;
            }
        }
    });
    Ok(owners)
}

/// Offsets from 0 to `m`, each vertex with at least one successor (the offsets start at
/// byte `start`).
pub(super) fn check_offsets(offsets: &[u32], m: u64, start: usize) -> Result<(), FormatError> {
    let m = usize::try_from(m).unwrap_or(usize::MAX);
    check_successor_offsets(offsets, m).map_err(|e| damaged(start + 4 * e.index, e.problem))
}

/// Each edge's weight from its source's priority, per the parity game's reduction
/// (offsets already checked).
pub(super) fn vertex_weights(offsets: &[u32], plan: &ParityPlan) -> EdgeWeights {
    fn fill<W: Copy + Send + Sync + Default>(
        offsets: &[u32],
        weight: impl Fn(usize) -> W + Sync,
    ) -> Vec<W> {
        let n = offsets.len() - 1;
        let mut out = vec![W::default(); offsets[n] as usize];
        // Blocks of vertices own disjoint stretches of edges.
        let block = 1 << 14;
        let mut parts = Vec::new();
        let mut rest = out.as_mut_slice();
        for first in (0..n).step_by(block) {
            let last = (first + block).min(n);
            let (part, tail) = rest.split_at_mut((offsets[last] - offsets[first]) as usize);
            parts.push((first, last, part));
            rest = tail;
        }
        chunked::for_each_owned(parts, |(first, last, part)| {
            let base = offsets[first] as usize;
            for v in first..last {
                let w = weight(v);
                part[offsets[v] as usize - base..offsets[v + 1] as usize - base].fill(w);
            }
        });
        out
    }
    let weight = |v: usize| plan.vertex_weight(v);
    match plan.widest() {
        w if i16::try_from(w).is_ok() => EdgeWeights::I16(fill(offsets, |v| weight(v) as i16)),
        w if i32::try_from(w).is_ok() => EdgeWeights::I32(fill(offsets, |v| weight(v) as i32)),
        _ => EdgeWeights::I64(fill(offsets, weight)),
    }
}

/// The file ranges of the names: flags, offsets into the text, the text.
pub(super) type NameRanges = (
    std::ops::Range<usize>,
    std::ops::Range<usize>,
    std::ops::Range<usize>,
);

/// The names sections: flags, offsets into the text, the text.
pub(super) fn names_of(
    bytes: &[u8],
    (flag_range, offset_range, text_range): NameRanges,
    n: usize,
) -> Result<Vec<Option<Box<str>>>, FormatError> {
    let flags = &bytes[flag_range.clone()];
    let offsets: Vec<u64> = numbers(&bytes[offset_range.clone()]);
    let text = &bytes[text_range.clone()];
    let offset_at = |v: usize| offset_range.start + 8 * v;
    if offsets[0] != 0 {
        return Err(damaged(offset_at(0), "the first name offset is not 0"));
    }
    let mut names = Vec::with_capacity(n);
    for v in 0..n {
        let (a, b) = (offsets[v], offsets[v + 1]);
        if b < a || b > text.len() as u64 {
            return Err(damaged(
                offset_at(v + 1),
                format!(
                    "name offset {b} of vertex {}, expected {a} to {}",
                    v + 1,
                    text.len()
                ),
            ));
        }
        let name = &text[a as usize..b as usize];
        match flags[v] {
            0 if name.is_empty() => names.push(None),
            0 => {
                return Err(damaged(
                    flag_range.start + v,
                    format!("vertex {v} has name text but no name flag"),
                ));
            }
            1 => match std::str::from_utf8(name) {
                Ok(name) => names.push(Some(name.into())),
                Err(e) => {
                    return Err(damaged(
                        text_range.start + a as usize + e.valid_up_to(),
                        format!("the name of vertex {v} is not UTF-8"),
                    ));
                }
            },
            flag => {
                return Err(damaged(
                    flag_range.start + v,
                    format!("name flag {flag} of vertex {v}, expected 0 or 1"),
                ));
            }
        }
    }
    if offsets[n] != text.len() as u64 {
        return Err(damaged(
            offset_at(n),
            format!(
                "the names end at {}, but the name text has {} bytes",
                offsets[n],
                text.len()
            ),
        ));
    }
    Ok(names)
}
