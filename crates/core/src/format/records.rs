//! What a chunk of text parses into: the records of a text format in file order
//! ([`Records`]), the chunks put back in order ([`Parsed`]), and the [`Grammar`] the
//! records were read by. Below both the chunk resolver ([`super::chunks`]) and the
//! formats' record parsers ([`super::mpg`], [`super::pgsolver`]), which fill and read them.
//!
//! Records are stored compactly, because every byte stored per edge or per record is
//! written to fresh memory (page faults, the kernel clearing each page) and read again
//! when the arena is laid out: ids are kept only once they stop counting up from the
//! chunk's first, positions only for records that do not start a line of their own
//! right after the previous one, and `.mpg` weights at 16 bits until one does not fit.

use crate::arena::Player;

use super::cursor::{Cursor, shift_position};
use super::error::{FormatError, Position};

/// The record grammar of a text format, with what the header said.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Grammar {
    /// `.mpg` lines: `ID OWNER SUCC:WEIGHT,... [NAME];`, ids and successors `<= max_id`.
    Mpg {
        /// The header's largest id.
        max_id: u64,
        /// The header's line (quoted in errors).
        header_line: u64,
    },
    /// `.gm` lines: `ID PRIORITY OWNER SUCC,... [NAME];`.
    Gm,
}

/// Edge weights of one chunk (`.mpg`): 16 bits while they fit (nearly every file), all of
/// them widened to 64 bits from the first that does not.
#[derive(Debug)]
pub(crate) enum ChunkWeights {
    /// Every weight so far fits in 16 bits.
    Narrow(Vec<i16>),
    /// Some weight does not.
    Wide(Vec<i64>),
}

impl Default for ChunkWeights {
    fn default() -> ChunkWeights {
        ChunkWeights::Narrow(Vec::new())
    }
}

impl ChunkWeights {
    /// Appends `weight`.
    #[inline(always)]
    pub fn push(&mut self, weight: i64) {
        match self {
            ChunkWeights::Narrow(weights) => match i16::try_from(weight) {
                Ok(w) => weights.push(w),
                Err(_) => self.widen_and_push(weight),
            },
            ChunkWeights::Wide(weights) => weights.push(weight),
        }
    }

    #[cold]
    fn widen_and_push(&mut self, weight: i64) {
        if let ChunkWeights::Narrow(narrow) = self {
            let mut wide: Vec<i64> = Vec::with_capacity(narrow.capacity());
            wide.extend(narrow.iter().map(|&w| i64::from(w)));
            *self = ChunkWeights::Wide(wide);
        }
        self.push(weight);
    }

    /// Weight `e`.
    pub fn get(&self, e: usize) -> i64 {
        match self {
            ChunkWeights::Narrow(weights) => weights[e].into(),
            ChunkWeights::Wide(weights) => weights[e],
        }
    }

    /// Room for `additional` more weights.
    pub fn reserve(&mut self, additional: usize) {
        match self {
            ChunkWeights::Narrow(weights) => weights.reserve(additional),
            ChunkWeights::Wide(weights) => weights.reserve(additional),
        }
    }

    /// Keeps the first `len` weights.
    pub fn truncate(&mut self, len: usize) {
        match self {
            ChunkWeights::Narrow(weights) => weights.truncate(len),
            ChunkWeights::Wide(weights) => weights.truncate(len),
        }
    }

    /// Smallest and largest weight (`(0, 0)` for none).
    pub fn range(&self) -> (i64, i64) {
        match self {
            ChunkWeights::Narrow(weights) => {
                let (lo, hi) = weights
                    .iter()
                    .fold((0i16, 0i16), |(lo, hi), &w| (lo.min(w), hi.max(w)));
                (i64::from(lo), i64::from(hi))
            }
            ChunkWeights::Wide(weights) => weights
                .iter()
                .fold((0, 0), |(lo, hi), &w| (lo.min(w), hi.max(w))),
        }
    }
}

/// The records of one chunk, in file order.
#[derive(Debug, Default)]
pub(crate) struct Records {
    /// The first record's id.
    first_id: u32,
    /// Every record's id, once some record's id is not `first_id + its index` (empty
    /// before: the ids are consecutive).
    ids: Vec<u32>,
    /// Each record's owner.
    pub owners: Vec<Player>,
    /// Where records start (line relative to the chunk, column), for the first record and
    /// every one not at column 1 of the line after the previous record's start: `(index,
    /// line, column)`; any other record starts one line below the one before it.
    starts: Vec<(u32, u64, u64)>,
    /// The line the last record started at.
    last_line: u64,
    /// End of each record's edges in `targets` (exclusive).
    pub ends: Vec<u32>,
    /// Edge targets, record after record.
    pub targets: Vec<u32>,
    /// Edge weights (`.mpg`).
    pub weights: ChunkWeights,
    /// Smallest and largest weight (`.mpg`; `(0, 0)` for none).
    pub weight_range: (i64, i64),
    /// Each record's priority (`.gm`).
    pub priorities: Vec<u64>,
    /// The largest successor and where it first appears (`.gm`; relative position).
    pub max_target: Option<(u32, Position)>,
    /// Names, by record index in this chunk.
    pub names: Vec<(u32, Box<str>)>,
}

impl Records {
    pub(super) fn with_capacity(text_len: usize) -> Records {
        // At least 4 bytes of text per edge and 8 per record in the files we know of
        // (capacity beyond what is used is never touched, so it costs no memory).
        let edges = text_len / 8 + 16;
        let records = text_len / 16 + 16;
        Records {
            owners: Vec::with_capacity(records),
            ends: Vec::with_capacity(records),
            targets: Vec::with_capacity(edges),
            ..Records::default()
        }
    }

    /// Number of records.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.owners.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }

    /// Edges of the complete records.
    #[inline(always)]
    pub fn edge_count(&self) -> usize {
        self.ends.last().map_or(0, |&e| e as usize)
    }

    /// The first record's id (0 when there are none).
    pub fn first_id(&self) -> u32 {
        self.first_id
    }

    /// Whether the ids are consecutive (`id(i) == first_id() + i`).
    pub fn consecutive(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id record `i` defines.
    #[inline(always)]
    pub fn id(&self, i: usize) -> u32 {
        match self.ids.get(i) {
            Some(&id) => id,
            None => self.first_id + i as u32,
        }
    }

    /// Every record's id, in file order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.id(i))
    }

    /// The position of record `i`, with the chunk starting at line `first_line`.
    pub fn position(&self, i: usize, first_line: u64) -> Position {
        let k = self
            .starts
            .partition_point(|&(index, ..)| index as usize <= i)
            - 1;
        let (index, line, column) = self.starts[k];
        let below = (i - index as usize) as u64;
        let column = if below == 0 { column } else { 1 };
        shift_position(
            Position {
                line: line + below,
                column,
            },
            first_line,
        )
    }

    /// Commits a record whose edges were pushed since the previous one.
    #[inline(always)]
    pub fn finish_record(&mut self, id: u32, owner: Player, at: Position) {
        let i = self.len();
        if i == 0 {
            self.first_id = id;
        } else if self.ids.is_empty() {
            if u64::from(id) != u64::from(self.first_id) + i as u64 {
                self.spell_out_ids(id);
            }
        } else {
            self.ids.push(id);
        }
        if i == 0 || at.column != 1 || at.line != self.last_line + 1 {
            self.starts.push((i as u32, at.line, at.column));
        }
        self.last_line = at.line;
        self.owners.push(owner);
        self.ends.push(self.targets.len() as u32);
    }

    /// The first id out of sequence: every id so far written out, then `id`.
    #[cold]
    fn spell_out_ids(&mut self, id: u32) {
        let first = self.first_id;
        self.ids.reserve(self.owners.capacity());
        self.ids.extend((0..self.len() as u32).map(|i| first + i));
        self.ids.push(id);
    }

    /// Drops the edges of a record that was not finished.
    pub(super) fn roll_back(&mut self) {
        let edges = self.edge_count();
        self.targets.truncate(edges);
        self.weights.truncate(edges);
        self.priorities.truncate(self.len());
        let len = self.len();
        self.names.retain(|&(i, _)| (i as usize) < len);
    }
}

/// Chunk records with the line their chunk starts at.
#[derive(Debug)]
pub(crate) struct Placed {
    /// The records.
    pub records: Records,
    /// The input line of the chunk's line 1.
    pub first_line: u64,
}

/// Every record of the input, chunk by chunk, and where the input ends.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The chunks in input order.
    pub chunks: Vec<Placed>,
    /// The position of the end of the input.
    pub end: Position,
}

impl Parsed {
    /// Total records.
    pub fn record_count(&self) -> usize {
        self.chunks.iter().map(|c| c.records.len()).sum()
    }

    /// Frees the records on the pool, chunk by chunk (their pages go back in parallel
    /// rather than on the calling thread, after the arena no longer needs them).
    pub fn free(self) {
        use rayon::prelude::*;
        self.chunks.into_par_iter().for_each(drop);
    }
}

/// Fails unless a successor (a digit) is next on vertex `id`'s line: at the end of the
/// text `expected` (the successors' syntax) was, elsewhere the vertex has no successors.
pub(crate) fn successors_follow(
    s: &mut Cursor<'_>,
    id: u32,
    expected: &str,
) -> Result<(), FormatError> {
    if matches!(s.peek(), Some(b'0'..=b'9')) {
        return Ok(());
    }
    let at = s.position();
    if s.peek().is_none() {
        return Err(s.unexpected(at, expected));
    }
    Err(FormatError::NoSuccessors {
        at,
        id: u64::from(id),
        found: s.describe_here(),
    })
}

/// What follows an edge of a `line` (`vertex`, `node`): `,` and another edge (true), `;` or
/// a name ending the line (false, the name kept in `r`); at the end of the text, an error
/// that `expected` was.
pub(crate) fn another_edge(
    s: &mut Cursor<'_>,
    r: &mut Records,
    line: &str,
    expected: &str,
) -> Result<bool, FormatError> {
    match s.peek() {
        Some(b',') => {
            s.bump();
            s.skip_blank();
            Ok(true)
        }
        Some(b';') => {
            s.bump();
            Ok(false)
        }
        Some(_) => {
            let name = s.name_ending(line)?;
            r.names.push((r.len() as u32, name));
            Ok(false)
        }
        None => {
            let at = s.position();
            Err(s.unexpected(at, expected))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_positions_read_back_as_given() {
        let mut r = Records::with_capacity(64);
        let at = |line, column| Position { line, column };
        let given = [
            (5, at(1, 3)),
            (6, at(2, 1)),
            (7, at(3, 1)),
            (2, at(5, 1)),
            (3, at(5, 9)),
            (4, at(6, 1)),
        ];
        for (k, &(id, position)) in given.iter().enumerate() {
            r.finish_record(id, Player::Zero, position);
            assert_eq!(r.consecutive(), k < 3);
        }
        for (i, &(id, position)) in given.iter().enumerate() {
            assert_eq!(r.id(i), id);
            assert_eq!(r.position(i, 10), shift_position(position, 10));
        }
        assert_eq!(r.ids().collect::<Vec<_>>(), vec![5, 6, 7, 2, 3, 4]);
        assert_eq!(r.starts.len(), 3);
    }

    #[test]
    fn weights_widen_when_one_does_not_fit() {
        let mut w = ChunkWeights::default();
        w.push(-3);
        w.push(40_000);
        w.push(7);
        assert!(matches!(&w, ChunkWeights::Wide(v) if v == &[-3, 40_000, 7]));
        assert_eq!(w.range(), (-3, 40_000));
    }
}
