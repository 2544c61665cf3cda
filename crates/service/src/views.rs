//! JSON views of jobs and devices, exactly as `openapi.yaml` describes them. Handlers build
//! these from store records plus the scheduler's live status; nothing here does I/O.

use serde_json::{Value, json};

use super::job::{JobRecord, JobState, ResultSummary};
use super::result_file::ResultFormat;
use super::scheduler::{LiveStatus, SlotView};
use super::slots::{GpuDevice, SlotKind};
use super::store::workers::WorkerRecord;

/// RFC 3339 UTC time (millisecond precision) of milliseconds since the epoch.
pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A job as `GET /v1/jobs/{id}` shows it.
pub fn job_view(job: &JobRecord, live: LiveStatus, summary: Option<&ResultSummary>) -> Value {
    let id = job.id.to_string();
    json!({
        "id": id,
        "owner": job.owner,
        "state": job.state.name(),
        "options": {
            "backend": job.options.backend.name(),
            "priority": job.options.priority,
            "time_limit": job.options.time_limit_secs,
            "format": job.options.format.name(),
            "return": job.options.return_kind.name(),
            "credits": job.options.credits,
        },
        "created_at": rfc3339(job.created_at),
        "started_at": job.started_at.map(rfc3339),
        "finished_at": job.finished_at.map(rfc3339),
        "attempts": job.attempts,
        "queue_position": if job.state == JobState::Queued { live.queue_position } else { None },
        "backend": job.backend_used,
        "device": job.device,
        "worker": job.worker,
        "arena": {
            "sha256": job.arena_hash,
            "vertices": job.arena.map(|a| a.vertices),
            "edges": job.arena.map(|a| a.edges),
            "bound": job.arena.map(|a| a.bound),
        },
        "progress": if job.state == JobState::Running {
            live.progress.map(|p| json!({"round": p.round, "frontier": p.frontier, "lifts": p.lifts}))
        } else { None },
        "durations_ms": {
            "upload": job.upload_ms,
            "parse": job.parse_ms,
            "solve": job.solve_ms,
        },
        "reused": job.reused,
        "batch": job.batch.as_ref().map(|b| json!({"id": b.batch.to_string(), "name": b.name})),
        "failure": job.failure.as_ref().map(|f| serde_json::to_value(f).expect("json")),
        "summary": summary.map(|s| serde_json::to_value(s).expect("json")),
        "result": (job.state == JobState::Succeeded).then(|| format!("/v1/jobs/{id}/result")),
        "result_formats": summary
            .filter(|_| job.state == JobState::Succeeded)
            .map(|s| ResultFormat::available(s).map(ResultFormat::name).collect::<Vec<_>>()),
    })
}

/// A job as `GET /v1/jobs` lists it: the view of [`job_view`] without the summary block (a
/// page of 500 would carry 500 of them), but with the renderings its answer has.
pub fn listed_job_view(
    job: &JobRecord,
    live: LiveStatus,
    summary: Option<&ResultSummary>,
) -> Value {
    let mut view = job_view(job, live, summary);
    view["summary"] = Value::Null;
    view
}

/// Each GPU slot of `slots`: its device's ordinal, name and memory (where known) and
/// whether it is busy, with the fields of `more` (an object) of the slot.
pub(crate) fn gpu_slot_views(
    gpus: &[GpuDevice],
    slots: &[SlotView],
    more: impl Fn(&SlotView) -> Value,
) -> Vec<Value> {
    let view = |gpu: &GpuDevice, s: &SlotView| {
        let mut view = json!({
            "ordinal": gpu.ordinal,
            "name": gpu.name,
            "memory_bytes": (gpu.memory_bytes != u64::MAX).then_some(gpu.memory_bytes),
            "busy": s.job.is_some(),
        });
        if let (Some(fields), Value::Object(more)) = (view.as_object_mut(), more(s)) {
            fields.extend(more);
        }
        view
    };
    slots
        .iter()
        .filter_map(|s| match s.kind {
            SlotKind::Gpu(i) => Some(view(&gpus[i], s)),
            SlotKind::Cpu(_) => None,
        })
        .collect()
}

/// The devices listing.
pub fn devices_view(
    gpus: &[GpuDevice],
    slots: &[SlotView],
    queue_depth: usize,
    cpu_threads: usize,
) -> Value {
    let gpu_views = gpu_slot_views(
        gpus,
        slots,
        |s| json!({"job": s.job.map(|j| j.to_string()), "busy_seconds": s.busy_seconds}),
    );
    let cpu_slots: Vec<&SlotView> = slots
        .iter()
        .filter(|s| matches!(s.kind, SlotKind::Cpu(_)))
        .collect();
    json!({
        "gpus": gpu_views,
        "cpu": {
            "workers": cpu_slots.len(),
            "threads": cpu_threads,
            "busy": cpu_slots.iter().filter(|s| s.job.is_some()).count(),
            "jobs": cpu_slots.iter().filter_map(|s| s.job.map(|j| j.to_string())).collect::<Vec<_>>(),
        },
        "queue_depth": queue_depth,
    })
}

/// Every live worker process of the store's cluster, with its GPUs and running jobs.
pub fn workers_view(workers: &[WorkerRecord], queue_depth: u64, store: &str) -> Value {
    let views: Vec<Value> = workers
        .iter()
        .map(|w| {
            json!({
                "id": w.id,
                "host": w.host,
                "api": w.api,
                "started_at": rfc3339(w.started_at),
                "heartbeat_at": rfc3339(w.heartbeat_at),
                "version": w.slots.version,
                "gpus": w.slots.gpus.iter().map(|g| json!({
                    "ordinal": g.ordinal,
                    "name": g.name,
                    "memory_bytes": g.memory_bytes,
                })).collect::<Vec<_>>(),
                "cpu": {"workers": w.slots.cpu_workers, "threads": w.slots.cpu_threads},
                "jobs": w.jobs.iter().map(|(id, device)| json!({
                    "id": id.to_string(),
                    "device": device,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"store": store, "workers": views, "queue_depth": queue_depth})
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_795_305_600_000), "2026-11-22T00:00:00.000Z");
    }
}
