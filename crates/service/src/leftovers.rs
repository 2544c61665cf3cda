//! Half-made exports swept at start-up. An export ([`crate::export`]) writes its file under
//! a hidden name (`.egsolve-export-<uuid>.part`) and removes that name when it ends, however
//! it ends; only a server that died mid-export leaves one behind. At start-up each export
//! root is walked (links not followed, at most [`MAX_DEPTH`] levels and [`MAX_ENTRIES`]
//! entries, on a thread of its own) and such files older than [`STALE_AFTER`] are removed:
//! an export under way, by this server or another sharing the root, is minutes old at most.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// What an export's hidden file is called: this prefix, a UUID, [`SUFFIX`].
pub(crate) const PREFIX: &str = ".egsolve-export-";
/// See [`PREFIX`].
pub(crate) const SUFFIX: &str = ".part";
/// Age from which a hidden export file is a leftover.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(3600);
/// Directory levels below a root that are looked at.
const MAX_DEPTH: usize = 8;
/// Entries looked at in all, per root (a root may be a large shared scratch directory).
const MAX_ENTRIES: usize = 1_000_000;

/// Removes the leftovers under `roots` older than `stale_after`; returns how many.
pub(crate) fn sweep(roots: &[std::path::PathBuf], stale_after: Duration) -> usize {
    let now = SystemTime::now();
    roots
        .iter()
        .map(|root| {
            let mut budget = MAX_ENTRIES;
            sweep_dir(root, MAX_DEPTH, &mut budget, now, stale_after)
        })
        .sum()
}

fn sweep_dir(
    dir: &Path,
    depth: usize,
    budget: &mut usize,
    now: SystemTime,
    stale_after: Duration,
) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        // The entry's own type: a link is never followed.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_dir() {
            if depth > 0 {
                removed += sweep_dir(&entry.path(), depth - 1, budget, now, stale_after);
            }
        } else if kind.is_file() && is_leftover_name(&name) {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age >= stale_after));
            if old && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Whether `name` is an export's hidden file's: [`PREFIX`], a UUID, [`SUFFIX`].
fn is_leftover_name(name: &str) -> bool {
    name.strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_hidden_export_files_are_removed_and_links_are_not_followed() {
        let name = |n: u128| format!("{PREFIX}{}{SUFFIX}", uuid::Uuid::from_u128(n));
        let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 3600);
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        let deep = root.join("a/b");
        for made in [&deep, &outside] {
            std::fs::create_dir_all(made).unwrap();
        }
        let make = |path: &Path, old: bool| {
            let file = std::fs::File::create(path).unwrap();
            if old {
                file.set_modified(two_hours_ago).unwrap();
            }
        };
        let stale = [root.join(name(1)), deep.join(name(2))];
        let kept = [
            root.join(name(3)),                         // young: an export under way
            root.join(".egsolve-export-notauuid.part"), // not ours
            deep.join("answer.bin"),
            outside.join(name(4)), // behind a link: never reached
        ];
        for path in &stale {
            make(path, true);
        }
        make(&kept[0], false);
        for path in &kept[1..] {
            make(path, true);
        }
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        assert_eq!(sweep(std::slice::from_ref(&root), STALE_AFTER), 2);
        for path in &stale {
            assert!(!path.exists(), "{} removed", path.display());
        }
        for path in &kept {
            assert!(path.exists(), "{} kept", path.display());
        }
    }
}
