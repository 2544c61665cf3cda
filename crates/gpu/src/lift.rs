//! The GPU as the accelerated solver's lifting engine: [`GpuLift`] implements
//! [`LiftEngine`], so `--backend gpu` runs the same exact scheme as `auto` (lifting
//! interleaved with evaluations of player 1's strategies, see [`egsolve_core::solve::accel`]) with
//! the lifting on the device and the evaluations steered by the host: on games of
//! [`DEVICE_COMPONENTS_FROM`] vertices or more the device chooses player 1's strategy σ1
//! from the values it holds and computes the evaluation's strongly connected components,
//! the largest one's greedy witness for the cycle test ([`super::components`]), the
//! backward reachability to the nonnegative components and Bellman–Ford
//! ([`super::evaluation`]); the host marks the graph's words, tests the other components'
//! cycles (reading the arena through the words) and runs the attractor.
//!
//! The game is uploaded once; each lifting phase uploads the values, lifts from them with
//! every vertex in the first frontier, and downloads them (one `n`-word copy each way). At
//! the fixpoint, player 0's strategy is chosen on the device too, from the values there
//! (one `n`-word download instead of the host's pass over player 0's edges), on games of
//! [`DEVICE_MOVES_FROM_DEGREE`] edges per vertex or more.
//!
//! **The lifts' record** (why each vertex reached ⊤, `strategy::topping`) stays on the
//! device. A solve that reaches the fixpoint in its first phase (no evaluations) has the
//! device classify it for player 1's certified moves ([`EngineSearches::recorded_moves`],
//! asked only where player 1 wins somewhere): only the moves and the roots come back. Otherwise it is copied back at the fixpoint where
//! lifting topped at least one vertex in [`RECORD_FROM_TOP_SHARE`].
//!
//! **Phase lengths** come from the driver's measured schedule ([`accel::Schedule`]): each
//! phase runs for a time, which the kernel honours itself (it leaves after the round in
//! which the time runs out, so a phase with slow rounds — a hub vertex whose thousands of
//! predecessors one thread pushes — does not overrun). The device lifts far faster than
//! the host evaluates, so the phase is [`LIFT_PERCENT`] of the next evaluation's expected
//! time rather than all of it: 25 % was the fastest of 25/100/400 % on the shared games and
//! 10^7-edge random games on an H100 with the components on the host; with them on the
//! device, 10 % was as fast as 5 % and faster than 25 and 50 % on every game that evaluates
//! (random p50 0.35–0.38 s against 0.43 at 25 %; session 12's device logs), and games
//! that lifting finishes (BRP, Hesselink) did not change.

use std::time::Instant;

use rayon::prelude::*;

use crate::engine::GpuEngine;
use crate::prefault::Prefaulted;
use egsolve_core::arena::{Arena, Player, VertexId};
use egsolve_core::solve::GpuOptions;
use egsolve_core::solve::accel;
use egsolve_core::solve::chunked;
use egsolve_core::solve::engine::{
    EngineAttracted, EngineComponents, EngineSearches, LiftCall, LiftEngine, LiftRun,
};
use egsolve_core::solve::strategy::{NO_EDGE, RecordedMoves, ToppedBy, Topping};
use egsolve_core::solve::{Control, SolveError, TOP, Threads};

/// Default length of a lifting phase, in percent of the next evaluation's expected time.
pub const LIFT_PERCENT: u32 = 10;

/// Games of at least this many vertices get their evaluations' strongly connected
/// components from the device ([`GpuEngine::start_components`]); below, the host's take
/// less than the two copies.
pub const DEVICE_COMPONENTS_FROM: u64 = 1 << 15;

/// Games with at least this many edges per vertex get player 0's strategy from the device.
pub const DEVICE_MOVES_FROM_DEGREE: u64 = 2;

/// The device's topping record is copied back only where lifting topped at least one vertex
/// in this many.
pub const RECORD_FROM_TOP_SHARE: usize = 32;

/// Writes the device's topping record (words of [`GpuEngine::download_topping`]) into
/// `topping`, edge positions turned into the arena's edge indices.
pub fn fill_topping(arena: &Arena, words: &[u32], topping: &Topping) {
    words.par_iter().enumerate().for_each(|(v, &word)| {
        let cause = match word & 3 {
            1 => ToppedBy::TopSuccessors,
            2 => ToppedBy::PastBound,
            _ => return,
        };
        let v = v as VertexId;
        let position = word >> 2;
        let range = arena.succ_range(v);
        // (`engine::TOP_NO_POSITION`, or any position past the vertex's edges: none.)
        let edge = if arena.owner(v) == Player::One && (position as usize) < range.len() {
            (range.start + position as usize) as u32
        } else {
            NO_EDGE
        };
        topping.record(v, (cause, edge));
    });
}

/// Lifting on a device for the accelerated driver.
pub struct GpuLift {
    engine: GpuEngine,
    options: GpuOptions,
    /// Phases run.
    pub phases: u64,
    /// Kernel launches in all phases.
    pub launches: u64,
    /// Seconds spent in phases (copies included).
    pub seconds: f64,
    /// … of which copying values back to the host.
    pub download_seconds: f64,
    /// Evaluations' components computed on the device …
    pub component_launches: u64,
    /// … of which the device left to the host (out of sweeps).
    pub component_fallbacks: u64,
    /// Evaluations' reachability and Bellman–Ford asked of the device …
    pub search_launches: u64,
    /// … of which the device left to the host (out of sweeps, or no room).
    pub search_fallbacks: u64,
    /// When the running components launch started (for the debug log).
    components_started: Option<Instant>,
    /// The record ([`Topping::id`]) the device's topping record belongs to.
    topping_id: Option<u64>,
    /// Vertices the phases of that record's solve lifted to ⊤.
    lifted_tops: usize,
    /// The record of a solve that reached the fixpoint in its first phase, left on the
    /// device for [`EngineSearches::recorded_moves`] (which may never be asked: an engine
    /// serves one solve).
    record_on_device: bool,
    /// Room for those moves, mapped on a pool thread during the first phase
    /// ([`crate::prefault`]).
    moves_room: Option<Prefaulted<u32>>,
}

impl GpuLift {
    /// Wraps an engine that holds `arena` (uploaded with its bound).
    pub fn new(engine: GpuEngine, options: &GpuOptions) -> GpuLift {
        GpuLift {
            engine,
            options: options.clone(),
            phases: 0,
            launches: 0,
            seconds: 0.0,
            download_seconds: 0.0,
            component_launches: 0,
            component_fallbacks: 0,
            search_launches: 0,
            search_fallbacks: 0,
            components_started: None,
            topping_id: None,
            lifted_tops: 0,
            record_on_device: false,
            moves_room: None,
        }
    }

    /// The engine (device, lanes).
    pub fn engine(&self) -> &GpuEngine {
        &self.engine
    }

    /// Whether a game of `n` vertices has its evaluations' graph searches (and σ1) on the
    /// device ([`DEVICE_COMPONENTS_FROM`], `--gpu-components-from`).
    fn evaluates_on_device(&self, n: usize) -> bool {
        let from = self
            .options
            .device_components_from
            .unwrap_or(DEVICE_COMPONENTS_FROM);
        n as u64 >= from
    }

    /// Copies the device's topping record into `topping`.
    fn copy_record(
        &mut self,
        arena: &Arena,
        topping: &Topping,
        threads: &Threads,
    ) -> Result<(), SolveError> {
        if let Some(words) = self.engine.download_topping()? {
            topping.prepare(threads);
            threads.install(|| fill_topping(arena, &words, topping));
        }
        Ok(())
    }

    /// Counts (and logs) one of an evaluation's searches on the device, begun at `start`;
    /// `done`: whether the device answered (else the host does).
    fn count_search(&mut self, what: &'static str, start: Instant, done: bool) {
        tracing::debug!(
            seconds = start.elapsed().as_secs_f64(),
            sweeps = self.engine.evaluation_sweeps(),
            done,
            "gpu: {what}"
        );
        self.search_launches += 1;
        self.search_fallbacks += u64::from(!done);
    }
}

impl LiftEngine for GpuLift {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn threads(&self) -> usize {
        super::host_pool_for(&self.options).count()
    }

    fn zeros(&self, _n: usize, _threads: &Threads) -> Vec<u64> {
        Vec::new()
    }

    fn started_threads(&self) -> Option<Threads> {
        Some(super::host_pool_for(&self.options))
    }

    fn phase_ratio(&self) -> f64 {
        match self.options.lift_percent {
            Some(0) => 1.0,
            Some(p) => p as f64 / 100.0,
            None => LIFT_PERCENT as f64 / 100.0,
        }
    }

    fn known_bound(&self) -> Option<u64> {
        Some(self.engine.bound())
    }

    fn records_topping(&self) -> bool {
        !self.engine.renumbered()
    }

    fn new_topping(&self, n: usize, _threads: &Threads) -> Topping {
        // Filled only where lifting topped a good part of the game (below).
        Topping::deferred(n)
    }

    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        let LiftCall {
            arena,
            bound,
            topping,
            budget,
            threads,
            control,
        } = call;
        debug_assert_eq!(bound, self.engine.bound(), "the engine holds this game");
        debug_assert!(
            values.len() == arena.vertex_count() || (values.is_empty() && self.phases == 0),
            "n values, or none (zeros) before the first phase"
        );
        let max_seconds = budget.until.map_or(f64::INFINITY, |until| {
            until
                .saturating_duration_since(Instant::now())
                .as_secs_f64()
        });
        let max_lifts = budget.lifts;
        let begin = Instant::now();
        // The first phase starts from 0: a memset instead of an upload.
        let from_zero = self.phases == 0
            && (values.is_empty() || threads.install(|| values.par_iter().all(|&v| v == 0)));
        // From 0 nothing is uploaded, and the credits come back into the driver's vector.
        let (start, reuse) = if from_zero {
            (None, std::mem::take(values))
        } else {
            (Some(values.as_slice()), Vec::new())
        };
        // The device's record spans a solve's phases: cleared when a new record comes.
        let recording = match topping {
            Some(t) if self.topping_id == Some(t.id()) => true,
            Some(t) => {
                let started = self.engine.start_topping()?;
                self.topping_id = started.then_some(t.id());
                self.lifted_tops = 0;
                started
            }
            None => false,
        };
        let count_top =
            |values: &[u64]| threads.install(|| values.par_iter().filter(|&&c| c == TOP).count());
        // (A phase from 0, the solve's first, starts with nothing at ⊤.)
        let top_before = if recording && start.is_some() {
            count_top(values)
        } else {
            0
        };
        // A first phase that reaches the fixpoint leaves the record on the device, and the
        // driver may ask for its moves, a word per vertex: their room (and player 0's
        // strategy's) is mapped meanwhile, where they come back through the staging buffers
        // (smaller copies allocate) and are not huge (`prefault`).
        let moves_bytes = arena.vertex_count() * 4;
        if recording
            && self.phases == 0
            && (crate::staging::STAGED_IF_READY..=crate::prefault::MAPPED_AHEAD_UP_TO)
                .contains(&moves_bytes)
        {
            self.moves_room = Prefaulted::start(arena.vertex_count(), threads);
        }
        let before = begin.elapsed().as_secs_f64();
        // Inside the driver, so on the solve's pool (its narrowing, widening and any
        // renumbering are parallel loops).
        let run = self.engine.lift_budgeted(
            start,
            reuse,
            max_lifts,
            max_seconds,
            &self.options,
            control,
        )?;
        let engine_seconds = begin.elapsed().as_secs_f64() - before;
        *values = run.credit;
        // A solve without evaluations (the fixpoint in the first phase): the record stays
        // on the device, classified there if the driver asks (`recorded_moves`), copied
        // only if it does not; its tops need no count.
        let left_on_device = recording && run.finished && self.phases == 0;
        if recording && !left_on_device {
            let download = Instant::now();
            self.lifted_tops += count_top(values).saturating_sub(top_before);
            self.download_seconds += download.elapsed().as_secs_f64();
        }
        if left_on_device {
            self.record_on_device = true;
        } else if let Some(topping) = topping.filter(|_| recording && run.finished) {
            let download = Instant::now();
            // A record of 4 bytes per vertex pays only where lifting topped a good part of
            // the game (the evaluations' ranks and the layered construction cover the rest
            // for less than the copy).
            if self.lifted_tops * RECORD_FROM_TOP_SHARE >= values.len() {
                self.copy_record(arena, topping, threads)?;
            }
            self.download_seconds += download.elapsed().as_secs_f64();
        }
        tracing::debug!(
            seconds = begin.elapsed().as_secs_f64(),
            before,
            engine = engine_seconds,
            kernels = run.timings.solve,
            download = run.timings.download,
            lifts = run.lifts,
            finished = run.finished,
            "gpu: lifting phase"
        );
        self.phases += 1;
        self.launches += run.launches;
        self.seconds += begin.elapsed().as_secs_f64();
        self.download_seconds += run.timings.download;
        Ok(LiftRun {
            lifts: run.lifts,
            rounds: run.rounds,
            finished: run.finished,
            tail: None,
        })
    }
    fn searches(&mut self) -> Option<&mut dyn EngineSearches> {
        Some(self)
    }
}

impl EngineSearches for GpuLift {
    fn player0_moves(&mut self) -> Result<Option<Vec<VertexId>>, SolveError> {
        // The device pays an n-word download, the host a pass over player 0's edges: on an
        // H100 with 16 cores, random games of degree 4 took 1.5 ms on the device against 10
        // on the host, BRP (1.16 edges per vertex) 8 against 2.6 (session 10's device logs, in git history under notes/gpu).
        // Measured again in warm service jobs on the H200 host (session 65, staged
        // downloads, warm jobs): BRP 1.6–8.7 ms on the device (5 of 10 over 4) against
        // 2.3–3.3 on the host (one 5.3), Hesselink (1.97 per vertex) 0.35–3.4 against
        // 0.34–0.59 (one 2.9): the device's is faster at best and far slower at worst, so
        // the threshold stays.
        let (n, m) = self.engine.size();
        if (m as u64) < DEVICE_MOVES_FROM_DEGREE * n as u64 {
            return Ok(None);
        }
        Ok(self.engine.player0_moves()?)
    }

    fn recorded_moves(
        &mut self,
        arena: &Arena,
        topping: &Topping,
        evaluated: bool,
        threads: &Threads,
    ) -> Result<Option<RecordedMoves>, SolveError> {
        // A copy of 4 bytes per vertex and a pass over them on the host against a pass on
        // the device, moves and roots back (Hesselink's reduction, H200 host: 1.9 ms of
        // copying and filling the record and 2.1 ms of the host's pass, session 62).
        if !std::mem::take(&mut self.record_on_device) {
            return Ok(None);
        }
        let start = Instant::now();
        let room = self.moves_room.take().and_then(Prefaulted::take);
        let recorded = match evaluated {
            false => self.engine.recorded_moves(room.unwrap_or_default())?,
            true => None,
        };
        if recorded.is_none() {
            self.copy_record(arena, topping, threads)?;
        }
        self.download_seconds += start.elapsed().as_secs_f64();
        Ok(recorded)
    }

    fn player1_edges(&mut self) -> Result<Option<Vec<u32>>, SolveError> {
        // An n-word download against the host's pass over player 1's edges (random reads
        // of the values: 12 ms on random p50 with 16 cores): where the device evaluates.
        if !self.evaluates_on_device(self.engine.size().0 as usize) {
            return Ok(None);
        }
        Ok(self.engine.player1_edges()?)
    }

    fn start_components(
        &mut self,
        keeps: &[VertexId],
        sigma_edge: &[u32],
    ) -> Result<bool, SolveError> {
        if !self.evaluates_on_device(keeps.len()) {
            return Ok(false);
        }
        let now = Instant::now();
        let started = self.engine.start_components(keeps, Some(sigma_edge))?;
        self.components_started = started.then_some(now);
        Ok(started)
    }

    fn finish_components(&mut self) -> Result<Option<EngineComponents>, SolveError> {
        let found = self.engine.finish_components()?;
        let figures = self.engine.component_figures();
        let seconds = self
            .components_started
            .take()
            .map_or(0.0, |start| start.elapsed().as_secs_f64());
        tracing::debug!(
            seconds,
            sweeps = figures.sweeps,
            colourings = figures.colourings,
            trimmed = figures.trimmed,
            giant = figures.giant,
            left = figures.left,
            tries = figures.tries,
            done = found.is_some(),
            witness = found.as_ref().is_some_and(|f| f.witness.is_some()),
            giant = found.as_ref().and_then(|f| f.giant),
            "gpu: components"
        );
        self.component_launches += 1;
        if found.is_none() {
            self.component_fallbacks += 1;
        }
        Ok(found.map(|f| EngineComponents {
            representatives: f.representatives,
            witness: f.giant.zip(f.witness),
        }))
    }

    fn reaching(
        &mut self,
        keeps: &[VertexId],
        sources: &[u8],
    ) -> Result<Option<Vec<bool>>, SolveError> {
        let start = Instant::now();
        let reach = self.engine.reaching(keeps, sources)?;
        self.count_search("reachability", start, reach.is_some());
        Ok(reach.map(|bytes| {
            // Inside the driver, so on the solve's pool.
            chunked::map(bytes.len(), |v| bytes[v] != 0)
        }))
    }

    fn attract_top(&mut self) -> Result<Option<EngineAttracted>, SolveError> {
        let start = Instant::now();
        let attracted = self.engine.attract_top()?;
        self.count_search("the attractor to ⊤", start, attracted.is_some());
        Ok(attracted)
    }

    fn credits_to_pinned(
        &mut self,
        keeps: &[VertexId],
        sigma_edge: &[u32],
        class: &[u8],
        bound: u64,
    ) -> Result<Option<Vec<u64>>, SolveError> {
        debug_assert_eq!(bound, self.engine.bound(), "the engine holds this game");
        let start = Instant::now();
        let credits = self.engine.credits_to_pinned(keeps, sigma_edge, class)?;
        self.count_search("Bellman–Ford", start, credits.is_some());
        Ok(credits)
    }
}

/// Solves `arena` (bound `bound`, already uploaded in `engine`) with the accelerated
/// driver around the device; returns the solution (backend `gpu`) and the driver's and
/// engine's figures.
pub fn solve(
    arena: &Arena,
    engine: GpuEngine,
    options: &GpuOptions,
    control: &Control,
) -> Result<(egsolve_core::solve::Solution, accel::AccelStats, GpuLift), SolveError> {
    let mut lift = GpuLift::new(engine, options);
    // The driver runs inside this engine's pool (`started_threads`), its downloads too.
    let (solution, stats) = accel::solve_with(arena, &mut lift, control)?;
    Ok((solution, stats, lift))
}
