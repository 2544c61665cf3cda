//! Moving data to and from the device and waiting for it: copies through the page-locked
//! staging buffers when large ([`Staging`]), directly otherwise, and a watchdog wait on a
//! launch's event, so that a kernel that never returns is an error instead of a hang. Shared
//! by the engine and the components kernel's driver.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};

use crate::compile::Kernels;
use crate::error::{DuringExt, GpuError};
use crate::staging::{STAGED_IF_READY, Staging};

/// How long one lifting launch may run before the solve gives up on the device
/// ([`GpuError::Hung`]), unless `EGSOLVE_GPU_WATCHDOG_SECS` says otherwise: launches aim at
/// a few milliseconds and leave at a phase's time limit (device clock), so only a kernel
/// that never returns comes near it.
pub const LAUNCH_WATCHDOG: Duration = Duration::from_secs(120);

/// [`LAUNCH_WATCHDOG`], or `EGSOLVE_GPU_WATCHDOG_SECS` (whole seconds, at least 1) when set.
pub fn launch_watchdog() -> Duration {
    std::env::var("EGSOLVE_GPU_WATCHDOG_SECS")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(LAUNCH_WATCHDOG, |secs| Duration::from_secs(secs.max(1)))
}

/// Polls `complete` until it says `true` (then `Ok(true)`) or `limit` has passed
/// (`Ok(false)`): back to back for the first 2 ms, as a blocking wait would spin, then
/// sleeping 50 µs, and 1 ms once a second has passed.
pub(crate) fn wait_until<E>(
    mut complete: impl FnMut() -> Result<bool, E>,
    limit: Duration,
) -> Result<bool, E> {
    let start = Instant::now();
    loop {
        if complete()? {
            return Ok(true);
        }
        let waited = start.elapsed();
        if waited >= limit {
            return Ok(false);
        }
        if waited < Duration::from_millis(2) {
            std::thread::yield_now();
        } else if waited < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_micros(50));
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// `src` in a new device array on `stream`: through the staging buffers when it is large
/// and they exist, else directly. The copy may still run when this returns.
pub(super) fn upload_array<T: DeviceRepr + bytemuck::Pod>(
    stream: &Arc<CudaStream>,
    staging: &mut Option<Staging>,
    src: &[T],
) -> Result<CudaSlice<T>, GpuError> {
    let during = "uploading the game";
    let bytes: &[u8] = bytemuck::cast_slice(src);
    match staging {
        Some(staging) if bytes.len() >= STAGED_IF_READY => {
            // SAFETY: every element is written by the copy queued below before any
            // kernel on this stream reads it.
            let mut dst = unsafe { stream.alloc::<T>(src.len()) }.during(during)?;
            let (ptr, _record) = dst.device_ptr_mut(stream);
            staging.upload(stream, bytes, ptr)?;
            drop(_record);
            Ok(dst)
        }
        _ => stream.clone_htod(src).during(during),
    }
}

/// `src` copied into `dst` (at least as long) on `stream`: through the staging buffers when
/// it is large and they exist, else directly from pageable memory.
pub(super) fn upload_into<T: DeviceRepr + bytemuck::Pod>(
    stream: &Arc<CudaStream>,
    staging: &mut Option<Staging>,
    src: &[T],
    dst: &mut CudaSlice<T>,
) -> Result<(), GpuError> {
    let during = "uploading";
    let bytes: &[u8] = bytemuck::cast_slice(src);
    match staging {
        Some(staging) if bytes.len() >= STAGED_IF_READY => {
            let (ptr, _record) = dst.device_ptr_mut(stream);
            staging.upload(stream, bytes, ptr)
        }
        _ => {
            let mut view = dst.slice_mut(..src.len());
            stream.memcpy_htod(src, &mut view).during(during)
        }
    }
}

/// `n` elements of `src` in host memory: through the staging buffers when large, then into
/// `room` where it has space for them (mapped ahead, `crate::prefault`), else into a new
/// vector.
pub(super) fn download_array<T: DeviceRepr + bytemuck::Pod + Send + Sync>(
    stream: &Arc<CudaStream>,
    staging: &mut Option<Staging>,
    src: &CudaSlice<T>,
    n: usize,
    room: Vec<T>,
) -> Result<Vec<T>, GpuError> {
    let during = "downloading credits";
    match staging {
        Some(staging) if n * std::mem::size_of::<T>() >= STAGED_IF_READY => {
            // Written without clearing first: the pages are faulted in by the threads that
            // copy out of the staging buffers (unless `room`'s were mapped ahead).
            let mut host: Vec<T> = if room.capacity() >= n {
                let mut room = room;
                room.clear();
                room
            } else {
                Vec::with_capacity(n)
            };
            let slots = &mut host.spare_capacity_mut()[..n];
            // SAFETY: the bytes of `n` uninitialised slots of `T`, viewed as uninitialised
            // bytes (no alignment needed, no value read).
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(
                    slots.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                    std::mem::size_of_val(slots),
                )
            };
            let (ptr, _record) = src.device_ptr(stream);
            staging.download(stream, ptr, bytes)?;
            // SAFETY: `download` wrote every byte of slots 0..n, and any bytes are a valid
            // `T` (`Pod`).
            unsafe { host.set_len(n) };
            Ok(host)
        }
        _ => {
            let mut host = stream.clone_dtoh(src).during(during)?;
            host.truncate(n);
            Ok(host)
        }
    }
}

/// [`download_array`] through `device`'s staging buffers where `n` values are worth staging
/// ([`Kernels::staging_for`]), directly otherwise.
pub(crate) fn download_staged<T: DeviceRepr + bytemuck::Pod + Send + Sync>(
    device: &Kernels,
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
    n: usize,
) -> Result<Vec<T>, GpuError> {
    download_staged_into(device, stream, src, n, Vec::new())
}

/// [`download_staged`] into `room` where it has space for the `n` values (a staged copy).
pub(crate) fn download_staged_into<T: DeviceRepr + bytemuck::Pod + Send + Sync>(
    device: &Kernels,
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
    n: usize,
    room: Vec<T>,
) -> Result<Vec<T>, GpuError> {
    let mut guard = device.staging_for(n * std::mem::size_of::<T>());
    let mut direct = None;
    let staging = guard.as_deref_mut().unwrap_or(&mut direct);
    download_array(stream, staging, src, n, room)
}

/// Waits for the launch that `done` records ([`GpuError::Hung`] after `watchdog`; `waiting`
/// names the step), then reads the kernel's `N` state words from `state` (`reading`).
pub(crate) fn finished_state<const N: usize>(
    stream: &Arc<CudaStream>,
    done: &CudaEvent,
    state: &CudaSlice<u32>,
    watchdog: Duration,
    (waiting, reading): (&'static str, &'static str),
) -> Result<[u32; N], GpuError> {
    if !wait_until(|| done.try_is_complete(), watchdog).during(waiting)? {
        return Err(GpuError::Hung {
            seconds: watchdog.as_secs(),
        });
    }
    let mut words = [0u32; N];
    stream.memcpy_dtoh(state, &mut words[..]).during(reading)?;
    stream.synchronize().during(reading)?;
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launch watchdog's wait: done as soon as the query says so, past every back-off
    /// step; gives up after its limit on a launch that never completes; passes errors on.
    #[test]
    fn the_watchdog_waits_for_completion_and_gives_up_on_a_hung_launch() {
        let mut polls = 0;
        let done = wait_until(
            || -> Result<bool, ()> {
                polls += 1;
                Ok(polls == 3)
            },
            Duration::from_secs(5),
        );
        assert_eq!((done, polls), (Ok(true), 3));

        let start = Instant::now();
        let slow = wait_until(
            || -> Result<bool, ()> { Ok(start.elapsed() >= Duration::from_millis(30)) },
            Duration::from_secs(5),
        );
        assert_eq!(slow, Ok(true));

        let start = Instant::now();
        let hung = wait_until(
            || -> Result<bool, ()> { Ok(false) },
            Duration::from_millis(1200),
        );
        assert_eq!(hung, Ok(false));
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(1200), "{waited:?}");
        assert!(waited < Duration::from_secs(4), "{waited:?}");

        let failed = wait_until(
            || -> Result<bool, &str> { Err("device lost") },
            Duration::MAX,
        );
        assert_eq!(failed, Err("device lost"));
    }
}
