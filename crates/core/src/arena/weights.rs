//! Edge weights stored at the narrowest width that holds every weight of the game: `i16`,
//! `i32` or `i64`, chosen once when the arena is built. Weights are `i64` in meaning
//! everywhere (every accessor widens); only the storage is narrow, which halves or quarters
//! the bytes per edge of the common games (energy files and two-priority parity games).
//!
//! Hot loops that want the narrow slices themselves (the CPU backend) ask for them through
//! [`Weight`] and dispatch once per solve; everything else reads `i64` through
//! [`WeightSlice`].

use std::borrow::Cow;

use super::PARALLEL_EDGES;
use super::storage::Array;

/// Weights of the `m` edges of one direction (successors or predecessors), owned or shared
/// ([`Array`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Weights {
    I16(Array<i16>),
    I32(Array<i32>),
    I64(Array<i64>),
}

impl Weights {
    /// [`Array::release`] of the weights' array.
    pub(crate) fn release(&self) {
        match self {
            Weights::I16(a) => a.release(),
            Weights::I32(a) => a.release(),
            Weights::I64(a) => a.release(),
        }
    }

    /// `weights` stored at `width`, which must hold every one of them ([`Width::of`]; both
    /// directions of an arena use one width).
    pub fn at_width(weights: Box<[i64]>, width: Width) -> Weights {
        match width {
            Width::I16 => {
                Weights::I16(weights.iter().map(|&w| w as i16).collect::<Vec<_>>().into())
            }
            Width::I32 => {
                Weights::I32(weights.iter().map(|&w| w as i32).collect::<Vec<_>>().into())
            }
            Width::I64 => Weights::I64(weights.into()),
        }
    }

    /// The same weights at the narrowest width that holds them: these (shared arrays stay
    /// shared) when they already are, else a narrower owned copy. A file may store weights
    /// wider than they need; the arena's width is always the narrowest.
    pub fn narrowest(self) -> Weights {
        let view = self.view();
        let (lo, hi) = if view.len() < PARALLEL_EDGES {
            view.iter()
                .fold((0, 0), |(lo, hi), w| (w.min(lo), w.max(hi)))
        } else {
            crate::solve::chunked::values_of_chunks(view.len(), 1 << 16, |_, range| {
                view.slice(range)
                    .iter()
                    .fold((0, 0), |(lo, hi), w| (w.min(lo), w.max(hi)))
            })
            .into_iter()
            .fold((0, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)))
        };
        self.narrowed_to(lo, hi)
    }

    /// [`Weights::narrowest`] for weights known to lie in `lo..=hi` (each bound one of them
    /// or 0), without reading them again.
    pub fn narrowed_to(self, lo: i64, hi: i64) -> Weights {
        let view = self.view();
        let width = Width::of(&[lo, hi]);
        if width == self.width() {
            return self;
        }
        match width {
            Width::I16 => Weights::I16(view.iter().map(|w| w as i16).collect::<Vec<_>>().into()),
            Width::I32 => Weights::I32(view.iter().map(|w| w as i32).collect::<Vec<_>>().into()),
            Width::I64 => self,
        }
    }

    /// The width these are stored at.
    pub fn width(&self) -> Width {
        match self {
            Weights::I16(_) => Width::I16,
            Weights::I32(_) => Width::I32,
            Weights::I64(_) => Width::I64,
        }
    }

    /// Whether these borrow a shared buffer.
    pub fn is_shared(&self) -> bool {
        match self {
            Weights::I16(a) => a.is_shared(),
            Weights::I32(a) => a.is_shared(),
            Weights::I64(a) => a.is_shared(),
        }
    }

    /// A borrowed view.
    #[inline]
    pub fn view(&self) -> WeightSlice<'_> {
        match self {
            Weights::I16(s) => WeightSlice::I16(s),
            Weights::I32(s) => WeightSlice::I32(s),
            Weights::I64(s) => WeightSlice::I64(s),
        }
    }
}

/// A storage width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Width {
    /// Every weight fits in `i16`.
    I16,
    /// Every weight fits in `i32`.
    I32,
    /// Full `i64`.
    I64,
}

impl Width {
    /// Bits per weight.
    pub fn bits(self) -> u32 {
        match self {
            Width::I16 => 16,
            Width::I32 => 32,
            Width::I64 => 64,
        }
    }

    /// The narrowest width holding every weight of `weights`.
    pub fn of(weights: &[i64]) -> Width {
        let (lo, hi) = weights
            .iter()
            .fold((0i64, 0i64), |(lo, hi), &w| (lo.min(w), hi.max(w)));
        if lo >= i16::MIN as i64 && hi <= i16::MAX as i64 {
            Width::I16
        } else if lo >= i32::MIN as i64 && hi <= i32::MAX as i64 {
            Width::I32
        } else {
            Width::I64
        }
    }

    /// Bytes per stored weight.
    pub fn bytes(self) -> usize {
        match self {
            Width::I16 => 2,
            Width::I32 => 4,
            Width::I64 => 8,
        }
    }
}

/// Borrowed weights of some edge range, read as `i64`.
#[derive(Debug, Clone, Copy)]
pub enum WeightSlice<'a> {
    /// Weights stored in 16 bits.
    I16(&'a [i16]),
    /// Weights stored in 32 bits.
    I32(&'a [i32]),
    /// Weights stored in 64 bits.
    I64(&'a [i64]),
}

impl<'a> WeightSlice<'a> {
    /// The weight of edge `e` (an index into this slice).
    #[inline]
    pub fn get(self, e: usize) -> i64 {
        match self {
            WeightSlice::I16(s) => s[e] as i64,
            WeightSlice::I32(s) => s[e] as i64,
            WeightSlice::I64(s) => s[e],
        }
    }

    /// Number of weights.
    pub fn len(self) -> usize {
        match self {
            WeightSlice::I16(s) => s.len(),
            WeightSlice::I32(s) => s.len(),
            WeightSlice::I64(s) => s.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The weights of `range`.
    #[inline]
    pub fn slice(self, range: std::ops::Range<usize>) -> WeightSlice<'a> {
        match self {
            WeightSlice::I16(s) => WeightSlice::I16(&s[range]),
            WeightSlice::I32(s) => WeightSlice::I32(&s[range]),
            WeightSlice::I64(s) => WeightSlice::I64(&s[range]),
        }
    }

    /// The weights as `i64`, in order.
    #[inline]
    pub fn iter(self) -> WeightIter<'a> {
        match self {
            WeightSlice::I16(s) => WeightIter::I16(s.iter()),
            WeightSlice::I32(s) => WeightIter::I32(s.iter()),
            WeightSlice::I64(s) => WeightIter::I64(s.iter()),
        }
    }

    /// The weights as an `i64` slice: borrowed when stored as `i64`, copied otherwise (the
    /// GPU layout uploads `i64`).
    pub fn to_i64(self) -> Cow<'a, [i64]> {
        match self {
            WeightSlice::I64(s) => Cow::Borrowed(s),
            other => Cow::Owned(other.iter().collect()),
        }
    }
}

/// Iterator of [`WeightSlice::iter`]: one typed slice iterator, so a step is one
/// predictable branch plus the slice's own.
#[derive(Debug, Clone)]
pub enum WeightIter<'a> {
    /// Over weights stored in 16 bits.
    I16(std::slice::Iter<'a, i16>),
    /// Over weights stored in 32 bits.
    I32(std::slice::Iter<'a, i32>),
    /// Over weights stored in 64 bits.
    I64(std::slice::Iter<'a, i64>),
}

impl Iterator for WeightIter<'_> {
    type Item = i64;
    #[inline(always)]
    fn next(&mut self) -> Option<i64> {
        match self {
            WeightIter::I16(it) => it.next().map(|&w| w as i64),
            WeightIter::I32(it) => it.next().map(|&w| w as i64),
            WeightIter::I64(it) => it.next().copied(),
        }
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            WeightIter::I16(it) => it.size_hint(),
            WeightIter::I32(it) => it.size_hint(),
            WeightIter::I64(it) => it.size_hint(),
        }
    }
}

impl ExactSizeIterator for WeightIter<'_> {}

/// A storage type of weights, for loops that read the narrow slices directly.
pub trait Weight: Copy + Send + Sync + 'static {
    /// The weight as `i64`.
    fn widen(self) -> i64;
    /// This type's slice of `weights`, if they are stored at this width.
    fn slice(weights: WeightSlice<'_>) -> Option<&[Self]>;
}

impl Weight for i16 {
    #[inline(always)]
    fn widen(self) -> i64 {
        self as i64
    }
    fn slice(weights: WeightSlice<'_>) -> Option<&[i16]> {
        match weights {
            WeightSlice::I16(s) => Some(s),
            _ => None,
        }
    }
}

impl Weight for i32 {
    #[inline(always)]
    fn widen(self) -> i64 {
        self as i64
    }
    fn slice(weights: WeightSlice<'_>) -> Option<&[i32]> {
        match weights {
            WeightSlice::I32(s) => Some(s),
            _ => None,
        }
    }
}

impl Weight for i64 {
    #[inline(always)]
    fn widen(self) -> i64 {
        self
    }
    fn slice(weights: WeightSlice<'_>) -> Option<&[i64]> {
        match weights {
            WeightSlice::I64(s) => Some(s),
            _ => None,
        }
    }
}
