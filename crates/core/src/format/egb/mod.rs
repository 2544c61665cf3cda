//! `egb`, egsolve's binary arena format: the arena's own arrays, little-endian, behind a
//! versioned header and a CRC-32, so that loading is a checksum, a copy and a validation
//! pass per array (all parallel) instead of parsing text. `egsolve convert FILE --to egb`
//! writes it; every reader recognises it by its magic bytes, compressed or not. The full
//! specification is `docs/egb-format.md`; in short (version 1):
//!
//! ```text
//! offset size field
//!  0     8    magic 89 45 47 42 0d 0a 1a 0a ("\x89EGB\r\n\x1a\n")
//!  8     4    version (1)
//! 12     4    flags: 1 = names, 2 = priorities (a parity game), 4 = initial vertex
//! 16     4    bytes per weight: 2, 4 or 8 (0 for a parity game: its weights come
//!             from the priorities through the reduction)
//! 20     4    reserved (0)
//! 24     8    n, the number of vertices
//! 32     8    m, the number of edges
//! 40     8    the initial vertex (0 without the flag)
//! 48     8    bytes of name text (0 without names)
//! 56     4    CRC-32 (IEEE 802.3, as zlib's crc32) of bytes 0..56 then 64..end
//! 60     4    reserved (0)
//! 64          sections, each zero-padded to a multiple of 8 bytes:
//!             owners n × u8 (0: player 0, 1: player 1); successor offsets (n+1) × u32;
//!             successor targets m × u32; weights m × i16|i32|i64 (energy games);
//!             priorities n × u64 (parity games); with names: n × u8 flags (1: named),
//!             (n+1) × u64 offsets into the name text, the UTF-8 name text
//! ```
//!
//! Loading checks everything an [`crate::arena::Arena`] needs and names the offset of the
//! first offending byte ([`FormatError::Binary`]): header fields, the exact file length,
//! the checksum, owners, offsets, targets, names. Nothing in a file makes the loader read
//! out of bounds or allocate more than the file's length implies.

mod read;
mod write;

use super::error::FormatError;

pub(crate) use read::load;
pub use write::write_egb;

/// The magic bytes at offset 0 (PNG-style: a non-ASCII byte, the name, and line-ending bytes
/// that a text-mode transfer would damage).
pub const MAGIC: [u8; 8] = *b"\x89EGB\r\n\x1a\n";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;
/// Header length.
const HEADER: usize = 64;
/// Flag: the file has names.
const FLAG_NAMES: u32 = 1;
/// Flag: the file has priorities (a parity game).
const FLAG_PRIORITIES: u32 = 2;
/// Flag: the file names an initial vertex.
const FLAG_INITIAL: u32 = 4;
/// Where the checksum is (the 4 bytes it covers around).
const CHECKSUM_AT: usize = 56;

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

/// Where each section lies in a file with this header.
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
