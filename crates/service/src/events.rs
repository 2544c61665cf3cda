//! Job change notifications for long polling (`GET /v1/jobs/{id}?wait=`): a `watch` channel
//! per job that someone is waiting on. Writers in this process call [`JobEvents::publish`]
//! after every state transition they commit, and the store's notifications (every host's
//! transitions, see `store::notify`) are forwarded here too; waiters re-read the store when
//! woken, so a missed or spurious wake-up costs a query, never a wrong answer.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

use super::job::JobId;

/// Per-job change counters; entries exist only while someone waits.
#[derive(Debug, Default)]
pub struct JobEvents {
    /// Senders by job. A std mutex: held only to look up or insert, never across an await.
    channels: Mutex<HashMap<JobId, watch::Sender<u64>>>,
}

impl JobEvents {
    /// A receiver that changes on the job's next published event.
    pub fn subscribe(&self, id: JobId) -> watch::Receiver<u64> {
        let mut channels = self.channels.lock().expect("events lock");
        channels
            .entry(id)
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Wakes everyone waiting on `id`; drops the channel once nobody is left.
    pub fn publish(&self, id: JobId) {
        let mut channels = self.channels.lock().expect("events lock");
        if let Some(sender) = channels.get(&id) {
            sender.send_modify(|n| *n += 1);
            if sender.receiver_count() == 0 {
                channels.remove(&id);
            }
        }
    }

    /// Wakes every waiter (notifications may have been lost: each re-reads its job).
    pub fn publish_all(&self) {
        let channels = self.channels.lock().expect("events lock");
        for sender in channels.values() {
            sender.send_modify(|n| *n += 1);
        }
    }

    /// Forgets channels nobody listens to any more (called now and then).
    pub fn prune(&self) {
        let mut channels = self.channels.lock().expect("events lock");
        channels.retain(|_, sender| sender.receiver_count() > 0);
    }
}
