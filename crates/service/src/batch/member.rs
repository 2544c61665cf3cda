//! A batch member's arena stored from memory: the member is in memory already (the archive
//! was), so it is decompressed, checked, hashed and parsed there, with no spool threads,
//! and only a new arena touches the disk. Files are written and synced under temporary
//! names (each in its member's task), all before any is placed, and the arenas directory is
//! synced once after: the same durability as a single upload, for one pass over the batch
//! instead of two fsyncs per member. An identical arena stored before costs no file operation at all. `egb`
//! members (read from a file, mapped) take the single upload's path instead.
//!
//! Members are taken largest first, each by the next free thread, and a caller's step runs
//! on each parsed member in the same task (the batch solves its small members there): the
//! largest members, whose parse and solve bound the batch, start at once, and parsing the
//! others overlaps with their solves.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Stores every member (`None`: an `egb` member, for the single upload's path), largest
/// first on the pool's threads, running `then` on each stored member in the same task; new
/// files are synced and placed before this returns.
pub fn store_all<T: Send>(
    members: &[Vec<u8>],
    target: &UploadTarget,
    then: impl Fn(&StoredArena) -> Option<T> + Sync,
) -> Vec<Option<Stored<T>>> {
    let start = std::time::Instant::now();
    let prepared: Vec<Option<Made<T>>> = largest_first(members, |raw| {
        let prepared = prepare(raw, target).transpose()?;
        Some(prepared.map(|p| {
            let made = then(&p.stored);
            (p, made)
        }))
    });
    let prepared_at = start.elapsed();
    let pending: Vec<(&PathBuf, PathBuf)> = prepared
        .iter()
        .filter_map(|p| match p {
            Some(Ok((
                Prepared {
                    stored,
                    pending: Some(tmp),
                },
                _,
            ))) => Some((tmp, target.arenas_dir.join(&stored.hash))),
            _ => None,
        })
        .collect();
    let placed = place_all(&pending, target);
    tracing::debug!(
        prepare_ms = prepared_at.as_secs_f64() * 1e3,
        place_ms = (start.elapsed() - prepared_at).as_secs_f64() * 1e3,
        new_files = pending.len(),
        "batch members"
    );
    prepared
        .into_iter()
        .map(|p| {
            p.map(|p| {
                let (p, made) = p?;
                match (&p.pending, &placed) {
                    (Some(_), Err(e)) => {
                        Err(io_failure(std::io::Error::new(e.kind(), e.to_string())))
                    }
                    _ => Ok((p.stored, made)),
                }
            })
        })
        .collect()
}

/// `f` of every item, in the items' order, computed largest item first: each of the pool's
/// threads takes the largest item not taken yet when it is free (rayon's own splitting would
/// leave the largest items of a sorted list to one thread, one after another).
fn largest_first<R: Send>(items: &[Vec<u8>], f: impl Fn(&[u8]) -> R + Sync) -> Vec<R> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(items[i].len()));
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let take = || {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let made = f(&items[i]);
            *slots[i]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(made);
        }
    };
    rayon::scope(|scope| {
        for _ in 0..rayon::current_num_threads().min(items.len()) {
            scope.spawn(|_| take());
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            let made = slot
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            made.expect("every item is taken")
        })
        .collect()
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

    #[test]
    fn every_item_is_made_once_in_its_place() {
        let items: Vec<Vec<u8>> = (0..100).map(|i| vec![0; (i * 37) % 101]).collect();
        let calls = AtomicUsize::new(0);
        let made = largest_first(&items, |raw| {
            calls.fetch_add(1, Ordering::Relaxed);
            raw.len()
        });
        assert_eq!(calls.into_inner(), items.len());
        assert_eq!(made, items.iter().map(Vec::len).collect::<Vec<_>>());
        assert!(largest_first(&[], |raw: &[u8]| raw.len()).is_empty());
    }
}
