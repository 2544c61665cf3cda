//! The game's arrays on the device that come in several widths: the weight columns at
//! the arena's storage width, the energies at 32 bits (⊤ = `u32::MAX`) or 64, and the
//! conversions between host `u64` energies and device ones.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};
use rayon::prelude::*;

use crate::error::{DuringExt, GpuError};
use crate::layout::WeightColumn;
use crate::staging::{STAGED_IF_READY, Staging};
use crate::transfer::{download_array, upload_array};

/// Both weight columns on the device, at the arena's storage width.
pub(super) enum DeviceWeights {
    I16([CudaSlice<i16>; 2]),
    I32([CudaSlice<i32>; 2]),
    I64([CudaSlice<i64>; 2]),
}

impl DeviceWeights {
    /// The successors' column uploaded, and room for the predecessors' (which
    /// [`GpuEngine::upload`] has the device fill).
    pub(super) fn upload(
        stream: &Arc<CudaStream>,
        staging: &mut Option<Staging>,
        succ: &WeightColumn<'_>,
    ) -> Result<DeviceWeights, GpuError> {
        fn pair<T: DeviceRepr + bytemuck::Pod>(
            stream: &Arc<CudaStream>,
            staging: &mut Option<Staging>,
            succ: &[T],
        ) -> Result<[CudaSlice<T>; 2], GpuError> {
            let uploaded = upload_array(stream, staging, succ)?;
            // SAFETY: the predecessors kernel writes every element (one per edge) before
            // any other kernel on this stream reads it.
            let pred = unsafe { stream.alloc::<T>(succ.len().max(1)) }.during("allocating")?;
            Ok([uploaded, pred])
        }
        Ok(match succ {
            WeightColumn::I16(s) => DeviceWeights::I16(pair(stream, staging, s)?),
            WeightColumn::I32(s) => DeviceWeights::I32(pair(stream, staging, s)?),
            WeightColumn::I64(s) => DeviceWeights::I64(pair(stream, staging, s)?),
        })
    }

    /// Device addresses of the successor and predecessor columns.
    pub(super) fn pointers(&self, stream: &Arc<CudaStream>) -> (u64, u64) {
        match self {
            DeviceWeights::I16([s, p]) => (s.device_ptr(stream).0, p.device_ptr(stream).0),
            DeviceWeights::I32([s, p]) => (s.device_ptr(stream).0, p.device_ptr(stream).0),
            DeviceWeights::I64([s, p]) => (s.device_ptr(stream).0, p.device_ptr(stream).0),
        }
    }
}

/// The energies on the device: 32-bit when the bound allows (⊤ = `u32::MAX`), else 64-bit.
pub(super) enum DeviceCredit {
    Narrow(CudaSlice<u32>),
    Wide(CudaSlice<u64>),
}

impl DeviceCredit {
    pub(super) fn alloc(
        stream: &Arc<CudaStream>,
        n: usize,
        bits: u32,
    ) -> Result<DeviceCredit, GpuError> {
        let during = "allocating credits";
        Ok(if bits == 32 {
            DeviceCredit::Narrow(stream.alloc_zeros::<u32>(n.max(1)).during(during)?)
        } else {
            DeviceCredit::Wide(stream.alloc_zeros::<u64>(n.max(1)).during(during)?)
        })
    }

    /// Bytes of `n` energies on the device.
    pub(super) fn bytes(&self, n: usize) -> usize {
        match self {
            DeviceCredit::Narrow(_) => n * 4,
            DeviceCredit::Wide(_) => n * 8,
        }
    }

    pub(super) fn pointer(&self, stream: &Arc<CudaStream>) -> u64 {
        match self {
            DeviceCredit::Narrow(c) => c.device_ptr(stream).0,
            DeviceCredit::Wide(c) => c.device_ptr(stream).0,
        }
    }

    pub(super) fn zero(&mut self, stream: &Arc<CudaStream>) -> Result<(), GpuError> {
        match self {
            DeviceCredit::Narrow(c) => stream.memset_zeros(c),
            DeviceCredit::Wide(c) => stream.memset_zeros(c),
        }
        .during("resetting credits")
    }

    /// Uploads device-ordered `values` (⊤ = `u64::MAX`, finite values below the bound).
    pub(super) fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        values: &[u64],
    ) -> Result<(), GpuError> {
        let during = "uploading start values";
        match self {
            DeviceCredit::Narrow(c) => {
                let narrow: Vec<u32> = values.par_iter().map(|&x| narrow(x)).collect();
                stream.memcpy_htod(&narrow, c).during(during)
            }
            DeviceCredit::Wide(c) => stream.memcpy_htod(values, c).during(during),
        }
    }

    /// The energies (device order, `n` of them) as `u64` with ⊤ = `u64::MAX`. Staged 32-bit
    /// energies are written into `reuse`'s memory (grown to `n` if it is shorter) without
    /// clearing it first; the other paths allocate.
    pub(super) fn download(
        &self,
        stream: &Arc<CudaStream>,
        staging: &mut Option<Staging>,
        n: usize,
        reuse: Vec<u64>,
    ) -> Result<Vec<u64>, GpuError> {
        Ok(match (self, staging) {
            // Widened straight out of the staging buffers, while the next piece copies.
            (DeviceCredit::Narrow(c), Some(staging)) if n * 4 >= STAGED_IF_READY => {
                // Written without clearing first: `reuse`'s memory (its pages in memory
                // already) or a new block, faulted in by the threads that widen.
                let mut out = reuse;
                out.clear();
                out.reserve_exact(n);
                let slots = &mut out.spare_capacity_mut()[..n];
                let mut written = 0;
                let (ptr, _record) = c.device_ptr(stream);
                staging.download_with(stream, ptr, n * 4, |offset, piece| {
                    let words: &[u32] = bytemuck::cast_slice(piece);
                    slots[offset / 4..offset / 4 + words.len()]
                        .par_chunks_mut(WIDEN_PIECE)
                        .zip(words.par_chunks(WIDEN_PIECE))
                        .for_each(|(to, from)| {
                            for (t, &x) in to.iter_mut().zip(from) {
                                t.write(widen(x));
                            }
                        });
                    written += words.len();
                })?;
                // The pieces cover 0..n * 4 bytes one after another (`download_with`).
                assert_eq!(written, n, "every credit downloaded");
                // SAFETY: the pieces wrote slots 0..n, each once, as counted above.
                unsafe { out.set_len(n) };
                out
            }
            (DeviceCredit::Narrow(c), staging) => {
                download_array(stream, staging, c, n, Vec::new())?
                    .par_iter()
                    .map(|&x| widen(x))
                    .collect()
            }
            (DeviceCredit::Wide(c), staging) => download_array(stream, staging, c, n, Vec::new())?,
        })
    }
}

/// Energies per parallel task when widening a downloaded piece.
pub(super) const WIDEN_PIECE: usize = 1 << 16;

/// A `u64` energy (finite below `u32::MAX`, or ⊤) as a 32-bit device energy.
pub(super) fn narrow(x: u64) -> u32 {
    if x == egsolve_core::solve::TOP {
        u32::MAX
    } else {
        debug_assert!(x < u32::MAX as u64);
        x as u32
    }
}

/// A 32-bit device energy as `u64`.
pub(super) fn widen(x: u32) -> u64 {
    if x == u32::MAX {
        egsolve_core::solve::TOP
    } else {
        x as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egsolve_core::solve::TOP;

    #[test]
    pub(super) fn narrow_energies_round_trip_with_top() {
        for x in [0, 1, 17, u32::MAX as u64 - 1, TOP] {
            assert_eq!(widen(narrow(x)), x, "{x}");
        }
        assert_eq!(narrow(TOP), u32::MAX);
        assert_eq!(widen(u32::MAX), TOP);
    }
}
