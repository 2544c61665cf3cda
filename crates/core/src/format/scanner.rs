//! The streaming tokenizer of the `paritysol` reader: a large block buffer filled from a
//! [`Source`], scanned byte by byte with hand-written integer parsing, whitespace and
//! comment skipping (`#`, `%`, `//` to the end of the line), and line/column tracking for
//! error messages. (The game readers parse chunks in parallel with
//! [`super::cursor::Cursor`], which gives the same messages; [`describe`] is shared.)
//!
//! Lines are counted only while skipping whitespace and comments (the only places where a
//! newline can occur), and the column is derived from the absolute offset of the line start,
//! so tracking positions costs nothing per token.
//!
//! Read failures and the size limit do not travel through every call: the scanner records
//! the first such error, then behaves as if the input ended. Readers finish through
//! [`Scanner::fail`], which prefers the recorded error over the "unexpected end" it caused.

use super::error::{Compression, FormatError, Position};
use super::source::Source;

/// Size of the decompressed-text buffer once the input proves large.
const BLOCK: usize = 1 << 20;
/// Initial buffer size (small inputs, e.g. JSON from scripts, never touch a full block).
const FIRST_BLOCK: usize = 64 << 10;

/// How much more of a compressed input [`Scanner::fail`] decompresses to look for damage.
const DRAIN_LIMIT: u64 = 256 << 20;

/// Longest token text quoted in an error message.
const QUOTE_MAX: usize = 24;

/// A streaming tokenizer over decompressed text.
pub(crate) struct Scanner<'r> {
    source: Source<'r>,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Absolute offset of `buf[0]`.
    base: u64,
    /// 1-based current line.
    line: u64,
    /// Absolute offset of the first byte of the current line.
    line_start: u64,
    max_bytes: Option<u64>,
    /// The first read failure or limit breach, reported in place of the end it causes.
    stashed: Option<FormatError>,
}

impl<'r> Scanner<'r> {
    /// A scanner over `source`, failing with [`FormatError::TooLarge`] past `max_bytes`.
    pub(crate) fn new(source: Source<'r>, max_bytes: Option<u64>) -> Scanner<'r> {
        Scanner {
            source,
            buf: vec![0; FIRST_BLOCK],
            pos: 0,
            end: 0,
            eof: false,
            base: 0,
            line: 1,
            line_start: 0,
            max_bytes,
            stashed: None,
        }
    }

    /// Reads until the buffer holds at least `want` unread bytes or the input ends, and
    /// returns the unread bytes (used for format detection; does not consume them).
    pub(crate) fn lookahead(&mut self, want: usize) -> &[u8] {
        let want = want.min(self.buf.len());
        if self.end - self.pos < want && !self.eof {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
            while self.end < want && !self.eof {
                self.read_more();
            }
        }
        &self.buf[self.pos..self.end]
    }

    /// Appends what the source yields to `buf[end..]`; sets `eof` at the end, on a read error
    /// or past the limit (stashing the error).
    #[cold]
    fn read_more(&mut self) {
        if self.eof {
            return;
        }
        let end = self.end;
        match self.source.read(&mut self.buf[end..]) {
            Ok(0) => self.eof = true,
            Ok(k) => {
                self.end += k;
                if let Some(limit) = self.max_bytes {
                    if self.base + self.end as u64 > limit {
                        self.stashed = Some(FormatError::TooLarge { limit });
                        self.eof = true;
                        self.end = self.pos;
                    }
                }
            }
            Err(e) => {
                self.stashed = Some(e);
                self.eof = true;
            }
        }
    }

    /// Refills an exhausted buffer; returns whether bytes are available.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> bool {
        debug_assert_eq!(self.pos, self.end);
        self.base += self.end as u64;
        self.pos = 0;
        self.end = 0;
        if self.buf.len() < BLOCK {
            // Everything has been consumed, so growing keeps no data.
            self.buf.resize(2 * self.buf.len(), 0);
        }
        while self.end == 0 && !self.eof {
            self.read_more();
        }
        self.end > 0
    }

    /// The next byte, without consuming it; `None` at the end of the input.
    #[inline(always)]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        if self.pos < self.end || self.refill() {
            Some(self.buf[self.pos])
        } else {
            None
        }
    }

    /// The position of the next byte.
    pub(crate) fn position(&self) -> Position {
        let offset = self.base + self.pos as u64;
        Position {
            line: self.line,
            column: offset - self.line_start + 1,
        }
    }

    /// Skips spaces, tabs, CR, LF, form feeds and comments (`#`, `%`, `//` to end of line).
    /// A lone `/` is left in place for the caller to report.
    #[inline(always)]
    pub(crate) fn skip_blank(&mut self) {
        // Fast path: most tokens are followed by nothing or one space before a plain byte.
        if let Some(&b) = self.buf[..self.end].get(self.pos) {
            if !is_blank_or_comment(b) {
                return;
            }
            if b == b' ' {
                if let Some(&next) = self.buf[..self.end].get(self.pos + 1) {
                    if !is_blank_or_comment(next) {
                        self.pos += 1;
                        return;
                    }
                }
            }
        }
        self.skip_blank_slow();
    }

    #[inline(never)]
    fn skip_blank_slow(&mut self) {
        loop {
            if self.pos >= self.end && !self.refill() {
                return;
            }
            let byte = self.buf[self.pos];
            match byte {
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.base + self.pos as u64;
                }
                b'#' | b'%' => self.skip_line(),
                b'/' if self.lookahead(2).get(1) == Some(&b'/') => self.skip_line(),
                _ => return,
            }
        }
    }

    /// Skips to the newline ending the current line (leaving the newline).
    fn skip_line(&mut self) {
        loop {
            if self.pos >= self.end && !self.refill() {
                return;
            }
            match self.buf[self.pos..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                Some(i) => {
                    self.pos += i;
                    return;
                }
                None => self.pos = self.end,
            }
        }
    }

    /// Parses an unsigned decimal number; `what` names it in errors ("vertex id", ...).
    /// Fails if no digit is next or the value exceeds `max`.
    #[inline(always)]
    pub(crate) fn unsigned(&mut self, what: &'static str, max: u64) -> Result<u64, FormatError> {
        match self.fast_digits(self.pos) {
            Some((value, len)) if value <= max => {
                self.pos += len;
                Ok(value)
            }
            _ => self.unsigned_slow(what, max),
        }
    }

    /// The fast path of number parsing: 1 to 18 digits starting at `at` and followed by a
    /// non-digit, all inside the buffer (so no refill and no overflow: 10^18 < u64::MAX).
    /// Returns the value and the number of digits; `None` sends the caller to the slow path.
    #[inline(always)]
    fn fast_digits(&self, at: usize) -> Option<(u64, usize)> {
        let ahead = self.buf[..self.end].get(at..at + 19)?;
        let mut value = 0u64;
        let mut i = 0;
        while i < 19 {
            let digit = ahead[i].wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value * 10 + u64::from(digit);
            i += 1;
        }
        (i > 0 && i < 19).then_some((value, i))
    }

    #[inline(never)]
    fn unsigned_slow(&mut self, what: &'static str, max: u64) -> Result<u64, FormatError> {
        let start = self.position();
        let mut value: u64 = match self.peek() {
            Some(b @ b'0'..=b'9') => u64::from(b - b'0'),
            _ => return Err(self.unexpected(start, &format!("a {what} (a decimal number)"))),
        };
        self.pos += 1;
        let mut overflow = false;
        while let Some(b @ b'0'..=b'9') = self.peek() {
            self.pos += 1;
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(b - b'0')))
            {
                Some(v) => value = v,
                None => overflow = true,
            }
        }
        if overflow || value > max {
            return Err(self.out_of_range(start, what, "0".into(), max.to_string()));
        }
        Ok(value)
    }

    /// Consumes `byte` if it is next.
    #[inline(always)]
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes `byte` or fails saying `expected`.
    #[inline]
    pub(crate) fn expect(&mut self, byte: u8, expected: &str) -> Result<(), FormatError> {
        if self.eat(byte) {
            Ok(())
        } else {
            let at = self.position();
            Err(self.unexpected(at, expected))
        }
    }

    /// Whether the next bytes are the word `word` (followed by a non-word byte); consumes it
    /// if so.
    pub(crate) fn eat_word(&mut self, word: &[u8]) -> bool {
        let ahead = self.lookahead(word.len() + 1);
        let matches =
            ahead.starts_with(word) && ahead.get(word.len()).is_none_or(|&b| !is_word_byte(b));
        if matches {
            self.pos += word.len();
        }
        matches
    }

    /// Whether only blanks and comments remain.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_blank();
        self.peek().is_none()
    }

    /// Describes the token at the current position for an error message (consumes nothing
    /// that matters: the caller is about to fail).
    pub(crate) fn describe_here(&mut self) -> String {
        let ahead = self.lookahead(QUOTE_MAX + 1);
        describe(ahead)
    }

    /// An error for unexpected text at `at` (the current position), or the recorded read
    /// failure if the input ended because of one.
    #[cold]
    pub(crate) fn unexpected(&mut self, at: Position, expected: &str) -> FormatError {
        if let Some(stashed) = self.stashed.take() {
            return stashed;
        }
        if self.peek().is_none() {
            return FormatError::UnexpectedEnd {
                at: self.position(),
                expected: expected.to_string(),
            };
        }
        FormatError::Syntax {
            at,
            found: self.describe_here(),
            expected: expected.to_string(),
        }
    }

    /// An out-of-range error for the number that started at `at` and ends at the current
    /// position.
    #[cold]
    fn out_of_range(
        &mut self,
        at: Position,
        what: &'static str,
        min: String,
        max: String,
    ) -> FormatError {
        if let Some(stashed) = self.stashed.take() {
            return stashed;
        }
        let len = (self.position().column.saturating_sub(at.column)) as usize;
        let found = if len == 0 || len > QUOTE_MAX || self.pos < len {
            "a number too large".to_string()
        } else {
            // The number lies within the current buffer unless it straddled a refill.
            let start = self.pos.saturating_sub(len);
            String::from_utf8_lossy(&self.buf[start..self.pos]).into_owned()
        };
        FormatError::OutOfRange {
            at,
            what,
            found,
            min,
            max,
        }
    }

    /// Replaces `error` by the recorded read failure or limit breach, if there is one.
    ///
    /// For a compressed input, a parse error may really be damage that the decompressor
    /// only detects later (gzip checks its CRC at the end of a member): the rest of the
    /// stream is decompressed (at most [`DRAIN_LIMIT`] more bytes) and, if it turns out
    /// corrupt, that is the error reported.
    pub(crate) fn fail(&mut self, error: FormatError) -> FormatError {
        if let Some(stashed) = self.stashed.take() {
            return stashed;
        }
        if self.source.compression() == Compression::Plain || !error.is_bad_input() {
            return error;
        }
        let mut drained = 0u64;
        while !self.eof && drained < DRAIN_LIMIT {
            self.pos = self.end;
            self.refill();
            drained += self.end as u64;
        }
        match self.stashed.take() {
            Some(FormatError::CorruptCompressed {
                compression,
                decompressed,
                detail,
            }) => {
                let detail = match error.position() {
                    Some(at) => format!(
                        "{detail} (the text before the damage was found fails to parse at {at})"
                    ),
                    None => detail,
                };
                FormatError::CorruptCompressed {
                    compression,
                    decompressed,
                    detail,
                }
            }
            _ => error,
        }
    }

    /// Returns the recorded failure, if any (call after a successful parse: a limit breach
    /// can end the input cleanly between lines).
    pub(crate) fn check_stashed(&mut self) -> Result<(), FormatError> {
        match self.stashed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Bytes that [`Scanner::skip_blank`] has to look at: blanks and comment starts.
#[inline(always)]
fn is_blank_or_comment(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | b'#' | b'%' | b'/'
    )
}

/// Bytes that continue a word (keywords, owners).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A short quotation of the token at the start of `ahead`.
pub(crate) fn describe(ahead: &[u8]) -> String {
    let Some(&first) = ahead.first() else {
        return "end of input".to_string();
    };
    if is_word_byte(first) || first == b'-' || first == b'+' {
        let len = 1 + ahead[1..].iter().take_while(|&&b| is_word_byte(b)).count();
        let word = String::from_utf8_lossy(&ahead[..len.min(QUOTE_MAX)]);
        let more = if len > QUOTE_MAX { "..." } else { "" };
        format!("`{word}{more}`")
    } else if first.is_ascii_graphic() {
        format!("`{}`", first as char)
    } else if first == b'\n' {
        "end of line".to_string()
    } else {
        format!("byte 0x{first:02x}")
    }
}
