//! Host memory page-locked where it lies (`cuMemHostRegister`, read-only), so that the
//! device copies from it directly: no copy into staging buffers, and no CPU time but the
//! pinning. For the early upload of a mapped `egb` file (`super::early`): at 10^9 edges
//! (7 GB) the staging copy, on 8 threads beside the load's checks on all 16 cores, took
//! 0.9–1.4 s; pinning the whole span at once took 0.4–0.6 s on one thread (0.6–0.9 s on
//! four threads, which contend), and the copy then runs at the bus's speed (H200 host,
//! BENCHMARKS.md §9).
//!
//! So the span is pinned one piece at a time ([`PIECES`] page-aligned pieces) and each
//! piece's copies are queued as soon as it is pinned: the device copies piece `i` while
//! the host pins piece `i + 1`. Only whole pages inside the span are pinned (the buffer
//! need not be page-aligned); the bytes before the first and after the last, and a piece
//! the driver refuses, are copied from pageable memory, in the same stream's order. No
//! copy crosses two registrations, and nothing is unpinned while the stream may still
//! read it.

use std::sync::Arc;

use cudarc::driver::sys::{
    CU_MEMHOSTREGISTER_READ_ONLY, CUdeviceptr, cuMemHostRegister_v2, cuMemHostUnregister,
};
use cudarc::driver::{CudaStream, result};

use crate::error::{DuringExt, GpuError};

/// Pieces the span is pinned in.
const PIECES: usize = 16;
/// The pinning granule.
const PAGE: usize = 4096;

/// Host bytes and the device address they go to.
pub(super) type Transfer<'a> = (&'a [u8], CUdeviceptr);

/// The pieces pinned for a copy on a stream. [`Pinned::release`] unpins them once the
/// caller knows the copies have ended; dropped otherwise (an error, a panic), it waits for
/// the stream first.
pub(super) struct Pinned {
    stream: Arc<CudaStream>,
    /// Start and length of each registered piece.
    pieces: Vec<(usize, usize)>,
}

impl Pinned {
    /// Queues on `stream` every transfer, pinning the whole pages under them piece by
    /// piece (read-only) and queueing each piece's copies once it is pinned. `Ok(None)`
    /// where the driver refuses to pin such pages, or the span holds no whole page
    /// (nothing queued: copy another way). On an error the stream is synchronised before
    /// anything is unpinned.
    ///
    /// # Safety
    /// Each transfer's bytes must stay mapped and unchanged, and its device range (of its
    /// length) allocated, until the copies have ended.
    pub(super) unsafe fn copy(
        stream: &Arc<CudaStream>,
        transfers: &[Transfer<'_>],
    ) -> Result<Option<Pinned>, GpuError> {
        let during = "copying pinned pages to the device";
        let address = |t: &Transfer<'_>| t.0.as_ptr() as usize;
        let Some(low) = transfers.iter().map(address).min() else {
            return Ok(None);
        };
        let high = transfers.iter().map(|t| address(t) + t.0.len()).max();
        let high = high.unwrap_or(low);
        // Whole pages inside the span only.
        let (start, end) = (low.next_multiple_of(PAGE), high / PAGE * PAGE);
        if start >= end {
            return Ok(None);
        }
        stream.context().bind_to_thread().during(during)?;
        // SAFETY: one whole page inside the transfers' bytes (the contract keeps them
        // mapped); it only tells whether the driver pins such pages at all.
        let first =
            unsafe { cuMemHostRegister_v2(start as *mut _, PAGE, CU_MEMHOSTREGISTER_READ_ONLY) };
        if let Err(e) = first.result() {
            tracing::debug!("pinning pages in place refused: {e}");
            return Ok(None);
        }
        // SAFETY: registered just above; nothing was copied from it.
        let _ = unsafe { cuMemHostUnregister(start as *mut _) };
        let mut pinned = Pinned {
            stream: Arc::clone(stream),
            pieces: Vec::new(),
        };
        let piece = (end - start)
            .div_ceil(PIECES)
            .next_multiple_of(PAGE)
            .max(PAGE);
        let queue = |pinned: &mut Pinned| -> Result<(), GpuError> {
            // The bytes before the first whole page, from pageable memory.
            copy_range(stream, transfers, (low, start))?;
            for at in (start..end).step_by(piece) {
                let len = piece.min(end - at);
                // SAFETY: whole pages under the transfers' bytes, kept mapped and
                // unchanged (this function's contract).
                let r = unsafe {
                    cuMemHostRegister_v2(at as *mut _, len, CU_MEMHOSTREGISTER_READ_ONLY)
                };
                if r.result().is_ok() {
                    pinned.pieces.push((at, len));
                }
                // Pinned or not (then the driver stages it), in the stream's order.
                copy_range(stream, transfers, (at, at + len))?;
            }
            copy_range(stream, transfers, (end, high))
        };
        if let Err(e) = queue(&mut pinned) {
            // Dropping `pinned` waits for the stream before unpinning.
            drop(pinned);
            return Err(e);
        }
        Ok(Some(pinned))
    }

    /// Unpins every piece: the caller has seen the copies from them end (an event after
    /// them), so the stream may go on with other work meanwhile.
    pub(super) fn release(mut self) {
        self.unpin();
    }

    fn unpin(&mut self) {
        if self.pieces.is_empty() || self.stream.context().bind_to_thread().is_err() {
            return;
        }
        for (at, _) in self.pieces.drain(..) {
            // SAFETY: registered by `copy` at this address, not yet unregistered, and no
            // copy from it is pending (the callers' contract, or the wait in `drop`).
            let _ = unsafe { cuMemHostUnregister(at as *mut _) };
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if !self.pieces.is_empty() {
            // Not released: an error or a panic may have left copies queued.
            let _ = self.stream.synchronize();
            self.unpin();
        }
    }
}

/// Queues the copies of the transfers' bytes that lie in `[from, to)` (host addresses).
fn copy_range(
    stream: &Arc<CudaStream>,
    transfers: &[Transfer<'_>],
    (from, to): (usize, usize),
) -> Result<(), GpuError> {
    for &(bytes, device) in transfers {
        let h0 = bytes.as_ptr() as usize;
        let (x0, x1) = (h0.max(from), (h0 + bytes.len()).min(to));
        if x0 >= x1 {
            continue;
        }
        let part = &bytes[x0 - h0..x1 - h0];
        let to = device + (x0 - h0) as CUdeviceptr;
        // SAFETY: `part` outlives the copy and `to` lies inside the transfer's device
        // range (the caller's contract); from pinned or pageable memory alike, the copy
        // is ordered on `stream`.
        unsafe { result::memcpy_htod_async(to, part, stream.cu_stream()) }
            .during("copying pinned pages to the device")?;
    }
    Ok(())
}
