//! The successor side of an `egb` file copied to the device, and the predecessors listed
//! there, while the load still checks it ([`upload_early`], from the reader's hook:
//! `egsolve_core::format::egb::EarlySuccessors`). At 10^9 edges the arena's checks take
//! about 0.8 s on 16 cores; the upload after them took 0.47–0.54 s, of which the device's
//! listing of the predecessors 0.28 s (H200 host): side by side, most of it is hidden.
//!
//! Safe by construction: the kernels that list the predecessors stay inside their arrays
//! whatever the successors hold (they skip what a check would refuse), and nothing else
//! reads the copy until
//! [`GpuEngine::upload`](super::GpuEngine::upload) takes it, which it does only for an
//! arena, so after the load's checks passed, and only for arrays at the very addresses of
//! that arena's successor side (the file's bytes never change while held). A copy nobody
//! takes, or one that failed, is dropped and the upload runs as usual.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};
use egsolve_core::arena::{Arena, WeightSlice};
use egsolve_core::format::egb::{EarlySuccessors, SuccessorsHook};
use egsolve_core::solve::{GpuOptions, VertexOrder};

use super::LiftParams;
use super::arrays::DeviceWeights;
use super::placement::choose_device;
use super::predecessors::list_all_predecessors;
use super::registered::Pinned;
use crate::compile::{Kernels, kernels};
use crate::error::{DuringExt, GpuError};
use crate::layout::{WeightColumn, device_bytes, lanes_for_degree};
use crate::transfer::upload_array;

/// Threads copying into the staging buffers where pages cannot be pinned in place: a few,
/// beside the load's checks on every core (8 of 16 measured fastest on the H200 host).
const COPY_THREADS: usize = 8;

/// The successor side on a device, on the stream the engine goes on with.
pub(super) struct EarlyUpload {
    /// The host arrays copied, kept alive (so that their addresses identify them) until
    /// the copy is taken.
    _successors: EarlySuccessors,
    /// The device holding the copy.
    pub ordinal: usize,
    /// The stream the copies ran on (synchronised).
    pub stream: Arc<CudaStream>,
    /// Successor offsets and targets, predecessor offsets and sources (listed).
    pub adjacency: [CudaSlice<u32>; 4],
    /// Both weights' columns.
    pub weights: DeviceWeights,
    /// Seconds from the hook's call to the copy's end.
    pub seconds: f64,
}

/// What identifies a copy: the three arrays' addresses and lengths, and the weights'
/// width. While a copy is listed, its thread holds the buffer, so no other array can lie
/// at those addresses.
type Key = ((usize, usize), (usize, usize), (usize, usize, u32));

/// What an early thread gives: the copy, or `None` where the device found the successor
/// offsets unsound (the load then refuses the file).
type Copied = Result<Option<EarlyUpload>, GpuError>;

/// A copy under way or done, not yet taken.
type Entry = (Key, JoinHandle<Copied>);

/// The copies under way or done, not yet taken (one per file being read).
static EARLY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn entries() -> MutexGuard<'static, Vec<Entry>> {
    EARLY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn key_of(offsets: &[u32], targets: &[u32], weights: WeightSlice<'_>) -> Key {
    (address(offsets), address(targets), weights_address(weights))
}

/// Starts copying `successors` to device `device` (default: one where the game fits) on a
/// thread of its own; [`GpuEngine::upload`](super::GpuEngine::upload) of the arena these
/// arrays become takes the copy.
pub fn upload_early(successors: EarlySuccessors, device: Option<usize>) {
    let start = Instant::now();
    let key = key_of(
        successors.offsets(),
        successors.targets(),
        successors.weights(),
    );
    let spawned = std::thread::Builder::new()
        .name("egsolve-gpu-early".into())
        .spawn(move || copy(successors, device, start));
    match spawned {
        Ok(handle) => entries().push((key, handle)),
        Err(e) => tracing::debug!("no early upload thread: {e}"),
    }
}

/// The reader's hook that starts [`upload_early`] (for `ReadOptions::early_successors`).
pub fn early_upload_hook(device: Option<usize>) -> SuccessorsHook {
    SuccessorsHook::new(move |successors| upload_early(successors, device))
}

/// Copies under way or done that no upload has taken yet.
pub fn pending_early_uploads() -> usize {
    entries().len()
}

/// Waits for every copy not taken and drops it (after a load that failed: no arena will
/// take its copy, and a process must not end while a copy is inside the driver).
pub fn discard_early_upload() {
    let taken = std::mem::take(&mut *entries());
    for (_, handle) in taken {
        drop(handle.join());
    }
}

fn copy(successors: EarlySuccessors, device: Option<usize>, start: Instant) -> Copied {
    let (n, m) = (successors.vertex_count(), successors.edge_count());
    let weight_bits = successors.width().bits();
    // The room of the widest energies: the bound is not known yet.
    let ordinal = choose_device(device, device_bytes(n as u64, m as u64, weight_bits, 64))?;
    let device = kernels(ordinal)?;
    let stream = device.ctx.new_stream().during("creating a stream")?;
    let listed = copy_and_list(&device, &stream, &successors);
    let listed = match listed {
        Ok(listed) => listed,
        Err(e) => {
            // Nothing may still read the pinned pages when they are unpinned.
            let _ = stream.synchronize();
            return Err(e);
        }
    };
    let Listed {
        adjacency,
        weights,
        copied,
        pinned,
        unsound,
    } = listed;
    if let Some(pinned) = pinned {
        // Unpinned while the device lists the predecessors (if the wait fails, dropping
        // `pinned` waits for the whole stream).
        copied.synchronize().during("uploading the game early")?;
        pinned.release();
    }
    stream.synchronize().during("uploading the game early")?;
    let unsound = stream
        .clone_dtoh(&unsound)
        .during("uploading the game early")?;
    let seconds = start.elapsed().as_secs_f64();
    if unsound[0] != 0 {
        tracing::debug!(seconds, "gpu: early upload of unsound successor offsets");
        return Ok(None);
    }
    tracing::debug!(
        seconds,
        "gpu: successors uploaded and predecessors listed beside the load's checks"
    );
    Ok(Some(EarlyUpload {
        _successors: successors,
        ordinal,
        stream,
        adjacency,
        weights,
        seconds,
    }))
}

/// What the early thread leaves on the device: both sides' arrays, the weights, an event
/// recorded after the copies, the pinned pages they were copied from (if they were), and
/// the listing's flag of unsound offsets (one word).
struct Listed {
    adjacency: [CudaSlice<u32>; 4],
    weights: DeviceWeights,
    copied: CudaEvent,
    pinned: Option<Pinned>,
    unsound: CudaSlice<u32>,
}

/// The successor side copied (from its pages pinned in place, else through the staging
/// buffers) and the predecessors' listing queued.
fn copy_and_list(
    device: &Kernels,
    stream: &Arc<CudaStream>,
    successors: &EarlySuccessors,
) -> Result<Listed, GpuError> {
    let clock = Instant::now();
    let (offsets, targets, weights, pinned) = match pinned_upload(stream, successors)? {
        Some((offsets, targets, weights, pinned)) => (offsets, targets, weights, Some(pinned)),
        None => {
            let (offsets, targets, weights) = staged(device, stream, successors)?;
            (offsets, targets, weights, None)
        }
    };
    tracing::debug!(
        pinned = pinned.is_some(),
        seconds = clock.elapsed().as_secs_f64(),
        "gpu: early upload queued"
    );
    let listed = stream
        .record_event(None)
        .during("uploading the game early")
        .and_then(|copied| {
            let (adjacency, unsound) =
                list_on_device(device, stream, [offsets, targets], &weights, successors)?;
            Ok((adjacency, copied, unsound))
        });
    match listed {
        Ok((adjacency, copied, unsound)) => Ok(Listed {
            adjacency,
            weights,
            copied,
            pinned,
            unsound,
        }),
        Err(e) => {
            // Nothing may still read the pinned pages when they are unpinned (dropped).
            let _ = stream.synchronize();
            Err(e)
        }
    }
}

/// The predecessors listed on the device from the successors copied there, by kernels
/// that stay inside the arrays whatever they hold (`predecessors::list_all_predecessors`;
/// any width's module has them): all four adjacency arrays, and the flag of unsound
/// offsets.
fn list_on_device(
    device: &Kernels,
    stream: &Arc<CudaStream>,
    [offsets, targets]: [CudaSlice<u32>; 2],
    weights: &DeviceWeights,
    successors: &EarlySuccessors,
) -> Result<([CudaSlice<u32>; 4], CudaSlice<u32>), GpuError> {
    let (n, m) = (successors.vertex_count(), successors.edge_count());
    let during = "allocating";
    let mut adjacency = [
        offsets,
        targets,
        // SAFETY: both are filled by the listing below before anything reads them.
        unsafe { stream.alloc::<u32>(n + 1) }.during(during)?,
        unsafe { stream.alloc::<u32>(m.max(1)) }.during(during)?,
    ];
    let lift_kernels = device.lift(successors.width().bits(), 32)?;
    let params = LiftParams::of_game(stream, &adjacency, weights, n as u32);
    let lanes = lanes_for_degree(m as f64 / n.max(1) as f64);
    let unsound = list_all_predecessors(stream, &lift_kernels, &params, &mut adjacency, lanes)?;
    Ok((adjacency, unsound))
}

/// The successor side copied from its pages pinned in place ([`Pinned::copy`]), or
/// `None` where the driver does not pin them (nothing queued).
#[allow(clippy::type_complexity)]
fn pinned_upload(
    stream: &Arc<CudaStream>,
    successors: &EarlySuccessors,
) -> Result<Option<(CudaSlice<u32>, CudaSlice<u32>, DeviceWeights, Pinned)>, GpuError> {
    let (n, m) = (successors.vertex_count(), successors.edge_count());
    let during = "allocating";
    // SAFETY (all three): filled by the copies queued below before anything reads them.
    let mut offsets = unsafe { stream.alloc::<u32>(n + 1) }.during(during)?;
    let mut targets = unsafe { stream.alloc::<u32>(m.max(1)) }.during(during)?;
    let weights = match successors.weights() {
        WeightSlice::I16(_) => DeviceWeights::I16(unfilled_pair(stream, m)?),
        WeightSlice::I32(_) => DeviceWeights::I32(unfilled_pair(stream, m)?),
        WeightSlice::I64(_) => DeviceWeights::I64(unfilled_pair(stream, m)?),
    };
    let weight_bytes: &[u8] = match successors.weights() {
        WeightSlice::I16(w) => bytemuck::cast_slice(w),
        WeightSlice::I32(w) => bytemuck::cast_slice(w),
        WeightSlice::I64(w) => bytemuck::cast_slice(w),
    };
    let transfers = [
        (
            bytemuck::cast_slice(successors.offsets()),
            offsets.device_ptr_mut(stream).0,
        ),
        (
            bytemuck::cast_slice(successors.targets()),
            targets.device_ptr_mut(stream).0,
        ),
        (weight_bytes, weights.pointers(stream).0),
    ];
    // SAFETY: the bytes are `successors`' arrays, in the buffer it holds (unchanged) until
    // the early upload ends, after the copies; each device range was allocated above at
    // the array's length; the caller keeps the result until the copies have ended.
    let pinned = unsafe { Pinned::copy(stream, &transfers) }?;
    Ok(pinned.map(|pinned| (offsets, targets, weights, pinned)))
}

/// Two uninitialised weight columns of `m` elements (the successors', then the
/// predecessors').
fn unfilled_pair<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    m: usize,
) -> Result<[CudaSlice<T>; 2], GpuError> {
    // SAFETY: the caller fills both before anything reads them (copies, the listing).
    let column = || unsafe { stream.alloc::<T>(m.max(1)) }.during("allocating");
    Ok([column()?, column()?])
}

/// The successor side through the staging buffers (where pages cannot be pinned in place),
/// copied into them by a few threads of their own: on the global pool they would queue
/// behind the load's checks.
fn staged(
    device: &Kernels,
    stream: &Arc<CudaStream>,
    successors: &EarlySuccessors,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>, DeviceWeights), GpuError> {
    let m = successors.edge_count();
    let copy_all = || {
        let largest = (4 * m).max(m * successors.width().bits() as usize / 8);
        let mut guard = device.staging_for(largest);
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        let offsets = upload_array(stream, staging, successors.offsets())?;
        let targets = upload_array(stream, staging, successors.targets())?;
        let column = match successors.weights() {
            WeightSlice::I16(w) => WeightColumn::I16(Cow::Borrowed(w)),
            WeightSlice::I32(w) => WeightColumn::I32(Cow::Borrowed(w)),
            WeightSlice::I64(w) => WeightColumn::I64(Cow::Borrowed(w)),
        };
        let weights = DeviceWeights::upload(stream, staging, &column)?;
        Ok::<_, GpuError>((offsets, targets, weights))
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(COPY_THREADS)
        .thread_name(|i| format!("egsolve-gpu-early-{i}"))
        .build();
    match pool {
        Ok(pool) => pool.install(copy_all),
        Err(_) => copy_all(),
    }
}

/// The early copy of `arena`'s successor side, if one was made of these very arrays, for a
/// layout that uploads them as they are (input order, weights at their own width) on the
/// device asked for; other copies are left for their own arenas. Waits for a copy under
/// way; a copy of these arrays that cannot serve is dropped.
pub(super) fn take_for(arena: &Arena, options: &GpuOptions) -> Option<EarlyUpload> {
    let key = key_of(
        arena.succ_offsets(),
        arena.succ_targets(),
        arena.succ_weights(),
    );
    let handle = {
        let mut entries = entries();
        let at = entries.iter().position(|(k, _)| *k == key)?;
        entries.swap_remove(at).1
    };
    let usable = options.order == VertexOrder::Input && !options.wide;
    match handle.join() {
        Ok(Ok(Some(early))) if usable && options.device.is_none_or(|d| d == early.ordinal) => {
            Some(early)
        }
        Ok(Ok(_)) => None,
        Ok(Err(e)) => {
            tracing::debug!("the early upload failed, uploading now: {e}");
            None
        }
        Err(_) => None,
    }
}

/// Where a slice starts and how long it is: what identifies the arrays copied early.
fn address<T>(v: &[T]) -> (usize, usize) {
    (v.as_ptr() as usize, v.len())
}

fn weights_address(w: WeightSlice<'_>) -> (usize, usize, u32) {
    match w {
        WeightSlice::I16(w) => (w.as_ptr() as usize, w.len(), 16),
        WeightSlice::I32(w) => (w.as_ptr() as usize, w.len(), 32),
        WeightSlice::I64(w) => (w.as_ptr() as usize, w.len(), 64),
    }
}
