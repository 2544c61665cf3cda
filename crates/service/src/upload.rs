//! Receiving an arena upload: the request body is streamed (never held whole in memory)
//! through a decompressor chosen from `Content-Encoding` or the magic bytes, counted in
//! *decompressed* bytes against the size limit (a gzip bomb stops at the limit) and hashed
//! (SHA-256); the body *as received* (compressed if it came compressed — less to write and
//! fsync) goes to a temporary file, which is fsynced and renamed to its content address
//! `arenas/<sha256 of the decompressed bytes>`. Identical arenas are therefore stored once,
//! whatever their compression; the readers recognise the compression by its magic bytes,
//! and the binary `egb` format by its own.
//!
//! The async side only forwards body chunks into a bounded channel; decompression, hashing
//! and file writes run on a blocking thread, which also feeds the decompressed bytes to a
//! parser thread when asked ([`super::preparse::ParseTee`]): a malformed arena then stops
//! the upload with its line and column, and a well-formed one is parsed when the body ends.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::preparse::ParseTee;
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

    fn sniff(prefix: &[u8]) -> Encoding {
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
    /// A file operation failed on the server.
    #[error("storing the upload failed: {0}")]
    Io(#[from] std::io::Error),
    /// The parser read while uploading found the arena malformed or too large.
    #[error(transparent)]
    Parse(FormatError),
}

/// A stored upload.
#[derive(Debug, Clone)]
pub struct StoredArena {
    /// SHA-256 of the decompressed bytes, hex.
    pub hash: String,
    /// Decompressed size.
    pub bytes: u64,
    /// Where it is stored.
    pub path: PathBuf,
    /// Seconds from the first byte to the fsync.
    pub seconds: f64,
    /// The game and the parse's seconds, when it was parsed during the upload.
    pub parsed: Option<(Game, f64)>,
}

/// Streams `body` to `arenas_dir/<sha256>` through `tmp_dir`, parsing it on the way when
/// `parse` is given (see [`ParseTee`]).
pub async fn receive(
    body: Body,
    encoding: Encoding,
    max_bytes: u64,
    tmp_dir: PathBuf,
    arenas_dir: PathBuf,
    parse: Option<ParseTee>,
) -> Result<StoredArena, UploadError> {
    let start = Instant::now();
    let (tx, rx) = mpsc::channel::<Result<Bytes, String>>(16);
    let writer = tokio::task::spawn_blocking(move || {
        store_stream(
            ChannelReader {
                rx,
                current: Bytes::new(),
            },
            encoding,
            max_bytes,
            &tmp_dir,
            parse,
        )
    });
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let item = chunk.map_err(|e| e.to_string());
        let failed = item.is_err();
        if tx.send(item).await.is_err() || failed {
            break; // the writer stopped early (limit, corrupt data) or the client failed
        }
    }
    drop(tx);
    let (tmp_path, hash, bytes, parsed) = writer
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
    let path = arenas_dir.join(&hash);
    tokio::task::spawn_blocking({
        let path = path.clone();
        move || place(&tmp_path, &path)
    })
    .await
    .map_err(|e| std::io::Error::other(e.to_string()))??;
    Ok(StoredArena {
        hash,
        bytes,
        path,
        seconds: start.elapsed().as_secs_f64(),
        parsed,
    })
}

/// Moves a synced temporary file to its content address (keeping an existing copy).
fn place(tmp_path: &Path, path: &Path) -> std::io::Result<()> {
    if path.exists() {
        std::fs::remove_file(tmp_path)
    } else {
        std::fs::rename(tmp_path, path)?;
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

/// What [`store_stream`] leaves: the synced temporary file, its hash and size, and the
/// parsed game if it was parsed.
type Stored = (PathBuf, String, u64, Option<(Game, f64)>);

/// Decompresses, counts, hashes, writes and feeds `parse`; removes the temporary file on
/// any error.
fn store_stream(
    mut raw: ChannelReader,
    encoding: Encoding,
    max_bytes: u64,
    tmp_dir: &Path,
    mut parse: Option<ParseTee>,
) -> Result<Stored, UploadError> {
    let tmp_path = tmp_dir.join(uuid::Uuid::now_v7().to_string());
    let result = (|| {
        let head = raw.peek()?;
        let encoding = if encoding == Encoding::Sniff {
            Encoding::sniff(&head)
        } else {
            encoding
        };
        let file = std::fs::File::create(&tmp_path)?;
        let mut raw = RawCopy {
            inner: raw,
            file,
            failed: None,
        };
        let outcome = decode_into(&mut raw, encoding, max_bytes, parse.as_mut());
        if let Some(e) = raw.failed.take() {
            return Err(UploadError::Io(e));
        }
        let (hash, total) = outcome?;
        raw.file.sync_all()?;
        let parsed = match parse.take().and_then(ParseTee::finish) {
            Some((Ok(game), seconds)) => Some((game, seconds)),
            Some((Err(e), _)) => return Err(UploadError::Parse(e)),
            None => None,
        };
        Ok((hash, total, parsed))
    })();
    match result {
        Ok((hash, total, parsed)) => Ok((tmp_path, hash, total, parsed)),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp_path);
            Err(e)
        }
    }
}

/// Decompresses `raw`, counting, hashing and feeding `parse`; the hash and size.
fn decode_into(
    raw: &mut RawCopy,
    encoding: Encoding,
    max_bytes: u64,
    mut parse: Option<&mut ParseTee>,
) -> Result<(String, u64), UploadError> {
    let mut decoded: Box<dyn Read + '_> = match encoding {
        Encoding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Encoding::Zstd => Box::new(zstd::stream::read::Decoder::new(raw)?),
        Encoding::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(raw)),
        Encoding::Identity | Encoding::Sniff => Box::new(raw),
    };
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut total: u64 = 0;
    loop {
        let n = match decoded.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => {
                return Err(UploadError::Interrupted(e.to_string()));
            }
            Err(e) => return Err(UploadError::BadCompression(e.to_string())),
        };
        if total == 0 {
            check_text(&buffer[..n])?;
        }
        total += n as u64;
        if total > max_bytes {
            return Err(UploadError::TooLarge { limit: max_bytes });
        }
        if let Some(tee) = parse.as_deref_mut() {
            tee.feed(&buffer[..n]).map_err(UploadError::Parse)?;
        }
        hasher.update(&buffer[..n]);
    }
    if total == 0 {
        return Err(UploadError::Empty);
    }
    Ok((hex::encode(hasher.finalize()), total))
}

/// The body as received, copied to the arena file as the decoder reads it. A failed write
/// is kept in `failed` (and ends the stream), so it is not mistaken for corrupt data.
struct RawCopy {
    inner: ChannelReader,
    file: std::fs::File,
    failed: Option<std::io::Error>,
}

impl Read for RawCopy {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.failed.is_some() {
            return Ok(0);
        }
        let n = self.inner.read(out)?;
        if let Err(e) = self.file.write_all(&out[..n]) {
            self.failed = Some(e);
            return Ok(0);
        }
        Ok(n)
    }
}

/// Game files are text or `egb` (by its magic): NUL bytes or invalid UTF-8 at the start of
/// anything else mean something else was sent.
fn check_text(head: &[u8]) -> Result<(), UploadError> {
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

/// A blocking `Read` over body chunks arriving on a channel.
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
