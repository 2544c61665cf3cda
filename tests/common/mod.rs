//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The shared data directory (`shared/data`, with `energy/` and `parity/`): `$EGSOLVE_DATA`
/// if set, else the first `shared/data` found beside the crate root or one of its parents
/// (the crate lives in `/work/main` or `/work/wt/<name>`, the data in `/work/shared/data`).
pub fn shared_data() -> PathBuf {
    if let Some(dir) = std::env::var_os("EGSOLVE_DATA") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in root.ancestors() {
        let candidate = dir.join("shared").join("data");
        if candidate.join("README.md").is_file() {
            return candidate;
        }
    }
    panic!(
        "no shared/data directory found beside {} or any parent; set EGSOLVE_DATA to its path",
        root.display()
    );
}

/// The files in `shared_data()/sub` whose names end with `suffix`, sorted.
pub fn shared_files(sub: &str, suffix: &str) -> Vec<PathBuf> {
    let dir = shared_data().join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}
