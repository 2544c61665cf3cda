-- Batches (`POST /v1/batches`): the jobs one request made share the batch's id, and each
-- keeps the name its arena had in the archive. Both are NULL for a job submitted alone.
ALTER TABLE jobs ADD COLUMN batch TEXT;
ALTER TABLE jobs ADD COLUMN member TEXT;
CREATE INDEX jobs_by_batch ON jobs (batch, seq);
