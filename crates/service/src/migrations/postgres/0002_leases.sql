-- Leases, the queue's clock, live progress and the worker registry (as sqlite/0002), plus
-- what SQLite keeps in files: arena and result bytes in 1 MiB chunks shared by every host,
-- and a notification on every state change (LISTEN egsolve: payload "<state> <job id>").
ALTER TABLE jobs ADD COLUMN queued_at BIGINT;
ALTER TABLE jobs ADD COLUMN worker TEXT;
ALTER TABLE jobs ADD COLUMN lease_expires_at BIGINT;
ALTER TABLE jobs ADD COLUMN progress_round BIGINT;
ALTER TABLE jobs ADD COLUMN progress_frontier BIGINT;
ALTER TABLE jobs ADD COLUMN progress_lifts BIGINT;
UPDATE jobs SET queued_at = created_at;

CREATE INDEX jobs_queue_order ON jobs (state, priority DESC, seq);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_at);

CREATE TABLE workers (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    api          BIGINT NOT NULL,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    gpus         BIGINT NOT NULL,
    slots        TEXT NOT NULL
);

-- The bytes of an arena (as received) and of a result file, in order of seq. They are
-- written in the transaction that makes the arena or result visible, so a row in arenas or
-- results with chunks is always complete.
CREATE TABLE arena_chunks (
    hash  TEXT NOT NULL REFERENCES arenas(hash) ON DELETE CASCADE,
    seq   INTEGER NOT NULL,
    data  BYTEA NOT NULL,
    PRIMARY KEY (hash, seq)
);

CREATE TABLE result_chunks (
    key   TEXT NOT NULL REFERENCES results(key) ON DELETE CASCADE,
    seq   INTEGER NOT NULL,
    data  BYTEA NOT NULL,
    PRIMARY KEY (key, seq)
);

CREATE FUNCTION egsolve_notify_state() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('egsolve', NEW.state || ' ' || NEW.id);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER jobs_state_inserted AFTER INSERT ON jobs
    FOR EACH ROW EXECUTE FUNCTION egsolve_notify_state();
CREATE TRIGGER jobs_state_changed AFTER UPDATE OF state ON jobs
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION egsolve_notify_state();
