//! The header fields both versions share, read and checked one at a time at the offsets
//! `docs/egb-format.md` gives: the flags (12), the weight width (16), and the counts (24:
//! vertices, 32: edges, 40: initial vertex, 48: name bytes). Each version checks its own
//! fields between the two steps (version 1: reserved zeros; version 2: the block size).

use super::{FLAG_INITIAL, FLAG_NAMES, FLAG_PRIORITIES, Le, damaged};
use crate::format::error::FormatError;

pub(super) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::read_le(&bytes[at..at + 4])
}

pub(super) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::read_le(&bytes[at..at + 8])
}

/// The flags and the bytes per weight (0 exactly for a parity game, whose weights come from
/// its priorities; else 2, 4 or 8).
pub(super) fn flags_and_width(bytes: &[u8]) -> Result<(u32, u32), FormatError> {
    let flags = u32_at(bytes, 12);
    if flags & !(FLAG_NAMES | FLAG_PRIORITIES | FLAG_INITIAL) != 0 {
        return Err(damaged(12, format!("unknown flags {flags:#x}")));
    }
    let weight_bytes = u32_at(bytes, 16);
    match (flags & FLAG_PRIORITIES != 0, weight_bytes) {
        (false, 2 | 4 | 8) | (true, 0) => Ok((flags, weight_bytes)),
        (false, _) => Err(damaged(
            16,
            format!("{weight_bytes} bytes per weight, expected 2, 4 or 8"),
        )),
        (true, _) => Err(damaged(
            16,
            format!(
                "{weight_bytes} bytes per weight in a parity game, expected 0 (its weights \
                 come from the priorities)"
            ),
        )),
    }
}

/// The counts: vertices, edges, the initial vertex (0 without the flag) and the bytes of
/// name text (0 without the flag).
pub(super) struct Counts {
    pub n: u64,
    pub m: u64,
    pub initial: u64,
    pub name_bytes: u64,
}

/// The counts of a header whose flags are `flags`.
pub(super) fn counts(bytes: &[u8], flags: u32) -> Result<Counts, FormatError> {
    let n = u64_at(bytes, 24);
    if n == 0 || n >= u64::from(u32::MAX) {
        return Err(damaged(
            24,
            format!("{n} vertices, expected 1 to {}", u32::MAX - 1),
        ));
    }
    let m = u64_at(bytes, 32);
    if m >= u64::from(u32::MAX) {
        return Err(damaged(
            32,
            format!("{m} edges, expected at most {}", u32::MAX - 1),
        ));
    }
    let initial = u64_at(bytes, 40);
    if flags & FLAG_INITIAL == 0 && initial != 0 {
        return Err(damaged(40, "an initial vertex without the initial flag"));
    }
    if flags & FLAG_INITIAL != 0 && initial >= n {
        return Err(damaged(
            40,
            format!("initial vertex {initial}, expected one of the {n} vertices"),
        ));
    }
    let name_bytes = u64_at(bytes, 48);
    if flags & FLAG_NAMES == 0 && name_bytes != 0 {
        return Err(damaged(48, "name text without the names flag"));
    }
    Ok(Counts {
        n,
        m,
        initial,
        name_bytes,
    })
}
