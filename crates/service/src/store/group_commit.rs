//! Group commit: writes that arrive together share one transaction. A writer queues its
//! row and waits for its turn; whoever gets the turn commits every row queued by then
//! (its own, unless an earlier turn took it) and hands each writer its outcome. While one
//! group commits, the next gathers, so under load each commit (each log flush) carries
//! many rows, and alone a writer commits at once, as before.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::oneshot;

use super::StoreError;
use crate::job::JobId;

type Reply = oneshot::Sender<Result<bool, StoreError>>;

/// The rows waiting, and the turn to commit them.
#[derive(Debug)]
pub struct GroupCommit<R> {
    queue: Mutex<Vec<(R, Reply)>>,
    turn: tokio::sync::Mutex<()>,
}

impl<R> Default for GroupCommit<R> {
    fn default() -> GroupCommit<R> {
        GroupCommit {
            queue: Mutex::new(Vec::new()),
            turn: tokio::sync::Mutex::new(()),
        }
    }
}

impl<R> GroupCommit<R> {
    /// Queues `row` and returns its outcome once a group holding it committed: `commit`
    /// writes a group in one transaction and says, per row, whether it was written. A
    /// group that fails as a whole is written again row by row, so that each writer gets
    /// its own outcome (and error).
    pub async fn submit<F, Fut>(&self, row: R, commit: F) -> Result<bool, StoreError>
    where
        R: Clone,
        F: Fn(Vec<R>) -> Fut,
        Fut: Future<Output = Result<Vec<bool>, StoreError>>,
    {
        let (reply, mut outcome) = oneshot::channel();
        self.queue.lock().expect("queue lock").push((row, reply));
        let turn = self.turn.lock().await;
        if let Ok(done) = outcome.try_recv() {
            return done; // an earlier turn committed this row
        }
        let group = std::mem::take(&mut *self.queue.lock().expect("queue lock"));
        let (rows, replies): (Vec<R>, Vec<Reply>) = group.into_iter().unzip();
        match commit(rows.clone()).await {
            Ok(outcomes) => {
                for (reply, done) in replies.into_iter().zip(outcomes) {
                    let _ = reply.send(Ok(done));
                }
            }
            Err(e) if rows.len() == 1 => {
                let _ = replies.into_iter().next().map(|reply| reply.send(Err(e)));
            }
            Err(_) => {
                for (row, reply) in rows.iter().zip(replies) {
                    let alone = commit(vec![row.clone()]).await;
                    let _ = reply.send(alone.map(|outcomes| outcomes[0]));
                }
            }
        }
        drop(turn);
        outcome.await.unwrap_or_else(|_| {
            Err(StoreError::Io(std::io::Error::other(
                "the commit of this write was interrupted",
            )))
        })
    }
}

/// A success as [`Store::succeed`](super::Store::succeed) records it.
#[derive(Debug, Clone)]
pub struct SuccessRow {
    pub id: JobId,
    pub attempt: i64,
    pub worker: String,
    pub result_key: String,
    pub summary_json: String,
    pub backend: String,
    pub solve_ms: f64,
    pub device: String,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writers_share_commits_and_get_their_own_outcomes() {
        let group = Arc::new(GroupCommit::<u32>::default());
        let commits = Arc::new(AtomicUsize::new(0));
        let writers: Vec<_> = (0..64u32)
            .map(|i| {
                let (group, commits) = (group.clone(), commits.clone());
                tokio::spawn(async move {
                    let commit = |rows: Vec<u32>| {
                        let commits = commits.clone();
                        async move {
                            commits.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                            Ok(rows.iter().map(|r| r % 3 != 0).collect())
                        }
                    };
                    (i, group.submit(i, commit).await.unwrap())
                })
            })
            .collect();
        for writer in writers {
            let (i, done) = writer.await.unwrap();
            assert_eq!(done, i % 3 != 0, "row {i} got another row's outcome");
        }
        let commits = commits.load(Ordering::SeqCst);
        assert!(commits < 64, "64 concurrent writes took {commits} commits");
    }

    #[tokio::test]
    async fn a_failed_group_is_written_again_row_by_row() {
        let group = Arc::new(GroupCommit::<u32>::default());
        // Rows fail only when written together with row 1.
        let commit = |rows: Vec<u32>| {
            let fails = rows.len() > 1 && rows.contains(&1);
            async move {
                if fails {
                    Err(StoreError::Corrupt("group".into()))
                } else {
                    Ok(rows.iter().map(|_| true).collect())
                }
            }
        };
        // Queued by hand so that one turn takes both rows.
        let (reply, outcome) = oneshot::channel();
        group.queue.lock().unwrap().push((1, reply));
        assert!(group.submit(2, commit).await.unwrap());
        assert!(outcome.await.unwrap().unwrap());
    }
}
