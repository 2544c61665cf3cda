//! Reader for the EGSolver arena format (`.mpg`), the format of the paper's own tool:
//!
//! ```text
//! arena ::= ["arena"] MAXID [EDGES] ";" line+
//! line  ::= ID OWNER edge ("," edge)* [STRING] ";"
//! OWNER ::= "MAX" (player 0) | "MIN" (player 1)
//! edge  ::= SUCC ":" WEIGHT
//! ```
//!
//! Every id `0..=MAXID` must have exactly one line, in any order; successors must be
//! `<= MAXID` (checked where they are written); weights are `i64`. `EDGES`, when present,
//! is not needed (chunks size themselves from their text).
//!
//! The header is read first, on the calling thread; the lines are parsed in chunks on all
//! threads ([`super::chunks`]) by [`parse_record`], then [`assemble`] checks the ids and
//! builds the arena.

use crate::arena::{EdgeWeights, Player};

use super::assemble::{self, Placement};
use super::cursor::Cursor;
use super::error::{FormatError, Position};
use super::fast;
use super::records::{Grammar, Parsed, Records, another_edge, successors_follow};
use super::{Game, MAX_VERTEX_ID};

/// What the header says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    /// The largest vertex id.
    pub max_id: u64,
    /// Where the largest id is written.
    pub at: Position,
}

/// Parses the header `["arena"] MAXID [EDGES] ";"` at the start of `s`.
pub(crate) fn parse_header(s: &mut Cursor<'_>) -> Result<Header, FormatError> {
    s.skip_blank();
    if s.eat_word(b"arena") {
        s.skip_blank();
    }
    let at = s.position();
    let max_id = s.unsigned("largest vertex id", MAX_VERTEX_ID)?;
    s.skip_blank();
    if matches!(s.peek(), Some(b'0'..=b'9')) {
        s.unsigned("edge count", u64::MAX)?;
        s.skip_blank();
    }
    s.expect(b';', "`;` ending the header `MAXID [EDGES];`")?;
    Ok(Header { max_id, at })
}

/// The grammar of the lines after `header` (whose position is already absolute).
pub(crate) fn grammar(header: Header) -> Grammar {
    Grammar::Mpg {
        max_id: header.max_id,
        header_line: header.at.line,
    }
}

/// Parses one vertex line starting at `at` into `r`.
#[inline]
pub(crate) fn parse_record(
    s: &mut Cursor<'_>,
    r: &mut Records,
    max_id: u64,
    header_line: u64,
    at: Position,
) -> Result<(), FormatError> {
    if let Some(read) = fast::mpg_record(s.text(), s.offset(), max_id, r) {
        r.finish_record(read.id, read.owner, at);
        s.jump(read.end);
        return Ok(());
    }
    let id = s.unsigned("vertex id", max_id)? as u32;
    s.skip_blank();
    let owner = owner(s)?;
    s.skip_blank();
    successors_follow(s, id, "the successors `SUCC:WEIGHT,...` of the vertex")?;
    loop {
        let succ_at = s.position();
        let succ = s.unsigned("successor id", u64::MAX)?;
        if succ > max_id {
            return Err(FormatError::DanglingSuccessor {
                at: succ_at,
                target: succ,
                expected: format!("0..={max_id}, from the header at line {header_line}"),
            });
        }
        s.skip_blank();
        s.expect(b':', "`:` and the edge's weight after the successor id")?;
        s.skip_blank();
        let weight = s.signed("weight")?;
        r.targets.push(succ as u32);
        r.weights.push(weight);
        s.skip_blank();
        if let Some(b'0'..=b'9' | b'-') = s.peek() {
            let at = s.position();
            return Err(s.unexpected(at, "`,` between edges, a name or `;`"));
        }
        if !another_edge(s, r, "vertex", "`,` and another edge, a name or `;`")? {
            break;
        }
    }
    r.finish_record(id, owner, at);
    Ok(())
}

/// `MAX` (player 0, the energy player) or `MIN` (player 1).
#[inline(always)]
fn owner(s: &mut Cursor<'_>) -> Result<Player, FormatError> {
    if s.eat_word(b"MAX") {
        Ok(Player::Zero)
    } else if s.eat_word(b"MIN") {
        Ok(Player::One)
    } else {
        let at = s.position();
        if s.peek().is_none() {
            return Err(s.unexpected(at, "the owner `MAX` or `MIN`"));
        }
        Err(FormatError::BadOwner {
            at,
            found: s.describe_here(),
            expected: "`MAX` (player 0, the energy player) or `MIN` (player 1)",
        })
    }
}

/// Checks that every id `0..=max_id` has exactly one line and builds the arena.
pub(crate) fn assemble(header: Header, parsed: Parsed) -> Result<Game, FormatError> {
    let n = header.max_id as usize + 1;
    let expected = || {
        format!(
            "0..={} exactly once (the header at line {} says the largest id is {})",
            header.max_id, header.at.line, header.max_id
        )
    };
    let arena = match assemble::placement(&parsed) {
        Placement::InOrder(count) => {
            if count < n {
                return Err(assemble::missing(count, parsed.end, &expected()));
            }
            let (lo, hi) = parsed
                .chunks
                .iter()
                .map(|c| c.records.weight_range)
                .fold((0, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
            let layout = assemble::Layout::of(&parsed);
            let weights = if lo >= i16::MIN as i64 && hi <= i16::MAX as i64 {
                EdgeWeights::I16(layout.weights(&parsed, |w| w as i16))
            } else if lo >= i32::MIN as i64 && hi <= i32::MAX as i64 {
                EdgeWeights::I32(layout.weights(&parsed, |w| w as i32))
            } else {
                EdgeWeights::I64(layout.weights(&parsed, |w| w))
            };
            assemble::in_order_arena(parsed, &layout, weights, n)?
        }
        Placement::Shuffled => {
            let lines = assemble::vertex_lines(&parsed);
            let arrangement = lines.arrange(n, parsed.end, &expected())?;
            assemble::shuffled_arena(&parsed, &arrangement, n, |r, _, e| r.weights.get(e))?
        }
    };
    Ok(Game {
        arena,
        parity: None,
        initial: None,
    })
}
