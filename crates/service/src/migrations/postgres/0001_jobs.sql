-- Jobs, stored arenas and finished results (the SQLite schema of sqlite/0001_jobs.sql in
-- PostgreSQL types). Times are milliseconds since the Unix epoch.
CREATE TABLE arenas (
    hash        TEXT PRIMARY KEY,          -- SHA-256 of the decompressed bytes, hex
    bytes       BIGINT NOT NULL,           -- decompressed size
    created_at  BIGINT NOT NULL
);

CREATE TABLE results (
    key         TEXT PRIMARY KEY,          -- SHA-256 of arena hash + input format, hex
    summary     TEXT NOT NULL,             -- JSON ResultSummary
    created_at  BIGINT NOT NULL
);

CREATE TABLE jobs (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- FIFO order, list cursor
    id              TEXT NOT NULL UNIQUE,                 -- UUIDv7
    owner           TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('queued','running','succeeded','failed','cancelled')),
    priority        BIGINT NOT NULL,
    backend         TEXT NOT NULL,                        -- requested: auto|gpu|cpu|reference
    time_limit_secs BIGINT NOT NULL,
    format          TEXT NOT NULL,                        -- input format: auto|mpg|gm|json
    return_kind     TEXT NOT NULL,                        -- credits|strategies
    arena_hash      TEXT NOT NULL REFERENCES arenas(hash),
    created_at      BIGINT NOT NULL,
    started_at      BIGINT,
    finished_at     BIGINT,
    attempts        BIGINT NOT NULL DEFAULT 0,            -- times it was started
    completions     BIGINT NOT NULL DEFAULT 0,            -- times it reached succeeded (must stay <= 1)
    backend_used    TEXT,
    device          TEXT,
    vertices        BIGINT,
    edges           BIGINT,
    bound           TEXT,                                 -- M as decimal text (u64)
    result_key      TEXT REFERENCES results(key),
    reused          BIGINT NOT NULL DEFAULT 0,
    error_type      TEXT,
    error_message   TEXT,
    error_line      BIGINT,
    error_column    BIGINT,
    upload_ms       DOUBLE PRECISION,
    parse_ms        DOUBLE PRECISION,
    solve_ms        DOUBLE PRECISION
);

CREATE INDEX jobs_by_owner ON jobs (owner, seq);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE INDEX jobs_by_result ON jobs (result_key);
CREATE INDEX jobs_by_arena ON jobs (arena_hash);
