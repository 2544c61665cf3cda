//! Per-vertex records of the three solution syntaxes, appended to a byte buffer without the
//! `fmt` machinery (integers through `itoa`). The CLI writers ([`super::write_json`] and
//! friends) and the service's stored-result renderer both go through these, so a solution
//! reads the same whichever way it was obtained.

use std::io::{self, Write};

use crate::arena::VertexId;
use crate::solve::{NO_MOVE, TOP};

use super::Summary;

/// Bytes gathered before a buffer is handed to the writer.
pub const CHUNK: usize = 1 << 16;

/// Whether and how strategies appear in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyField {
    /// No strategy key or column.
    Omitted,
    /// The owner's move where the owner wins (`null` / nothing where it does not).
    Included,
}

/// Whether credits appear in a JSON record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditField {
    /// `"credit": C|null` (the answer has credits).
    Included,
    /// No `credit` key: the answer has winners and strategies only (the parity solver's).
    Omitted,
}

impl CreditField {
    /// The field for an answer whose credits were (`true`) or were not computed.
    pub fn of(credits_computed: bool) -> CreditField {
        if credits_computed {
            CreditField::Included
        } else {
            CreditField::Omitted
        }
    }
}

/// A buffer of records that is flushed to `out` every [`CHUNK`] bytes.
#[derive(Debug)]
pub struct RecordBuffer {
    bytes: Vec<u8>,
    first: bool,
}

impl Default for RecordBuffer {
    fn default() -> RecordBuffer {
        RecordBuffer {
            bytes: Vec::with_capacity(CHUNK + 256),
            first: true,
        }
    }
}

impl RecordBuffer {
    /// A buffer whose first record follows earlier ones (a JSON record then opens with its
    /// separator): for pieces of a document formatted apart, see [`super::parallel`].
    pub fn continuing() -> RecordBuffer {
        RecordBuffer {
            first: false,
            ..RecordBuffer::default()
        }
    }

    /// Whether the buffer holds a full chunk.
    pub fn is_full(&self) -> bool {
        self.bytes.len() >= CHUNK
    }

    /// Takes the gathered bytes, leaving the buffer empty (records keep their separators).
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.bytes, Vec::with_capacity(CHUNK + 256))
    }

    /// Writes the gathered bytes to `out` and empties the buffer.
    pub fn drain_into(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.bytes)?;
        self.bytes.clear();
        Ok(())
    }

    /// Appends raw bytes.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn int(&mut self, value: impl itoa::Integer) {
        self.bytes
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    }

    /// `key`, then `value`, or `null` where there is none.
    fn number_or_null(&mut self, key: &[u8], value: Option<impl itoa::Integer>) {
        self.raw(key);
        match value {
            Some(value) => self.int(value),
            None => self.raw(b"null"),
        }
    }

    /// `{"id": V, "credit": C|null, "winner": W[, "strategy": S|null]}`, comma-separated,
    /// one per line.
    pub fn json_vertex(&mut self, v: VertexId, credit: u64, strategy: u32, field: StrategyField) {
        self.json_record(v, credit, strategy, CreditField::Included, field);
    }

    /// [`RecordBuffer::json_vertex`], or for an answer without credits
    /// (`CreditField::Omitted`) `{"id": V, "winner": W[, "strategy": S|null]}`, where `credit`
    /// only says who wins (⊤ for player 1).
    pub fn json_record(
        &mut self,
        v: VertexId,
        credit: u64,
        strategy: u32,
        credits: CreditField,
        field: StrategyField,
    ) {
        self.raw(if self.first { b"\n  " } else { b",\n  " });
        self.first = false;
        self.raw(b"{\"id\": ");
        self.int(v);
        if credits == CreditField::Included {
            self.number_or_null(b", \"credit\": ", (credit != TOP).then_some(credit));
        }
        self.raw(if credit == TOP {
            b", \"winner\": 1"
        } else {
            b", \"winner\": 0"
        });
        if field == StrategyField::Included {
            let strategy = (strategy != NO_MOVE).then_some(strategy);
            self.number_or_null(b", \"strategy\": ", strategy);
        }
        self.raw(b"}");
    }

    /// `ID CREDIT[ STRATEGY]` with `T` for ⊤ (the strategy only where the owner wins).
    pub fn text_line(&mut self, v: VertexId, credit: u64, strategy: u32, field: StrategyField) {
        self.int(v);
        if credit == TOP {
            self.raw(b" T");
        } else {
            self.raw(b" ");
            self.int(credit);
        }
        if field == StrategyField::Included && strategy != NO_MOVE {
            self.raw(b" ");
            self.int(strategy);
        }
        self.raw(b"\n");
    }

    /// `ID WINNER[ STRATEGY];` as PGSolver and Oink write it.
    pub fn paritysol_line(&mut self, v: VertexId, credit: u64, strategy: u32) {
        self.int(v);
        self.raw(if credit == TOP { b" 1" } else { b" 0" });
        if strategy != NO_MOVE {
            self.raw(b" ");
            self.int(strategy);
        }
        self.raw(b";\n");
    }
}

/// The JSON document's opening: `{["job": "ID", ]"summary": {…},\n "vertices": [`.
pub fn json_head(out: &mut impl Write, job: Option<&str>, summary: &Summary) -> io::Result<()> {
    out.write_all(b"{")?;
    if let Some(job) = job {
        out.write_all(b"\"job\": ")?;
        serde_json::to_writer(&mut *out, job)?;
        out.write_all(b", ")?;
    }
    out.write_all(b"\"summary\": ")?;
    serde_json::to_writer(&mut *out, summary)?;
    out.write_all(b",\n \"vertices\": [")
}

/// The JSON document's end.
pub const JSON_TAIL: &[u8] = b"\n]}\n";

/// The `paritysol` header line.
pub fn paritysol_head(out: &mut impl Write, n: usize) -> io::Result<()> {
    writeln!(out, "paritysol {n};")
}
