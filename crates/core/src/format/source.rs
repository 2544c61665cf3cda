//! The byte source under every reader: recognises the compression by its magic bytes
//! (gzip with any number of members, bzip2 with any number of streams, zstd with any number
//! of frames, else plain text), decompresses while streaming, counts the raw bytes consumed
//! for progress bars, and tells a damaged compressed stream apart from a failing device.
//!
//! Decompression is sequential in all three formats (zstd included: its multi-threading is
//! on the compressing side); the readers run it on the calling thread while the pool parses
//! what it has produced ([`super::pipeline`]). zstd decodes several times faster than gzip,
//! and gzip many times faster than bzip2, so zstd is the compression to send.
//!
//! `bytes_read` counts the bytes taken from the reader as given (compressed bytes for a
//! compressed file), so that a progress bar can compare it with the file size. The
//! `max_bytes` limit is enforced on decompressed bytes by the readers (`pipeline`), not here.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{Compression, FormatError};

/// Buffer size for the raw (compressed) side.
const RAW_BUFFER: usize = 256 * 1024;

/// Counts bytes taken from the raw reader and remembers whether it failed, so that a
/// decompressor's error can be blamed on the device rather than on the data.
struct RawReader<R> {
    inner: R,
    bytes_read: Option<Arc<AtomicU64>>,
    failed: Rc<Cell<bool>>,
}

impl<R: Read> Read for RawReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(k) => {
                if let Some(counter) = &self.bytes_read {
                    counter.fetch_add(k as u64, Ordering::Relaxed);
                }
                Ok(k)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.failed.set(true);
                }
                Err(e)
            }
        }
    }
}

impl Compression {
    /// The compression whose magic bytes start `head` (plain when none does).
    pub(crate) fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::Plain
        }
    }
}

/// Decompressed bytes of one input.
pub(crate) struct Source<'r> {
    decoder: Box<dyn Read + 'r>,
    compression: Compression,
    raw_failed: Rc<Cell<bool>>,
    delivered: u64,
}

impl<'r> Source<'r> {
    /// Opens `reader`, sniffing the first bytes for a compression magic number.
    pub(crate) fn open(
        reader: impl Read + 'r,
        bytes_read: Option<Arc<AtomicU64>>,
    ) -> Result<Source<'r>, FormatError> {
        let raw_failed = Rc::new(Cell::new(false));
        let mut raw = RawReader {
            inner: reader,
            bytes_read,
            failed: raw_failed.clone(),
        };
        let mut head = [0u8; 4];
        let mut got = 0;
        while got < head.len() {
            match raw.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FormatError::Io(e)),
            }
        }
        let head = &head[..got];
        let compression = Compression::sniff(head);
        let stream =
            io::BufReader::with_capacity(RAW_BUFFER, io::Cursor::new(head.to_vec()).chain(raw));
        let decoder: Box<dyn Read + 'r> = match compression {
            Compression::Plain => Box::new(stream),
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(stream)),
            Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(stream)),
            Compression::Zstd => {
                let corrupt = |e: io::Error| FormatError::CorruptCompressed {
                    compression,
                    decompressed: 0,
                    detail: e.to_string(),
                };
                let mut decoder =
                    zstd::stream::read::Decoder::with_buffer(stream).map_err(corrupt)?;
                // Frames written with `zstd --long` (windows up to 2 GiB) decode too.
                decoder.window_log_max(31).map_err(corrupt)?;
                Box::new(decoder)
            }
        };
        Ok(Source {
            decoder,
            compression,
            raw_failed,
            delivered: 0,
        })
    }

    /// The compression recognised.
    pub(crate) fn compression(&self) -> Compression {
        self.compression
    }

    /// Reads decompressed bytes into `buf`; `Ok(0)` only at the end of the input.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<usize, FormatError> {
        loop {
            match self.decoder.read(buf) {
                Ok(k) => {
                    self.delivered += k as u64;
                    return Ok(k);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if self.raw_failed.get() || self.compression == Compression::Plain => {
                    return Err(FormatError::Io(e));
                }
                Err(e) => {
                    let detail = if e.kind() == io::ErrorKind::UnexpectedEof {
                        format!("unexpected end of the compressed data ({e})")
                    } else {
                        e.to_string()
                    };
                    return Err(FormatError::CorruptCompressed {
                        compression: self.compression,
                        decompressed: self.delivered,
                        detail,
                    });
                }
            }
        }
    }
}
