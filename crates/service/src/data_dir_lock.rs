//! One process per data directory: a server or worker holds an exclusive lock on
//! `DATA_DIR/lock` (`flock`) for as long as it runs.
//! A second one started on the same directory would otherwise take the first one's running
//! jobs for abandoned (a store of one host re-queues them at start) and restart them, and
//! sweep its uploads and leftovers. The kernel drops the lock with the process, however it
//! ends, so a crashed server never blocks the next. The file holds the holder's process id,
//! for the refusal's message.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock file's name in the data directory.
const LOCK_FILE: &str = "lock";

/// Why the data directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum DataDirLockError {
    /// Another process holds it.
    #[error(
        "the data directory {} is in use by another egsolve process{}: stop it first, or give this one a --data-dir of its own",
        .dir.display(),
        .holder.map(|pid| format!(" (process {pid})")).unwrap_or_default()
    )]
    InUse {
        /// The directory.
        dir: PathBuf,
        /// The holder's process id, where its file says.
        holder: Option<u32>,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock the data directory {}: {source}", .dir.display())]
    Io {
        /// The directory.
        dir: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// The held lock: released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// Locks `dir` (which exists) for this process, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, DataDirLockError> {
        let io = |source| DataDirLockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE))
            .map_err(io)?;
        // SAFETY: a plain system call on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::WouldBlock {
                return Err(io(error));
            }
            let mut text = String::new();
            let holder = file
                .read_to_string(&mut text)
                .ok()
                .and_then(|_| text.trim().parse().ok());
            return Err(DataDirLockError::InUse {
                dir: dir.to_path_buf(),
                holder,
            });
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DataDirLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let refused = DataDirLock::acquire(dir.path()).unwrap_err();
        let message = refused.to_string();
        assert!(
            message.contains("in use by another egsolve process")
                && message.contains(&format!("process {}", std::process::id())),
            "{message}"
        );
        drop(first);
        let again = DataDirLock::acquire(dir.path()).unwrap();
        drop(again);
    }
}
