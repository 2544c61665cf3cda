//! Finding GPUs without ever panicking: probe for the driver library, initialise it, count
//! devices, and describe each one ([`list_devices`], used by `egsolve devices` and the
//! service). A missing driver or device is an ordinary [`GpuError`].
//!
//! cudarc panics when a library it needs is absent, so every path into the driver goes
//! through [`driver_ready`] first, and every path into NVRTC through [`nvrtc_ready`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cudarc::driver::{CudaContext, sys};

use crate::error::{DuringExt, GpuError};

/// One visible GPU.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceInfo {
    /// Driver ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Total device memory in bytes.
    pub memory_total: u64,
    /// Free device memory in bytes, when it was listed.
    pub memory_free: u64,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
}

/// Whether the driver's and NVRTC's libraries load (without initialising the driver).
pub fn libraries_present() -> bool {
    // SAFETY: only tries to dlopen the libraries; no driver or NVRTC call is made.
    unsafe { sys::is_culib_present() && cudarc::nvrtc::sys::is_culib_present() }
}

/// Checks that the driver library loads and initialises, and that a device exists.
/// Returns the number of devices.
pub fn driver_ready() -> Result<usize, GpuError> {
    // SAFETY: only tries to dlopen the driver library; no driver call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    cudarc::driver::result::init().map_err(GpuError::DriverInit)?;
    let count = CudaContext::device_count().during("counting devices")?;
    if count <= 0 {
        return Err(GpuError::NoDevice);
    }
    Ok(count as usize)
}

/// Checks that NVRTC loads.
pub fn nvrtc_ready() -> Result<(), GpuError> {
    // SAFETY: only tries to dlopen libnvrtc; no NVRTC call is made.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(GpuError::NoNvrtc)
    }
}

/// Contexts being created now ([`open`] running).
static OPENING: AtomicUsize = AtomicUsize::new(0);
/// Set by [`close_for_exit`]: [`open`] opens no more contexts.
static CLOSING: AtomicBool = AtomicBool::new(false);
/// Whether this process opened a context on a device that is not in the driver's default
/// (shared) compute mode.
static EXCLUSIVE_OPENED: AtomicBool = AtomicBool::new(false);

/// Stops this process from opening GPU contexts (for the rest of its life) and says whether
/// another process could open every device this one has opened, were this one to keep them
/// a while longer: no context was being created, and none was opened on a device in an
/// exclusive (or prohibited) compute mode. The command line hands its exit's teardown to a
/// child only then (a device held by the dying child would refuse the user's next command
/// in exclusive mode). A context that a warm-up thread starts after this is refused
/// ([`GpuError::Exiting`]), so the answer cannot change behind the check.
pub fn close_for_exit() -> bool {
    CLOSING.store(true, Ordering::SeqCst);
    OPENING.load(Ordering::SeqCst) == 0 && !EXCLUSIVE_OPENED.load(Ordering::SeqCst)
}

/// Opens (retains) the primary context of device `ordinal`, checking it exists first.
pub(crate) fn open(ordinal: usize) -> Result<Arc<CudaContext>, GpuError> {
    struct Opening;
    impl Drop for Opening {
        fn drop(&mut self) {
            OPENING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    // Counted before the flag is read, and the flag set before the count is read
    // (`close_for_exit`): one of the two sees the other.
    OPENING.fetch_add(1, Ordering::SeqCst);
    let _opening = Opening;
    if CLOSING.load(Ordering::SeqCst) {
        return Err(GpuError::Exiting);
    }
    let count = driver_ready()?;
    if ordinal >= count {
        return Err(GpuError::BadDevice {
            requested: ordinal,
            count,
        });
    }
    let ctx = CudaContext::new(ordinal).during("creating a context")?;
    let mode = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
    if !matches!(mode, Ok(m) if m == sys::CUcomputemode::CU_COMPUTEMODE_DEFAULT as i32) {
        EXCLUSIVE_OPENED.store(true, Ordering::SeqCst);
    }
    Ok(ctx)
}

/// Describes device `ordinal`.
pub fn device_info(ordinal: usize) -> Result<DeviceInfo, GpuError> {
    let ctx = open(ordinal)?;
    let (free, total) = ctx.mem_get_info().during("reading free memory")?;
    let multiprocessors = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .during("reading the multiprocessor count")?;
    Ok(DeviceInfo {
        ordinal,
        name: ctx.name().during("reading the device name")?,
        memory_total: total as u64,
        memory_free: free as u64,
        compute_capability: ctx
            .compute_capability()
            .during("reading the compute capability")?,
        multiprocessors: multiprocessors.max(0) as u32,
    })
}

/// Every visible GPU; empty when there is no driver or no device.
pub fn list_devices() -> Vec<DeviceInfo> {
    let Ok(count) = driver_ready() else {
        return Vec::new();
    };
    (0..count)
        .filter_map(|ordinal| device_info(ordinal).ok())
        .collect()
}

/// Why [`list_devices`] is empty, or the device count.
pub fn probe() -> Result<usize, GpuError> {
    driver_ready()
}
