//! Zielonka's recursive algorithm, run on an explicit stack of frames (recursion depth
//! grows with the number of priorities, which can be in the hundreds of thousands).
//!
//! A frame solves the game of the vertices whose region is at least its id (see
//! [`super::attractor::State::region`]):
//! 1. **Attract**: `player` is the parity of the highest priority present; its vertices of
//!    that priority are the heads, and their `player`-attractor `A` is claimed. Lower
//!    priorities of the same parity join as heads while no vertex of the other parity lies
//!    between them outside `A` (attracting to the next parity inversion, as in Oink). What is
//!    left is the subgame, solved by a child frame.
//! 2. **After the subgame**: if the opponent won nothing there, `player` wins the whole
//!    game (a play that stays in the subgame is won there; one that visits `A` forever
//!    meets the heads forever). Otherwise the opponent's attractor to its winning region
//!    `W'` is computed. If it takes nothing of `A` or of `player`'s part, the answer stands
//!    as is (`player` wins `A` and its part, the opponent `W'`: a recursion on the rest
//!    would only return it). Else the opponent wins the attractor `B`, and the rest is
//!    solved by a second child frame.
//! 3. **After the second subgame**: `B` joins the opponent's winning region.
//!
//! The children hand back their answer in two lists, one per player ([`Won`]), that the
//! parent extends. Strategies: attractor moves for attracted vertices, the child's
//! strategies in its part, and any move staying in the region for `player`'s heads.

use super::attractor::{self, FREE, Graph, HeadsCall, Rounds, State};
use super::graph::Buckets;
use crate::arena::VertexId;
use crate::solve::{Control, NO_MOVE, SolveError};

/// The vertices each player won in the last completed frame.
type Won = [Vec<VertexId>; 2];

/// Where a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Attract,
    AfterSubgame,
    AfterSecondSubgame,
}

/// One call of the recursion.
#[derive(Debug)]
struct Frame {
    /// Its id: the region its attracted vertices get.
    id: u32,
    /// The highest priority of its game.
    top: u32,
    /// The parity of `top`: who attracts to the heads.
    player: u8,
    phase: Phase,
    /// `A` (the heads' attractor), or `B` (the opponent's) after the first subgame.
    region: Vec<VertexId>,
}

/// Counters of a run, for the summary and progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    /// Frames (recursive calls) run.
    pub frames: u64,
    /// Vertices claimed by attractors (heads included).
    pub attracted: u64,
}

/// The solver of one game.
pub struct Zielonka<'a> {
    graph: Graph<'a>,
    /// The per-vertex state (read by the caller once [`Zielonka::run`] returns).
    pub state: State,
    rounds: Rounds,
    buckets: Buckets,
    next_id: u32,
    next_call: u32,
    /// The first call of the current chain of first children (whose heads' counts stay
    /// valid, see [`super::attractor`]).
    chain_from: u32,
    counters: Counters,
    control: &'a Control,
}

impl<'a> Zielonka<'a> {
    /// A solver for `graph`, attracting in parallel rounds as `rounds` says.
    pub fn new(graph: Graph<'a>, rounds: Rounds, control: &'a Control) -> Zielonka<'a> {
        Zielonka {
            state: State::new(graph.owner),
            buckets: Buckets::new(graph.priority),
            graph,
            rounds,
            next_id: 0,
            next_call: 1,
            chain_from: 1,
            counters: Counters::default(),
            control,
        }
    }

    /// Solves the whole game: afterwards every vertex has its winner and, where the winner
    /// owns it, a winning move.
    pub fn run(&mut self) -> Result<Counters, SolveError> {
        let Some(top) = self.buckets.top() else {
            return Ok(self.counters);
        };
        let mut won: Won = [Vec::new(), Vec::new()];
        let mut spare: Vec<Vec<VertexId>> = Vec::new();
        let mut stack = vec![self.frame(top, Vec::new())?];
        while let Some(frame) = stack.last_mut() {
            self.control.checkpoint()?;
            self.control.progress().publish(
                self.counters.frames,
                frame.region.len() as u64,
                self.counters.attracted,
            );
            match frame.phase {
                Phase::Attract => {
                    self.counters.frames += 1;
                    let subgame = self.attract_heads(frame)?;
                    frame.phase = Phase::AfterSubgame;
                    if let Some(top) = subgame {
                        let child = self.frame(top, spare.pop().unwrap_or_default())?;
                        stack.push(child);
                    }
                }
                Phase::AfterSubgame => {
                    let (player, opponent) = (frame.player, 1 - frame.player);
                    let lost = if won[opponent as usize].is_empty() {
                        0
                    } else {
                        let call = self.call()?;
                        attractor::attract_opponent(
                            &self.graph,
                            &self.state,
                            &self.rounds,
                            call,
                            frame.id,
                            player,
                            &frame.region,
                            &mut won[opponent as usize],
                        )
                    };
                    self.counters.attracted += lost as u64;
                    if lost == 0 {
                        self.fix_strategies(frame);
                        won[player as usize].extend_from_slice(&frame.region);
                        Self::pop(&mut stack, &mut spare);
                        continue;
                    }
                    // `player` keeps what the opponent did not attract; that is solved again.
                    let mut top: Option<u32> = None;
                    for &v in frame.region.iter().chain(&won[player as usize]) {
                        if self.state.winner(v) == player {
                            self.state.set_region(v, FREE);
                            top = top.max(Some(self.graph.priority[v as usize]));
                        }
                    }
                    won[player as usize].clear();
                    frame.region.clear();
                    match top {
                        None => Self::pop(&mut stack, &mut spare),
                        Some(top) => {
                            std::mem::swap(&mut frame.region, &mut won[opponent as usize]);
                            frame.phase = Phase::AfterSecondSubgame;
                            self.chain_from = self.next_call;
                            let child = self.frame(top, spare.pop().unwrap_or_default())?;
                            stack.push(child);
                        }
                    }
                }
                Phase::AfterSecondSubgame => {
                    let opponent = 1 - frame.player;
                    won[opponent as usize].extend_from_slice(&frame.region);
                    Self::pop(&mut stack, &mut spare);
                }
            }
        }
        Ok(self.counters)
    }

    /// A new frame for the game of the free vertices, whose highest priority is `top`.
    fn frame(&mut self, top: u32, region: Vec<VertexId>) -> Result<Frame, SolveError> {
        let id = self.next_id;
        if id > State::MAX_FRAME {
            return Err(exhausted("frames"));
        }
        self.next_id += 1;
        Ok(Frame {
            id,
            top,
            player: (top % 2) as u8,
            phase: Phase::Attract,
            region,
        })
    }

    /// A fresh attractor call number.
    fn call(&mut self) -> Result<u32, SolveError> {
        let call = self.next_call;
        if call == u32::MAX {
            return Err(exhausted("attractor calls"));
        }
        self.next_call += 1;
        Ok(call)
    }

    fn pop(stack: &mut Vec<Frame>, spare: &mut Vec<Vec<VertexId>>) {
        if let Some(mut frame) = stack.pop() {
            frame.region.clear();
            spare.push(frame.region);
        }
    }

    /// Phase 1: claims the heads and their attractor into `frame.region`, down to the next
    /// parity inversion; returns the highest priority of the subgame left, if any.
    fn attract_heads(&mut self, frame: &mut Frame) -> Result<Option<u32>, SolveError> {
        let call = self.call()?;
        let player = frame.player;
        let mut p = frame.top;
        loop {
            let bucket = self.buckets.of(p);
            if (p % 2) as u8 == player {
                let from = frame.region.len();
                for &v in bucket {
                    if self.state.region(v) == FREE {
                        self.state.settle(v, frame.id, player, NO_MOVE);
                        self.state.mark_claimed(v, call);
                        frame.region.push(v);
                    }
                }
                if frame.region.len() > from {
                    let at = HeadsCall {
                        call,
                        valid_from: self.chain_from,
                        whole_game: self.chain_from == 1,
                        id: frame.id,
                        player,
                    };
                    attractor::attract_own(
                        &self.graph,
                        &self.state,
                        &self.rounds,
                        at,
                        &mut frame.region,
                        from,
                    );
                    self.counters.attracted += (frame.region.len() - from) as u64;
                }
            } else if bucket.iter().any(|&v| self.state.region(v) == FREE) {
                return Ok(Some(p));
            }
            if p == 0 {
                return Ok(None);
            }
            p -= 1;
        }
    }

    /// `player` won the frame's `A`: its heads (and any vertex whose attractor move left
    /// the winning region) get a move that stays in it.
    fn fix_strategies(&self, frame: &Frame) {
        let (graph, state, player) = (&self.graph, &self.state, frame.player);
        for &v in &frame.region {
            if state.view(v).1 != player {
                continue;
            }
            let current = state.strategy(v);
            if current != NO_MOVE && state.winner(current) == player {
                continue;
            }
            let stay = graph.successors(v).iter().copied().find(|&w| {
                let (region, _, winner) = state.view(w);
                region >= frame.id && winner == player
            });
            state.set_strategy(v, stay.unwrap_or(NO_MOVE));
        }
    }
}

fn exhausted(what: &str) -> SolveError {
    SolveError::Unavailable {
        backend: "parity",
        reason: format!("the game needs more than 4·10^9 {what}; the solver stops there"),
    }
}
