//! State-change notifications: every process hears about every job's transitions, so
//! schedulers claim new jobs at once, long polls on any host answer when a job finishes on
//! another, and a cancelled job's worker stops it at once.
//!
//! On PostgreSQL, triggers on `jobs` send `NOTIFY egsolve, '<state> <id>'` at commit; one
//! [`listen`] task per process turns them into [`StoreEvent`]s. The listener reconnects by
//! itself after a lost connection and then sends [`StoreEvent::Resync`], since anything
//! sent meanwhile was lost. On SQLite the store announces its own commits (one process).

use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::broadcast;

use crate::job::JobId;

/// The notification channel.
pub const CHANNEL: &str = "egsolve";

/// A change someone committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreEvent {
    /// The job entered the queue (submitted, or back after a shutdown or an expired lease).
    Queued(JobId),
    /// The job was cancelled.
    Cancelled(JobId),
    /// The job changed state otherwise (started, succeeded, failed).
    Changed(JobId),
    /// Notifications may have been lost (a reconnection): re-read what you wait for.
    Resync,
}

impl StoreEvent {
    /// Parses a notification payload (`<state> <id>`).
    pub fn parse(payload: &str) -> Option<StoreEvent> {
        let (state, id) = payload.split_once(' ')?;
        let id = JobId::parse_str(id).ok()?;
        Some(match state {
            "queued" => StoreEvent::Queued(id),
            "cancelled" => StoreEvent::Cancelled(id),
            _ => StoreEvent::Changed(id),
        })
    }
}

/// Starts the task that forwards the database's notifications to `events` until the pool
/// closes.
pub fn listen(pool: PgPool, events: broadcast::Sender<StoreEvent>) {
    tokio::spawn(async move {
        let mut connected = false;
        loop {
            if pool.is_closed() {
                return;
            }
            let mut listener = match PgListener::connect_with(&pool).await {
                Ok(listener) => listener,
                Err(e) => {
                    if connected {
                        tracing::warn!("cannot listen for job changes: {e}; retrying");
                        connected = false;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    continue;
                }
            };
            if let Err(e) = listener.listen(CHANNEL).await {
                tracing::warn!("LISTEN {CHANNEL} failed: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
            if !connected {
                connected = true;
                let _ = events.send(StoreEvent::Resync);
            }
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) => {
                        if let Some(event) = StoreEvent::parse(notification.payload()) {
                            let _ = events.send(event);
                        }
                    }
                    // The connection dropped: it reconnects on the next call; what was sent
                    // meanwhile is lost.
                    Ok(None) => {
                        let _ = events.send(StoreEvent::Resync);
                    }
                    Err(e) => {
                        if pool.is_closed() {
                            return;
                        }
                        tracing::warn!("lost the notification connection: {e}; reconnecting");
                        let _ = events.send(StoreEvent::Resync);
                        tokio::time::sleep(Duration::from_millis(250)).await;
                        break;
                    }
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_parse() {
        let id = JobId::now_v7();
        assert_eq!(
            StoreEvent::parse(&format!("queued {id}")),
            Some(StoreEvent::Queued(id))
        );
        assert_eq!(
            StoreEvent::parse(&format!("succeeded {id}")),
            Some(StoreEvent::Changed(id))
        );
        assert_eq!(StoreEvent::parse("queued nonsense"), None);
    }
}
