//! The parity → energy reduction of `FORMATS.md`, exactly:
//!
//! let `p_0 < p_1 < … < p_k` be the distinct priorities present and `c_j` the number of
//! vertices of priority `p_j`;
//! - `a_0 = 0` if `p_0` is even, else `1`;
//! - `a_i = 1 + Σ { c_j · a_j : j < i, p_j and p_i of different parity }` for `i >= 1`;
//!
//! every edge leaving a vertex of priority `p_i` weighs `+a_i` if `p_i` is even, `−a_i` if
//! odd; owners stay (owner 0 is player 0). Player 0 then wins the parity game from `v`
//! exactly when `credit(v)` is finite.
//!
//! All arithmetic is checked: an `a_i` above `i64::MAX`, or a bound
//! `M = Σ_v max(0, −weight leaving v)` that does not fit the solver's `u64` values, is a
//! [`ReductionOverflow`] naming the number of distinct priorities.

/// The reduced weights or their bound do not fit in 64 bits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the parity game has {priorities} distinct priorities: reduced to an energy game its \
     {what} does not fit in 64 bits; solve it with a parity game solver, or compress the \
     priorities first (merge equal-parity neighbours)"
)]
pub struct ReductionOverflow {
    /// Number of distinct priorities in the game.
    pub priorities: usize,
    /// What overflowed (`weight of priority 17`, `bound M`).
    pub what: String,
}

/// The weight `±a_i` of every distinct priority (ascending by priority), per the reduction.
/// Also checks that the bound `M` fits in a `u64` below ⊤ (`u64::MAX`).
pub fn reduce_parity(priorities: &[u64]) -> Result<Vec<(u64, i64)>, ReductionOverflow> {
    let mut sorted = priorities.to_vec();
    sorted.sort_unstable();
    // (priority, count), ascending.
    let mut classes: Vec<(u64, u64)> = Vec::new();
    for &p in &sorted {
        match classes.last_mut() {
            Some((q, count)) if *q == p => *count += 1,
            _ => classes.push((p, 1)),
        }
    }
    reduce_parity_classes(&classes)
}

/// [`reduce_parity`] from the priority classes: `(priority, number of vertices)`, ascending
/// by priority (for readers that count the classes while parsing).
pub fn reduce_parity_classes(classes: &[(u64, u64)]) -> Result<Vec<(u64, i64)>, ReductionOverflow> {
    let distinct = classes.len();
    let overflow = |what: String| ReductionOverflow {
        priorities: distinct,
        what,
    };

    // Running Σ c_j·a_j over the classes seen so far, split by parity of p_j; `None` once
    // it overflows (an error only if a later a_i needs it: the top class's sum is unused).
    let mut sum_by_parity: [Option<u64>; 2] = [Some(0), Some(0)];
    let mut bound: u64 = 0;
    let mut weights = Vec::with_capacity(distinct);
    for (i, &(p, count)) in classes.iter().enumerate() {
        let parity = (p % 2) as usize;
        let a = if i == 0 {
            parity as u64
        } else {
            sum_by_parity[1 - parity]
                .and_then(|sum| sum.checked_add(1))
                .filter(|&a| a <= i64::MAX as u64)
                .ok_or_else(|| overflow(format!("weight of priority {p}")))?
        };
        let total = count.checked_mul(a);
        sum_by_parity[parity] = sum_by_parity[parity]
            .zip(total)
            .and_then(|(sum, t)| sum.checked_add(t));
        if parity == 1 {
            bound = total
                .and_then(|t| bound.checked_add(t))
                .filter(|&m| m < u64::MAX)
                .ok_or_else(|| overflow("bound M".to_string()))?;
        }
        let weight = if parity == 0 { a as i64 } else { -(a as i64) };
        weights.push((p, weight));
    }
    Ok(weights)
}

/// The weight of the edges leaving each vertex, given its priority and the table from
/// [`reduce_parity`] (which must contain every priority in `priorities`).
pub fn vertex_weights(priorities: &[u64], weights_by_priority: &[(u64, i64)]) -> Vec<i64> {
    priorities
        .iter()
        .map(|p| {
            let i = weights_by_priority
                .binary_search_by_key(p, |&(q, _)| q)
                .expect("weights_by_priority comes from reduce_parity over these priorities");
            weights_by_priority[i].1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_even_priority_gives_zero_weights() {
        assert_eq!(reduce_parity(&[0, 0, 0]).unwrap(), vec![(0, 0)]);
        assert_eq!(reduce_parity(&[4]).unwrap(), vec![(4, 0)]);
    }

    #[test]
    fn lowest_odd_priority_gets_minus_one() {
        assert_eq!(reduce_parity(&[1, 1]).unwrap(), vec![(1, -1)]);
    }

    #[test]
    fn weights_follow_the_formula() {
        // priorities 0 (x2), 1 (x3), 2 (x1), 5 (x1)
        // a0 = 0; a1 = 1 + 2*0 = 1; a2 = 1 + 3*1 = 4; a3 = 1 + (2*0 + 1*4) = 5
        let w = reduce_parity(&[0, 1, 0, 1, 2, 1, 5]).unwrap();
        assert_eq!(w, vec![(0, 0), (1, -1), (2, 4), (5, -5)]);
        assert_eq!(vertex_weights(&[5, 0, 2], &w), vec![-5, 0, 4]);
    }

    #[test]
    fn overflow_names_the_priority_count() {
        // Alternating parities with large classes grow a_i geometrically.
        let mut priorities = Vec::new();
        for p in 0..80u64 {
            priorities.extend(std::iter::repeat_n(p, 3));
        }
        let err = reduce_parity(&priorities).unwrap_err();
        assert_eq!(err.priorities, 80);
        assert!(err.to_string().contains("80 distinct priorities"), "{err}");
    }
}
