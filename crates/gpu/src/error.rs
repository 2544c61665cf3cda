//! The GPU backend's error type: why the GPU cannot serve (no driver, no device, no NVRTC,
//! too little memory) or why a CUDA call failed. Converted to [`SolveError::Unavailable`] at
//! the backend's edge, so callers (the CLI, the service) can fall back to a CPU backend.

use cudarc::driver::DriverError;
use cudarc::nvrtc::result::NvrtcError;

use egsolve_core::solve::memory::human_bytes;
use egsolve_core::solve::{Interrupted, SolveError};

/// What went wrong on the GPU path.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    /// `libcuda.so.1` could not be loaded.
    #[error("no CUDA driver: libcuda.so.1 was not found (install the NVIDIA driver)")]
    NoDriver,
    /// `cuInit` failed.
    #[error("the CUDA driver failed to initialise: {0}")]
    DriverInit(DriverError),
    /// The driver reports no device.
    #[error("no CUDA device is visible")]
    NoDevice,
    /// The process is ending and opens no more contexts (see
    /// [`crate::devices::close_for_exit`]).
    #[error("the process is exiting: no new GPU context is opened")]
    Exiting,
    /// `libnvrtc.so.13` could not be loaded.
    #[error(
        "NVRTC was not found: libnvrtc.so.13 is not on the library path (install the CUDA 13 \
         runtime compiler, or set LD_LIBRARY_PATH to the folder that holds it)"
    )]
    NoNvrtc,
    /// A kernel did not compile.
    #[error("kernel compilation for {arch} failed: {error:?}\n{log}")]
    Compile {
        arch: String,
        error: NvrtcError,
        log: String,
    },
    /// The requested device ordinal does not exist.
    #[error("device {requested} does not exist ({count} visible)")]
    BadDevice { requested: usize, count: usize },
    /// The game does not fit in any device's free memory.
    #[error(
        "the game needs {needed} bytes ({}) of GPU memory and the largest free memory is \
         {free} bytes ({}, device {device}): solve it on the CPU (--backend auto or cpu), or \
         on a GPU with more free memory",
        human_bytes(*.needed),
        human_bytes(*.free)
    )]
    OutOfMemory {
        needed: u64,
        free: u64,
        device: usize,
    },
    /// The game is too large for 32-bit device indices.
    #[error("the game has too many vertices or edges for the GPU backend ({0})")]
    TooLarge(String),
    /// The lanes option is not a power of two in 1..=32.
    #[error("lanes must be 1, 2, 4, 8, 16 or 32 (got {0})")]
    BadLanes(u32),
    /// A lifting launch did not finish within [`super::transfer::launch_watchdog`].
    #[error(
        "a lifting kernel launch has not finished after {seconds} s: the device looks hung \
         (a bug; please report it with the game). The solve stops here; the kernel may keep \
         the device busy until the process exits"
    )]
    Hung { seconds: u64 },
    /// A CUDA driver call failed.
    #[error("CUDA call failed during {during}: {error}")]
    Driver {
        during: &'static str,
        error: DriverError,
    },
}

/// Attaches a description of the step to a driver error.
pub(crate) trait DuringExt<T> {
    fn during(self, step: &'static str) -> Result<T, GpuError>;
}

impl<T> DuringExt<T> for Result<T, DriverError> {
    fn during(self, step: &'static str) -> Result<T, GpuError> {
        self.map_err(|error| GpuError::Driver {
            during: step,
            error,
        })
    }
}

/// Either the GPU failed or the solve was interrupted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuSolveError {
    /// The GPU failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Cancelled or out of time.
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
}

impl From<GpuError> for SolveError {
    fn from(error: GpuError) -> SolveError {
        SolveError::Unavailable {
            backend: "gpu",
            reason: error.to_string(),
        }
    }
}

impl From<GpuSolveError> for SolveError {
    fn from(error: GpuSolveError) -> SolveError {
        match error {
            GpuSolveError::Gpu(e) => e.into(),
            GpuSolveError::Interrupted(i) => SolveError::Interrupted(i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_little_memory_says_what_is_needed_and_what_to_do() {
        let error = SolveError::from(GpuError::OutOfMemory {
            needed: 3 << 30,
            free: 1 << 30,
            device: 0,
        });
        let message = error.to_string();
        for part in [
            "3221225472 bytes (3.0 GiB)",
            "1.0 GiB, device 0",
            "--backend auto",
        ] {
            assert!(message.contains(part), "{message}");
        }
        assert!(matches!(
            error,
            SolveError::Unavailable { backend: "gpu", .. }
        ));
    }
}
