//! Where an arena's arrays live: owned ([`Array::Owned`], what the text readers and the
//! generators build) or borrowed from a shared, read-only buffer ([`Array::Shared`]: a
//! memory-mapped `egb` file, whose sections are the arrays themselves). Either way an
//! [`Array`] derefs to `&[T]`, so the arena's accessors and every solver read both alike.
//!
//! The buffer is reached through [`StableBytes`], which the arena knows nothing more about
//! (it does no I/O): the format module implements it for a memory map and for an aligned
//! copy of a stream. A shared array keeps its buffer alive through an `Arc`, so an arena
//! may outlive the loader, be cloned cheaply, and move between threads.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

use super::{Player, first_index};

/// Bytes that stay at one address, unchanged, for as long as the object lives.
///
/// # Safety
/// An implementation's [`StableBytes::bytes`] returns the same slice (address and length)
/// on every call, and nothing writes to that memory while the object lives. Arrays borrowed
/// from it keep a raw pointer into it and read it without further checks.
pub unsafe trait StableBytes: Send + Sync + 'static {
    /// The bytes.
    fn bytes(&self) -> &[u8];

    /// Says that `range` of the bytes will not be read for a while. A map of a file may
    /// drop those pages from the process's memory: they are read from the file again when
    /// next touched, and the bytes do not change. Memory of its own keeps them (the
    /// default).
    fn release(&self, _range: Range<usize>) {}
}

/// A shared, read-only buffer that arrays can borrow from.
pub type SharedBytes = Arc<dyn StableBytes>;

/// An array of an arena: owned, or a stretch of a shared buffer.
pub enum Array<T: 'static> {
    /// An array of its own.
    Owned(Box<[T]>),
    /// `len` values at `ptr`, inside the buffer `keep` (which stays alive as long as this).
    Shared {
        /// The first value.
        ptr: *const T,
        /// How many values.
        len: usize,
        /// The buffer the values live in.
        keep: SharedBytes,
    },
}

// SAFETY: a shared array is an immutable view of memory that `keep` (Send + Sync) holds
// alive and that nothing writes (the contract of `StableBytes`), so it can be read from any
// thread and sent anywhere, like `&[T]` with `T: Sync`; an owned one is a `Box<[T]>`.
unsafe impl<T: Send + Sync> Send for Array<T> {}
// SAFETY: as above: only shared reads ever happen through `&Array`.
unsafe impl<T: Send + Sync> Sync for Array<T> {}

impl<T> Deref for Array<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        match self {
            Array::Owned(values) => values,
            // SAFETY: `ptr` and `len` were taken from a slice of `keep`'s bytes, checked for
            // alignment and length when the array was made (`shared`, `shared_players`);
            // `keep` holds those bytes unchanged at that address (`StableBytes`) for as
            // long as this array lives, and the bytes are valid values of `T`.
            Array::Shared { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

impl<T> From<Box<[T]>> for Array<T> {
    fn from(values: Box<[T]>) -> Array<T> {
        Array::Owned(values)
    }
}

impl<T> From<Vec<T>> for Array<T> {
    fn from(values: Vec<T>) -> Array<T> {
        Array::Owned(values.into_boxed_slice())
    }
}

impl<T: Clone> Clone for Array<T> {
    /// An owned array is copied; a shared one shares its buffer (cheap).
    fn clone(&self) -> Array<T> {
        match self {
            Array::Owned(values) => Array::Owned(values.clone()),
            Array::Shared { ptr, len, keep } => Array::Shared {
                ptr: *ptr,
                len: *len,
                keep: Arc::clone(keep),
            },
        }
    }
}

impl<T: PartialEq> PartialEq for Array<T> {
    /// Equal values, wherever they live.
    fn eq(&self, other: &Array<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Array<T> {}

impl<T: fmt::Debug> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T> Array<T> {
    /// Whether this array borrows a shared buffer (and so costs no memory of its own).
    pub fn is_shared(&self) -> bool {
        matches!(self, Array::Shared { .. })
    }

    /// Says that this array will not be read for a while ([`StableBytes::release`]): a
    /// borrowed stretch of a mapped file may leave the process's memory. Its values do not
    /// change.
    pub fn release(&self) {
        if let Array::Shared { ptr, len, keep } = self {
            let start = (*ptr as usize).wrapping_sub(keep.bytes().as_ptr() as usize);
            keep.release(start..start + len * std::mem::size_of::<T>());
        }
    }
}

impl<T: bytemuck::Pod> Array<T> {
    /// The values stored in `bytes[range]` in this machine's byte order, borrowed; `None`
    /// where the range is outside the buffer, is not a whole number of values, or is not
    /// aligned for `T` (the caller copies instead).
    pub fn shared(bytes: &SharedBytes, range: Range<usize>) -> Option<Array<T>> {
        let raw = bytes.bytes().get(range)?;
        let values: &[T] = bytemuck::try_cast_slice(raw).ok()?;
        Some(Array::Shared {
            ptr: values.as_ptr(),
            len: values.len(),
            keep: Arc::clone(bytes),
        })
    }
}

impl Array<Player> {
    /// The owners stored as bytes in `bytes[range]` (0: player 0, 1: player 1), borrowed.
    /// `Err(Some(i))`: byte `i` of the range is neither; `Err(None)`: the range is outside
    /// the buffer. Checked in parallel.
    pub fn shared_players(
        bytes: &SharedBytes,
        range: Range<usize>,
    ) -> Result<Array<Player>, Option<usize>> {
        let raw = bytes.bytes().get(range).ok_or(None)?;
        if let Some(i) = first_index(raw.len(), |i| raw[i] > 1) {
            return Err(Some(i));
        }
        Ok(Array::Shared {
            // `Player` is `repr(u8)` with discriminants 0 and 1, so it has the size and
            // alignment of `u8`, and every byte of the range was just checked to be one
            // of those (the bytes never change: `StableBytes`).
            ptr: raw.as_ptr().cast::<Player>(),
            len: raw.len(),
            keep: Arc::clone(bytes),
        })
    }
}

/// An owned, 64-byte-aligned copy of some bytes (a decompressed stream): shared arrays can
/// borrow from it as from a memory map.
pub struct AlignedBytes {
    blocks: Box<[[u64; 8]]>,
    len: usize,
}

impl AlignedBytes {
    /// A copy of `bytes`, aligned to 64 bytes.
    pub fn copy_of(bytes: &[u8]) -> AlignedBytes {
        let mut blocks = vec![[0u64; 8]; bytes.len().div_ceil(64)].into_boxed_slice();
        let target: &mut [u8] = bytemuck::cast_slice_mut(&mut blocks[..]);
        target[..bytes.len()].copy_from_slice(bytes);
        AlignedBytes {
            blocks,
            len: bytes.len(),
        }
    }

    /// The first `len` bytes of `blocks` (a buffer filled in place, e.g. a file written in
    /// memory); `len` is clamped to the buffer.
    pub fn from_blocks(blocks: Box<[[u64; 8]]>, len: usize) -> AlignedBytes {
        let len = len.min(64 * blocks.len());
        AlignedBytes { blocks, len }
    }
}

// SAFETY: the boxed blocks never move or change after construction (no method takes
// `&mut self`), so `bytes` returns the same slice every time.
unsafe impl StableBytes for AlignedBytes {
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.blocks[..])[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_arrays_read_the_buffer_and_check_alignment_and_owners() {
        let mut raw = vec![0u8; 64];
        raw[8..12].copy_from_slice(&7u32.to_ne_bytes());
        raw[12..16].copy_from_slice(&9u32.to_ne_bytes());
        raw[16] = 1;
        let bytes: SharedBytes = Arc::new(AlignedBytes::copy_of(&raw));
        let a = Array::<u32>::shared(&bytes, 8..16).unwrap();
        assert_eq!(&a[..], &[7, 9]);
        assert!(a.is_shared());
        assert_eq!(a, Array::from(vec![7u32, 9]));
        assert!(Array::<u32>::shared(&bytes, 9..13).is_none(), "misaligned");
        assert!(
            Array::<u32>::shared(&bytes, 8..15).is_none(),
            "not whole values"
        );
        assert!(Array::<u32>::shared(&bytes, 60..68).is_none(), "outside");
        let owners = Array::shared_players(&bytes, 15..18).unwrap();
        assert_eq!(&owners[..], &[Player::Zero, Player::One, Player::Zero]);
        assert_eq!(Array::shared_players(&bytes, 8..12).unwrap_err(), Some(0));
        let copy = a.clone();
        drop(bytes);
        drop(a);
        assert_eq!(&copy[..], &[7, 9], "the buffer lives as long as an array");
    }
}
