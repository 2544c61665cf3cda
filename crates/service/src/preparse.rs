//! Parsing an arena while it is being uploaded, so a large body is read once: the upload
//! thread decompresses, hashes and writes each chunk and hands a copy to a parser thread
//! ([`ParseTee`]); when the body ends, the parsed game is ready (or its error, with line and
//! column, is the answer to the upload). Bodies past a size limit are not parsed here: their
//! worker parses the stored file later.
//!
//! A parsed game waiting in the queue holds memory, so it keeps a [`Reservation`] of a
//! service-wide [`MemoryBudget`]; when the budget is spent the game is dropped and its worker
//! parses the stored file again. The reservation returns when the worker is done with it.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Instant;

use egsolve_core::format::{self, FormatError, Game, ReadOptions};

/// Bytes of parsed games the service may hold for queued jobs.
#[derive(Debug)]
pub struct MemoryBudget {
    available: AtomicU64,
}

impl MemoryBudget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            available: AtomicU64::new(bytes),
        })
    }

    /// Takes `bytes` from the budget, or `None` if that much is not available.
    pub fn try_reserve(self: &Arc<MemoryBudget>, bytes: u64) -> Option<Reservation> {
        self.available
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |a| {
                a.checked_sub(bytes)
            })
            .ok()
            .map(|_| Reservation {
                budget: self.clone(),
                bytes,
            })
    }

    /// Bytes not reserved.
    pub fn available(&self) -> u64 {
        self.available.load(Ordering::Acquire)
    }
}

/// Bytes taken from a [`MemoryBudget`], given back on drop.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget
            .available
            .fetch_add(self.bytes, Ordering::AcqRel);
    }
}

/// A game parsed before its worker started, with the memory it holds reserved.
#[derive(Debug)]
pub struct PreparsedGame {
    /// The game.
    pub game: Game,
    /// Its share of the budget (none for a game parsed by its worker).
    _reservation: Option<Reservation>,
}

impl PreparsedGame {
    /// A game that holds a reservation until it is dropped.
    pub fn reserved(game: Game, reservation: Reservation) -> PreparsedGame {
        PreparsedGame {
            game,
            _reservation: Some(reservation),
        }
    }

    /// A game parsed by its worker (nothing reserved).
    pub fn unreserved(game: Game) -> PreparsedGame {
        PreparsedGame {
            game,
            _reservation: None,
        }
    }
}

/// Chunks queued between the upload thread and the parser.
const QUEUED_CHUNKS: usize = 16;

/// A parser thread fed with the decompressed body, chunk by chunk.
#[derive(Debug)]
pub struct ParseTee {
    tx: Option<SyncSender<Vec<u8>>>,
    parser: Option<JoinHandle<Result<Game, FormatError>>>,
    fed: u64,
    limit: u64,
    started: Instant,
}

/// What a [`ParseTee`] produced: the game or why not, and the seconds the parse took
/// (overlapping the upload).
pub type TeeOutcome = (Result<Game, FormatError>, f64);

impl ParseTee {
    /// Starts a parser with `options`; bodies over `limit` decompressed bytes are given up.
    pub fn start(options: ReadOptions, limit: u64) -> ParseTee {
        let (tx, rx) = sync_channel(QUEUED_CHUNKS);
        let parser = std::thread::Builder::new()
            .name("egsolve-parse".into())
            .spawn(move || {
                format::read(
                    ChunkReader {
                        rx,
                        current: Vec::new(),
                        at: 0,
                    },
                    &options,
                )
            });
        match parser {
            Ok(parser) => ParseTee {
                tx: Some(tx),
                parser: Some(parser),
                fed: 0,
                limit,
                started: Instant::now(),
            },
            // No thread to parse with: the worker parses later.
            Err(_) => ParseTee {
                tx: None,
                parser: None,
                fed: 0,
                limit,
                started: Instant::now(),
            },
        }
    }

    /// Hands `chunk` to the parser. An error means the parser has already failed on what it
    /// was given (a malformed arena): the upload can stop.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), FormatError> {
        let Some(tx) = &self.tx else { return Ok(()) };
        self.fed += chunk.len() as u64;
        if self.fed > self.limit {
            self.give_up();
            return Ok(());
        }
        if tx.send(chunk.to_vec()).is_err() {
            // The parser stopped before the end of the body: it failed.
            self.tx = None;
            return match self.join() {
                Some(Err(e)) => Err(e),
                _ => Ok(()),
            };
        }
        Ok(())
    }

    /// Ends the body; the parsed game or its error, or `None` if the body was too large.
    pub fn finish(mut self) -> Option<TeeOutcome> {
        self.tx = None;
        let outcome = self.join()?;
        Some((outcome, self.started.elapsed().as_secs_f64()))
    }

    fn give_up(&mut self) {
        self.tx = None;
        // The parser sees the end of its input and stops; nobody waits for it.
        self.parser = None;
    }

    fn join(&mut self) -> Option<Result<Game, FormatError>> {
        self.parser.take().and_then(|p| p.join().ok())
    }
}

/// A blocking `Read` over the chunks a [`ParseTee`] sends.
struct ChunkReader {
    rx: Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: &[u8] = b"2;\n0 MAX 1:-1,2:0;\n1 MIN 0:2;\n2 MIN 2:-1;\n";

    fn fed_in_pieces(body: &[u8], limit: u64) -> Option<Result<Game, FormatError>> {
        let mut tee = ParseTee::start(ReadOptions::default(), limit);
        for piece in body.chunks(5) {
            if let Err(e) = tee.feed(piece) {
                return Some(Err(e));
            }
        }
        tee.finish().map(|(outcome, _)| outcome)
    }

    #[test]
    fn a_game_fed_in_pieces_parses_as_a_whole() {
        let whole = format::read(GAME, &ReadOptions::default()).unwrap();
        let game = fed_in_pieces(GAME, 1 << 20).unwrap().unwrap();
        assert_eq!(game.arena.edge_count(), whole.arena.edge_count());
        assert_eq!(game.arena.vertex_count(), 3);
    }

    #[test]
    fn a_malformed_game_reports_its_line() {
        let bad = b"2;\n0 MAX 1:-1,2:0;\n1 MIN 0:x;\n2 MIN 2:-1;\n";
        let error = fed_in_pieces(bad, 1 << 20).unwrap().unwrap_err();
        assert!(error.to_string().contains("line 3"), "{error}");
    }

    #[test]
    fn bodies_over_the_limit_are_left_to_the_worker() {
        assert!(fed_in_pieces(GAME, 10).is_none());
    }

    #[test]
    fn reservations_return_to_the_budget() {
        let budget = MemoryBudget::new(100);
        let a = budget.try_reserve(60).unwrap();
        assert!(budget.try_reserve(60).is_none());
        drop(a);
        assert_eq!(budget.available(), 100);
        assert!(budget.try_reserve(100).is_some());
    }
}
