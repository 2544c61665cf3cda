//! Energy values and the two operations every backend shares: the bound `M` above which a
//! value becomes ⊤, and `a ⊖ w` (the credit needed before taking an edge of weight `w` when
//! `a` is needed after it).
//!
//! Values are `u64`; [`TOP`] (`u64::MAX`) is ⊤. `M < TOP` always holds for a bound returned
//! by [`bound`], so a finite value never equals ⊤ by accident, and `a ⊖ w` is computed
//! without overflow: a sum that would pass `M` becomes ⊤.

use crate::arena::Arena;

/// ⊤: player 1 wins from this vertex (no finite credit suffices).
pub const TOP: u64 = u64::MAX;

/// `M` does not fit in 64 bits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the bound M = sum over vertices of the largest negative weight leaving them does not fit \
     in 64 bits (it exceeds {max}); reduce the weights, or for parity games the number of \
     distinct priorities",
    max = u64::MAX - 1
)]
pub struct BoundOverflow;

/// `M = Σ_v max(0, −min outgoing weight of v)`, checked: every finite least credit is at
/// most `M`.
pub fn bound(arena: &Arena) -> Result<u64, BoundOverflow> {
    let mut total: u64 = 0;
    for v in 0..arena.vertex_count() as u32 {
        let min = arena.successors(v).map(|(_, w)| w).min().unwrap_or(0);
        if min < 0 {
            total = total.checked_add(min.unsigned_abs()).ok_or(BoundOverflow)?;
        }
    }
    if total == TOP {
        return Err(BoundOverflow);
    }
    Ok(total)
}

/// `a ⊖ w = max(0, a − w)`, with `⊤ ⊖ w = ⊤` and any result above `bound` becoming ⊤.
#[inline(always)]
pub fn minus(a: u64, w: i64, bound: u64) -> u64 {
    if a == TOP {
        return TOP;
    }
    if w >= 0 {
        a.saturating_sub(w as u64)
    } else {
        // `a <= bound < TOP`; a saturated sum is above `bound` as well.
        let needed = a.saturating_add(w.unsigned_abs());
        if needed > bound { TOP } else { needed }
    }
}

/// Formats a value as the text output does: the number, or `T` for ⊤.
pub fn display(value: u64) -> String {
    if value == TOP {
        "T".to_string()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_clamps_and_caps() {
        assert_eq!(minus(5, 3, 100), 2);
        assert_eq!(minus(2, 3, 100), 0);
        assert_eq!(minus(5, -3, 100), 8);
        assert_eq!(minus(98, -3, 100), TOP);
        assert_eq!(minus(97, -3, 100), 100);
        assert_eq!(minus(TOP, 50, 100), TOP);
        assert_eq!(minus(u64::MAX - 2, i64::MIN, u64::MAX - 1), TOP);
        assert_eq!(minus(0, i64::MAX, 10), 0);
    }
}
