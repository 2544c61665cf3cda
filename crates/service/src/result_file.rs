//! Result files: a solved game stored compactly, written once, synced before the job is
//! marked succeeded, and rendered on request — through the record writers of
//! [`egsolve_core::output::records`], so the bytes are those of `egsolve solve` — as JSON (the
//! CLI's document plus the job id), text (`ID CREDIT [STRATEGY]` lines, `T` for ⊤, like the
//! shared `.credits` files; only for answers with credits), PGSolver `paritysol`, formatted
//! on every core in blocks and streamed in order from a blocking thread, or the binary form
//! (compressed by the route's `CompressionLayer` when the client asks: `Accept-Encoding:
//! zstd` or `gzip`). An answer of the parity solver stores 0 as the credit of `W0` vertices;
//! its summary says the credits were not computed, and its JSON records then carry no credit.
//!
//! Layout: the binary result of [`egsolve_core::output::binary`] (a 32-byte header, then the
//! credits as u64 LE, then the strategies as u32 LE), so `?format=binary` is the file itself.
//! Files written before it (`EGSR1\n`, `n` as u64 LE, then `n` records of credit u64 LE and
//! strategy u32 LE) are still read, and served in the binary form by conversion.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;
use tokio::sync::mpsc;

use sha2::{Digest, Sha256};

use super::job::{BackendChoice, InputFormat, JobId, ResultSummary, ReturnKind};
use egsolve_core::arena::VertexId;
use egsolve_core::output::binary::{self, HEADER_BYTES, Header};
use egsolve_core::output::parallel::format_in_order;
use egsolve_core::output::records::{
    CreditField, JSON_TAIL, RecordBuffer, StrategyField, json_head, paritysol_head,
};
use egsolve_core::solve::Solution;

/// The magic of the first layout (interleaved records).
const LEGACY_MAGIC: &[u8; 6] = b"EGSR1\n";
const LEGACY_HEADER: u64 = 14;
const LEGACY_RECORD: u64 = 12;

/// How a result is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultFormat {
    /// JSON with a summary block.
    Json,
    /// `ID CREDIT [STRATEGY]` lines.
    Text,
    /// PGSolver `paritysol`.
    Paritysol,
    /// The arrays of [`egsolve_core::output::binary`] (every vertex, strategies included).
    Binary,
}

impl ResultFormat {
    /// Every format, in the order job views list them.
    pub const ALL: [ResultFormat; 4] = [
        ResultFormat::Json,
        ResultFormat::Text,
        ResultFormat::Paritysol,
        ResultFormat::Binary,
    ];

    /// Parses the `format` query value.
    pub fn parse(s: &str) -> Option<ResultFormat> {
        ResultFormat::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The `format` query value.
    pub fn name(self) -> &'static str {
        match self {
            ResultFormat::Json => "json",
            ResultFormat::Text => "text",
            ResultFormat::Paritysol => "paritysol",
            ResultFormat::Binary => "binary",
        }
    }

    /// Whether an answer with this summary has this rendering: text lists credits, so an
    /// answer without them (the parity solver's, `credits_computed: false`) has none.
    pub fn renders(self, summary: &ResultSummary) -> bool {
        self != ResultFormat::Text || summary.credits_computed
    }

    /// The formats an answer with this summary renders in (a job view's `result_formats`).
    pub fn available(summary: &ResultSummary) -> impl Iterator<Item = ResultFormat> + '_ {
        ResultFormat::ALL.into_iter().filter(|f| f.renders(summary))
    }

    /// The response `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            ResultFormat::Json => "application/json",
            ResultFormat::Text | ResultFormat::Paritysol => "text/plain; charset=utf-8",
            ResultFormat::Binary => binary::MEDIA_TYPE,
        }
    }
}

/// Writes `solution` to `path` (through a temporary name) and syncs it.
pub fn write(path: &Path, solution: &Solution) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", uuid::Uuid::now_v7()));
    let written = (|| {
        let clock = std::time::Instant::now();
        let file = std::fs::File::create(&tmp)?;
        use std::os::unix::fs::FileExt;
        binary::write_binary_at(|bytes, at| file.write_all_at(bytes, at), solution)?;
        let wrote = clock.elapsed();
        // Read-only: results by reference may link this file into a user's directory
        // ([`crate::export`]); it is never changed in place.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o444))?;
        file.sync_all()?;
        tracing::debug!(
            write_ms = wrote.as_secs_f64() * 1e3,
            sync_ms = (clock.elapsed() - wrote).as_secs_f64() * 1e3,
            "result file written"
        );
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// What to render.
#[derive(Debug, Clone)]
pub struct RenderRequest {
    /// The job (named in the JSON).
    pub job: JobId,
    /// Output syntax.
    pub format: ResultFormat,
    /// Include strategies.
    pub returns: ReturnKind,
    /// Only these vertices (in this order), or all.
    pub vertices: Option<Vec<u64>>,
    /// The summary block.
    pub summary: ResultSummary,
}

/// Streams the rendering of the result at `path` as chunks of about 64 KiB. Errors after the
/// first chunk end the stream early (the client sees a truncated body).
pub fn render(
    path: std::path::PathBuf,
    request: RenderRequest,
) -> mpsc::Receiver<Result<Bytes, std::io::Error>> {
    let (tx, rx) = mpsc::channel(4);
    tokio::task::spawn_blocking(move || {
        let sink = ChunkSender { tx };
        if let Err(e) = render_into(&path, &request, &sink) {
            let _ = sink.tx.blocking_send(Err(e));
        }
    });
    rx
}

/// The whole rendering of the result at `path` in one buffer, on the calling thread
/// (blocking): for results small enough to hold, rendered many at a time without a task
/// and a channel each. The binary form of the arrays layout is the file as it is.
pub fn render_whole(path: &Path, request: &RenderRequest) -> std::io::Result<Vec<u8>> {
    if request.format == ResultFormat::Binary
        && let Some(bytes) = mapped_binary(path)?
    {
        return Ok(bytes.to_vec());
    }
    let whole = std::cell::RefCell::new(Vec::new());
    render_into(path, request, &whole)?;
    Ok(whole.into_inner())
}

/// Renders the result at `path` into `out` ([`crate::export`]'s files).
pub fn render_to_file(
    path: &Path,
    request: &RenderRequest,
    out: &std::fs::File,
) -> std::io::Result<()> {
    render_into(path, request, out)
}

/// Where rendered chunks go: the response stream, one buffer, or a file.
trait Sink {
    fn send(&self, chunk: Vec<u8>) -> std::io::Result<()>;
}

/// Hands rendered chunks to the response stream.
struct ChunkSender {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
}

/// Gathers the chunks into one buffer.
impl Sink for std::cell::RefCell<Vec<u8>> {
    fn send(&self, chunk: Vec<u8>) -> std::io::Result<()> {
        let mut whole = self.borrow_mut();
        if whole.is_empty() {
            *whole = chunk;
        } else {
            whole.extend_from_slice(&chunk);
        }
        Ok(())
    }
}

impl Sink for std::fs::File {
    fn send(&self, chunk: Vec<u8>) -> std::io::Result<()> {
        use std::io::Write;
        (&*self).write_all(&chunk)
    }
}

impl Sink for ChunkSender {
    fn send(&self, chunk: Vec<u8>) -> std::io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.tx
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| std::io::Error::other("the client went away"))
    }
}

/// Reads records from a result file of either layout, many at a time.
struct Records {
    file: std::fs::File,
    n: u64,
    layout: Layout,
    block: Vec<u8>,
    strategies: Vec<u8>,
}

/// Where a result file keeps its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// The binary result's arrays (credits, then strategies).
    Arrays(Header),
    /// `EGSR1`: interleaved 12-byte records.
    Legacy,
}

impl Records {
    fn open(path: &Path) -> std::io::Result<Records> {
        let mut file = std::fs::File::open(path)?;
        let mut header = [0u8; HEADER_BYTES as usize];
        let read = read_up_to(&mut file, &mut header)?;
        let (n, layout) = if header[..read].starts_with(LEGACY_MAGIC) && read >= 14 {
            let n = u64::from_le_bytes(header[6..14].try_into().expect("8 bytes"));
            (n, Layout::Legacy)
        } else {
            let parsed = Header::parse(&header[..read]).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("result file: {e}"))
            })?;
            (parsed.n, Layout::Arrays(parsed))
        };
        Ok(Records {
            file,
            n,
            layout,
            block: Vec::new(),
            strategies: Vec::new(),
        })
    }

    /// The records of vertices `first..first + count`, as (credit, strategy).
    fn block(&mut self, first: u64, count: usize) -> std::io::Result<Vec<(u64, u32)>> {
        use std::os::unix::fs::FileExt;
        let credit = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let strategy = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        match self.layout {
            Layout::Legacy => {
                self.block.resize(count * LEGACY_RECORD as usize, 0);
                self.file
                    .read_exact_at(&mut self.block, LEGACY_HEADER + first * LEGACY_RECORD)?;
                Ok(self
                    .block
                    .chunks_exact(LEGACY_RECORD as usize)
                    .map(|r| (credit(&r[..8]), strategy(&r[8..])))
                    .collect())
            }
            Layout::Arrays(header) => {
                self.block.resize(count * 8, 0);
                self.file
                    .read_exact_at(&mut self.block, HEADER_BYTES + first * 8)?;
                self.strategies.resize(count * 4, 0);
                self.file
                    .read_exact_at(&mut self.strategies, header.strategies_offset() + first * 4)?;
                Ok(self
                    .block
                    .chunks_exact(8)
                    .zip(self.strategies.chunks_exact(4))
                    .map(|(c, s)| (credit(c), strategy(s)))
                    .collect())
            }
        }
    }
}

/// Reads until `buffer` is full or the file ends; the bytes read.
fn read_up_to(file: &mut std::fs::File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Records read per block when every vertex is rendered (12 MiB), each block formatted on
/// every core ([`egsolve_core::output::parallel`]).
const BLOCK: u64 = 1 << 20;

fn render_into(path: &Path, request: &RenderRequest, out: &impl Sink) -> std::io::Result<()> {
    let mut records = Records::open(path)?;
    if request.format == ResultFormat::Binary {
        return binary_into(&mut records, request.summary.credits_computed, out);
    }
    let n = records.n;
    let strategies = match request.returns {
        ReturnKind::Strategies => StrategyField::Included,
        ReturnKind::Credits => StrategyField::Omitted,
    };
    let mut head = Vec::new();
    match request.format {
        ResultFormat::Json => {
            let job = request.job.to_string();
            json_head(&mut head, Some(&job), &request.summary)?;
        }
        ResultFormat::Paritysol => paritysol_head(&mut head, n as usize)?,
        ResultFormat::Text | ResultFormat::Binary => {}
    }
    let credits = CreditField::of(request.summary.credits_computed);
    let record = |buffer: &mut RecordBuffer, v: u64, credit: u64, strategy: u32| {
        let v = v as VertexId;
        match request.format {
            ResultFormat::Json => buffer.json_record(v, credit, strategy, credits, strategies),
            ResultFormat::Text => buffer.text_line(v, credit, strategy, strategies),
            ResultFormat::Paritysol => buffer.paritysol_line(v, credit, strategy),
            ResultFormat::Binary => unreachable!("rendered by binary_into"),
        }
    };
    let mut buffer = RecordBuffer::default();
    match &request.vertices {
        Some(list) => {
            // A selection: one record at a time (selections are small).
            buffer.raw(&head);
            for &v in list {
                let (credit, strategy) = records.block(v, 1)?[0];
                record(&mut buffer, v, credit, strategy);
                if buffer.is_full() {
                    out.send(buffer.take())?;
                }
            }
        }
        None => {
            out.send(head)?;
            let mut v = 0;
            while v < n {
                let count = BLOCK.min(n - v);
                let block = records.block(v, count as usize)?;
                format_in_order(
                    block.len(),
                    v == 0,
                    |buffer, i| {
                        let (credit, strategy) = block[i];
                        record(buffer, v + i as u64, credit, strategy);
                    },
                    |bytes| out.send(bytes),
                )?;
                v += count;
            }
        }
    }
    if request.format == ResultFormat::Json {
        buffer.raw(JSON_TAIL);
    }
    out.send(buffer.take())
}

/// Sends the binary form: the file as it is (in pieces of [`COPY_PIECE`]), or for a file of
/// the first layout, its records converted into the two arrays.
fn binary_into(
    records: &mut Records,
    credits_computed: bool,
    out: &impl Sink,
) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let header = Header {
        n: records.n,
        credits_computed,
    };
    match records.layout {
        Layout::Arrays(stored) => {
            let total = stored.total_bytes();
            let mut at = 0;
            while at < total {
                let mut piece = vec![0u8; COPY_PIECE.min(total - at) as usize];
                records.file.read_exact_at(&mut piece, at)?;
                at += piece.len() as u64;
                out.send(piece)?;
            }
            Ok(())
        }
        Layout::Legacy => {
            out.send(header.to_bytes().to_vec())?;
            let n = records.n;
            for pass in [Array::Credits, Array::Strategies] {
                let mut v = 0;
                while v < n {
                    let count = BLOCK.min(n - v);
                    let block = records.block(v, count as usize)?;
                    out.send(match pass {
                        Array::Credits => block.iter().flat_map(|r| r.0.to_le_bytes()).collect(),
                        Array::Strategies => block.iter().flat_map(|r| r.1.to_le_bytes()).collect(),
                    })?;
                    v += count;
                }
            }
            Ok(())
        }
    }
}

/// The two arrays of the binary form.
#[derive(Clone, Copy)]
enum Array {
    Credits,
    Strategies,
}

/// Bytes per chunk when a binary result is sent as it is stored.
const COPY_PIECE: u64 = 1 << 20;

/// The binary form of a result stored in the arrays layout, as one buffer over the mapped
/// file (sent without copying it into the process); `None` for a file of the first layout
/// (rendered by [`render`] instead). Blocking.
pub fn mapped_binary(path: &Path) -> std::io::Result<Option<Bytes>> {
    let file = std::fs::File::open(path)?;
    // SAFETY: result files are written under a temporary name, synced and renamed, never
    // changed in place; expiry unlinks them, which leaves an existing map intact.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let header = match Header::parse(&map) {
        Ok(header) => header,
        Err(_) if map.starts_with(LEGACY_MAGIC) => return Ok(None),
        Err(e) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("result file: {e}"),
            ));
        }
    };
    if header.total_bytes() != map.len() as u64 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "result file of {} vertices has {} bytes, not {}",
                header.n,
                map.len(),
                header.total_bytes()
            ),
        ));
    }
    Ok(Some(Bytes::from_owner(map)))
}

/// Checks that every requested vertex exists.
pub fn check_vertices(vertices: &[u64], n: u64) -> Result<(), u64> {
    match vertices.iter().find(|&&v| v >= n) {
        Some(&v) => Err(v),
        None => Ok(()),
    }
}

/// Calls `f` with every vertex's credit (`u64::MAX` for ⊤), in vertex order; blocking.
pub fn for_each_credit(path: &Path, mut f: impl FnMut(u64)) -> std::io::Result<()> {
    let mut records = Records::open(path)?;
    let mut v = 0;
    while v < records.n {
        let count = BLOCK.min(records.n - v);
        for (credit, _) in records.block(v, count as usize)? {
            f(credit);
        }
        v += count;
    }
    Ok(())
}

/// The key of a job's result: identical arena bytes read the same way give the same answer.
/// A job that forces the parity solver gets winners without credits, so its answer has a key
/// of its own (it must not serve a later job that expects credits).
pub fn key(arena_hash: &str, format: InputFormat, backend: BackendChoice) -> String {
    let text = match backend {
        BackendChoice::Parity => format!("{arena_hash}:{}:parity", format.name()),
        _ => format!("{arena_hash}:{}", format.name()),
    };
    hex::encode(Sha256::digest(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use egsolve_core::solve::{NO_MOVE, SolveStats, TOP};

    fn solution() -> Solution {
        Solution {
            credit: vec![5, TOP, 0],
            strategy: vec![2, NO_MOVE, 2],
            stats: SolveStats::default(),
            credits_computed: true,
            parity: None,
        }
    }

    #[test]
    fn the_stored_arrays_are_the_binary_form() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arrays");
        write(&path, &solution()).unwrap();
        let mapped = mapped_binary(&path).unwrap().unwrap();
        assert_eq!(mapped, std::fs::read(&path).unwrap());
        std::fs::write(&path, b"EGSR1\n\x00\x00\x00\x00\x00\x00\x00\x00").unwrap();
        assert!(
            mapped_binary(&path).unwrap().is_none(),
            "the first layout is rendered"
        );
    }

    fn credits(path: &Path) -> Vec<u64> {
        let mut all = Vec::new();
        for_each_credit(path, |c| all.push(c)).unwrap();
        all
    }

    #[test]
    fn both_layouts_read_the_same_records() {
        let dir = tempfile::tempdir().unwrap();
        let arrays = dir.path().join("arrays");
        write(&arrays, &solution()).unwrap();
        let mut bytes = Vec::new();
        binary::write_binary(&mut bytes, &solution()).unwrap();
        assert_eq!(
            std::fs::read(&arrays).unwrap(),
            bytes,
            "stored as the binary form"
        );
        let legacy = dir.path().join("legacy");
        let mut old = LEGACY_MAGIC.to_vec();
        old.extend_from_slice(&3u64.to_le_bytes());
        for (c, s) in solution().credit.iter().zip(&solution().strategy) {
            old.extend_from_slice(&c.to_le_bytes());
            old.extend_from_slice(&s.to_le_bytes());
        }
        std::fs::write(&legacy, old).unwrap();
        for path in [&arrays, &legacy] {
            assert_eq!(credits(path), vec![5, TOP, 0]);
            let mut records = Records::open(path).unwrap();
            assert_eq!(records.block(1, 2).unwrap(), vec![(TOP, NO_MOVE), (0, 2)]);
        }
    }
}
