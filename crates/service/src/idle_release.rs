//! The solves' freed memory goes back to the kernel once this process's workers have had
//! no job for a while (`egsolve_alloc::release_free_memory`, [`RELEASE_AFTER_IDLE`] unless
//! `EGSOLVE_RELEASE_IDLE_MS` says otherwise), not the moment each job ends.
//!
//! Why: the allocator keeps freed blocks so that the next solve reuses pages already
//! mapped (see `egsolve_alloc`). Handing them back after every job made each job of a
//! stream sent one after another fault its vectors in again. Measured on the H200 host
//! (session 65, warm servers, default options, jobs 0.7 s apart, the two ways alternated,
//! 18 jobs each): BRP median 12.25 → 10.75 ms, Hesselink 7.50 → 6.83, Onebit 17.38 →
//! 15.89; SWP (0.2 M vertices) 3.28 → 3.69. A server that stays idle still gets its
//! memory back, a moment later.
//!
//! The running jobs are counted under the same lock as the idle time, and the memory is
//! handed back under it, so nothing is released while a job runs (a job that starts
//! meanwhile waits for the release to end). `EGSOLVE_RELEASE_IDLE_MS=0` releases when the
//! last running job ends, as before.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long the workers stay idle before the freed memory is handed back, by default.
pub(crate) const RELEASE_AFTER_IDLE: Duration = Duration::from_secs(2);

/// The wait in force: `EGSOLVE_RELEASE_IDLE_MS` (read once per process), else
/// [`RELEASE_AFTER_IDLE`] (also, with a warning, for a value that is not a number of
/// milliseconds).
pub(crate) fn release_after_idle() -> Duration {
    static WAIT: OnceLock<Duration> = OnceLock::new();
    *WAIT.get_or_init(|| match std::env::var("EGSOLVE_RELEASE_IDLE_MS") {
        Err(_) => RELEASE_AFTER_IDLE,
        Ok(v) => v
            .trim()
            .parse()
            .map(Duration::from_millis)
            .unwrap_or_else(|_| {
                tracing::warn!(
                    "EGSOLVE_RELEASE_IDLE_MS={v:?} is not a number of milliseconds; \
                 using {RELEASE_AFTER_IDLE:?}"
                );
                RELEASE_AFTER_IDLE
            }),
    })
}

/// The process's releaser, started with the first job.
static PROCESS: OnceLock<Arc<Releaser>> = OnceLock::new();

fn process() -> &'static Releaser {
    PROCESS
        .get_or_init(|| Releaser::start(release_after_idle(), egsolve_alloc::release_free_memory))
}

/// A worker starts a job: nothing is released until every running job has ended.
pub(crate) fn job_started() {
    process().job_started();
}

/// A worker's job ended: after the last running one, the freed memory goes back once the
/// workers have stayed idle for the wait.
pub(crate) fn job_ended() {
    process().job_ended();
}

/// Hands freed memory back (`release`) after `wait` without a running job.
struct Releaser {
    state: Mutex<Idle>,
    wake: Condvar,
    wait: Duration,
    release: fn(),
    /// No thread waits (a zero wait, or none could be started): released when the last
    /// running job ends.
    at_once: bool,
}

/// What the releasing thread looks at.
#[derive(Default)]
struct Idle {
    running: usize,
    /// When the last running job ended; `None` while one runs, or once released.
    since: Option<Instant>,
}

impl Releaser {
    /// The releaser and, for a wait above zero, its thread.
    fn start(wait: Duration, release: fn()) -> Arc<Releaser> {
        let make = |at_once| {
            Arc::new(Releaser {
                state: Mutex::new(Idle::default()),
                wake: Condvar::new(),
                wait,
                release,
                at_once,
            })
        };
        if wait.is_zero() {
            return make(true);
        }
        let shared = make(false);
        let runs = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("egsolve-release".into())
            .spawn(move || runs.run());
        match spawned {
            Ok(_) => shared,
            Err(e) => {
                tracing::warn!("no thread to hand freed memory back later ({e}); at once instead");
                make(true)
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Idle> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn job_started(&self) {
        let mut idle = self.lock();
        idle.running += 1;
        idle.since = None;
    }

    fn job_ended(&self) {
        let mut idle = self.lock();
        idle.running = idle.running.saturating_sub(1);
        if idle.running > 0 {
            return;
        }
        if self.at_once {
            (self.release)();
        } else {
            idle.since = Some(Instant::now());
            self.wake.notify_one();
        }
    }

    /// The thread: waits for an idle spell of `wait`, releases, and again, for ever.
    fn run(&self) {
        let mut idle = self.lock();
        loop {
            let due = match idle.since {
                Some(since) if idle.running == 0 => since + self.wait,
                _ => {
                    idle = self.wake.wait(idle).unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
            };
            let left = due.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                idle = (self.wake.wait_timeout(idle, left))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                continue;
            }
            idle.since = None;
            // Under the lock: a job that starts meanwhile waits for the release to end.
            (self.release)();
            tracing::debug!(
                "freed memory handed back after {:?} without a job",
                self.wait
            );
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

    fn released() -> usize {
        RELEASED.load(Ordering::SeqCst)
    }

    fn released_within(limit: Duration, count: usize) -> bool {
        let until = Instant::now() + limit;
        while released() < count && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        released() >= count
    }

    /// Nothing is released while jobs follow one another closer than the wait, nor while
    /// any job runs (two workers, one ending while the other runs); once after an idle
    /// spell of at least the wait; again after the next spell.
    #[test]
    fn memory_goes_back_after_an_idle_spell_only() {
        let wait = Duration::from_millis(600);
        let releaser = Releaser::start(wait, count_release);
        assert!(!releaser.at_once);
        for _ in 0..10 {
            releaser.job_started();
            std::thread::sleep(Duration::from_millis(10));
            releaser.job_ended();
            std::thread::sleep(Duration::from_millis(30));
        }
        // Two workers: the first one's job ends while the second one's runs.
        releaser.job_started();
        releaser.job_started();
        releaser.job_ended();
        std::thread::sleep(wait + Duration::from_millis(300));
        assert_eq!(released(), 0, "released between jobs or while one ran");
        let idle = Instant::now();
        releaser.job_ended();
        assert!(
            released_within(Duration::from_secs(10), 1),
            "never released"
        );
        assert!(idle.elapsed() >= wait, "released before the wait");
        std::thread::sleep(wait + Duration::from_millis(300));
        assert_eq!(released(), 1, "released once per idle spell");
        releaser.job_started();
        releaser.job_ended();
        assert!(
            released_within(Duration::from_secs(10), 2),
            "not after the next spell"
        );
    }
}
