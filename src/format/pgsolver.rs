//! Reader for PGSolver max-parity games (`.gm`), as mCRL2, Oink and PGSolver write them:
//!
//! ```text
//! game  ::= ["parity" N ";"] ["start" ID ";"] node+
//! node  ::= ID PRIORITY OWNER SUCC ("," SUCC)* [STRING] ";"
//! OWNER ::= "0" | "1"
//! ```
//!
//! The vertices are the ids that have a node line; they must be exactly `0..n` (any order,
//! no holes, no repeats), and every successor must be one of them. `N` is the largest id in
//! PGSolver and mCRL2 output but the vertex count in some generators: both are accepted,
//! anything else is a header mismatch. The priorities are compressed and the game turned
//! into an energy game by the exact reduction where it fits ([`super::parity_arena`]); the
//! priorities are kept in [`super::ParityInfo`].

use crate::arena::{EdgeList, Player};

use super::error::{FormatError, Position};
use super::parity::parity_arena;
use super::scanner::Scanner;
use super::vertices::VertexLines;
use super::{Game, MAX_VERTEX_ID, PRESIZE_EDGES, PRESIZE_VERTICES};

/// Parses a PGSolver parity game from `scanner` and reduces it to an energy game.
pub(crate) fn parse(scanner: &mut Scanner<'_>) -> Result<Game, FormatError> {
    match parse_game(scanner) {
        Ok(game) => {
            scanner.check_stashed()?;
            Ok(game)
        }
        Err(error) => Err(scanner.fail(error)),
    }
}

fn parse_game(s: &mut Scanner<'_>) -> Result<Game, FormatError> {
    let mut declared: Option<(u64, Position)> = None;
    let mut start: Option<(u64, Position)> = None;
    loop {
        s.skip_blank();
        if s.eat_word(b"parity") {
            s.skip_blank();
            let at = s.position();
            declared = Some((
                s.unsigned("vertex count or largest id", MAX_VERTEX_ID + 1)?,
                at,
            ));
        } else if s.eat_word(b"start") {
            s.skip_blank();
            let at = s.position();
            start = Some((s.unsigned("start vertex", MAX_VERTEX_ID)?, at));
        } else {
            break;
        }
        s.skip_blank();
        s.expect(b';', "`;` ending the header line")?;
    }

    let hint = declared.map_or(0, |(n, _)| n as usize + 1);
    let mut lines = VertexLines::with_capacity(hint);
    let mut owners: Vec<Player> = Vec::with_capacity(hint.min(PRESIZE_VERTICES));
    let mut priorities: Vec<u64> = Vec::with_capacity(hint.min(PRESIZE_VERTICES));
    let mut edges = EdgeList::with_capacity((3 * hint).min(PRESIZE_EDGES));
    let mut names: Vec<(u32, Box<str>)> = Vec::new();
    let mut max_target: Option<(u32, Position)> = None;

    loop {
        s.skip_blank();
        if s.peek().is_none() {
            break;
        }
        let at = s.position();
        let id = s.unsigned("vertex id", MAX_VERTEX_ID)? as u32;
        lines.push(id, at);
        s.skip_blank();
        priorities.push(s.unsigned("priority", u64::MAX)?);
        s.skip_blank();
        owners.push(owner(s)?);
        s.skip_blank();
        if !matches!(s.peek(), Some(b'0'..=b'9')) {
            let at = s.position();
            if s.peek().is_none() {
                return Err(s.unexpected(at, "the successors `SUCC, ...` of the vertex"));
            }
            return Err(FormatError::NoSuccessors {
                at,
                id: u64::from(id),
                found: s.describe_here(),
            });
        }
        loop {
            let succ_at = s.position();
            let succ = s.unsigned("successor id", MAX_VERTEX_ID)? as u32;
            if max_target.is_none_or(|(max, _)| succ > max) {
                max_target = Some((succ, succ_at));
            }
            edges.push(id, succ, 0);
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
                Some(_) => {
                    names.push((lines.len() as u32 - 1, s.name()?));
                    s.skip_blank();
                    let at = s.position();
                    if !s.eat(b';') {
                        return Err(s.unexpected(at, "`;` ending the node line after its name"));
                    }
                    break;
                }
                None => {
                    let at = s.position();
                    return Err(s.unexpected(at, "`,` and another successor, a name or `;`"));
                }
            }
        }
    }

    let end = s.position();
    s.check_stashed()?;
    let n = lines.len();
    if n == 0 {
        return Err(FormatError::UnexpectedEnd {
            at: end,
            expected: "a node line `ID PRIORITY OWNER SUCC,...;`".into(),
        });
    }
    if let Some((declared, at)) = declared {
        if declared != n as u64 && declared + 1 != n as u64 {
            return Err(FormatError::HeaderMismatch {
                at,
                declared: format!("`parity {declared};`"),
                actual: format!(
                    "{n} node lines (the header must give the largest id {} or the count {n})",
                    n - 1
                ),
            });
        }
    }
    let expected = match lines.max_id() {
        Some((max, max_at)) if max as usize >= n => format!(
            "0..={} exactly once: the {n} node lines must number the vertices without holes, \
             but line {} defines vertex {max}",
            n - 1,
            max_at.line
        ),
        _ => format!("0..={} exactly once", n - 1),
    };
    let arrangement = lines.arrange(n, end, &expected)?;
    if let Some((target, at)) = max_target {
        if target as usize >= n {
            return Err(FormatError::DanglingSuccessor {
                at,
                target: u64::from(target),
                expected: format!("0..={}: no node line defines vertex {target}", n - 1),
            });
        }
    }
    let initial = match start {
        Some((id, at)) if id as usize >= n => {
            return Err(FormatError::DanglingSuccessor {
                at,
                target: id,
                expected: format!("0..={} as the start vertex", n - 1),
            });
        }
        Some((id, _)) => Some(id as u32),
        None => None,
    };

    let owners = arrangement.apply(owners);
    let priorities = arrangement.apply(priorities);
    let names = arrangement.names(n, names);
    let (arena, parity) = parity_arena(owners, edges, names, priorities)?;
    Ok(Game {
        arena,
        parity: Some(parity),
        initial,
    })
}

/// `0` (player 0, who wins on even priorities) or `1`.
#[inline]
fn owner(s: &mut Scanner<'_>) -> Result<Player, FormatError> {
    let at = s.position();
    match s.peek() {
        Some(b'0') | Some(b'1') => {
            let value = s.unsigned("owner", u64::MAX).unwrap_or(2);
            match value {
                0 => return Ok(Player::Zero),
                1 => return Ok(Player::One),
                _ => {}
            }
        }
        None => return Err(s.unexpected(at, "the owner `0` or `1`")),
        _ => {}
    }
    Err(FormatError::BadOwner {
        at,
        found: if s.position() == at {
            s.describe_here()
        } else {
            "a number other than 0 or 1".into()
        },
        expected: "`0` (player 0, who wins on even priorities) or `1`",
    })
}
