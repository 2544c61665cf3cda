//! `GET /v1/usage`: what the server is doing — the queue depth, every GPU (busy or idle,
//! memory) and the CPU pool — and how busy each was over the last hour, minute by minute.
//! It names no job and no owner, so it needs no token (like `/metrics`).
//!
//! The hour comes from a small in-memory history: every [`STEP`] the sampler reads the
//! scheduler's slots (their busy seconds since start-up only grow) and keeps the last
//! [`WINDOW`]; a request adds a live reading, so the current minute shows too. The history
//! starts empty at each start of the server.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;
use crate::scheduler::{SchedulerHandle, SlotView};
use crate::slots::{GpuDevice, SlotKind};
use crate::store::now_ms;
use crate::views::{gpu_slot_views, rfc3339};

/// Time between samples (one point of the plot).
pub const STEP: Duration = Duration::from_secs(60);
/// How far back the history goes.
pub const WINDOW: Duration = Duration::from_secs(3600);
/// Intervals shorter than this are not shown (their busy fraction would be noise).
const SHORTEST: Duration = Duration::from_secs(1);

/// One reading of the slots.
#[derive(Debug, Clone)]
pub struct Sample {
    /// When (this process's clock).
    pub at: Instant,
    /// When (milliseconds since the epoch, for display).
    pub wall_ms: i64,
    /// Each slot and its busy seconds since start-up, in the scheduler's order.
    pub slots: Vec<(SlotKind, f64)>,
    /// Jobs waiting.
    pub queue_depth: usize,
}

impl Sample {
    /// A reading of `slots` now.
    pub fn now(slots: &[SlotView], queue_depth: usize) -> Sample {
        Sample {
            at: Instant::now(),
            wall_ms: now_ms(),
            slots: slots.iter().map(|s| (s.kind, s.busy_seconds)).collect(),
            queue_depth,
        }
    }
}

/// The last hour of samples, oldest first.
#[derive(Debug, Default)]
pub struct UsageHistory {
    /// A std mutex: held to push or copy, never across an await.
    samples: Mutex<VecDeque<Sample>>,
}

impl UsageHistory {
    /// Adds a sample and forgets those older than the window.
    pub fn record(&self, sample: Sample) {
        let mut samples = self.samples.lock().expect("usage lock");
        samples.push_back(sample);
        let keep = (WINDOW.as_secs() / STEP.as_secs()) as usize + 1;
        while samples.len() > keep {
            samples.pop_front();
        }
    }

    /// A copy of the samples, oldest first.
    pub fn samples(&self) -> Vec<Sample> {
        self.samples
            .lock()
            .expect("usage lock")
            .iter()
            .cloned()
            .collect()
    }
}

/// Samples the scheduler at start-up and then every [`STEP`], until aborted.
pub async fn sample_forever(scheduler: SchedulerHandle, history: Arc<UsageHistory>) {
    let mut tick = tokio::time::interval(STEP);
    loop {
        tick.tick().await;
        let (slots, depth) = scheduler.devices().await;
        // No slots: the scheduler has stopped (shutting down).
        if !slots.is_empty() {
            history.record(Sample::now(&slots, depth));
        }
    }
}

/// `GET /v1/usage`.
pub async fn usage(State(state): State<AppState>) -> Result<Response, ApiError> {
    let (slots, depth) = state.scheduler.devices().await;
    let mut samples = state.usage.samples();
    samples.push(Sample::now(&slots, depth));
    Ok(axum::Json(usage_view(&state.scheduler.gpus, &slots, &samples)).into_response())
}

/// The view: the current slots (the last sample is the live one) and one point per interval
/// between consecutive samples with each GPU's busy fraction and the CPU pool's.
pub fn usage_view(gpus: &[GpuDevice], live: &[SlotView], samples: &[Sample]) -> Value {
    let gpu_views = gpu_slot_views(gpus, live, |_| json!({}));
    let cpu = live.iter().filter(|s| matches!(s.kind, SlotKind::Cpu(_)));
    let workers = cpu.clone().count();
    let busy = cpu.filter(|s| s.job.is_some()).count();
    let mut series = Vec::new();
    let mut previous: Option<&Sample> = None;
    for sample in samples {
        let Some(start) = previous else {
            previous = Some(sample);
            continue;
        };
        let seconds = sample.at.saturating_duration_since(start.at);
        if seconds < SHORTEST || sample.slots.len() != start.slots.len() {
            continue; // measured again from `start` at the next sample
        }
        series.push(interval(start, sample, seconds.as_secs_f64()));
        previous = Some(sample);
    }
    json!({
        "window_seconds": WINDOW.as_secs(),
        "step_seconds": STEP.as_secs(),
        "queue_depth": samples.last().map_or(0, |s| s.queue_depth),
        "gpus": gpu_views,
        "cpu": {"workers": workers, "busy": busy},
        "series": series,
    })
}

/// Busy fractions between two samples of the same slots.
fn interval(start: &Sample, end: &Sample, seconds: f64) -> Value {
    let busy =
        |(a, b): (&(SlotKind, f64), &(SlotKind, f64))| ((b.1 - a.1) / seconds).clamp(0.0, 1.0);
    let pairs = start.slots.iter().zip(&end.slots);
    let gpus: Vec<f64> = pairs
        .clone()
        .filter(|(a, _)| matches!(a.0, SlotKind::Gpu(_)))
        .map(busy)
        .map(round3)
        .collect();
    let cpu: Vec<f64> = pairs
        .filter(|(a, _)| matches!(a.0, SlotKind::Cpu(_)))
        .map(busy)
        .collect();
    let cpu_mean = if cpu.is_empty() {
        0.0
    } else {
        cpu.iter().sum::<f64>() / cpu.len() as f64
    };
    json!({
        "end": rfc3339(end.wall_ms),
        "seconds": round3(seconds),
        "gpus": gpus,
        "cpu": round3(cpu_mean),
        "queue_depth": end.queue_depth,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobId;

    fn sample(at: Instant, busy: &[(SlotKind, f64)], depth: usize) -> Sample {
        Sample {
            at,
            wall_ms: 0,
            slots: busy.to_vec(),
            queue_depth: depth,
        }
    }

    #[test]
    fn busy_fractions_come_from_busy_seconds_between_samples() {
        let gpus = vec![GpuDevice {
            ordinal: 3,
            name: "test gpu".into(),
            memory_bytes: 1 << 30,
        }];
        let (g, c0, c1) = (SlotKind::Gpu(0), SlotKind::Cpu(0), SlotKind::Cpu(1));
        let t0 = Instant::now();
        let samples = [
            sample(t0, &[(g, 0.0), (c0, 0.0), (c1, 0.0)], 0),
            sample(t0 + STEP, &[(g, 30.0), (c0, 60.0), (c1, 0.0)], 2),
            // Too short to show: measured from the previous sample at the next one.
            sample(
                t0 + STEP + Duration::from_millis(10),
                &[(g, 30.0), (c0, 60.0), (c1, 0.0)],
                2,
            ),
            sample(t0 + 2 * STEP, &[(g, 90.0), (c0, 120.0), (c1, 60.0)], 1),
        ];
        let live = [
            SlotView {
                kind: g,
                job: Some(JobId::now_v7()),
                busy_seconds: 90.0,
            },
            SlotView {
                kind: c0,
                job: None,
                busy_seconds: 120.0,
            },
            SlotView {
                kind: c1,
                job: None,
                busy_seconds: 60.0,
            },
        ];
        let view = usage_view(&gpus, &live, &samples);
        assert_eq!(view["gpus"][0]["ordinal"], 3);
        assert_eq!(view["gpus"][0]["busy"], true);
        assert_eq!(view["cpu"], json!({"workers": 2, "busy": 0}));
        assert_eq!(view["queue_depth"], 1);
        let series = view["series"].as_array().unwrap();
        assert_eq!(series.len(), 2, "{series:?}");
        assert_eq!(series[0]["gpus"], json!([0.5]));
        assert_eq!(series[0]["cpu"], 0.5);
        assert_eq!(series[0]["queue_depth"], 2);
        assert_eq!(series[1]["gpus"], json!([1.0]));
        assert_eq!(series[1]["cpu"], 1.0);
    }

    #[test]
    fn the_history_keeps_one_window() {
        let history = UsageHistory::default();
        let t0 = Instant::now();
        for i in 0..200u32 {
            history.record(sample(t0 + STEP * i, &[(SlotKind::Cpu(0), 0.0)], 0));
        }
        let samples = history.samples();
        assert_eq!(samples.len(), 61);
        assert_eq!(samples.last().unwrap().at, t0 + STEP * 199);
    }
}
