//! Idempotency keys of `POST /v1/jobs`: a client that lost the answer to a submission (a
//! dropped connection, a timeout) sends the same request again with the same
//! `Idempotency-Key` header and gets the job the first request created, never a second one.
//!
//! Keys are per user and live in memory for [`KEY_TTL`] (at most [`MAX_KEYS`] at once, the
//! oldest forgotten first): they cover a client's retries, not a server restart. A key is
//! *claimed* when a request carrying it arrives; the claim becomes the job's id once the job
//! row is committed, or is released when the request fails before that (so a retry can try
//! again). A second request while the first still runs is told to retry (`409`); a request
//! that reuses a key for a different arena or different options is refused (`422`).
//!
//! This module knows nothing about HTTP; [`super::submit`] maps its answers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::job::{JobId, JobOptions};

/// How long a key is remembered after its job was created.
pub const KEY_TTL: Duration = Duration::from_secs(24 * 3600);
/// Most keys remembered at once (the oldest are forgotten first).
pub const MAX_KEYS: usize = 100_000;
/// Longest key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 255;

/// What a submission is: two requests with one key must agree on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// The submission options.
    pub options: JobOptions,
    /// SHA-256 of the decompressed arena.
    pub arena_hash: String,
}

#[derive(Debug)]
enum Entry {
    /// A request with this key is being handled.
    Claimed,
    /// The key's job.
    Done {
        job: JobId,
        fingerprint: Fingerprint,
        at: Instant,
    },
}

/// The answer to [`IdempotencyKeys::claim`].
#[derive(Debug)]
pub enum Claim {
    /// A new key: the caller creates the job and completes the claim.
    Fresh(ClaimGuard),
    /// The key already made a job.
    Replay {
        /// The job it made.
        job: JobId,
        /// What that job was submitted with.
        fingerprint: Fingerprint,
    },
    /// Another request with this key is still being handled.
    InUse,
}

/// Every remembered key, by (user, key). Cheap to share (`Arc`).
#[derive(Debug, Default)]
pub struct IdempotencyKeys {
    /// A std mutex: held for a map operation, never across an await.
    entries: Mutex<HashMap<(String, String), Entry>>,
}

/// Whether `key` is a usable idempotency key: 1 to [`MAX_KEY_BYTES`] visible ASCII characters.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_BYTES && key.bytes().all(|b| b.is_ascii_graphic())
}

impl IdempotencyKeys {
    /// Claims `key` for `user` (see [`Claim`]).
    pub fn claim(self: &Arc<Self>, user: &str, key: &str) -> Claim {
        let mut entries = self.entries.lock().expect("idempotency lock");
        let id = (user.to_string(), key.to_string());
        match entries.get(&id) {
            Some(Entry::Claimed) => return Claim::InUse,
            Some(Entry::Done {
                job,
                fingerprint,
                at,
            }) if at.elapsed() < KEY_TTL => {
                return Claim::Replay {
                    job: *job,
                    fingerprint: fingerprint.clone(),
                };
            }
            _ => {}
        }
        if entries.len() >= MAX_KEYS {
            forget_oldest(&mut entries);
        }
        entries.insert(id.clone(), Entry::Claimed);
        Claim::Fresh(ClaimGuard {
            keys: self.clone(),
            id: Some(id),
        })
    }

    /// Keys remembered now (claimed or done).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.lock().expect("idempotency lock").len()
    }

    /// Whether no key is remembered.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Drops expired keys and, if still full, the older half of the rest.
fn forget_oldest(entries: &mut HashMap<(String, String), Entry>) {
    entries.retain(|_, e| !matches!(e, Entry::Done { at, .. } if at.elapsed() >= KEY_TTL));
    if entries.len() < MAX_KEYS {
        return;
    }
    let mut times: Vec<Instant> = entries
        .values()
        .filter_map(|e| match e {
            Entry::Done { at, .. } => Some(*at),
            Entry::Claimed => None,
        })
        .collect();
    times.sort_unstable();
    if let Some(&median) = times.get(times.len() / 2) {
        entries.retain(|_, e| !matches!(e, Entry::Done { at, .. } if *at <= median));
    }
}

/// A fresh claim: completed with the job's id, or released when dropped without that.
#[derive(Debug)]
pub struct ClaimGuard {
    keys: Arc<IdempotencyKeys>,
    /// `None` once completed.
    id: Option<(String, String)>,
}

impl ClaimGuard {
    /// Records that the key made `job` (call once the job row is committed).
    pub fn complete(mut self, job: JobId, fingerprint: Fingerprint) {
        if let Some(id) = self.id.take() {
            let mut entries = self.keys.entries.lock().expect("idempotency lock");
            entries.insert(
                id,
                Entry::Done {
                    job,
                    fingerprint,
                    at: Instant::now(),
                },
            );
        }
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let mut entries = self.keys.entries.lock().expect("idempotency lock");
            if matches!(entries.get(&id), Some(Entry::Claimed)) {
                entries.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{BackendChoice, InputFormat, ReturnKind};

    fn fingerprint(hash: &str) -> Fingerprint {
        Fingerprint {
            options: JobOptions {
                backend: BackendChoice::Auto,
                priority: 0,
                time_limit_secs: 60,
                format: InputFormat::Auto,
                return_kind: ReturnKind::Credits,
                credits: false,
            },
            arena_hash: hash.to_string(),
        }
    }

    #[test]
    fn a_key_is_claimed_once_then_replays_its_job() {
        let keys = Arc::new(IdempotencyKeys::default());
        let Claim::Fresh(guard) = keys.claim("alice", "k1") else {
            panic!("fresh key")
        };
        assert!(matches!(keys.claim("alice", "k1"), Claim::InUse));
        // Another user's key of the same name is another key.
        assert!(matches!(keys.claim("bob", "k1"), Claim::Fresh(_)));
        let job = JobId::now_v7();
        guard.complete(job, fingerprint("aa"));
        match keys.claim("alice", "k1") {
            Claim::Replay {
                job: replayed,
                fingerprint: f,
            } => {
                assert_eq!(replayed, job);
                assert_eq!(f, fingerprint("aa"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_dropped_claim_frees_the_key() {
        let keys = Arc::new(IdempotencyKeys::default());
        let Claim::Fresh(guard) = keys.claim("alice", "k") else {
            panic!("fresh key")
        };
        drop(guard);
        assert!(keys.is_empty());
        assert!(matches!(keys.claim("alice", "k"), Claim::Fresh(_)));
    }

    #[test]
    fn keys_are_visible_ascii_of_bounded_length() {
        assert!(valid_key("3f2b-uuid_like.Key:1"));
        assert!(!valid_key(""));
        assert!(!valid_key("has space"));
        assert!(!valid_key("ünïcode"));
        assert!(!valid_key(&"k".repeat(MAX_KEY_BYTES + 1)));
    }

    #[test]
    fn a_full_table_forgets_its_oldest_keys() {
        let keys = Arc::new(IdempotencyKeys::default());
        for i in 0..MAX_KEYS {
            let Claim::Fresh(guard) = keys.claim("u", &i.to_string()) else {
                panic!("fresh key")
            };
            guard.complete(JobId::now_v7(), fingerprint("h"));
        }
        assert_eq!(keys.len(), MAX_KEYS);
        assert!(matches!(keys.claim("u", "new"), Claim::Fresh(_)));
        assert!(keys.len() <= MAX_KEYS / 2 + 2, "{}", keys.len());
        // The newest keys are kept.
        let newest = (MAX_KEYS - 1).to_string();
        assert!(matches!(keys.claim("u", &newest), Claim::Replay { .. }));
    }
}
