-- The file a large `egb` arena named by reference was read from, while the store's copy of
-- its bytes is written behind its job (`import::memory`): a worker that finds no stored copy
-- reads this file again and takes it only if its bytes still have the arena's hash. Set only
-- on stores whose arena files are the store (SQLite); NULL for everything else.
ALTER TABLE arenas ADD COLUMN source TEXT;
