//! The solves' freed memory goes back to the kernel once this process's workers have had
//! no job for [`RELEASE_AFTER_IDLE`] (`egsolve_alloc::release_free_memory`), not the moment
//! each job ends.
//!
//! Why: the allocator keeps freed blocks so that the next solve reuses pages already
//! mapped (see `egsolve_alloc`). Handing them back after every job made each job of a
//! stream sent one after another fault its vectors in again. Measured on the H200 host
//! (session 65, warm servers, default options, jobs 0.7 s apart, the two ways alternated,
//! 18 jobs each): BRP median 12.25 → 10.75 ms, Hesselink 7.50 → 6.83, Onebit 17.38 →
//! 15.89; SWP (0.2 M vertices) 3.28 → 3.69. A server that stays idle still gets its
//! memory back, a moment later.
//!
//! `EGSOLVE_RELEASE_IDLE_MS` sets the wait in milliseconds (0: at once, as before).

use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the workers stay idle before the freed memory is handed back, by default.
pub(crate) const RELEASE_AFTER_IDLE: Duration = Duration::from_secs(2);

/// The wait in force: `EGSOLVE_RELEASE_IDLE_MS` (read once per process), else
/// [`RELEASE_AFTER_IDLE`].
pub(crate) fn release_after_idle() -> Duration {
    static WAIT: OnceLock<Duration> = OnceLock::new();
    *WAIT.get_or_init(|| {
        std::env::var("EGSOLVE_RELEASE_IDLE_MS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map_or(RELEASE_AFTER_IDLE, Duration::from_millis)
    })
}

/// The process's releaser, started at the first idle spell (`None`: no thread could be
/// started, so memory is released at once).
static PROCESS: OnceLock<Option<Arc<Releaser>>> = OnceLock::new();

/// A job started: nothing is released while it runs.
pub(crate) fn job_started() {
    if let Some(Some(releaser)) = PROCESS.get() {
        releaser.job_started();
    }
}

/// The last running job ended: the freed memory goes back after
/// [`release_after_idle`] unless a job starts meanwhile.
pub(crate) fn all_jobs_ended() {
    let wait = release_after_idle();
    let releaser = (!wait.is_zero())
        .then(|| PROCESS.get_or_init(|| Releaser::start(wait, egsolve_alloc::release_free_memory)))
        .and_then(Option::as_ref);
    match releaser {
        Some(releaser) => releaser.all_jobs_ended(),
        None => egsolve_alloc::release_free_memory(),
    }
}

/// Hands freed memory back (`release`) after `wait` without a job, on a thread of its own.
struct Releaser {
    /// When the workers last became idle; `None` while a job runs, or once released.
    idle_since: Mutex<Option<Instant>>,
    wake: Condvar,
    wait: Duration,
    release: fn(),
}

impl Releaser {
    /// The releaser and its thread, or `None` if no thread can be started.
    fn start(wait: Duration, release: fn()) -> Option<Arc<Releaser>> {
        let releaser = Arc::new(Releaser {
            idle_since: Mutex::new(None),
            wake: Condvar::new(),
            wait,
            release,
        });
        let runs = releaser.clone();
        let spawned = std::thread::Builder::new()
            .name("egsolve-release".into())
            .spawn(move || runs.run());
        match spawned {
            Ok(_) => Some(releaser),
            Err(e) => {
                tracing::warn!("no thread to hand freed memory back later ({e}); at once instead");
                None
            }
        }
    }

    fn job_started(&self) {
        *self.lock() = None;
    }

    fn all_jobs_ended(&self) {
        *self.lock() = Some(Instant::now());
        self.wake.notify_one();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.idle_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The thread: waits for an idle spell of `wait`, releases, and again, for ever.
    fn run(&self) {
        let mut idle_since = self.lock();
        loop {
            let Some(since) = *idle_since else {
                idle_since = self
                    .wake
                    .wait(idle_since)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            };
            let left = (since + self.wait).saturating_duration_since(Instant::now());
            if !left.is_zero() {
                idle_since = self
                    .wake
                    .wait_timeout(idle_since, left)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
                continue;
            }
            *idle_since = None;
            drop(idle_since);
            (self.release)();
            tracing::debug!(
                "freed memory handed back after {:?} without a job",
                self.wait
            );
            idle_since = self.lock();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RELEASED: AtomicUsize = AtomicUsize::new(0);

    fn count_release() {
        RELEASED.fetch_add(1, Ordering::SeqCst);
    }

    fn released_within(limit: Duration, count: usize) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if RELEASED.load(Ordering::SeqCst) >= count {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        RELEASED.load(Ordering::SeqCst) >= count
    }

    /// Released once after an idle spell of the wait; not while jobs follow one another
    /// closer than that; again after the next idle spell.
    #[test]
    fn memory_goes_back_after_an_idle_spell_only() {
        let wait = Duration::from_millis(300);
        let releaser = Releaser::start(wait, count_release).expect("a thread");
        // Jobs one after another, 100 ms apart, for a second: never idle for the wait.
        for _ in 0..10 {
            releaser.job_started();
            std::thread::sleep(Duration::from_millis(20));
            releaser.all_jobs_ended();
            std::thread::sleep(Duration::from_millis(80));
        }
        releaser.job_started();
        assert_eq!(RELEASED.load(Ordering::SeqCst), 0, "released between jobs");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            RELEASED.load(Ordering::SeqCst),
            0,
            "released while a job ran"
        );
        releaser.all_jobs_ended();
        let idle = Instant::now();
        assert!(released_within(Duration::from_secs(5), 1), "never released");
        assert!(idle.elapsed() >= wait, "released before the wait");
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            RELEASED.load(Ordering::SeqCst),
            1,
            "released once per idle spell"
        );
        releaser.job_started();
        releaser.all_jobs_ended();
        assert!(
            released_within(Duration::from_secs(5), 2),
            "not after the next spell"
        );
    }
}
