//! Arena and result bytes, wherever the engine keeps them. Every reader and writer works on
//! local files (`arenas/<hash>`, `results/<key>` in the data directory): with SQLite those
//! files are the store; with PostgreSQL they are this host's cache, and the database holds
//! the shared copy in chunks (see `chunks`), written before the arena's row or the result's
//! success commits and fetched into the cache by a host that lacks them. Both are
//! content-addressed and never change, so a cached file is always valid.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::chunks::{ChunkWriter, Table, fetch_to_file};
use super::submissions::INSERT_ARENA;
use super::{Pool, Store, StoreError, now_ms, with_pool};
use crate::job::ResultSummary;

impl Store {
    /// Records an uploaded arena whose file is at [`Store::arena_path`] (idempotent:
    /// identical bytes are stored once; on PostgreSQL its chunks are written with the row).
    /// Refreshes its timestamp, so that [`Store::expire`] never removes an arena a
    /// submission is about to reference (it only removes arenas untouched for a whole TTL).
    /// `source`: the file named by reference its bytes come from while their copy is
    /// written behind the job (SQLite only, see [`Store::arena_source`]).
    pub async fn insert_arena(
        &self,
        hash: &str,
        bytes: u64,
        source: Option<&str>,
    ) -> Result<(), StoreError> {
        let path = self.arena_path(hash);
        let begin = self.dialect().begin_relaxed();
        with_pool!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            sqlx::query(INSERT_ARENA)
            .bind(hash)
            .bind(bytes as i64)
            .bind(now_ms())
            .bind(source)
            .execute(&mut *tx)
            .await?;
            // The row is locked until commit: a concurrent upload of the same bytes on
            // another host waits here, then finds the chunks present.
            tx.store_chunks_if_absent(Table::Arenas, hash, &path).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// The file named by reference that the arena `hash` was read from when its store copy
    /// was written behind its job: where a worker that finds no stored copy reads it again.
    pub(crate) async fn arena_source(&self, hash: &str) -> Result<Option<String>, StoreError> {
        let sql = "SELECT source FROM arenas WHERE hash = $1";
        let source = with_pool!(self, pool => {
            sqlx::query_scalar::<_, Option<String>>(sql)
                .bind(hash)
                .fetch_optional(pool)
                .await?
        });
        Ok(source.flatten())
    }

    /// The local file of the arena `hash`, fetched from the database first when this host
    /// does not have it (PostgreSQL).
    pub async fn local_arena(&self, hash: &str) -> Result<PathBuf, StoreError> {
        self.local_copy(Table::Arenas, hash, self.arena_path(hash))
            .await
    }

    /// The local file of the result `key`, fetched from the database first when this host
    /// does not have it (PostgreSQL).
    pub async fn local_result(&self, key: &str) -> Result<PathBuf, StoreError> {
        self.local_copy(Table::Results, key, self.result_path(key))
            .await
    }

    async fn local_copy(
        &self,
        table: Table,
        key: &str,
        path: PathBuf,
    ) -> Result<PathBuf, StoreError> {
        if let Pool::Postgres(pool) = &self.pool {
            if !tokio::fs::try_exists(&path).await.unwrap_or(false) {
                fetch_to_file(pool, table, key, &path, &self.tmp_dir()).await?;
            }
        }
        Ok(path)
    }

    /// The summaries of the stored results, of those `keys`, that a new identical job may
    /// reuse, by key, in one query: its row exists and its bytes are stored (SQLite: the
    /// file; PostgreSQL: chunks, written in the same transaction as the row).
    pub async fn reusable_results(
        &self,
        keys: &[&str],
    ) -> Result<HashMap<String, ResultSummary>, StoreError> {
        let mut summaries = self.result_summaries(keys).await?;
        if let Pool::Sqlite(_) = &self.pool {
            summaries.retain(|key, _| self.result_path(key).exists());
        }
        Ok(summaries)
    }
}

/// Removes files in `dir` not modified for `age` (a cache sweep).
pub fn forget_older_than(dir: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|elapsed| elapsed > age);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
