//! A batch member's arena stored from memory: the member is in memory already (the archive
//! was), so it is decompressed, checked, hashed and parsed there, with no spool threads,
//! and only a new arena touches the disk. Files are written and synced under temporary
//! names (each in its member's task), all before any is placed, and the arenas directory is
//! synced once after: the same durability as a single upload, for one pass over the batch
//! instead of two fsyncs per member. An identical arena stored before costs no file operation at all. `egb`
//! members (read from a file, mapped) take the single upload's path instead.
//!
//! Members are stored while the rest of the body streams in: each free thread of the pool
//! takes the largest member that has arrived and is not taken yet (the CLI sends a batch's
//! largest files first, so that the parses and solves that bound the batch start first),
//! and a caller's step runs on each parsed member in the same task (the batch solves its
//! small members there).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::preparse::{self, ParseSource};
use crate::storage;
use crate::upload::{self, Encoding, StoredArena, UploadError, UploadPhases, UploadTarget};

/// A member stored (its new file, if any, still under its temporary name).
pub struct Prepared {
    /// The arena, as a single upload would have stored it.
    pub stored: StoredArena,
    /// The temporary file to sync and place, for bytes not stored before.
    pending: Option<PathBuf>,
}

/// A member stored, with what the caller's step made of it.
pub type Stored<T> = Result<(StoredArena, Option<T>), UploadError>;

/// A member prepared (its file not placed yet), with what the caller's step made of it.
type Made<T> = Result<(Prepared, Option<T>), UploadError>;

/// A member as the batch has it: done (prepared, or stored), or an `egb` member's bytes, for
/// the single upload's path.
pub enum Member<S> {
    /// Prepared ([`store_as_they_arrive`]) or stored ([`place`]).
    Done(S),
    /// An `egb` member, as it came.
    Egb(Vec<u8>),
}

/// Members prepared, their new files not placed yet: [`place`] them, or [`discard`] them.
pub type Received<T> = Vec<Member<Made<T>>>;

/// Prepares every member that `arrive` hands to its callback on the pool's threads, each
/// free thread taking the largest member arrived and not taken yet, and runs `then` on each
/// prepared member in the same task. Returns when `arrive` has returned and every member is
/// done, in arrival order; on `arrive`'s error the members' new files are removed.
pub fn store_as_they_arrive<T: Send, E>(
    target: &UploadTarget,
    then: impl Fn(&StoredArena) -> Option<T> + Sync,
    arrive: impl FnOnce(&mut dyn FnMut(Vec<u8>)) -> Result<(), E>,
) -> Result<Received<T>, E> {
    let (sender, receiver) = std::sync::mpsc::channel();
    // Arrived and not taken: (size, arrival index reversed, bytes), the largest on top.
    let waiting = Mutex::new(BinaryHeap::<(usize, Reverse<usize>, Vec<u8>)>::new());
    let mut count = 0;
    let (then, waiting_ref) = (&then, &waiting);
    let arrived = rayon::in_place_scope(|scope| {
        arrive(&mut |raw: Vec<u8>| {
            lock(waiting_ref).push((raw.len(), Reverse(count), raw));
            count += 1;
            let sender = sender.clone();
            // One task per member; each takes whichever member is largest when it runs.
            scope.spawn(move |_| {
                let (_, Reverse(index), raw) = lock(waiting_ref).pop().expect("one per task");
                let member = match prepare(&raw, target) {
                    Ok(None) => Member::Egb(raw),
                    Ok(Some(prepared)) => {
                        let made = then(&prepared.stored);
                        Member::Done(Ok((prepared, made)))
                    }
                    Err(e) => Member::Done(Err(e)),
                };
                // The receiver lives until every task has ended (the scope waits for them).
                let _ = sender.send((index, member));
            });
        })
    });
    drop(sender);
    let mut slots: Vec<Option<Member<Made<T>>>> = (0..count).map(|_| None).collect();
    for (index, member) in receiver {
        slots[index] = Some(member);
    }
    let received = slots
        .into_iter()
        .map(|slot| slot.expect("every member's task sends it"))
        .collect();
    match arrived {
        Ok(()) => Ok(received),
        Err(e) => {
            discard(received);
            Err(e)
        }
    }
}

/// `mutex`'s guard, also after a panic in another holder (the heap stays whole: pushes and
/// pops do not panic midway).
fn lock<V>(mutex: &Mutex<V>) -> MutexGuard<'_, V> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Moves the prepared members' new files (synced already) to their content addresses and
/// syncs the directory once: after this, each member is stored as a single upload would
/// have stored it.
pub fn place<T>(received: Received<T>, target: &UploadTarget) -> Vec<Member<Stored<T>>> {
    let start = Instant::now();
    let pending: Vec<(&PathBuf, PathBuf)> = received
        .iter()
        .filter_map(|member| match member {
            Member::Done(Ok((
                Prepared {
                    stored,
                    pending: Some(tmp),
                },
                _,
            ))) => Some((tmp, target.arenas_dir.join(&stored.hash))),
            _ => None,
        })
        .collect();
    let new_files = pending.len();
    let placed = place_all(&pending, target);
    drop(pending);
    tracing::debug!(
        place_ms = start.elapsed().as_secs_f64() * 1e3,
        new_files,
        "batch members placed"
    );
    received
        .into_iter()
        .map(|member| match member {
            Member::Egb(raw) => Member::Egb(raw),
            Member::Done(made) => {
                Member::Done(made.and_then(|(p, made)| match (&p.pending, &placed) {
                    (Some(_), Err(e)) => {
                        Err(io_failure(std::io::Error::new(e.kind(), e.to_string())))
                    }
                    _ => Ok((p.stored, made)),
                }))
            }
        })
        .collect()
}

/// Removes the prepared members' new files: the batch was refused after they were
/// prepared (a bad archive, a replayed request).
pub fn discard<T>(received: Received<T>) {
    for member in received {
        if let Member::Done(Ok((
            Prepared {
                pending: Some(tmp), ..
            },
            _,
        ))) = member
        {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Decompresses, checks, hashes, writes (when new) and parses one member; `None` for `egb`.
fn prepare(raw: &[u8], target: &UploadTarget) -> Result<Option<Prepared>, UploadError> {
    let start = Instant::now();
    let text = decompressed(raw, target.max_bytes)?;
    if text.is_empty() {
        return Err(UploadError::Empty);
    }
    if text.starts_with(&egsolve_core::format::egb::MAGIC) {
        return Ok(None);
    }
    upload::check_text(&text[..text.len().min(4096)])?;
    let received = Instant::now();
    let hash = hex::encode(Sha256::digest(&text));
    let hashed = Instant::now();
    let pending = if target.arenas_dir.join(&hash).exists() {
        None
    } else {
        // Stored as it came (compressed if it came so), like a single upload.
        let tmp = target.tmp_dir.join(uuid::Uuid::now_v7().to_string());
        // Synced here, in the member's own task, while other members parse and solve.
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(raw)?;
            f.sync_all()
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_failure(e));
        }
        Some(tmp)
    };
    let written = Instant::now();
    let bytes = text.len() as u64;
    let parse = target.parse.as_ref().filter(|p| bytes <= p.limit);
    let parsed = match parse {
        Some(request) => match preparse::parse(&ParseSource::Text(text.into_owned()), request) {
            (Ok(game), seconds) => Some((game, seconds)),
            (Err(e), _) => {
                if let Some(tmp) = &pending {
                    let _ = std::fs::remove_file(tmp);
                }
                return Err(UploadError::Parse(e));
            }
        },
        None => None,
    };
    let phases = UploadPhases {
        receive: received.duration_since(start).as_secs_f64(),
        hash: hashed.duration_since(received).as_secs_f64(),
        write: written.duration_since(hashed).as_secs_f64(),
        parse: parsed.as_ref().map_or(0.0, |(_, s)| *s),
        ..UploadPhases::default()
    };
    Ok(Some(Prepared {
        stored: StoredArena {
            hash,
            bytes,
            seconds: start.elapsed().as_secs_f64(),
            phases,
            parsed,
            source: None,
        },
        pending,
    }))
}

/// `raw` decompressed as its magic bytes say, refused past `max_bytes`.
fn decompressed(raw: &[u8], max_bytes: u64) -> Result<Cow<'_, [u8]>, UploadError> {
    let encoding = Encoding::sniff(raw);
    if encoding == Encoding::Identity {
        if raw.len() as u64 > max_bytes {
            return Err(UploadError::TooLarge { limit: max_bytes });
        }
        return Ok(Cow::Borrowed(raw));
    }
    let bad = |e: std::io::Error| UploadError::BadCompression(e.to_string());
    let mut text = Vec::new();
    upload::decoder(encoding, raw)
        .map_err(bad)?
        .take(max_bytes + 1)
        .read_to_end(&mut text)
        .map_err(bad)?;
    if text.len() as u64 > max_bytes {
        return Err(UploadError::TooLarge { limit: max_bytes });
    }
    Ok(Cow::Owned(text))
}

/// Moves every new file (synced already) to its content address and syncs the directory
/// once. On a failure the temporary files are removed.
fn place_all(pending: &[(&PathBuf, PathBuf)], target: &UploadTarget) -> std::io::Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let placed = (|| {
        for (tmp, path) in pending {
            if path.exists() {
                std::fs::remove_file(tmp)?; // stored meanwhile by another upload
            } else {
                std::fs::rename(tmp, path)?;
            }
        }
        std::fs::File::open(&target.arenas_dir)?.sync_all()
    })();
    if placed.is_err() {
        for (tmp, _) in pending {
            let _ = std::fs::remove_file(tmp);
        }
    }
    placed
}

/// A file operation's failure: a full disk is the store's answer (507), anything else the
/// server's.
fn io_failure(e: std::io::Error) -> UploadError {
    if storage::is_full(&e) {
        UploadError::InsufficientStorage(storage::NoRoom::Full(e.to_string()))
    } else {
        UploadError::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(dir: &std::path::Path) -> UploadTarget {
        let (tmp_dir, arenas_dir) = (dir.join("tmp"), dir.join("arenas"));
        std::fs::create_dir_all(&tmp_dir).unwrap();
        std::fs::create_dir_all(&arenas_dir).unwrap();
        UploadTarget {
            encoding: Encoding::Sniff,
            max_bytes: 1 << 20,
            tmp_dir,
            arenas_dir,
            parse: None,
            written: None,
            copy_behind: None,
        }
    }

    fn game(n: usize) -> Vec<u8> {
        format!("parity {n};\n0 1 0 0;\n").into_bytes()
    }

    /// Members are answered in arrival order, each with its step's result, and placed at
    /// their content addresses; a member that is not a game is refused on its own.
    #[test]
    fn members_are_stored_in_arrival_order_and_placed() {
        let dir = tempfile::tempdir().unwrap();
        let target = target(dir.path());
        let members = [game(1), game(2), b"\x00\x01 not text".to_vec(), game(3)];
        let received = store_as_they_arrive(
            &target,
            |stored| Some(stored.bytes),
            |push| {
                for raw in &members {
                    push(raw.clone());
                }
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        let placed = place(received, &target);
        assert_eq!(placed.len(), members.len());
        for (member, raw) in placed.iter().zip(&members) {
            match member {
                Member::Done(Ok((stored, made))) => {
                    assert_eq!(stored.hash, hex::encode(Sha256::digest(raw)));
                    assert_eq!(*made, Some(raw.len() as u64));
                    assert!(target.arenas_dir.join(&stored.hash).exists());
                }
                Member::Done(Err(e)) => assert!(raw.starts_with(b"\x00"), "{e}"),
                Member::Egb(_) => panic!("no egb member here"),
            }
        }
        assert_eq!(std::fs::read_dir(&target.tmp_dir).unwrap().count(), 0);
    }

    /// When the archive turns out bad after members were prepared, their files are removed
    /// and nothing is placed.
    #[test]
    fn an_arrival_error_removes_the_prepared_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = target(dir.path());
        let refused = store_as_they_arrive(
            &target,
            |_| None::<()>,
            |push| {
                push(game(1));
                push(game(2));
                Err("a bad archive")
            },
        );
        assert_eq!(refused.err(), Some("a bad archive"));
        assert_eq!(std::fs::read_dir(&target.tmp_dir).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&target.arenas_dir).unwrap().count(), 0);
    }
}
