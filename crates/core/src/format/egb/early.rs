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
//! holds them ([`crate::arena::SharedBytes`]).

use std::fmt;
use std::sync::Arc;

use crate::arena::{Array, WeightSlice, Weights, Width};

/// The successor side of an `egb` file whose header passed (see the module docs).
pub struct EarlySuccessors {
    offsets: Array<u32>,
    targets: Array<u32>,
    weights: Weights,
}

impl EarlySuccessors {
    /// The arrays the load will give the arena, where all three lie in the buffer (not
    /// copied: a misaligned buffer, or a big-endian machine); the clones share it.
    pub(super) fn of(
        offsets: &Array<u32>,
        targets: &Array<u32>,
        weights: &Weights,
    ) -> Option<EarlySuccessors> {
        let shared = offsets.is_shared() && targets.is_shared() && weights.is_shared();
        shared.then(|| EarlySuccessors {
            offsets: offsets.clone(),
            targets: targets.clone(),
            weights: weights.clone(),
        })
    }

    /// Vertices.
    pub fn vertex_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// The successor offsets (`n + 1`, unchecked).
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The successor targets (`m`, unchecked).
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// The successor weights (`m`) at the file's width.
    pub fn weights(&self) -> WeightSlice<'_> {
        self.weights.view()
    }

    /// The weights' width.
    pub fn width(&self) -> Width {
        self.weights.width()
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
