//! The tokenizer of the text readers: a cursor over one chunk of decompressed text
//! held in memory (a slice of a memory-mapped file, or a block cut from a stream), with
//! hand-written integer parsing, whitespace and comment skipping (`#`, `%`, `//` to the end
//! of the line) and line/column tracking *relative to the chunk*: line 1 is the chunk's
//! first line, which may start at a column other than 1 (a chunk that begins mid-line).
//! The pipeline shifts positions by the chunk's first line number once it is known
//! ([`shift_lines`]).
//!
//! Every text reader parses through it: the game readers chunk by chunk, the `paritysol`
//! reader over its whole text (`pipeline::read_whole`), so an error reads the same
//! whichever reader found it.
//!
//! The cursor records whether parsing looked at the end of the chunk ([`Cursor::hit_end`]):
//! a record that did is incomplete unless the chunk is the last one, and is parsed again
//! together with the next chunk.

use super::error::{FormatError, Position};

/// Longest token text quoted in an error message.
const QUOTE_MAX: usize = 24;

/// A cursor over chunk text.
pub(crate) struct Cursor<'t> {
    text: &'t [u8],
    pos: usize,
    /// 1-based line relative to the chunk.
    line: u64,
    /// Offset of the current line's first byte; negative on a first line that started
    /// before the chunk (so that columns count from the real line start).
    line_start: i64,
    hit_end: bool,
}

impl<'t> Cursor<'t> {
    /// A cursor at the start of `text`, whose first byte is at `first_column` of its line.
    pub(crate) fn new(text: &'t [u8], first_column: u64) -> Cursor<'t> {
        Cursor {
            text,
            pos: 0,
            line: 1,
            line_start: 1 - first_column as i64,
            hit_end: false,
        }
    }

    /// The offset of the next byte in the chunk.
    #[inline(always)]
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// Whether parsing has looked at (or past) the end of the text since the last
    /// [`Cursor::clear_hit_end`].
    pub(crate) fn hit_end(&self) -> bool {
        self.hit_end
    }

    /// Forgets that the end was seen (at the start of each record).
    #[inline(always)]
    pub(crate) fn clear_hit_end(&mut self) {
        self.hit_end = false;
    }

    /// The next byte, without consuming it; `None` at the end of the text.
    #[inline(always)]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        match self.text.get(self.pos) {
            Some(&b) => Some(b),
            None => {
                self.hit_end = true;
                None
            }
        }
    }

    /// Consumes one byte (after a successful [`Cursor::peek`]).
    #[inline(always)]
    pub(crate) fn bump(&mut self) {
        self.pos += 1;
    }

    /// The position of the next byte (line relative to the chunk).
    pub(crate) fn position(&self) -> Position {
        self.position_at(self.pos)
    }

    /// The position of byte `offset`, on the current line.
    pub(crate) fn position_at(&self, offset: usize) -> Position {
        Position {
            line: self.line,
            column: (offset as i64 - self.line_start + 1) as u64,
        }
    }

    /// The whole text (for the fast paths of [`super::fast`], which read ahead of the
    /// cursor and then move it with [`Cursor::jump`]).
    #[inline(always)]
    pub(crate) fn text(&self) -> &'t [u8] {
        self.text
    }

    /// Moves to `offset`, further on the current line (no newline in between).
    #[inline(always)]
    pub(crate) fn jump(&mut self, offset: usize) {
        debug_assert!(offset >= self.pos && offset <= self.text.len());
        debug_assert!(!self.text[self.pos..offset].contains(&b'\n'));
        self.pos = offset;
    }

    /// The next `len` bytes or fewer at the end (noting the end if it cut them short).
    #[inline(always)]
    fn ahead(&mut self, len: usize) -> &'t [u8] {
        let end = self.pos + len;
        if end > self.text.len() {
            self.hit_end = true;
        }
        &self.text[self.pos..end.min(self.text.len())]
    }

    /// Skips spaces, tabs, CR, LF, form feeds and comments (`#`, `%`, `//` to end of line).
    /// A lone `/` is left in place for the caller to report.
    #[inline(always)]
    pub(crate) fn skip_blank(&mut self) {
        // Fast path: most tokens are followed by nothing, or by one space or the newline
        // ending a record, before a plain byte.
        if let Some(&b) = self.text.get(self.pos) {
            if !is_blank_or_comment(b) {
                return;
            }
            if b == b' ' || b == b'\n' {
                if let Some(&next) = self.text.get(self.pos + 1) {
                    if !is_blank_or_comment(next) {
                        if b == b'\n' {
                            self.newline();
                        } else {
                            self.pos += 1;
                        }
                        return;
                    }
                }
            }
        }
        self.skip_blank_slow();
    }

    /// Whether only blanks and comments remain.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_blank();
        self.peek().is_none()
    }

    #[inline(never)]
    fn skip_blank_slow(&mut self) {
        loop {
            let Some(byte) = self.peek() else { return };
            match byte {
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'\n' => self.newline(),
                b'#' | b'%' => self.skip_line(),
                b'/' if self.ahead(2).get(1) == Some(&b'/') => self.skip_line(),
                _ => return,
            }
        }
    }

    /// Consumes a newline byte.
    #[inline(always)]
    fn newline(&mut self) {
        self.pos += 1;
        self.line += 1;
        self.line_start = self.pos as i64;
    }

    /// Skips to the newline ending the current line (leaving the newline).
    fn skip_line(&mut self) {
        match memchr::memchr(b'\n', &self.text[self.pos..]) {
            Some(i) => self.pos += i,
            None => {
                self.pos = self.text.len();
                self.hit_end = true;
            }
        }
    }

    /// Parses an unsigned decimal number; `what` names it in errors ("vertex id", ...).
    /// Fails if no digit is next or the value exceeds `max`.
    #[inline(always)]
    pub(crate) fn unsigned(&mut self, what: &'static str, max: u64) -> Result<u64, FormatError> {
        let rest = &self.text[self.pos..];
        let (value, len) = leading_digits(rest);
        if len > 0 && len < 19 && len < rest.len() && value <= max {
            self.pos += len;
            return Ok(value);
        }
        self.unsigned_slow(what, max)
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

    /// Parses a signed decimal `i64` (an optional `-` or `+`, then digits).
    #[inline(always)]
    pub(crate) fn signed(&mut self, what: &'static str) -> Result<i64, FormatError> {
        let negative = self.text.get(self.pos) == Some(&b'-');
        let rest = &self.text[self.pos + usize::from(negative)..];
        let (magnitude, len) = leading_digits(rest);
        if len > 0 && len < 19 && len < rest.len() {
            // At most 18 digits: fits in i64 either way.
            self.pos += len + usize::from(negative);
            let value = magnitude as i64;
            return Ok(if negative { -value } else { value });
        }
        self.signed_slow(what)
    }

    #[inline(never)]
    fn signed_slow(&mut self, what: &'static str) -> Result<i64, FormatError> {
        let start = self.position();
        let negative = match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                true
            }
            Some(b'+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let range = |c: &mut Cursor<'_>| {
            c.out_of_range(start, what, i64::MIN.to_string(), i64::MAX.to_string())
        };
        let magnitude = match self.peek() {
            Some(b'0'..=b'9') => match self.unsigned_slow(what, u64::MAX) {
                Ok(magnitude) => magnitude,
                Err(FormatError::OutOfRange { .. }) => return Err(range(self)),
                Err(e) => return Err(e),
            },
            _ => return Err(self.unexpected(start, &format!("a {what} (a decimal integer)"))),
        };
        if negative {
            if magnitude > i64::MAX as u64 + 1 {
                return Err(range(self));
            }
            Ok((magnitude as i64).wrapping_neg())
        } else {
            i64::try_from(magnitude).map_err(|_| range(self))
        }
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
    #[inline(always)]
    pub(crate) fn eat_word(&mut self, word: &[u8]) -> bool {
        let ahead = self.ahead(word.len() + 1);
        let matches =
            ahead.starts_with(word) && ahead.get(word.len()).is_none_or(|&b| !is_word_byte(b));
        if matches {
            self.pos += word.len();
        }
        matches
    }

    /// Reads the name that ends a vertex's line: the name, blanks, then `;` (else the error
    /// says `;` should end the `line` line after its name).
    pub(crate) fn name_ending(&mut self, line: &str) -> Result<Box<str>, FormatError> {
        let name = self.name()?;
        self.skip_blank();
        let at = self.position();
        if !self.eat(b';') {
            let expected = format!("`;` ending the {line} line after its name");
            return Err(self.unexpected(at, &expected));
        }
        Ok(name)
    }

    /// Reads a name: a double-quoted string (`\"` and `\\` escapes) or a run of bytes up to
    /// whitespace or `;`. Invalid UTF-8 is replaced.
    pub(crate) fn name(&mut self) -> Result<Box<str>, FormatError> {
        let start = self.position();
        let mut bytes = Vec::new();
        if self.eat(b'"') {
            loop {
                match self.peek() {
                    None => {
                        return Err(
                            self.unexpected(start, "a closing `\"` for the name starting here")
                        );
                    }
                    Some(b'"') => {
                        self.pos += 1;
                        break;
                    }
                    Some(b'\\') => {
                        self.pos += 1;
                        match self.peek() {
                            Some(b'\n') => {
                                bytes.push(b'\n');
                                self.newline();
                            }
                            Some(b) => {
                                bytes.push(b);
                                self.pos += 1;
                            }
                            None => {
                                return Err(self.unexpected(
                                    start,
                                    "a closing `\"` for the name starting here",
                                ));
                            }
                        }
                    }
                    Some(b'\n') => {
                        return Err(self.unexpected(start, "a closing `\"` on the same line"));
                    }
                    Some(b) => {
                        bytes.push(b);
                        self.pos += 1;
                    }
                }
            }
        } else {
            while let Some(b) = self.peek() {
                if b.is_ascii_whitespace() || b == b';' {
                    break;
                }
                bytes.push(b);
                self.pos += 1;
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into())
    }

    /// Describes the token at the current position for an error message.
    pub(crate) fn describe_here(&mut self) -> String {
        describe(self.ahead(QUOTE_MAX + 1))
    }

    /// An error for unexpected text at `at` (the current position), or for the end.
    #[cold]
    pub(crate) fn unexpected(&mut self, at: Position, expected: &str) -> FormatError {
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

    /// An out-of-range error for the number that started at `at` and ends here.
    #[cold]
    fn out_of_range(
        &mut self,
        at: Position,
        what: &'static str,
        min: String,
        max: String,
    ) -> FormatError {
        let len = (self.position().column.saturating_sub(at.column)) as usize;
        let found = if len == 0 || len > QUOTE_MAX || self.pos < len {
            "a number too large".to_string()
        } else {
            String::from_utf8_lossy(&self.text[self.pos - len..self.pos]).into_owned()
        };
        FormatError::OutOfRange {
            at,
            what,
            found,
            min,
            max,
        }
    }
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

/// Bytes that [`Cursor::skip_blank`] has to look at: blanks and comment starts.
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

/// `position` of a chunk whose first line is line `first_line` of the input.
pub(crate) fn shift_position(position: Position, first_line: u64) -> Position {
    Position {
        line: position.line + first_line - 1,
        column: position.column,
    }
}

/// `error` found in a chunk whose first line is line `first_line` of the input, with its
/// position made absolute.
pub(crate) fn shift_lines(error: FormatError, first_line: u64) -> FormatError {
    use FormatError::*;
    let s = |at: Position| shift_position(at, first_line);
    match error {
        Syntax {
            at,
            found,
            expected,
        } => Syntax {
            at: s(at),
            found,
            expected,
        },
        UnexpectedEnd { at, expected } => UnexpectedEnd {
            at: s(at),
            expected,
        },
        BadOwner {
            at,
            found,
            expected,
        } => BadOwner {
            at: s(at),
            found,
            expected,
        },
        OutOfRange {
            at,
            what,
            found,
            min,
            max,
        } => OutOfRange {
            at: s(at),
            what,
            found,
            min,
            max,
        },
        DanglingSuccessor {
            at,
            target,
            expected,
        } => DanglingSuccessor {
            at: s(at),
            target,
            expected,
        },
        NoSuccessors { at, id, found } => NoSuccessors {
            at: s(at),
            id,
            found,
        },
        other => other,
    }
}

/// The value and count of the decimal digits `rest` starts with, counting at most 19: at
/// most 18 digits cannot overflow (10^18 < u64::MAX); a count of 19 sends the caller to
/// its slow path.
#[inline(always)]
fn leading_digits(rest: &[u8]) -> (u64, usize) {
    let mut value = 0u64;
    let mut len = 0;
    while len < 19 {
        let Some(&b) = rest.get(len) else { break };
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + u64::from(digit);
        len += 1;
    }
    (value, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_from_the_real_line_start() {
        let mut c = Cursor::new(b"  7\n 8", 5);
        c.skip_blank();
        assert_eq!(c.position(), Position { line: 1, column: 7 });
        assert_eq!(c.unsigned("n", 9).unwrap(), 7);
        c.skip_blank();
        assert_eq!(c.position(), Position { line: 2, column: 2 });
        assert!(!c.hit_end());
        // The last number ends the text: parsed by the slow path, and the end is noted.
        assert_eq!(c.unsigned("n", 9).unwrap(), 8);
        assert!(c.hit_end());
    }

    #[test]
    fn numbers_at_type_limits() {
        let mut c = Cursor::new(b"-9223372036854775808 9223372036854775808;", 1);
        assert_eq!(c.signed("w").unwrap(), i64::MIN);
        c.skip_blank();
        let e = c.signed("weight").unwrap_err();
        assert!(
            e.to_string().contains("found weight 9223372036854775808"),
            "{e}"
        );
    }
}
