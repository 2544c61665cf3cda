//! Text cut into chunks, parsed independently, put back together in order.
//!
//! Chunks are cut just after a newline, where no comment or token can be open (comments end
//! at the line end and a quoted name may not span a line unless its newline is escaped).
//! A record may still span lines, so each chunk is parsed *speculatively*, as if it began
//! between two records; its outcome says whether it ended between records ([`ChunkEnd::Clean`]),
//! inside one ([`ChunkEnd::Open`]: the record was cut by the end of the chunk), or on a
//! real error ([`ChunkEnd::Failed`]). The [`Resolver`] takes the outcomes in input order:
//! a chunk that follows a clean end is accepted as parsed; one that follows an open record
//! is parsed again from that record's start (the open tail of the previous chunk plus this
//! chunk), so the result is exactly what one sequential pass would give, whatever the chunk
//! size. The first error in input order wins, as in a sequential pass.
//!
//! Each chunk counts its newlines, so the resolver knows every chunk's first line number and
//! turns chunk-relative positions into absolute ones.

use super::cursor::{Cursor, shift_lines, shift_position};
use super::error::{FormatError, Position};
use super::records::{Grammar, Parsed, Placed, Records};
use super::{mpg, pgsolver};

/// How a chunk's text ended.
#[derive(Debug)]
pub(crate) enum ChunkEnd {
    /// Between records; the position of the end (relative).
    Clean(Position),
    /// Inside the record starting at byte `tail` of the chunk, at position `at`; `error` is
    /// what that record's parse said at the end (the answer if no text follows).
    Open {
        tail: usize,
        at: Position,
        error: FormatError,
    },
    /// A malformed record (relative position).
    Failed(FormatError),
}

/// A chunk parsed on its own.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Its complete records.
    pub records: Records,
    /// Newline bytes in its text.
    pub newlines: u64,
    /// How it ended.
    pub end: ChunkEnd,
}

/// Parses `text` (whose first byte is at `first_column` of its line) as a run of records.
pub(crate) fn parse_chunk(grammar: Grammar, text: &[u8], first_column: u64) -> Outcome {
    let newlines = memchr::memchr_iter(b'\n', text).count() as u64;
    let mut records = Records::with_capacity(text.len());
    if let Grammar::Mpg { .. } = grammar {
        records.weights.reserve(text.len() / 8 + 16);
    }
    let mut s = Cursor::new(text, first_column);
    let end = loop {
        s.skip_blank();
        if s.peek().is_none() {
            break ChunkEnd::Clean(s.position());
        }
        s.clear_hit_end();
        let tail = s.offset();
        let at = s.position();
        let parsed = match grammar {
            Grammar::Mpg {
                max_id,
                header_line,
            } => mpg::parse_record(&mut s, &mut records, max_id, header_line, at),
            Grammar::Gm => pgsolver::parse_record(&mut s, &mut records, at),
        };
        if let Err(error) = parsed {
            records.roll_back();
            break if s.hit_end() {
                ChunkEnd::Open { tail, at, error }
            } else {
                ChunkEnd::Failed(error)
            };
        }
    };
    if let Grammar::Mpg { .. } = grammar {
        records.weight_range = records.weights.range();
    }
    Outcome {
        records,
        newlines,
        end,
    }
}

/// The open record carried into the next chunk.
struct Carry {
    text: Vec<u8>,
    at: Position,
    error: FormatError,
}

/// Takes chunk outcomes in input order (see the module docs).
pub(crate) struct Resolver {
    grammar: Grammar,
    /// The input line where the next chunk starts.
    next_line: u64,
    carry: Option<Carry>,
    end: Position,
    chunks: Vec<Placed>,
    /// The first error, once found (then everything after it is ignored).
    error: Option<FormatError>,
}

impl Resolver {
    /// A resolver whose first chunk starts at input line `first_line`.
    pub(crate) fn new(grammar: Grammar, first_line: u64) -> Resolver {
        Resolver {
            grammar,
            next_line: first_line,
            carry: None,
            end: Position {
                line: first_line,
                column: 1,
            },
            chunks: Vec::new(),
            error: None,
        }
    }

    /// Whether an error has been found (later chunks need not be parsed).
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Takes the next chunk: its text and, if it was parsed speculatively from its start, that
    /// outcome (else it is parsed here).
    pub(crate) fn accept(&mut self, text: &[u8], first_column: u64, outcome: Option<Outcome>) {
        if self.error.is_some() {
            return;
        }
        let (outcome, first_line, joined) = match self.carry.take() {
            Some(carry) => {
                // The previous chunk ended inside a record: parse again from its start.
                let mut joined = carry.text;
                joined.extend_from_slice(text);
                let outcome = parse_chunk(self.grammar, &joined, carry.at.column);
                (outcome, carry.at.line, Some(joined))
            }
            None => {
                let outcome =
                    outcome.unwrap_or_else(|| parse_chunk(self.grammar, text, first_column));
                (outcome, self.next_line, None)
            }
        };
        let text = joined.as_deref().unwrap_or(text);
        match outcome.end {
            ChunkEnd::Clean(end) => {
                self.end = shift_position(end, first_line);
                self.next_line = first_line + outcome.newlines;
            }
            ChunkEnd::Open { tail, at, error } => {
                self.carry = Some(Carry {
                    text: text[tail..].to_vec(),
                    at: shift_position(at, first_line),
                    error: shift_lines(error, first_line),
                });
            }
            ChunkEnd::Failed(error) => {
                self.error = Some(shift_lines(error, first_line));
            }
        }
        if !outcome.records.is_empty() {
            self.chunks.push(Placed {
                records: outcome.records,
                first_line,
            });
        }
    }

    /// The records of the whole input, or its first error. Call after the last chunk, with
    /// the input complete (a record still open then is cut by the end of the input).
    pub(crate) fn finish(mut self) -> Result<Parsed, FormatError> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        if let Some(carry) = self.carry.take() {
            return Err(carry.error);
        }
        Ok(Parsed {
            chunks: self.chunks,
            end: self.end,
        })
    }

    /// The first error found so far, if any (for an input whose reading failed).
    pub(crate) fn into_error(self) -> Option<FormatError> {
        self.error
    }
}

/// How far past a chunk's nominal end a cut looks for a newline that ends a record.
const CUT_SEARCH: usize = 64 << 10;

/// Just after the first newline at or after `from` that ends a record (a `;` before it,
/// blanks aside) within [`CUT_SEARCH`] bytes, else just after the first newline at or after
/// `from`; `None` without one. A chunk that starts between records parses on its own: a
/// cut inside a record (one that spans lines) makes the resolver parse the next chunk
/// again on its own thread.
pub(crate) fn cut_after(text: &[u8], from: usize) -> Option<usize> {
    let first = from + memchr::memchr(b'\n', text.get(from..)?)?;
    let limit = first.saturating_add(CUT_SEARCH).min(text.len());
    let mut newline = first;
    loop {
        let before = text[newline.saturating_sub(16)..newline]
            .iter()
            .rev()
            .find(|&&b| !matches!(b, b' ' | b'\t' | b'\r'));
        if before == Some(&b';') {
            return Some(newline + 1);
        }
        match memchr::memchr(b'\n', &text[newline + 1..limit]) {
            Some(i) => newline += 1 + i,
            None => return Some(first + 1),
        }
    }
}

/// Where to cut `text` into chunks of about `chunk_bytes`: the end of each chunk, just
/// after a newline (see [`cut_after`]; the last one is `text.len()`).
pub(crate) fn cut_points(text: &[u8], chunk_bytes: usize) -> Vec<usize> {
    let mut cuts = Vec::with_capacity(text.len() / chunk_bytes.max(1) + 1);
    let mut start = 0;
    while text.len() - start > chunk_bytes {
        match cut_after(text, start + chunk_bytes) {
            Some(cut) if cut < text.len() => {
                cuts.push(cut);
                start = cut;
            }
            _ => break,
        }
    }
    cuts.push(text.len());
    cuts
}
