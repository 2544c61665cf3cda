//! Admission control: whether a job's game can fit this host and its GPUs, decided from its
//! size before it runs, so that a job that cannot fit is refused with what it needs and what
//! is there (or, when only the GPU is too small, runs on the CPU) instead of dying half-way.
//!
//! One step, [`admit`], wherever a game is parsed: at submission (a refusal is the answer:
//! `413 exceeds-memory`, `too-large`, `bound-overflow`) and in the worker for a game the
//! submission did not parse (the job fails with the same kind). In this order:
//! - Host: the arena plus the solve's working memory
//!   ([`egsolve_core::solve::memory::host_bytes`]) against `max_job_memory_bytes` (0: the
//!   host's physical memory).
//! - Size: vertices and edges against `max_vertices` and `max_edges`; then the bound `M`.
//! - GPU: one estimate of the device arrays ([`gpu_need`], the GPU crate's
//!   [`egsolve_gpu::layout::device_bytes`] at the widest weights), computed here and stored
//!   in the job's row (`gpu_memory`; before the parse, from the arena's size:
//!   [`gpu_need_unparsed`]). The claim's SQL and the scheduler compare that figure with each
//!   device's memory, capped by `max_gpu_job_memory_bytes` ([`gpu_capacity`]): a job goes to a
//!   GPU only where it fits; a `gpu` job that fits none of this host's GPUs runs on a CPU slot
//!   ([`super::scheduler::pick_slot`]), and a GPU solve that still finds too little free
//!   memory falls back to the CPU in its worker.

use std::sync::LazyLock;

use egsolve_core::arena::Arena;
use egsolve_core::format::Game;
use egsolve_core::solve::memory::{host_bytes, human_bytes};
use egsolve_core::solve::{self, Threads};

use super::ServeConfig;
use super::job::{ArenaStats, Failure};

/// A game admitted: its figures, and the device memory its solve needs (the one estimate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted {
    /// Vertices, edges, `M`, parity.
    pub stats: ArenaStats,
    /// Device bytes a GPU solve needs ([`gpu_need`]).
    pub gpu_memory: u64,
}

/// Why a game is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Too large for this host's memory (a `413` with the figures at submission).
    Memory(ExceedsMemory),
    /// Over the size limits (`too-large`) or its bound overflows (`bound-overflow`).
    Other(Failure),
}

impl From<Refused> for Failure {
    fn from(refused: Refused) -> Failure {
        match refused {
            Refused::Memory(e) => e.into(),
            Refused::Other(failure) => failure,
        }
    }
}

/// The admission step, at submission and in the worker: the host's memory, the size
/// limits, the bound; then the GPU estimate the job's row stores.
pub fn admit(game: &Game, config: &ServeConfig) -> Result<Admitted, Refused> {
    check_host(&game.arena, config).map_err(Refused::Memory)?;
    let stats = arena_stats(game, config).map_err(Refused::Other)?;
    Ok(Admitted {
        stats,
        gpu_memory: gpu_need(stats.vertices, stats.edges),
    })
}

/// Edges from which admission computes the bound on every core (at 10^7 edges one thread
/// took 9–17 ms of a 140 ms job by reference on the H200 host; starting a pool costs well
/// under a millisecond).
const PARALLEL_BOUND_FROM_EDGES: u64 = 1 << 21;

/// Vertex/edge counts and `M`, or the failure that stops the job.
fn arena_stats(game: &Game, config: &ServeConfig) -> Result<ArenaStats, Failure> {
    let arena = &game.arena;
    let (vertices, edges) = (arena.vertex_count() as u64, arena.edge_count() as u64);
    if vertices > config.max_vertices || edges > config.max_edges {
        return Err(Failure::new(
            "too-large",
            format!(
                "the arena has {vertices} vertices and {edges} edges; this server accepts at most \
                 {} vertices and {} edges",
                config.max_vertices, config.max_edges
            ),
        ));
    }
    // A pass over every edge: on every core for large games (1.2 s on one thread at 10^9
    // edges), on the calling thread otherwise. One pool for the process, started by the
    // first large game (not one per call: submissions and workers' loads run side by side).
    static EVERY_CORE: LazyLock<Threads> = LazyLock::new(|| Threads::new(crate::config::cores()));
    let threads = if edges >= PARALLEL_BOUND_FROM_EDGES {
        EVERY_CORE.clone()
    } else {
        Threads::one()
    };
    let bound = solve::energy::bound_on(arena, &threads)
        .map_err(|e| Failure::new("bound-overflow", e.to_string()))?;
    Ok(ArenaStats {
        vertices,
        edges,
        bound,
        parity: game.parity.is_some(),
    })
}

/// [`gpu_need`] of a game not parsed yet, from its stored size: about 8 bytes of text per
/// edge, 32 per vertex.
pub fn gpu_need_unparsed(bytes: u64) -> u64 {
    gpu_need(bytes / 32, bytes / 8)
}

/// A game too large for this host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the game ({vertices} vertices, {edges} edges) needs about {} of memory to solve (the \
     arena and the solve's working memory) and this server allows {} per job{}; raise \
     max_job_memory_bytes (--max-job-memory-bytes, EGSOLVE_MAX_JOB_MEMORY_BYTES) on a host \
     with more memory, or send a smaller game",
    human_bytes(*.needed),
    human_bytes(*.available),
    if *.from_setting { " (max_job_memory_bytes)" } else { " (its physical memory)" }
)]
pub struct ExceedsMemory {
    /// Vertices of the game.
    pub vertices: u64,
    /// Edges of the game.
    pub edges: u64,
    /// Bytes the solve needs (estimate).
    pub needed: u64,
    /// Bytes a job may use here.
    pub available: u64,
    /// Whether `available` is the configured limit (else the physical memory).
    pub from_setting: bool,
}

/// The setting that bounds a job's host memory.
pub const HOST_SETTING: &str = "max_job_memory_bytes";

impl From<ExceedsMemory> for Failure {
    fn from(e: ExceedsMemory) -> Failure {
        Failure::new("exceeds-memory", e.to_string())
    }
}

/// Host bytes a solve of `arena` needs (estimate).
pub fn host_need(arena: &Arena) -> u64 {
    host_bytes(
        arena.vertex_count() as u64,
        arena.edge_count() as u64,
        arena.weight_width().bytes() as u64,
    )
}

/// Bytes one job may use on this host, and whether that is the configured limit.
pub fn host_limit(config: &ServeConfig) -> (u64, bool) {
    if config.max_job_memory_bytes > 0 {
        (config.max_job_memory_bytes, true)
    } else {
        (physical_memory().unwrap_or(u64::MAX), false)
    }
}

/// Whether `arena` can be solved within this host's memory limit.
pub fn check_host(arena: &Arena, config: &ServeConfig) -> Result<(), ExceedsMemory> {
    let needed = host_need(arena);
    let (available, from_setting) = host_limit(config);
    if needed <= available {
        return Ok(());
    }
    Err(ExceedsMemory {
        vertices: arena.vertex_count() as u64,
        edges: arena.edge_count() as u64,
        needed,
        available,
        from_setting,
    })
}

/// Device bytes a GPU solve of a game with `vertices` and `edges` needs, at the widest
/// weights and values.
pub fn gpu_need(vertices: u64, edges: u64) -> u64 {
    egsolve_gpu::layout::device_bytes(vertices, edges, 64, 64)
}

/// A device's memory as the scheduler counts it: capped by `cap`, the setting
/// `max_gpu_job_memory_bytes` (0: the device's own).
pub fn gpu_capacity(device_memory: u64, cap: u64) -> u64 {
    match cap {
        0 => device_memory,
        cap => device_memory.min(cap),
    }
}

/// The host's physical memory in bytes (Linux: `MemTotal` of `/proc/meminfo`), or `None`
/// where it cannot be read.
pub fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arena() -> Arena {
        egsolve_core::format::read_bytes(
            b"2;\n0 MAX 1:-1,2:0;\n1 MIN 0:2;\n2 MIN 2:-1;\n",
            &Default::default(),
        )
        .unwrap()
        .arena
    }

    #[test]
    fn a_game_over_the_limit_is_refused_with_figures() {
        let config = ServeConfig {
            max_job_memory_bytes: 100,
            ..ServeConfig::default()
        };
        let refused = check_host(&arena(), &config).unwrap_err();
        assert_eq!(refused.available, 100);
        assert_eq!(refused.needed, host_need(&arena()));
        let message = refused.to_string();
        assert!(
            message.contains("max_job_memory_bytes") && message.contains("3 vertices"),
            "{message}"
        );
        let failure = Failure::from(refused);
        assert_eq!(failure.kind, "exceeds-memory");
    }

    #[test]
    fn the_default_limit_is_the_physical_memory() {
        assert!(check_host(&arena(), &ServeConfig::default()).is_ok());
        let (limit, configured) = host_limit(&ServeConfig::default());
        assert!(!configured && limit > 1 << 20);
    }

    #[test]
    fn gpu_capacity_is_capped_by_the_setting() {
        let config = ServeConfig {
            max_gpu_job_memory_bytes: 1000,
            ..ServeConfig::default()
        };
        assert_eq!(gpu_capacity(5000, config.max_gpu_job_memory_bytes), 1000);
        assert_eq!(
            gpu_capacity(5000, ServeConfig::default().max_gpu_job_memory_bytes),
            5000
        );
        assert!(gpu_need(10, 20) > 20 * 8);
    }

    #[test]
    fn admission_checks_memory_then_size_then_the_bound() {
        let config = ServeConfig::default();
        let game = egsolve_core::format::read_bytes(
            b"2;\n0 MAX 1:-1,2:0;\n1 MIN 0:2;\n2 MIN 2:-1;\n",
            &Default::default(),
        )
        .unwrap();
        let admitted = admit(&game, &config).unwrap();
        assert_eq!((admitted.stats.vertices, admitted.stats.edges), (3, 4));
        assert_eq!(admitted.gpu_memory, gpu_need(3, 4));
        let both = ServeConfig {
            max_job_memory_bytes: 100,
            max_vertices: 2,
            ..ServeConfig::default()
        };
        assert!(matches!(admit(&game, &both), Err(Refused::Memory(_))));
        let small = ServeConfig {
            max_vertices: 2,
            ..ServeConfig::default()
        };
        let Err(Refused::Other(failure)) = admit(&game, &small) else {
            panic!("admitted past max_vertices");
        };
        assert_eq!(failure.kind, "too-large");
        assert!(gpu_need_unparsed(800) == gpu_need(25, 100));
    }
}
