//! Per-byte work on an upload's chunks kept off the thread that receives them: the SHA-256
//! of the content and the writes to the arena file each run on a thread of their own, fed
//! the chunks without a copy (`Bytes` are reference-counted), so receiving, hashing, writing
//! and (in [`super::upload`]) parsing overlap. Small bodies are handled on the calling thread
//! (a thread is not worth it for a few kilobytes): the work moves to its thread once
//! [`INLINE_BYTES`] have been fed.

use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use bytes::Bytes;
use sha2::{Digest, Sha256};

/// Bytes handled on the calling thread before the work moves to a thread of its own.
pub const INLINE_BYTES: u64 = 1 << 20;
/// Chunks queued for the thread.
const QUEUED: usize = 256;

/// Work done chunk by chunk.
pub trait Sink: Send + 'static {
    /// Takes the next chunk.
    fn take(&mut self, chunk: &[u8]);
}

/// A [`Sink`] fed on the calling thread, then on a thread named `name`.
pub enum Offloaded<S: Sink> {
    /// Still on the calling thread, with the bytes fed so far.
    Inline(S, u64, &'static str),
    /// On its thread.
    Thread(SyncSender<Bytes>, JoinHandle<S>),
    /// Between the two (only while moving).
    Moving,
}

impl<S: Sink> Offloaded<S> {
    /// `sink`, fed on the calling thread for now.
    pub fn new(sink: S, name: &'static str) -> Offloaded<S> {
        Offloaded::Inline(sink, 0, name)
    }

    /// Feeds `chunk` (to the thread without a copy).
    pub fn feed(&mut self, chunk: Bytes) {
        if let Offloaded::Inline(sink, fed, name) = self {
            *fed += chunk.len() as u64;
            if *fed <= INLINE_BYTES {
                sink.take(&chunk);
                return;
            }
            let name = *name;
            let Offloaded::Inline(mut sink, _, _) = std::mem::replace(self, Offloaded::Moving)
            else {
                unreachable!("matched above")
            };
            let (tx, rx) = sync_channel::<Bytes>(QUEUED);
            let (tx_back, rx_back) = sync_channel::<S>(1);
            let spawned = std::thread::Builder::new()
                .name(format!("egsolve-{name}"))
                .spawn(move || {
                    let mut sink = rx_back.recv().expect("the sink is sent at once");
                    for chunk in rx {
                        sink.take(&chunk);
                    }
                    sink
                });
            match spawned {
                Ok(thread) => {
                    tx_back.send(sink).expect("the thread waits for its sink");
                    *self = Offloaded::Thread(tx, thread);
                }
                Err(e) => {
                    // No thread to be had: the work stays here.
                    tracing::warn!("{name} on the upload's thread: {e}");
                    sink.take(&chunk);
                    *self = Offloaded::Inline(sink, 0, name);
                    return;
                }
            }
        }
        if let Offloaded::Thread(tx, _) = self {
            // The thread stops only when the sender is dropped.
            let _ = tx.send(chunk);
        }
    }

    /// Waits for everything fed to be taken; the sink.
    pub fn finish(self) -> S {
        match self {
            Offloaded::Inline(sink, _, _) => sink,
            Offloaded::Thread(tx, thread) => {
                drop(tx);
                thread.join().expect("a sink does not panic")
            }
            Offloaded::Moving => unreachable!("never left moving"),
        }
    }
}

/// The SHA-256 of everything fed.
#[derive(Default)]
pub struct Hash(Sha256);

impl Sink for Hash {
    fn take(&mut self, chunk: &[u8]) {
        self.0.update(chunk);
    }
}

impl Hash {
    /// The hex digest.
    pub fn hex(self) -> String {
        hex::encode(self.0.finalize())
    }
}

/// Bytes buffered before a write to the file: few, large writes.
const WRITE_BUFFER: usize = 4 << 20;

/// Writes everything fed to a file in large writes; the first failure is kept (and later
/// chunks dropped) for [`FileSink::finish`], and raised at once in [`FileSink::failed_flag`]
/// so the feeder can stop early (a full disk need not wait for the whole body).
///
/// Every [`WRITEBACK_EVERY`] bytes the disk is asked to start writing what came so far
/// (`sync_file_range`), so that the fsync after the body's end finds little left: a 143 MB
/// upload's fsync took 58–61 ms on the build VM when all of it waited for the end.
pub struct FileSink {
    /// `None` when the bytes are in the file already (nothing to write).
    out: Option<BufWriter<std::fs::File>>,
    file: Option<std::fs::File>,
    failed: Option<std::io::Error>,
    failed_flag: Arc<AtomicBool>,
    /// Bytes taken, and how many of them were handed to the disk's writeback.
    taken: u64,
    written_back: u64,
}

/// Bytes between two writeback requests of a [`FileSink`].
const WRITEBACK_EVERY: u64 = 16 << 20;

impl FileSink {
    /// Writes to `file`.
    pub fn new(file: std::fs::File) -> FileSink {
        FileSink {
            out: Some(BufWriter::with_capacity(WRITE_BUFFER, file)),
            file: None,
            failed: None,
            failed_flag: Arc::default(),
            taken: 0,
            written_back: 0,
        }
    }

    /// Writes nothing: `file` holds the bytes already (a reflinked copy); [`FileSink::finish`]
    /// hands it back for the sync.
    pub fn written(file: std::fs::File) -> FileSink {
        FileSink {
            out: None,
            file: Some(file),
            failed: None,
            failed_flag: Arc::default(),
            taken: 0,
            written_back: 0,
        }
    }

    /// Set once a write fails.
    pub fn failed_flag(&self) -> Arc<AtomicBool> {
        self.failed_flag.clone()
    }

    /// The file, every write done (not synced), or the first failure.
    pub fn finish(self) -> std::io::Result<std::fs::File> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        match (self.out, self.file) {
            (Some(out), _) => out
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error),
            (None, Some(file)) => Ok(file),
            (None, None) => unreachable!("a sink has its file"),
        }
    }
}

impl Sink for FileSink {
    fn take(&mut self, chunk: &[u8]) {
        if let (None, Some(out)) = (&self.failed, &mut self.out) {
            self.taken += chunk.len() as u64;
            let mut written = out.write_all(chunk);
            if written.is_ok() && self.taken - self.written_back >= WRITEBACK_EVERY {
                written = out.flush();
                if written.is_ok() {
                    start_writeback(out.get_ref(), self.written_back, self.taken);
                    self.written_back = self.taken;
                }
            }
            if let Err(e) = written {
                self.failed = Some(e);
                self.failed_flag.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Asks the disk to start writing bytes `from..to` of `file` (advice: an error is ignored,
/// and the fsync later writes whatever is left).
fn start_writeback(file: &std::fs::File, from: u64, to: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (
            libc::off64_t::try_from(from),
            libc::off64_t::try_from(to - from),
        ) else {
            return;
        };
        // SAFETY: a plain system call on a file descriptor borrowed for its duration.
        let _ = unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, from, to);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_does_not_depend_on_how_the_body_is_cut() {
        let body: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let whole = hex::encode(Sha256::digest(&body));
        for piece in [1000, 65536, 1 << 20, 3_000_000] {
            let mut hash = Offloaded::new(Hash::default(), "hash");
            for chunk in body.chunks(piece) {
                hash.feed(Bytes::copy_from_slice(chunk));
            }
            assert_eq!(hash.finish().hex(), whole, "pieces of {piece}");
        }
    }

    #[test]
    fn files_get_every_chunk_in_order() {
        let dir = tempfile::tempdir().unwrap();
        // Past two writeback requests, the last chunk ending between them.
        let bytes = 2 * WRITEBACK_EVERY as u32 + 5_000_000;
        let body: Vec<u8> = (0..bytes).map(|i| (i % 241) as u8).collect();
        let path = dir.path().join("body");
        let mut file = Offloaded::new(
            FileSink::new(std::fs::File::create(&path).unwrap()),
            "write",
        );
        for chunk in body.chunks(70_000) {
            file.feed(Bytes::copy_from_slice(chunk));
        }
        let sink = file.finish();
        assert_eq!(
            sink.written_back,
            2 * WRITEBACK_EVERY / 70_000 * 70_000 + 70_000
        );
        sink.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == body);
    }
}
