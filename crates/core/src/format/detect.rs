//! Recognising the format from the first tokens of the (decompressed) text:
//! - `{` → JSON;
//! - `parity` or `start` → PGSolver;
//! - `arena` → EGSolver;
//! - a number followed by `;`, or by a second number and `;` (the `MAXID [EDGES];` header),
//!   or by `MAX`/`MIN` → EGSolver;
//! - four numbers (`ID PRIORITY OWNER SUCC`) with no `:` on the line → PGSolver (the owner
//!   need not be `0` or `1` here, so that a bad owner gets the reader's precise error
//!   rather than "unknown format"); three numbers and `;` → PGSolver (a node without
//!   successors); `N N MAX` → EGSolver (a header missing its `;`).
//!
//! Anything else is [`FormatError::UnknownFormat`], which lists the supported formats and
//! says to pass `--format`.

use super::Format;
use super::cursor::describe;
use super::error::{FormatError, Position};

/// How much text detection looks at.
const WINDOW: usize = 64 * 1024;

/// A token of the detection window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Word(&'a [u8]),
    Number(&'a [u8]),
    Punct(u8),
}

/// Guesses the format of the text that starts with `window` (its first 64 KiB, or all of a
/// shorter text).
pub(crate) fn detect(window: &[u8]) -> Result<Format, FormatError> {
    let window = &window[..window.len().min(WINDOW)];
    let (tokens, first_at, rest) = tokenize(window, 6);
    let format = match tokens.as_slice() {
        [Token::Punct(b'{'), ..] => Some(Format::Json),
        [Token::Word(b"parity" | b"start"), ..] => Some(Format::PgSolver),
        [Token::Word(b"arena"), ..] => Some(Format::Mpg),
        [
            Token::Number(_),
            Token::Punct(b';') | Token::Word(b"MAX" | b"MIN"),
            ..,
        ]
        | [
            Token::Number(_),
            Token::Number(_),
            Token::Punct(b';') | Token::Word(b"MAX" | b"MIN"),
            ..,
        ] => Some(Format::Mpg),
        [
            Token::Number(_),
            Token::Number(_),
            Token::Number(_),
            Token::Punct(b';'),
            ..,
        ] => Some(Format::PgSolver),
        [
            Token::Number(_),
            Token::Number(_),
            Token::Number(_),
            Token::Number(_),
            ..,
        ] if !rest.contains(&b':') => Some(Format::PgSolver),
        _ => None,
    };
    if let Some(format) = format {
        return Ok(format);
    }
    let found = if tokens.is_empty() && window.len() == WINDOW {
        "only blanks and comments in the first 64 KiB".to_string()
    } else {
        describe(&window[first_at.1..])
    };
    Err(FormatError::UnknownFormat {
        at: first_at.0,
        found,
    })
}

/// The first `max` tokens of `text` (skipping blanks and comments), the position and offset
/// of the first one, and the text of the line holding the first token.
fn tokenize(text: &[u8], max: usize) -> (Vec<Token<'_>>, (Position, usize), &[u8]) {
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut line = 1u64;
    let mut line_start = 0usize;
    let mut first: Option<(Position, usize)> = None;
    while i < text.len() && tokens.len() < max {
        let b = text[i];
        match b {
            b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'#' | b'%' => {
                i += text[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .unwrap_or(text.len() - i);
            }
            b'/' if text.get(i + 1) == Some(&b'/') => {
                i += text[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .unwrap_or(text.len() - i);
            }
            _ => {
                if first.is_none() {
                    first = Some((
                        Position {
                            line,
                            column: (i - line_start + 1) as u64,
                        },
                        i,
                    ));
                }
                let len = text[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                if len == 0 {
                    tokens.push(Token::Punct(b));
                    i += 1;
                } else {
                    let word = &text[i..i + len];
                    tokens.push(if word.iter().all(u8::is_ascii_digit) {
                        Token::Number(word)
                    } else {
                        Token::Word(word)
                    });
                    i += len;
                }
            }
        }
    }
    let first = first.unwrap_or((
        Position {
            line,
            column: (i - line_start + 1) as u64,
        },
        i.min(text.len()),
    ));
    let line_end = text[first.1..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(text.len(), |k| first.1 + k);
    (tokens, first, &text[first.1..line_end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guess(text: &str) -> Option<Format> {
        detect(text.as_bytes()).ok()
    }

    #[test]
    fn recognises_each_format() {
        let cases = [
            ("571377;\n0 MIN 1:5670;", Some(Format::Mpg)),
            ("arena 3;", Some(Format::Mpg)),
            ("# c\n3 7;\n", Some(Format::Mpg)),
            ("0 MAX 0:1;", Some(Format::Mpg)),
            ("parity 118;\n0 3 0 1, 2;", Some(Format::PgSolver)),
            ("start 0;", Some(Format::PgSolver)),
            ("// x\n0 3 0 1, 2;", Some(Format::PgSolver)),
            ("0 3 0 1:2;", None),
            (" {\"vertices\": []}", Some(Format::Json)),
            ("hello", None),
            ("", None),
        ];
        for (text, expected) in cases {
            assert_eq!(guess(text), expected, "{text:?}");
        }
    }
}
