//! Reading and writing games: EGSolver arenas (`.mpg`), PGSolver parity games (`.gm`,
//! priorities compressed, then reduced to energy games when that fits in 64 bits:
//! [`parity_arena`]), egsolve JSON, the binary arena format `egb` ([`egb`]), and
//! Oink/PGSolver `paritysol` solutions.
//!
//! - The compression is recognised by magic bytes (gzip with any number of members, bzip2,
//!   zstd, else plain) and decompressed while streaming ([`source`]); `egb` by its own magic.
//! - The format is given ([`ReadOptions::format`]) or recognised from the first tokens
//!   ([`detect`]).
//! - The text readers cut the decompressed text into chunks at newlines and parse the
//!   chunks on all threads ([`pipeline`], [`chunks`], [`cursor`]): files are memory-mapped
//!   and parsed in place, streams are decompressed on the calling thread while the pool
//!   parses the blocks already cut. The result, errors included, is exactly what one
//!   sequential pass gives. JSON (for small games) is read whole through serde_json.
//! - Every malformed input gets a [`FormatError`] with line, column, what was found and
//!   what was expected (the byte offset, for `egb`); no input makes a reader panic or hang
//!   (property tests feed arbitrary and mutated bytes).
//!
//! This module owns I/O formats only: it builds [`Arena`]s through the arena's constructors
//! and knows nothing about solving.

mod assemble;
mod chunks;
mod cursor;
mod detect;
mod digits;
pub mod egb;
mod error;
mod fast;
mod json;
mod mpg;
pub mod parity;
mod paritysol;
mod pgsolver;
mod pipeline;
mod records;
mod source;
mod vertices;
mod write;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::arena::{Arena, SharedBytes, StableBytes};

pub use egb::{write_egb, write_egb_v1};
pub use error::{Compression, FormatError, Position};
pub use json::write_json;
pub use parity::{
    ParityInfo, Reduction, ReductionOverflow, parity_arena, reduce_classes, reduce_parity,
    vertex_weights,
};
pub use paritysol::{ParitySolLine, read_paritysol, read_paritysol_with};
pub use write::write_mpg;

/// The largest vertex id any reader accepts (so that `n = id + 1 < u32::MAX`).
pub const MAX_VERTEX_ID: u64 = u32::MAX as u64 - 2;

/// Vectors are pre-sized from header counts at most this far (a header cannot force a
/// large allocation; they grow past it when the body really is larger).
pub(crate) const PRESIZE_VERTICES: usize = 1 << 20;

/// The input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// EGSolver arena text (`.mpg`); names `mpg`, `egsolver`.
    #[serde(alias = "egsolver")]
    Mpg,
    /// PGSolver max-parity game (`.gm`); names `gm`, `pgsolver`.
    #[serde(rename = "gm", alias = "pgsolver")]
    PgSolver,
    /// egsolve JSON (`docs/json-format.md`); name `json`.
    Json,
}

impl Format {
    /// Every format, for help texts.
    pub const ALL: &'static [Format] = &[Format::Mpg, Format::PgSolver, Format::Json];

    /// The main name (`mpg`, `gm`, `json`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Mpg => "mpg",
            Format::PgSolver => "gm",
            Format::Json => "json",
        }
    }
}

impl fmt::Display for Format {
    /// The main name, as [`Format::name`] and serde write it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}`: expected mpg (or egsolver), gm (or pgsolver) or json")]
pub struct UnknownFormatName(pub String);

impl FromStr for Format {
    type Err = UnknownFormatName;

    fn from_str(s: &str) -> Result<Format, UnknownFormatName> {
        match s.to_ascii_lowercase().as_str() {
            "mpg" | "egsolver" => Ok(Format::Mpg),
            "gm" | "pgsolver" => Ok(Format::PgSolver),
            "json" => Ok(Format::Json),
            _ => Err(UnknownFormatName(s.to_string())),
        }
    }
}

/// How to read an input.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The format, or `None` to recognise it from the content.
    pub format: Option<Format>,
    /// Fail with [`FormatError::TooLarge`] past this many *decompressed* bytes.
    pub max_bytes: Option<u64>,
    /// Incremented with the bytes taken from the reader as given (compressed bytes for a
    /// compressed file, so it can be compared with the file size for a progress bar).
    pub bytes_read: Option<Arc<AtomicU64>>,
    /// Parsing threads: 0 for the current rayon pool (all cores by default), else a pool of
    /// this many for the read.
    pub threads: usize,
    /// Text per chunk in bytes (default: sized from the input and the thread count). Tests
    /// set it tiny so that chunk boundaries fall everywhere; results never depend on it.
    pub chunk_bytes: Option<usize>,
    /// Called with an `egb` energy game's successor side once its header passes, before
    /// the arena's checks (a GPU upload beside them: [`egb::EarlySuccessors`]).
    pub early_successors: Option<egb::SuccessorsHook>,
}

/// A game as read: the energy arena (reduced, for parity games — with zero weights when the
/// reduction does not fit, see [`ParityInfo::reduction`]), the parity data if the input was
/// a parity game, and the initial vertex if the file named one (`start ID;` in `.gm`,
/// `initial` in JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// The energy game to solve (for a parity game: its reduction, or only its graph when
    /// the reduction does not fit; solve parity games with `solve::solve_game`).
    pub arena: Arena,
    /// The priorities, for parity inputs.
    pub parity: Option<ParityInfo>,
    /// The initial vertex, where the file names one.
    pub initial: Option<u32>,
}

/// Reads a game from `reader` (compressed or not), decompressing on the calling thread
/// while the chunks already decompressed are parsed on the pool.
pub fn read(reader: impl Read, opts: &ReadOptions) -> Result<Game, FormatError> {
    pipeline::read_stream(reader, opts)
}

/// Reads a game from bytes in memory (compressed or not): plain text is parsed in place,
/// on all threads.
pub fn read_bytes(bytes: &[u8], opts: &ReadOptions) -> Result<Game, FormatError> {
    pipeline::read_slice(bytes, opts)
}

/// Reads a game from the file at `path`, or from standard input when `path` is `-`. A
/// regular file is memory-mapped and read with [`read_bytes`].
pub fn read_path(path: &Path, opts: &ReadOptions) -> Result<Game, FormatError> {
    if path.as_os_str() == "-" {
        return read(io::stdin().lock(), opts);
    }
    let file = File::open(path).map_err(|source| FormatError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    match map_file(&file) {
        // An uncompressed `egb` file is used where it lies in the map (version 2: no copy).
        Some(map) if egb::is_egb(&map) => read_mapped(map, opts),
        Some(map) => read_bytes(&map, opts),
        None => read(file, opts),
    }
}

/// A read-only memory map that arenas may borrow their arrays from.
pub(crate) struct MappedFile(pub(crate) memmap2::Mmap);

// SAFETY: a map's address and length never change while it lives, and it is read-only.
// That nothing *else* writes the file while it is mapped is the contract of every mapped
// input here (see `map_file`): egsolve's tools write a new file, never rewrite one in
// place, and the service never changes a stored arena.
unsafe impl StableBytes for MappedFile {
    fn bytes(&self) -> &[u8] {
        &self.0
    }

    fn release(&self, range: std::ops::Range<usize>) {
        #[cfg(unix)]
        if range.end <= self.0.len() && !range.is_empty() {
            // SAFETY: the map is of a file and never written, so dropping its pages changes
            // no byte: a later read faults them in again from the file (its page cache).
            let _ = unsafe {
                self.0.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    range.start,
                    range.len(),
                )
            };
        }
    }
}

/// Anonymous memory a caller filled, then made read-only: kept whole (its pages are its
/// only copy, so [`StableBytes::release`] keeps them).
struct AnonymousMap(memmap2::Mmap);

// SAFETY: as for `MappedFile`; the map is private to this process and read-only.
unsafe impl StableBytes for AnonymousMap {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Reads the `egb` file mapped in `map`: version 2's arrays stay in the map (the arena
/// holds it), after the checksums and the arena's checks ([`egb::load_shared`]).
pub fn read_mapped(map: memmap2::Mmap, opts: &ReadOptions) -> Result<Game, FormatError> {
    read_shared(Arc::new(MappedFile(map)), opts)
}

/// `map` (anonymous memory the caller filled, made read-only) as bytes an arena may borrow
/// its arrays from ([`read_shared`]).
pub fn shared_anonymous(map: memmap2::Mmap) -> SharedBytes {
    Arc::new(AnonymousMap(map))
}

/// Reads the `egb` file held by `bytes` (a map, or a buffer filled in memory): version 2's
/// arrays stay where they lie and the arena holds `bytes`, after the checksums and the
/// arena's checks ([`egb::load_shared`]), on `opts.threads` threads (0: the current pool).
pub fn read_shared(bytes: SharedBytes, opts: &ReadOptions) -> Result<Game, FormatError> {
    let len = bytes.bytes().len() as u64;
    if let Some(limit) = opts.max_bytes {
        if len > limit {
            return Err(FormatError::TooLarge { limit });
        }
    }
    if let Some(counter) = &opts.bytes_read {
        counter.fetch_add(len, std::sync::atomic::Ordering::Relaxed);
    }
    let early = opts.early_successors.as_ref();
    match opts.threads {
        0 => egb::load_shared_early(&bytes, early),
        threads => rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| FormatError::Io(io::Error::other(e)))?
            .install(|| egb::load_shared_early(&bytes, early)),
    }
}

/// A read-only map of a regular, non-empty file; `None` where mapping is not possible (a
/// pipe, a device, an empty file), so the caller reads the file as a stream instead.
fn map_file(file: &File) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    // SAFETY: the map is read-only; it lives while the file is parsed, or, for an `egb`
    // file, as long as the arena whose arrays it holds. A file truncated by another process
    // meanwhile would fault the reader (SIGBUS), and one rewritten in place would change
    // the arena under it; game files are not rewritten in place by the tools that make
    // them (they write a new file), and the service's arena store never changes a stored
    // file.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::WillNeed);
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_parse_and_serialize_alike() {
        for (text, format) in [
            ("mpg", Format::Mpg),
            ("EGSolver", Format::Mpg),
            ("gm", Format::PgSolver),
            ("pgsolver", Format::PgSolver),
            ("json", Format::Json),
        ] {
            assert_eq!(text.parse::<Format>(), Ok(format));
            let quoted = format!("\"{}\"", text.to_ascii_lowercase());
            assert_eq!(serde_json::from_str::<Format>(&quoted).unwrap(), format);
        }
        for format in Format::ALL {
            assert_eq!(
                serde_json::to_string(format).unwrap(),
                format!("\"{format}\"")
            );
            assert_eq!(format.name().parse::<Format>(), Ok(*format));
        }
        assert!(
            "xml"
                .parse::<Format>()
                .unwrap_err()
                .to_string()
                .contains("expected mpg")
        );
    }

    /// A mapped `egb` file's predecessors released (their pages dropped) read back the
    /// same, and so does a game in anonymous memory, which keeps its pages.
    #[test]
    fn released_predecessors_read_back_the_same() {
        // 40,000 vertices with 1 to 6 edges each, drawn by a fixed LCG, as `.mpg` text.
        let (n, mut x) = (40_000u64, 7u64);
        let mut draw = |below: u64| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) % below
        };
        let mut text = format!("{};\n", n - 1);
        for v in 0..n {
            let owner = if draw(10) < 4 { "MIN" } else { "MAX" };
            let edges: Vec<String> = (0..=draw(6))
                .map(|_| format!("{}:{}", draw(n), draw(601) as i64 - 300))
                .collect();
            text += &format!("{v} {owner} {};\n", edges.join(","));
        }
        let game = read_bytes(text.as_bytes(), &ReadOptions::default()).unwrap();
        let mut bytes = Vec::new();
        egb::write_egb(&game, &mut bytes).unwrap();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &bytes).unwrap();
        let mapped = read_path(file.path(), &ReadOptions::default()).unwrap();
        let mut anonymous = memmap2::MmapMut::map_anon(bytes.len()).unwrap();
        anonymous.copy_from_slice(&bytes);
        let anonymous = shared_anonymous(anonymous.make_read_only().unwrap());
        let in_memory = read_shared(anonymous, &ReadOptions::default()).unwrap();
        for read in [mapped, in_memory] {
            assert!(read.arena.mapped_bytes() > 0, "the arrays are borrowed");
            read.arena.release_predecessors();
            read.arena.release_predecessors();
            assert_eq!(read, game);
        }
    }
}
