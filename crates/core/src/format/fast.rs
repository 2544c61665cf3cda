//! Record lines of the usual shape, read without the general tokenizer.
//!
//! Nearly every line of a game file has one shape: numbers separated by single spaces,
//! `:` and `,` (`.gm`: `, `), ending in `;` on the same line, no names, no comments. These
//! functions read exactly such a line, with numbers read word at a time
//! ([`super::digits`]) and no per-byte bookkeeping (the line and column of a byte are
//! only ever needed for an error, and a line of this shape has none).
//!
//! Each either reads the whole record, giving exactly what the exact parser
//! ([`super::mpg::parse_record`], [`super::pgsolver::parse_record`]) would, or gives up
//! having stored nothing, and the exact parser reads the record from its start: anything
//! unusual (other blanks, a comment, a name, a line break inside the record, a number of
//! 16 digits or more, an id out of range, fewer than [`WINDOW`] bytes left in the chunk)
//! goes that way, so every error keeps its exact line, column and message.

use crate::arena::Player;

use super::MAX_VERTEX_ID;
use super::digits::{WINDOW, number};
use super::records::Records;

/// A record read by a fast path: its id, owner, and the offset just after its `;`.
pub(crate) struct Read {
    pub id: u32,
    pub owner: Player,
    pub end: usize,
}

/// The offset of the first byte at or after `pos` that is not a space.
#[inline(always)]
fn skip_spaces(text: &[u8], mut pos: usize) -> usize {
    while text.get(pos) == Some(&b' ') {
        pos += 1;
    }
    pos
}

/// As [`skip_spaces`], but at least one space must be there.
#[inline(always)]
fn spaces(text: &[u8], pos: usize) -> Option<usize> {
    (text.get(pos) == Some(&b' ')).then(|| skip_spaces(text, pos + 1))
}

/// The number at `pos` if it is at most `max`, and the offset after it. `last` is the
/// last offset [`number`] may read at.
#[inline(always)]
fn bounded(text: &[u8], pos: usize, last: usize, max: u64) -> Option<(u64, usize)> {
    if pos > last {
        return None;
    }
    let (value, len) = number(text, pos)?;
    (value <= max).then_some((value, pos + len))
}

/// An `.mpg` line `ID OWNER SUCC:WEIGHT,SUCC:WEIGHT...;` starting at `start` (blanks:
/// runs of spaces between the id, the owner and the first edge, and after each `,`).
#[inline]
pub(crate) fn mpg_record(text: &[u8], start: usize, max_id: u64, r: &mut Records) -> Option<Read> {
    let last = text.len().checked_sub(WINDOW)?;
    let (id, pos) = bounded(text, start, last, max_id)?;
    let pos = spaces(text, pos)?;
    let owner = match text.get(pos..pos + 4)? {
        b"MAX " => Player::Zero,
        b"MIN " => Player::One,
        _ => return None,
    };
    let pos = skip_spaces(text, pos + 4);
    let edges = r.targets.len();
    match mpg_edges(text, pos, last, max_id, r) {
        Some(end) => Some(Read {
            id: id as u32,
            owner,
            end,
        }),
        None => {
            r.targets.truncate(edges);
            r.weights.truncate(edges);
            None
        }
    }
}

/// The edges of an `.mpg` line, pushed onto `r`; the offset after the `;`.
#[inline(always)]
fn mpg_edges(
    text: &[u8],
    mut pos: usize,
    last: usize,
    max_id: u64,
    r: &mut Records,
) -> Option<usize> {
    loop {
        let (succ, after) = bounded(text, pos, last, max_id)?;
        if text.get(after) != Some(&b':') {
            return None;
        }
        let negative = text.get(after + 1) == Some(&b'-');
        let (magnitude, after) = bounded(
            text,
            after + 1 + usize::from(negative),
            last,
            i64::MAX as u64,
        )?;
        let magnitude = magnitude as i64;
        r.targets.push(succ as u32);
        r.weights
            .push(if negative { -magnitude } else { magnitude });
        match text.get(after) {
            Some(b',') => pos = skip_spaces(text, after + 1),
            Some(b';') => return Some(after + 1),
            _ => return None,
        }
    }
}

/// A `.gm` line read by [`gm_record`]: the record, its priority and its largest successor
/// with the offset where that first appears.
pub(crate) struct GmRead {
    pub read: Read,
    pub priority: u64,
    pub max_target: (u32, usize),
}

/// A `.gm` line `ID PRIORITY OWNER SUCC, SUCC...;` starting at `start` (blanks: runs of
/// spaces between the fields, after each successor and after each `,`).
#[inline]
pub(crate) fn gm_record(text: &[u8], start: usize, r: &mut Records) -> Option<GmRead> {
    let last = text.len().checked_sub(WINDOW)?;
    let (id, pos) = bounded(text, start, last, MAX_VERTEX_ID)?;
    let pos = spaces(text, pos)?;
    let (priority, pos) = bounded(text, pos, last, u64::MAX)?;
    let pos = spaces(text, pos)?;
    let owner = match text.get(pos..pos + 2)? {
        b"0 " => Player::Zero,
        b"1 " => Player::One,
        _ => return None,
    };
    let mut pos = skip_spaces(text, pos + 2);
    let edges = r.targets.len();
    let mut max_target = (0u32, pos);
    loop {
        let Some((succ, after)) = bounded(text, pos, last, MAX_VERTEX_ID) else {
            r.targets.truncate(edges);
            return None;
        };
        let succ = succ as u32;
        if succ > max_target.0 || r.targets.len() == edges {
            max_target = (succ, pos);
        }
        r.targets.push(succ);
        let after = skip_spaces(text, after);
        match text.get(after) {
            Some(b',') => pos = skip_spaces(text, after + 1),
            Some(b';') => {
                return Some(GmRead {
                    read: Read {
                        id: id as u32,
                        owner,
                        end: after + 1,
                    },
                    priority,
                    max_target,
                });
            }
            _ => {
                r.targets.truncate(edges);
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(text: &str) -> Vec<u8> {
        let mut bytes = text.as_bytes().to_vec();
        bytes.extend_from_slice(&[b'\n'; WINDOW]);
        bytes
    }

    #[test]
    fn reads_usual_mpg_lines_and_leaves_others() {
        let mut r = Records::with_capacity(256);
        let text = padded("12 MIN 3:-4,5:6;");
        let read = mpg_record(&text, 0, 20, &mut r).expect("usual");
        assert_eq!((read.id, read.owner, read.end), (12, Player::One, 16));
        assert_eq!(r.targets, vec![3, 5]);
        for unusual in [
            "12 MIN 3:-4,5:6 \"name\";",
            "12\tMIN 3:4;",
            "12 MIN 3 :4;",
            "12 MIN 3:4,\n5:6;",
            "12 MIN 21:4;",
            "12 MIN 3:+4;",
            "12 MAXI 3:4;",
        ] {
            let mut r = Records::with_capacity(256);
            assert!(
                mpg_record(&padded(unusual), 0, 20, &mut r).is_none(),
                "{unusual}"
            );
            assert!(r.targets.is_empty(), "{unusual}");
        }
    }

    #[test]
    fn reads_usual_gm_lines_and_leaves_others() {
        let mut r = Records::with_capacity(256);
        let text = padded("0 2 1 7, 9 , 9, 3;");
        let read = gm_record(&text, 0, &mut r).expect("usual");
        assert_eq!((read.read.id, read.read.owner), (0, Player::One));
        assert_eq!((read.priority, read.max_target), (2, (9, 9)));
        assert_eq!(r.targets, vec![7, 9, 9, 3]);
        for unusual in ["0 2 01 7;", "0 2 1 7 \"x\";", "0 2 1 7,\n8;", "0 2 1;"] {
            let mut r = Records::with_capacity(256);
            assert!(
                gm_record(&padded(unusual), 0, &mut r).is_none(),
                "{unusual}"
            );
            assert!(r.targets.is_empty(), "{unusual}");
        }
    }
}
