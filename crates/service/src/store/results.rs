//! Reading the summaries of stored results in bulk: a page of the job list names the
//! renderings of each answer on it (`result_formats`), which depend on its summary, so one
//! query fetches the summaries of the whole page instead of one query per job. The single
//! lookup is [`Store::result_summary`]; writing results is part of finishing a job.

use std::collections::HashMap;

use sqlx::Row;

use super::{Store, StoreError, with_pool};
use crate::job::ResultSummary;

/// Keys per query: far below both engines' limits on bound parameters.
const KEYS_PER_QUERY: usize = 500;

impl Store {
    /// The summaries of the results stored under `keys` (keys without a result are left
    /// out), one query per 500 keys.
    pub async fn result_summaries(
        &self,
        keys: &[&str],
    ) -> Result<HashMap<String, ResultSummary>, StoreError> {
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        keys.dedup();
        let mut summaries = HashMap::with_capacity(keys.len());
        for batch in keys.chunks(KEYS_PER_QUERY) {
            let placeholders: Vec<String> = (1..=batch.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "SELECT key, summary FROM results WHERE key IN ({})",
                placeholders.join(", ")
            );
            let rows: Vec<(String, String)> = with_pool!(self, pool => {
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
                for key in batch {
                    query = query.bind(*key);
                }
                query
                    .fetch_all(pool)
                    .await?
                    .iter()
                    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                    .collect::<Result<_, sqlx::Error>>()?
            });
            for (key, text) in rows {
                let summary =
                    serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                summaries.insert(key, summary);
            }
        }
        Ok(summaries)
    }
}
