//! Large plain `egb` files named by reference, read into memory and answered from there,
//! with the store's copy written behind the job.
//!
//! Copying such a file into a tmpfs store is bound by the page cache adding one page at a
//! time to the new file (about 2.8 GB/s on the H200 host however many threads write: 75 ms
//! of a 190 ms 10^7-edge job, `docs/bench/data-path.md`). Anonymous memory has no such
//! index: read into it on every core, the file is hashed there (the parts key of an upload
//! in parts, as [`super::parallel`] computes it) and checked and loaded where it lies
//! ([`egsolve_core::format::read_shared`]): the job's game holds the buffer, and its worker
//! starts at once. The store's copy is written from the same buffer on a thread of its
//! own once the job is done with it, or after at most [`MAX_WAIT`] ([`write_behind`]).
//!
//! Until that copy is placed the store does not hold the arena's bytes. In this process
//! they stay reachable ([`in_flight`]: a game the pre-parse budget did not keep is loaded
//! from them), and the arena's row names the file they came from (`arenas.source`): a
//! worker that finds neither (after a restart) reads that file again ([`read_again`]) and
//! takes it only if its bytes still have the arena's hash; a changed file fails the job
//! with `reference-changed`. The buffer holds its size of the pre-parse memory budget until
//! the copy is placed (a file the budget cannot hold is copied at submission instead). Only
//! stores whose arena files are the store (SQLite) take this path: PostgreSQL writes an
//! arena's chunks before its row commits.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use egsolve_core::arena::{SharedBytes, StableBytes};
use egsolve_core::format;

use super::parallel::{self, CopyError, PART_BYTES};
use super::{ImportError, ImportRoots, ReferenceError, Source, Stamp, stored_error};
use crate::parts::session::parts_key;
use crate::preparse::{ParseRequest, Reservation};
use crate::upload::{self, StoredArena, UploadError, UploadPhases, UploadTarget};

/// Threads that write the store's copy behind a job: one, at the lowest CPU priority. The
/// copy is bound by the page cache's index of one file, not by threads, and the next jobs
/// and the result's download run beside it (2-core build VM, 10^7 edges: the download took
/// 36 ms beside a copy on two threads, 25 ms beside this one; medians of 7).
const BEHIND_THREADS: usize = 1;
/// Longest pause between two looks at whether the job still holds the bytes.
const MAX_PAUSE: Duration = Duration::from_millis(50);
/// Longest wait for the job before the copy starts anyway: a job that waits in the queue
/// must not leave its bytes uncopied (and its file needed again after a restart) for long.
const MAX_WAIT: Duration = Duration::from_secs(10);

/// Reads `source` into memory on `threads` threads: its bytes and their parts key. The file
/// must end at its size when opened and keep its size and time stamps until read.
///
/// The memory is an anonymous map: fresh pages from the kernel, faulted in by the reads on
/// every thread, in huge pages where the kernel gives them (a buffer from the allocator may
/// be memory it reuses, zeroed first on one thread: 142 MB took 35 ms on the H200 host).
fn read(source: &Source, threads: usize) -> Result<(SharedBytes, String), CopyError> {
    let len = source.len();
    let size = usize::try_from(len).map_err(|e| CopyError::Io(std::io::Error::other(e)))?;
    let mut map = memmap2::MmapMut::map_anon(size).map_err(CopyError::Io)?;
    let _ = map.advise(memmap2::Advice::HugePage);
    let digests = parallel::read_in_parts(&source.file, &mut map, threads)?;
    match source.file.metadata() {
        Ok(meta) if Stamp::of(&meta) == source.stamp => {}
        Ok(_) => return Err(CopyError::Changed),
        Err(e) => return Err(CopyError::Io(e)),
    }
    let map = map.make_read_only().map_err(CopyError::Io)?;
    Ok((
        format::shared_anonymous(map),
        parts_key(PART_BYTES, len, digests),
    ))
}

fn changed_or_io(e: CopyError, requested: &str) -> ImportError {
    match e {
        CopyError::Changed => ReferenceError::Changed(requested.to_string()).into(),
        CopyError::Io(e) => UploadError::Io(e).into(),
    }
}

/// Reads `source` into memory, keys and loads it (`parse`: the submission's reader
/// options), and starts its store copy behind the job unless the store holds those bytes
/// already. A malformed file is refused as an upload's would be.
pub(super) fn receive(
    source: Source,
    target: &UploadTarget,
    parse: &ParseRequest,
    held: Reservation,
    threads: usize,
) -> Result<StoredArena, ImportError> {
    let start = Instant::now();
    let (bytes, key) = read(&source, threads).map_err(|e| changed_or_io(e, &source.requested))?;
    let read_seconds = start.elapsed().as_secs_f64();
    let parse_start = Instant::now();
    let game = format::read_shared(bytes.clone(), &parse.options).map_err(UploadError::Parse)?;
    let parse_seconds = parse_start.elapsed().as_secs_f64();
    let dest = target.arenas_dir.join(&key);
    // Identical bytes stored before need no copy (and no file to read again).
    let behind = !dest.exists();
    if behind {
        write_behind(bytes, target.tmp_dir.clone(), dest, held);
    }
    Ok(StoredArena {
        hash: key,
        bytes: source.len(),
        seconds: start.elapsed().as_secs_f64(),
        phases: UploadPhases {
            receive: read_seconds,
            parse: parse_seconds,
            ..UploadPhases::default()
        },
        parsed: Some((game, parse_seconds)),
        source: behind.then(|| source.requested.clone()),
    })
}

/// Writes `bytes` to `dest` (through a new file of `tmp_dir`, synced, then renamed) on a
/// thread of its own, once the job's game no longer holds them (or [`MAX_WAIT`] has
/// passed), holding `held` of the memory budget until then. Meanwhile a worker finds the
/// bytes through [`in_flight`]. A failure is logged: the job goes on from memory, and a
/// worker that needs the bytes later reads the named file again.
///
/// Waiting for the job keeps the copy (5 s at 10^9 edges on tmpfs) from competing with the
/// job's own result write for the page cache.
fn write_behind(bytes: SharedBytes, tmp_dir: PathBuf, dest: PathBuf, held: Reservation) {
    let registered = dest.clone();
    in_flight_copies().insert(registered.clone(), Arc::downgrade(&bytes));
    let spawned = std::thread::Builder::new()
        .name("egsolve-copy-behind".into())
        .spawn(move || {
            let _held = held;
            // SAFETY: setpriority reads no memory; on Linux `who = 0` is this thread
            // alone, and threads it starts inherit the priority.
            let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
            let (waited, mut pause) = (Instant::now(), Duration::from_millis(1));
            while Arc::strong_count(&bytes) > 1 && waited.elapsed() < MAX_WAIT {
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_PAUSE);
            }
            let start = Instant::now();
            match write_copy(bytes.bytes(), &tmp_dir, &dest, BEHIND_THREADS) {
                Ok(()) => tracing::debug!(
                    arena = %dest.display(),
                    seconds = start.elapsed().as_secs_f64(),
                    "store copy of a file named by reference written behind its job"
                ),
                Err(e) => tracing::warn!(
                    arena = %dest.display(),
                    "the store's copy of a file named by reference failed: {e}; its job \
                     goes on from memory, and the file is read again if the bytes are needed"
                ),
            }
            // Placed (or failed) first, forgotten after: a worker that finds neither the
            // bytes here nor the file reads the named file again.
            in_flight_copies().remove(&dest);
        });
    if let Err(e) = spawned {
        in_flight_copies().remove(&registered);
        tracing::warn!("cannot start the store copy's thread: {e}");
    }
}

/// The copies being written behind their jobs in this process, by the arena path they go
/// to: the bytes while anything still holds them.
fn in_flight_copies() -> std::sync::MutexGuard<'static, HashMap<PathBuf, Weak<dyn StableBytes>>> {
    static COPIES: LazyLock<Mutex<HashMap<PathBuf, Weak<dyn StableBytes>>>> =
        LazyLock::new(Mutex::default);
    COPIES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The bytes of the arena that goes to `dest` (a path of the store's arenas), while its
/// copy is being written behind its job in this process. A worker that finds no stored copy
/// asks here first, then looks for the file again (the copy places it before it is
/// forgotten here), and reads the named file again only when both fail: after a restart.
pub(crate) fn in_flight(dest: &Path) -> Option<SharedBytes> {
    in_flight_copies().get(dest).and_then(Weak::upgrade)
}

/// `bytes` written on `threads` threads, synced and placed at `dest`.
fn write_copy(bytes: &[u8], tmp_dir: &Path, dest: &Path, threads: usize) -> std::io::Result<()> {
    let tmp_path = tmp_dir.join(format!("{}.ref", uuid::Uuid::now_v7()));
    let written = File::create(&tmp_path).and_then(|copy| {
        crate::parallel_write::write_in_parts(bytes, &copy, threads)?;
        copy.sync_data()
    });
    let placed = written.and_then(|()| upload::place(&tmp_path, dest, false));
    if placed.is_err() {
        let _ = std::fs::remove_file(&tmp_path);
    }
    placed
}

/// Why a file named by reference could not stand in for its arena's missing store copy.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadAgainError {
    /// Its bytes are no longer those the job was accepted with (or it is gone).
    #[error(
        "the file '{path}' named by reference changed, or could not be read ({reason}), before the server had stored its copy: submit it again"
    )]
    Changed {
        /// The path as requested.
        path: String,
        /// What differed.
        reason: String,
    },
    /// The copy could not be written.
    #[error("the store's copy of '{path}' could not be written: {reason}")]
    Store {
        /// The path as requested.
        path: String,
        /// The error.
        reason: String,
    },
}

/// The arena `hash` read again from `requested` (named by reference when it was submitted)
/// and stored at `dest` (through `tmp_dir`), if the file's bytes still have that hash: its
/// bytes, for the caller to load without reading the copy once more.
pub(crate) fn read_again(
    roots: &[PathBuf],
    requested: &str,
    hash: &str,
    tmp_dir: &Path,
    dest: &Path,
) -> Result<SharedBytes, ReadAgainError> {
    let changed = |reason: String| ReadAgainError::Changed {
        path: requested.to_string(),
        reason,
    };
    let roots = ImportRoots::new(roots).map_err(|e| changed(format!("import roots: {e}")))?;
    let source = super::open(&roots, Path::new(requested)).map_err(|e| changed(e.to_string()))?;
    let (bytes, key) = read(&source, super::copy_threads()).map_err(|e| match e {
        CopyError::Changed => changed("it changed while it was read".into()),
        CopyError::Io(e) => changed(e.to_string()),
    })?;
    if key != hash {
        return Err(changed(format!("its bytes now hash to {key}, not {hash}")));
    }
    write_copy(bytes.bytes(), tmp_dir, dest, super::copy_threads()).map_err(|e| {
        ReadAgainError::Store {
            path: requested.to_string(),
            reason: stored_error(e).to_string(),
        }
    })?;
    Ok(bytes)
}
