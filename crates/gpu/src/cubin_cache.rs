//! Compiled kernels kept on disk, so NVRTC runs once per machine rather than once per
//! process: a fresh `egsolve solve --backend gpu` loads its CUBIN in milliseconds.
//!
//! A CUBIN is filed under a key that names everything that shapes it: the kernel's source
//! (with the macros that select its widths), the target architecture, the NVRTC version and
//! every compiler option (including `EGSOLVE_NVRTC_EXTRA_OPTIONS`). A changed source or a
//! new NVRTC simply misses. Files are written to a temporary name and renamed, so a reader
//! never sees half a file; a file that fails to load is compiled again and replaced.
//!
//! Where: `EGSOLVE_KERNEL_CACHE` if set (empty: no disk cache), else the directory the
//! service sets ([`set_directory`]: its data directory), else the user's cache directory
//! (`$XDG_CACHE_HOME/egsolve/kernels`, `~/.cache/egsolve/kernels`). A directory that cannot
//! be created or written only costs the compile.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// The directory set by the embedding program (the service), if any.
static DIRECTORY: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();

/// Files kernels under `directory` from now on in this process (the service passes its
/// data directory's `kernels/`), unless `EGSOLVE_KERNEL_CACHE` says otherwise.
pub fn set_directory(directory: PathBuf) {
    let slot = DIRECTORY.get_or_init(|| Mutex::new(None));
    *slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(directory);
}

/// The cache directory in effect, if any (see the module docs).
pub fn directory() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("EGSOLVE_KERNEL_CACHE") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    if let Some(dir) = DIRECTORY.get().and_then(|slot| {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }) {
        return Some(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("egsolve").join("kernels"))
}

/// The key of a CUBIN: a hash of everything that shapes it.
pub fn key(source: &str, arch: &str, nvrtc: (i32, i32), options: &[String]) -> String {
    let mut hash = Sha256::new();
    for part in [arch, &format!("nvrtc {}.{}", nvrtc.0, nvrtc.1)] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    for option in options {
        hash.update(option.as_bytes());
        hash.update([0]);
    }
    hash.update(source.as_bytes());
    hex::encode(hash.finalize())
}

/// The file of `key` in `directory`.
fn file(directory: &Path, key: &str) -> PathBuf {
    directory.join(format!("{key}.cubin"))
}

/// The cached CUBIN of `key`, if there is one.
pub fn load(directory: &Path, key: &str) -> Option<Vec<u8>> {
    std::fs::read(file(directory, key))
        .ok()
        .filter(|b| !b.is_empty())
}

/// Files `cubin` under `key` (best effort: a failure is logged and otherwise ignored).
pub fn store(directory: &Path, key: &str, cubin: &[u8]) {
    let result = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(directory)?;
        let temporary = directory.join(format!(".{key}.{}.tmp", std::process::id()));
        std::fs::write(&temporary, cubin)?;
        std::fs::rename(&temporary, file(directory, key))
    })();
    if let Err(e) = result {
        tracing::debug!(
            directory = %directory.display(),
            "kernel cache not written: {e}"
        );
    }
}

/// Removes the entry of `key` (it failed to load).
pub fn forget(directory: &Path, key: &str) {
    let _ = std::fs::remove_file(file(directory, key));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_everything_that_shapes_a_cubin() {
        let options = vec!["--gpu-architecture=sm_90".to_string()];
        let base = key("src", "sm_90", (13, 0), &options);
        assert_eq!(base, key("src", "sm_90", (13, 0), &options));
        assert_ne!(base, key("src2", "sm_90", (13, 0), &options));
        assert_ne!(base, key("src", "sm_80", (13, 0), &options));
        assert_ne!(base, key("src", "sm_90", (13, 1), &options));
        assert_ne!(base, key("src", "sm_90", (13, 0), &[]));
    }

    #[test]
    fn stored_cubins_load_back_and_can_be_forgotten() {
        let dir = std::env::temp_dir().join(format!("egsolve-cubin-test-{}", std::process::id()));
        let k = key("source", "sm_90", (13, 0), &[]);
        assert_eq!(load(&dir, &k), None);
        store(&dir, &k, b"cubin bytes");
        assert_eq!(load(&dir, &k).as_deref(), Some(&b"cubin bytes"[..]));
        forget(&dir, &k);
        assert_eq!(load(&dir, &k), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
