//! How the CPU backend stores the progress measure: `u32` per vertex when the game's bound
//! `M` is below `u32::MAX` (every value is then at most `M` or ⊤, and ⊤ is stored as
//! `u32::MAX`), `u64` otherwise. Loads widen to the `u64` values of `solve::energy` and
//! stores narrow back, so the one ⊖ and every comparison stay in `u64`; only the bytes per
//! vertex change. Chosen once per solve (`lift_from`).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::solve::energy::{TOP, minus};

/// A storage width of values. Accesses are `Relaxed` (see `state`).
pub(super) trait Value: Send + Sync + 'static {
    /// The per-vertex cell.
    type Cell: Send + Sync;
    /// Bytes per cell.
    const BYTES: usize;
    /// A cell holding `x` (`x <= M` or ⊤).
    fn cell(x: u64) -> Self::Cell;
    /// The value of `cell`, ⊤ as `u64::MAX`.
    fn load(cell: &Self::Cell) -> u64;
    /// Stores `x` (`x <= M` or ⊤).
    fn store(cell: &Self::Cell, x: u64);
    /// The value of an owned cell.
    fn into_inner(cell: Self::Cell) -> u64;
    /// `load(cell) ⊖ w` (`solve::energy::minus`), for cells that can test ⊤ before widening.
    #[inline(always)]
    fn minus(cell: &Self::Cell, w: i64, bound: u64) -> u64 {
        minus(Self::load(cell), w, bound)
    }
}

/// `u64` cells: any bound.
pub(super) struct Wide;

impl Value for Wide {
    type Cell = AtomicU64;
    const BYTES: usize = 8;
    #[inline(always)]
    fn cell(x: u64) -> AtomicU64 {
        AtomicU64::new(x)
    }
    #[inline(always)]
    fn load(cell: &AtomicU64) -> u64 {
        cell.load(Relaxed)
    }
    #[inline(always)]
    fn store(cell: &AtomicU64, x: u64) {
        cell.store(x, Relaxed);
    }
    fn into_inner(cell: AtomicU64) -> u64 {
        cell.into_inner()
    }
}

/// `u32` cells: only for bounds below `u32::MAX` ([`Narrow::fits`]).
pub(super) struct Narrow;

impl Narrow {
    /// Whether every value of a game with bound `bound` fits a `u32` cell.
    pub fn fits(bound: u64) -> bool {
        bound < u32::MAX as u64
    }
}

impl Value for Narrow {
    type Cell = AtomicU32;
    const BYTES: usize = 4;
    #[inline(always)]
    fn cell(x: u64) -> AtomicU32 {
        AtomicU32::new(narrow(x))
    }
    #[inline(always)]
    fn load(cell: &AtomicU32) -> u64 {
        widen(cell.load(Relaxed))
    }
    #[inline(always)]
    fn store(cell: &AtomicU32, x: u64) {
        cell.store(narrow(x), Relaxed);
    }
    fn into_inner(cell: AtomicU32) -> u64 {
        widen(cell.into_inner())
    }
    #[inline(always)]
    fn minus(cell: &AtomicU32, w: i64, bound: u64) -> u64 {
        // ⊤ tested on the narrow cell: the widened finite value then provably is not ⊤, so
        // `minus` drops its own test (widening first costs a select per edge).
        let x = cell.load(Relaxed);
        if x == u32::MAX {
            TOP
        } else {
            minus(x as u64, w, bound)
        }
    }
}

#[inline(always)]
fn narrow(x: u64) -> u32 {
    debug_assert!(x == TOP || x < u32::MAX as u64);
    if x == TOP { u32::MAX } else { x as u32 }
}

#[inline(always)]
fn widen(x: u32) -> u64 {
    if x == u32::MAX { TOP } else { x as u64 }
}
