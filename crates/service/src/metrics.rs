//! Prometheus metrics, hand-written text exposition (format 0.0.4): queue depth and jobs by
//! state (read from the store at scrape time: every host's), and this process's completions,
//! refused results, lost leases, refusals for want of disk space (by stage), a duration
//! histogram per phase
//! (`queue_wait`, `upload`, `parse`, `solve`) and backend, and GPU busy seconds per device.
//!
//! Counters are atomics; the histogram map sits behind a std mutex held only for an update or
//! a scrape (never across an await).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::job::JobState;

/// Upper bounds of the duration buckets, seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0, 300.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (bound, count) in BUCKETS.iter().zip(self.counts.iter_mut()) {
            if seconds <= *bound {
                *count += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }
}

/// The registry (this process's figures; job counts come from the store at scrape time).
#[derive(Debug, Default)]
pub struct Metrics {
    /// Jobs that reached `succeeded` through a solve here.
    completions: AtomicU64,
    /// Solves here whose result was not recorded: cancelled meanwhile, or refused by the
    /// fence because the lease had been taken over.
    refused_results: AtomicU64,
    /// Solves here stopped because the job was no longer this process's (cancelled on
    /// another host, or its lease taken over).
    leases_lost: AtomicU64,
    /// Uploads and results refused for want of disk space, by [`StorageStage`].
    insufficient_storage: [AtomicU64; 4],
    /// Histograms by (phase, backend).
    phases: Mutex<BTreeMap<(String, String), Histogram>>,
    /// Busy seconds by GPU ordinal.
    gpu_busy: Mutex<BTreeMap<u32, f64>>,
}

/// Where a want of disk space was met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageStage {
    /// Refused before any byte was stored: the declared size does not fit.
    Admission,
    /// The disk filled while an upload (or a copy of a file named by reference) was stored.
    Upload,
    /// A job's result could not be written.
    Result,
    /// A result written by reference (`POST /v1/jobs/{id}/result/export`) did not fit.
    Export,
}

impl StorageStage {
    const ALL: [StorageStage; 4] = [
        StorageStage::Admission,
        StorageStage::Upload,
        StorageStage::Result,
        StorageStage::Export,
    ];

    /// The metric's `stage` label.
    pub fn name(self) -> &'static str {
        match self {
            StorageStage::Admission => "admission",
            StorageStage::Upload => "upload",
            StorageStage::Result => "result",
            StorageStage::Export => "export",
        }
    }
}

impl Metrics {
    /// Counts a refusal for want of disk space.
    pub fn count_insufficient_storage(&self, stage: StorageStage) {
        self.insufficient_storage[stage as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a solved result that was not recorded.
    pub fn count_refused_result(&self) {
        self.refused_results.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts solves stopped because their jobs were no longer this process's.
    pub fn count_leases_lost(&self, n: u64) {
        self.leases_lost.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts a solve that completed.
    pub fn count_completion(&self) {
        self.completions.fetch_add(1, Ordering::Relaxed);
    }

    /// Records the duration of a phase.
    pub fn observe_phase(&self, phase: &str, backend: &str, seconds: f64) {
        let mut phases = self.phases.lock().expect("metrics lock");
        phases
            .entry((phase.to_string(), backend.to_string()))
            .or_default()
            .observe(seconds);
    }

    /// Records a queue wait.
    pub fn observe_queue_wait(&self, waited: Duration) {
        self.observe_phase("queue_wait", "any", waited.as_secs_f64());
    }

    /// Adds busy time to a GPU.
    pub fn add_gpu_busy(&self, ordinal: u32, seconds: f64) {
        *self
            .gpu_busy
            .lock()
            .expect("metrics lock")
            .entry(ordinal)
            .or_default() += seconds;
    }

    /// The exposition text, with job counts per state read by the caller from the store
    /// (every host's jobs); the other figures are this process's.
    pub fn render(&self, jobs_by_state: &[(JobState, u64)]) -> String {
        let mut out = String::new();
        let queued = jobs_by_state
            .iter()
            .find(|(s, _)| *s == JobState::Queued)
            .map_or(0, |(_, n)| *n);
        let _ = writeln!(out, "# HELP egsolve_queue_depth Jobs waiting for a worker.");
        let _ = writeln!(out, "# TYPE egsolve_queue_depth gauge");
        let _ = writeln!(out, "egsolve_queue_depth {queued}");
        let _ = writeln!(out, "# HELP egsolve_jobs Jobs in the store by state.");
        let _ = writeln!(out, "# TYPE egsolve_jobs gauge");
        for (state, n) in jobs_by_state {
            let _ = writeln!(out, "egsolve_jobs{{state=\"{}\"}} {n}", state.name());
        }
        let _ = writeln!(
            out,
            "# HELP egsolve_solves_completed_total Solves run to completion."
        );
        let _ = writeln!(out, "# TYPE egsolve_solves_completed_total counter");
        let completions = self.completions.load(Ordering::Relaxed);
        let _ = writeln!(out, "egsolve_solves_completed_total {completions}");
        let _ = writeln!(
            out,
            "# HELP egsolve_results_refused_total Solves whose result was not recorded (cancelled meanwhile, or a late attempt refused by the fence)."
        );
        let _ = writeln!(out, "# TYPE egsolve_results_refused_total counter");
        let refused = self.refused_results.load(Ordering::Relaxed);
        let _ = writeln!(out, "egsolve_results_refused_total {refused}");
        let _ = writeln!(
            out,
            "# HELP egsolve_leases_lost_total Solves stopped because their job was cancelled elsewhere or taken over after the lease expired."
        );
        let _ = writeln!(out, "# TYPE egsolve_leases_lost_total counter");
        let lost = self.leases_lost.load(Ordering::Relaxed);
        let _ = writeln!(out, "egsolve_leases_lost_total {lost}");
        let _ = writeln!(
            out,
            "# HELP egsolve_insufficient_storage_total Uploads refused (before any byte was stored, or when the disk filled), results not written and results not written by reference, for want of disk space."
        );
        let _ = writeln!(out, "# TYPE egsolve_insufficient_storage_total counter");
        for stage in StorageStage::ALL {
            let n = self.insufficient_storage[stage as usize].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "egsolve_insufficient_storage_total{{stage=\"{}\"}} {n}",
                stage.name()
            );
        }
        let _ = writeln!(
            out,
            "# HELP egsolve_phase_duration_seconds Time per job phase (queue_wait, upload, parse, solve)."
        );
        let _ = writeln!(out, "# TYPE egsolve_phase_duration_seconds histogram");
        let phases = self.phases.lock().expect("metrics lock").clone();
        for ((phase, backend), h) in &phases {
            let labels = format!("phase=\"{phase}\",backend=\"{backend}\"");
            for (bound, count) in BUCKETS.iter().zip(h.counts.iter()) {
                let _ = writeln!(
                    out,
                    "egsolve_phase_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "egsolve_phase_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "egsolve_phase_duration_seconds_sum{{{labels}}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "egsolve_phase_duration_seconds_count{{{labels}}} {}",
                h.count
            );
        }
        let _ = writeln!(
            out,
            "# HELP egsolve_gpu_busy_seconds_total Seconds each GPU ran jobs."
        );
        let _ = writeln!(out, "# TYPE egsolve_gpu_busy_seconds_total counter");
        for (ordinal, seconds) in self.gpu_busy.lock().expect("metrics lock").iter() {
            let _ = writeln!(
                out,
                "egsolve_gpu_busy_seconds_total{{gpu=\"{ordinal}\"}} {seconds}"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative() {
        let metrics = Metrics::default();
        metrics.observe_phase("solve", "reference", 0.003);
        metrics.observe_phase("solve", "reference", 2.0);
        let text = metrics.render(&[(JobState::Queued, 3)]);
        assert!(text.contains("egsolve_jobs{state=\"queued\"} 3"), "{text}");
        let bucket = |le: &str| {
            let prefix = format!(
                "egsolve_phase_duration_seconds_bucket{{phase=\"solve\",backend=\"reference\",le=\"{le}\"}} "
            );
            text.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .unwrap()
                .to_string()
        };
        assert_eq!(bucket("0.001"), "0");
        assert_eq!(bucket("0.005"), "1");
        assert_eq!(bucket("5"), "2");
        assert_eq!(bucket("+Inf"), "2");
    }
}
