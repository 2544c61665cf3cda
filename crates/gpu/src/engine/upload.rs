//! Putting a game on the device: the device chosen (`super::placement`), the successors
//! uploaded (or taken from an early copy, `super::early`), the predecessor lists the device
//! makes from them (`super::predecessors`), and the bound `M` summed there for narrow
//! weights.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, PushKernelArg};

use crate::compile::{LANES, LiftKernels, kernels};
use crate::error::{DuringExt, GpuError};
use crate::layout::{DeviceLayout, device_bytes, lanes_for_degree, value_bits};
use crate::transfer::upload_array;
pub use crate::transfer::{LAUNCH_WATCHDOG, launch_watchdog};
use egsolve_core::arena::Arena;
use egsolve_core::solve::GpuOptions;

use super::arrays::{DeviceCredit, DeviceWeights};
use super::placement::choose_device;
use super::predecessors::{list_all_predecessors, vertex_groups};
use super::{GpuEngine, LiftParams};

/// The bound `M` of the game in `params` (weights of 16 or 32 bits), summed on the device
/// after its arrays (`kernels/lift.cu` `deficits_w.._v..`); waits for the stream.
pub(super) fn sum_bound(
    stream: &Arc<CudaStream>,
    kernels: &LiftKernels,
    params: &LiftParams,
    lanes: u32,
) -> Result<u64, GpuError> {
    let during = "summing the bound";
    let sum = stream.alloc_zeros::<u64>(1).during(during)?;
    let cfg = vertex_groups(params.n, lanes);
    let mut launch = stream.launch_builder(&kernels.deficits);
    launch.arg(params);
    launch.arg(&sum);
    launch.arg(&lanes);
    // SAFETY: `params` holds live allocations (successor offsets n + 1, weights m, of the
    // module's weight width) and `sum` one zeroed word, the only thing the kernel writes.
    unsafe { launch.launch(cfg) }.during(during)?;
    let sum = stream.clone_dtoh(&sum).during(during)?;
    Ok(sum[0])
}

impl GpuEngine {
    /// Whether [`GpuEngine::upload`] can sum the bound on the device (given `None`): for
    /// weights of 16 or 32 bits laid out at their own width, whose sum cannot overflow.
    pub fn sums_bound(arena: &Arena, options: &GpuOptions) -> bool {
        !options.wide && arena.weight_width().bits() <= 32
    }

    /// Lays `arena` out (renumbering it when `options.order` asks) and uploads it, with ⊤
    /// bound `bound`, to a device where it fits. Without a bound (only where
    /// [`GpuEngine::sums_bound`]), the device sums it from the uploaded weights (a few
    /// microseconds against a host pass over all of them) before the energies are laid out.
    pub fn upload(
        arena: &Arena,
        bound: Option<u64>,
        options: &GpuOptions,
    ) -> Result<GpuEngine, GpuError> {
        assert!(
            bound.is_some() || Self::sums_bound(arena, options),
            "the device sums the bound only for weights of up to 32 bits"
        );
        // The successor side copied beside the load's checks, if it was (`super::early`):
        // taken first, so that no refusal below leaves it behind.
        let early = super::early::take_for(arena, options);
        let (n, m) = (arena.vertex_count() as u64, arena.edge_count() as u64);
        if n >= u32::MAX as u64 / 2 {
            return Err(GpuError::TooLarge(format!("{n} vertices")));
        }
        if let Some(h) = options.lanes {
            if !LANES.contains(&h) {
                return Err(GpuError::BadLanes(h));
            }
        }
        // Energies are narrow unless the bound says otherwise. A bound still to be summed is
        // taken as narrow until the sum comes back (then the wide module is loaded if it
        // is not), and the room asked for is the wide case's, so that such a game fits.
        let energy_bits = |bound: Option<u64>| match bound {
            _ if options.wide => 64,
            Some(bound) => value_bits(bound),
            None => 32,
        };
        let weight_bits = if options.wide {
            64
        } else {
            arena.weight_width().bits()
        };
        let mut value_bits = energy_bits(bound);
        let room_bits = if bound.is_some() { value_bits } else { 64 };
        let early_seconds = early.as_ref().map(|e| e.seconds);
        let start = Instant::now();
        let ordinal = match &early {
            Some(early) => early.ordinal,
            None => choose_device(options.device, device_bytes(n, m, weight_bits, room_bits))?,
        };
        let device = kernels(ordinal)?;
        let ctx = &device.ctx;
        let context_seconds = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut lift_kernels = device.lift(weight_bits, value_bits)?;
        let mut kernels_seconds = start.elapsed().as_secs_f64();

        let start = Instant::now();
        let layout = DeviceLayout::new(arena, options.wide, options.order);
        let prepare_seconds = start.elapsed().as_secs_f64();
        let lanes = options
            .lanes
            .unwrap_or_else(|| lanes_for_degree(layout.average_degree()));

        let start = Instant::now();
        let stream = match &early {
            Some(early) => Arc::clone(&early.stream),
            None => ctx.new_stream().during("creating a stream")?,
        };
        let stream_seconds = start.elapsed().as_secs_f64();
        let largest = layout.largest_array_bytes();
        let mut guard = device.staging_for(largest);
        let mut direct = None;
        let staging = guard.as_deref_mut().unwrap_or(&mut direct);
        // The device lists the predecessors from the successors (below), unless the early
        // upload did.
        let (mut adjacency, weights, listed) = match early {
            Some(early) => (early.adjacency, early.weights, true),
            None => (
                [
                    upload_array(&stream, staging, &layout.succ_offsets)?,
                    upload_array(&stream, staging, &layout.succ_targets)?,
                    // SAFETY: filled by `list_predecessor_offsets` below before any kernel
                    // reads it.
                    unsafe { stream.alloc::<u32>(n as usize + 1) }.during("allocating")?,
                    // SAFETY: filled by the predecessors kernel below (one source per edge)
                    // before any other kernel on this stream reads it.
                    unsafe { stream.alloc::<u32>(layout.succ_targets.len().max(1)) }
                        .during("allocating")?,
                ],
                DeviceWeights::upload(&stream, staging, &layout.succ_weights)?,
                false,
            ),
        };
        let owners = match &layout.owners {
            Some(owners) => Some(upload_array(&stream, staging, owners)?),
            None => None,
        };
        let alloc_u32 = |len: usize| stream.alloc_zeros::<u32>(len.max(1)).during("allocating");
        // The arrays whose width does not depend on the bound are queued now, so that only
        // the energies wait for a bound summed on the device.
        let frontier0 = alloc_u32(n as usize)?;
        let frontier1 = alloc_u32(n as usize)?;
        let stamp = alloc_u32(n as usize)?;
        let top_record = alloc_u32(n as usize)?;
        let state = alloc_u32(16)?;
        let ptr_u32 = |s: &CudaSlice<u32>| s.device_ptr(&stream).0;
        let mut params = LiftParams {
            // The energies and the bound are set once the bound is known (below).
            frontier0: ptr_u32(&frontier0),
            frontier1: ptr_u32(&frontier1),
            stamp: ptr_u32(&stamp),
            state: ptr_u32(&state),
            n0: layout.n0,
            dense_above: u32::MAX,
            max_rounds: 1,
            grow_above: u32::MAX,
            owners: owners.as_ref().map_or(0, |o| o.device_ptr(&stream).0),
            ..LiftParams::of_game(&stream, &adjacency, &weights, layout.n)
        };
        if !listed {
            list_all_predecessors(&stream, &lift_kernels, &params, &mut adjacency, lanes)?;
        }
        let bound = match bound {
            Some(bound) => bound,
            None => {
                let bound = sum_bound(&stream, &lift_kernels, &params, lanes)?;
                value_bits = energy_bits(Some(bound));
                if value_bits != 32 {
                    let start = Instant::now();
                    lift_kernels = device.lift(weight_bits, value_bits)?;
                    kernels_seconds += start.elapsed().as_secs_f64();
                }
                bound
            }
        };
        let credit = DeviceCredit::alloc(&stream, n as usize, value_bits)?;
        params.credit = credit.pointer(&stream);
        params.bound = bound;
        stream.synchronize().during("uploading the game")?;
        let staged = guard.as_deref().is_some_and(Option::is_some);
        drop(guard);
        let upload_seconds = start.elapsed().as_secs_f64();
        tracing::debug!(
            stream_seconds,
            upload_seconds,
            staged,
            early_seconds,
            "gpu: game uploaded"
        );
        let launched = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .during("creating an event")?;
        let mut engine = GpuEngine {
            launched,
            watchdog: launch_watchdog(),
            stream,
            ordinal,
            n: layout.n,
            m: layout.m,
            n0: layout.n0,
            bound,
            lanes,
            full_blocks: 1,
            dense_above: u32::MAX,
            rounds_per_launch: 64,
            numbering: layout.numbering,
            context_seconds,
            kernels_seconds,
            prepare_seconds,
            upload_seconds,
            uploaded_early: listed,
            weight_bits,
            value_bits,
            _adjacency: adjacency,
            _weights: weights,
            _owners: owners,
            credit,
            frontier0,
            frontier1,
            stamp,
            state,
            params,
            kernels: lift_kernels,
            multiprocessors: device.multiprocessors,
            device: device.clone(),
            components: None,
            components_left_below: crate::components::LEFT_TO_HOST_BELOW,
            evaluation: None,
            top_record,
        };
        engine.set_lanes(lanes)?;
        Ok(engine)
    }

    /// The predecessors as the device listed them: offsets, sources and weights (widened),
    /// in the device's order and numbering (for the device tests, `tests/integration/on_device.rs`).
    pub fn listed_predecessors(&self) -> (Vec<u32>, Vec<u32>, Vec<i64>) {
        fn widened<T: DeviceRepr + Copy + Into<i64>>(
            stream: &Arc<CudaStream>,
            column: &CudaSlice<T>,
        ) -> Vec<i64> {
            let column = stream.clone_dtoh(column).expect("downloads");
            column.into_iter().map(Into::into).collect()
        }
        let sources = self
            .stream
            .clone_dtoh(&self._adjacency[3])
            .expect("downloads");
        let weights = match &self._weights {
            DeviceWeights::I16([_, p]) => widened(&self.stream, p),
            DeviceWeights::I32([_, p]) => widened(&self.stream, p),
            DeviceWeights::I64([_, p]) => widened(&self.stream, p),
        };
        let offsets = self
            .stream
            .clone_dtoh(&self._adjacency[2])
            .expect("downloads");
        let m = self.m as usize;
        (offsets, sources[..m].to_vec(), weights[..m].to_vec())
    }
}
