//! Large plain `egb` files named by reference, copied into the store in parts on several
//! threads: each part is read (`pread`), hashed (SHA-256) and written at its offset
//! (`pwrite`). One thread reading, hashing and writing runs at about 1.2 GB/s (11–12 s of
//! a 10^9-edge job on the H200 host); parts on every core run at what the file systems
//! allow.
//!
//! The arena's key is the parts key ([`crate::parts::session::parts_key`]) of parts of
//! [`PART_BYTES`], the CLI's default part size for uploads in parts, so the same file sent
//! in parts of that size gets the same key; like an upload in parts, the file is then
//! mapped and checked by its worker, not at submission.
//!
//! The bytes hashed are the bytes written: the job is about the copy, whatever happens to
//! the original afterwards. A read that ends early (the file was truncated) is reported as
//! [`CopyError::Short`]; the caller compares the file's size and time stamps after the copy
//! too, as for a copy by one thread.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};

/// Bytes per part (and the smallest file copied this way).
pub(crate) const PART_BYTES: u64 = 64 << 20;
/// Bytes per read inside a part (each thread holds one such buffer).
const READ_BYTES: usize = 8 << 20;
/// Most threads one copy uses.
pub(crate) const MAX_THREADS: usize = 16;

/// Why a copy in parts stopped.
#[derive(Debug)]
pub(super) enum CopyError {
    /// The file ended before its size when opened: it was truncated meanwhile.
    Short,
    /// Reading or writing failed.
    Io(std::io::Error),
}

/// Reads `source` (`len` bytes) in parts of [`PART_BYTES`] on up to `threads` threads,
/// writing each part at its offset of `copy` when there is one; every part's SHA-256, in
/// order. The first failure stops the other threads at their next part.
pub(super) fn copy_in_parts(
    source: &File,
    len: u64,
    copy: Option<&File>,
    threads: usize,
) -> Result<Vec<[u8; 32]>, CopyError> {
    let parts = usize::try_from(len.div_ceil(PART_BYTES))
        .map_err(|e| CopyError::Io(std::io::Error::other(e)))?;
    let digests = Mutex::new(vec![[0u8; 32]; parts]);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, parts.max(1)) {
            scope.spawn(|| {
                let mut buffer = vec![0u8; READ_BYTES];
                while !failed.load(Ordering::Relaxed) {
                    let part = next.fetch_add(1, Ordering::Relaxed);
                    if part >= parts {
                        return;
                    }
                    match copy_part(source, len, copy, part as u64, &mut buffer) {
                        Ok(digest) => {
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
    buffer: &mut [u8],
) -> Result<[u8; 32], CopyError> {
    let start = part * PART_BYTES;
    let end = (start + PART_BYTES).min(len);
    let mut hash = Sha256::new();
    let mut offset = start;
    while offset < end {
        let want = usize::try_from(end - offset).map_or(buffer.len(), |n| n.min(buffer.len()));
        let chunk = &mut buffer[..want];
        source.read_exact_at(chunk, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                CopyError::Short
            } else {
                CopyError::Io(e)
            }
        })?;
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
        copy.set_len(len).unwrap();
        let digests = copy_in_parts(source.as_file(), len, Some(&copy), 4).unwrap();
        let mut copied = vec![0u8; bytes.len()];
        copy.read_exact_at(&mut copied, 0).unwrap();
        assert!(copied == bytes, "the copy differs from the source");
        let expected: Vec<[u8; 32]> = bytes
            .chunks(PART_BYTES as usize)
            .map(|part| Sha256::digest(part).into())
            .collect();
        assert_eq!(digests, expected);
        // One thread or many, hashed only or copied: the same digests, so the same key.
        let alone = copy_in_parts(source.as_file(), len, None, 1).unwrap();
        assert_eq!(
            parts_key(PART_BYTES, len, alone),
            parts_key(PART_BYTES, len, expected)
        );
    }

    #[test]
    fn a_file_shorter_than_its_size_is_reported_short() {
        let source = patterned(PART_BYTES / 2);
        let err = copy_in_parts(source.as_file(), PART_BYTES + 1, None, 2).unwrap_err();
        assert!(matches!(err, CopyError::Short), "{err:?}");
    }
}
