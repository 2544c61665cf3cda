//! Where the shared data (`shared/data`, with `energy/` and `parity/`) is, for every test
//! and benchmark: `$EGSOLVE_DATA` if set; else the first `shared/data` beside the crate root
//! or one of its parents (the checkout lives beside `shared/`); else, for a clone of a local
//! checkout (`git clone . /tmp/x`), beside that checkout or one of its parents.

use std::path::{Path, PathBuf};

/// The shared data directory; panics with what to set when there is none.
pub fn shared_data() -> PathBuf {
    if let Some(dir) = std::env::var_os("EGSOLVE_DATA") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let origin = local_origin(root);
    std::iter::once(root)
        .chain(origin.as_deref())
        .flat_map(Path::ancestors)
        .map(|dir| dir.join("shared").join("data"))
        .find(|candidate| candidate.join("README.md").is_file())
        .unwrap_or_else(|| {
            panic!(
                "no shared/data directory beside {} or any parent (nor beside the checkout it \
                 was cloned from); set EGSOLVE_DATA to its path",
                root.display()
            )
        })
}

/// The checkout `root` was cloned from, when that is a directory on this machine.
fn local_origin(root: &Path) -> Option<PathBuf> {
    let output = std::process::Command::new("git")
        .args(["config", "--get", "remote.origin.url"])
        .current_dir(root)
        .output()
        .ok()?;
    let url = String::from_utf8(output.stdout).ok()?;
    let path = PathBuf::from(url.trim().trim_start_matches("file://"));
    (path.is_absolute() && path.is_dir()).then_some(path)
}
