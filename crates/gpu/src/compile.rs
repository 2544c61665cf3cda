//! Kernels: the `.cu` sources embedded in the binary, compiled by NVRTC to CUBIN for the
//! device's own architecture (`sm_XY`), loaded once per device and cached for the process.
//! The lifting kernels come in one module per pair of weight and energy widths, each
//! compiled the first time a game of that pair runs on the device (six kernels, one per
//! lane count, a fraction of a second), so start-up never pays for all six pairs.
//!
//! Compiled CUBINs are kept on disk ([`cubin_cache`]), so NVRTC runs once per machine,
//! kernel source and options, not once per process.
//!
//! CUBIN rather than PTX skips the driver's JIT and avoids a PTX-version clash when NVRTC
//! is newer than the driver. [`compile_cubin`] needs no GPU, only NVRTC: the tests compile
//! every kernel for sm_90 on machines without a GPU.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{Ptx, result as nvrtc, sys as nvrtc_sys};

use crate::cubin_cache;
use crate::devices::{nvrtc_ready, open};
use crate::error::{DuringExt, GpuError};
use crate::staging::{STAGED_FROM, STAGED_IF_READY, Staging};

/// The frontier-lifting kernels (`kernels/lift.cu`).
pub const LIFT_SOURCE: &str = include_str!("../../../kernels/lift.cu");
/// The strongly connected components of an evaluation's graph (`kernels/components.cu`),
/// compiled in every lifting module, after [`LIFT_SOURCE`] (it uses its grid barrier).
pub const COMPONENTS_SOURCE: &str = include_str!("../../../kernels/components.cu");
/// The components kernel's entry point (the same in every module).
pub const COMPONENTS_KERNEL: &str = "strongly_connected_components";
/// The giant component's greedy witness (`kernels/components.cu`, at the module's weight
/// width).
pub const WITNESS_KERNEL: &str = "giant_witness";
/// Backward reachability, the attractor to ⊤ and Bellman–Ford in an evaluation's graph
/// (`kernels/evaluate.cu`), compiled in every lifting module after [`COMPONENTS_SOURCE`] (it
/// uses its sweeps).
pub const EVALUATE_SOURCE: &str = include_str!("../../../kernels/evaluate.cu");
/// Backward reachability's entry point (the same in every module).
pub const REACH_KERNEL: &str = "reach_sources";
/// Player 1's attractor to ⊤'s entry point (the same in every module, at its widths).
pub const ATTRACT_KERNEL: &str = "attract_top";
/// Bellman–Ford's entry point (at the module's weight width).
pub const CREDITS_KERNEL: &str = "credits_to_pinned";

/// Fixpoint iteration for parity games (`kernels/parity.cu`, a module of its own).
pub const PARITY_SOURCE: &str = include_str!("../../../kernels/parity.cu");
/// Fixpoint iteration's entry point.
pub const PARITY_KERNEL: &str = "fixpoint_iteration";

/// Lanes per vertex that have a kernel.
pub const LANES: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Weight widths (bits) that have a kernel: the arena's storage widths.
pub const WEIGHT_BITS: [u32; 3] = [16, 32, 64];
/// Energy widths (bits) that have a kernel: u32 when the bound fits below `u32::MAX`.
pub const VALUE_BITS: [u32; 2] = [32, 64];

/// The lifting kernel for `lanes` lanes per vertex, weights of `weight_bits` and energies
/// of `value_bits` (`kernels/lift.cu`, compiled by [`lift_source`] for that pair).
pub fn lift_kernel_name(lanes: u32, weight_bits: u32, value_bits: u32) -> String {
    format!("lift_rounds_h{lanes}_w{weight_bits}_v{value_bits}")
}

/// Player 0's strategy at the fixpoint, for weights of `weight_bits` and energies of
/// `value_bits` (`kernels/lift.cu`, in the same module as the lifting kernels).
pub fn moves_kernel_name(weight_bits: u32, value_bits: u32) -> String {
    format!("player0_moves_w{weight_bits}_v{value_bits}")
}

/// Player 1's recorded moves at the fixpoint, classified (`kernels/lift.cu`, in the same
/// module as the lifting kernels; only `value_bits` matters).
pub fn recorded_kernel_name(weight_bits: u32, value_bits: u32) -> String {
    format!("recorded_moves_w{weight_bits}_v{value_bits}")
}

/// Player 1's strategy for an evaluation, for weights of `weight_bits` and energies of
/// `value_bits` (`kernels/lift.cu`, in the same module as the lifting kernels).
pub fn sigma_kernel_name(weight_bits: u32, value_bits: u32) -> String {
    format!("player1_edges_w{weight_bits}_v{value_bits}")
}

/// The predecessors' lists from the successors, for weights of `weight_bits` (`kernels/lift.cu`,
/// in the same module as the lifting kernels; `value_bits` only names the module).
pub fn predecessors_kernel_name(weight_bits: u32, value_bits: u32) -> String {
    format!("predecessors_w{weight_bits}_v{value_bits}")
}

/// The bound `M` summed on the device, for weights of `weight_bits` (16 or 32: the kernel's
/// sum would overflow past them; `kernels/lift.cu`, in the same module as the lifting
/// kernels; `value_bits` only names the module).
pub fn deficits_kernel_name(weight_bits: u32, value_bits: u32) -> String {
    format!("deficits_w{weight_bits}_v{value_bits}")
}

/// The in-degree count behind the CSC's offsets (`kernels/lift.cu`, in every lifting
/// module; it does not depend on the widths).
pub const COUNT_KERNEL: &str = "count_in_degrees";
/// The per-tile exclusive prefix sum (`kernels/lift.cu`, in every lifting module).
pub const SCAN_KERNEL: &str = "scan_tiles";
/// The scanned tile totals added back (`kernels/lift.cu`, in every lifting module).
pub const ADD_TILES_KERNEL: &str = "add_tile_offsets";

/// `kernels/lift.cu` for one pair of widths: the macros that select its kernels, then the
/// source, then `kernels/components.cu` and `kernels/evaluate.cu`.
pub fn lift_source(weight_bits: u32, value_bits: u32) -> String {
    format!(
        "#define LIFT_WB {weight_bits}\n#define LIFT_W i{weight_bits}\n\
         #define LIFT_VB {value_bits}\n#define LIFT_V u{value_bits}\n{LIFT_SOURCE}\n{COMPONENTS_SOURCE}\n{EVALUATE_SOURCE}"
    )
}

/// Every kernel source (one per width pair, and the parity module), with a name and the entry
/// points it must define.
pub fn sources() -> Vec<(String, String, Vec<String>)> {
    let mut all = Vec::new();
    for &v in &VALUE_BITS {
        for &w in &WEIGHT_BITS {
            let entries = LANES
                .iter()
                .map(|&h| lift_kernel_name(h, w, v))
                .chain([
                    moves_kernel_name(w, v),
                    sigma_kernel_name(w, v),
                    recorded_kernel_name(w, v),
                    predecessors_kernel_name(w, v),
                    deficits_kernel_name(w, v),
                    COUNT_KERNEL.to_string(),
                    SCAN_KERNEL.to_string(),
                    ADD_TILES_KERNEL.to_string(),
                    COMPONENTS_KERNEL.to_string(),
                    WITNESS_KERNEL.to_string(),
                    REACH_KERNEL.to_string(),
                    ATTRACT_KERNEL.to_string(),
                    CREDITS_KERNEL.to_string(),
                ])
                .collect();
            all.push((format!("lift_w{w}_v{v}.cu"), lift_source(w, v), entries));
        }
    }
    all.push((
        "parity.cu".to_string(),
        PARITY_SOURCE.to_string(),
        vec![PARITY_KERNEL.to_string()],
    ));
    all
}

/// Compiles `source` to CUBIN for `arch` (e.g. `sm_90`). Fails with the compiler's log.
pub fn compile_cubin(name: &str, source: &str, arch: &str) -> Result<Vec<u8>, GpuError> {
    nvrtc_ready()?;
    let fail = |error, log: String| GpuError::Compile {
        arch: arch.to_string(),
        error,
        log,
    };
    let src = CString::new(source).expect("kernel sources contain no NUL byte");
    let cname = CString::new(name).expect("kernel names contain no NUL byte");
    let prog = nvrtc::create_program(&src, Some(&cname)).map_err(|e| fail(e, String::new()))?;
    let options = nvrtc_options(arch);
    // SAFETY: `prog` was just created and is destroyed exactly once below.
    let compiled = unsafe { nvrtc::compile_program(prog, &options) };
    let log = unsafe { nvrtc::get_program_log(prog) }
        .map(|raw| {
            let bytes: Vec<u8> = raw
                .iter()
                .map(|&c| c as u8)
                .take_while(|&b| b != 0)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .unwrap_or_default();
    let cubin = compiled.and_then(|()| {
        let mut size = 0usize;
        // SAFETY: `prog` compiled successfully; the buffer has the size NVRTC reported.
        unsafe { nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size).result()? };
        let mut cubin = vec![0u8; size];
        unsafe { nvrtc_sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut _).result()? };
        Ok(cubin)
    });
    // SAFETY: `prog` is live and not used after this.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    cubin.map_err(|e| fail(e, log))
}

/// The options NVRTC compiles with for `arch`.
fn nvrtc_options(arch: &str) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
    ];
    // For kernel experiments on a device (e.g. `--maxrregcount=64`): extra NVRTC options,
    // separated by spaces. Not for production settings.
    if let Ok(extra) = std::env::var("EGSOLVE_NVRTC_EXTRA_OPTIONS") {
        options.extend(extra.split_whitespace().map(String::from));
    }
    options
}

/// `source` compiled for `arch`: from the disk cache ([`cubin_cache`]) when it holds it,
/// else by NVRTC (and then filed there). Returns the CUBIN and, when it came from the
/// cache, its key (so a CUBIN that fails to load can be forgotten).
pub fn cached_cubin(
    name: &str,
    source: &str,
    arch: &str,
) -> Result<(Vec<u8>, Option<String>), GpuError> {
    let Some(directory) = cubin_cache::directory() else {
        return Ok((compile_cubin(name, source, arch)?, None));
    };
    let key = cubin_cache::key(source, arch, nvrtc_version()?, &nvrtc_options(arch));
    if let Some(cubin) = cubin_cache::load(&directory, &key) {
        return Ok((cubin, Some(key)));
    }
    let cubin = compile_cubin(name, source, arch)?;
    cubin_cache::store(&directory, &key, &cubin);
    Ok((cubin, None))
}

/// The NVRTC version, e.g. (13, 0).
pub fn nvrtc_version() -> Result<(i32, i32), GpuError> {
    nvrtc_ready()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded; both pointers are valid.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|error| GpuError::Compile {
            arch: String::new(),
            error,
            log: String::new(),
        })?;
    Ok((major, minor))
}

/// A device's context; its lifting kernels are compiled per width pair on first use
/// ([`Kernels::lift`]).
pub struct Kernels {
    /// The device's primary context.
    pub ctx: Arc<CudaContext>,
    /// `sm_XY`.
    pub arch: String,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Modules compiled so far, by (weight bits, energy bits).
    lift: Mutex<HashMap<(u32, u32), Arc<LiftKernels>>>,
    /// Page-locked buffers for large copies, allocated on first use.
    staging: Mutex<Option<Staging>>,
}

/// The lifting kernels of one width pair, loaded on one device.
pub struct LiftKernels {
    /// `lift_rounds_h{H}_w.._v..`, indexed like [`LANES`].
    pub functions: Vec<CudaFunction>,
    /// `player0_moves_w.._v..`.
    pub player0_moves: CudaFunction,
    /// `player1_edges_w.._v..`.
    pub player1_edges: CudaFunction,
    /// `recorded_moves_w.._v..`.
    pub recorded_moves: CudaFunction,
    /// `predecessors_w.._v..`.
    pub predecessors: CudaFunction,
    /// `deficits_w.._v..`.
    pub deficits: CudaFunction,
    /// [`COUNT_KERNEL`].
    pub count_in_degrees: CudaFunction,
    /// [`SCAN_KERNEL`].
    pub scan_tiles: CudaFunction,
    /// [`ADD_TILES_KERNEL`].
    pub add_tile_offsets: CudaFunction,
    /// [`COMPONENTS_KERNEL`].
    pub components: CudaFunction,
    /// [`WITNESS_KERNEL`].
    pub witness: CudaFunction,
    /// [`REACH_KERNEL`].
    pub reach: CudaFunction,
    /// [`ATTRACT_KERNEL`].
    pub attract: CudaFunction,
    /// [`CREDITS_KERNEL`].
    pub credits: CudaFunction,
    /// Seconds to get this module's CUBIN (NVRTC, or the disk cache) and load it.
    pub load_seconds: f64,
    /// Whether the CUBIN came from the disk cache.
    pub cached: bool,
    _module: Arc<CudaModule>,
}

impl Kernels {
    /// The device's staging buffers for large copies, allocated on first use; `None` when
    /// that failed (copies then go directly from pageable memory). Held while copying.
    pub fn staging(&self) -> MutexGuard<'_, Option<Staging>> {
        let mut staging = self
            .staging
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if staging.is_none() {
            let start = std::time::Instant::now();
            match Staging::new(&self.ctx) {
                Ok(buffers) => *staging = Some(buffers),
                Err(e) => tracing::warn!("no staging buffers, copying directly: {e}"),
            }
            tracing::debug!(
                seconds = start.elapsed().as_secs_f64(),
                "gpu: page-locked staging buffers allocated"
            );
        }
        staging
    }

    /// [`Kernels::staging`] when a copy of `largest_bytes` goes through the buffers: from
    /// [`STAGED_FROM`] they are allocated if need be; from [`STAGED_IF_READY`] they are used
    /// where an earlier copy allocated them (a warm process); otherwise nothing is locked or
    /// allocated (page-locking the buffers costs tens of milliseconds, more than a small
    /// game's whole upload).
    pub fn staging_for(&self, largest_bytes: usize) -> Option<MutexGuard<'_, Option<Staging>>> {
        if largest_bytes >= STAGED_FROM {
            return Some(self.staging());
        }
        if largest_bytes < STAGED_IF_READY {
            return None;
        }
        let staging = self
            .staging
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        staging.is_some().then_some(staging)
    }

    /// The lifting kernels for weights of `weight_bits` and energies of `value_bits`,
    /// compiled and loaded on first use.
    pub fn lift(&self, weight_bits: u32, value_bits: u32) -> Result<Arc<LiftKernels>, GpuError> {
        self.lift_module(weight_bits, value_bits, false)
            .map(|k| k.expect("compiled when not cached"))
    }

    /// [`Kernels::lift`] only if its CUBIN is in the disk cache (nothing is compiled): for
    /// warming up before the game's widths are known.
    pub fn lift_if_cached(&self, weight_bits: u32, value_bits: u32) {
        let _ = self.lift_module(weight_bits, value_bits, true);
    }

    /// The loaded modules, locked only to look up or insert: a module is compiled and
    /// loaded without the lock, so a solve that needs one width never waits behind another
    /// width's compile (the service's warm-up prepares every width at start-up, for up to
    /// seconds on a cold disk cache). Two threads that need the same new width may both
    /// build it; the first inserted is kept.
    fn modules(&self) -> MutexGuard<'_, HashMap<(u32, u32), Arc<LiftKernels>>> {
        self.lift
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lift_module(
        &self,
        weight_bits: u32,
        value_bits: u32,
        cached_only: bool,
    ) -> Result<Option<Arc<LiftKernels>>, GpuError> {
        if let Some(k) = self.modules().get(&(weight_bits, value_bits)) {
            return Ok(Some(k.clone()));
        }
        let name = format!("lift_w{weight_bits}_v{value_bits}.cu");
        let source = lift_source(weight_bits, value_bits);
        if cached_only {
            let cached = cubin_cache::directory().is_some_and(|directory| {
                let key = cubin_cache::key(
                    &source,
                    &self.arch,
                    nvrtc_version().unwrap_or((0, 0)),
                    &nvrtc_options(&self.arch),
                );
                cubin_cache::load(&directory, &key).is_some()
            });
            if !cached {
                return Ok(None);
            }
        }
        let start = std::time::Instant::now();
        let (cubin, key) = cached_cubin(&name, &source, &self.arch)?;
        let cached = key.is_some();
        let module = match (self.ctx.load_module(Ptx::from_binary(cubin)), key) {
            (Ok(module), _) => module,
            (Err(e), Some(key)) => {
                // A cached CUBIN the driver refuses (damaged, or from another driver):
                // compile afresh and replace it.
                tracing::warn!("cached kernel {name} did not load ({e:?}); compiling it again");
                if let Some(directory) = cubin_cache::directory() {
                    cubin_cache::forget(&directory, &key);
                }
                let (cubin, _) = cached_cubin(&name, &source, &self.arch)?;
                self.ctx
                    .load_module(Ptx::from_binary(cubin))
                    .during("loading the kernel module")?
            }
            (Err(e), None) => return Err(e).during("loading the kernel module"),
        };
        let load_seconds = start.elapsed().as_secs_f64();
        let functions = LANES
            .iter()
            .map(|&h| module.load_function(&lift_kernel_name(h, weight_bits, value_bits)))
            .collect::<Result<Vec<_>, _>>()
            .during("loading the lifting kernels")?;
        let player0_moves = module
            .load_function(&moves_kernel_name(weight_bits, value_bits))
            .during("loading the strategy kernel")?;
        let player1_edges = module
            .load_function(&sigma_kernel_name(weight_bits, value_bits))
            .during("loading player 1's strategy kernel")?;
        let recorded_moves = module
            .load_function(&recorded_kernel_name(weight_bits, value_bits))
            .during("loading player 1's recorded moves kernel")?;
        let predecessors = module
            .load_function(&predecessors_kernel_name(weight_bits, value_bits))
            .during("loading the predecessors kernel")?;
        let deficits = module
            .load_function(&deficits_kernel_name(weight_bits, value_bits))
            .during("loading the bound's kernel")?;
        let prefix_sums = |name| {
            module
                .load_function(name)
                .during("loading the prefix-sum kernels")
        };
        let count_in_degrees = prefix_sums(COUNT_KERNEL)?;
        let scan_tiles = prefix_sums(SCAN_KERNEL)?;
        let add_tile_offsets = prefix_sums(ADD_TILES_KERNEL)?;
        let components = module
            .load_function(COMPONENTS_KERNEL)
            .during("loading the components kernel")?;
        let witness = module
            .load_function(WITNESS_KERNEL)
            .during("loading the witness kernel")?;
        let evaluation = |name| {
            module
                .load_function(name)
                .during("loading the evaluation's kernels")
        };
        let reach = evaluation(REACH_KERNEL)?;
        let attract = evaluation(ATTRACT_KERNEL)?;
        let credits = evaluation(CREDITS_KERNEL)?;
        let k = Arc::new(LiftKernels {
            witness,
            reach,
            attract,
            credits,
            functions,
            player0_moves,
            player1_edges,
            recorded_moves,
            predecessors,
            deficits,
            count_in_degrees,
            scan_tiles,
            add_tile_offsets,
            components,
            load_seconds,
            cached,
            _module: module,
        });
        let mut modules = self.modules();
        Ok(Some(
            modules
                .entry((weight_bits, value_bits))
                .or_insert(k)
                .clone(),
        ))
    }
}

/// Keeps device memory that games free in the device's default pool (its release threshold
/// at the maximum) instead of handing it back to the driver at every synchronisation: a
/// warm process's next upload then takes its arrays from the pool instead of mapping new
/// memory. Where the driver refuses, allocations stay as they were (logged). The driver
/// counts that memory as used: [`release_freed_memory`] hands it back when a game does not
/// fit beside it.
fn keep_freed_memory(ctx: &Arc<CudaContext>) {
    use cudarc::driver::sys;
    let mut threshold = u64::MAX;
    let result = default_pool(ctx).and_then(|pool| {
        // SAFETY: a valid pool and attribute, which takes a `u64` (cuMemPoolSetAttribute's
        // documentation).
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            )
        }
        .result()
    });
    if let Err(e) = result {
        tracing::debug!("freed device memory goes back to the driver: {e}");
    }
}

/// Hands the memory games freed on device `ordinal` (kept by `keep_freed_memory`) back to
/// the driver; a no-op for a device this process has not opened.
pub fn release_freed_memory(ordinal: usize) {
    use cudarc::driver::sys;
    let opened = CONTEXTS
        .get()
        .and_then(|cache| cache.lock().ok()?.get(&ordinal).cloned());
    let Some(k) = opened else { return };
    // SAFETY: a valid pool; trimming releases only memory no allocation holds.
    let result =
        default_pool(&k.ctx).and_then(|pool| unsafe { sys::cuMemPoolTrimTo(pool, 0) }.result());
    if let Err(e) = result {
        tracing::debug!("freed device memory not released: {e}");
    }
}

/// The default memory pool of `ctx`'s device (where cudarc's stream allocations come from).
fn default_pool(
    ctx: &CudaContext,
) -> Result<cudarc::driver::sys::CUmemoryPool, cudarc::driver::DriverError> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: a plain driver query on an open context's device, with a valid out-pointer.
    unsafe { cudarc::driver::sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) }
        .result()?;
    Ok(pool)
}

/// Each opened device's context and kernels ([`kernels`]).
static CONTEXTS: OnceLock<Mutex<HashMap<usize, Arc<Kernels>>>> = OnceLock::new();

/// The context of device `ordinal`, opened on first use.
pub fn kernels(ordinal: usize) -> Result<Arc<Kernels>, GpuError> {
    let cache = CONTEXTS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(k) = cache.get(&ordinal) {
        return Ok(k.clone());
    }
    let ctx = open(ordinal)?;
    // SAFETY: every engine owns its stream and buffers and orders its own work on that one
    // stream, so cudarc's cross-stream event tracking (an event per buffer per launch) is
    // not needed.
    unsafe { ctx.disable_event_tracking() };
    let (major, minor) = ctx
        .compute_capability()
        .during("reading the compute capability")?;
    let arch = format!("sm_{major}{minor}");
    keep_freed_memory(&ctx);
    let multiprocessors = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .during("reading the multiprocessor count")?
        .max(1) as u32;
    let k = Arc::new(Kernels {
        ctx,
        arch,
        multiprocessors,
        lift: Mutex::new(HashMap::new()),
        staging: Mutex::new(None),
    });
    cache.insert(ordinal, k.clone());
    Ok(k)
}
