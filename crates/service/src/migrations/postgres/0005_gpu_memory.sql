-- The device memory a job's solve needs, in bytes: admission's one estimate
-- (`admission::gpu_need`), written when the job is queued (from the parsed game, or from
-- the arena's size before its parse) and again when a worker parses it; the claim compares
-- it with the free GPUs. Jobs queued before this column get the same figure once, here.
ALTER TABLE jobs ADD COLUMN gpu_memory BIGINT;
UPDATE jobs SET gpu_memory = COALESCE(vertices * 37 + edges * 24 + 72,
    (SELECT (a.bytes / 32) * 37 + (a.bytes / 8) * 24 + 72 FROM arenas a
     WHERE a.hash = jobs.arena_hash));
