//! The solver's per-vertex state, packed into one 16-byte cell per vertex: an attractor
//! touches a vertex through one cache line (region, owner, winner, counter and strategy
//! together), which is what the solver's time goes to on games larger than the caches.
//!
//! The counter is one `AtomicU64`: the attractor call number in the high half, the
//! remaining count of ways out (or [`CLAIMED`]) in the low half. A call number older than
//! the calls whose counts are still valid means "not touched yet", so no pass resets it;
//! see [`super::attractor`] for when counts stay valid.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::arena::{Player, VertexId};
use crate::solve::NO_MOVE;

/// Region bits of a tag; the region of a vertex in the innermost game that no frame has
/// attracted yet is all ones.
const REGION: u32 = (1 << 30) - 1;
/// `region` of a free vertex (see [`State::region`]).
pub const FREE: u32 = REGION;
const OWNER_BIT: u32 = 1 << 30;
const WINNER_SHIFT: u32 = 31;
/// Low half of a counter word: the vertex joined the set in that call.
const CLAIMED: u32 = u32::MAX;

/// One vertex's state.
#[derive(Debug)]
#[repr(C, align(16))]
struct Cell {
    /// Attractor call number (high half) and remaining ways out or [`CLAIMED`] (low half).
    counter: AtomicU64,
    /// Region (30 bits), owner (bit 30), winner (bit 31).
    tag: AtomicU32,
    /// The winner's move where the winner owns the vertex, else [`NO_MOVE`].
    strategy: AtomicU32,
}

/// The per-vertex state of a solve. Sequential code uses plain loads and stores (which
/// compile to ordinary moves); parallel rounds use read-modify-writes on the counter only,
/// and a vertex's tag and strategy are written only by the thread that claimed it.
#[derive(Debug)]
pub struct State {
    cells: Box<[Cell]>,
}

impl State {
    /// Every vertex free, won by player 0 until decided, no move.
    pub fn new(owner: &[Player]) -> State {
        State {
            cells: owner
                .iter()
                .map(|&p| Cell {
                    counter: AtomicU64::new(0),
                    tag: AtomicU32::new(FREE | if p == Player::One { OWNER_BIT } else { 0 }),
                    strategy: AtomicU32::new(NO_MOVE),
                })
                .collect(),
        }
    }

    /// The largest frame id (ids must stay below [`FREE`]).
    pub const MAX_FRAME: u32 = FREE - 1;

    #[inline]
    fn tag(&self, v: VertexId) -> u32 {
        self.cells[v as usize].tag.load(Relaxed)
    }

    /// The frame that attracted `v` ([`FREE`] while it is in the innermost game and not
    /// attracted). Frame ids grow with creation, so the game of frame `r` is the vertices
    /// whose region is `>= r`.
    #[inline]
    pub fn region(&self, v: VertexId) -> u32 {
        self.tag(v) & REGION
    }

    /// Region, owner and winner of `v` at once.
    #[inline]
    pub fn view(&self, v: VertexId) -> (u32, u8, u8) {
        let tag = self.tag(v);
        (
            tag & REGION,
            u8::from(tag & OWNER_BIT != 0),
            (tag >> WINNER_SHIFT) as u8,
        )
    }

    /// Who wins `v` in the game of the frame that last decided it (0 or 1).
    #[inline]
    pub fn winner(&self, v: VertexId) -> u8 {
        (self.tag(v) >> WINNER_SHIFT) as u8
    }

    /// The winner's move at `v`, if the winner owns it.
    #[inline]
    pub fn strategy(&self, v: VertexId) -> u32 {
        self.cells[v as usize].strategy.load(Relaxed)
    }

    /// Sets the region of `v`.
    #[inline]
    pub fn set_region(&self, v: VertexId, region: u32) {
        let cell = &self.cells[v as usize].tag;
        cell.store((cell.load(Relaxed) & !REGION) | region, Relaxed);
    }

    /// Sets the winner of `v`.
    #[inline]
    pub fn set_winner(&self, v: VertexId, winner: u8) {
        let cell = &self.cells[v as usize].tag;
        let tag = cell.load(Relaxed) & !(1 << WINNER_SHIFT);
        cell.store(tag | u32::from(winner) << WINNER_SHIFT, Relaxed);
    }

    /// Sets the move of `v`.
    #[inline]
    pub fn set_strategy(&self, v: VertexId, successor: u32) {
        self.cells[v as usize].strategy.store(successor, Relaxed);
    }

    /// Records that `v` joined region `region`, won by `winner`, moving to `successor`.
    #[inline]
    pub fn settle(&self, v: VertexId, region: u32, winner: u8, successor: u32) {
        let cell = &self.cells[v as usize];
        let owner = cell.tag.load(Relaxed) & OWNER_BIT;
        cell.tag
            .store(region | owner | u32::from(winner) << WINNER_SHIFT, Relaxed);
        cell.strategy.store(successor, Relaxed);
    }

    /// Marks `v` as in the set of `call` (heads and direct claims, one writer).
    #[inline]
    pub fn mark_claimed(&self, v: VertexId, call: u32) {
        self.cells[v as usize]
            .counter
            .store(claimed_word(call), Relaxed);
    }

    /// Sets `v`'s counter in `call` to `remaining` (> 0; one writer).
    #[inline]
    pub fn set_remaining(&self, v: VertexId, call: u32, remaining: u32) {
        self.cells[v as usize]
            .counter
            .store(u64::from(call) << 32 | u64::from(remaining), Relaxed);
    }

    /// A vertex of the attracting player reached through an edge: whether it joins now
    /// (false if it already had). Parallel-safe through one atomic maximum, the claimed word
    /// being the largest of its call.
    #[inline]
    pub fn touch_own(&self, v: VertexId, call: u32, parallel: bool) -> bool {
        let word = claimed_word(call);
        let cell = &self.cells[v as usize].counter;
        let before = if parallel {
            cell.fetch_max(word, Relaxed)
        } else {
            let before = cell.load(Relaxed);
            cell.store(word.max(before), Relaxed);
            before
        };
        before != word
    }

    /// A vertex of the other player reached through an edge: one way out less; whether it
    /// joins now (none left). A counter of a call in `valid_from..call` is taken over (its
    /// count is still right, see [`super::attractor`]); older ones are recounted with
    /// `ways_out`, which must give the ways out at the start of the valid calls.
    #[inline]
    pub fn touch_other(
        &self,
        v: VertexId,
        call: u32,
        valid_from: u32,
        parallel: bool,
        ways_out: impl Fn() -> u32,
    ) -> bool {
        let cell = &self.cells[v as usize].counter;
        let mut word = cell.load(Relaxed);
        let mut counted: Option<u32> = None;
        loop {
            let stamp = (word >> 32) as u32;
            let left = if stamp >= valid_from && stamp <= call && stamp != 0 {
                match word as u32 {
                    CLAIMED => return false,
                    remaining => remaining.saturating_sub(1),
                }
            } else {
                counted.get_or_insert_with(&ways_out).saturating_sub(1)
            };
            let new = if left == 0 {
                claimed_word(call)
            } else {
                u64::from(call) << 32 | u64::from(left)
            };
            if !parallel {
                cell.store(new, Relaxed);
            } else if let Err(current) = cell.compare_exchange_weak(word, new, Relaxed, Relaxed) {
                word = current;
                continue;
            }
            return left == 0;
        }
    }
}

/// The counter word of a vertex claimed in `call`.
#[inline]
fn claimed_word(call: u32) -> u64 {
    u64::from(call) << 32 | u64::from(CLAIMED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_keep_owner_winner_and_region_apart() {
        let state = State::new(&[Player::One, Player::Zero]);
        assert_eq!(state.view(0), (FREE, 1, 0));
        state.settle(0, 7, 1, 1);
        assert_eq!(state.view(0), (7, 1, 1));
        assert_eq!(state.strategy(0), 1);
        state.set_winner(0, 0);
        state.set_region(0, FREE);
        assert_eq!(state.view(0), (FREE, 1, 0));
        assert_eq!(state.view(1), (FREE, 0, 0));
    }

    #[test]
    fn counters_count_down_and_carry_over_valid_calls() {
        let state = State::new(&[Player::Zero]);
        // Call 3 counts 2 ways out; the second touch claims.
        assert!(!state.touch_other(0, 3, 3, false, || 2));
        assert!(state.touch_other(0, 3, 3, false, || unreachable!()));
        assert!(!state.touch_other(0, 3, 3, false, || unreachable!()));
        // Call 5 with counts valid from 4: call 3's counter is stale and recounted.
        assert!(!state.touch_other(0, 5, 4, true, || 3));
        // Call 6 takes over call 5's count (2 left).
        assert!(!state.touch_other(0, 6, 4, true, || unreachable!()));
        assert!(state.touch_other(0, 6, 4, false, || unreachable!()));
        // Own-player claims: once per call.
        assert!(state.touch_own(0, 7, true));
        assert!(!state.touch_own(0, 7, false));
        assert!(state.touch_own(0, 8, false));
    }
}
