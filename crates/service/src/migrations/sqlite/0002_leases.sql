-- Leases (a claim holds a job for a while, renewed by its worker's heartbeat), the queue's
-- own clock, live progress and the worker registry. Times are milliseconds since the epoch.
ALTER TABLE jobs ADD COLUMN queued_at INTEGER;          -- when it last entered the queue
ALTER TABLE jobs ADD COLUMN worker TEXT;                -- the worker holding (or that held) it
ALTER TABLE jobs ADD COLUMN lease_expires_at INTEGER;   -- while running: the claim's end
ALTER TABLE jobs ADD COLUMN progress_round INTEGER;     -- while running: the last heartbeat's
ALTER TABLE jobs ADD COLUMN progress_frontier INTEGER;
ALTER TABLE jobs ADD COLUMN progress_lifts INTEGER;
UPDATE jobs SET queued_at = created_at;

CREATE INDEX jobs_queue_order ON jobs (state, priority DESC, seq);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_at);

CREATE TABLE workers (
    id           TEXT PRIMARY KEY,                -- host-pid-random, also jobs.worker
    host         TEXT NOT NULL,
    api          INTEGER NOT NULL,                -- 1 when the process also serves HTTP
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    gpus         INTEGER NOT NULL,                -- GPUs it serves jobs on
    slots        TEXT NOT NULL                    -- JSON: GPUs, CPU workers and threads
);
