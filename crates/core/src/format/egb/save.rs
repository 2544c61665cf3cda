//! Writing `egb` version 2 (`super::layout`):
//! - [`write_egb`]: a game in memory to any writer (a pipe too): the block checksums are
//!   computed over the arena's arrays in parallel first, then the header, the sections
//!   (zero gaps between them) and the table are written in order;
//! - [`EgbWriter`]: a large game produced section by section (the generator), straight
//!   into a memory-mapped output file sized up front — or an aligned buffer in memory —
//!   so nothing is held twice: the producer writes the arrays where the file keeps them,
//!   then [`EgbWriter::finish`] hashes the blocks in parallel and writes the table and the
//!   header.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;

use super::flags_of;
use super::layout::{BLOCK_LOG2, HEADER, Layout, Shape, block_sums, header_sum, table_bytes};
use super::write::{le_bytes, name_sections};
use crate::arena::{AlignedBytes, SharedBytes, WeightSlice, Width};
use crate::format::Game;
use crate::format::error::FormatError;
use crate::solve::chunked;

/// Writes `game` as an `egb` version 2 file.
pub fn write_egb(game: &Game, mut out: impl Write) -> io::Result<()> {
    let arena = &game.arena;
    let owners: Vec<u8> = arena.owners().iter().map(|p| p.index()).collect();
    let parity = game.parity.is_some();
    fn weights(w: WeightSlice<'_>, parity: bool) -> Cow<'_, [u8]> {
        match w {
            _ if parity => Cow::Borrowed(&[]),
            WeightSlice::I16(w) => le_bytes(w),
            WeightSlice::I32(w) => le_bytes(w),
            WeightSlice::I64(w) => le_bytes(w),
        }
    }
    let names = arena.has_names().then(|| name_sections(arena));
    let flags = flags_of(game, names.is_some());
    let shape = Shape {
        flags,
        weight_bytes: match game.parity {
            Some(_) => 0,
            None => arena.weight_width().bytes() as u32,
        },
        n: arena.vertex_count() as u64,
        m: arena.edge_count() as u64,
        initial: u64::from(game.initial.unwrap_or(0)),
        name_bytes: names.as_ref().map_or(0, |(_, _, text)| text.len() as u64),
        block_log2: BLOCK_LOG2,
    };
    let empty = || Cow::Borrowed(&[][..]);
    let sections: [Cow<'_, [u8]>; 11] = [
        Cow::Borrowed(&owners[..]),
        le_bytes(arena.succ_offsets()),
        le_bytes(arena.succ_targets()),
        weights(arena.succ_weights(), parity),
        le_bytes(arena.pred_offsets()),
        le_bytes(arena.pred_sources()),
        weights(arena.pred_weights(), parity),
        game.parity
            .as_ref()
            .map_or_else(empty, |p| le_bytes(&p.priorities)),
        names
            .as_ref()
            .map_or_else(empty, |(f, _, _)| Cow::Borrowed(&f[..])),
        names.as_ref().map_or_else(empty, |(_, o, _)| le_bytes(o)),
        names
            .as_ref()
            .map_or_else(empty, |(_, _, t)| Cow::Borrowed(&t[..])),
    ];
    let layout = Layout::of(&shape).expect("an arena's sizes fit");
    // Every block of every section, in table order, as (section, range in the section).
    let ranges = layout.sections();
    let blocks: Vec<(usize, std::ops::Range<usize>)> = layout
        .blocks()
        .into_iter()
        .map(|b| {
            let s = ranges
                .iter()
                .position(|r| r.contains(&b.start))
                .expect("a block lies in a section");
            (s, b.start - ranges[s].start..b.end - ranges[s].start)
        })
        .collect();
    let sums: Vec<u64> = chunked::map(blocks.len(), |b| {
        let (s, r) = &blocks[b];
        xxh3_64(&sections[*s][r.clone()])
    });
    let table = table_bytes(&sums);
    let header = shape.header(0);
    let header = shape.header(header_sum(&header, &table));

    out.write_all(&header)?;
    let mut at = HEADER;
    let zeros = [0u8; 64];
    for (section, range) in sections.iter().zip(&ranges) {
        debug_assert_eq!(section.len(), range.len());
        if range.is_empty() {
            continue;
        }
        out.write_all(&zeros[..range.start - at])?;
        out.write_all(section)?;
        at = range.end;
    }
    out.write_all(&zeros[..layout.table.start - at])?;
    out.write_all(&table)?;
    out.flush()
}

/// Weights of one direction, writable, at the file's width.
pub enum WeightsMut<'a> {
    /// 16-bit weights.
    I16(&'a mut [i16]),
    /// 32-bit weights.
    I32(&'a mut [i32]),
    /// 64-bit weights.
    I64(&'a mut [i64]),
}

/// The sections of an energy game being written, where the file keeps them (native byte
/// order, which [`EgbWriter`] only offers on little-endian machines).
pub struct Sections<'a> {
    /// Owner per vertex: 0 or 1.
    pub owners: &'a mut [u8],
    /// `n + 1` successor offsets.
    pub succ_offsets: &'a mut [u32],
    /// `m` targets.
    pub succ_targets: &'a mut [u32],
    /// `m` weights.
    pub succ_weights: WeightsMut<'a>,
    /// `n + 1` predecessor offsets.
    pub pred_offsets: &'a mut [u32],
    /// `m` sources.
    pub pred_sources: &'a mut [u32],
    /// `m` weights.
    pub pred_weights: WeightsMut<'a>,
}

/// Where an [`EgbWriter`] puts the file.
enum Target {
    /// A file, mapped (its pages are the page cache's: written back by the system).
    Mapped(memmap2::MmapMut),
    /// An aligned buffer, zeroed (pages untouched until written).
    Memory(Box<[[u64; 8]]>),
}

/// An energy game's `egb` version 2 file written section by section: [`EgbWriter::create`]
/// sizes it, the producer fills [`EgbWriter::sections`] (any order, any threads), and
/// [`EgbWriter::finish`] or [`EgbWriter::into_game`] seals it (checksums, header).
pub struct EgbWriter {
    shape: Shape,
    layout: Layout,
    target: Target,
}

impl EgbWriter {
    /// A file of `n` vertices and `m` edges with weights of `width`, no names and no
    /// initial vertex, at `path` (created or truncated, then mapped), or in memory when
    /// `path` is `None`. The sections start zeroed.
    pub fn create(path: Option<&Path>, n: u64, m: u64, width: Width) -> io::Result<EgbWriter> {
        if cfg!(target_endian = "big") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "egb files are written section by section only on little-endian machines; \
                 write the game with `egsolve convert` instead",
            ));
        }
        let shape = Shape {
            flags: 0,
            weight_bytes: width.bytes() as u32,
            n,
            m,
            initial: 0,
            name_bytes: 0,
            block_log2: BLOCK_LOG2,
        };
        let too_large = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the game is too large for this machine's addresses",
            )
        };
        let layout = Layout::of(&shape).ok_or_else(too_large)?;
        let total = usize::try_from(layout.total).map_err(|_| too_large())?;
        let target = match path {
            Some(path) => {
                let file = File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)?;
                file.set_len(layout.total)?;
                // SAFETY: the file was just created or truncated by this process and sized;
                // the map is the only writer we make. Another process writing the same
                // file meanwhile could only change its bytes (plain numbers, no invariant
                // of ours rests on them until the file is loaded and checked again).
                Target::Mapped(unsafe { memmap2::MmapMut::map_mut(&file)? })
            }
            None => Target::Memory(vec![[0u64; 8]; total.div_ceil(64)].into_boxed_slice()),
        };
        Ok(EgbWriter {
            shape,
            layout,
            target,
        })
    }

    /// The whole file's bytes.
    fn bytes_mut(&mut self) -> &mut [u8] {
        let total = self.layout.total as usize;
        match &mut self.target {
            Target::Mapped(map) => &mut map[..total],
            Target::Memory(blocks) => &mut bytemuck::cast_slice_mut(&mut blocks[..])[..total],
        }
    }

    /// The sections to fill.
    pub fn sections(&mut self) -> Sections<'_> {
        let l = self.layout.clone();
        let width = self.shape.weight_bytes;
        let mut rest = self.bytes_mut();
        let mut at = 0;
        // Cuts the next section (they come in file order) off `rest`.
        let mut take = |range: std::ops::Range<usize>| -> &mut [u8] {
            let tail = std::mem::take(&mut rest);
            let (_, tail) = tail.split_at_mut(range.start - at);
            let (section, tail) = tail.split_at_mut(range.len());
            rest = tail;
            at = range.end;
            section
        };
        // Field initialisers run in the order written: file order.
        Sections {
            owners: take(l.owners.clone()),
            succ_offsets: numbers_mut(take(l.succ_offsets.clone())),
            succ_targets: numbers_mut(take(l.succ_targets.clone())),
            succ_weights: weights_mut(take(l.succ_weights.clone()), width),
            pred_offsets: numbers_mut(take(l.pred_offsets.clone())),
            pred_sources: numbers_mut(take(l.pred_sources.clone())),
            pred_weights: weights_mut(take(l.pred_weights.clone()), width),
        }
    }

    /// Writes the checksum table and the header.
    fn seal(&mut self) {
        let layout = self.layout.clone();
        let bytes = self.bytes_mut();
        let sums = block_sums(&layout.blocks(), |b| &bytes[b]);
        let table = table_bytes(&sums);
        bytes[layout.table.clone()].copy_from_slice(&table);
        let header = self.shape.header(0);
        let header = self.shape.header(header_sum(&header, &table));
        self.bytes_mut()[..HEADER].copy_from_slice(&header);
    }

    /// Seals the file. A mapped file is left to the system to write back (no `fsync`, like
    /// any buffered output); an in-memory one is written to `out`.
    pub fn finish(mut self, out: Option<&mut dyn Write>) -> io::Result<()> {
        let clock = std::time::Instant::now();
        self.seal();
        tracing::debug!(
            ms = clock.elapsed().as_secs_f64() * 1e3,
            "egb checksums written"
        );
        if let (Some(out), Target::Memory(_)) = (out, &self.target) {
            out.write_all(self.bytes_mut())?;
            out.flush()?;
        }
        Ok(())
    }

    /// Seals the file and loads it as a game (checked like any `egb` file; an in-memory
    /// one is used where it lies).
    pub fn into_game(mut self) -> Result<Game, FormatError> {
        self.seal();
        let total = self.layout.total as usize;
        let shared: SharedBytes = match self.target {
            Target::Memory(blocks) => Arc::new(AlignedBytes::from_blocks(blocks, total)),
            Target::Mapped(map) => {
                let map = map.make_read_only().map_err(FormatError::Io)?;
                Arc::new(super::super::MappedFile(map))
            }
        };
        super::load::load_shared(&shared, None)
    }
}

/// A section's bytes as native numbers (aligned: sections start at multiples of 64 in a
/// page-aligned map or a 64-byte-aligned buffer, and their lengths are whole numbers).
fn numbers_mut<T: bytemuck::Pod>(bytes: &mut [u8]) -> &mut [T] {
    bytemuck::cast_slice_mut(bytes)
}

fn weights_mut(bytes: &mut [u8], width: u32) -> WeightsMut<'_> {
    match width {
        2 => WeightsMut::I16(numbers_mut(bytes)),
        4 => WeightsMut::I32(numbers_mut(bytes)),
        _ => WeightsMut::I64(numbers_mut(bytes)),
    }
}
