//! The threads of a GPU solve's host parts (the bound's sum, the upload's layout, the
//! strategies, the winners): one pool per process of every core, and one of fewer threads
//! for a solve that races a CPU side (`auto` on a parity game), so that the two sides'
//! threads together do not outnumber the cores: the service caps a race's CPU side at
//! [`race::cpu_side_threads`]; the command line's CPU side keeps `--threads` (every core
//! by default), and its GPU side still takes fewer.
//!
//! Why two. With one pool thread per core, a race's 4 CPU-side threads and the GPU side's 16
//! stalled the GPU side's short host passes on the H200 host (16 cores; warm service,
//! default options, fresh servers of 7 jobs per game, jobs 0.7 s apart; two calls):
//! Hesselink 7.12 / 7.25 ms median with 16 host threads against 6.71 / 6.90 with 12, BRP
//! 11.03 / 11.04 against 10.40 / 11.02, Onebit 16.30 / 16.94 against 15.48 / 15.70. But a
//! solve that does not race lost with 12: the IEEE 1394 energy game 30.38 ms with 16
//! against 33.88 with 12, so it keeps every core.

use egsolve_core::solve::{GpuOptions, Threads, race};

/// Host threads of a solve that does not race: every core.
pub fn host_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Host threads of a solve that races a CPU side ([`GpuOptions::beside_race`]): every core
/// but those the CPU side takes ([`race::cpu_side_threads`]), at least half of them.
/// `EGSOLVE_GPU_RACE_THREADS=N` sets another count (read once per process).
pub fn race_host_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        let set = std::env::var("EGSOLVE_GPU_RACE_THREADS").ok();
        race_threads_from(set.as_deref(), host_threads())
    })
}

/// The race's host threads for a setting of `EGSOLVE_GPU_RACE_THREADS` (`None`: unset) on a
/// machine of `cores`: a positive count as set; unset, the cores a race's CPU side leaves
/// (at least half of them, at least one); anything else the same, with a warning.
fn race_threads_from(set: Option<&str>, cores: usize) -> usize {
    let default = cores
        .saturating_sub(race::cpu_side_threads(cores))
        .max(cores / 2)
        .max(1);
    match set.map(|v| v.trim().parse::<usize>()) {
        None => default,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            tracing::warn!(
                value = set,
                default,
                "EGSOLVE_GPU_RACE_THREADS is not a positive count; using the default"
            );
            default
        }
    }
}

/// The pool of [`host_threads`] that GPU solves share for their host parts, started by the
/// first: a warm process's solve does not wait for 16 threads to start (about 1 ms of a
/// 12 ms solve on the H100 host). Unlike the CPU backends' solves, which get a pool each,
/// concurrent GPU solves (one per device) that do not race share it: their host parts are
/// short passes between device work, and rayon interleaves their tasks. (Solves on two
/// devices, one racing, use both pools: the cores are then outnumbered, as two CPU slots'
/// solves beside a GPU job outnumber them.)
pub fn host_pool() -> Threads {
    static POOL: std::sync::OnceLock<Threads> = std::sync::OnceLock::new();
    POOL.get_or_init(|| Threads::new(host_threads())).clone()
}

/// The pool of [`race_host_threads`], shared as [`host_pool`] is by the solves that race.
pub fn race_host_pool() -> Threads {
    static POOL: std::sync::OnceLock<Threads> = std::sync::OnceLock::new();
    POOL.get_or_init(|| Threads::new(race_host_threads()))
        .clone()
}

/// The pool for a solve with `options`: [`race_host_pool`] beside a race, else [`host_pool`].
pub fn host_pool_for(options: &GpuOptions) -> Threads {
    match options.beside_race {
        true => race_host_pool(),
        false => host_pool(),
    }
}

#[cfg(test)]
mod tests {
    use super::race_threads_from;

    #[test]
    fn a_races_host_threads_leave_its_cpu_side_the_cores_unless_a_count_is_set() {
        for (cores, threads) in [(1, 1), (2, 1), (4, 2), (8, 6), (16, 12), (64, 48)] {
            assert_eq!(race_threads_from(None, cores), threads, "{cores} cores");
        }
        assert_eq!(race_threads_from(Some("16"), 16), 16);
        assert_eq!(race_threads_from(Some(" 4 "), 16), 4);
        assert_eq!(race_threads_from(Some("32"), 16), 32);
        for bad in ["0", "-3", "many", ""] {
            assert_eq!(race_threads_from(Some(bad), 16), 12, "{bad:?}");
        }
    }

    #[test]
    fn only_a_solve_beside_a_race_takes_the_race_pool() {
        let mut options = egsolve_core::solve::GpuOptions::default();
        assert_eq!(
            super::host_pool_for(&options).count(),
            super::host_threads()
        );
        options.beside_race = true;
        assert_eq!(
            super::host_pool_for(&options).count(),
            super::race_host_threads()
        );
    }
}
