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
//! only pre-sizes the edge arrays.

use crate::arena::{Arena, EdgeList, Player};

use super::error::FormatError;
use super::scanner::Scanner;
use super::vertices::VertexLines;
use super::{Game, MAX_VERTEX_ID, PRESIZE_EDGES, PRESIZE_VERTICES};

/// Parses an EGSolver arena from `scanner`.
pub(crate) fn parse(scanner: &mut Scanner<'_>) -> Result<Game, FormatError> {
    match parse_arena(scanner) {
        Ok(game) => {
            scanner.check_stashed()?;
            Ok(game)
        }
        Err(error) => Err(scanner.fail(error)),
    }
}

fn parse_arena(s: &mut Scanner<'_>) -> Result<Game, FormatError> {
    s.skip_blank();
    if s.eat_word(b"arena") {
        s.skip_blank();
    }
    let header_at = s.position();
    let max_id = s.unsigned("largest vertex id", MAX_VERTEX_ID)?;
    s.skip_blank();
    let mut edge_hint = None;
    if matches!(s.peek(), Some(b'0'..=b'9')) {
        edge_hint = Some(s.unsigned("edge count", u64::MAX)?);
        s.skip_blank();
    }
    s.expect(b';', "`;` ending the header `MAXID [EDGES];`")?;

    let n = max_id as usize + 1;
    let mut lines = VertexLines::with_capacity(n);
    let mut owners: Vec<Player> = Vec::with_capacity(n.min(PRESIZE_VERTICES));
    let presize = edge_hint.unwrap_or(2 * n as u64).min(PRESIZE_EDGES as u64);
    let mut edges = EdgeList::with_capacity(presize as usize);
    let mut names: Vec<(u32, Box<str>)> = Vec::new();

    loop {
        s.skip_blank();
        if s.peek().is_none() {
            break;
        }
        let at = s.position();
        let id = s.unsigned("vertex id", max_id)? as u32;
        lines.push(id, at);
        s.skip_blank();
        owners.push(owner(s)?);
        s.skip_blank();
        if !matches!(s.peek(), Some(b'0'..=b'9')) {
            let at = s.position();
            if s.peek().is_none() {
                return Err(s.unexpected(at, "the successors `SUCC:WEIGHT,...` of the vertex"));
            }
            return Err(FormatError::NoSuccessors {
                at,
                id: u64::from(id),
                found: s.describe_here(),
            });
        }
        loop {
            let succ_at = s.position();
            let succ = s.unsigned("successor id", u64::MAX)?;
            if succ > max_id {
                return Err(FormatError::DanglingSuccessor {
                    at: succ_at,
                    target: succ,
                    expected: format!("0..={max_id}, from the header at line {}", header_at.line),
                });
            }
            s.skip_blank();
            s.expect(b':', "`:` and the edge's weight after the successor id")?;
            s.skip_blank();
            let weight = s.signed("weight")?;
            edges.push(id, succ as u32, weight);
            s.skip_blank();
            match s.peek() {
                Some(b',') => {
                    s.bump();
                    s.skip_blank();
                }
                Some(b';') => {
                    s.bump();
                    break;
                }
                Some(b'0'..=b'9') | Some(b'-') => {
                    let at = s.position();
                    return Err(s.unexpected(at, "`,` between edges, a name or `;`"));
                }
                Some(_) => {
                    names.push((lines.len() as u32 - 1, s.name()?));
                    s.skip_blank();
                    let at = s.position();
                    if !s.eat(b';') {
                        return Err(s.unexpected(at, "`;` ending the vertex line after its name"));
                    }
                    break;
                }
                None => {
                    let at = s.position();
                    return Err(s.unexpected(at, "`,` and another edge, a name or `;`"));
                }
            }
        }
    }

    let end = s.position();
    s.check_stashed()?;
    let expected = format!(
        "0..={max_id} exactly once (the header at line {} says the largest id is {max_id})",
        header_at.line
    );
    let arrangement = lines.arrange(n, end, &expected)?;
    let owners = arrangement.apply(owners);
    let names = arrangement.names(n, names);
    let arena = Arena::from_edges(owners, edges, names)?;
    Ok(Game {
        arena,
        parity: None,
        initial: None,
    })
}

/// `MAX` (player 0, the energy player) or `MIN` (player 1).
#[inline]
fn owner(s: &mut Scanner<'_>) -> Result<Player, FormatError> {
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
