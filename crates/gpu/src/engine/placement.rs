//! Which device a game goes to: the requested one or the one with the most free memory,
//! where it fits beside [`HEADROOM`] (memory this process's pools keep is handed back
//! first when it would not).

use crate::compile::release_freed_memory;
use crate::devices::device_info;
use crate::error::GpuError;

use super::HEADROOM;

/// The device to use: the requested one, or the one with the most free memory; an error if
/// the game does not fit.
pub(crate) fn choose_device(requested: Option<usize>, needed: u64) -> Result<usize, GpuError> {
    let count = crate::devices::driver_ready()?;
    let candidates: Vec<usize> = match requested {
        Some(d) if d >= count => {
            return Err(GpuError::BadDevice {
                requested: d,
                count,
            });
        }
        Some(d) => vec![d],
        None => (0..count).collect(),
    };
    let most_free = |candidates: &[usize]| -> Result<(usize, u64), GpuError> {
        let mut best: Option<(usize, u64)> = None;
        for &d in candidates {
            let info = device_info(d)?;
            if best.is_none_or(|(_, free)| info.memory_free > free) {
                best = Some((d, info.memory_free));
            }
        }
        best.ok_or(GpuError::NoDevice)
    };
    let (mut device, mut free) = most_free(&candidates)?;
    if needed + HEADROOM > free {
        // Memory earlier games freed may still sit in this process's pools.
        candidates.iter().for_each(|&d| release_freed_memory(d));
        (device, free) = most_free(&candidates)?;
    }
    if needed + HEADROOM > free {
        return Err(GpuError::OutOfMemory {
            needed,
            free,
            device,
        });
    }
    Ok(device)
}
