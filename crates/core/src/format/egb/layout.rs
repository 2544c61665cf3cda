//! The layout of an `egb` version 2 file (`docs/egb-format.md`): where each section lies,
//! the header's fields, and the checksums (XXH3-64 per block of each section, a table of
//! them at the end, and the header's own checksum over its fields and that table).
//!
//! Sections start at multiples of [`ALIGN`] bytes, so that on a memory map (page-aligned)
//! or an aligned copy every array is aligned for its type and used where it lies; the gaps
//! are zero. Each section is checksummed in blocks of `2^block_log2` bytes of its own,
//! so a block never straddles two sections and both the writer (one slice per section)
//! and the loader (one map) hash plain slices, all blocks in parallel.

use std::ops::Range;

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use super::{FLAG_INITIAL, FLAG_NAMES, FLAG_PRIORITIES, MAGIC};

/// The version this layout is.
pub(super) const VERSION_2: u32 = 2;
/// Header length (the first section starts here).
pub(super) const HEADER: usize = 64;
/// Every section starts at a multiple of this (a cache line; any array type's alignment).
pub(super) const ALIGN: u64 = 64;
/// Where the header's checksum is (8 bytes).
pub(super) const CHECKSUM_AT: usize = 56;
/// Blocks of 1 MiB: large enough that a block's hash costs no scheduling, small enough
/// that a 10^7-edge game has a block for every thread.
pub(super) const BLOCK_LOG2: u32 = 20;
/// The block sizes a file may use (`2^12` to `2^30` bytes).
pub(super) const BLOCK_LOG2_RANGE: std::ops::RangeInclusive<u32> = 12..=30;

/// The header's fields (the checksum aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Flags: names, priorities, initial vertex.
    pub flags: u32,
    /// Bytes per weight: 2, 4, 8, or 0 for a parity game.
    pub weight_bytes: u32,
    /// `n`.
    pub n: u64,
    /// `m`.
    pub m: u64,
    /// The initial vertex (0 without the flag).
    pub initial: u64,
    /// Bytes of name text (0 without names).
    pub name_bytes: u64,
    /// Checksum blocks of `2^block_log2` bytes.
    pub block_log2: u32,
}

impl Shape {
    /// The header bytes of this shape with `checksum`.
    pub(super) fn header(&self, checksum: u64) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        h[..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION_2.to_le_bytes());
        h[12..16].copy_from_slice(&self.flags.to_le_bytes());
        h[16..20].copy_from_slice(&self.weight_bytes.to_le_bytes());
        h[20..24].copy_from_slice(&self.block_log2.to_le_bytes());
        h[24..32].copy_from_slice(&self.n.to_le_bytes());
        h[32..40].copy_from_slice(&self.m.to_le_bytes());
        h[40..48].copy_from_slice(&self.initial.to_le_bytes());
        h[48..56].copy_from_slice(&self.name_bytes.to_le_bytes());
        h[56..64].copy_from_slice(&checksum.to_le_bytes());
        h
    }

    /// Whether the game is a parity game (priorities instead of weights).
    pub(super) fn parity(&self) -> bool {
        self.flags & FLAG_PRIORITIES != 0
    }

    /// Whether the file has names.
    pub(super) fn named(&self) -> bool {
        self.flags & FLAG_NAMES != 0
    }

    /// Whether the file names an initial vertex.
    pub(super) fn has_initial(&self) -> bool {
        self.flags & FLAG_INITIAL != 0
    }
}

/// Where each section of a version 2 file lies (byte ranges of the file).
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    pub owners: Range<usize>,
    pub succ_offsets: Range<usize>,
    pub succ_targets: Range<usize>,
    pub succ_weights: Range<usize>,
    pub pred_offsets: Range<usize>,
    pub pred_sources: Range<usize>,
    pub pred_weights: Range<usize>,
    pub priorities: Range<usize>,
    pub name_flags: Range<usize>,
    pub name_offsets: Range<usize>,
    pub name_text: Range<usize>,
    /// The checksum table: one little-endian `u64` per block.
    pub table: Range<usize>,
    /// Bytes per checksum block.
    pub block: usize,
    /// The file's whole length.
    pub total: u64,
}

impl Layout {
    /// The sections of a file of this shape; `None` if the sizes overflow (64 bits, or
    /// this machine's address space).
    pub(crate) fn of(shape: &Shape) -> Option<Layout> {
        let (n, m) = (shape.n, shape.m);
        let w = u64::from(shape.weight_bytes);
        let block = 1usize.checked_shl(shape.block_log2)?;
        let mut at = HEADER as u64;
        let mut next = |len: Option<u64>| section(&mut at, len);
        let offsets = n.checked_add(1)?.checked_mul(4);
        let mut layout = Layout {
            owners: next(Some(n))?,
            succ_offsets: next(offsets)?,
            succ_targets: next(m.checked_mul(4))?,
            succ_weights: next(m.checked_mul(w))?,
            pred_offsets: next(offsets)?,
            pred_sources: next(m.checked_mul(4))?,
            pred_weights: next(m.checked_mul(w))?,
            priorities: next(Some(if shape.parity() { n.checked_mul(8)? } else { 0 }))?,
            ..Layout::default()
        };
        let named = shape.named();
        layout.name_flags = next(Some(if named { n } else { 0 }))?;
        layout.name_offsets = next(if named {
            n.checked_add(1)?.checked_mul(8)
        } else {
            Some(0)
        })?;
        layout.name_text = next(Some(shape.name_bytes))?;
        let blocks: u64 = layout
            .sections()
            .iter()
            .map(|s| s.len().div_ceil(block) as u64)
            .sum();
        layout.table = next(blocks.checked_mul(8))?;
        layout.block = block;
        layout.total = u64::try_from(layout.table.end).ok()?;
        Some(layout)
    }

    /// The data sections, in file order (the table aside).
    pub(super) fn sections(&self) -> [Range<usize>; 11] {
        [
            self.owners.clone(),
            self.succ_offsets.clone(),
            self.succ_targets.clone(),
            self.succ_weights.clone(),
            self.pred_offsets.clone(),
            self.pred_sources.clone(),
            self.pred_weights.clone(),
            self.priorities.clone(),
            self.name_flags.clone(),
            self.name_offsets.clone(),
            self.name_text.clone(),
        ]
    }

    /// Every checksum block, in table order: each section cut into blocks of `block` bytes.
    pub(super) fn blocks(&self) -> Vec<Range<usize>> {
        let mut blocks = Vec::new();
        for s in self.sections() {
            let mut start = s.start;
            while start < s.end {
                let end = (start + self.block).min(s.end);
                blocks.push(start..end);
                start = end;
            }
        }
        blocks
    }

    /// The gaps between sections (and before the table), which must be zero.
    pub(super) fn gaps(&self) -> Vec<Range<usize>> {
        let mut gaps = Vec::new();
        let mut at = HEADER;
        for s in self.sections().into_iter().chain([self.table.clone()]) {
            if s.start > at {
                gaps.push(at..s.start);
            }
            at = s.end;
        }
        gaps
    }
}

/// The next section of `len` bytes, at the first multiple of [`ALIGN`] from `*at`; `*at`
/// moves past it. `None` on overflow.
fn section(at: &mut u64, len: Option<u64>) -> Option<Range<usize>> {
    let start = at.checked_add(ALIGN - 1)? & !(ALIGN - 1);
    let end = start.checked_add(len?)?;
    *at = end;
    Some(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
}

/// The checksum of each block of `blocks`, where `bytes(range)` gives a block's bytes; in
/// parallel.
pub(super) fn block_sums<'a>(
    blocks: &[Range<usize>],
    bytes: impl Fn(Range<usize>) -> &'a [u8] + Sync,
) -> Vec<u64> {
    crate::solve::chunked::map(blocks.len(), |b| xxh3_64(bytes(blocks[b].clone())))
}

/// The header's checksum: XXH3-64 of header bytes `0..56` followed by the table.
pub(super) fn header_sum(header: &[u8], table: &[u8]) -> u64 {
    let mut h = Xxh3::new();
    h.update(&header[..CHECKSUM_AT]);
    h.update(table);
    h.digest()
}

/// The table's bytes (little-endian `u64`s).
pub(super) fn table_bytes(sums: &[u64]) -> Vec<u8> {
    sums.iter().flat_map(|s| s.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_aligned_and_blocks_cover_them() {
        let shape = Shape {
            flags: FLAG_NAMES,
            weight_bytes: 2,
            n: 5,
            m: 1000,
            initial: 0,
            name_bytes: 3,
            block_log2: 12,
        };
        let l = Layout::of(&shape).unwrap();
        for s in l.sections() {
            assert_eq!(s.start % 64, 0, "{s:?}");
        }
        assert_eq!(l.owners.start, 64);
        assert_eq!(l.succ_targets.len(), 4000);
        assert_eq!(l.priorities.len(), 0);
        let blocks = l.blocks();
        assert_eq!(l.table.len(), 8 * blocks.len());
        assert_eq!(
            blocks.iter().map(Range::len).sum::<usize>(),
            l.sections().iter().map(Range::len).sum::<usize>()
        );
        assert_eq!(l.total as usize, l.table.end);
        assert!(
            Layout::of(&Shape {
                m: u64::MAX / 2,
                ..shape
            })
            .is_none()
        );
    }
}
