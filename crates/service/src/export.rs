//! Results by reference: `POST /v1/jobs/{id}/result/export` with a body like
//! `{"path": "/scratch/out.bin", "format": "binary"}` has the server write a succeeded
//! job's answer to a file on its own file system, under a directory the operator named
//! (`export_roots`), instead of sending it over the connection. A lab whose users share the
//! GPU server's file system then pays no download for a large answer (3 GB at 10^9 edges:
//! 1.0–1.5 s on the H200 host) and no second write of it.
//!
//! The binary form is the stored result file itself, so where the target lies on the
//! store's file system the file is hard-linked: result files are written once under a
//! temporary name, synced, renamed, read-only ([`crate::result_file::write`]) and never
//! changed in place, so the link shares bytes that do not change, and removing either name
//! leaves the other intact. Elsewhere it is copied (`copy_file_range` through
//! [`std::io::copy`]); the other formats are rendered into the file as `GET
//! /v1/jobs/{id}/result` would send them. The token needs the `import` permission (the
//! one that lets the server touch files for it), and the server export roots.
//!
//! What is checked, in order, each refusal with its own problem type ([`ExportError`]):
//! - the request: JSON with an absolute `path` naming a file (no `..` component, no NUL,
//!   no trailing `/`) and a `format` the answer has;
//! - the file's directory, resolved (links followed), lies inside an export root, and is
//!   opened without following a link (`O_DIRECTORY | O_NOFOLLOW`); what was opened, as the
//!   kernel names it, is checked again (a directory swapped for a link after the check is
//!   caught there);
//! - the file is made under a fresh hidden name, relative to the opened directory
//!   (`O_EXCL | O_NOFOLLOW`), synced, and renamed over the name asked for: readers see the
//!   file that was there or the whole new one, never a part of it. A failure removes the
//!   hidden file; a full disk answers `507`. The hidden file's path is recorded in the data
//!   directory meanwhile, so that one a crash left behind is removed at the next start
//!   ([`crate::leftovers`]).
//!
//! The HTTP handler is [`crate::api`]'s; this module knows nothing about HTTP.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::import::{ImportRoots, open_resolved};
use super::leftovers::{self, PREFIX, Record, SUFFIX};
use super::result_file::{self, RenderRequest, ResultFormat};

/// Largest accepted request body.
const MAX_REQUEST_BYTES: usize = 64 << 10;

/// Why a result is not written by reference.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The server has no export roots.
    #[error(
        "this server writes no results by reference: download the result instead (GET /v1/jobs/{{id}}/result), or ask the operator to start the server with --export-root DIR"
    )]
    Disabled,
    /// The caller's token lacks the `import` permission.
    #[error(
        "your token may not have results written by reference: download the result instead, or ask the operator for a token with the import permission (egsolve token add NAME --import)"
    )]
    Forbidden,
    /// The request body is not an export request.
    #[error("invalid export request: {0}")]
    Invalid(String),
    /// The file's directory lies outside every export root.
    #[error(
        "'{path}' is outside the server's export roots: name a file under {roots} (symbolic links out of them are refused)"
    )]
    Outside {
        /// The path as requested.
        path: String,
        /// The roots, for the message.
        roots: String,
    },
    /// The file's directory lies in the server's own data (its store, its tokens file's
    /// directory).
    #[error(
        "'{path}' lies in the server's own data directory: name a file elsewhere under {roots}"
    )]
    Protected {
        /// The path as requested.
        path: String,
        /// The roots, for the message.
        roots: String,
    },
    /// A file of that name exists and the request did not ask to replace it.
    #[error(
        "'{0}' exists: name another file, or ask to replace it (\"replace\": true; the CLI's -o replaces)"
    )]
    Exists(String),
    /// The stored result could not be read.
    #[error("the stored result could not be read ({0}); submit the job again")]
    Stored(String),
    /// The file's directory does not exist.
    #[error(
        "the directory of '{0}' does not exist on the server: create it first (the path as the server sees it)"
    )]
    NoDirectory(String),
    /// The file could not be written there.
    #[error(
        "the server cannot write '{path}': {reason}; make its directory writable by the server's user, or name another file"
    )]
    Unwritable {
        /// The path as requested.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The disk is full.
    #[error(
        "'{0}' could not be written: its disk is full; free space there or name another directory"
    )]
    NoSpace(String),
}

/// An export request.
#[derive(Debug)]
pub(crate) struct Request {
    /// The file to write, absolute.
    pub(crate) path: PathBuf,
    /// Its format.
    pub(crate) format: ResultFormat,
    /// Whether an existing file of that name is replaced (else `409 export-exists`).
    pub(crate) replace: bool,
}

/// The body's path and format (`binary` when absent).
pub(crate) fn parse_request(body: &[u8]) -> Result<Request, ExportError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        path: String,
        format: Option<String>,
        #[serde(default)]
        replace: bool,
    }
    let invalid = |message: String| ExportError::Invalid(message);
    if body.len() > MAX_REQUEST_BYTES {
        return Err(invalid(format!(
            "the body is over {MAX_REQUEST_BYTES} bytes"
        )));
    }
    let body: Body = serde_json::from_slice(body).map_err(|e| {
        invalid(format!(
            "the body must be JSON like {{\"path\": \"/scratch/out.bin\", \"format\": \"binary\"}} ({e})"
        ))
    })?;
    let format = match body.format.as_deref() {
        None => ResultFormat::Binary,
        Some(name) => ResultFormat::parse(name).ok_or_else(|| {
            invalid(format!(
                "unknown format '{name}': use json, text, paritysol or binary"
            ))
        })?,
    };
    let path = PathBuf::from(&body.path);
    if body.path.contains('\0') {
        return Err(invalid("the path contains a NUL byte".into()));
    }
    if !path.is_absolute() {
        return Err(invalid(format!(
            "'{}' is not an absolute path: name the file from the root, as the server sees it",
            body.path
        )));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(invalid(format!(
            "'{}' contains '..': name the file without parent components",
            body.path
        )));
    }
    if body.path.ends_with('/') || path.file_name().is_none() {
        return Err(invalid(format!(
            "'{}' names a directory: name the file to write",
            body.path
        )));
    }
    Ok(Request {
        path,
        format,
        replace: body.replace,
    })
}

/// Where results may be written: the export roots, less the server's own data (its data
/// directory and what lies below it, and the directory that holds its tokens file), all
/// resolved at start-up.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExportTargets {
    roots: ImportRoots,
    /// Directories no file may be written in or below.
    trees: Vec<PathBuf>,
    /// Directories no file may be written in (their subdirectories may be written in).
    dirs: Vec<PathBuf>,
    /// Where exports under way record their hidden files ([`leftovers`]).
    records: PathBuf,
}

impl ExportTargets {
    /// The targets of `roots`, none of which may lie inside `data_dir` (a root there would
    /// let a token replace the store's files); files beside `tokens_file` are no target.
    pub(crate) fn new(
        roots: &[PathBuf],
        data_dir: &Path,
        tokens_file: Option<&Path>,
    ) -> Result<ExportTargets, String> {
        let resolve = |path: &Path| std::fs::canonicalize(path).unwrap_or(path.to_owned());
        let data = resolve(data_dir);
        let resolved = ImportRoots::new(roots).map_err(|e| e.to_string())?;
        if let Some(root) = resolved.first_inside(&data) {
            return Err(format!(
                "export root '{}' lies inside the server's data directory '{}': name a directory of its own",
                root.display(),
                data.display()
            ));
        }
        Ok(ExportTargets {
            roots: resolved,
            records: leftovers::records_in(&data),
            trees: vec![data],
            dirs: tokens_file
                .and_then(Path::parent)
                .map(resolve)
                .into_iter()
                .collect(),
        })
    }

    /// Whether there are none (results by reference are off).
    pub(crate) fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Where exports under way record their hidden files ([`leftovers::sweep`]).
    pub(crate) fn records(&self) -> &Path {
        &self.records
    }

    /// Whether `resolved` (a directory, links followed) is the server's own.
    fn protects(&self, resolved: &Path) -> bool {
        self.trees.iter().any(|t| resolved.starts_with(t))
            || self.dirs.iter().any(|d| resolved == d)
    }
}

/// A result placed at its path.
#[derive(Debug)]
pub(crate) struct Placed {
    /// The file's size.
    pub(crate) bytes: u64,
    /// Whether it is a link to the store's copy.
    pub(crate) linked: bool,
}

/// The directory of `requested`, resolved, checked to lie inside a root and outside the
/// server's own data, and opened; with its resolved path.
fn open_directory(
    targets: &ExportTargets,
    requested: &Path,
) -> Result<(File, PathBuf), ExportError> {
    let name = requested.display().to_string();
    let roots = &targets.roots;
    let outside = || ExportError::Outside {
        path: name.clone(),
        roots: roots.listed(),
    };
    let protected = || ExportError::Protected {
        path: name.clone(),
        roots: roots.listed(),
    };
    let unwritable = |e: std::io::Error| ExportError::Unwritable {
        path: name.clone(),
        reason: e.to_string(),
    };
    let parent = requested.parent().unwrap_or(Path::new("/"));
    let resolved = std::fs::canonicalize(parent).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
            ExportError::NoDirectory(name.clone())
        }
        _ => unwritable(e),
    })?;
    if !roots.contain(&resolved) {
        return Err(outside());
    }
    if targets.protects(&resolved) {
        return Err(protected());
    }
    let dir = open_resolved(&resolved, libc::O_DIRECTORY).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => outside(),
        Some(libc::ENOTDIR) => ExportError::NoDirectory(name.clone()),
        _ => unwritable(e),
    })?;
    if !roots.hold_opened(&dir) {
        return Err(outside());
    }
    Ok((dir, resolved))
}

/// Writes the result stored at `stored` to `request.path` (see the module's steps).
pub(crate) fn place(
    targets: &ExportTargets,
    request: &Request,
    stored: &Path,
    render: &RenderRequest,
) -> Result<Placed, ExportError> {
    let requested = &request.path;
    let name = requested.display().to_string();
    let failed = |e: std::io::Error| match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => ExportError::NoSpace(name.clone()),
        Some(libc::EEXIST) => ExportError::Exists(name.clone()),
        _ => ExportError::Unwritable {
            path: name.clone(),
            reason: e.to_string(),
        },
    };
    // The stored result first: a missing or damaged one is the server's problem, not the
    // target's.
    let as_stored = render.format == ResultFormat::Binary
        && result_file::mapped_binary(stored)
            .map_err(|e| ExportError::Stored(e.to_string()))?
            .is_some();
    let (dir, resolved) = open_directory(targets, requested)?;
    let file_name = requested.file_name().expect("checked by parse_request");
    let final_name = c_name(file_name.as_bytes()).map_err(failed)?;
    let id = uuid::Uuid::now_v7();
    let hidden = format!("{PREFIX}{id}{SUFFIX}");
    // Removed (dropped) once the hidden name is gone; a crash leaves it for the next start.
    let record = Record::new(&targets.records, id, &resolved.join(&hidden)).map_err(failed)?;
    let hidden = c_name(hidden.as_bytes()).map_err(failed)?;
    let fd = dir.as_raw_fd();
    let written = write_hidden(&dir, &hidden, stored, render, as_stored).and_then(|placed| {
        // Without `replace`, a new name for the hidden file (fails if the name exists);
        // with it, the hidden file renamed over the name.
        // SAFETY: both names are NUL-terminated C strings alive for the call, relative to
        // `dir`, an open directory descriptor.
        let named = unsafe {
            if request.replace {
                libc::renameat(fd, hidden.as_ptr(), fd, final_name.as_ptr())
            } else {
                libc::linkat(fd, hidden.as_ptr(), fd, final_name.as_ptr(), 0)
            }
        };
        if named != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(placed)
    });
    // Gone after a link, or after a rename onto a name that was already a link to the
    // same file (which renames nothing); gone on a failure too.
    // SAFETY: as above; the hidden name is ours alone (a fresh UUID).
    unsafe { libc::unlinkat(fd, hidden.as_ptr(), 0) };
    drop(record);
    let placed = written.map_err(failed)?;
    dir.sync_all().map_err(failed)?;
    Ok(placed)
}

/// A file name as a C string.
fn c_name(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(std::io::Error::other)
}

/// Makes the hidden file `hidden` in `dir`: a link to the stored binary result where the
/// file system takes one (`as_stored`: the request is for the stored bytes as they are),
/// else a copy or a rendering, synced. Its size, and whether it is a link.
fn write_hidden(
    dir: &File,
    hidden: &CString,
    stored: &Path,
    render: &RenderRequest,
    as_stored: bool,
) -> std::io::Result<Placed> {
    if as_stored {
        let source = c_name(stored.as_os_str().as_bytes())?;
        // SAFETY: both names are NUL-terminated C strings alive for the call; the source is
        // absolute, the target relative to `dir`, an open directory descriptor.
        let linked = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                source.as_ptr(),
                dir.as_raw_fd(),
                hidden.as_ptr(),
                0,
            )
        };
        if linked == 0 {
            let bytes = std::fs::metadata(stored)?.len();
            return Ok(Placed {
                bytes,
                linked: true,
            });
        }
        // Another file system (EXDEV), or one without hard links: copied below.
    }
    // SAFETY: `hidden` is a NUL-terminated C string alive for the call, relative to `dir`;
    // the descriptor returned is owned by the `File` made from it at once.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            hidden.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    let mut out = unsafe { File::from_raw_fd(fd) };
    if as_stored {
        std::io::copy(&mut File::open(stored)?, &mut out)?;
    } else {
        result_file::render_to_file(stored, render, &out)?;
    }
    out.sync_all()?;
    Ok(Placed {
        bytes: out.metadata()?.len(),
        linked: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_roots_may_not_lie_in_the_servers_own_data() {
        let dir = tempfile::tempdir().unwrap();
        let (data, scratch) = (dir.path().join("data"), dir.path().join("scratch"));
        std::fs::create_dir_all(data.join("results")).unwrap();
        std::fs::create_dir_all(scratch.join("keys/deeper")).unwrap();
        let tokens = scratch.join("keys/tokens");
        let inside = ExportTargets::new(&[data.join("results")], &data, None).unwrap_err();
        assert!(inside.contains("data directory"), "{inside}");
        // A root above the data directory and the tokens file is allowed; the data
        // directory (and below) and the tokens file's directory (not below) are no target.
        let above = ExportTargets::new(&[dir.path().to_owned()], &data, Some(&tokens)).unwrap();
        let resolved = |p: PathBuf| std::fs::canonicalize(p).unwrap();
        assert!(above.protects(&resolved(data.clone())));
        assert!(above.protects(&resolved(data.join("results"))));
        assert!(above.protects(&resolved(scratch.join("keys"))));
        assert!(!above.protects(&resolved(scratch.join("keys/deeper"))));
        assert!(!above.protects(&resolved(scratch)));
    }

    #[test]
    fn requests_name_an_absolute_file_without_parent_components() {
        let ok = parse_request(br#"{"path": "/scratch/out.bin"}"#).unwrap();
        assert_eq!(ok.path, PathBuf::from("/scratch/out.bin"));
        assert_eq!(ok.format, ResultFormat::Binary);
        assert!(!ok.replace);
        let replace = parse_request(br#"{"path": "/o.bin", "replace": true}"#).unwrap();
        assert!(replace.replace);
        let json = parse_request(br#"{"path": "/o.json", "format": "json"}"#).unwrap();
        assert_eq!(json.format, ResultFormat::Json);
        for (body, says) in [
            (&br#"{"path": "relative.bin"}"#[..], "not an absolute path"),
            (br#"{"path": "/a/../b.bin"}"#, "'..'"),
            (br#"{"path": "/scratch/"}"#, "names a directory"),
            (br#"{"path": "/"}"#, "names a directory"),
            (br#"{"path": "/a\u0000b"}"#, "NUL"),
            (br#"{"path": "/o.bin", "format": "csv"}"#, "unknown format"),
            (br#"{"path": "/o.bin", "mode": 1}"#, "must be JSON like"),
            (b"not json", "must be JSON like"),
        ] {
            let message = parse_request(body).unwrap_err().to_string();
            assert!(message.contains(says), "{message}");
        }
    }
}
