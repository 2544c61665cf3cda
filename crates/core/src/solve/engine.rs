//! The lifting engines' interface: what every engine must do ([`LiftEngine`]: lift from
//! a point below the least fixpoint, within a budget), the optional capability of an engine
//! that holds the game on a device ([`EngineSearches`]: an evaluation's searches where the
//! values are, with the words its answers use: [`LEFT_TO_HOST`], [`ALONE`], [`PINNED`] …),
//! how a phase's frontier closed in ([`FrontierTail`]), and the sequential worklist as an
//! engine ([`WorklistEngine`]). Every backend's engine implements it here, outside the
//! accelerated solver that drives them (`accel`), so the backends never import that.

use super::strategy::RecordedMoves;
use super::strategy::topping::Topping;
use crate::arena::{Arena, VertexId};
use crate::solve::SolveError;
use crate::solve::control::{Budget, Control};
use crate::solve::threads::Threads;
use crate::solve::worklist::{self, Primal};

/// The frontier (vertices still to lift) when a phase stopped, and `rounds` rounds earlier:
/// how fast lifting was closing in on the fixpoint (the accelerated driver lifts on
/// instead of evaluating when it was, `accel::phasing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontierTail {
    /// Vertices in the frontier when the phase stopped (at least 1).
    pub now: u64,
    /// … and `rounds` rounds before.
    pub earlier: u64,
    /// Rounds between the two (at least 1).
    pub rounds: u64,
}

impl FrontierTail {
    /// Lifts still to come if the frontier keeps shrinking by the same factor each round
    /// (a geometric tail: `now · q / (1 − q)`); `None` when it shrank by less than
    /// [`FrontierTail::CONVERGING`] a round (a game that climbs, whose frontier stays).
    pub fn lifts_left(&self) -> Option<f64> {
        if self.rounds == 0 || self.earlier == 0 || self.now == 0 {
            return None;
        }
        let q = (self.now as f64 / self.earlier as f64).powf(1.0 / self.rounds as f64);
        (q <= Self::CONVERGING).then(|| self.now as f64 * q / (1.0 - q))
    }

    /// The largest factor per round that counts as closing in (5 % fewer each round).
    pub const CONVERGING: f64 = 0.95;
}

/// A representative the engine left to the host (`u32::MAX - 1`, as `COMP_PENDING` of
/// `kernels/components.cu`).
pub const LEFT_TO_HOST: u32 = u32::MAX - 1;

/// Set in a vertex's representative (its own id then) when it is a component of its own
/// (`COMP_ALONE` of `kernels/components.cu`). Read only in arenas of fewer than
/// [`ALONE_MARKS_BELOW`] vertices, where no representative has the bit otherwise.
pub const ALONE: u32 = 1 << 31;

/// Arenas of at least this many vertices carry no [`ALONE`] marks (`v | ALONE` could be an
/// id, `NO_COMPONENT` or [`LEFT_TO_HOST`]).
pub const ALONE_MARKS_BELOW: usize = ALONE as usize - 2;

/// A vertex's class in the relaxation, one byte each where an engine relaxes on the device
/// ([`EngineSearches::credits_to_pinned`]; `kernels/evaluate.cu` reads the same
/// values, `accel::relax` relaxes on the host): not relaxed (⊤ unless pinned) …
pub const CLOSED: u8 = 0;
/// … relaxed through …
pub const OPEN: u8 = 1;
/// … or pinned at 0.
pub const PINNED: u8 = 2;

/// What one call of a lifting engine did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiftRun {
    /// Lifts applied.
    pub lifts: u64,
    /// Rounds (parallel engines) or 0.
    pub rounds: u64,
    /// Whether `values` is now the least fixpoint (no vertex can be lifted).
    pub finished: bool,
    /// How the frontier shrank over the last rounds of a phase that did not finish, where
    /// the engine lifts in rounds and says so (the CPU rounds); `None` otherwise.
    pub tail: Option<FrontierTail>,
}

/// What one [`LiftEngine::lift`] call works on: the game and its bound `M`, the record of
/// why vertices reach ⊤ (for an engine that [records](LiftEngine::records_topping) it), how
/// long it may run, the host's threads (for an engine that uses them) and the solve's
/// control. The values it lifts travel beside it, by `&mut`.
#[derive(Debug, Clone, Copy)]
pub struct LiftCall<'a> {
    /// The game.
    pub arena: &'a Arena,
    /// Its bound `M`.
    pub bound: u64,
    /// Where to record why a vertex reached ⊤.
    pub topping: Option<&'a Topping>,
    /// How long the phase may run.
    pub budget: Budget,
    /// The host's threads.
    pub threads: &'a Threads,
    /// Cancel, deadline and progress.
    pub control: &'a Control,
}

/// A lifting engine: raises `values` (pointwise below the least fixpoint `f*` on entry) by
/// lifting, within `budget` or until no vertex can be lifted. It must keep `values <= f*`
/// (any sequence of lifts does) and set `finished` only at the fixpoint. Errors other than
/// interruptions (a device failing, say) end the solve with that error.
pub trait LiftEngine: Send {
    /// Name for statistics.
    fn name(&self) -> &'static str;
    /// Threads the solve may use on the host (evaluations, strategies, the engine's own
    /// rounds): the sequential worklist one, the CPU engine its own, the GPU its host pool's
    /// (every core, or fewer beside a race's CPU side).
    fn threads(&self) -> usize {
        1
    }
    /// Work (vertices plus edges) from which the solve's host-side parts run in parallel.
    fn parallel_from(&self) -> usize {
        crate::solve::threads::PARALLEL_FROM_ITEMS
    }
    /// The threads the engine's caller already started for this solve, if any: the driver
    /// uses them instead of starting [`LiftEngine::threads`] of its own.
    fn started_threads(&self) -> Option<Threads> {
        None
    }
    /// A lifting phase's length as a fraction of the next evaluation's expected time.
    fn phase_ratio(&self) -> f64 {
        1.0
    }
    /// The game's bound `M`, if the engine already computed it (the device's upload needs
    /// it first); `None` and the driver sums it.
    fn known_bound(&self) -> Option<u64> {
        None
    }
    /// The driver's starting point, `n` zeros. An engine whose first lift never reads it
    /// (the GPU's, which clears its own copy on the device) returns an empty vector, which
    /// stands for `n` zeros until that lift replaces it with the `n` values it lifted to;
    /// the driver reads nothing before.
    fn zeros(&self, n: usize, threads: &Threads) -> Vec<u64> {
        threads.zeroed(n)
    }
    /// Whether [`LiftEngine::lift`] fills the `topping` record it is given (then the driver
    /// gives one, and player 1's strategy comes from it where it can).
    fn records_topping(&self) -> bool {
        false
    }
    /// The empty record the driver gives an engine that
    /// [records](LiftEngine::records_topping): its memory zeroed now by `threads`, for an
    /// engine that writes it as it lifts; an engine that fills it rarely (the GPU's) defers
    /// that ([`Topping::deferred`]).
    fn new_topping(&self, n: usize, threads: &Threads) -> Topping {
        Topping::new_on(n, threads)
    }
    /// Lifts `values` within `budget`, on `threads` where the engine uses the host's. An
    /// engine that [records](LiftEngine::records_topping) writes into `topping` why each
    /// vertex it raises to ⊤ got there ([`topping`](crate::solve::strategy::topping)), by the time it returns `finished`.
    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError>;
    /// The evaluation's searches this engine runs where its values are (the GPU crate's
    /// device engine), or `None`: the host runs every part of an evaluation.
    fn searches(&mut self) -> Option<&mut dyn EngineSearches> {
        None
    }
}

/// The optional capability of an engine that holds the game elsewhere (a device): parts
/// of an evaluation computed where the values are, each the host's answer exactly (only
/// the partition into components is used; the other parts are unique fixpoints or choices
/// made vertex for vertex as the host makes them). Each search may decline (`None` or
/// `false`) and leave its part to the host.
pub trait EngineSearches {
    /// Player 0's moves at the least fixpoint that the last [`LiftEngine::lift`] reached,
    /// computed where the values are (the device), or `None` to leave them to the host:
    /// the choice of [`crate::solve::strategy::player0`], vertex for vertex.
    fn player0_moves(&mut self) -> Result<Option<Vec<VertexId>>, SolveError> {
        Ok(None)
    }
    /// Player 1's recorded moves at the least fixpoint, classified where the values and the
    /// lifts' record are (the device): `strategy::RecordedMoves`, vertex for vertex as the
    /// host classifies `topping`, for a solve that never `evaluated`. `None` leaves them to
    /// the host, which reads `topping`: an engine that deferred copying its record into
    /// `topping` copies it before answering `None`. The driver asks only where player 1 wins
    /// somewhere (some value is ⊤; elsewhere the record is not read): an engine must not
    /// count on being asked.
    fn recorded_moves(
        &mut self,
        _arena: &Arena,
        _topping: &Topping,
        _evaluated: bool,
        _threads: &Threads,
    ) -> Result<Option<RecordedMoves>, SolveError> {
        Ok(None)
    }
    /// Player 1's strategy σ1 for the next evaluation, chosen where the values the last
    /// [`LiftEngine::lift`] returned are (the device): at every player-1 vertex with a finite
    /// value the edge `evaluate::choose_strategy` chooses, [`NO_EDGE`](crate::solve::strategy::NO_EDGE) at every other
    /// vertex (where the driver keeps the edge it had). `None` leaves it to the host.
    fn player1_edges(&mut self) -> Result<Option<Vec<u32>>, SolveError> {
        Ok(None)
    }
    /// Starts the strongly connected components of an evaluation's graph where the engine
    /// runs (the device), to be fetched by [`EngineSearches::finish_components`]: `keeps` holds
    /// one word per vertex, what it keeps in the graph (the words of `graph::Graph::keeps`),
    /// and `sigma_edge` σ1's edges (for a greedy witness of the largest component).
    /// `false` (nothing started) leaves them to the host.
    fn start_components(
        &mut self,
        _keeps: &[VertexId],
        _sigma_edge: &[u32],
    ) -> Result<bool, SolveError> {
        Ok(false)
    }
    /// The components started last, or `None` to leave them to the host after all.
    fn finish_components(&mut self) -> Result<Option<EngineComponents>, SolveError> {
        Ok(None)
    }
    /// Backward reachability in an evaluation's graph where the engine runs (the device),
    /// the answer of `reach::reaching`: whether each vertex has a path inside the graph whose
    /// words are `keeps` (as for [`EngineSearches::start_components`]) to a vertex with
    /// `sources[v] != 0` (sources lie inside the graph and reach themselves). `None` leaves
    /// it to the host.
    fn reaching(
        &mut self,
        _keeps: &[VertexId],
        _sources: &[u8],
    ) -> Result<Option<Vec<bool>>, SolveError> {
        Ok(None)
    }
    /// Player 1's attractor to ⊤ where the engine runs (the device), the layers of
    /// `attractor::attract_top`, right after [`EngineSearches::reaching`] answered: from the
    /// values the last lift left (the host's when the evaluation began) with every vertex
    /// that reachability did not reach at ⊤ (as the evaluation's first step leaves them).
    /// `None` leaves it to the host.
    fn attract_top(&mut self) -> Result<Option<EngineAttracted>, SolveError> {
        Ok(None)
    }
    /// The least credits to reach a pinned vertex where the engine runs (the device), the
    /// answer of `relax::credits_to_pinned`: in the graph whose words are `keeps`, with σ1's
    /// edges `sigma_edge` (read at [`OPEN`] vertices only), each vertex's `class` is
    /// [`PINNED`] (0), [`OPEN`] (relaxed) or [`CLOSED`] (⊤ unless pinned); values above
    /// `bound` are ⊤. `None` leaves it to the host.
    fn credits_to_pinned(
        &mut self,
        _keeps: &[VertexId],
        _sigma_edge: &[u32],
        _class: &[u8],
        _bound: u64,
    ) -> Result<Option<Vec<u64>>, SolveError> {
        Ok(None)
    }
}

/// Components an engine computed ([`EngineSearches::finish_components`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineComponents {
    /// Each vertex's representative: a member of its component, the same for all members
    /// (`u32::MAX` outside), or [`LEFT_TO_HOST`] at the vertices whose components the
    /// engine left to the host (whole components: every other vertex lies in a component
    /// the engine finished). A vertex that is a component of its own may say so with its id
    /// `| `[`ALONE`] (in arenas of fewer than [`ALONE_MARKS_BELOW`] vertices): the cycle test
    /// then answers it without grouping it.
    pub representatives: Vec<u32>,
    /// A component's representative and a member of a cycle of its greedy pointers (each
    /// member to its heaviest successor inside, the last of equal weights; σ1's edge for a
    /// player-1 member) that the engine summed to a weight `>= 0`; the host confirms it by
    /// summing it again before it counts.
    pub witness: Option<(VertexId, VertexId)>,
}

/// Player 1's attractor to ⊤ as an engine computed it ([`EngineSearches::attract_top`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineAttracted {
    /// Vertices it moved to ⊤ (layers 1 and above).
    pub moved: usize,
    /// One above the highest layer (1 when nothing moved).
    pub top_layers: u32,
    /// Each vertex's layer (0 at ⊤ before, `u32::MAX` still finite); empty when nothing
    /// moved.
    pub layer: Vec<u32>,
}

/// The sequential worklist of Algorithm 1 as an engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct WorklistEngine;

impl LiftEngine for WorklistEngine {
    fn name(&self) -> &'static str {
        "worklist"
    }
    fn records_topping(&self) -> bool {
        true
    }
    fn lift(&mut self, call: LiftCall<'_>, values: &mut Vec<u64>) -> Result<LiftRun, SolveError> {
        let start = std::mem::take(values);
        let game = Primal {
            arena: call.arena,
            bound: call.bound,
            topping: call.topping,
        };
        let (lifted, finished) = worklist::solve_budgeted(&game, start, call.budget, call.control)?;
        *values = lifted.values;
        Ok(LiftRun {
            lifts: lifted.lifts,
            rounds: 0,
            finished,
            tail: None,
        })
    }
}
