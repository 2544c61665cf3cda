//! What a chunk of text parses into: the records of a text format in file order
//! ([`Records`]), the chunks put back in order ([`Parsed`]), and the [`Grammar`] the
//! records were read by. Below both the chunk resolver ([`super::chunks`]) and the
//! formats' record parsers ([`super::mpg`], [`super::pgsolver`]), which fill and read them.

use crate::arena::Player;

use super::cursor::shift_position;
use super::error::Position;

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

/// The records of one chunk, in file order.
#[derive(Debug, Default)]
pub(crate) struct Records {
    /// The id each record defines.
    pub ids: Vec<u32>,
    /// Each record's owner.
    pub owners: Vec<Player>,
    /// Where each record starts: line (relative to the chunk) and column, the column
    /// `u32::MAX` when it does not fit (then it is in `long_columns`).
    pub at: Vec<(u32, u32)>,
    /// Columns of `u32::MAX` or more, by record index (lines longer than 4 GiB).
    pub long_columns: Vec<(u32, u64)>,
    /// End of each record's edges in `targets` (exclusive).
    pub ends: Vec<u32>,
    /// Edge targets, record after record.
    pub targets: Vec<u32>,
    /// Edge weights (`.mpg`).
    pub weights: Vec<i64>,
    /// Smallest and largest weight (`.mpg`; `(0, 0)` for none).
    pub weight_range: (i64, i64),
    /// Each record's priority (`.gm`).
    pub priorities: Vec<u64>,
    /// The largest successor and where it first appears (`.gm`; relative position).
    pub max_target: Option<(u32, Position)>,
    /// Names, by record index in this chunk.
    pub names: Vec<(u32, Box<str>)>,
    /// Whether the ids are consecutive (`ids[i] == ids[0] + i`).
    pub consecutive: bool,
}

impl Records {
    pub(super) fn with_capacity(text_len: usize) -> Records {
        // About 12 bytes of text per edge and 24 per record in typical files.
        let edges = text_len / 8 + 16;
        let records = text_len / 16 + 16;
        Records {
            ids: Vec::with_capacity(records),
            owners: Vec::with_capacity(records),
            at: Vec::with_capacity(records),
            ends: Vec::with_capacity(records),
            targets: Vec::with_capacity(edges),
            consecutive: true,
            ..Records::default()
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Edges of the complete records.
    pub fn edge_count(&self) -> usize {
        self.ends.last().map_or(0, |&e| e as usize)
    }

    /// The position of record `i`, with the chunk starting at line `first_line`.
    pub fn position(&self, i: usize, first_line: u64) -> Position {
        let (line, column) = self.at[i];
        let column = if column == u32::MAX {
            let k = self
                .long_columns
                .binary_search_by_key(&(i as u32), |&(r, _)| r)
                .expect("long columns are recorded");
            self.long_columns[k].1
        } else {
            u64::from(column)
        };
        shift_position(
            Position {
                line: u64::from(line),
                column,
            },
            first_line,
        )
    }

    /// Commits a record whose edges were pushed since the previous one.
    #[inline(always)]
    pub fn finish_record(&mut self, id: u32, owner: Player, at: Position) {
        if let Some(&first) = self.ids.first() {
            self.consecutive &= id as usize == first as usize + self.ids.len();
        }
        if at.column >= u64::from(u32::MAX) {
            self.long_columns.push((self.ids.len() as u32, at.column));
        }
        self.at
            .push((at.line as u32, at.column.min(u64::from(u32::MAX)) as u32));
        self.ids.push(id);
        self.owners.push(owner);
        self.ends.push(self.targets.len() as u32);
    }

    /// Drops the edges of a record that was not finished.
    pub(super) fn roll_back(&mut self) {
        let edges = self.edge_count();
        self.targets.truncate(edges);
        self.weights.truncate(edges);
        self.priorities.truncate(self.ids.len());
        self.names.retain(|&(i, _)| (i as usize) < self.ids.len());
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
}
