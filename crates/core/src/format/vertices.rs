//! Bookkeeping of vertex lines gathered by a text reader: which id each line defined and
//! where, so that at the end every id `0..n` can be checked to appear exactly once, with the
//! error pointing at the duplicate line or naming the missing id.
//!
//! Memory stays proportional to the input, whatever ids a header or a line claims: nothing
//! is indexed by id until the ids are known to be exactly `0..n`. Files that list vertices
//! in order (the usual case) skip the sort.

use super::error::{FormatError, Position};

/// The vertex lines seen so far, in file order.
pub(crate) struct VertexLines {
    ids: Vec<u32>,
    positions: Vec<Position>,
    in_order: bool,
}

/// Where line `i` (in file order) of a vertex attribute goes: `None` when the lines are
/// already in id order, else `slot[i]` is the id of line `i`.
#[derive(Debug)]
pub(crate) struct Arrangement(Option<Vec<u32>>);

impl VertexLines {
    /// Lines already gathered: `ids[i]` defined at `positions[i]`, in file order.
    pub(crate) fn from_parts(ids: Vec<u32>, positions: Vec<Position>) -> VertexLines {
        let in_order = ids.iter().enumerate().all(|(i, &id)| id as usize == i);
        VertexLines {
            ids,
            positions,
            in_order,
        }
    }

    /// The largest id and where it was defined.
    pub(crate) fn max_id(&self) -> Option<(u32, Position)> {
        let (i, &id) = self.ids.iter().enumerate().max_by_key(|&(_, &id)| id)?;
        Some((id, self.positions[i]))
    }

    /// Checks that the ids are exactly `0..n`, each once. A missing id is reported at
    /// `missing_at` with `expected` describing the required range.
    pub(crate) fn arrange(
        &self,
        n: usize,
        missing_at: Position,
        expected: &str,
    ) -> Result<Arrangement, FormatError> {
        let missing = |id: usize| FormatError::MissingVertex {
            at: missing_at,
            id: id as u64,
            expected: expected.to_string(),
        };
        if self.in_order {
            if self.ids.len() < n {
                return Err(missing(self.ids.len()));
            }
            return Ok(Arrangement(None));
        }
        let mut lines: Vec<u32> = (0..self.ids.len() as u32).collect();
        lines.sort_unstable_by_key(|&i| (self.ids[i as usize], i));
        for pair in lines.windows(2) {
            let (first, second) = (pair[0] as usize, pair[1] as usize);
            if self.ids[first] == self.ids[second] {
                return Err(FormatError::DuplicateVertex {
                    at: self.positions[second],
                    id: u64::from(self.ids[second]),
                    first_line: self.positions[first].line,
                });
            }
        }
        // No duplicates: the sorted ids are 0..n exactly when each equals its rank.
        if let Some(rank) = lines
            .iter()
            .enumerate()
            .position(|(rank, &i)| self.ids[i as usize] as usize != rank)
        {
            return Err(missing(rank));
        }
        if self.ids.len() < n {
            return Err(missing(self.ids.len()));
        }
        Ok(Arrangement(Some(self.ids.clone())))
    }
}

impl Arrangement {
    /// Puts per-line values (file order) into id order.
    pub(crate) fn apply<T: Copy>(&self, values: Vec<T>) -> Vec<T> {
        match (&self.0, values.first()) {
            (None, _) | (_, None) => values,
            (Some(slot), Some(&any)) => {
                let mut out = vec![any; values.len()];
                for (&id, value) in slot.iter().zip(values) {
                    out[id as usize] = value;
                }
                out
            }
        }
    }

    /// Puts names given as `(line index, name)` into a per-id table of `n` entries.
    pub(crate) fn names(
        &self,
        n: usize,
        named: Vec<(u32, Box<str>)>,
    ) -> Option<Vec<Option<Box<str>>>> {
        if named.is_empty() {
            return None;
        }
        let mut out = vec![None; n];
        for (line, name) in named {
            let id = match &self.0 {
                None => line,
                Some(slot) => slot[line as usize],
            };
            out[id as usize] = Some(name);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64) -> Position {
        Position { line, column: 1 }
    }

    fn lines(ids: &[u32]) -> VertexLines {
        let positions = (0..ids.len()).map(|i| at(i as u64 + 1)).collect();
        VertexLines::from_parts(ids.to_vec(), positions)
    }

    #[test]
    fn out_of_order_lines_are_put_in_id_order_with_their_names() {
        let arrangement = lines(&[2, 0, 1]).arrange(3, at(9), "").unwrap();
        assert_eq!(arrangement.apply(vec!['c', 'a', 'b']), vec!['a', 'b', 'c']);
        let names = arrangement
            .names(3, vec![(0, "two".into()), (2, "one".into())])
            .unwrap();
        assert_eq!(names, vec![None, Some("one".into()), Some("two".into())]);
    }

    #[test]
    fn duplicates_point_at_the_second_line_and_gaps_name_the_missing_id() {
        match lines(&[1, 0, 1]).arrange(3, at(9), "") {
            Err(FormatError::DuplicateVertex {
                at: p,
                id: 1,
                first_line: 1,
            }) => assert_eq!(p.line, 3),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            lines(&[0, 2]).arrange(3, at(9), ""),
            Err(FormatError::MissingVertex { id: 1, .. })
        ));
        assert!(matches!(
            lines(&[0, 1]).arrange(3, at(9), ""),
            Err(FormatError::MissingVertex { id: 2, .. })
        ));
        assert!(matches!(
            lines(&[1, 0]).arrange(3, at(9), ""),
            Err(FormatError::MissingVertex { id: 2, .. })
        ));
    }
}
