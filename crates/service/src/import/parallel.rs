//! Large plain `egb` files named by reference, copied into the store in parts on several
//! threads. One thread reading, hashing and writing runs at about 1.2 GB/s (11–12 s of a
//! 10^9-edge job on the H200 host). Here the copy is a shared mapping of the new file:
//! each thread allocates its part's pages (`MADV_POPULATE_WRITE`, which reports a full
//! file system as an error where a plain write through the mapping would raise SIGBUS),
//! reads the source into them (`pread`) and hashes them (SHA-256). Writes through the
//! mapping take no file lock, so the parts proceed side by side; `pwrite` calls to one
//! file serialize on its lock (on tmpfs, H200 host: 14.25 GB in 5.7 s with the pages
//! reserved up front by `posix_fallocate`, itself one thread zeroing every page). Where
//! the kernel lacks `MADV_POPULATE_WRITE` (before Linux 5.14) the file is reserved and
//! written with `pwrite`.
//!
//! The arena's key is the parts key ([`crate::parts::session::parts_key`]) of parts of
//! [`PART_BYTES`] (so the same file sent in parts of that size gets the same key); like an
//! upload in parts, the file is then mapped and checked by its worker, not at submission.
//! Parts are small enough that a file of 10^7 edges (142 MB) is spread over every core:
//! each thread's page allocation runs at well under 1 GB/s on tmpfs (H200 host: 124 ms for
//! that file in 3 parts of 64 MiB).
//!
//! The bytes hashed are the bytes written: the job is about the copy, whatever happens to
//! the original afterwards. A read that ends early (the file was truncated) is reported as
//! [`CopyError::Changed`]; the caller compares the file's size and time stamps after the copy
//! too, as for a copy by one thread.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::parallel_write::{page_size, populate};
use crate::storage;

/// Bytes per part (and the smallest file copied this way).
pub(crate) const PART_BYTES: u64 = 8 << 20;
/// Bytes per read inside a part (each thread holds one such buffer).
const READ_BYTES: usize = 4 << 20;
/// Most threads one copy uses.
pub(crate) const MAX_THREADS: usize = 16;

/// Why a copy in parts stopped.
#[derive(Debug)]
pub(super) enum CopyError {
    /// The file changed while it was copied: it ended before its size when opened, or
    /// (the caller's checks) its size or time stamps differ afterwards.
    Changed,
    /// Reading or writing failed.
    Io(std::io::Error),
}

/// Copies `source` (`len` bytes) into `copy` (a new, empty file) in parts of [`PART_BYTES`]
/// on up to `threads` threads, through a shared mapping of `copy` where the kernel can
/// populate one, else reserved and written; every part's SHA-256 (of the bytes stored), in
/// order.
pub(super) fn copy_in_parts(
    source: &File,
    len: u64,
    copy: &File,
    threads: usize,
) -> Result<Vec<[u8; 32]>, CopyError> {
    copy.set_len(len).map_err(CopyError::Io)?;
    // SAFETY: `copy` is the server's own new file, which nothing else maps, writes or
    // truncates; its pages are populated (or the failure reported) before they are written.
    let mapped = unsafe { memmap2::MmapMut::map_mut(copy) };
    let mut map = match mapped {
        Ok(map) if populate(&map[..page_size()]).is_ok() => map,
        _ => {
            storage::allocate(copy, len).map_err(CopyError::Io)?;
            return hash_in_parts(source, len, Some(copy), threads);
        }
    };
    let digests = fill_in_parts(source, &mut map, threads, populate)?;
    map.flush().map_err(CopyError::Io)?;
    Ok(digests)
}

/// Reads `source` into `dest` (its first `dest.len()` bytes, in memory) in parts of
/// [`PART_BYTES`] on up to `threads` threads; every part's SHA-256, in order.
pub(super) fn read_in_parts(
    source: &File,
    dest: &mut [u8],
    threads: usize,
) -> Result<Vec<[u8; 32]>, CopyError> {
    fill_in_parts(source, dest, threads, |_| Ok(()))
}

/// Fills `dest` from `source` part by part on up to `threads` threads, running `prepare`
/// on each part first (the pages' allocation, for a mapped file); the parts' digests.
fn fill_in_parts(
    source: &File,
    dest: &mut [u8],
    threads: usize,
    prepare: impl Fn(&[u8]) -> std::io::Result<()> + Sync,
) -> Result<Vec<[u8; 32]>, CopyError> {
    let len = dest.len() as u64;
    let parts = Mutex::new(dest.chunks_mut(PART_BYTES as usize).enumerate());
    in_parts(len, threads, |_| {
        let Some((part, stored)) = parts.lock().unwrap_or_else(PoisonError::into_inner).next()
        else {
            return Ok(None);
        };
        prepare(stored).map_err(CopyError::Io)?;
        source
            .read_exact_at(stored, part as u64 * PART_BYTES)
            .map_err(short_or_io)?;
        Ok(Some((part, Sha256::digest(&*stored).into())))
    })
}

fn short_or_io(e: std::io::Error) -> CopyError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        CopyError::Changed
    } else {
        CopyError::Io(e)
    }
}

/// Reads `source` (`len` bytes) in parts of [`PART_BYTES`] on up to `threads` threads,
/// writing each part at its offset of `copy` when there is one (reserved by the caller);
/// every part's SHA-256, in order.
pub(super) fn hash_in_parts(
    source: &File,
    len: u64,
    copy: Option<&File>,
    threads: usize,
) -> Result<Vec<[u8; 32]>, CopyError> {
    let next = AtomicUsize::new(0);
    let parts = part_count(len)?;
    in_parts(len, threads, |buffer| {
        let part = next.fetch_add(1, Ordering::Relaxed);
        if part >= parts {
            return Ok(None);
        }
        let digest = copy_part(source, len, copy, part as u64, buffer)?;
        Ok(Some((part, digest)))
    })
}

fn part_count(len: u64) -> Result<usize, CopyError> {
    usize::try_from(len.div_ceil(PART_BYTES)).map_err(|e| CopyError::Io(std::io::Error::other(e)))
}

/// Runs `next_part` on up to `threads` threads (each with a read buffer of its own) until
/// it returns `None` on every thread; the parts' digests it returned, in order. The first
/// failure stops the other threads at their next part.
fn in_parts<F>(len: u64, threads: usize, next_part: F) -> Result<Vec<[u8; 32]>, CopyError>
where
    F: Fn(&mut Vec<u8>) -> Result<Option<(usize, [u8; 32])>, CopyError> + Sync,
{
    let parts = part_count(len)?;
    let digests = Mutex::new(vec![[0u8; 32]; parts]);
    let failed = AtomicBool::new(false);
    let first_error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, parts.max(1)) {
            scope.spawn(|| {
                let mut buffer = Vec::new();
                while !failed.load(Ordering::Relaxed) {
                    match next_part(&mut buffer) {
                        Ok(None) => return,
                        Ok(Some((part, digest))) => {
                            digests.lock().unwrap_or_else(PoisonError::into_inner)[part] = digest;
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            first_error
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .get_or_insert(e);
                            return;
                        }
                    }
                }
            });
        }
    });
    match first_error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        Some(e) => Err(e),
        None => Ok(digests.into_inner().unwrap_or_else(PoisonError::into_inner)),
    }
}

/// Part `part` of `source`: read, hashed and written to `copy` at the same offset.
fn copy_part(
    source: &File,
    len: u64,
    copy: Option<&File>,
    part: u64,
    buffer: &mut Vec<u8>,
) -> Result<[u8; 32], CopyError> {
    buffer.resize(READ_BYTES, 0);
    let start = part * PART_BYTES;
    let end = (start + PART_BYTES).min(len);
    let mut hash = Sha256::new();
    let mut offset = start;
    while offset < end {
        let want = usize::try_from(end - offset).map_or(buffer.len(), |n| n.min(buffer.len()));
        let chunk = &mut buffer[..want];
        source.read_exact_at(chunk, offset).map_err(short_or_io)?;
        hash.update(&*chunk);
        if let Some(copy) = copy {
            copy.write_all_at(chunk, offset).map_err(CopyError::Io)?;
        }
        offset += want as u64;
    }
    Ok(hash.finalize().into())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::parts::session::parts_key;

    /// A file of `len` bytes of a fixed pattern.
    fn patterned(len: u64) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let block: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
        let mut left = len;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            file.write_all(&block[..n]).unwrap();
            left -= n as u64;
        }
        file.flush().unwrap();
        file
    }

    #[test]
    fn the_copy_equals_the_source_and_each_digest_its_part() {
        let len = 2 * PART_BYTES + 12_345;
        let source = patterned(len);
        let bytes = std::fs::read(source.path()).unwrap();
        let copy = tempfile::tempfile().unwrap();
        let digests = copy_in_parts(source.as_file(), len, &copy, 4).unwrap();
        let mut copied = vec![0u8; bytes.len()];
        copy.read_exact_at(&mut copied, 0).unwrap();
        assert!(copied == bytes, "the copy differs from the source");
        let expected: Vec<[u8; 32]> = bytes
            .chunks(PART_BYTES as usize)
            .map(|part| Sha256::digest(part).into())
            .collect();
        assert_eq!(digests, expected);
        // Mapped or written, one thread or many, hashed only or copied: the same digests.
        let written = tempfile::tempfile().unwrap();
        written.set_len(len).unwrap();
        let by_writes = hash_in_parts(source.as_file(), len, Some(&written), 3).unwrap();
        assert_eq!(by_writes, digests);
        let mut copied = vec![0u8; bytes.len()];
        written.read_exact_at(&mut copied, 0).unwrap();
        assert!(copied == bytes, "the written copy differs from the source");
        let alone = hash_in_parts(source.as_file(), len, None, 1).unwrap();
        assert_eq!(
            parts_key(PART_BYTES, len, alone),
            parts_key(PART_BYTES, len, expected)
        );
    }

    #[test]
    fn a_file_shorter_than_its_size_is_reported_changed() {
        let source = patterned(PART_BYTES / 2);
        let err = hash_in_parts(source.as_file(), PART_BYTES + 1, None, 2).unwrap_err();
        assert!(matches!(err, CopyError::Changed), "{err:?}");
        let copy = tempfile::tempfile().unwrap();
        let err = copy_in_parts(source.as_file(), PART_BYTES + 1, &copy, 2).unwrap_err();
        assert!(matches!(err, CopyError::Changed), "{err:?}");
    }
}
