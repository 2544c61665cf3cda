//! The reading driver: from bytes to a [`Game`], on all threads.
//!
//! - **In memory** ([`read_slice`]: a memory-mapped file, a buffer): the text is cut into
//!   chunks at newlines and every chunk is parsed at once on the rayon pool, borrowing the
//!   text (no copy).
//! - **Streamed** ([`read_stream`]: compressed data, standard input, an upload): the calling
//!   thread decompresses and cuts blocks at newlines while the pool parses the blocks already
//!   cut, so decompression overlaps parsing; blocks are resolved in order as they come back,
//!   at most [`WINDOW_PER_THREAD`] per thread in flight, and their buffers are reused.
//!
//! Both then take the same steps: byte order mark, the binary `egb` magic, format detection
//! on the first 64 KiB, the header on the calling thread, the records in chunks
//! ([`super::chunks`]), the arena ([`super::mpg::assemble`], [`super::pgsolver::assemble`]).
//! A one-chunk input is parsed on the calling thread: small games never wait for the pool.
//!
//! When reading fails as well as parsing, the first in text order wins: a parse error inside
//! the text delivered before the failure is reported, except that damage found in a
//! compressed stream (up to [`DRAIN_LIMIT`] further on) is reported instead, naming the parse
//! error's position, since damage can make the text before it look malformed.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

use super::chunks::{self, Outcome, Resolver, cut_points};
use super::cursor::Cursor;
use super::error::{Compression, FormatError, Position};
use super::records::{Grammar, Parsed};
use super::source::Source;
use super::{Format, Game, ReadOptions, detect, egb, json, mpg, pgsolver};

/// Chunks of at most this much text when the caller does not say (streamed blocks too).
const MAX_CHUNK: usize = 1 << 20;
/// Chunks of at least this much text when the caller does not say.
const MIN_CHUNK: usize = 64 << 10;
/// The text format detection looks at, and the least the first streamed block holds.
const DETECT_WINDOW: usize = 64 << 10;
/// Blocks in flight per parsing thread.
const WINDOW_PER_THREAD: usize = 3;
/// How much more of a compressed input is decompressed after a parse error to look for damage.
const DRAIN_LIMIT: u64 = 256 << 20;

/// The UTF-8 byte order mark some Windows tools write.
const BYTE_ORDER_MARK: &[u8] = &[0xef, 0xbb, 0xbf];

/// The rayon pool a read runs on.
enum Pool {
    /// The pool of the calling thread (the global one outside any pool).
    Current,
    /// A pool of its own (`--threads N`, or a streamed read called from inside a pool, whose
    /// caller must not block a worker while it waits for blocks).
    Own(rayon::ThreadPool),
}

impl Pool {
    fn new(threads: usize, streamed: bool) -> Pool {
        let threads = match threads {
            0 if streamed && rayon::current_thread_index().is_some() => {
                rayon::current_num_threads()
            }
            0 => return Pool::Current,
            n => n,
        };
        match rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("egsolve-read-{i}"))
            .build()
        {
            Ok(pool) => Pool::Own(pool),
            Err(_) => Pool::Current,
        }
    }

    fn threads(&self) -> usize {
        match self {
            Pool::Current => rayon::current_num_threads(),
            Pool::Own(pool) => pool.current_num_threads(),
        }
    }

    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self {
            Pool::Current => f(),
            Pool::Own(pool) => crate::solve::threads::install_erased(pool, f),
        }
    }

    fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        match self {
            Pool::Current => rayon::spawn(f),
            Pool::Own(pool) => pool.spawn(f),
        }
    }
}

/// The chunk size for `len` bytes of text on `threads` threads.
fn chunk_size(opts: &ReadOptions, len: usize, threads: usize) -> usize {
    match opts.chunk_bytes {
        Some(bytes) => bytes.clamp(1, 1 << 30),
        None => (len / (8 * threads.max(1))).clamp(MIN_CHUNK, MAX_CHUNK),
    }
}

/// Where the records start after a text format's header, and what it said.
enum Header {
    Mpg(mpg::Header),
    Gm(pgsolver::Header),
}

impl Header {
    fn grammar(&self) -> Grammar {
        match self {
            Header::Mpg(header) => mpg::grammar(*header),
            Header::Gm(_) => Grammar::Gm,
        }
    }

    fn assemble(self, parsed: Parsed) -> Result<Game, FormatError> {
        match self {
            Header::Mpg(header) => mpg::assemble(header, parsed),
            Header::Gm(header) => pgsolver::assemble(header, parsed),
        }
    }
}

/// A header read from the start of the text.
enum HeaderRead {
    /// Read: the records start at byte `offset`, at `at`.
    Done(Header, usize, Position),
    /// The text ended inside it (more may come).
    Cut(FormatError),
    /// Malformed.
    Failed(FormatError),
}

/// Reads the header of `format` at the start of `text` (which starts at line 1, column 1).
fn read_header(format: Format, text: &[u8]) -> HeaderRead {
    let mut s = Cursor::new(text, 1);
    let header = match format {
        Format::Mpg => mpg::parse_header(&mut s).map(Header::Mpg),
        Format::PgSolver => pgsolver::parse_header(&mut s).map(Header::Gm),
        Format::Json => unreachable!("JSON has no text header"),
    };
    match header {
        Ok(header) => HeaderRead::Done(header, s.offset(), s.position()),
        Err(e) if s.hit_end() => HeaderRead::Cut(e),
        Err(e) => HeaderRead::Failed(e),
    }
}

/// Decides the format of `text` (the start of the input, byte order mark removed).
fn format_of(text: &[u8], opts: &ReadOptions) -> Result<Format, FormatError> {
    match opts.format {
        Some(format) => Ok(format),
        None => detect::detect(&text[..text.len().min(DETECT_WINDOW)]),
    }
}

/// Reads a game from bytes in memory (compressed or not).
pub(crate) fn read_slice(bytes: &[u8], opts: &ReadOptions) -> Result<Game, FormatError> {
    if Compression::sniff(bytes) != Compression::Plain {
        return read_stream(bytes, opts);
    }
    let (text, too_large) = match opts.max_bytes {
        Some(limit) if bytes.len() as u64 > limit => (
            &bytes[..limit as usize],
            Some(FormatError::TooLarge { limit }),
        ),
        _ => (bytes, None),
    };
    let text = text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text);
    let count = |n: usize| {
        if let Some(counter) = &opts.bytes_read {
            counter.fetch_add(n as u64, Ordering::Relaxed);
        }
    };
    if egb::is_egb(text) {
        if let Some(e) = too_large {
            return Err(e);
        }
        count(bytes.len());
        return Pool::new(opts.threads, false).install(|| egb::load(text));
    }
    // A header or detection error in text cut by the limit: the limit is the answer.
    let settle = |e: FormatError| match &too_large {
        Some(FormatError::TooLarge { limit }) => FormatError::TooLarge { limit: *limit },
        _ => e,
    };
    let format = format_of(text, opts).map_err(settle)?;
    if format == Format::Json {
        if let Some(e) = too_large {
            return Err(e);
        }
        count(bytes.len());
        return json::parse(text);
    }
    let (header, offset, at) = match read_header(format, text) {
        HeaderRead::Done(header, offset, at) => (header, offset, at),
        HeaderRead::Cut(e) | HeaderRead::Failed(e) => return Err(settle(e)),
    };
    count(offset);
    let pool = Pool::new(opts.threads, false);
    let records = &text[offset..];
    let chunk = chunk_size(opts, records.len(), pool.threads());
    let cuts = cut_points(records, chunk);
    let grammar = header.grammar();
    let counter = opts.bytes_read.as_ref();
    let parse = |i: usize| {
        let start = if i == 0 { 0 } else { cuts[i - 1] };
        let first_column = if i == 0 { at.column } else { 1 };
        let piece = &records[start..cuts[i]];
        let outcome = chunks::parse_chunk(grammar, piece, first_column);
        if let Some(counter) = counter {
            counter.fetch_add(piece.len() as u64, Ordering::Relaxed);
        }
        outcome
    };
    pool.install(|| {
        let started = std::time::Instant::now();
        let outcomes: Vec<Outcome> = if cuts.len() == 1 {
            vec![parse(0)]
        } else {
            use rayon::prelude::*;
            (0..cuts.len()).into_par_iter().map(parse).collect()
        };
        let parsed_at = started.elapsed();
        let mut resolver = Resolver::new(grammar, at.line);
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let start = if i == 0 { 0 } else { cuts[i - 1] };
            let first_column = if i == 0 { at.column } else { 1 };
            resolver.accept(&records[start..cuts[i]], first_column, Some(outcome));
        }
        if let Some(e) = too_large {
            return Err(resolver.into_error().unwrap_or(e));
        }
        let resolved_at = started.elapsed();
        let game = header.assemble(resolver.finish()?);
        tracing::debug!(
            chunks = cuts.len(),
            parse_ms = parsed_at.as_secs_f64() * 1e3,
            resolve_ms = (resolved_at - parsed_at).as_secs_f64() * 1e3,
            assemble_ms = (started.elapsed() - resolved_at).as_secs_f64() * 1e3,
            "text read in place"
        );
        game
    })
}

/// The bytes of a text stream, cut into blocks that end just after a newline.
struct Blocks<'r> {
    source: Source<'r>,
    /// Text read but not yet handed out (a line still open).
    pending: Vec<u8>,
    /// Decompressed bytes read so far.
    delivered: u64,
    limit: Option<u64>,
    /// Why the stream stopped early, once it did.
    failure: Option<FormatError>,
    /// Whether the stream has ended (cleanly or not).
    ended: bool,
    /// Emptied buffers to fill again.
    spare: Vec<Vec<u8>>,
}

impl<'r> Blocks<'r> {
    fn new(source: Source<'r>, limit: Option<u64>) -> Blocks<'r> {
        Blocks {
            source,
            pending: Vec::new(),
            delivered: 0,
            limit,
            failure: None,
            ended: false,
            spare: Vec::new(),
        }
    }

    /// Reads until `pending` holds at least `want` bytes or the stream ends.
    fn fill(&mut self, want: usize) {
        while self.pending.len() < want && !self.ended {
            let len = self.pending.len();
            let room = (want - len).max(64 << 10);
            self.pending.resize(len + room, 0);
            match self.source.read(&mut self.pending[len..]) {
                Ok(0) => {
                    self.pending.truncate(len);
                    self.ended = true;
                }
                Ok(k) => {
                    self.pending.truncate(len + k);
                    self.delivered += k as u64;
                    if let Some(limit) = self.limit {
                        if self.delivered > limit {
                            let over = (self.delivered - limit) as usize;
                            self.pending.truncate(self.pending.len() - over);
                            self.failure = Some(FormatError::TooLarge { limit });
                            self.ended = true;
                        }
                    }
                }
                Err(e) => {
                    self.pending.truncate(len);
                    self.failure = Some(e);
                    self.ended = true;
                }
            }
        }
    }

    /// The next block of about `size` bytes ending just after a newline (the rest of the
    /// text at the end of the stream); `None` once everything is handed out.
    fn next(&mut self, size: usize) -> Option<Vec<u8>> {
        let mut want = size.max(1);
        loop {
            self.fill(want);
            if self.ended && self.pending.len() <= want {
                if self.pending.is_empty() {
                    return None;
                }
                // A stream that failed keeps its open last line: it never gets parsed.
                let cut = if self.failure.is_some() {
                    memchr::memrchr(b'\n', &self.pending).map_or(0, |i| i + 1)
                } else {
                    self.pending.len()
                };
                if cut == 0 {
                    self.pending.clear();
                    return None;
                }
                return Some(self.split_off(cut));
            }
            // Just after the first newline past `want` (one ending a record if one is
            // near), else the last one before it.
            let cut =
                chunks::cut_after(&self.pending, want.min(self.pending.len())).or_else(|| {
                    memchr::memrchr(b'\n', &self.pending[..want.min(self.pending.len())])
                        .map(|i| i + 1)
                });
            match cut {
                Some(cut) => return Some(self.split_off(cut)),
                // A line longer than the block: read on.
                None => want = self.pending.len() * 2,
            }
        }
    }

    /// Hands out `pending[..cut]`, keeping the rest.
    fn split_off(&mut self, cut: usize) -> Vec<u8> {
        let mut rest = self.spare.pop().unwrap_or_default();
        rest.clear();
        rest.extend_from_slice(&self.pending[cut..]);
        self.pending.truncate(cut);
        std::mem::replace(&mut self.pending, rest)
    }

    /// Everything that is left, appended to `head` (JSON and `egb` are read whole).
    fn rest_into(&mut self, head: &mut Vec<u8>) {
        head.append(&mut self.pending);
        while !self.ended {
            self.fill(head.len().max(1 << 20));
            head.append(&mut self.pending);
        }
    }

    /// Decompresses up to [`DRAIN_LIMIT`] more bytes to find damage further on.
    fn drain(&mut self) {
        let mut drained = 0u64;
        while !self.ended && drained < DRAIN_LIMIT {
            self.pending.clear();
            self.fill(1 << 20);
            drained += self.pending.len() as u64;
        }
        self.pending.clear();
    }

    /// The failure, if the stream stopped early.
    fn take_failure(&mut self) -> Option<FormatError> {
        self.failure.take()
    }
}

/// The answer when `parse_error` was found in the text and the stream ended `failure`
/// (see the module docs).
fn settle(
    blocks: &mut Blocks<'_>,
    parse_error: FormatError,
    compression: Compression,
) -> FormatError {
    if compression != Compression::Plain && parse_error.is_bad_input() {
        blocks.drain();
    }
    match blocks.take_failure() {
        Some(FormatError::CorruptCompressed {
            compression,
            decompressed,
            detail,
        }) => {
            let detail = match parse_error.position() {
                Some(at) => format!(
                    "{detail} (the text before the damage was found fails to parse at {at})"
                ),
                None => detail,
            };
            FormatError::CorruptCompressed {
                compression,
                decompressed,
                detail,
            }
        }
        _ => parse_error,
    }
}

/// Reads a whole (possibly compressed) text into memory and parses it with `parse` (the
/// `paritysol` reader): a read failure or the size limit is reported in place of the parse
/// error it caused, and damage to a compressed input found further on in place of a parse
/// error before it, as for games.
pub(crate) fn read_whole<T>(
    reader: impl Read,
    opts: &ReadOptions,
    parse: impl FnOnce(&[u8]) -> Result<T, FormatError>,
) -> Result<T, FormatError> {
    let source = Source::open(reader, opts.bytes_read.clone())?;
    let compression = source.compression();
    let mut blocks = Blocks::new(source, opts.max_bytes);
    let mut text = Vec::new();
    blocks.rest_into(&mut text);
    match parse(&text) {
        Ok(value) => match blocks.take_failure() {
            Some(failure) => Err(failure),
            None => Ok(value),
        },
        Err(parse_error) => match blocks.failure {
            Some(FormatError::CorruptCompressed { .. }) | None => {
                Err(settle(&mut blocks, parse_error, compression))
            }
            Some(_) => Err(blocks.take_failure().expect("a failure")),
        },
    }
}

/// A parsed block coming back from the pool: its index, text, first column and outcome.
type Returned = (usize, Vec<u8>, u64, Outcome);

/// Parsed blocks, coming back in any order, handed to the resolver in input order.
#[derive(Default)]
struct InOrder {
    /// Blocks back before some block ahead of them.
    pending: BTreeMap<usize, (Vec<u8>, u64, Outcome)>,
    /// Blocks handed to the resolver.
    resolved: usize,
}

impl InOrder {
    /// Takes a block back, and hands every block now in order to `resolver` (their buffers
    /// to `spare`).
    fn accept(&mut self, returned: Returned, resolver: &mut Resolver, spare: &mut Vec<Vec<u8>>) {
        let (index, text, column, outcome) = returned;
        self.pending.insert(index, (text, column, outcome));
        while let Some((text, column, outcome)) = self.pending.remove(&self.resolved) {
            resolver.accept(&text, column, Some(outcome));
            spare.push(text);
            self.resolved += 1;
        }
    }
}

/// Reads a game from a stream (compressed or not), decompressing on the calling thread
/// while the pool parses.
pub(crate) fn read_stream(reader: impl Read, opts: &ReadOptions) -> Result<Game, FormatError> {
    let source = Source::open(reader, opts.bytes_read.clone())?;
    let compression = source.compression();
    let mut blocks = Blocks::new(source, opts.max_bytes);
    blocks.fill(DETECT_WINDOW.max(BYTE_ORDER_MARK.len()));
    if blocks.pending.starts_with(BYTE_ORDER_MARK) {
        blocks.pending.drain(..BYTE_ORDER_MARK.len());
        blocks.fill(DETECT_WINDOW);
    }
    if egb::is_egb(&blocks.pending) {
        let mut all = Vec::new();
        blocks.rest_into(&mut all);
        if let Some(failure) = blocks.take_failure() {
            return Err(failure);
        }
        return Pool::new(opts.threads, false).install(|| egb::load(&all));
    }
    let format = match format_of(&blocks.pending, opts) {
        Ok(format) => format,
        Err(e) => {
            return Err(blocks
                .take_failure()
                .unwrap_or_else(|| settle(&mut blocks, e, compression)));
        }
    };
    if format == Format::Json {
        let mut all = Vec::new();
        blocks.rest_into(&mut all);
        if let Some(failure) = blocks.take_failure() {
            return Err(failure);
        }
        return json::parse(&all);
    }
    // The header, reading on while the text ends inside it.
    let (header, offset, at) = loop {
        match read_header(format, &blocks.pending) {
            HeaderRead::Done(header, offset, at) => break (header, offset, at),
            HeaderRead::Cut(_) if !blocks.ended => {
                let more = blocks.pending.len() * 2;
                blocks.fill(more);
            }
            HeaderRead::Cut(e) | HeaderRead::Failed(e) => {
                return Err(match blocks.take_failure() {
                    Some(failure) => failure,
                    None => settle(&mut blocks, e, compression),
                });
            }
        }
    };
    blocks.pending.drain(..offset);
    let pool = Pool::new(opts.threads, true);
    let threads = pool.threads();
    let size = opts.chunk_bytes.unwrap_or(MAX_CHUNK).clamp(1, 1 << 30);
    let grammar = header.grammar();
    let mut resolver = Resolver::new(grammar, at.line);

    // A small input is one block, parsed here.
    let first = blocks.next(size);
    if blocks.ended && blocks.pending.is_empty() && blocks.failure.is_none() {
        let text = first.unwrap_or_default();
        resolver.accept(&text, at.column, None);
        return pool.install(|| header.assemble(resolver.finish()?));
    }

    let (tx, rx) = mpsc::channel::<Returned>();
    let window = WINDOW_PER_THREAD * threads + 1;
    let mut order = InOrder::default();
    let mut sent = 0usize;
    let mut next_block = first;
    loop {
        if resolver.failed() {
            break;
        }
        let Some(text) = next_block.take() else { break };
        let column = if sent == 0 { at.column } else { 1 };
        let tx = tx.clone();
        let index = sent;
        pool.spawn(move || {
            let outcome = chunks::parse_chunk(grammar, &text, column);
            let _ = tx.send((index, text, column, outcome));
        });
        sent += 1;
        // Wait while the window is full, resolving what comes back.
        while sent - order.resolved >= window {
            let Ok(returned) = rx.recv() else { break };
            order.accept(returned, &mut resolver, &mut blocks.spare);
        }
        while let Ok(returned) = rx.try_recv() {
            order.accept(returned, &mut resolver, &mut blocks.spare);
        }
        next_block = blocks.next(size);
    }
    drop(tx);
    while order.resolved < sent {
        let Ok(returned) = rx.recv() else { break };
        order.accept(returned, &mut resolver, &mut blocks.spare);
    }
    if resolver.failed() {
        let error = resolver.into_error().expect("failed");
        return Err(settle(&mut blocks, error, compression));
    }
    if let Some(failure) = blocks.take_failure() {
        return Err(failure);
    }
    pool.install(|| header.assemble(resolver.finish()?))
}
