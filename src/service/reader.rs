//! TEMPORARY: a small reader for the EGSolver (`.mpg`) and PGSolver (`.gm`) formats with the
//! parity reduction of FORMATS.md, standing in for `egsolve::format::read_path` until the
//! format readers land on main. It has the same shape (`read_path(path, &ReadOptions) ->
//! Result<Game, FormatError>`, errors with line and column) so the switch is one `use` line;
//! delete this file then. It reads plain (already decompressed) files: the service stores
//! arenas decompressed.

use std::path::Path;

use crate::arena::{Arena, EdgeList, Player};

/// Which syntax a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Decided from the first statement.
    #[default]
    Auto,
    /// EGSolver energy arena.
    Mpg,
    /// PGSolver max-parity game (reduced to an energy game).
    Gm,
}

/// How to read.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The syntax, or `Auto`.
    pub format: Format,
}

/// A parsed input.
#[derive(Debug)]
pub struct Game {
    /// The energy arena (reduced, for parity input).
    pub arena: Arena,
    /// Distinct priorities, for parity input.
    pub parity: Option<usize>,
}

/// Why a file is not a game; `line`/`column` are 1-based, 0 when not tied to a place.
#[derive(Debug, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct FormatError {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// What is wrong.
    pub message: String,
}

/// Reads a plain game file.
pub fn read_path(path: &Path, options: &ReadOptions) -> Result<Game, FormatError> {
    let bytes = std::fs::read(path).map_err(|e| FormatError {
        line: 0,
        column: 0,
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    read_bytes(&bytes, options)
}

/// Reads a game from bytes.
pub fn read_bytes(bytes: &[u8], options: &ReadOptions) -> Result<Game, FormatError> {
    let mut lexer = Lexer {
        bytes,
        pos: 0,
        line: 1,
        column: 1,
    };
    let format = match options.format {
        Format::Auto => detect(bytes)?,
        other => other,
    };
    match format {
        Format::Gm => lexer.parity(),
        _ => lexer.energy(),
    }
}

/// Guesses the syntax from the first statement: `parity`/`start` or 4+ tokens mean PGSolver.
pub fn detect(bytes: &[u8]) -> Result<Format, FormatError> {
    let mut lexer = Lexer {
        bytes,
        pos: 0,
        line: 1,
        column: 1,
    };
    let mut count = 0;
    while let Some(token) = lexer.token()? {
        match token {
            Token::Word(w) if count == 0 && (w == b"parity" || w == b"start") => {
                return Ok(Format::Gm);
            }
            Token::Word(w) if count == 0 && w == b"arena" => return Ok(Format::Mpg),
            Token::Punct(b';') => break,
            _ => count += 1,
        }
    }
    Ok(if count >= 4 { Format::Gm } else { Format::Mpg })
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a [u8]),
    Punct(u8),
    Text,
}

struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: u64,
    column: u64,
}

impl<'a> Lexer<'a> {
    fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }

    fn bump(&mut self) {
        if self.bytes[self.pos] == b'\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        self.pos += 1;
    }

    fn skip_blank(&mut self) {
        while self.pos < self.bytes.len() {
            match self.bytes[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' => self.bump(),
                b'#' | b'%' => self.skip_line(),
                b'/' if self.bytes.get(self.pos + 1) == Some(&b'/') => self.skip_line(),
                _ => break,
            }
        }
    }

    fn skip_line(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
            self.bump();
        }
    }

    fn token(&mut self) -> Result<Option<Token<'a>>, FormatError> {
        self.skip_blank();
        let Some(&c) = self.bytes.get(self.pos) else {
            return Ok(None);
        };
        match c {
            b';' | b',' | b':' => {
                self.bump();
                Ok(Some(Token::Punct(c)))
            }
            b'"' => {
                self.bump();
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'"' {
                    self.bump();
                }
                if self.pos == self.bytes.len() {
                    return Err(self.error("unterminated string"));
                }
                self.bump();
                Ok(Some(Token::Text))
            }
            c if c.is_ascii_alphanumeric() || c == b'-' || c == b'+' || c == b'_' => {
                let start = self.pos;
                while self.pos < self.bytes.len()
                    && (self.bytes[self.pos].is_ascii_alphanumeric()
                        || matches!(self.bytes[self.pos], b'-' | b'+' | b'_'))
                {
                    self.bump();
                }
                Ok(Some(Token::Word(&self.bytes[start..self.pos])))
            }
            _ => Err(self.error(format!("unexpected character {:?}", c as char))),
        }
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, FormatError> {
        self.skip_blank();
        let (line, column) = (self.line, self.column);
        match self.token()? {
            Some(Token::Word(w)) => std::str::from_utf8(w).ok().and_then(|s| s.parse().ok()),
            _ => None,
        }
        .ok_or(FormatError {
            line,
            column,
            message: format!("expected {what}"),
        })
    }

    fn expect(&mut self, punct: u8) -> Result<(), FormatError> {
        self.skip_blank();
        match self.token()? {
            Some(Token::Punct(p)) if p == punct => Ok(()),
            _ => Err(self.error(format!("expected '{}'", punct as char))),
        }
    }

    fn peek_word(&mut self, word: &[u8]) -> bool {
        self.skip_blank();
        self.bytes[self.pos..].starts_with(word)
            && !self
                .bytes
                .get(self.pos + word.len())
                .is_some_and(|c| c.is_ascii_alphanumeric())
    }

    fn at_end(&mut self) -> bool {
        self.skip_blank();
        self.pos == self.bytes.len()
    }

    /// Ends a vertex line: an optional name then ';'. Returns true on ','.
    fn separator(&mut self) -> Result<bool, FormatError> {
        self.skip_blank();
        match self.token()? {
            Some(Token::Punct(b',')) => Ok(true),
            Some(Token::Punct(b';')) => Ok(false),
            Some(Token::Text) => self.expect(b';').map(|_| false),
            _ => Err(self.error("expected ',' or ';'")),
        }
    }

    fn energy(&mut self) -> Result<Game, FormatError> {
        if self.peek_word(b"arena") {
            self.token()?;
        }
        let max_id: u32 = self.number("the largest vertex id")?;
        self.skip_blank();
        if self.bytes.get(self.pos) != Some(&b';') {
            let _edges: u64 = self.number("the edge count or ';'")?;
        }
        self.expect(b';')?;
        let n = max_id as usize + 1;
        let mut owners: Vec<Option<Player>> = vec![None; n];
        let mut edges = EdgeList::default();
        while !self.at_end() {
            let id: u32 = self.number("a vertex id")?;
            if id > max_id {
                return Err(self.error(format!("vertex {id} is above the largest id {max_id}")));
            }
            let owner = match self.token()? {
                Some(Token::Word(b"MAX")) => Player::Zero,
                Some(Token::Word(b"MIN")) => Player::One,
                _ => return Err(self.error("expected MAX or MIN")),
            };
            if owners[id as usize].replace(owner).is_some() {
                return Err(self.error(format!("vertex {id} appears twice")));
            }
            loop {
                let target: u32 = self.number("a successor id")?;
                if target > max_id {
                    return Err(self.error(format!("successor {target} does not exist")));
                }
                self.expect(b':')?;
                let weight: i64 = self.number("an integer weight")?;
                edges.push(id, target, weight);
                if !self.separator()? {
                    break;
                }
            }
        }
        let owners = complete(owners, self)?;
        let arena =
            Arena::from_edges(owners, edges, None).map_err(|e| self.error(e.to_string()))?;
        Ok(Game {
            arena,
            parity: None,
        })
    }

    fn parity(&mut self) -> Result<Game, FormatError> {
        if self.peek_word(b"parity") {
            self.token()?;
            let _: u64 = self.number("the game size")?;
            self.expect(b';')?;
        }
        if self.peek_word(b"start") {
            self.token()?;
            let _: u64 = self.number("the start vertex")?;
            self.expect(b';')?;
        }
        let mut owners: Vec<Option<Player>> = Vec::new();
        let mut priority: Vec<u64> = Vec::new();
        let mut succ: Vec<(u32, u32)> = Vec::new();
        while !self.at_end() {
            let id: u32 = self.number("a vertex id")?;
            let p: u64 = self.number("a priority")?;
            let owner = match self.number::<u8>("an owner (0 or 1)")? {
                0 => Player::Zero,
                1 => Player::One,
                _ => return Err(self.error("the owner must be 0 or 1")),
            };
            if owners.len() <= id as usize {
                owners.resize(id as usize + 1, None);
                priority.resize(id as usize + 1, 0);
            }
            if owners[id as usize].replace(owner).is_some() {
                return Err(self.error(format!("vertex {id} appears twice")));
            }
            priority[id as usize] = p;
            loop {
                succ.push((id, self.number("a successor id")?));
                if !self.separator()? {
                    break;
                }
            }
        }
        let owners = complete(owners, self)?;
        let mut levels: Vec<u64> = priority.clone();
        levels.sort_unstable();
        levels.dedup();
        let mut magnitude = vec![0u64; levels.len()];
        let mut count = vec![0u64; levels.len()];
        for &p in &priority {
            count[levels.binary_search(&p).unwrap()] += 1;
        }
        let overflow = || FormatError {
            line: 0,
            column: 0,
            message: format!("{} priorities give weights beyond 64 bits", levels.len()),
        };
        for i in 0..levels.len() {
            let mut a: u64 = if i == 0 { levels[0] % 2 } else { 1 };
            for j in 0..i {
                if levels[j] % 2 != levels[i] % 2 {
                    let term = count[j].checked_mul(magnitude[j]).ok_or_else(overflow)?;
                    a = a.checked_add(term).ok_or_else(overflow)?;
                }
            }
            if a > i64::MAX as u64 {
                return Err(overflow());
            }
            magnitude[i] = a;
        }
        let mut edges = EdgeList::with_capacity(succ.len());
        for (v, u) in succ {
            if u as usize >= owners.len() {
                return Err(FormatError {
                    line: 0,
                    column: 0,
                    message: format!("successor {u} of vertex {v} does not exist"),
                });
            }
            let p = priority[v as usize];
            let a = magnitude[levels.binary_search(&p).unwrap()] as i64;
            edges.push(v, u, if p % 2 == 0 { a } else { -a });
        }
        let arena =
            Arena::from_edges(owners, edges, None).map_err(|e| self.error(e.to_string()))?;
        Ok(Game {
            arena,
            parity: Some(levels.len()),
        })
    }
}

fn complete(owners: Vec<Option<Player>>, lexer: &Lexer) -> Result<Vec<Player>, FormatError> {
    if owners.is_empty() {
        return Err(lexer.error("the game has no vertices"));
    }
    owners
        .iter()
        .enumerate()
        .map(|(v, o)| o.ok_or_else(|| lexer.error(format!("vertex {v} is never defined"))))
        .collect()
}
