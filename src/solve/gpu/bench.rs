//! Measurements the benchmarks need from inside the backend: the device's copy bandwidth
//! (the ceiling a memory-bound round is compared with) and event-timed launches.

use cudarc::driver::sys::CUevent_flags;

use super::compile::kernels;
use super::engine::GpuEngine;
use super::error::{DuringExt, GpuError};

/// Device-to-device copy bandwidth in bytes per second (read + write counted), median of
/// `repeats` copies of `bytes` bytes after one warm-up.
pub fn copy_bandwidth(ordinal: usize, bytes: usize, repeats: usize) -> Result<f64, GpuError> {
    let k = kernels(ordinal)?;
    let stream = k.ctx.new_stream().during("creating a stream")?;
    let words = bytes / 8;
    let src = stream
        .alloc_zeros::<u64>(words)
        .during("allocating copy buffers")?;
    let mut dst = stream
        .alloc_zeros::<u64>(words)
        .during("allocating copy buffers")?;
    let mut times = Vec::new();
    for i in 0..=repeats {
        let start = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        stream.memcpy_dtod(&src, &mut dst).during("copying")?;
        let end = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        end.synchronize().during("waiting for the copy")?;
        let ms = start.elapsed_ms(&end).during("reading the timer")?;
        if i > 0 {
            times.push(ms as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    Ok(2.0 * (words * 8) as f64 / (median / 1e3))
}

impl GpuEngine {
    /// Resets to 0 with every vertex in the frontier, then times (CUDA events) one launch
    /// of up to `rounds` rounds on `blocks` blocks, pushing densely or as lists. Milliseconds.
    pub fn time_launch(&mut self, blocks: u32, rounds: u32, dense: bool) -> Result<f64, GpuError> {
        self.reset(None)?;
        self.set_dense(dense);
        let stream = self.stream().clone();
        let start = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        self.launch_rounds(blocks, rounds, 0, u32::MAX)?;
        let end = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        end.synchronize().during("waiting for the round")?;
        Ok(start.elapsed_ms(&end).during("reading the timer")? as f64)
    }
}
