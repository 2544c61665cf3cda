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
//! the host pins piece `i + 1`. No copy crosses two registrations.

use std::sync::Arc;

use cudarc::driver::sys::{
    CU_MEMHOSTREGISTER_READ_ONLY, CUdeviceptr, cuMemHostRegister_v2, cuMemHostUnregister,
};
use cudarc::driver::{CudaContext, CudaStream, result};

use crate::error::{DuringExt, GpuError};

/// Pieces the span is pinned in.
const PIECES: usize = 16;
/// The pinning granule.
const PAGE: usize = 4096;

/// Host bytes and the device address they go to.
pub(super) type Transfer<'a> = (&'a [u8], CUdeviceptr);

/// The pieces pinned for a copy; unpinned by [`Pinned::release`] (or when dropped), which
/// must wait until the copies from them have ended.
pub(super) struct Pinned {
    ctx: Arc<CudaContext>,
    /// Start and length of each registered piece.
    pieces: Vec<(usize, usize)>,
}

impl Pinned {
    /// Queues on `stream` every transfer, pinning the pages under them piece by piece
    /// (read-only) and queueing each piece's copies once it is pinned. `Ok(None)` where
    /// the driver refuses to pin such pages (nothing queued: copy another way). A piece
    /// refused later is copied from pageable memory (the driver stages it). On an error
    /// the stream is synchronised before anything is unpinned.
    ///
    /// # Safety
    /// Each transfer's bytes must stay mapped and unchanged, and its device range (of its
    /// length) allocated, until the copies have ended; the result must not be dropped
    /// before then.
    pub(super) unsafe fn copy(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        transfers: &[Transfer<'_>],
    ) -> Result<Option<Pinned>, GpuError> {
        let during = "copying pinned pages to the device";
        let address = |t: &Transfer<'_>| t.0.as_ptr() as usize;
        let Some(start) = transfers.iter().map(address).min() else {
            return Ok(None);
        };
        let start = start / PAGE * PAGE;
        let end = transfers
            .iter()
            .map(|t| address(t) + t.0.len())
            .max()
            .unwrap_or(start)
            .next_multiple_of(PAGE);
        let piece = (end - start)
            .div_ceil(PIECES)
            .next_multiple_of(PAGE)
            .max(PAGE);
        ctx.bind_to_thread().during(during)?;
        let mut pinned = Pinned {
            ctx: Arc::clone(ctx),
            pieces: Vec::new(),
        };
        let mut queue = || -> Result<(), GpuError> {
            for at in (start..end).step_by(piece) {
                let len = piece.min(end - at);
                // SAFETY: the piece lies under the transfers' bytes (rounded out to pages of
                // the same mapping), kept mapped and unchanged (this function's contract).
                let r = unsafe {
                    cuMemHostRegister_v2(at as *mut _, len, CU_MEMHOSTREGISTER_READ_ONLY)
                };
                let registered = r.result().is_ok();
                if registered {
                    pinned.pieces.push((at, len));
                }
                for &(bytes, device) in transfers {
                    let h0 = bytes.as_ptr() as usize;
                    let (x0, x1) = (h0.max(at), (h0 + bytes.len()).min(at + len));
                    if x0 >= x1 {
                        continue;
                    }
                    let part = &bytes[x0 - h0..x1 - h0];
                    let to = device + (x0 - h0) as CUdeviceptr;
                    if registered {
                        // SAFETY: `part` is pinned (this piece) and outlives the copy (the
                        // contract); `to` lies inside the transfer's device range.
                        unsafe { result::memcpy_htod_async(to, part, stream.cu_stream()) }
                            .during(during)?;
                    } else {
                        // SAFETY: as above; a synchronous copy from pageable memory.
                        unsafe { result::memcpy_htod_sync(to, part) }.during(during)?;
                    }
                }
            }
            Ok(())
        };
        // SAFETY: the first piece only tells whether the driver pins such pages at all.
        let first =
            unsafe { cuMemHostRegister_v2(start as *mut _, PAGE, CU_MEMHOSTREGISTER_READ_ONLY) };
        if let Err(e) = first.result() {
            tracing::debug!("pinning pages in place refused: {e}");
            return Ok(None);
        }
        // SAFETY: registered just above.
        let _ = unsafe { cuMemHostUnregister(start as *mut _) };
        if let Err(e) = queue() {
            // The pieces are unpinned (dropped) only once nothing reads them.
            let _ = stream.synchronize();
            return Err(e);
        }
        Ok(Some(pinned))
    }

    /// Unpins every piece (the copies from them must have ended).
    pub(super) fn release(mut self) {
        self.unpin();
    }

    fn unpin(&mut self) {
        if self.pieces.is_empty() || self.ctx.bind_to_thread().is_err() {
            return;
        }
        for (at, _) in self.pieces.drain(..) {
            // SAFETY: registered by `copy` at this address, and not yet unregistered.
            let _ = unsafe { cuMemHostUnregister(at as *mut _) };
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        self.unpin();
    }
}
