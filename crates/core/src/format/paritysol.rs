//! Reader for PGSolver's `paritysol` solution format, as Oink writes it: `paritysol N;`
//! then one `ID WINNER [STRATEGY];` line per vertex (the strategy only where the winner owns
//! the vertex). Used to compare answers with Oink's `.sol` files.

use std::io::Read;

use super::cursor::Cursor;
use super::error::FormatError;
use super::pipeline::read_whole;
use super::{MAX_VERTEX_ID, PRESIZE_VERTICES, ReadOptions};

/// One line of a `paritysol` file: vertex, winner (0 or 1), strategy successor if any.
pub type ParitySolLine = (u32, u8, Option<u32>);

/// Reads a (possibly compressed) `paritysol` file. The lines come back in file order; the
/// header's `N` is checked to be the line count or the largest id.
pub fn read_paritysol(reader: impl Read) -> Result<Vec<ParitySolLine>, FormatError> {
    read_paritysol_with(reader, &ReadOptions::default())
}

/// [`read_paritysol`] with a size limit and progress counter.
pub fn read_paritysol_with(
    reader: impl Read,
    opts: &ReadOptions,
) -> Result<Vec<ParitySolLine>, FormatError> {
    read_whole(reader, opts, |text| parse(&mut Cursor::new(text, 1)))
}

fn parse(s: &mut Cursor<'_>) -> Result<Vec<ParitySolLine>, FormatError> {
    s.skip_blank();
    let mut declared = None;
    if s.eat_word(b"paritysol") {
        s.skip_blank();
        let at = s.position();
        declared = Some((s.unsigned("vertex count", MAX_VERTEX_ID + 1)?, at));
        s.skip_blank();
        s.expect(b';', "`;` ending the header `paritysol N;`")?;
    }
    let mut lines =
        Vec::with_capacity(declared.map_or(0, |(n, _)| (n as usize).min(PRESIZE_VERTICES)));
    while !s.at_end() {
        let id = s.unsigned("vertex id", MAX_VERTEX_ID)? as u32;
        s.skip_blank();
        let at = s.position();
        let winner = s.unsigned("winner", u64::MAX)?;
        if winner > 1 {
            return Err(FormatError::OutOfRange {
                at,
                what: "winner",
                found: winner.to_string(),
                min: "0".into(),
                max: "1".into(),
            });
        }
        s.skip_blank();
        let strategy = match s.peek() {
            Some(b'0'..=b'9') => {
                let t = s.unsigned("strategy successor", MAX_VERTEX_ID)? as u32;
                s.skip_blank();
                Some(t)
            }
            _ => None,
        };
        s.expect(b';', "`;` ending the solution line")?;
        lines.push((id, winner as u8, strategy));
    }
    if let Some((n, at)) = declared {
        let count = lines.len() as u64;
        if n != count && n + 1 != count {
            return Err(FormatError::HeaderMismatch {
                at,
                declared: format!("`paritysol {n};`"),
                actual: format!("{count} solution lines"),
            });
        }
    }
    Ok(lines)
}
