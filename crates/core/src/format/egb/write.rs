//! Writing a game as `egb` version 1 (for readers older than version 2; egsolve writes
//! version 2, `super::save`): the arena's arrays as they are stored (weights at their
//! storage width; none for a parity game, whose priorities are written instead), the
//! checksum computed over the sections in parallel before anything is written, so the
//! output can be a pipe.

use std::borrow::Cow;
use std::io::{self, Write};

use super::{CHECKSUM_AT, HEADER, Layout, Le, MAGIC, VERSION_1, flags_of};
use crate::arena::{Arena, WeightSlice};
use crate::format::Game;
use crate::solve::chunked;

/// The bytes of `values` in little-endian order (borrowed on little-endian machines).
pub(super) fn le_bytes<T: Le>(values: &[T]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        let swapped: Vec<T> = values.iter().map(|&v| v.into_le()).collect();
        Cow::Owned(bytemuck::cast_slice(&swapped).to_vec())
    }
}

/// The name sections of `arena`: flags, offsets, text.
pub(super) fn name_sections(arena: &Arena) -> (Vec<u8>, Vec<u64>, Vec<u8>) {
    let n = arena.vertex_count();
    let mut flags = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n + 1);
    let mut text = Vec::new();
    offsets.push(0);
    for v in 0..n as u32 {
        match arena.name(v) {
            Some(name) => {
                flags.push(1);
                text.extend_from_slice(name.as_bytes());
            }
            None => flags.push(0),
        }
        offsets.push(text.len() as u64);
    }
    (flags, offsets, text)
}

/// Writes `game` as an `egb` version 1 file (what egsolve wrote before version 2; for
/// tools that read only version 1, and for tests of the version 1 reader).
pub fn write_egb_v1(game: &Game, mut out: impl Write) -> io::Result<()> {
    let arena = &game.arena;
    let n = arena.vertex_count();
    let m = arena.edge_count();
    let owners: Vec<u8> = arena.owners().iter().map(|p| p.index()).collect();
    let weights: Option<Cow<'_, [u8]>> = match (&game.parity, arena.succ_weights()) {
        (Some(_), _) => None,
        (None, WeightSlice::I16(w)) => Some(le_bytes(w)),
        (None, WeightSlice::I32(w)) => Some(le_bytes(w)),
        (None, WeightSlice::I64(w)) => Some(le_bytes(w)),
    };
    let weight_bytes = match weights {
        Some(_) => arena.weight_width().bytes() as u32,
        None => 0,
    };
    let priorities = game.parity.as_ref().map(|p| le_bytes(&p.priorities));
    let names = arena.has_names().then(|| name_sections(arena));
    let mut sections: Vec<Cow<'_, [u8]>> = vec![
        Cow::Borrowed(&owners[..]),
        le_bytes(arena.succ_offsets()),
        le_bytes(arena.succ_targets()),
    ];
    sections.extend(weights);
    sections.extend(priorities);
    if let Some((flags, offsets, text)) = &names {
        sections.push(Cow::Borrowed(&flags[..]));
        sections.push(le_bytes(offsets));
        sections.push(Cow::Borrowed(&text[..]));
    }
    let layout = Layout::of(
        n as u64,
        m as u64,
        u64::from(weight_bytes),
        game.parity.is_some(),
        names.as_ref().map(|(_, _, text)| text.len() as u64),
    )
    .expect("an arena's sizes fit");

    let flags = flags_of(game, names.is_some());
    let mut header = [0u8; HEADER];
    header[..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&VERSION_1.to_le_bytes());
    header[12..16].copy_from_slice(&flags.to_le_bytes());
    header[16..20].copy_from_slice(&weight_bytes.to_le_bytes());
    header[24..32].copy_from_slice(&(n as u64).to_le_bytes());
    header[32..40].copy_from_slice(&(m as u64).to_le_bytes());
    header[40..48].copy_from_slice(&u64::from(game.initial.unwrap_or(0)).to_le_bytes());
    let name_bytes = names.as_ref().map_or(0, |(_, _, text)| text.len() as u64);
    header[48..56].copy_from_slice(&name_bytes.to_le_bytes());

    // The checksum: header bytes 0..56, then every section with its padding.
    const ZEROS: [u8; 8] = [0; 8];
    let padding = |len: usize| &ZEROS[..(8 - len % 8) % 8];
    let pieces: Vec<crc32fast::Hasher> = chunked::map(sections.len(), |s| {
        let section = &sections[s];
        let mut h = crc32fast::Hasher::new();
        for piece in section.chunks(4 << 20) {
            h.update(piece);
        }
        h.update(padding(section.len()));
        h
    });
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&header[..CHECKSUM_AT]);
    for piece in &pieces {
        hasher.combine(piece);
    }
    header[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&hasher.finalize().to_le_bytes());

    out.write_all(&header)?;
    let mut written = HEADER as u64;
    for section in &sections {
        out.write_all(section)?;
        out.write_all(padding(section.len()))?;
        written += (section.len() + padding(section.len()).len()) as u64;
    }
    debug_assert_eq!(written, layout.total);
    out.flush()
}
