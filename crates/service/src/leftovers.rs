//! Half-made exports a crash left behind. An export ([`crate::export`]) writes its file
//! under a hidden name (`.egsolve-export-<uuid>.part`) and removes that name when it ends,
//! however it ends; only a server that died mid-export leaves one. So each export first
//! records the hidden file's path in the data directory ([`Record`], a file named by the
//! same UUID under `exports-pending/`) and removes the record once the hidden name is gone;
//! at start-up ([`sweep`]) the paths still recorded are removed, and their records. Nothing
//! is searched for: only files this data directory's server named are touched.

use std::path::{Path, PathBuf};

/// What an export's hidden file is called: this prefix, a UUID, [`SUFFIX`].
pub(crate) const PREFIX: &str = ".egsolve-export-";
/// See [`PREFIX`].
pub(crate) const SUFFIX: &str = ".part";

/// The directory of the records, in the data directory.
pub(crate) fn records_in(data_dir: &Path) -> PathBuf {
    data_dir.join("exports-pending")
}

/// The record of one export under way: the hidden file's path, kept in `records/<uuid>`
/// while the record lives; removed when dropped.
pub(crate) struct Record {
    path: PathBuf,
}

impl Record {
    /// Records `hidden` (the hidden file's path, named with `id`) in `records`.
    pub(crate) fn new(records: &Path, id: uuid::Uuid, hidden: &Path) -> std::io::Result<Record> {
        use std::os::unix::ffi::OsStrExt;
        let path = records.join(id.to_string());
        std::fs::write(&path, hidden.as_os_str().as_bytes())?;
        Ok(Record { path })
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes every hidden file still recorded in `records` (made if missing), and the
/// records; returns how many files were removed.
pub(crate) fn sweep(records: &Path) -> std::io::Result<usize> {
    use std::os::unix::ffi::OsStrExt;
    std::fs::create_dir_all(records)?;
    let mut removed = 0;
    for entry in std::fs::read_dir(records)?.flatten() {
        let recorded = std::fs::read(entry.path())
            .ok()
            .map(|bytes| PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)));
        // Only a name of ours: a record is never a way to remove another file.
        let hidden = recorded.filter(|path| is_hidden_export(path));
        if hidden.is_some_and(|path| std::fs::remove_file(path).is_ok()) {
            removed += 1;
        }
        std::fs::remove_file(entry.path())?;
    }
    Ok(removed)
}

/// Whether `path` names an export's hidden file: [`PREFIX`], a UUID, [`SUFFIX`].
fn is_hidden_export(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_prefix(PREFIX))
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_hidden_files_are_removed_at_the_sweep_and_nothing_else() {
        let name = |n: u128| format!("{PREFIX}{}{SUFFIX}", uuid::Uuid::from_u128(n));
        let dir = tempfile::tempdir().unwrap();
        let (records, exports) = (records_in(&dir.path().join("data")), dir.path().join("x"));
        std::fs::create_dir_all(&exports).unwrap();
        sweep(&records).unwrap();
        let left = exports.join(name(1));
        let under_way = exports.join(name(2));
        let answer = exports.join("answer.bin");
        for path in [&left, &under_way, &answer] {
            std::fs::write(path, b"bytes").unwrap();
        }
        // A crash: the record of `left` stays. A finished export: its record is gone.
        std::mem::forget(Record::new(&records, uuid::Uuid::from_u128(1), &left).unwrap());
        drop(Record::new(&records, uuid::Uuid::from_u128(2), &under_way).unwrap());
        // A record naming a file that is not an export's is never followed.
        std::fs::write(
            records.join("forged"),
            answer.as_os_str().as_encoded_bytes(),
        )
        .unwrap();
        assert_eq!(sweep(&records).unwrap(), 1);
        assert!(!left.exists(), "the recorded leftover is removed");
        assert!(under_way.exists() && answer.exists(), "the rest is kept");
        assert_eq!(
            std::fs::read_dir(&records).unwrap().count(),
            0,
            "no record left"
        );
    }
}
