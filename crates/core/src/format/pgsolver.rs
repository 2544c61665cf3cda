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
//! into an energy game by the exact reduction where it fits ([`super::parity`]: each edge
//! gets its weight as the arena is laid out); the priorities are kept in
//! [`super::ParityInfo`].
//!
//! The header lines are read first, on the calling thread; the node lines are parsed in
//! chunks on all threads ([`super::chunks`]) by [`parse_record`], then [`assemble`] checks
//! the ids and builds the arena.

use crate::arena::{EdgeWeights, Player};

use super::assemble::{self, Layout, Placement};
use super::cursor::{Cursor, shift_position};
use super::error::{FormatError, Position};
use super::fast;
use super::parity::ParityPlan;
use super::records::{Parsed, Records, another_edge, successors_follow};
use super::{Game, MAX_VERTEX_ID};

/// What the header lines say.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Header {
    /// `parity N;`: the number and where it is written.
    pub declared: Option<(u64, Position)>,
    /// `start ID;`: the vertex and where it is written.
    pub start: Option<(u64, Position)>,
}

/// Parses the optional header lines at the start of `s`.
pub(crate) fn parse_header(s: &mut Cursor<'_>) -> Result<Header, FormatError> {
    let mut header = Header::default();
    loop {
        s.skip_blank();
        if s.eat_word(b"parity") {
            s.skip_blank();
            let at = s.position();
            header.declared = Some((
                s.unsigned("vertex count or largest id", MAX_VERTEX_ID + 1)?,
                at,
            ));
        } else if s.eat_word(b"start") {
            s.skip_blank();
            let at = s.position();
            header.start = Some((s.unsigned("start vertex", MAX_VERTEX_ID)?, at));
        } else {
            return Ok(header);
        }
        s.skip_blank();
        s.expect(b';', "`;` ending the header line")?;
    }
}

/// Parses one node line starting at `at` into `r`.
#[inline]
pub(crate) fn parse_record(
    s: &mut Cursor<'_>,
    r: &mut Records,
    at: Position,
) -> Result<(), FormatError> {
    if let Some(line) = fast::gm_record(s.text(), s.offset(), r) {
        let (succ, offset) = line.max_target;
        if r.max_target.is_none_or(|(max, _)| succ > max) {
            r.max_target = Some((succ, s.position_at(offset)));
        }
        r.priorities.push(line.priority);
        r.finish_record(line.read.id, line.read.owner, at);
        s.jump(line.read.end);
        return Ok(());
    }
    let id = s.unsigned("vertex id", MAX_VERTEX_ID)? as u32;
    s.skip_blank();
    let priority = s.unsigned("priority", u64::MAX)?;
    s.skip_blank();
    let owner = owner(s)?;
    s.skip_blank();
    successors_follow(s, id, "the successors `SUCC, ...` of the vertex")?;
    let mut max_target: Option<(u32, Position)> = None;
    loop {
        let succ_at = s.position();
        let succ = s.unsigned("successor id", MAX_VERTEX_ID)? as u32;
        if max_target.is_none_or(|(max, _)| succ > max) {
            max_target = Some((succ, succ_at));
        }
        r.targets.push(succ);
        s.skip_blank();
        if !another_edge(s, r, "node", "`,` and another successor, a name or `;`")? {
            break;
        }
    }
    if let Some((succ, succ_at)) = max_target {
        if r.max_target.is_none_or(|(max, _)| succ > max) {
            r.max_target = Some((succ, succ_at));
        }
    }
    r.priorities.push(priority);
    r.finish_record(id, owner, at);
    Ok(())
}

/// `0` (player 0, who wins on even priorities) or `1`.
#[inline(always)]
fn owner(s: &mut Cursor<'_>) -> Result<Player, FormatError> {
    let at = s.position();
    match s.peek() {
        Some(b'0' | b'1') => {
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

/// Checks the node lines against each other and the header, reduces the game and builds
/// the arena.
pub(crate) fn assemble(header: Header, parsed: Parsed) -> Result<Game, FormatError> {
    let n = parsed.record_count();
    if n == 0 {
        return Err(FormatError::UnexpectedEnd {
            at: parsed.end,
            expected: "a node line `ID PRIORITY OWNER SUCC,...;`".into(),
        });
    }
    let placement = assemble::placement(&parsed);
    if let Some((declared, at)) = header.declared {
        // A header that names the largest id the lines define (or the count it implies) is
        // right; the lines' holes are the problem, said below.
        let names_largest_id = || {
            matches!(placement, Placement::Shuffled)
                && assemble::vertex_lines(&parsed)
                    .max_id()
                    .is_some_and(|(max, _)| {
                        declared == u64::from(max) || declared == u64::from(max) + 1
                    })
        };
        if declared != n as u64 && declared + 1 != n as u64 && !names_largest_id() {
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
    let arrangement = match placement {
        Placement::InOrder(_) => None,
        Placement::Shuffled => {
            let lines = assemble::vertex_lines(&parsed);
            let expected = match lines.max_id() {
                Some((max, max_at)) if max as usize >= n => format!(
                    "0..={} exactly once: the {n} node lines must number the vertices without \
                     holes, but line {} defines vertex {max}",
                    n - 1,
                    max_at.line
                ),
                _ => format!("0..={} exactly once", n - 1),
            };
            Some(lines.arrange(n, parsed.end, &expected)?)
        }
    };
    let max_target = parsed
        .chunks
        .iter()
        .filter_map(|c| {
            let (target, at) = c.records.max_target?;
            Some((target, shift_position(at, c.first_line)))
        })
        .fold(None, |best: Option<(u32, Position)>, (t, at)| match best {
            Some((max, _)) if max >= t => best,
            _ => Some((t, at)),
        });
    if let Some((target, at)) = max_target {
        if target as usize >= n {
            return Err(FormatError::DanglingSuccessor {
                at,
                target: u64::from(target),
                expected: format!("0..={}: no node line defines vertex {target}", n - 1),
            });
        }
    }
    let initial = match header.start {
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

    let layout = Layout::of(&parsed);
    let priorities = layout.per_record(&parsed, |r| &r.priorities);
    // Priorities by vertex id, then the reduction planned, so that every edge is written
    // once with its weight.
    let priorities = match &arrangement {
        None => priorities,
        Some(arrangement) => arrangement.apply(priorities),
    };
    let plan = ParityPlan::new(priorities);
    let weight_of = |id: u32| plan.vertex_weight(id as usize);
    let arena = match arrangement {
        None => {
            let widest = plan.widest();
            let weights = if i16::try_from(widest).is_ok() {
                EdgeWeights::I16(
                    layout.per_edge_of_record(&parsed, |r, i| weight_of(r.id(i)) as i16),
                )
            } else if i32::try_from(widest).is_ok() {
                EdgeWeights::I32(
                    layout.per_edge_of_record(&parsed, |r, i| weight_of(r.id(i)) as i32),
                )
            } else {
                EdgeWeights::I64(layout.per_edge_of_record(&parsed, |r, i| weight_of(r.id(i))))
            };
            assemble::in_order_arena(parsed, &layout, weights, n)?
        }
        Some(arrangement) => {
            assemble::shuffled_arena(&parsed, &arrangement, n, |r, i, _| weight_of(r.id(i)))?
        }
    };
    let (arena, parity) = plan.finish(arena);
    Ok(Game {
        arena,
        parity: Some(parity),
        initial,
    })
}
