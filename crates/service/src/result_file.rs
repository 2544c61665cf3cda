//! Result files: a solved game stored compactly (credit and strategy per vertex), written
//! once, synced before the job is marked succeeded, and rendered on request — through the
//! record writers of [`egsolve_core::output::records`], so the bytes are those of `egsolve solve` —
//! as JSON (the CLI's document plus the job id), text (`ID CREDIT [STRATEGY]` lines, `T` for
//! ⊤, like the shared `.credits` files; only for answers with credits) or PGSolver
//! `paritysol`, formatted on every core in blocks and streamed in order from a blocking
//! thread (compressed by the route's `CompressionLayer` when the client asks:
//! `Accept-Encoding: zstd` or `gzip`). An answer of the parity solver stores 0 as the
//! credit of `W0` vertices; its summary says the credits were not computed, and its JSON
//! records then carry no credit.
//!
//! Layout: the magic `EGSR1\n`, `n` as u64 LE, then `n` records of (credit u64 LE, strategy
//! u32 LE) — 12 bytes per vertex, so any vertex can be read directly.

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::job::{JobId, ResultSummary, ReturnKind};
use egsolve_core::arena::VertexId;
use egsolve_core::output::parallel::format_in_order;
use egsolve_core::output::records::{
    CreditField, JSON_TAIL, RecordBuffer, StrategyField, json_head, paritysol_head,
};
use egsolve_core::solve::Solution;

const MAGIC: &[u8; 6] = b"EGSR1\n";
const HEADER: u64 = 14;
const RECORD: u64 = 12;

/// How a result is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultFormat {
    /// JSON with a summary block.
    Json,
    /// `ID CREDIT [STRATEGY]` lines.
    Text,
    /// PGSolver `paritysol`.
    Paritysol,
}

impl ResultFormat {
    /// Parses the `format` query value.
    pub fn parse(s: &str) -> Option<ResultFormat> {
        match s {
            "json" => Some(ResultFormat::Json),
            "text" => Some(ResultFormat::Text),
            "paritysol" => Some(ResultFormat::Paritysol),
            _ => None,
        }
    }

    /// The response `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            ResultFormat::Json => "application/json",
            ResultFormat::Text | ResultFormat::Paritysol => "text/plain; charset=utf-8",
        }
    }
}

/// Writes `solution` to `path` (through a temporary name) and syncs it.
pub fn write(path: &Path, solution: &Solution) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", uuid::Uuid::now_v7()));
    let file = std::fs::File::create(&tmp)?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    out.write_all(MAGIC)?;
    out.write_all(&(solution.credit.len() as u64).to_le_bytes())?;
    for (credit, strategy) in solution.credit.iter().zip(&solution.strategy) {
        out.write_all(&credit.to_le_bytes())?;
        out.write_all(&strategy.to_le_bytes())?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
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

/// Hands rendered chunks to the response stream.
struct ChunkSender {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
}

impl ChunkSender {
    fn send(&self, chunk: Vec<u8>) -> std::io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.tx
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| std::io::Error::other("the client went away"))
    }
}

/// Reads records from a result file, many at a time.
struct Records {
    file: std::io::BufReader<std::fs::File>,
    n: u64,
    block: Vec<u8>,
}

impl Records {
    fn open(path: &Path) -> std::io::Result<Records> {
        let mut file = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(path)?);
        let mut header = [0u8; HEADER as usize];
        file.read_exact(&mut header)?;
        if &header[..6] != MAGIC {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a result file",
            ));
        }
        let n = u64::from_le_bytes(header[6..14].try_into().expect("8 bytes"));
        Ok(Records {
            file,
            n,
            block: Vec::new(),
        })
    }

    /// The `count` records from the current position, as (credit, strategy).
    fn next_block(&mut self, count: usize) -> std::io::Result<impl Iterator<Item = (u64, u32)>> {
        self.block.resize(count * RECORD as usize, 0);
        self.file.read_exact(&mut self.block)?;
        Ok(self.block.chunks_exact(RECORD as usize).map(|r| {
            (
                u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
                u32::from_le_bytes(r[8..].try_into().expect("4 bytes")),
            )
        }))
    }

    fn seek(&mut self, v: u64) -> std::io::Result<()> {
        self.file
            .seek(SeekFrom::Start(HEADER + v * RECORD))
            .map(|_| ())
    }
}

/// Records read per block when every vertex is rendered (12 MiB), each block formatted on
/// every core ([`egsolve_core::output::parallel`]).
const BLOCK: u64 = 1 << 20;

fn render_into(path: &Path, request: &RenderRequest, out: &ChunkSender) -> std::io::Result<()> {
    let mut records = Records::open(path)?;
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
        ResultFormat::Text => {}
    }
    let credits = CreditField::of(request.summary.credits_computed);
    let record = |buffer: &mut RecordBuffer, v: u64, credit: u64, strategy: u32| {
        let v = v as VertexId;
        match request.format {
            ResultFormat::Json => buffer.json_record(v, credit, strategy, credits, strategies),
            ResultFormat::Text => buffer.text_line(v, credit, strategy, strategies),
            ResultFormat::Paritysol => buffer.paritysol_line(v, credit, strategy),
        }
    };
    let mut buffer = RecordBuffer::default();
    match &request.vertices {
        Some(list) => {
            // A selection: seeks, one record at a time (selections are small).
            buffer.raw(&head);
            for &v in list {
                records.seek(v)?;
                let (credit, strategy) = records.next_block(1)?.next().expect("one record");
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
                let block: Vec<(u64, u32)> = records.next_block(count as usize)?.collect();
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
        for (credit, _) in records.next_block(count as usize)? {
            f(credit);
        }
        v += count;
    }
    Ok(())
}
