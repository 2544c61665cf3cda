//! A large binary answer's file made ready while the game is solved: created and given its
//! space (`fallocate`) on a thread of its own as soon as the load knows the vertex count,
//! so that the answer's write only copies bytes into pages that already exist.
//!
//! Why: at 10^9 edges the answer is 3 GB. Written into a new tmpfs file it took 1.0–1.4 s
//! on the H200 host (two writers), most of it the kernel finding and indexing a page for
//! every 4 KiB; into a file given its space first, 0.64–0.70 s from eight writers, and the
//! space (0.27–0.64 s) is found while the GPU lifts. Copying through maps of the prepared
//! file instead was slower (0.86–0.98 s: a page fault per page and a TLB shootdown per
//! unmapped window), so the answer is written with `pwrite` (BENCHMARKS.md §9).
//!
//! Only for a path that does not exist yet (created with `O_EXCL`, so nothing of another
//! file is ever replaced early), and removed again when the answer is not written (an
//! error, or a vertex count that turned out different). Where the file system cannot give
//! space ahead (no `fallocate`), the file is written as a new one, as without this.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use egsolve_core::output::OutputFormat;
use egsolve_core::output::binary::Header;

/// Answers from this size are prepared (16 MiB: about 1.4 M vertices); below it the write
/// takes a few milliseconds anyway.
const PREPARE_FROM_BYTES: u64 = 16 << 20;

/// A binary answer's file being made ready.
pub struct PreparedOutput {
    path: PathBuf,
    bytes: u64,
    ready: Option<JoinHandle<io::Result<File>>>,
}

impl PreparedOutput {
    /// Starts making `out` ready for a binary answer of `vertices` vertices, where that is
    /// worth it: `--output binary` to a path that does not exist yet, of at least
    /// [`PREPARE_FROM_BYTES`].
    pub fn start(out: Option<&Path>, format: OutputFormat, vertices: usize) -> Option<Self> {
        let path = out.filter(|p| p.as_os_str() != "-")?;
        let bytes = Header {
            n: vertices as u64,
            credits_computed: true,
        }
        .total_bytes();
        let absent = matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == io::ErrorKind::NotFound);
        let off = std::env::var_os("EGSOLVE_PREPARE").is_some_and(|v| v == "0");
        if off || format != OutputFormat::Binary || bytes < PREPARE_FROM_BYTES || !absent {
            return None;
        }
        PreparedOutput::begin(path, bytes)
    }

    /// Starts creating `path` with `bytes` of space, on a thread.
    fn begin(path: &Path, bytes: u64) -> Option<Self> {
        let owned = path.to_path_buf();
        let ready = std::thread::Builder::new()
            .name("egsolve-output".into())
            .spawn(move || prepare(&owned, bytes))
            .ok()?;
        Some(PreparedOutput {
            path: path.to_path_buf(),
            bytes,
            ready: Some(ready),
        })
    }

    /// The prepared file, `bytes` long, for an answer of that size; `None` (the file
    /// removed) where preparing failed or the size differs, so the caller writes as usual.
    pub fn take(mut self, bytes: u64) -> Option<File> {
        let file = self.wait()?;
        if bytes != self.bytes {
            self.remove();
            return None;
        }
        self.path = PathBuf::new();
        Some(file)
    }

    /// Waits for the preparing thread; `None` where it failed, and then nothing of ours
    /// lies at the path (the thread removed what it created), so nothing is removed later.
    fn wait(&mut self) -> Option<File> {
        let done = self.ready.take()?.join();
        match done {
            Ok(Ok(file)) => Some(file),
            failed => {
                if let Ok(Err(e)) = failed {
                    tracing::debug!(error = %e, "the answer's file was not prepared");
                }
                self.path = PathBuf::new();
                None
            }
        }
    }

    fn remove(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
            self.path = PathBuf::new();
        }
    }
}

impl Drop for PreparedOutput {
    /// An answer not written: the prepared file goes (after its thread, which may still be
    /// creating it).
    fn drop(&mut self) {
        if self.ready.is_some() {
            let _ = self.wait();
        }
        self.remove();
    }
}

/// Creates `path` (it must not exist) and gives it `bytes` of space.
fn prepare(path: &Path, bytes: u64) -> io::Result<File> {
    let start = std::time::Instant::now();
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    match allocate(&file, bytes) {
        Ok(allocated) => {
            tracing::debug!(
                seconds = start.elapsed().as_secs_f64(),
                bytes,
                allocated,
                "the answer's file prepared"
            );
            Ok(file)
        }
        Err(e) => {
            let _ = std::fs::remove_file(path);
            Err(e)
        }
    }
}

/// Gives `file` `bytes` of space (its length then `bytes`): `fallocate` (`true`), or where
/// the file system has none, only the length (`false`).
#[cfg(target_os = "linux")]
fn allocate(file: &File, bytes: u64) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(bytes).map_err(io::Error::other)?;
    // SAFETY: a plain system call on a file descriptor this function borrows.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EOPNOTSUPP | libc::ENOSYS) => file.set_len(bytes).map(|()| false),
        _ => Err(error),
    }
}

#[cfg(not(target_os = "linux"))]
fn allocate(file: &File, bytes: u64) -> io::Result<bool> {
    file.set_len(bytes).map(|()| false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_large_binary_answer_to_a_new_path_is_prepared() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.bin");
        let large = 2_000_000;
        let start =
            |path: &Path, format, vertices| PreparedOutput::start(Some(path), format, vertices);
        assert!(start(&new, OutputFormat::Json, large).is_none());
        assert!(start(&new, OutputFormat::Binary, 1_000).is_none());
        assert!(start(Path::new("-"), OutputFormat::Binary, large).is_none());
        assert!(PreparedOutput::start(None, OutputFormat::Binary, large).is_none());
        let old = dir.path().join("old.bin");
        std::fs::write(&old, b"kept").unwrap();
        assert!(start(&old, OutputFormat::Binary, large).is_none());
        assert_eq!(std::fs::read(&old).unwrap(), b"kept");
        assert!(!new.exists());
        let prepared = start(&new, OutputFormat::Binary, large).expect("prepared");
        let bytes = 32 + 12 * large as u64;
        let file = prepared.take(bytes).expect("taken");
        assert_eq!(file.metadata().unwrap().len(), bytes);
        assert!(new.exists());
    }

    #[test]
    fn an_answer_not_written_leaves_no_prepared_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        // Dropped untaken (the solve failed).
        drop(PreparedOutput::begin(&path, 4096).unwrap());
        assert!(!path.exists());
        // Taken for another size.
        assert!(
            PreparedOutput::begin(&path, 4096)
                .unwrap()
                .take(4097)
                .is_none()
        );
        assert!(!path.exists());
        // A file that appeared meanwhile is not ours: kept, and nothing is prepared.
        std::fs::write(&path, b"theirs").unwrap();
        assert!(
            PreparedOutput::begin(&path, 4096)
                .unwrap()
                .take(4096)
                .is_none()
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
        // A directory that does not exist: nothing prepared, nothing created.
        let nowhere = dir.path().join("missing/a.bin");
        assert!(
            PreparedOutput::begin(&nowhere, 4096)
                .unwrap()
                .take(4096)
                .is_none()
        );
    }
}
