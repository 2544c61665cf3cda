//! [`FormatError`]: everything that can be wrong with an input file, each variant saying where
//! (line and column, 1-based, columns counted in bytes), what was found there, what was
//! expected, and what to do about it.

use std::fmt;
use std::io;

use crate::arena::ArenaError;

use super::parity::ReductionOverflow;

/// A place in the (decompressed) input text: 1-based line, 1-based byte column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// Line number, starting at 1.
    pub line: u64,
    /// Byte column within the line, starting at 1.
    pub column: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A compression format recognised by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// No compression: the bytes are the text.
    Plain,
    /// gzip (`1f 8b`), possibly several members concatenated.
    Gzip,
    /// bzip2 (`BZh`), possibly several streams concatenated.
    Bzip2,
    /// Zstandard (`28 b5 2f fd`), possibly several frames.
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::Plain => "plain",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
        })
    }
}

/// Why an input could not be read as a game.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Something other than what the grammar allows at this point.
    #[error("{at}: found {found}, expected {expected}; fix the file or check --format")]
    Syntax {
        /// Where the unexpected text starts.
        at: Position,
        /// The text found there, quoted, or `end of input`.
        found: String,
        /// What the grammar allows there.
        expected: String,
    },
    /// The text ends in the middle of a line or before a required part.
    #[error(
        "{at}: found end of input, expected {expected}; the file looks truncated, \
         regenerate or re-download it"
    )]
    UnexpectedEnd {
        /// The end of the input.
        at: Position,
        /// What was still expected.
        expected: String,
    },
    /// An owner field that is not one of the allowed owners.
    #[error("{at}: found owner {found}, expected {expected}")]
    BadOwner {
        /// Where the owner field starts.
        at: Position,
        /// The owner text found.
        found: String,
        /// The allowed owners in this format.
        expected: &'static str,
    },
    /// A number that does not fit its field.
    #[error("{at}: found {what} {found}, expected a {what} between {min} and {max}")]
    OutOfRange {
        /// Where the number starts.
        at: Position,
        /// What the number is (`vertex id`, `weight`, `priority`, ...).
        what: &'static str,
        /// The number as written (possibly shortened).
        found: String,
        /// Smallest allowed value.
        min: String,
        /// Largest allowed value.
        max: String,
    },
    /// A vertex id that never gets its own line.
    #[error(
        "{at}: found no line for vertex {id}, expected every vertex id {expected}; add the \
         missing vertex or fix the header"
    )]
    MissingVertex {
        /// Where the input ends (or the header that promised the vertex).
        at: Position,
        /// The first id without a line.
        id: u64,
        /// The id range that must be present, e.g. `0..=99 exactly once`.
        expected: String,
    },
    /// A vertex defined twice.
    #[error(
        "{at}: found vertex {id} a second time (first at line {first_line}), expected each \
         vertex exactly once; remove or renumber one of them"
    )]
    DuplicateVertex {
        /// Where the second definition starts.
        at: Position,
        /// The repeated id.
        id: u64,
        /// Line of the first definition.
        first_line: u64,
    },
    /// An edge to a vertex that does not exist.
    #[error(
        "{at}: found successor {target}, expected a vertex of this game ({expected}); add \
         vertex {target} or fix the edge"
    )]
    DanglingSuccessor {
        /// Where the reference is written.
        at: Position,
        /// The id referred to.
        target: u64,
        /// The vertex ids that exist, e.g. `0..=99`.
        expected: String,
    },
    /// A vertex line with no edge at all.
    #[error(
        "{at}: found {found}, expected at least one successor of vertex {id}: every vertex \
         needs an outgoing edge (add a self-loop if it is a sink)"
    )]
    NoSuccessors {
        /// Where the successor list should start.
        at: Position,
        /// The vertex without successors.
        id: u64,
        /// What was found instead (`";"`, a name, ...).
        found: String,
    },
    /// The header's counts disagree with the body.
    #[error("{at}: found a header saying {declared}, expected it to match the {actual}")]
    HeaderMismatch {
        /// Where the header's number is.
        at: Position,
        /// What the header says.
        declared: String,
        /// What the body contains.
        actual: String,
    },
    /// JSON that is not valid JSON or does not match the schema (see `docs/json-format.md`).
    #[error("{at}: {message}; see docs/json-format.md for the schema")]
    Json {
        /// Where serde_json stopped.
        at: Position,
        /// serde_json's description of the problem.
        message: String,
    },
    /// JSON that parses but does not describe a valid game.
    #[error("at {path}: found {found}, expected {expected}; see docs/json-format.md")]
    JsonGame {
        /// A path such as `vertices[3].edges[1]`.
        path: String,
        /// What was found there.
        found: String,
        /// What was expected.
        expected: String,
    },
    /// The compressed stream ends early or has bad data.
    #[error(
        "the {compression} stream is truncated or corrupt (after {decompressed} decompressed \
         bytes): {detail}; the file is damaged, regenerate or re-download it"
    )]
    CorruptCompressed {
        /// The compression recognised by the magic bytes.
        compression: Compression,
        /// Decompressed bytes delivered before the failure.
        decompressed: u64,
        /// The decompressor's message.
        detail: String,
    },
    /// A binary arena (`egb`) that is damaged or inconsistent.
    #[error(
        "byte {offset}: {problem}; the egb file is damaged or was not written by egsolve, \
         write it again with `egsolve convert FILE --to egb`"
    )]
    Binary {
        /// Offset of the first offending byte in the file.
        offset: u64,
        /// What is wrong there.
        problem: String,
    },
    /// The content matches none of the supported formats.
    #[error(
        "{at}: found {found}, expected the start of an EGSolver arena (.mpg: `MAXID;` then \
         `ID MAX|MIN SUCC:WEIGHT,...;`), a PGSolver parity game (.gm: `parity N;` or \
         `ID PRIORITY OWNER SUCC,...;`) or egsolve JSON (`{{\"vertices\": [...]}}`); pass \
         --format mpg|gm|json if the file is one of these"
    )]
    UnknownFormat {
        /// Where detection gave up.
        at: Position,
        /// What was found there.
        found: String,
    },
    /// More decompressed bytes than allowed.
    #[error(
        "the input is larger than the limit of {limit} bytes (counted after decompression); \
         raise the limit or send a smaller game"
    )]
    TooLarge {
        /// The limit that was passed.
        limit: u64,
    },
    /// The parity reduction's weights or bound do not fit in 64 bits.
    #[error(transparent)]
    Reduction(#[from] ReductionOverflow),
    /// The arena constructor refused the graph (too many vertices or edges).
    #[error("the game is not a valid arena: {0}")]
    Arena(#[from] ArenaError),
    /// The input file could not be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The path given.
        path: std::path::PathBuf,
        /// Why opening failed.
        source: io::Error,
    },
    /// Reading the underlying file or stream failed.
    #[error("reading the input failed: {0}")]
    Io(#[from] io::Error),
}

impl FormatError {
    /// The line and column this error points at, if it has one.
    pub fn position(&self) -> Option<Position> {
        use FormatError::*;
        match self {
            Syntax { at, .. }
            | UnexpectedEnd { at, .. }
            | BadOwner { at, .. }
            | OutOfRange { at, .. }
            | MissingVertex { at, .. }
            | DuplicateVertex { at, .. }
            | DanglingSuccessor { at, .. }
            | NoSuccessors { at, .. }
            | HeaderMismatch { at, .. }
            | Json { at, .. }
            | UnknownFormat { at, .. } => Some(*at),
            JsonGame { .. }
            | Binary { .. }
            | Open { .. }
            | CorruptCompressed { .. }
            | TooLarge { .. }
            | Reduction(_)
            | Arena(_)
            | Io(_) => None,
        }
    }

    /// Whether the input is at fault (as opposed to the system: I/O errors).
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, FormatError::Io(_) | FormatError::Open { .. })
    }
}
