//! `egb`, egsolve's binary arena format: the arena's own arrays, little-endian, laid out so
//! that a memory map of the file *is* the arena. `egsolve convert FILE --to egb` and
//! `egsolve gen ... --to egb` write it; every reader recognises it by its magic bytes,
//! compressed or not. The full specification is `docs/egb-format.md`; in short:
//!
//! - **Version 2** (written): a 64-byte header (magic, version, flags, bytes per weight, the
//!   checksum block size, `n`, `m`, the initial vertex, the name text's length, the
//!   header's XXH3-64 checksum), then the sections, each at a multiple of 64 bytes: owners,
//!   successor offsets, targets and weights, *predecessor* offsets, sources and weights (so
//!   nothing is rebuilt), priorities (parity games), names; then a table of XXH3-64
//!   checksums, one per block of each section. Loading ([`load_shared`]) is a map plus a
//!   check: the blocks are hashed in parallel, and the arrays are used where they lie in
//!   the map ([`crate::arena::Array`]), checked by [`crate::arena::Arena`]'s `from_parts`
//!   (the predecessor side proved to be exactly the transpose). A large game is written
//!   section by section straight into a mapped output file ([`EgbWriter`]).
//! - **Version 1** (still read; [`write_egb_v1`] writes it): a 64-byte header with a CRC-32,
//!   the successor side only, sections padded to 8 bytes; the loader copies the arrays
//!   and builds the predecessor side.
//!
//! Loading checks everything an [`crate::arena::Arena`] needs and names the offset of the
//! first offending byte ([`FormatError::Binary`]): header fields, the exact file length,
//! the checksums, owners, offsets, targets, the predecessor side, names. Nothing in a file
//! makes the loader read out of bounds or allocate more than the file's length implies.

mod early;
mod header;
mod layout;
mod load;
mod read;
mod save;
mod write;

use std::sync::Arc;

use super::Game;
use super::error::FormatError;
use super::parity::ParityPlan;
use crate::arena::{AlignedBytes, Arena, SharedBytes};

pub use early::{EarlySuccessors, SuccessorsHook};
pub use save::{EgbWriter, Sections, WeightsMut, write_egb};
pub use write::write_egb_v1;

/// The magic bytes at offset 0 (PNG-style: a non-ASCII byte, the name, and line-ending bytes
/// that a text-mode transfer would damage).
pub const MAGIC: [u8; 8] = *b"\x89EGB\r\n\x1a\n";
/// The version this build writes (it reads this one and version 1).
pub const VERSION: u32 = layout::VERSION_2;
/// The first version, still read.
const VERSION_1: u32 = 1;
/// Header length (version 1; version 2's is the same, `layout::HEADER`).
const HEADER: usize = 64;
/// Flag: the file has names.
const FLAG_NAMES: u32 = 1;
/// Flag: the file has priorities (a parity game).
const FLAG_PRIORITIES: u32 = 2;
/// Flag: the file names an initial vertex.
const FLAG_INITIAL: u32 = 4;
/// Where the version 1 checksum is (the 4 bytes it covers around).
const CHECKSUM_AT: usize = 56;

/// The header flags of `game` written with names (`named`) or without.
fn flags_of(game: &Game, named: bool) -> u32 {
    let mut flags = 0;
    if named {
        flags |= FLAG_NAMES;
    }
    if game.parity.is_some() {
        flags |= FLAG_PRIORITIES;
    }
    if game.initial.is_some() {
        flags |= FLAG_INITIAL;
    }
    flags
}

/// The error for a file of `len` bytes whose header describes `total`: truncated, or
/// with bytes after the end.
fn check_length(len: usize, total: u64) -> Result<(), FormatError> {
    let bytes = len as u64;
    if bytes < total {
        return Err(damaged(
            len,
            format!(
                "the file ends after {bytes} bytes, but its header describes {total} bytes: it \
                 is truncated"
            ),
        ));
    }
    if bytes > total {
        return Err(damaged(
            total as usize,
            format!(
                "{} bytes follow the {total} bytes its header describes",
                bytes - total
            ),
        ));
    }
    Ok(())
}

/// The game of a read `arena`: a parity game's (with the priorities) where a parity `plan`
/// gave its weights.
fn finished_game(arena: Arena, plan: Option<ParityPlan>, initial: Option<u32>) -> Game {
    let (arena, parity) = match plan {
        Some(plan) => {
            let (arena, parity) = plan.finish(arena);
            (arena, Some(parity))
        }
        None => (arena, None),
    };
    Game {
        arena,
        parity,
        initial,
    }
}

/// Whether `bytes` start with the `egb` magic.
pub fn is_egb(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The error at byte `offset`.
fn damaged(offset: usize, problem: impl Into<String>) -> FormatError {
    FormatError::Binary {
        offset: offset as u64,
        problem: problem.into(),
    }
}

/// `len` rounded up to a multiple of 8.
fn padded(len: u64) -> Option<u64> {
    len.checked_add(7).map(|l| l & !7)
}

/// The version at offset 8 of an `egb` file, or the error for a file too short to have one.
fn version(bytes: &[u8]) -> Result<u32, FormatError> {
    if bytes.len() < HEADER {
        return Err(damaged(
            bytes.len(),
            format!(
                "the file ends after {} bytes, inside the {HEADER}-byte header",
                bytes.len()
            ),
        ));
    }
    if bytes[..8] != MAGIC {
        return Err(damaged(0, "the magic bytes are not those of an egb file"));
    }
    Ok(u32::read_le(&bytes[8..12]))
}

/// Loads the `egb` file `bytes` (a decompressed stream, a buffer): version 1 is copied
/// and built, version 2 copied once into an aligned buffer and used from there.
pub(crate) fn load(bytes: &[u8]) -> Result<Game, FormatError> {
    match version(bytes)? {
        VERSION_1 => read::load_v1(bytes),
        layout::VERSION_2 => {
            let shared: SharedBytes = Arc::new(AlignedBytes::copy_of(bytes));
            load::load_shared(&shared, None)
        }
        other => Err(damaged(
            8,
            format!("version {other} is not supported (this build reads versions 1 and 2)"),
        )),
    }
}

/// Loads the `egb` file held by `bytes` (a memory map): version 2's arrays are used where
/// they lie, without a copy, and the arena keeps the buffer alive; version 1 is copied and
/// built. Runs on the current rayon pool.
pub fn load_shared(bytes: &SharedBytes) -> Result<Game, FormatError> {
    load_shared_early(bytes, None)
}

/// [`load_shared`], handing a version 2 energy game's successor side to `early` as soon as
/// its checksums pass ([`EarlySuccessors`]).
pub fn load_shared_early(
    bytes: &SharedBytes,
    early: Option<&SuccessorsHook>,
) -> Result<Game, FormatError> {
    match version(bytes.bytes())? {
        layout::VERSION_2 => load::load_shared(bytes, early),
        _ => load(bytes.bytes()),
    }
}

/// Checks a version 2 file's header, length, checksums (every block, in parallel) and the
/// zero gaps, without loading it: the integrity half of a load (the arena's checks are the
/// other half). Version 1 files are not checked here.
pub fn verify_checksums(bytes: &[u8]) -> Result<(), FormatError> {
    match version(bytes)? {
        layout::VERSION_2 => load::checked_layout(bytes).map(|_| ()),
        other => Err(damaged(
            8,
            format!("version {other}: only version 2 files have block checksums"),
        )),
    }
}

/// Where each section lies in a version 1 file with this header.
#[derive(Debug, Clone, Default)]
struct Layout {
    owners: std::ops::Range<usize>,
    offsets: std::ops::Range<usize>,
    targets: std::ops::Range<usize>,
    weights: std::ops::Range<usize>,
    priorities: std::ops::Range<usize>,
    name_flags: std::ops::Range<usize>,
    name_offsets: std::ops::Range<usize>,
    name_text: std::ops::Range<usize>,
    /// The file's whole length.
    total: u64,
}

impl Layout {
    /// The sections for `n` vertices, `m` edges, weights of `weight_bytes`, optional
    /// priorities and names (`name_bytes` of text); `None` if the sizes overflow.
    fn of(
        n: u64,
        m: u64,
        weight_bytes: u64,
        priorities: bool,
        names: Option<u64>,
    ) -> Option<Layout> {
        let mut at = HEADER as u64;
        let owners = section(&mut at, Some(n))?;
        let offsets = section(&mut at, n.checked_add(1)?.checked_mul(4))?;
        let targets = section(&mut at, m.checked_mul(4))?;
        let weights = section(&mut at, m.checked_mul(weight_bytes))?;
        let priorities = section(
            &mut at,
            Some(if priorities { n.checked_mul(8)? } else { 0 }),
        )?;
        let (name_flags, name_offsets, name_text) = match names {
            Some(text) => (
                section(&mut at, Some(n))?,
                section(&mut at, n.checked_add(1)?.checked_mul(8))?,
                section(&mut at, Some(text))?,
            ),
            None => {
                let empty = section(&mut at, Some(0))?;
                (empty.clone(), empty.clone(), empty)
            }
        };
        Some(Layout {
            owners,
            offsets,
            targets,
            weights,
            priorities,
            name_flags,
            name_offsets,
            name_text,
            total: at,
        })
    }
}

/// The next section of `len` bytes at `*at`, which moves past it and its padding; `None`
/// on overflow.
fn section(at: &mut u64, len: Option<u64>) -> Option<std::ops::Range<usize>> {
    let len = len?;
    let start = *at;
    *at = at.checked_add(padded(len)?)?;
    Some(usize::try_from(start).ok()?..usize::try_from(start.checked_add(len)?).ok()?)
}

/// Little-endian plain numbers of the sections.
trait Le: Copy + Default + Send + Sync + bytemuck::Pod {
    /// The value of the first `size_of::<Self>()` bytes of `bytes`.
    fn read_le(bytes: &[u8]) -> Self;
    /// The value in little-endian order (as a value whose memory is those bytes).
    fn into_le(self) -> Self;
}

macro_rules! le {
    ($($t:ty),*) => {$(
        impl Le for $t {
            #[inline(always)]
            fn read_le(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(bytes[..size_of::<$t>()].try_into().expect("sized"))
            }
            #[inline(always)]
            fn into_le(self) -> $t {
                self.to_le()
            }
        }
    )*};
}
le!(u32, u64, i16, i32, i64);
