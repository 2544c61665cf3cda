//! A new file written from memory on several threads. `pwrite` calls from several threads
//! to one file serialize on its lock; here the file is a shared mapping: each thread
//! allocates its part's pages (`MADV_POPULATE_WRITE`, which reports a full file system as
//! an error where a plain write through the mapping would raise SIGBUS) and copies its
//! bytes into them, taking no file lock. Where the kernel lacks `MADV_POPULATE_WRITE`
//! (before Linux 5.14) the file is reserved and written with `pwrite` on the calling thread.
//!
//! Used for the store's copy of a file named by reference ([`crate::import`]). Not for
//! results: the 3 GB binary result of a 10^9-edge job took 2.2–2.5 s this way against 2.0 s
//! from one thread's buffered writes (H200 host, tmpfs): on tmpfs each page joins the file's
//! page-cache index under one lock, and sixteen threads contend for it. Results are written
//! by two threads' positioned writes instead
//! ([`egsolve_core::output::binary::write_binary_at`]).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Mutex, PoisonError};

use crate::storage;

/// Bytes each thread takes at a time.
const PART_BYTES: usize = 8 << 20;

/// Writes `bytes` into `file` (new and empty) on up to `threads` threads. A full file
/// system is `ENOSPC` ([`storage::is_full`]).
pub(crate) fn write_in_parts(bytes: &[u8], file: &File, threads: usize) -> std::io::Result<()> {
    let len = bytes.len();
    if len == 0 {
        return Ok(());
    }
    file.set_len(len as u64)?;
    // SAFETY: `file` is the server's own new file, which nothing else maps, writes or
    // truncates; its pages are populated (or the failure reported) before they are written.
    let mapped = unsafe { memmap2::MmapMut::map_mut(file) };
    let mut map = match mapped {
        Ok(map) if populate(&map[..page_size().min(len)]).is_ok() => map,
        _ => {
            storage::allocate(file, len as u64)?;
            return file.write_all_at(bytes, 0);
        }
    };
    let parts = Mutex::new(map.chunks_mut(PART_BYTES).zip(bytes.chunks(PART_BYTES)));
    let first_error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, len.div_ceil(PART_BYTES)) {
            scope.spawn(|| {
                loop {
                    let next = parts.lock().unwrap_or_else(PoisonError::into_inner).next();
                    let Some((dest, part)) = next else { return };
                    if let Err(e) = populate(dest) {
                        first_error
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get_or_insert(e);
                        return;
                    }
                    dest.copy_from_slice(part);
                }
            });
        }
    });
    if let Some(e) = first_error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        return Err(e);
    }
    map.flush()
}

/// Allocates the pages of `range` (a part of a shared mapping) for writing, or says why
/// not (a full file system: `ENOSPC`), instead of a SIGBUS at the first write.
pub(crate) fn populate(range: &[u8]) -> std::io::Result<()> {
    // SAFETY: `range` lies inside a live mapping and starts on a page boundary (parts are
    // whole pages from the mapping's start); populating changes no byte.
    let status = unsafe {
        libc::madvise(
            range.as_ptr().cast_mut().cast(),
            range.len(),
            libc::MADV_POPULATE_WRITE,
        )
    };
    if status == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        // The pages could not be allocated: the file system (or memory, for tmpfs) is full.
        Some(libc::EFAULT | libc::ENOMEM) => Err(std::io::Error::from_raw_os_error(libc::ENOSPC)),
        _ => Err(e),
    }
}

/// The system's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf reads no memory of ours.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_holds_the_bytes_whatever_the_threads() {
        let bytes: Vec<u8> = (0..3 * PART_BYTES + 17)
            .map(|i| (i as u8).wrapping_mul(31) ^ 2)
            .collect();
        for (len, threads) in [
            (bytes.len(), 4),
            (PART_BYTES - 5, 1),
            (bytes.len(), 1),
            (32, 3),
        ] {
            let file = tempfile::tempfile().unwrap();
            write_in_parts(&bytes[..len], &file, threads).unwrap();
            let mut read = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut read).unwrap();
            assert!(read == bytes[..len], "{} bytes differ", read.len());
        }
        let empty = tempfile::tempfile().unwrap();
        write_in_parts(&[], &empty, 2).unwrap();
        assert_eq!(empty.metadata().unwrap().len(), 0);
    }
}
