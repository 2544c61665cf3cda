//! Result files: a solved game stored compactly (credit and strategy per vertex), written
//! once, synced before the job is marked succeeded, and rendered on request as JSON (with a
//! summary block), text (`ID CREDIT` lines, `T` for ⊤, like the shared `.credits` files) or
//! PGSolver `paritysol`, streamed in chunks from a blocking thread.
//!
//! Layout: the magic `EGSR1\n`, `n` as u64 LE, then `n` records of (credit u64 LE, strategy
//! u32 LE) — 12 bytes per vertex, so any vertex can be read directly.

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::job::{JobId, ResultSummary, ReturnKind};
use crate::solve::{NO_MOVE, Solution, TOP};

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
        let mut sink = ChunkSink {
            tx,
            buffer: Vec::with_capacity(1 << 16),
        };
        let outcome = render_into(&path, &request, &mut sink).and_then(|_| sink.flush());
        if let Err(e) = outcome {
            let _ = sink.tx.blocking_send(Err(e));
        }
    });
    rx
}

struct ChunkSink {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
    buffer: Vec<u8>,
}

impl ChunkSink {
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buffer.is_empty() {
            let chunk = Bytes::from(std::mem::replace(
                &mut self.buffer,
                Vec::with_capacity(1 << 16),
            ));
            self.tx
                .blocking_send(Ok(chunk))
                .map_err(|_| std::io::Error::other("the client went away"))?;
        }
        Ok(())
    }
}

impl Write for ChunkSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        ChunkSink::flush(self)
    }
}

/// Reads records from a result file.
struct Records {
    file: std::io::BufReader<std::fs::File>,
    n: u64,
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
        Ok(Records { file, n })
    }

    fn next(&mut self) -> std::io::Result<(u64, u32)> {
        let mut record = [0u8; RECORD as usize];
        self.file.read_exact(&mut record)?;
        Ok((
            u64::from_le_bytes(record[..8].try_into().expect("8 bytes")),
            u32::from_le_bytes(record[8..].try_into().expect("4 bytes")),
        ))
    }

    fn seek(&mut self, v: u64) -> std::io::Result<()> {
        self.file
            .seek(SeekFrom::Start(HEADER + v * RECORD))
            .map(|_| ())
    }
}

fn render_into(path: &Path, request: &RenderRequest, out: &mut ChunkSink) -> std::io::Result<()> {
    let mut records = Records::open(path)?;
    let n = records.n;
    let strategies = request.returns == ReturnKind::Strategies;
    match request.format {
        ResultFormat::Json => {
            let head = serde_json::json!({
                "job": request.job,
                "summary": summary_json(&request.summary),
            });
            let head = serde_json::to_string(&head).expect("json");
            out.write_all(&head.as_bytes()[..head.len() - 1])?;
            out.write_all(b",\"vertices\":[")?;
        }
        ResultFormat::Paritysol => writeln!(out, "paritysol {n};")?,
        ResultFormat::Text => {}
    }
    let all: Box<dyn Iterator<Item = u64>> = match &request.vertices {
        Some(list) => Box::new(list.clone().into_iter()),
        None => Box::new(0..n),
    };
    let mut first = true;
    let mut expected = 0u64;
    for v in all {
        if v != expected {
            records.seek(v)?;
        }
        expected = v + 1;
        let (credit, strategy) = records.next()?;
        let winner = if credit == TOP { 1 } else { 0 };
        match request.format {
            ResultFormat::Json => {
                if !first {
                    out.write_all(b",")?;
                }
                write!(out, "{{\"id\":{v},\"winner\":{winner},\"credit\":")?;
                if credit == TOP {
                    out.write_all(b"null")?
                } else {
                    write!(out, "{credit}")?
                }
                if strategies {
                    if strategy == NO_MOVE {
                        out.write_all(b",\"strategy\":null")?;
                    } else {
                        write!(out, ",\"strategy\":{strategy}")?;
                    }
                }
                out.write_all(b"}")?;
            }
            ResultFormat::Text => {
                if credit == TOP {
                    write!(out, "{v} T")?
                } else {
                    write!(out, "{v} {credit}")?
                }
                if strategies && strategy != NO_MOVE {
                    write!(out, " {strategy}")?;
                }
                out.write_all(b"\n")?;
            }
            ResultFormat::Paritysol => {
                if strategy != NO_MOVE {
                    writeln!(out, "{v} {winner} {strategy};")?;
                } else {
                    writeln!(out, "{v} {winner};")?;
                }
            }
        }
        first = false;
    }
    if request.format == ResultFormat::Json {
        out.write_all(b"]}")?;
    }
    Ok(())
}

/// The summary block as it appears in results and job views.
pub fn summary_json(summary: &ResultSummary) -> serde_json::Value {
    serde_json::json!({
        "vertices": summary.vertices,
        "edges": summary.edges,
        "bound": summary.bound,
        "w0": summary.w0,
        "w1": summary.w1,
        "vertex0": {
            "winner": summary.vertex0_winner,
            "credit": summary.vertex0_credit,
        },
        "backend": summary.backend,
        "solve_seconds": summary.solve_seconds,
        "lifts": summary.lifts,
    })
}

/// Checks that every requested vertex exists.
pub fn check_vertices(vertices: &[u64], n: u64) -> Result<(), u64> {
    match vertices.iter().find(|&&v| v >= n) {
        Some(&v) => Err(v),
        None => Ok(()),
    }
}
