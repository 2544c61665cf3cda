//! Host ↔ device copies of large arrays through two page-locked staging buffers, used as a
//! ring of [`SLOTS`] slots of [`SLOT_BYTES`].
//!
//! A copy from ordinary (pageable) memory goes through the driver's own small staging
//! buffer, one piece at a time: about 6 GB/s on the H100 machine, which made the upload of a
//! 10^8-edge game (1.4 GB) take 20 times its solve. Here the host fills one page-locked
//! slot (in parallel) while the device copies the ones filled before, so the host copy and
//! the PCIe transfer overlap (downloads the same way round: the host drains one slot while
//! the device fills the next). Slots of 8 MiB rather than whole 32 MiB buffers let the
//! first transfer start, and the last end, sooner. The buffers are allocated once per device and kept
//! ([`super::compile::Kernels::staging`]); arrays below [`STAGED_FROM`] bytes go through them
//! only where they exist already, and arrays below [`STAGED_IF_READY`] never: they are copied
//! directly, where allocating or waiting would cost more than it saves.

use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, PinnedHostSlice, result};
use rayon::prelude::*;

use crate::error::{DuringExt, GpuError};

/// Bytes per staging buffer (two).
pub const STAGE_BYTES: usize = 32 << 20;
/// Bytes per slot: the unit of one host copy and one transfer.
pub const SLOT_BYTES: usize = 8 << 20;
/// Slots per buffer.
const SLOTS_PER_BUFFER: usize = STAGE_BYTES / SLOT_BYTES;
/// Slots in the ring.
pub const SLOTS: usize = 2 * SLOTS_PER_BUFFER;
/// Arrays of at least this many bytes go through the staging buffers, allocated for them
/// if need be.
pub const STAGED_FROM: usize = 8 << 20;
/// Arrays of at least this many bytes go through the staging buffers where they exist
/// already (the driver's pageable path is about 6 GB/s; below this the wait for a slot's
/// event costs more than it saves).
pub const STAGED_IF_READY: usize = 1 << 20;
/// Bytes per parallel task when filling or draining a slot.
const PIECE: usize = 256 << 10;

/// Two page-locked buffers and, for each of their slots, the event after the last copy
/// that used it.
pub struct Staging {
    buffers: [PinnedHostSlice<u8>; 2],
    pending: [Option<CudaEvent>; SLOTS],
    next: usize,
}

// SAFETY: the buffers are only touched through `&mut Staging` (the per-device cache holds
// it behind a mutex); the raw pointers inside `PinnedHostSlice` are page-locked host memory
// owned by this value.
unsafe impl Send for Staging {}

impl Staging {
    /// Allocates the two buffers in `ctx`.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Staging, GpuError> {
        let alloc = || {
            // SAFETY: the contents are written before any copy reads them (`upload`), or
            // by the device before the host reads them (`download`). Flags 0: cached host
            // memory, so that the host can also read it quickly.
            unsafe { ctx.alloc_pinned_with_flags::<u8>(STAGE_BYTES, 0) }
                .during("allocating page-locked staging buffers")
        };
        Ok(Staging {
            buffers: [alloc()?, alloc()?],
            pending: std::array::from_fn(|_| None),
            next: 0,
        })
    }

    /// The next slot, once the device is done with its last copy.
    fn take_buffer(&mut self) -> Result<&mut [u8], GpuError> {
        let b = self.next;
        self.next = (self.next + 1) % SLOTS;
        self.wait(b)?;
        self.buffer(b)
    }

    /// Waits for the last copy that used slot `b`.
    fn wait(&mut self, b: usize) -> Result<(), GpuError> {
        if let Some(event) = self.pending[b].take() {
            event.synchronize().during("waiting for a staged copy")?;
        }
        Ok(())
    }

    /// Slot `b`; the caller has waited for its last copy ([`Staging::wait`]).
    fn buffer(&mut self, b: usize) -> Result<&mut [u8], GpuError> {
        let ptr = self.buffers[b / SLOTS_PER_BUFFER]
            .as_mut_ptr()
            .during("reading a staging buffer")?;
        // SAFETY: the buffer holds STAGE_BYTES bytes of page-locked memory, so the slot's
        // SLOT_BYTES at this offset lie inside it; no pending copy uses the slot any more
        // (the caller waited), and slots do not overlap.
        Ok(unsafe {
            std::slice::from_raw_parts_mut(ptr.add((b % SLOTS_PER_BUFFER) * SLOT_BYTES), SLOT_BYTES)
        })
    }

    /// Records, for the slot just used, the point after the copy queued on `stream`.
    fn mark_used(&mut self, stream: &Arc<CudaStream>) -> Result<(), GpuError> {
        let used = (self.next + SLOTS - 1) % SLOTS;
        self.pending[used] = Some(stream.record_event(None).during("recording an event")?);
        Ok(())
    }

    /// Copies `src` to device address `dst` (which holds at least `src.len()` bytes) on
    /// `stream`. Returns once the last piece is queued; the caller synchronizes.
    pub fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        src: &[u8],
        dst: CUdeviceptr,
    ) -> Result<(), GpuError> {
        for (i, chunk) in src.chunks(SLOT_BYTES).enumerate() {
            let buffer = &mut self.take_buffer()?[..chunk.len()];
            buffer
                .par_chunks_mut(PIECE)
                .zip(chunk.par_chunks(PIECE))
                .for_each(|(to, from)| to.copy_from_slice(from));
            let at = dst + (i * SLOT_BYTES) as CUdeviceptr;
            // SAFETY: `buffer` stays valid and unwritten until the event recorded next
            // has passed (`take_buffer` waits for it); `dst` has room (caller's contract).
            unsafe { result::memcpy_htod_async(at, &*buffer, stream.cu_stream()) }
                .during("copying to the device")?;
            self.mark_used(stream)?;
        }
        Ok(())
    }

    /// Copies `dst.len()` bytes from device address `src` on `stream` into `dst`, which
    /// need not be initialised (every byte is written: the caller may take it as
    /// initialised once this returns `Ok`); each piece is copied out by the pool's threads
    /// while the device copies the next one.
    pub fn download(
        &mut self,
        stream: &Arc<CudaStream>,
        src: CUdeviceptr,
        dst: &mut [MaybeUninit<u8>],
    ) -> Result<(), GpuError> {
        let mut written = 0;
        self.download_with(stream, src, dst.len(), |offset, piece| {
            dst[offset..offset + piece.len()]
                .par_chunks_mut(PIECE)
                .zip(piece.par_chunks(PIECE))
                .for_each(|(to, from)| {
                    for (to, &from) in to.iter_mut().zip(from) {
                        to.write(from);
                    }
                });
            written += piece.len();
        })?;
        // The pieces cover 0..len one after another (`download_with`).
        assert_eq!(written, dst.len(), "every byte downloaded");
        Ok(())
    }

    /// Copies `len` bytes from device address `src` on `stream`, one slot-sized piece at a
    /// time, and hands each piece to `drain(offset, bytes)` while the device copies the next
    /// one into the next slot. Every piece starts at a multiple of [`SLOT_BYTES`] (page
    /// aligned); returns once all are drained.
    pub fn download_with(
        &mut self,
        stream: &Arc<CudaStream>,
        src: CUdeviceptr,
        len: usize,
        mut drain: impl FnMut(usize, &[u8]),
    ) -> Result<(), GpuError> {
        let pieces = len.div_ceil(SLOT_BYTES);
        // The piece copied but not yet drained: (slot, offset, bytes).
        let mut in_flight: Option<(usize, usize, usize)> = None;
        for i in 0..=pieces {
            let queued = if i < pieces {
                let (b, offset) = (self.next, i * SLOT_BYTES);
                let bytes = SLOT_BYTES.min(len - offset);
                let buffer = &mut self.take_buffer()?[..bytes];
                let at = src + offset as CUdeviceptr;
                // SAFETY: the buffer is ours until the event recorded next has passed; it
                // is drained only after that (`wait` below), and refilled only after that.
                unsafe { result::memcpy_dtoh_async(&mut *buffer, at, stream.cu_stream()) }
                    .during("copying from the device")?;
                self.mark_used(stream)?;
                Some((b, offset, bytes))
            } else {
                None
            };
            if let Some((b, offset, bytes)) = in_flight {
                self.wait(b)?;
                drain(offset, &self.buffer(b)?[..bytes]);
            }
            in_flight = queued;
        }
        Ok(())
    }
}
