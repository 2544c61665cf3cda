//! Energy values and the two operations every backend shares: the bound `M` above which a
//! value becomes ⊤, and `a ⊖ w` (the credit needed before taking an edge of weight `w` when
//! `a` is needed after it).
//!
//! Values are `u64`; [`TOP`] (`u64::MAX`) is ⊤. `M < TOP` always holds for a bound returned
//! by [`bound`], so a finite value never equals ⊤ by accident, and `a ⊖ w` is computed
//! without overflow: a sum that would pass `M` becomes ⊤.

use super::Threads;
use super::chunked;
use crate::arena::{Arena, Weight, Width};

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
/// most `M`. One pass over the weights on the calling thread; [`bound_on`] spreads it.
pub fn bound(arena: &Arena) -> Result<u64, BoundOverflow> {
    bound_on(arena, &Threads::one())
}

/// [`bound`] on `threads` (in parallel where the game is large enough): the sum of exact
/// per-vertex terms in 128 bits, so its value does not depend on how the vertices are split.
pub fn bound_on(arena: &Arena, threads: &Threads) -> Result<u64, BoundOverflow> {
    let total = match arena.weight_width() {
        Width::I16 => deficit_sum::<i16>(arena, threads),
        Width::I32 => deficit_sum::<i32>(arena, threads),
        Width::I64 => deficit_sum::<i64>(arena, threads),
    };
    // `TOP` itself is ⊤, so the largest bound is `TOP - 1`.
    match u64::try_from(total) {
        Ok(total) if total != TOP => Ok(total),
        _ => Err(BoundOverflow),
    }
}

/// `Σ_v max(0, −min outgoing weight of v)` without overflow (at most `2^32 · 2^63`).
fn deficit_sum<W: Weight>(arena: &Arena, threads: &Threads) -> u128 {
    let (weights, _) = arena
        .typed_weights::<W>()
        .expect("dispatched on the arena's weight width");
    let offsets = arena.succ_offsets();
    let deficits = |vertices: std::ops::Range<usize>| -> u128 {
        let mut sum = 0u128;
        for v in vertices {
            let edges = &weights[offsets[v] as usize..offsets[v + 1] as usize];
            let min = edges.iter().map(|w| w.widen()).min().unwrap_or(0);
            sum += u128::from(min.min(0).unsigned_abs());
        }
        sum
    };
    let n = arena.vertex_count();
    if !threads.parallel(n + weights.len()) {
        return deficits(0..n);
    }
    threads.install(|| {
        chunked::values_of_chunks(n, 1 << 14, |_, chunk| deficits(chunk))
            .into_iter()
            .sum()
    })
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
    use crate::arena::{EdgeList, Player};
    use crate::generate::{RandomParams, random};

    /// `M` summed the plain way, in 128 bits.
    fn plain_bound(arena: &Arena) -> Option<u64> {
        let total: u128 = (0..arena.vertex_count() as u32)
            .map(|v| {
                let min = arena.successors(v).map(|(_, w)| w).min().unwrap_or(0);
                u128::from(min.min(0).unsigned_abs())
            })
            .sum();
        u64::try_from(total).ok().filter(|&t| t != TOP)
    }

    /// A ring of `n` vertices, each with one edge of weight `w`.
    fn ring(n: u32, w: i64) -> Arena {
        let mut edges = EdgeList::with_capacity(n as usize);
        for v in 0..n {
            edges.push(v, (v + 1) % n, w);
        }
        Arena::from_edges(vec![Player::Zero; n as usize], edges, None).expect("an arena")
    }

    #[test]
    fn the_bound_is_the_same_on_any_number_of_threads_and_at_every_weight_width() {
        let fresh = rand::random::<u64>();
        for seed in (0..12).chain([fresh]) {
            for (min_weight, max_weight) in [(-10, 10), (-40_000, 5), (-(1 << 40), 1 << 40)] {
                let arena = random(
                    RandomParams {
                        vertices: 3_000,
                        min_degree: 1,
                        max_degree: 5,
                        min_weight,
                        max_weight,
                        player1_percent: 50,
                    },
                    seed,
                );
                let expected = plain_bound(&arena).expect("fits");
                assert_eq!(bound(&arena), Ok(expected), "seed {seed}");
                for threads in [2, 3] {
                    let threads = Threads::new(threads).with_parallel_from(0);
                    assert_eq!(bound_on(&arena, &threads), Ok(expected), "seed {seed}");
                }
            }
        }
    }

    #[test]
    fn a_bound_past_64_bits_or_equal_to_top_is_an_overflow() {
        let threads = Threads::new(3).with_parallel_from(0);
        // 4 · 2^62 = 2^64: past u64.
        let past = ring(4, -(1 << 62));
        assert_eq!(plain_bound(&past), None);
        assert_eq!(bound(&past), Err(BoundOverflow));
        assert_eq!(bound_on(&past, &threads), Err(BoundOverflow));
        // 3 · (2^64 − 1) / 3 = TOP exactly.
        let top = ring(3, -((((1u128 << 64) - 1) / 3) as i64));
        assert_eq!(bound(&top), Err(BoundOverflow));
        assert_eq!(bound_on(&top, &threads), Err(BoundOverflow));
        // One less fits.
        let mut edges = EdgeList::with_capacity(3);
        let third = (((1u128 << 64) - 1) / 3) as i64;
        for (v, w) in [(0, -third), (1, -third), (2, 1 - third)] {
            edges.push(v, (v + 1) % 3, w);
        }
        let below = Arena::from_edges(vec![Player::One; 3], edges, None).expect("an arena");
        assert_eq!(bound_on(&below, &threads), Ok(TOP - 1));
    }

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
