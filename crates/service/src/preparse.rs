//! Parsing an arena as soon as it is received, before the `202` (so a malformed arena is
//! refused with its line and column before a job exists, and the worker need not parse):
//! on every core, through the core reader ([`parse`]) — text from the copy the upload kept
//! as it arrived (decompressed if it came compressed; cut at newlines and parsed in
//! parallel), `egb` from the written file (mapped and validated in place). Bodies past a size limit are not parsed here: their
//! worker parses the stored file later.
//!
//! A parsed game waiting in the queue holds memory, so it keeps a [`Reservation`] of a
//! service-wide [`MemoryBudget`]; when the budget is spent the game is dropped and its worker
//! parses the stored file again. The reservation returns when the worker is done with it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::ServeConfig;
use super::job::{Failure, InputFormat};
use egsolve_core::format::{self, Format, FormatError, Game, ReadOptions};

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
    #[cfg(test)]
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

/// A race's sides share the game the job holds (`solve::race::solve_detached`).
impl egsolve_core::solve::race::RacedGame for PreparsedGame {
    fn arena(&self) -> &egsolve_core::arena::Arena {
        &self.game.arena
    }

    fn parity(&self) -> Option<egsolve_core::parity::ParityView<'_>> {
        self.game
            .parity
            .as_ref()
            .map(egsolve_core::format::ParityInfo::view)
    }
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

/// What to parse an upload with, and up to which size.
#[derive(Debug, Clone)]
pub struct ParseRequest {
    /// The reader's options (format, size limit; the pool is the caller's: every core).
    pub options: ReadOptions,
    /// Bodies over this many decompressed bytes are left to their worker.
    pub limit: u64,
}

/// Where the received arena is.
#[derive(Debug)]
pub enum ParseSource {
    /// The written file (a plain `egb` upload, or text past what is kept in memory): mapped by
    /// the core reader and read in place.
    File(PathBuf),
    /// The (decompressed) text the upload kept.
    Text(Vec<u8>),
}

/// Parses an upload on the calling thread's rayon pool (every core, outside a pool); the
/// game or why not, and the seconds it took.
pub fn parse(source: &ParseSource, request: &ParseRequest) -> (Result<Game, FormatError>, f64) {
    let start = Instant::now();
    let game = match source {
        ParseSource::File(path) => format::read_path(path, &request.options),
        ParseSource::Text(text) => format::read_bytes(text, &request.options),
    };
    (game, start.elapsed().as_secs_f64())
}

/// How to read a stored arena of a job with input format `format`.
pub fn read_options(format: InputFormat, config: &ServeConfig) -> ReadOptions {
    let format = match format {
        InputFormat::Auto => None,
        InputFormat::Mpg => Some(Format::Mpg),
        InputFormat::Gm => Some(Format::PgSolver),
        InputFormat::Json => Some(Format::Json),
    };
    ReadOptions {
        format,
        max_bytes: Some(config.max_body_bytes),
        ..ReadOptions::default()
    }
}

/// A reader error as a job failure: bad input is `malformed-arena` (with its position),
/// anything else (a stored file gone missing) is `internal`.
pub fn malformed(e: FormatError) -> Failure {
    let kind = if e.is_bad_input() {
        "malformed-arena"
    } else {
        "internal"
    };
    let position = e.position();
    Failure {
        kind: kind.into(),
        // The reader's hints name the command line's flag; here it is a query parameter.
        message: e.to_string().replace("--format", "the format parameter"),
        line: position.map(|p| p.line),
        column: position.map(|p| p.column),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: &[u8] = b"2;\n0 MAX 1:-1,2:0;\n1 MIN 0:2;\n2 MIN 2:-1;\n";

    fn request() -> ParseRequest {
        ParseRequest {
            options: ReadOptions::default(),
            limit: 1 << 20,
        }
    }

    #[test]
    fn a_file_and_its_text_parse_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("game");
        std::fs::write(&path, GAME).unwrap();
        let from_file = parse(&ParseSource::File(path), &request()).0.unwrap();
        let from_text = parse(&ParseSource::Text(GAME.to_vec()), &request())
            .0
            .unwrap();
        assert_eq!(from_file, from_text);
        assert_eq!(from_file.arena.vertex_count(), 3);
    }

    #[test]
    fn a_malformed_game_reports_its_line() {
        let bad = b"2;\n0 MAX 1:-1,2:0;\n1 MIN 0:x;\n2 MIN 2:-1;\n".to_vec();
        let error = parse(&ParseSource::Text(bad), &request()).0.unwrap_err();
        assert!(error.to_string().contains("line 3"), "{error}");
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
