//! Where a solve spent its time: seconds per phase, filled in by the backends and reported
//! in the JSON summary (`summary.phases`), the service's job views and the benchmarks.
//!
//! Phases that a backend does not run stay 0 (and the GPU's are left out of the JSON on
//! other backends). The evaluation parts add up over every evaluation of the accelerated
//! driver; `evaluations` counts them.

use std::time::Instant;

use serde::{Deserialize, Serialize};

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Seconds per phase of one solve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phases {
    /// Lifting (every phase of the engine; device lifting includes its value copies).
    pub lifting: f64,
    /// Evaluations of player 1's strategies (the accelerated driver), all parts.
    pub evaluation: f64,
    /// … of which choosing σ1 and building the one-player graph `G_σ1`.
    pub graph: f64,
    /// … of which strongly connected components.
    pub components: f64,
    /// … of which the cycle-sign test and the reachability to nonnegative cycles.
    pub cycle_test: f64,
    /// … of which player 1's attractor to ⊤.
    pub attractor: f64,
    /// … of which the Bellman–Ford relaxation from above.
    pub bellman_ford: f64,
    /// Player 0's strategy.
    pub strategy0: f64,
    /// Player 1's strategy (from the evaluations, or the dual game).
    pub strategy1: f64,
    /// GPU: creating or finding the device's context and stream.
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_context: f64,
    /// GPU: compiling (NVRTC) or loading (cache) and loading the kernels' modules.
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_kernels: f64,
    /// GPU: laying the game out and copying it to the device.
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_upload: f64,
    /// GPU: copying the answer back.
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_download: f64,
}

impl Phases {
    /// Logs every phase at debug level (`EGSOLVE_LOG=debug`).
    pub fn log(&self, backend: &str) {
        tracing::debug!(
            backend,
            lifting = self.lifting,
            evaluation = self.evaluation,
            graph = self.graph,
            components = self.components,
            cycle_test = self.cycle_test,
            attractor = self.attractor,
            bellman_ford = self.bellman_ford,
            strategy0 = self.strategy0,
            strategy1 = self.strategy1,
            gpu_context = self.gpu_context,
            gpu_kernels = self.gpu_kernels,
            gpu_upload = self.gpu_upload,
            gpu_download = self.gpu_download,
            "solve phases (seconds)"
        );
    }

    /// The phases and their seconds, in order, for tables.
    pub fn rows(&self) -> [(&'static str, f64); 13] {
        [
            ("lifting", self.lifting),
            ("evaluation", self.evaluation),
            ("  graph", self.graph),
            ("  components", self.components),
            ("  cycle_test", self.cycle_test),
            ("  attractor", self.attractor),
            ("  bellman_ford", self.bellman_ford),
            ("strategy0", self.strategy0),
            ("strategy1", self.strategy1),
            ("gpu_context", self.gpu_context),
            ("gpu_kernels", self.gpu_kernels),
            ("gpu_upload", self.gpu_upload),
            ("gpu_download", self.gpu_download),
        ]
    }
}

/// A stopwatch that adds the time since its last reading to a phase.
#[derive(Debug)]
pub struct Stopwatch(Instant);

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Stopwatch {
        Stopwatch(Instant::now())
    }

    /// Adds the seconds since the last call (or the start) to `phase`.
    pub fn lap(&mut self, phase: &mut f64) {
        let now = Instant::now();
        *phase += now.duration_since(self.0).as_secs_f64();
        self.0 = now;
    }
}
