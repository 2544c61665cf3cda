//! A large binary answer's file made ready while the game is solved: an unnamed file in
//! the output's folder (`O_TMPFILE`) given its space (`fallocate`) on a thread of its own as
//! soon as the load knows the vertex count, so that the answer's write only copies bytes
//! into pages that already exist; the written file then gets its name (`linkat`).
//!
//! Why: at 10^9 edges the answer is 3 GB. Written into a new tmpfs file it took 1.0–1.4 s
//! on the H200 host (two writers), most of it the kernel finding and indexing a page for
//! every 4 KiB; into a file given its space first, 0.64–0.70 s from eight writers, and the
//! space (0.27–0.64 s) is found while the GPU lifts. Copying through maps of the prepared
//! file instead was slower (0.86–0.98 s: a page fault per page and a TLB shootdown per
//! unmapped window), so the answer is written with `pwrite` (BENCHMARKS.md §9). The space
//! is taken earlier than a plain write would take it: on tmpfs, the answer's memory is in
//! use during the solve (3 GB at 10^9 edges, beside the 14 GB game).
//!
//! Unnamed until written, the file never shows at the path half made: a process killed
//! during the solve, an error, or a write that fails leave nothing there (the kernel frees
//! an unnamed file with its last descriptor). Only for a path that does not exist yet; if
//! one appears meanwhile, the answer is written to it as without this. Where the system
//! has no unnamed files or no `fallocate` (not Linux, some file systems), nothing is
//! prepared.

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
    ready: JoinHandle<io::Result<File>>,
}

/// A prepared file of the answer's size, to be written and then named ([`Prepared::name`]).
pub struct Prepared {
    path: PathBuf,
    file: File,
}

impl PreparedOutput {
    /// Starts making `out` ready for a binary answer of `vertices` vertices, where that is
    /// worth it: `--output binary` to a path that does not exist yet, of at least
    /// [`PREPARE_FROM_BYTES`], unless `EGSOLVE_PREPARE=0`.
    pub fn start(out: Option<&Path>, format: OutputFormat, vertices: usize) -> Option<Self> {
        if std::env::var_os("EGSOLVE_PREPARE").is_some_and(|v| v == "0") {
            return None;
        }
        let path = out.filter(|p| p.as_os_str() != "-")?;
        let bytes = Header {
            n: vertices as u64,
            credits_computed: true,
        }
        .total_bytes();
        let absent = matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == io::ErrorKind::NotFound);
        if format != OutputFormat::Binary || bytes < PREPARE_FROM_BYTES || !absent {
            return None;
        }
        PreparedOutput::begin(path, bytes)
    }

    /// Starts preparing an unnamed file of `bytes` for `path`, on a thread.
    fn begin(path: &Path, bytes: u64) -> Option<Self> {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let ready = std::thread::Builder::new()
            .name("egsolve-output".into())
            .spawn(move || prepare(&folder, bytes))
            .ok()?;
        Some(PreparedOutput {
            path: path.to_path_buf(),
            bytes,
            ready,
        })
    }

    /// The prepared file, for an answer of `bytes`; `None` where preparing failed or the
    /// size differs (the caller writes as usual).
    pub fn take(self, bytes: u64) -> Option<Prepared> {
        let file = match self.ready.join() {
            Ok(Ok(file)) => file,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "the answer's file was not prepared");
                return None;
            }
            Err(_) => return None,
        };
        (bytes == self.bytes).then_some(Prepared {
            path: self.path,
            file,
        })
    }
}

impl Prepared {
    /// The file, to write the answer into at its offsets.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Gives the written file its name; `false` where it could not (the path exists by now,
    /// made by someone else meanwhile, or the system cannot name the file): the caller then
    /// writes the answer to the path as usual, and this file goes.
    pub fn name(self) -> bool {
        link(&self.file, &self.path).unwrap_or_else(|e| {
            tracing::debug!(error = %e, "the answer's prepared file was not named");
            false
        })
    }
}

/// An unnamed file in `folder` with `bytes` of space.
#[cfg(target_os = "linux")]
fn prepare(folder: &Path, bytes: u64) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let start = std::time::Instant::now();
    let file = File::options()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o666)
        .open(folder)?;
    let len = libc::off_t::try_from(bytes).map_err(io::Error::other)?;
    // SAFETY: a plain system call on a file descriptor this function owns.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    tracing::debug!(
        seconds = start.elapsed().as_secs_f64(),
        bytes,
        "the answer's file prepared"
    );
    Ok(file)
}

#[cfg(not(target_os = "linux"))]
fn prepare(_folder: &Path, _bytes: u64) -> io::Result<File> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Names the unnamed `file` `path` (`linkat` through `/proc/self/fd`); `Ok(false)` where
/// `path` exists or `/proc` is missing.
#[cfg(target_os = "linux")]
fn link(file: &File, path: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths that live across the call.
    let linked = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if linked == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    match error.kind() {
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotFound => Ok(false),
        _ => Err(error),
    }
}

#[cfg(not(target_os = "linux"))]
fn link(_file: &File, _path: &Path) -> io::Result<bool> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// A folder on tmpfs where there is one (it has unnamed files and `fallocate`).
    fn folder() -> tempfile::TempDir {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        }
    }

    #[test]
    fn only_a_large_binary_answer_to_a_new_path_is_prepared() {
        let dir = folder();
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
        let bytes = 32 + 12 * large as u64;
        let prepared = start(&new, OutputFormat::Binary, large).expect("started");
        let Some(ready) = prepared.take(bytes) else {
            // A system without unnamed files or `fallocate`: nothing was made.
            assert!(!new.exists());
            return;
        };
        // Unnamed until written and named.
        assert!(!new.exists());
        assert_eq!(ready.file().metadata().unwrap().len(), bytes);
        ready.file().write_all_at(b"answer", bytes - 6).unwrap();
        assert!(ready.name());
        let named = std::fs::read(&new).unwrap();
        assert_eq!(named.len() as u64, bytes);
        assert_eq!(&named[named.len() - 6..], b"answer");
    }

    #[test]
    fn an_answer_not_named_leaves_nothing_and_replaces_nothing() {
        let dir = folder();
        let path = dir.path().join("a.bin");
        // Dropped untaken (the solve failed), taken for another size, taken and dropped
        // unnamed (the write failed): nothing at the path.
        drop(PreparedOutput::begin(&path, 4096).unwrap());
        assert!(
            PreparedOutput::begin(&path, 4096)
                .unwrap()
                .take(4097)
                .is_none()
        );
        drop(PreparedOutput::begin(&path, 4096).unwrap().take(4096));
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A file that appeared meanwhile is kept: naming declines.
        let ready = PreparedOutput::begin(&path, 4096).unwrap().take(4096);
        std::fs::write(&path, b"theirs").unwrap();
        if let Some(ready) = ready {
            assert!(!ready.name());
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
        // A folder that does not exist: nothing prepared, nothing made.
        let nowhere = dir.path().join("missing/a.bin");
        assert!(
            PreparedOutput::begin(&nowhere, 4096)
                .unwrap()
                .take(4096)
                .is_none()
        );
        assert!(!dir.path().join("missing").exists());
    }
}
