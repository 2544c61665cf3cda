//! An `egb` file's successor side handed out early: once the header, the length and the
//! header's checksum pass, *before* the blocks are hashed and the arena is checked
//! ([`crate::arena::Arena`]'s `from_parts`): at 10^9 edges those take 0.3–0.45 s and
//! 0.8–1.0 s on 16 cores. A reader's [`SuccessorsHook`] gets the three arrays a GPU upload
//! carries (offsets, targets, weights), where they lie in the buffer, and may start
//! copying them to a device meanwhile.
//!
//! **Unchecked.** The arrays lie inside the buffer, but their bytes may be damaged and
//! nothing says they form a valid arena: targets may be out of range, offsets may
//! decrease. A hook may *copy* them, or run code that is safe on any values, and must not
//! *use* them (solve on them) until the load has returned the arena, which proves them
//! valid. The arrays are the very memory the arena will borrow (the same addresses), so a
//! consumer recognises its early copy by address, and the bytes never change while anyone
//! holds them ([`SharedBytes`]).

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::arena::{SharedBytes, WeightSlice, Width};

/// The successor side of an `egb` file whose header passed (see the module docs).
pub struct EarlySuccessors {
    bytes: SharedBytes,
    n: usize,
    m: usize,
    offsets: Range<usize>,
    targets: Range<usize>,
    weights: Range<usize>,
    width: Width,
}

impl EarlySuccessors {
    /// The successor side of `bytes` at these ranges, `None` where an array cannot be
    /// borrowed in place (misaligned, or a big-endian machine: the load copies those).
    pub(super) fn new(
        bytes: &SharedBytes,
        (n, m): (usize, usize),
        (offsets, targets, weights): (Range<usize>, Range<usize>, Range<usize>),
        width: Width,
    ) -> Option<EarlySuccessors> {
        let early = EarlySuccessors {
            bytes: Arc::clone(bytes),
            n,
            m,
            offsets,
            targets,
            weights,
            width,
        };
        let raw = early.bytes.bytes();
        let fits = |range: &Range<usize>, align: usize| {
            raw.get(range.clone())
                .is_some_and(|b| (b.as_ptr() as usize) % align == 0)
        };
        let aligned = cfg!(target_endian = "little")
            && fits(&early.offsets, 4)
            && fits(&early.targets, 4)
            && fits(&early.weights, width.bits() as usize / 8)
            && early.offsets.len() == 4 * (n + 1)
            && early.targets.len() == 4 * m
            && early.weights.len() == m * width.bits() as usize / 8;
        aligned.then_some(early)
    }

    /// Vertices.
    pub fn vertex_count(&self) -> usize {
        self.n
    }

    /// Edges.
    pub fn edge_count(&self) -> usize {
        self.m
    }

    /// The successor offsets (`n + 1`, unchecked).
    pub fn offsets(&self) -> &[u32] {
        bytemuck::cast_slice(&self.bytes.bytes()[self.offsets.clone()])
    }

    /// The successor targets (`m`, unchecked).
    pub fn targets(&self) -> &[u32] {
        bytemuck::cast_slice(&self.bytes.bytes()[self.targets.clone()])
    }

    /// The successor weights (`m`) at the file's width.
    pub fn weights(&self) -> WeightSlice<'_> {
        let raw = &self.bytes.bytes()[self.weights.clone()];
        match self.width {
            Width::I16 => WeightSlice::I16(bytemuck::cast_slice(raw)),
            Width::I32 => WeightSlice::I32(bytemuck::cast_slice(raw)),
            Width::I64 => WeightSlice::I64(bytemuck::cast_slice(raw)),
        }
    }

    /// The weights' width.
    pub fn width(&self) -> Width {
        self.width
    }
}

/// What a reader calls with an `egb` file's [`EarlySuccessors`] (energy games whose arrays
/// lie in place; not parity games, whose weights are computed). It runs on the loading
/// thread, so it should hand the work to a thread of its own and return.
#[derive(Clone)]
pub struct SuccessorsHook(Arc<dyn Fn(EarlySuccessors) + Send + Sync>);

impl SuccessorsHook {
    /// A hook calling `f`.
    pub fn new(f: impl Fn(EarlySuccessors) + Send + Sync + 'static) -> SuccessorsHook {
        SuccessorsHook(Arc::new(f))
    }

    /// Calls the hook.
    pub(super) fn call(&self, early: EarlySuccessors) {
        (self.0)(early);
    }
}

impl fmt::Debug for SuccessorsHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SuccessorsHook")
    }
}
