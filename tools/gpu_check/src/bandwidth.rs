//! The device's copy bandwidth: the ceiling a memory-bound lifting round is compared with.

use cudarc::driver::sys::CUevent_flags;

use egsolve_gpu::compile::kernels;

/// A driver error with what was being done, as text.
trait During<T> {
    fn during(self, what: &str) -> Result<T, String>;
}

impl<T, E: std::fmt::Debug> During<T> for Result<T, E> {
    fn during(self, what: &str) -> Result<T, String> {
        self.map_err(|e| format!("{what}: {e:?}"))
    }
}

/// Device-to-device copy bandwidth in bytes per second (read + write counted), median of
/// `repeats` copies of `bytes` bytes after one warm-up.
pub fn copy_bandwidth(ordinal: usize, bytes: usize, repeats: usize) -> Result<f64, String> {
    let k = kernels(ordinal).map_err(|e| e.to_string())?;
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
