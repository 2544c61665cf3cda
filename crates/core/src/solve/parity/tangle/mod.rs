//! Tangle learning (van Dijk, "Attracting Tangles to Solve Parity Games", CAV 2018) and
//! recursive tangle learning (van Dijk, "A Parity Game Tale of Two Counters",
//! GandALF 2019), on one search state that the portfolio ([`super::portfolio`]) can share
//! between the two.
//!
//! A *tangle* of player `α` is a strongly connected set of vertices with a move for each
//! `α` vertex in it such that every cycle inside (with the opponent moving freely) has a top
//! priority of `α`'s parity; the opponent can only get out through its *escapes*. A tangle
//! whose escapes all lie in an `α` attractor set can be attracted as a whole: the opponent
//! either stays in it and loses, or leaves into the set. Tangle learning repeats a region
//! decomposition of the unsolved game with tangle attraction ([`decompose`]), learning the
//! tangles of closed regions each time ([`extract`]), until a tangle without escapes — a
//! dominion — turns up; that dominion's attractor is solved and taken out. The recursive
//! variant also decomposes the inside of each region (minus its open heads, or its top
//! head), which finds the nested tangles of the two-counters family in polynomial time
//! where flat tangle learning needs exponentially many rounds.
//!
//! This module owns the state: what searches share ([`Shared`]: solved vertices, winners,
//! moves, the [`store`] of tangles) and what each search keeps for itself ([`Search`]:
//! contexts, regions, attractor counters). Bookkeeping is by ids from one increasing
//! sequence, so that nothing is cleared between regions: a vertex is in context `c` when
//! `ctx == c`, and is assigned to one of `c`'s regions when `region >= c` (region ids are
//! taken after their context's id). Attractor counters carry the stamp of their context
//! and count the successors (for vertices) or escapes (for tangles) still unassigned there:
//! - a vertex counter is set on the first touch, which is by the first of its successors to
//!   be processed, to the successors in the context minus one, and loses one per touch;
//! - a tangle counter is touched when an escape joins a region (not when it is processed),
//!   and is set on its first touch in a context to its escapes unassigned at that moment,
//!   so tangles learned midway, or counters overwritten by a nested context, are counted
//!   right from the current state.
//!
//! The solvers run on egsolve's arena and the compressed priorities as they are (no
//! renumbering): "the highest vertex left" is a walk down a list sorted once by priority.

mod attract;
mod decompose;
mod extract;
pub mod store;

use super::graph::{Buckets, Graph};
use super::pace::{CHECK_EVERY, Halt, Pacer, Stop};
use crate::graph::tarjan::SccFinder;
use crate::solve::NO_MOVE;
use decompose::Frame;
use store::{Counter, Tangles};

/// Which tangle learner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Decompose the unsolved game only (tangle learning, `--tl` in Oink).
    Flat,
    /// Decompose inside regions too (recursive tangle learning, `--rtl` in Oink).
    Recursive,
}

/// A vertex's bookkeeping: its context, its region (or set), and its attractor counter
/// with the stamp that makes it valid (one 16-byte cell: an attractor step reads it all).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(16))]
struct Cell {
    ctx: u32,
    region: u32,
    count_stamp: u32,
    count: u32,
}

/// Where an attractor runs.
#[derive(Debug, Clone, Copy)]
enum Universe {
    /// The unassigned vertices of context `id`.
    Context { id: u32 },
    /// The vertices of region `region` that were not yet moved out to `removed`.
    Removal { region: u32, removed: u32 },
    /// The unsolved vertices not yet in the dominion `dominion`.
    Unsolved { dominion: u32 },
}

/// Counts of a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Decompositions started.
    pub iterations: u64,
    /// Regions computed.
    pub regions: u64,
    /// Tangles learned.
    pub tangles: u64,
    /// Dominions solved.
    pub dominions: u64,
    /// Work units (about one per vertex or edge touched).
    pub work: u64,
}

/// What the searches of one game share: who won what, with which moves, what is left, and
/// the tangles learned. A search holds it while it runs; two searches time-sliced on one
/// game may hand it over with [`Search::swap_shared`] (tested, though the portfolio now
/// gives each of its searches a state of its own: `super::super::portfolio` says why).
#[derive(Debug, Default)]
pub struct Shared {
    /// Solved vertices, their winners, and the winners' moves ([`NO_MOVE`] where the loser
    /// owns the vertex).
    pub solved: Vec<bool>,
    /// Each solved vertex's winner.
    pub winner: Vec<u8>,
    /// Each solved vertex's winning move.
    pub strategy: Vec<u32>,
    /// Unsolved vertices by decreasing priority (ties by decreasing id).
    pub unsolved: Vec<u32>,
    tangles: Tangles,
    /// Whether a dominion was solved since `unsolved` was last rebuilt.
    dirty: bool,
    /// Dominions solved so far (a suspended decomposition older than the last one is void).
    dominions: u64,
    /// What the searches did.
    pub stats: Stats,
}

impl Shared {
    /// Whether every vertex is solved.
    pub fn is_solved(&self) -> bool {
        self.unsolved.is_empty()
    }

    /// The number of tangles learned (dead ones included).
    pub fn tangle_count(&self) -> usize {
        self.tangles.len()
    }
}

/// Strongly connected components found by tangle extraction: component `i` is
/// `vertices[ends[i - 1]..ends[i]]` (from 0 for the first), cyclic ones only.
#[derive(Debug, Default)]
struct Components {
    vertices: Vec<u32>,
    ends: Vec<u32>,
}

/// A tangle search: the shared state it holds, and its own working state.
pub struct Search<'a> {
    game: Graph<'a>,
    /// The state both searches share.
    pub shared: Shared,
    /// The mode of the running decomposition.
    mode: Mode,
    /// The open contexts of the running decomposition, outermost first (empty between
    /// decompositions), and the dominion count when it started.
    frames: Vec<Frame>,
    epoch: u64,
    /// The number of tangles when this search last stopped, and whether another search
    /// added some while its decomposition was suspended.
    tangles_seen: usize,
    foreign: bool,
    /// The bookkeeping of each vertex, together.
    cells: Vec<Cell>,
    /// The moves of the vertices in this search's sets (attractor and tangle moves).
    moves: Vec<u32>,
    /// Attraction counters per tangle.
    counters: Vec<Counter>,
    /// Scratch marks of tangle extraction.
    mark: Vec<u32>,
    next_id: u32,
    scc: SccFinder,
    components: Components,
    /// Tangles whose counters reached zero in the running attractor.
    pending: Vec<u32>,
    /// Scratch lists, reused.
    members: Vec<(u32, u32)>,
    escapes: Vec<u32>,
    pool: Vec<Vec<u32>>,
    /// Vertices and edges touched since the last [`Pacer::spend`].
    work: u64,
    /// What ends the running decomposition for good, checked inside its steps once `work`
    /// reaches `poll_at` ([`Search::poll`]); `halted` once it did (the state is then
    /// half-way through a step, and the search is never run again).
    halt: Halt,
    poll_at: u64,
    halted: bool,
}

impl<'a> Search<'a> {
    /// A search on `game` with a fresh shared state.
    pub fn new(game: Graph<'a>) -> Search<'a> {
        let n = game.vertex_count();
        let mut search = Search::sharing(game);
        search.shared = Shared {
            solved: vec![false; n],
            winner: vec![0; n],
            strategy: vec![NO_MOVE; n],
            unsolved: Buckets::new(game.priority).descending(),
            tangles: Tangles::new(n),
            ..Shared::default()
        };
        search
    }

    /// A search on `game` that will run on another search's shared state (handed over
    /// with [`Search::swap_shared`]); it holds an empty one until then.
    pub fn sharing(game: Graph<'a>) -> Search<'a> {
        let n = game.vertex_count();
        Search {
            game,
            shared: Shared::default(),
            mode: Mode::Flat,
            frames: Vec::new(),
            epoch: 0,
            tangles_seen: 0,
            foreign: false,
            cells: vec![Cell::default(); n],
            moves: vec![NO_MOVE; n],
            counters: Vec::new(),
            mark: vec![0; n],
            next_id: 1,
            scc: SccFinder::new(n),
            components: Components::default(),
            pending: Vec::new(),
            members: Vec::new(),
            escapes: Vec::new(),
            pool: Vec::new(),
            work: 0,
            halt: Halt::default(),
            poll_at: CHECK_EVERY,
            halted: false,
        }
    }

    /// Hands the shared state from one search to the other.
    pub fn swap_shared(a: &mut Search<'_>, b: &mut Search<'_>) {
        std::mem::swap(&mut a.shared, &mut b.shared);
    }

    /// Whether every vertex is solved.
    pub fn is_solved(&self) -> bool {
        self.shared.is_solved()
    }

    /// A new id (context, region, set or stamp; see the module doc). Decompositions start
    /// with at least 2^31 ids left ([`Search::reset_ids`]), and [`Search::ids_left`] is
    /// checked at every region, so the sequence never wraps.
    fn fresh(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Whether the ids left cover the next region (its set, its extraction: at most two
    /// per vertex, its recursion) with room to spare.
    fn ids_left(&self) -> bool {
        let most_per_region = 2 * self.game.vertex_count() as u64 + 64;
        u64::from(u32::MAX - self.next_id) > most_per_region
    }

    /// Restarts the id sequence (between decompositions, long before it would run out).
    fn reset_ids(&mut self) {
        self.cells.fill(Cell::default());
        self.mark.fill(0);
        self.counters.fill(Counter::default());
        self.next_id = 1;
    }

    /// Inside a step (an attractor, a tangle extraction): every [`CHECK_EVERY`] work units,
    /// `Err` once the run must end for good ([`Halt`]; a time slice's end waits for the
    /// step's end, where the search can resume).
    #[inline]
    fn poll(&mut self) -> Result<(), Stop> {
        if self.work < self.poll_at {
            return Ok(());
        }
        self.poll_now()
    }

    /// [`Search::poll`]'s check, out of the loops' way.
    #[cold]
    fn poll_now(&mut self) -> Result<(), Stop> {
        self.poll_at = self.work + CHECK_EVERY;
        let checked = self.halt.check();
        self.halted |= checked.is_err();
        checked
    }

    /// The work since the last call, for the pacer (polls count on from zero).
    fn take_work(&mut self) -> u64 {
        self.poll_at = CHECK_EVERY;
        std::mem::take(&mut self.work)
    }

    /// An empty list from the pool (lists are reused across regions and contexts).
    fn buffer(&mut self) -> Vec<u32> {
        self.pool.pop().unwrap_or_default()
    }

    /// Returns a list to the pool.
    fn give_back(&mut self, mut buffer: Vec<u32>) {
        buffer.clear();
        self.pool.push(buffer);
    }
}

/// What a solve with one tangle learner found.
#[derive(Debug)]
pub struct Solved {
    /// Winner of each vertex.
    pub winner: Vec<u8>,
    /// The winner's move where it owns the vertex, else [`NO_MOVE`].
    pub strategy: Vec<u32>,
    /// Counts of the run.
    pub stats: Stats,
}

/// Solves `game` with tangle learning in `mode`, checking and reporting once per
/// decomposition (and every [`super::pace::CHECK_EVERY`] work units inside one).
pub fn solve(game: Graph<'_>, mode: Mode, pacer: &mut Pacer<'_>) -> Result<Solved, Stop> {
    let mut search = Search::new(game);
    while !search.is_solved() {
        search.iterate(mode, pacer)?;
        let shared = &search.shared;
        pacer.round(
            shared.stats.iterations,
            shared.unsolved.len() as u64,
            shared.stats.work,
        )?;
    }
    let Shared {
        winner,
        strategy,
        stats,
        ..
    } = search.shared;
    Ok(Solved {
        winner,
        strategy,
        stats,
    })
}
