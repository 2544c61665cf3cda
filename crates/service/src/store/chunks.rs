//! Bytes in the database, in chunks: on PostgreSQL an arena (as received) or a result file
//! is stored as numbered `bytea` rows of at most [`CHUNK`] bytes, written from a local file
//! and read back into one, a chunk at a time — never whole in memory. On SQLite the files
//! in the data directory are the store and these are no-ops.

use std::path::Path;

use futures::TryStreamExt;
use sqlx::Row;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::StoreError;

/// Bytes per chunk row.
pub const CHUNK: usize = 1 << 20;

/// Which bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// `arena_chunks`, keyed by the arena's content hash.
    Arenas,
    /// `result_chunks`, keyed by the result key.
    Results,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Arenas => "arena_chunks",
            Table::Results => "result_chunks",
        }
    }

    fn key_column(self) -> &'static str {
        match self {
            Table::Arenas => "hash",
            Table::Results => "key",
        }
    }
}

/// A transaction that can store a file's bytes as chunks.
pub(crate) trait ChunkWriter {
    /// Stores the file at `path` as the chunks of `key`, unless `key` has chunks already
    /// (identical content: arenas and results are content-addressed).
    async fn store_chunks_if_absent(
        &mut self,
        table: Table,
        key: &str,
        path: &Path,
    ) -> Result<(), StoreError>;
}

impl ChunkWriter for sqlx::Transaction<'_, sqlx::Sqlite> {
    async fn store_chunks_if_absent(
        &mut self,
        _: Table,
        _: &str,
        _: &Path,
    ) -> Result<(), StoreError> {
        Ok(()) // the file in the data directory is the stored copy
    }
}

impl ChunkWriter for sqlx::Transaction<'_, sqlx::Postgres> {
    async fn store_chunks_if_absent(
        &mut self,
        table: Table,
        key: &str,
        path: &Path,
    ) -> Result<(), StoreError> {
        let (name, column) = (table.name(), table.key_column());
        let exists = format!("SELECT EXISTS (SELECT 1 FROM {name} WHERE {column} = $1)");
        let present: bool = sqlx::query(sqlx::AssertSqlSafe(exists))
            .bind(key)
            .fetch_one(&mut **self)
            .await?
            .try_get(0)?;
        if present {
            return Ok(());
        }
        let insert = format!("INSERT INTO {name} ({column}, seq, data) VALUES ($1, $2, $3)");
        let mut file = tokio::fs::File::open(path).await?;
        let mut buffer = vec![0u8; CHUNK];
        let mut seq: i32 = 0;
        loop {
            let filled = fill(&mut file, &mut buffer).await?;
            if filled == 0 && seq > 0 {
                break;
            }
            sqlx::query(sqlx::AssertSqlSafe(insert.as_str()))
                .bind(key)
                .bind(seq)
                .bind(&buffer[..filled])
                .execute(&mut **self)
                .await?;
            seq += 1;
            if filled < CHUNK {
                break;
            }
        }
        Ok(())
    }
}

/// Reads until `buffer` is full or the file ends; the bytes read.
async fn fill(file: &mut tokio::fs::File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        let n = file.read(&mut buffer[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// Writes the chunks of `key` to `dest` (through a temporary file in `tmp_dir`, synced,
/// then renamed), one chunk at a time. [`StoreError::Missing`] if there are none.
pub async fn fetch_to_file(
    pool: &sqlx::PgPool,
    table: Table,
    key: &str,
    dest: &Path,
    tmp_dir: &Path,
) -> Result<(), StoreError> {
    let select = format!(
        "SELECT data FROM {} WHERE {} = $1 ORDER BY seq",
        table.name(),
        table.key_column()
    );
    let tmp = tmp_dir.join(format!("fetch-{}", uuid::Uuid::now_v7()));
    let outcome = async {
        let mut out = tokio::fs::File::create(&tmp).await?;
        let mut rows = sqlx::query(sqlx::AssertSqlSafe(select))
            .bind(key)
            .fetch(pool);
        let mut chunks = 0;
        while let Some(row) = rows.try_next().await? {
            let data: &[u8] = row.try_get(0)?;
            out.write_all(data).await?;
            chunks += 1;
        }
        if chunks == 0 {
            return Err(StoreError::Missing(format!(
                "{} of {key} (the database has no chunks for it)",
                table.name()
            )));
        }
        // Read-only, as the files a worker writes ([`crate::result_file::write`]).
        use std::os::unix::fs::PermissionsExt;
        out.set_permissions(std::fs::Permissions::from_mode(0o444))
            .await?;
        out.sync_all().await?;
        tokio::fs::rename(&tmp, dest).await?;
        Ok(())
    }
    .await;
    if outcome.is_err() {
        let _ = tokio::fs::remove_file(&tmp).await;
    }
    outcome
}
