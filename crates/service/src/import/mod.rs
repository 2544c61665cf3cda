//! Jobs by reference: `POST /v1/jobs` with a body of media type [`MEDIA_TYPE`],
//! `{"path": "/abs/file"}`, names a file on the server's file system instead of carrying its
//! bytes. The operator names the directories such files may come from (`import_roots`);
//! a token needs the `import` permission ([`super::auth`]).
//!
//! What is checked, in order (each refusal has its own error, [`ReferenceError`]):
//! - the request: JSON with an absolute `path`, no `..` component, no NUL;
//! - the path, resolved (symbolic links followed, [`std::fs::canonicalize`]), lies inside a
//!   root: a link pointing out of every root is refused like a path outside them;
//! - the file is opened without following a last-component link and without blocking (a
//!   FIFO would otherwise hang the open), and what was opened is checked again: a regular
//!   file (no device, FIFO, socket or directory) whose path, as the kernel names the open
//!   descriptor, still lies inside a root (a directory swapped for a link after the check
//!   is caught here).
//!
//! Then the file is copied into the store, so the job is about the bytes as copied and no
//! later change of the original reaches it: first as a reflink (`FICLONE`: an atomic
//! snapshot sharing the file system's blocks, where the file system can), then read,
//! hashed and parsed like an upload ([`super::upload`], with nothing to write); else read
//! with plain `read` calls (never mapped: a truncation mid-way cannot raise SIGBUS) and fed
//! to the upload pipeline, which decompresses, counts, hashes and writes it as an upload.
//! A copy during which the file changed (its size, modification or change time, or the
//! bytes read disagree with its size) is refused ([`ReferenceError::Changed`]); a copy that
//! does not fit the disk is `507` like an upload.
//!
//! A plain `egb` file of [`parallel::PART_BYTES`] (8 MiB) or more skips the pipeline and is
//! keyed like an upload in parts of 8 MiB. Up to the parse-on-submission limit, on a store
//! whose arena files are the store (SQLite), it is read into memory on every core, checked
//! and loaded there (a malformed one is refused like an upload), and its store copy is
//! written behind the job ([`memory`]). Otherwise it is copied (or its snapshot hashed) in
//! parts on every core ([`parallel`]), and its worker maps and checks it (so a malformed one
//! fails its job instead of the request, as an upload in parts does).
//!
//! This module knows nothing about HTTP beyond the body it is given.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

use super::parts::session::parts_key;
use super::storage;
use super::upload::{self, StoredArena, UploadError, UploadPhases, UploadTarget};

mod memory;
mod parallel;

pub(crate) use memory::{ReadAgainError, in_flight, read_again};

/// The media type of a by-reference submission's body.
pub const MEDIA_TYPE: &str = "application/vnd.egsolve.reference+json";
/// Largest accepted by-reference request body.
pub const MAX_REQUEST_BYTES: usize = 64 << 10;
/// Bytes per read of a copied file.
const READ_BLOCK: usize = 4 << 20;

/// Why a job by reference is refused.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The server has no import roots.
    #[error(
        "this server takes no jobs by reference: upload the file instead, or ask the operator to start the server with --import-root DIR"
    )]
    Disabled,
    /// The caller's token lacks the `import` permission.
    #[error(
        "your token may not submit jobs by reference: upload the file instead, or ask the operator for a token with the import permission (egsolve token add NAME --import)"
    )]
    Forbidden,
    /// The request body is not a reference.
    #[error("invalid reference: {0}")]
    Invalid(String),
    /// The resolved path lies outside every import root.
    #[error(
        "'{path}' is outside the server's import roots: name a file under {roots} (symbolic links out of them are refused)"
    )]
    Outside {
        /// The path as requested.
        path: String,
        /// The roots, for the message.
        roots: String,
    },
    /// No such file.
    #[error("'{0}' does not exist on the server: check the path as the server sees it")]
    NotFound(String),
    /// A directory, device, FIFO or socket.
    #[error("'{path}' is {what}, not a regular file: name a regular file")]
    NotRegular {
        /// The path as requested.
        path: String,
        /// What it is.
        what: &'static str,
    },
    /// The server may not read it.
    #[error("the server cannot read '{path}': {reason}; make it readable by the server's user")]
    Unreadable {
        /// The path as requested.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The file changed while it was copied.
    #[error("'{0}' changed while it was being copied: submit it again once nothing writes to it")]
    Changed(String),
}

/// A refused or failed job by reference.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The reference itself.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// Storing or parsing the copy (as for an upload).
    #[error(transparent)]
    Upload(#[from] UploadError),
}

/// The import roots (or the export roots: [`crate::export`]), resolved once at start-up.
#[derive(Debug, Clone, Default)]
pub struct ImportRoots(Vec<PathBuf>);

impl ImportRoots {
    /// The roots, each resolved (links followed).
    pub fn new(roots: &[PathBuf]) -> std::io::Result<ImportRoots> {
        let resolved = roots
            .iter()
            .map(std::fs::canonicalize)
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(ImportRoots(resolved))
    }

    /// Whether there are none (jobs by reference are off).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first root that lies inside `dir` (a path with its links followed).
    pub(crate) fn first_inside(&self, dir: &Path) -> Option<&Path> {
        self.0
            .iter()
            .map(PathBuf::as_path)
            .find(|root| root.starts_with(dir))
    }

    /// Whether `resolved` (a path with its links followed) lies inside a root.
    pub(crate) fn contain(&self, resolved: &Path) -> bool {
        self.0.iter().any(|root| resolved.starts_with(root))
    }

    /// Whether `file` lies inside a root as the kernel names the open descriptor: a
    /// directory on the way swapped for a link between the resolution and the open shows
    /// here.
    pub(crate) fn hold_opened(&self, file: &File) -> bool {
        use std::os::fd::AsRawFd;
        match std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            Ok(opened) => self.contain(&opened),
            // Nothing to check it by (no /proc): refused rather than trusted.
            Err(_) => false,
        }
    }

    /// The roots, for messages.
    pub(crate) fn listed(&self) -> String {
        let names: Vec<String> = self.0.iter().map(|r| r.display().to_string()).collect();
        names.join(", ")
    }
}

/// The path a by-reference body names.
pub fn parse_request(body: &[u8]) -> Result<PathBuf, ReferenceError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Request {
        path: String,
    }
    let request: Request = serde_json::from_slice(body).map_err(|e| {
        ReferenceError::Invalid(format!(
            "the body must be JSON like {{\"path\": \"/data/game.egb\"}} ({e})"
        ))
    })?;
    if request.path.contains('\0') {
        return Err(ReferenceError::Invalid(
            "the path contains a NUL byte".into(),
        ));
    }
    let path = PathBuf::from(&request.path);
    if !path.is_absolute() {
        return Err(ReferenceError::Invalid(format!(
            "'{}' is not an absolute path: name the file from the root, as the server sees it",
            request.path
        )));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(ReferenceError::Invalid(format!(
            "'{}' contains '..': name the file without parent components",
            request.path
        )));
    }
    Ok(path)
}

/// Opens `resolved` (a path with its links followed) for reading, with `flags` beside
/// `O_NOFOLLOW | O_CLOEXEC`: a last component that became a link meanwhile fails `ELOOP`.
pub(crate) fn open_resolved(resolved: &Path, flags: i32) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | flags)
        .open(resolved)
}

/// What identifies a file's contents for the change check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// An opened file named by reference, checked to be a regular file inside a root.
#[derive(Debug)]
pub struct Source {
    file: File,
    /// The path as requested, for messages.
    requested: String,
    stamp: Stamp,
}

impl Source {
    /// The file's size when opened.
    pub fn len(&self) -> u64 {
        self.stamp.len
    }
}

/// Resolves and opens `requested` (see the module's checks).
pub fn open(roots: &ImportRoots, requested: &Path) -> Result<Source, ReferenceError> {
    use std::os::unix::fs::FileTypeExt;
    let name = requested.display().to_string();
    let system = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => ReferenceError::NotFound(name.clone()),
        _ => ReferenceError::Unreadable {
            path: name.clone(),
            reason: e.to_string(),
        },
    };
    let outside = || ReferenceError::Outside {
        path: name.clone(),
        roots: roots.listed(),
    };
    let resolved = std::fs::canonicalize(requested).map_err(system)?;
    if !roots.contain(&resolved) {
        return Err(outside());
    }
    let file = open_resolved(&resolved, libc::O_NONBLOCK).map_err(|e| match e.raw_os_error() {
        // The last component became a link after it was resolved.
        Some(libc::ELOOP) => outside(),
        _ => system(e),
    })?;
    let meta = file.metadata().map_err(system)?;
    let kind = meta.file_type();
    let what = if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_block_device() || kind.is_char_device() {
        Some("a device")
    } else if !kind.is_file() {
        Some("not a regular file")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(ReferenceError::NotRegular { path: name, what });
    }
    if !roots.hold_opened(&file) {
        return Err(outside());
    }
    Ok(Source {
        file,
        requested: name,
        stamp: Stamp::of(&meta),
    })
}

/// Copies `source` into the store through `target` (reflinked where the file system can,
/// else read and written, refused with 507 first when its size does not fit beside
/// `reserve`); the stored arena, as for an upload. Whether the copy was a reflink comes
/// back too.
pub async fn receive(
    source: Source,
    mut target: UploadTarget,
    reserve: u64,
) -> Result<(StoredArena, bool), ImportError> {
    let tmp_dir = target.tmp_dir.clone();
    let (source, clone) = tokio::task::spawn_blocking(move || {
        let clone = reflink(&source.file, &tmp_dir);
        (source, clone)
    })
    .await
    .map_err(|e| UploadError::Io(std::io::Error::other(e.to_string())))?;
    if source.len() >= parallel::PART_BYTES && is_egb(&source.file) {
        if source.len() > target.max_bytes {
            return Err(UploadError::TooLarge {
                limit: target.max_bytes,
            }
            .into());
        }
        let reflinked = clone.is_some();
        // In memory while the budget holds the bytes until their copy is placed; else
        // copied now.
        let in_memory = match (&target.parse, &target.copy_behind) {
            (Some(parse), Some(budget)) if clone.is_none() && source.len() <= parse.limit => budget
                .try_reserve(source.len())
                .map(|held| (parse.clone(), held)),
            _ => None,
        };
        let stored = tokio::task::spawn_blocking(move || match in_memory {
            Some((parse, held)) => {
                storage::check_room(&target.tmp_dir, source.len(), reserve)
                    .map_err(UploadError::InsufficientStorage)?;
                memory::receive(source, &target, &parse, held, copy_threads())
            }
            None => copy_egb(source, clone, &target, reserve),
        })
        .await
        .map_err(|e| UploadError::Io(std::io::Error::other(e.to_string())))??;
        return Ok((stored, reflinked));
    }
    let requested = source.requested.clone();
    let changed = Arc::new(AtomicBool::new(false));
    let reflinked = clone.is_some();
    let reader = match clone {
        // A snapshot: nothing done to the original reaches it any more.
        Some((path, file)) => {
            target.written = Some(path);
            Reader {
                file,
                expected: None,
                changed: changed.clone(),
            }
        }
        None => {
            storage::check_room(&target.tmp_dir, source.len(), reserve)
                .map_err(UploadError::InsufficientStorage)?;
            Reader {
                expected: Some(source.stamp),
                file: source.file,
                changed: changed.clone(),
            }
        }
    };
    let written = target.written.clone();
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(4);
    std::thread::Builder::new()
        .name("egsolve-import".into())
        .spawn(move || reader.run(tx))
        .map_err(UploadError::Io)?;
    let mut rx = rx;
    let body = Body::from_stream(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)));
    match upload::receive(body, target).await {
        Ok(stored) => Ok((stored, reflinked)),
        Err(e) => {
            if let Some(path) = written {
                let _ = std::fs::remove_file(path);
            }
            if changed.load(Ordering::SeqCst) {
                Err(ReferenceError::Changed(requested).into())
            } else {
                Err(e.into())
            }
        }
    }
}

/// Whether `file` starts as an `egb` file (uncompressed).
fn is_egb(file: &File) -> bool {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; egsolve_core::format::egb::MAGIC.len()];
    file.read_exact_at(&mut head, 0).is_ok() && egsolve_core::format::egb::is_egb(&head)
}

/// Stores a large plain `egb` file in parts on several threads ([`parallel`]): the
/// reflinked snapshot is only hashed, the original is copied while hashed and must not have
/// changed meanwhile. The arena is checked by its worker, as an upload in parts.
fn copy_egb(
    source: Source,
    clone: Option<(PathBuf, File)>,
    target: &UploadTarget,
    reserve: u64,
) -> Result<StoredArena, ImportError> {
    let start = Instant::now();
    let len = source.len();
    let threads = copy_threads();
    let (tmp_path, outcome) = match clone {
        Some((path, snapshot)) => {
            // The snapshot is of the file as it was at the reflink, which need not be its
            // size when opened: another size is a change (and its bytes past `len` would
            // otherwise be stored unhashed).
            let digests = match snapshot.metadata() {
                Ok(meta) if meta.len() == len => {
                    parallel::hash_in_parts(&snapshot, len, None, threads)
                }
                Ok(_) => Err(parallel::CopyError::Changed),
                Err(e) => Err(parallel::CopyError::Io(e)),
            };
            (path, digests.map(|d| (d, 0.0)))
        }
        None => {
            storage::check_room(&target.tmp_dir, len, reserve)
                .map_err(UploadError::InsufficientStorage)?;
            let path = target.tmp_dir.join(format!("{}.ref", uuid::Uuid::now_v7()));
            let copied = File::create(&path)
                .map_err(parallel::CopyError::Io)
                .and_then(|copy| {
                    let digests = parallel::copy_in_parts(&source.file, len, &copy, threads)?;
                    let synced = Instant::now();
                    copy.sync_data().map_err(parallel::CopyError::Io)?;
                    let unchanged = source.file.metadata().map(|m| Stamp::of(&m));
                    match unchanged {
                        Ok(stamp) if stamp == source.stamp => {
                            Ok((digests, synced.elapsed().as_secs_f64()))
                        }
                        Ok(_) => Err(parallel::CopyError::Changed),
                        Err(e) => Err(parallel::CopyError::Io(e)),
                    }
                });
            (path, copied)
        }
    };
    let placed = Instant::now();
    let outcome = outcome.map_err(|e| match e {
        parallel::CopyError::Changed => {
            ImportError::from(ReferenceError::Changed(source.requested.clone()))
        }
        parallel::CopyError::Io(e) => stored_error(e),
    });
    let key = outcome.and_then(|(digests, fsync)| {
        let key = parts_key(parallel::PART_BYTES, len, digests);
        upload::place(&tmp_path, &target.arenas_dir.join(&key), false).map_err(stored_error)?;
        Ok((key, fsync))
    });
    let (key, fsync) = match key {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp_path);
            return Err(e);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let place = placed.elapsed().as_secs_f64();
    Ok(StoredArena {
        hash: key,
        bytes: len,
        seconds,
        phases: UploadPhases {
            write: seconds - place - fsync,
            fsync,
            place,
            ..UploadPhases::default()
        },
        parsed: None,
        source: None,
    })
}

/// Threads that read (and copy) a large file named by reference: every core, up to
/// [`parallel::MAX_THREADS`].
fn copy_threads() -> usize {
    crate::config::cores().min(parallel::MAX_THREADS)
}

/// A failed write of the store's copy: a full disk is `507`, as for an upload.
fn stored_error(e: std::io::Error) -> ImportError {
    if storage::is_full(&e) {
        UploadError::InsufficientStorage(storage::NoRoom::Full(e.to_string())).into()
    } else {
        UploadError::Io(e).into()
    }
}

/// A body that streams `file` (a server-side file nothing else writes, such as a finished
/// upload in parts) in large blocks, for the upload pipeline.
pub(crate) fn file_body(file: File) -> Body {
    let reader = Reader {
        file,
        expected: None,
        changed: Arc::new(AtomicBool::new(false)),
    };
    let (tx, mut rx) = mpsc::channel::<std::io::Result<Bytes>>(4);
    let spawned = std::thread::Builder::new()
        .name("egsolve-import".into())
        .spawn(move || reader.run(tx));
    if let Err(e) = spawned {
        return Body::from_stream(futures::stream::once(async move { Err::<Bytes, _>(e) }));
    }
    Body::from_stream(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}

/// A reflinked copy of `source` in `dir` (its path and the copy, opened), or `None` where
/// the file system cannot (another file system, or one without shared extents).
fn reflink(source: &File, dir: &Path) -> Option<(PathBuf, File)> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = dir.join(format!("{}.ref", uuid::Uuid::now_v7()));
        let copy = File::create(&path).ok()?;
        // SAFETY: both descriptors are open for the duration of the call; FICLONE reads
        // no memory of ours (its argument is the source descriptor).
        let status = unsafe { libc::ioctl(copy.as_raw_fd(), libc::FICLONE, source.as_raw_fd()) };
        if status != 0 {
            drop(copy);
            let _ = std::fs::remove_file(&path);
            return None;
        }
        drop(copy);
        let copy = File::open(&path).ok()?;
        Some((path, copy))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (source, dir);
        None
    }
}

/// Reads a file into the upload pipeline in large blocks; for the original (not a
/// snapshot), checks at the end that it did not change meanwhile.
struct Reader {
    file: File,
    /// The original's stamp when opened; `None` for a snapshot.
    expected: Option<Stamp>,
    changed: Arc<AtomicBool>,
}

impl Reader {
    fn run(mut self, tx: mpsc::Sender<std::io::Result<Bytes>>) {
        let mut total = 0u64;
        loop {
            let mut block = BytesMut::zeroed(READ_BLOCK);
            let mut filled = 0;
            while filled < READ_BLOCK {
                match self.file.read(&mut block[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.blocking_send(Err(e));
                        return;
                    }
                }
            }
            total += filled as u64;
            if let Some(stamp) = self.expected {
                if total > stamp.len {
                    return self.refuse(&tx);
                }
            }
            let end = filled < READ_BLOCK;
            block.truncate(filled);
            if filled > 0 && tx.blocking_send(Ok(block.freeze())).is_err() {
                return; // the pipeline stopped
            }
            if end {
                break;
            }
        }
        if let Some(stamp) = self.expected {
            let now = self.file.metadata().map(|m| Stamp::of(&m));
            if total != stamp.len || now.ok() != Some(stamp) {
                self.refuse(&tx);
            }
        }
    }

    fn refuse(&self, tx: &mpsc::Sender<std::io::Result<Bytes>>) {
        self.changed.store(true, Ordering::SeqCst);
        let _ = tx.blocking_send(Err(std::io::Error::other(
            "the file changed while it was being copied",
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_name_absolute_paths_without_parent_components() {
        assert_eq!(
            parse_request(br#"{"path": "/data/a.egb"}"#).unwrap(),
            PathBuf::from("/data/a.egb")
        );
        for bad in [
            &br#"{"path": "data/a.egb"}"#[..],
            br#"{"path": "/data/../etc/passwd"}"#,
            br#"{"path": "/data/a\u0000"}"#,
            br#"{"file": "/data/a.egb"}"#,
            b"/data/a.egb",
        ] {
            let err = parse_request(bad).unwrap_err();
            assert!(
                matches!(err, ReferenceError::Invalid(_)),
                "{}: {err}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn only_regular_files_inside_a_root_open() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("game.mpg"), "0;\n0 MAX 0:1;\n").unwrap();
        std::fs::write(dir.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("game.mpg"), root.join("in")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let roots = ImportRoots::new(std::slice::from_ref(&root)).unwrap();
        assert_eq!(open(&roots, &root.join("game.mpg")).unwrap().len(), 14);
        assert_eq!(open(&roots, &root.join("in")).unwrap().len(), 14);
        let kind = |p: &Path| match open(&roots, p).unwrap_err() {
            ReferenceError::Outside { .. } => "outside",
            ReferenceError::NotFound(_) => "not-found",
            ReferenceError::NotRegular { what, .. } => what,
            e => panic!("{e}"),
        };
        assert_eq!(kind(&root.join("out")), "outside");
        assert_eq!(kind(&dir.path().join("secret")), "outside");
        assert_eq!(kind(&root.join("missing")), "not-found");
        assert_eq!(kind(&root.join("sub")), "a directory");
        assert_eq!(kind(&root.join("fifo")), "a FIFO");
        assert_eq!(kind(Path::new("/dev/null")), "outside");
        let devices = ImportRoots::new(&[PathBuf::from("/dev")]).unwrap();
        assert!(matches!(
            open(&devices, Path::new("/dev/null")).unwrap_err(),
            ReferenceError::NotRegular {
                what: "a device",
                ..
            }
        ));
    }
}
