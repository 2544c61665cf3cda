//! The learned tangles: for each, its player, its vertices with the player's moves, and its
//! escapes (the vertices outside it that the opponent can move to); plus an index from each
//! vertex to the tangles it is an escape of. The store is part of the state two searches
//! share (a tangle is valid whoever found it); the attraction counters belong to each
//! search ([`Counter`]).
//!
//! Members and escapes live in flat arrays that only grow (a solve learns tangles by the
//! thousand on some games, and two `Vec`s per tangle would be two allocations each). The
//! index is one list per vertex, read front to back whenever the vertex joins a set (the
//! hottest loop of the recursive learner), from which dead tangles — those that lost a
//! vertex to a solved dominion — are dropped as they are met.

use std::collections::HashMap;

/// What every search needs to know of one tangle at each touch.
#[derive(Debug, Clone, Copy)]
pub struct TangleState {
    /// The player that wins the tangle's cycles (the parity of its top priority).
    pub player: u8,
    /// Whether the tangle is still in the game.
    pub alive: bool,
}

/// A search's attraction counter for one tangle: escapes still open, valid where `stamp`
/// is the running attractor's stamp (see [`super`]). Each search keeps its own, as
/// the tangles themselves may be shared by two searches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counter {
    /// The attractor stamp the count is valid for.
    pub stamp: u32,
    /// Escapes still open.
    pub count: u32,
}

/// The tangle store.
#[derive(Debug, Default)]
pub struct Tangles {
    /// Per tangle.
    pub state: Vec<TangleState>,
    /// Tangle `t`'s vertices are `members[member_start[t]..member_start[t + 1]]`, each with
    /// the player's move inside the tangle (or `NO_MOVE` for the opponent's vertices).
    member_start: Vec<u32>,
    members: Vec<(u32, u32)>,
    /// Tangle `t`'s escapes are `escapes[escape_start[t]..escape_start[t + 1]]`.
    escape_start: Vec<u32>,
    escapes: Vec<u32>,
    /// For each vertex, the tangles it is an escape of.
    pub index: Vec<Vec<u32>>,
    /// Per tangle, its escapes not yet solved (kept up to date for the live tangles as
    /// dominions are solved): what a flat decomposition's counter starts from.
    pub unsolved_escapes: Vec<u32>,
    /// Tangles by a hash of their vertex set (the recursive search can meet a tangle again
    /// in a subgame where nothing attracts it; it is kept once).
    by_hash: HashMap<u64, u32>,
}

impl Tangles {
    /// An empty store for a game of `n` vertices.
    pub fn new(n: usize) -> Tangles {
        Tangles {
            member_start: vec![0],
            escape_start: vec![0],
            index: vec![Vec::new(); n],
            ..Tangles::default()
        }
    }

    /// The number of tangles learned (dead ones included).
    pub fn len(&self) -> usize {
        self.state.len()
    }

    /// Whether none were learned.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// Adds a tangle of `player` with `members` (vertex, move) and `escapes`, unless a
    /// tangle with the same vertices is known; `is_member` tells the new tangle's vertices.
    /// Returns whether it was added.
    pub fn add(
        &mut self,
        player: u8,
        members: &[(u32, u32)],
        escapes: &[u32],
        is_member: impl Fn(u32) -> bool,
    ) -> bool {
        let hash = set_hash(members.iter().map(|m| m.0));
        if let Some(&old) = self.by_hash.get(&hash) {
            let same = self.members(old).len() == members.len()
                && self.members(old).iter().all(|m| is_member(m.0));
            if same {
                return false;
            }
        }
        let t = self.state.len() as u32;
        self.by_hash.insert(hash, t);
        self.state.push(TangleState {
            player,
            alive: true,
        });
        self.members.extend_from_slice(members);
        self.member_start.push(self.members.len() as u32);
        self.escapes.extend_from_slice(escapes);
        self.escape_start.push(self.escapes.len() as u32);
        self.unsolved_escapes.push(escapes.len() as u32);
        for &e in escapes {
            self.index[e as usize].push(t);
        }
        true
    }

    /// Tangle `t`'s vertices and moves.
    #[inline]
    pub fn members(&self, t: u32) -> &[(u32, u32)] {
        &self.members[self.member_range(t)]
    }

    /// Where tangle `t`'s members are (for [`Tangles::member`]).
    #[inline]
    pub fn member_range(&self, t: u32) -> std::ops::Range<usize> {
        let t = t as usize;
        self.member_start[t] as usize..self.member_start[t + 1] as usize
    }

    /// The member at position `i` (in some [`Tangles::member_range`]).
    #[inline]
    pub fn member(&self, i: usize) -> (u32, u32) {
        self.members[i]
    }

    /// Tangle `t`'s escapes.
    #[inline]
    pub fn escapes(&self, t: u32) -> &[u32] {
        let t = t as usize;
        &self.escapes[self.escape_start[t] as usize..self.escape_start[t + 1] as usize]
    }
}

/// An order-independent hash of a vertex set (a sum of mixed ids).
fn set_hash(vertices: impl Iterator<Item = u32>) -> u64 {
    let mut sum: u64 = 0;
    let mut len: u64 = 0;
    for v in vertices {
        let mut x = u64::from(v).wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        sum = sum.wrapping_add(x ^ (x >> 31));
        len += 1;
    }
    sum ^ len.wrapping_mul(0xff51_afd7_ed55_8ccd)
}
