//! Receiving an arena upload: the request body is streamed (never held whole in memory,
//! unless it came compressed and is to be parsed) through a decompressor chosen from
//! `Content-Encoding` or the magic bytes, counted in *decompressed* bytes against the size
//! limit (a gzip bomb stops at the limit) and hashed (SHA-256 of the decompressed bytes);
//! the body *as received* (compressed if it came compressed — less to write and fsync) goes
//! to a temporary file, which is fsynced and renamed to its content address
//! `arenas/<sha256>`. Identical arenas are therefore stored once, whatever their
//! compression; the readers recognise the compression by its magic bytes, and the binary
//! `egb` format by its own.
//!
//! Who does what, so that nothing per byte runs on the connection's task and the parse runs
//! on every core:
//! - the connection's task only forwards body chunks into a bounded channel;
//! - a spool thread counts and checks them, decompresses when the body is compressed, and
//!   keeps the text for the parse (up to the parse limit; not `egb`);
//! - a hashing thread hashes the (decompressed) chunks and a writing thread writes the body
//!   as received to the file in large writes, both fed without a copy ([`super::offload`];
//!   small bodies are handled on the spool thread: a thread is not worth it);
//! - when the body ends, the game is parsed on the rayon pool ([`super::preparse`]) while
//!   the writes finish and the file is fsynced: text from the copy kept in memory (cut at
//!   newlines and parsed in parallel), `egb` through the core reader on the written file
//!   (mapped and validated in place, not parsed). A malformed arena stops here, with its
//!   line and column.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::body::{Body, HttpBody};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use tokio::sync::mpsc;

use super::offload::{FileSink, Hash, Offloaded};
use super::preparse::{self, MemoryBudget, ParseRequest, ParseSource};
use super::storage::{self, NoRoom};
use egsolve_core::format::{FormatError, Game};

/// How the body is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Decided from the magic bytes.
    Sniff,
    /// Not compressed.
    Identity,
    /// gzip (also several concatenated members).
    Gzip,
    /// Zstandard.
    Zstd,
    /// bzip2.
    Bzip2,
}

impl Encoding {
    /// From a `Content-Encoding` header value; `None` for encodings the service cannot read.
    pub fn from_header(value: Option<&str>) -> Option<Encoding> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") => Some(Encoding::Sniff),
            Some("identity") => Some(Encoding::Identity),
            Some("gzip" | "x-gzip") => Some(Encoding::Gzip),
            Some("zstd") => Some(Encoding::Zstd),
            Some("bzip2" | "x-bzip2") => Some(Encoding::Bzip2),
            Some(_) => None,
        }
    }

    /// The encoding whose magic bytes `prefix` starts with (`Identity` for none).
    pub fn sniff(prefix: &[u8]) -> Encoding {
        if prefix.starts_with(&[0x1f, 0x8b]) {
            Encoding::Gzip
        } else if prefix.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Encoding::Zstd
        } else if prefix.starts_with(b"BZh") {
            Encoding::Bzip2
        } else {
            Encoding::Identity
        }
    }
}

/// Why an upload is refused.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// More than the limit after decompression.
    #[error("the arena is larger than the limit of {limit} decompressed bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The compressed stream is corrupt.
    #[error("the body could not be decompressed: {0}")]
    BadCompression(String),
    /// The body is not text (binary content, or not a game file).
    #[error("the body is not a game file: {0}")]
    WrongContent(String),
    /// The body is empty.
    #[error("the body is empty: send the arena file as the request body")]
    Empty,
    /// The client stopped sending.
    #[error("the upload was interrupted: {0}")]
    Interrupted(String),
    /// The store has no room for it: its declared size does not fit, or the disk filled
    /// while it was written (the partial file is removed).
    #[error(transparent)]
    InsufficientStorage(NoRoom),
    /// A file operation failed on the server.
    #[error("storing the upload failed: {0}")]
    Io(#[from] std::io::Error),
    /// The parser found the arena malformed or too large.
    #[error(transparent)]
    Parse(FormatError),
}

/// Seconds an upload spent in each phase (they overlap where said).
#[derive(Debug, Clone, Copy, Default)]
pub struct UploadPhases {
    /// First byte to the last, counted and decompressed (hashing and writing run beside it).
    pub receive: f64,
    /// The last byte to the hash's end (known once the writes have ended; beside the parse).
    pub hash: f64,
    /// The last byte to the end of the writes (beside the parse of text).
    pub write: f64,
    /// The file's fsync (beside the parse).
    pub fsync: f64,
    /// The parse, when the upload was parsed.
    pub parse: f64,
    /// The rename to the content address and the directory's fsync.
    pub place: f64,
}

/// A stored upload.
#[derive(Debug)]
pub struct StoredArena {
    /// SHA-256 of the decompressed bytes, hex.
    pub hash: String,
    /// Decompressed size.
    pub bytes: u64,
    /// Seconds from the first byte to the fsync (and the parse).
    pub seconds: f64,
    /// Each phase's seconds.
    pub phases: UploadPhases,
    /// The game and the parse's seconds, when it was parsed.
    pub parsed: Option<(Game, f64)>,
    /// The file named by reference it was read from, while the store's copy is written
    /// behind the job (recorded with the arena, for a worker that finds no stored copy:
    /// [`crate::import`]'s `memory`).
    pub source: Option<String>,
}

/// Where an upload goes and what is done with it.
#[derive(Debug, Clone)]
pub struct UploadTarget {
    /// How the body is compressed.
    pub encoding: Encoding,
    /// Largest accepted size, decompressed.
    pub max_bytes: u64,
    /// Uploads in progress.
    pub tmp_dir: PathBuf,
    /// Stored arenas (content addresses).
    pub arenas_dir: PathBuf,
    /// Parse the arena once received (bodies up to its limit), or not.
    pub parse: Option<ParseRequest>,
    /// The body is in this file of `tmp_dir` already (a reflinked copy of a file named by
    /// reference): it is read, hashed, parsed, synced and placed, not written again.
    pub written: Option<PathBuf>,
    /// A large `egb` file named by reference may be answered from memory, its store copy
    /// written behind the job, holding its size of this budget until the copy is placed:
    /// where the store's arena files are the store (SQLite).
    pub copy_behind: Option<Arc<MemoryBudget>>,
}

/// Body chunks queued between the connection's task and the spool thread.
const QUEUED_CHUNKS: usize = 64;
/// After a refusal mid-body (too large, disk full), at most this much of the rest is read
/// and dropped, so that the client, still sending, gets to read the answer.
const DRAIN_BYTES: u64 = 256 << 20;
/// … and for at most this long.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Streams `body` to `arenas_dir/<sha256>` through `tmp_dir`, parsing it once received when
/// `target.parse` says so.
pub async fn receive(body: Body, target: UploadTarget) -> Result<StoredArena, UploadError> {
    let start = Instant::now();
    let (tx, rx) = mpsc::channel::<Result<Bytes, String>>(QUEUED_CHUNKS);
    let expected = body.size_hint().exact();
    let spool = tokio::task::spawn_blocking(move || store_and_parse(rx, target, start, expected));
    let mut stream = body.into_data_stream();
    let mut refused = false;
    while let Some(chunk) = stream.next().await {
        let item = chunk.map_err(|e| e.to_string());
        let failed = item.is_err();
        if tx.send(item).await.is_err() {
            refused = true; // the spool stopped early (limit, corrupt data, disk full)
            break;
        }
        if failed {
            break; // the client failed
        }
    }
    drop(tx);
    let outcome = spool
        .await
        .map_err(|e| UploadError::Io(std::io::Error::other(e.to_string())))?;
    if refused && outcome.is_err() {
        drain_stream(stream).await;
    }
    outcome
}

/// Reads and drops (a bounded part of) a body that is refused unread, so that a client
/// still sending it gets to read the answer.
pub async fn drain(body: Body) {
    drain_stream(body.into_data_stream()).await;
}

/// [`drain`] of a body's data stream (what is left of a body read in part).
pub(crate) async fn drain_stream(mut stream: axum::body::BodyDataStream) {
    let drain = async {
        let mut drained = 0u64;
        while let Some(Ok(chunk)) = stream.next().await {
            drained += chunk.len() as u64;
            if drained > DRAIN_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
}

/// The spool thread's whole job: receive, then parse while the writes end and the file is
/// synced, then place.
fn store_and_parse(
    rx: mpsc::Receiver<Result<Bytes, String>>,
    target: UploadTarget,
    start: Instant,
    expected: Option<u64>,
) -> Result<StoredArena, UploadError> {
    let tmp_path = match &target.written {
        Some(path) => path.clone(),
        None => target.tmp_dir.join(uuid::Uuid::now_v7().to_string()),
    };
    let outcome = (|| {
        let keep_text = target.parse.as_ref().map_or(0, |p| p.limit);
        let mut raw = ChannelReader {
            rx,
            current: Bytes::new(),
        };
        let sink = match &target.written {
            Some(path) => FileSink::written(std::fs::File::open(path)?),
            None => FileSink::new(std::fs::File::create(&tmp_path)?),
        };
        let spooled = spool(&mut raw, sink, &target, keep_text, expected)?;
        let received = Instant::now();
        let mut phases = UploadPhases {
            receive: received.duration_since(start).as_secs_f64(),
            ..UploadPhases::default()
        };
        let parse = target.parse.filter(|p| spooled.total <= p.limit);
        let (source, parse_file) = match spooled.text {
            Some(text) => (ParseSource::Text(text), false),
            None => (ParseSource::File(tmp_path.clone()), parse.is_some()),
        };
        let (writer, hasher, arenas_dir) = (spooled.writer, spooled.hash, &target.arenas_dir);
        // The writes' and the hash's tails run on their own threads beside the parse: the
        // parse needs the file written, not its name (on the 2-core build VM the hash ended
        // 50 ms after the last byte, and the parse used to wait for it).
        let (stored, parsed) = std::thread::scope(|scope| {
            let (written_tx, written_rx) = std::sync::mpsc::channel::<()>();
            let storing = scope.spawn(move || -> std::io::Result<_> {
                let file = writer.finish().finish()?;
                let write = received.elapsed().as_secs_f64();
                let _ = written_tx.send(());
                let hash = hasher.finish().hex();
                let hash_seconds = received.elapsed().as_secs_f64();
                // Identical bytes stored before are durable already.
                let known = arenas_dir.join(&hash).exists();
                let sync_start = Instant::now();
                if !known {
                    file.sync_all()?;
                }
                Ok((
                    (hash, known, hash_seconds),
                    write,
                    sync_start.elapsed().as_secs_f64(),
                ))
            });
            // Text is parsed from memory at once; a file (egb) once it is written.
            let ready = !parse_file || written_rx.recv().is_ok();
            let parsed = parse
                .filter(|_| ready)
                .map(|p| preparse::parse(&source, &p));
            (storing.join(), parsed)
        });
        let ((hash, known, hash_seconds), write, fsync) =
            stored.map_err(|_| std::io::Error::other("the storing thread panicked"))??;
        let path = target.arenas_dir.join(&hash);
        phases.hash = hash_seconds;
        phases.write = write;
        phases.fsync = fsync;
        let parsed = match parsed {
            Some((Ok(game), seconds)) => {
                phases.parse = seconds;
                Some((game, seconds))
            }
            Some((Err(e), _)) => return Err(UploadError::Parse(e)),
            None => None,
        };
        let place_start = Instant::now();
        place(&tmp_path, &path, known)?;
        phases.place = place_start.elapsed().as_secs_f64();
        Ok(StoredArena {
            hash,
            bytes: spooled.total,
            seconds: start.elapsed().as_secs_f64(),
            phases,
            parsed,
            source: None,
        })
    })();
    if outcome.is_err() {
        let _ = std::fs::remove_file(&tmp_path);
    }
    outcome.map_err(|e| match e {
        UploadError::Io(e) if storage::is_full(&e) => {
            UploadError::InsufficientStorage(NoRoom::Full(e.to_string()))
        }
        e => e,
    })
}

/// Moves a synced temporary file to its content address (keeping an existing copy).
pub(crate) fn place(tmp_path: &Path, path: &Path, known: bool) -> std::io::Result<()> {
    if known || path.exists() {
        std::fs::remove_file(tmp_path)
    } else {
        std::fs::rename(tmp_path, path)?;
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

/// What [`spool`] leaves: the writes and the hash still under way, the decompressed size,
/// and the decompressed text when it was kept for the parse.
struct Spooled {
    writer: Offloaded<FileSink>,
    hash: Offloaded<Hash>,
    total: u64,
    text: Option<Vec<u8>>,
}

/// Decompressed bytes per block handed to the hasher (and kept for the parse).
const BLOCK: usize = 1 << 20;

/// Receives the body: hands it as received to the writer, decompresses, counts, checks the
/// start, hashes, and keeps the text for the parse (up to `keep_text` bytes; `egb` is read
/// from the file instead, mapped).
fn spool(
    raw: &mut ChannelReader,
    sink: FileSink,
    target: &UploadTarget,
    keep_text: u64,
    expected: Option<u64>,
) -> Result<Spooled, UploadError> {
    let head = raw.peek()?;
    let encoding = match target.encoding {
        Encoding::Sniff => Encoding::sniff(&head),
        given => given,
    };
    let write_failed = sink.failed_flag();
    let mut writer = Offloaded::new(sink, "write");
    let mut counter = Counter {
        total: 0,
        max_bytes: target.max_bytes,
        hash: Offloaded::new(Hash::default(), "hash"),
        write_failed,
    };
    let text = receive_body(
        raw,
        &mut writer,
        &mut counter,
        encoding,
        &head,
        keep_text,
        expected,
    );
    let text = match text {
        Ok(text) => text,
        // The writer's own error (a full disk, say) rather than the stop it caused.
        Err(_) if counter.write_failed.load(Ordering::Relaxed) => {
            return Err(match writer.finish().finish() {
                Err(e) => UploadError::Io(e),
                Ok(_) => UploadError::Io(std::io::Error::other("the write failed")),
            });
        }
        Err(e) => return Err(e),
    };
    if counter.total == 0 {
        return Err(UploadError::Empty);
    }
    Ok(Spooled {
        writer,
        hash: counter.hash,
        total: counter.total,
        text,
    })
}

/// Reads the body through `counter` (and, as received, into `writer`); the text when kept.
fn receive_body(
    raw: &mut ChannelReader,
    writer: &mut Offloaded<FileSink>,
    counter: &mut Counter,
    encoding: Encoding,
    head: &[u8],
    keep_text: u64,
    expected: Option<u64>,
) -> Result<Option<Vec<u8>>, UploadError> {
    Ok(if encoding == Encoding::Identity {
        let egb = head.starts_with(&egsolve_core::format::egb::MAGIC);
        let mut text = (keep_text > 0 && !egb).then(|| {
            // Sized from Content-Length when given (at most the parse limit): one copy.
            Vec::with_capacity(expected.unwrap_or(0).min(keep_text) as usize)
        });
        // The chunks as they came: counted, hashed and written without a copy.
        while let Some(chunk) = raw.next_chunk()? {
            counter.count(chunk.clone())?;
            if let Some(kept) = &mut text {
                if (kept.len() + chunk.len()) as u64 > keep_text {
                    text = None; // too large to parse here: its worker parses the stored file
                } else {
                    kept.extend_from_slice(&chunk);
                }
            }
            writer.feed(chunk);
        }
        text
    } else {
        let mut copy = RawCopy { inner: raw, writer };
        decode(&mut copy, encoding, counter, keep_text)?
    })
}

/// Counts, checks and hashes the decompressed bytes.
struct Counter {
    total: u64,
    max_bytes: u64,
    hash: Offloaded<Hash>,
    /// Set by the writer when a write fails: the body is not read further.
    write_failed: Arc<AtomicBool>,
}

impl Counter {
    fn count(&mut self, chunk: Bytes) -> Result<(), UploadError> {
        if chunk.is_empty() {
            return Ok(());
        }
        if self.write_failed.load(Ordering::Relaxed) {
            return Err(UploadError::Io(std::io::Error::other("the write failed")));
        }
        if self.total == 0 {
            check_text(&chunk)?;
        }
        self.total += chunk.len() as u64;
        if self.total > self.max_bytes {
            return Err(UploadError::TooLarge {
                limit: self.max_bytes,
            });
        }
        self.hash.feed(chunk);
        Ok(())
    }
}

/// Decompresses `raw` in blocks through `counter`; the whole text when it is at most
/// `keep_text` bytes.
fn decode(
    raw: &mut RawCopy<'_>,
    encoding: Encoding,
    counter: &mut Counter,
    keep_text: u64,
) -> Result<Option<Vec<u8>>, UploadError> {
    let mut decoded = decoder(encoding, raw)?;
    let mut blocks: Option<Vec<Bytes>> = (keep_text > 0).then(Vec::new);
    loop {
        let mut block = BytesMut::zeroed(BLOCK);
        let filled = fill(&mut decoded, &mut block)?;
        block.truncate(filled);
        let block = block.freeze();
        counter.count(block.clone())?;
        if counter.total > keep_text {
            blocks = None; // too large to parse here: its worker parses the stored file
        }
        if let Some(blocks) = &mut blocks {
            blocks.push(block);
        }
        if filled < BLOCK {
            break;
        }
    }
    Ok(blocks.map(|blocks| concatenate(&blocks, counter.total as usize)))
}

/// `raw` decompressed as `encoding` says (`Sniff` reads it as it is: the caller sniffs).
pub fn decoder<'a>(encoding: Encoding, raw: impl Read + 'a) -> std::io::Result<Box<dyn Read + 'a>> {
    Ok(match encoding {
        Encoding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Encoding::Zstd => Box::new(zstd::stream::read::Decoder::new(raw)?),
        Encoding::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(raw)),
        Encoding::Identity | Encoding::Sniff => Box::new(raw),
    })
}

/// Reads until `block` is full or the stream ends; the bytes read.
fn fill(decoded: &mut dyn Read, block: &mut [u8]) -> Result<usize, UploadError> {
    let mut filled = 0;
    while filled < block.len() {
        match decoded.read(&mut block[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => {
                return Err(UploadError::Interrupted(e.to_string()));
            }
            Err(e) => return Err(UploadError::BadCompression(e.to_string())),
        }
    }
    Ok(filled)
}

/// The blocks laid end to end in one buffer, copied on every core (all but the last are
/// [`BLOCK`] long).
fn concatenate(blocks: &[Bytes], total: usize) -> Vec<u8> {
    use rayon::prelude::*;
    let mut text = vec![0u8; total];
    text.par_chunks_mut(BLOCK)
        .zip(blocks.par_iter())
        .for_each(|(to, from)| to.copy_from_slice(from));
    text
}

/// The body as received, handed to the arena file's writer as the decoder reads it.
struct RawCopy<'a> {
    inner: &'a mut ChannelReader,
    writer: &'a mut Offloaded<FileSink>,
}

impl Read for RawCopy<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        if n > 0 {
            self.writer.feed(Bytes::copy_from_slice(&out[..n]));
        }
        Ok(n)
    }
}

/// Game files are text or `egb` (by its magic): NUL bytes or invalid UTF-8 at the start of
/// anything else mean something else was sent.
pub(crate) fn check_text(head: &[u8]) -> Result<(), UploadError> {
    let magic = &egsolve_core::format::egb::MAGIC;
    if head.starts_with(magic) || magic.starts_with(head) {
        return Ok(());
    }
    let head = &head[..head.len().min(4096)];
    if head.contains(&0) {
        return Err(UploadError::WrongContent(
            "it contains binary data (NUL bytes)".into(),
        ));
    }
    match std::str::from_utf8(head) {
        Ok(_) => Ok(()),
        // A multi-byte character cut at the end of the window is fine.
        Err(e) if e.error_len().is_none() => Ok(()),
        Err(_) => Err(UploadError::WrongContent(
            "it is neither text nor a known compression".into(),
        )),
    }
}

/// A blocking reader of body chunks arriving on a channel.
struct ChannelReader {
    rx: mpsc::Receiver<Result<Bytes, String>>,
    current: Bytes,
}

impl ChannelReader {
    /// The first bytes (at least 4 unless the body is shorter), without consuming them.
    fn peek(&mut self) -> Result<Bytes, UploadError> {
        while self.current.len() < 4 {
            match self.rx.blocking_recv() {
                Some(Ok(chunk)) => {
                    let mut joined = self.current.to_vec();
                    joined.extend_from_slice(&chunk);
                    self.current = Bytes::from(joined);
                }
                Some(Err(e)) => return Err(UploadError::Interrupted(e)),
                None => break,
            }
        }
        Ok(self.current.clone())
    }

    /// The next chunk as it came (the rest of a peeked one first), or `None` at the end.
    fn next_chunk(&mut self) -> Result<Option<Bytes>, UploadError> {
        if !self.current.is_empty() {
            return Ok(Some(std::mem::take(&mut self.current)));
        }
        match self.rx.blocking_recv() {
            Some(Ok(chunk)) => Ok(Some(chunk)),
            Some(Err(e)) => Err(UploadError::Interrupted(e)),
            None => Ok(None),
        }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(e)) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        e,
                    ));
                }
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_concatenate_in_order() {
        let text: Vec<u8> = (0..(BLOCK * 3 + 17)).map(|i| (i % 253) as u8).collect();
        let blocks: Vec<Bytes> = text.chunks(BLOCK).map(Bytes::copy_from_slice).collect();
        assert_eq!(concatenate(&blocks, text.len()), text);
    }
}
