//! Bookkeeping of vertex lines while a text reader streams: which id each line defined and
//! where, so that at the end every id `0..n` can be checked to appear exactly once, with the
//! error pointing at the duplicate line or naming the missing id.
//!
//! Memory stays proportional to the input, whatever ids a header or a line claims: nothing
//! is indexed by id until the ids are known to be exactly `0..n`. Files that list vertices
//! in order (the usual case) skip the sort.

use super::error::{FormatError, Position};

/// The vertex lines seen so far, in file order.
#[derive(Default)]
pub(crate) struct VertexLines {
    ids: Vec<u32>,
    positions: Vec<Position>,
    in_order: bool,
}

/// Where line `i` (in file order) of a vertex attribute goes: `None` when the lines are
/// already in id order, else `slot[i]` is the id of line `i`.
pub(crate) struct Arrangement(Option<Vec<u32>>);

impl VertexLines {
    /// Room for `n` vertex lines (capped: a header cannot force a huge allocation).
    pub(crate) fn with_capacity(n: usize) -> VertexLines {
        let n = n.min(super::PRESIZE_VERTICES);
        VertexLines {
            ids: Vec::with_capacity(n),
            positions: Vec::with_capacity(n),
            in_order: true,
        }
    }

    /// Records that the line at `at` defines vertex `id`.
    #[inline]
    pub(crate) fn push(&mut self, id: u32, at: Position) {
        if id as usize != self.ids.len() {
            self.in_order = false;
        }
        self.ids.push(id);
        self.positions.push(at);
    }

    /// Number of vertex lines.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
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
