-- Parity games with backend=auto: whether the job asked for the energy reduction's credits
-- (1) or the parity game's natural answer, winners and strategies (0, the default).
ALTER TABLE jobs ADD COLUMN credits INTEGER NOT NULL DEFAULT 0;
