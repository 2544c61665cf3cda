//! The uploads in parts a server holds: their records on disk, which parts each has, which
//! are being written, and the checks a part must pass. HTTP lives in [`super`].
//!
//! Layout: `<data_dir>/uploads/<id>/session.json` (the [`Record`], written by rename when
//! the upload is made and when a job uses it), `<data_dir>/uploads/<id>/parts.log` (a line
//! `N SHA256` appended and synced per part received: constant work per part, where
//! rewriting the record would grow with the parts) and `<data_dir>/uploads/<id>/data` (the
//! file, allocated at its full size when the upload is made, each part written at its
//! offset and synced before the part counts as received). A server that restarts reads the records back, so an upload
//! resumes across restarts too; a directory without a readable record is removed.
//!
//! Invariants:
//! - a part counts as received only once all its bytes are written, synced and their
//!   SHA-256 equals the digest the client declared: a part cut off mid-way, or sent with
//!   other bytes, leaves nothing counted (its bytes in the file are overwritten when it is
//!   sent again);
//! - at most one request writes a part at a time (a second gets `409 part-in-progress`),
//!   and a received part is never written again: the same bytes again are acknowledged,
//!   other bytes are `409 part-conflict` — so nothing is lost or doubled by retries;
//! - no part is written while the upload becomes a job, and an upload that became a job
//!   keeps the arena it became (so a job request sent again finds the same arena).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use sha2::{Digest, Sha256};

use crate::storage;

/// Smallest part size a client may choose (the last part may be shorter).
pub(crate) const MIN_PART_SIZE: u64 = 64 << 10;
/// Largest part size.
pub(crate) const MAX_PART_SIZE: u64 = 1 << 30;
/// The part size when the client names none.
pub(crate) const DEFAULT_PART_SIZE: u64 = 64 << 20;
/// Most parts of one upload.
pub(crate) const MAX_PARTS: u64 = 10_000;

/// Why a request about an upload in parts is refused.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    /// No such upload (or another user's).
    #[error("no upload with id {0}: it may have expired or been deleted; make a new one")]
    NotFound(String),
    /// The request body or a header is wrong.
    #[error("invalid upload request: {0}")]
    Invalid(String),
    /// A part number past the last part.
    #[error("there is no part {number}: this upload has parts 0 to {}", .parts - 1)]
    NoSuchPart {
        /// The number asked for.
        number: u64,
        /// How many parts the upload has.
        parts: u64,
    },
    /// The part's bytes do not match its declared digest or length.
    #[error("part {number} was not received: {reason}; send it again")]
    Damaged {
        /// The part.
        number: u64,
        /// What was wrong.
        reason: String,
    },
    /// Another request is writing the part.
    #[error("part {0} is being received on another connection: retry in a second")]
    InProgress(u64),
    /// The part was received before with other bytes.
    #[error(
        "part {0} was received before with other bytes: an upload's parts cannot change; make a new upload"
    )]
    Conflict(u64),
    /// The upload is becoming a job.
    #[error("upload {0} is becoming a job and takes no more parts")]
    Closed(String),
    /// A job was made from the upload.
    #[error(
        "a job was made from upload {0}: its parts cannot change; make a new upload for other bytes"
    )]
    Used(String),
    /// A job was asked for before every part arrived.
    #[error("the upload is missing {} part(s), first {:?}: send them, then ask for the job again", .missing.len(), &.missing[..missing.len().min(10)])]
    Incomplete {
        /// The part numbers not received.
        missing: Vec<u64>,
    },
    /// The user has too many open uploads.
    #[error("you have {limit} open uploads, the most allowed: finish or delete one")]
    TooMany {
        /// `max_open_uploads`.
        limit: u64,
    },
    /// A file operation failed.
    #[error("storing the upload failed: {0}")]
    Io(#[from] std::io::Error),
}

/// What is kept on disk about an upload.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Record {
    id: String,
    owner: String,
    size: u64,
    part_size: u64,
    created_ms: i64,
    /// When the last part was received (or the upload made): expiry counts from here.
    touched_ms: i64,
    /// Each part's SHA-256, hex, once received (kept in `parts.log`, not in the record).
    #[serde(skip)]
    digests: Vec<Option<String>>,
    /// Once a job used the upload: the arena it became and that arena's size.
    arena: Option<(String, u64)>,
}

/// An upload in parts.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) owner: String,
    pub(crate) size: u64,
    pub(crate) part_size: u64,
    dir: PathBuf,
    /// The data file, open for the parts' writes.
    file: File,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    record: Record,
    /// Parts a request is writing now.
    in_flight: Vec<bool>,
    /// The upload is becoming a job.
    finishing: bool,
    /// The upload was deleted or expired.
    removed: bool,
}

/// A part being written: cleared when dropped, received only through
/// [`Session::receive_part`].
pub(crate) struct PartSlot {
    session: Arc<Session>,
    number: usize,
    /// Where the part starts in the file, and its length.
    pub(crate) offset: u64,
    pub(crate) len: u64,
}

impl Drop for PartSlot {
    fn drop(&mut self) {
        self.session.lock().in_flight[self.number] = false;
    }
}

impl PartSlot {
    /// The data file, for the part's writes.
    pub(crate) fn file(&self) -> &File {
        &self.session.file
    }
}

/// What a job request finds in an upload.
pub(crate) enum Finish {
    /// Every part is here: the guard holds the upload closed to parts until it is dropped.
    Ready(FinishGuard),
    /// A job used the upload before: its arena and size.
    Used(String, u64),
}

/// Holds an upload closed while it becomes a job.
pub(crate) struct FinishGuard(Arc<Session>);

impl Drop for FinishGuard {
    fn drop(&mut self) {
        self.0.lock().finishing = false;
    }
}

impl Session {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Number of parts.
    pub(crate) fn parts(&self) -> u64 {
        self.size.div_ceil(self.part_size)
    }

    /// The data file's path.
    pub(crate) fn data_path(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The client's view: sizes, received part numbers, state, expiry.
    pub(crate) fn view(&self, ttl_ms: i64) -> serde_json::Value {
        let state = self.lock();
        let received: Vec<usize> = (0..state.record.digests.len())
            .filter(|&n| state.record.digests[n].is_some())
            .collect();
        let status = if state.record.arena.is_some() {
            "used"
        } else if received.len() as u64 == self.parts() {
            "complete"
        } else {
            "receiving"
        };
        let mut view = serde_json::json!({
            "id": self.id,
            "size": self.size,
            "part_size": self.part_size,
            "parts": self.parts(),
            "received": received,
            "state": status,
            "expires_at": crate::views::rfc3339(state.record.touched_ms + ttl_ms),
        });
        if let Some((hash, _)) = &state.record.arena {
            view["arena"] = hash.clone().into();
        }
        view
    }

    /// Claims part `number` for a write of bytes whose SHA-256 is `digest`; `None` when
    /// the part was received before with exactly these bytes.
    pub(crate) fn begin_part(
        self: &Arc<Session>,
        number: u64,
        digest: &[u8; 32],
    ) -> Result<Option<PartSlot>, PartsError> {
        if number >= self.parts() {
            return Err(PartsError::NoSuchPart {
                number,
                parts: self.parts(),
            });
        }
        let index = number as usize;
        let mut state = self.lock();
        if state.removed {
            return Err(PartsError::NotFound(self.id.clone()));
        }
        if state.record.arena.is_some() {
            return Err(PartsError::Used(self.id.clone()));
        }
        if state.finishing {
            return Err(PartsError::Closed(self.id.clone()));
        }
        if let Some(had) = &state.record.digests[index] {
            return if *had == hex::encode(digest) {
                Ok(None)
            } else {
                Err(PartsError::Conflict(number))
            };
        }
        if state.in_flight[index] {
            return Err(PartsError::InProgress(number));
        }
        state.in_flight[index] = true;
        let offset = number * self.part_size;
        Ok(Some(PartSlot {
            session: self.clone(),
            number: index,
            offset,
            len: self.part_size.min(self.size - offset),
        }))
    }

    /// Counts the part `slot` holds as received (its bytes written, synced and checked),
    /// and records it on disk.
    pub(crate) fn receive_part(&self, slot: PartSlot, digest: &[u8; 32]) -> Result<(), PartsError> {
        let mut state = self.lock();
        if state.removed {
            return Err(PartsError::NotFound(self.id.clone()));
        }
        let saved = journal(&self.dir, slot.number, digest);
        if saved.is_ok() {
            state.record.digests[slot.number] = Some(hex::encode(digest));
            state.record.touched_ms = crate::store::now_ms();
        }
        drop(state);
        drop(slot);
        saved.map_err(PartsError::Io)
    }

    /// Closes the upload to parts for a job, or says which parts are missing.
    pub(crate) fn begin_finish(self: &Arc<Session>) -> Result<Finish, PartsError> {
        let mut state = self.lock();
        if state.removed {
            return Err(PartsError::NotFound(self.id.clone()));
        }
        if let Some((hash, bytes)) = &state.record.arena {
            return Ok(Finish::Used(hash.clone(), *bytes));
        }
        if state.finishing {
            return Err(PartsError::Closed(self.id.clone()));
        }
        let missing: Vec<u64> = (0..self.parts())
            .filter(|&n| state.record.digests[n as usize].is_none())
            .collect();
        if !missing.is_empty() {
            return Err(PartsError::Incomplete { missing });
        }
        state.finishing = true;
        Ok(Finish::Ready(FinishGuard(self.clone())))
    }

    /// The arena's key when the file is stored as it came, without a pass over its bytes
    /// ([`parts_key`] of its part size, size and parts' SHA-256s).
    pub(crate) fn parts_key(&self) -> String {
        let state = self.lock();
        let digests = state.record.digests.iter().flatten().map(|digest| {
            let mut bytes = [0u8; 32];
            let _ = hex::decode_to_slice(digest, &mut bytes);
            bytes
        });
        parts_key(self.part_size, self.size, digests)
    }

    /// Records that a job used the upload: the arena it became (the data file is gone).
    pub(crate) fn used(&self, guard: FinishGuard, hash: &str, bytes: u64) -> std::io::Result<()> {
        let mut state = self.lock();
        state.record.arena = Some((hash.to_string(), bytes));
        state.record.touched_ms = crate::store::now_ms();
        let saved = save(&self.dir, &state.record);
        drop(state);
        drop(guard);
        saved
    }
}

/// Appends part `number`'s digest to `dir/parts.log` and syncs it.
fn journal(dir: &Path, number: usize, digest: &[u8; 32]) -> std::io::Result<()> {
    use std::io::Write;
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("parts.log"))?;
    log.write_all(format!("{number} {}\n", hex::encode(digest)).as_bytes())?;
    log.sync_data()
}

/// The digests `dir/parts.log` records for `parts` parts (a torn last line, from a crash
/// mid-append, is not a part).
fn journaled(dir: &Path, parts: usize) -> Vec<Option<String>> {
    let mut digests = vec![None; parts];
    let text = std::fs::read_to_string(dir.join("parts.log")).unwrap_or_default();
    for line in text.lines() {
        let Some((number, digest)) = line.split_once(' ') else {
            continue;
        };
        let number: usize = number.parse().unwrap_or(usize::MAX);
        let valid = digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit());
        if number < parts && valid {
            digests[number] = Some(digest.to_string());
        }
    }
    digests
}

/// Writes `record` to `dir/session.json` atomically (a new file, synced, renamed).
fn save(dir: &Path, record: &Record) -> std::io::Result<()> {
    let tmp = dir.join("session.json.tmp");
    let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    {
        use std::io::Write;
        let mut file = File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_data()?;
    }
    std::fs::rename(tmp, dir.join("session.json"))
}

/// Every upload of this server.
#[derive(Debug)]
pub(crate) struct Uploads {
    dir: PathBuf,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

/// What a new upload asks for.
pub(crate) struct NewUpload<'a> {
    pub(crate) owner: &'a str,
    pub(crate) size: u64,
    pub(crate) part_size: u64,
    /// Most open uploads the owner may have.
    pub(crate) max_open: u64,
}

impl Uploads {
    /// The uploads under `dir`, read back from their records (made when missing).
    pub(crate) fn open(dir: PathBuf) -> std::io::Result<Uploads> {
        std::fs::create_dir_all(&dir)?;
        let mut sessions = HashMap::new();
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            match reopen(&path) {
                Some(session) => {
                    sessions.insert(session.id.clone(), Arc::new(session));
                }
                None => {
                    tracing::warn!(path = %path.display(), "removing an unreadable upload");
                    let _ = std::fs::remove_dir_all(&path);
                }
            }
        }
        Ok(Uploads {
            dir,
            sessions: Mutex::new(sessions),
        })
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes an upload: its record and its data file, allocated at full size (a disk that
    /// cannot hold it refuses here, not mid-way).
    pub(crate) fn create(&self, new: &NewUpload<'_>) -> Result<Arc<Session>, PartsError> {
        let open = self
            .sessions()
            .values()
            .filter(|s| s.owner == new.owner && s.lock().record.arena.is_none())
            .count() as u64;
        if open >= new.max_open {
            return Err(PartsError::TooMany {
                limit: new.max_open,
            });
        }
        let id = uuid::Uuid::now_v7().to_string();
        let dir = self.dir.join(&id);
        std::fs::create_dir(&dir)?;
        let made = (|| {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(dir.join("data"))?;
            storage::allocate(&file, new.size)?;
            let now = crate::store::now_ms();
            let record = Record {
                id: id.clone(),
                owner: new.owner.to_string(),
                size: new.size,
                part_size: new.part_size,
                created_ms: now,
                touched_ms: now,
                digests: vec![None; new.size.div_ceil(new.part_size) as usize],
                arena: None,
            };
            save(&dir, &record)?;
            Ok::<_, std::io::Error>(session(dir.clone(), file, record))
        })();
        let session = match made {
            Ok(session) => Arc::new(session),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(PartsError::Io(e));
            }
        };
        self.sessions().insert(id, session.clone());
        Ok(session)
    }

    /// The upload `id` of `owner` (another user's is not found).
    pub(crate) fn get(&self, id: &str, owner: &str) -> Result<Arc<Session>, PartsError> {
        self.sessions()
            .get(id)
            .filter(|s| s.owner == owner)
            .cloned()
            .ok_or_else(|| PartsError::NotFound(id.to_string()))
    }

    /// Removes the upload `id` of `owner` with its files.
    pub(crate) fn remove(&self, id: &str, owner: &str) -> Result<(), PartsError> {
        let session = self.get(id, owner)?;
        self.drop_session(&session);
        Ok(())
    }

    fn drop_session(&self, session: &Arc<Session>) {
        session.lock().removed = true;
        self.sessions().remove(&session.id);
        let _ = std::fs::remove_dir_all(&session.dir);
    }

    /// Removes the uploads untouched since `cutoff_ms` that nothing is writing or using;
    /// how many.
    pub(crate) fn expire(&self, cutoff_ms: i64) -> usize {
        let idle: Vec<Arc<Session>> = self
            .sessions()
            .values()
            .filter(|s| {
                let state = s.lock();
                state.record.touched_ms < cutoff_ms
                    && !state.finishing
                    && !state.in_flight.contains(&true)
            })
            .cloned()
            .collect();
        for session in &idle {
            self.drop_session(session);
        }
        idle.len()
    }

    /// Ends an upload whose bytes were refused as an arena: they can only be refused again.
    pub(crate) fn discard(&self, session: &Arc<Session>) {
        self.drop_session(session);
    }
}

fn session(dir: PathBuf, file: File, record: Record) -> Session {
    let parts = record.digests.len();
    Session {
        id: record.id.clone(),
        owner: record.owner.clone(),
        size: record.size,
        part_size: record.part_size,
        dir,
        file,
        state: Mutex::new(State {
            record,
            in_flight: vec![false; parts],
            finishing: false,
            removed: false,
        }),
    }
}

/// An upload read back from `dir` at start-up; `None` when its record is unreadable, or
/// its data file is gone although no job used it.
fn reopen(dir: &Path) -> Option<Session> {
    let mut record: Record =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).ok()?).ok()?;
    if record.part_size == 0 || record.size == 0 {
        return None;
    }
    let parts = usize::try_from(record.size.div_ceil(record.part_size)).ok()?;
    record.digests = journaled(dir, parts);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("data"));
    let file = match (file, &record.arena) {
        (Ok(file), _) => file,
        // A used upload's data became the arena: a placeholder descriptor will do.
        (Err(_), Some(_)) => File::open(dir).ok()?,
        (Err(_), None) => return None,
    };
    Some(session(dir.to_path_buf(), file, record))
}

/// The key of a file of `size` bytes stored as it came, from the SHA-256 of each of its
/// parts of `part_size` bytes (the last one shorter), in order: SHA-256 over the part size,
/// the size and those digests (a domain of its own: it never equals a whole file's SHA-256
/// by construction of the prefix). An upload in parts and a file named by reference
/// ([`crate::import`]) copied in parts of the same size get the same key.
pub(crate) fn parts_key(
    part_size: u64,
    size: u64,
    digests: impl IntoIterator<Item = [u8; 32]>,
) -> String {
    let mut hash = Sha256::new();
    hash.update(b"egsolve upload in parts v1\0");
    hash.update(part_size.to_le_bytes());
    hash.update(size.to_le_bytes());
    for digest in digests {
        hash.update(digest);
    }
    hex::encode(hash.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(owner: &str, size: u64, part_size: u64) -> NewUpload<'_> {
        NewUpload {
            owner,
            size,
            part_size,
            max_open: 2,
        }
    }

    fn digest(bytes: &[u8]) -> [u8; 32] {
        Sha256::digest(bytes).into()
    }

    #[test]
    fn parts_are_claimed_once_and_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let uploads = Uploads::open(dir.path().join("uploads")).unwrap();
        let session = uploads.create(&new("alice", 10, 4)).unwrap();
        assert_eq!(session.parts(), 3);
        assert!(matches!(
            uploads.get(&session.id, "bob"),
            Err(PartsError::NotFound(_))
        ));
        let (a, b) = (digest(b"abcd"), digest(b"efgh"));
        let slot = session.begin_part(1, &b).unwrap().unwrap();
        assert_eq!((slot.offset, slot.len), (4, 4));
        // A second writer of the same part waits; dropping the first frees it.
        assert!(matches!(
            session.begin_part(1, &b),
            Err(PartsError::InProgress(1))
        ));
        drop(slot);
        let slot = session.begin_part(1, &b).unwrap().unwrap();
        session.receive_part(slot, &b).unwrap();
        assert!(session.begin_part(1, &b).unwrap().is_none());
        assert!(matches!(
            session.begin_part(1, &a),
            Err(PartsError::Conflict(1))
        ));
        let last = session.begin_part(2, &a).unwrap().unwrap();
        assert_eq!(last.len, 2);
        assert!(matches!(
            session.begin_part(3, &a),
            Err(PartsError::NoSuchPart { .. })
        ));
        drop(last);
        match session.begin_finish() {
            Err(PartsError::Incomplete { missing }) => assert_eq!(missing, vec![0, 2]),
            _ => panic!("an upload with missing parts finished"),
        }
        let id = session.id.clone();
        // A crash mid-append leaves a torn line: not a part.
        {
            use std::io::Write;
            let log = dir.path().join("uploads").join(&id).join("parts.log");
            let mut log = std::fs::OpenOptions::new().append(true).open(log).unwrap();
            log.write_all(b"2 3b00").unwrap();
        }
        drop((session, uploads));
        let uploads = Uploads::open(dir.path().join("uploads")).unwrap();
        let session = uploads.get(&id, "alice").unwrap();
        assert_eq!(session.view(0)["received"], serde_json::json!([1]));
        assert_eq!(uploads.expire(i64::MAX), 1);
        assert!(uploads.get(&id, "alice").is_err());
    }

    #[test]
    fn a_user_has_a_bounded_number_of_open_uploads() {
        let dir = tempfile::tempdir().unwrap();
        let uploads = Uploads::open(dir.path().to_path_buf()).unwrap();
        uploads.create(&new("alice", 1, 1)).unwrap();
        let second = uploads.create(&new("alice", 1, 1)).unwrap();
        assert!(matches!(
            uploads.create(&new("alice", 1, 1)),
            Err(PartsError::TooMany { limit: 2 })
        ));
        uploads.create(&new("bob", 1, 1)).unwrap();
        uploads.remove(&second.id, "alice").unwrap();
        uploads.create(&new("alice", 1, 1)).unwrap();
    }
}
