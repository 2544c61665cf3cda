-- Jobs, stored arenas and finished results. Times are milliseconds since the Unix epoch.
CREATE TABLE arenas (
    hash        TEXT PRIMARY KEY,          -- SHA-256 of the decompressed bytes, hex
    bytes       INTEGER NOT NULL,          -- decompressed size
    created_at  INTEGER NOT NULL
);

CREATE TABLE results (
    key         TEXT PRIMARY KEY,          -- SHA-256 of arena hash + input format, hex
    summary     TEXT NOT NULL,             -- JSON ResultSummary
    created_at  INTEGER NOT NULL
);

CREATE TABLE jobs (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,  -- FIFO order and list cursor
    id              TEXT NOT NULL UNIQUE,               -- UUIDv7
    owner           TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('queued','running','succeeded','failed','cancelled')),
    priority        INTEGER NOT NULL,
    backend         TEXT NOT NULL,                      -- requested: auto|gpu|cpu|reference
    time_limit_secs INTEGER NOT NULL,
    format          TEXT NOT NULL,                      -- input format: auto|mpg|gm
    return_kind     TEXT NOT NULL,                      -- credits|strategies
    arena_hash      TEXT NOT NULL REFERENCES arenas(hash),
    created_at      INTEGER NOT NULL,
    started_at      INTEGER,
    finished_at     INTEGER,
    attempts        INTEGER NOT NULL DEFAULT 0,         -- times it was started
    completions     INTEGER NOT NULL DEFAULT 0,         -- times it reached succeeded (must stay <= 1)
    backend_used    TEXT,
    device          TEXT,
    vertices        INTEGER,
    edges           INTEGER,
    bound           TEXT,                                -- M as decimal text (u64)
    result_key      TEXT REFERENCES results(key),
    reused          INTEGER NOT NULL DEFAULT 0,
    error_type      TEXT,
    error_message   TEXT,
    error_line      INTEGER,
    error_column    INTEGER,
    upload_ms       REAL,
    parse_ms        REAL,
    solve_ms        REAL
);

CREATE INDEX jobs_by_owner ON jobs (owner, seq);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE INDEX jobs_by_result ON jobs (result_key);
CREATE INDEX jobs_by_arena ON jobs (arena_hash);
