-- Whether the job's game is a parity game (1), an energy game (0), or not known yet (NULL:
-- not parsed). With backend=auto and no credits a parity game gets the parity solver's
-- answer on a CPU slot (raced against the GPU route on a borrowed GPU), never a GPU slot.
ALTER TABLE jobs ADD COLUMN parity INTEGER;
