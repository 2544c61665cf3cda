//! Attractors of the tangle search, with tangle attraction (van Dijk, CAV 2018, §4), in
//! the three sets they run in ([`Universe`]: a context's unassigned vertices, a region
//! being cut down, the unsolved game), and the solving of a dominion's attractor.
//!
//! A vertex of the attracting player joins on one edge into the set; an opponent vertex
//! when its counter of ways out (successor entries, so parallel edges count on both sides)
//! reaches zero; a tangle of the attracting player when every escape of it has joined and
//! all its vertices may join (then they join with the tangle's moves).

use super::super::controlled::Presolved;
use super::store::Counter;
use super::{Mode, Search, Universe};
use crate::solve::NO_MOVE;
use crate::solve::parity::pace::Stop;

impl Search<'_> {
    /// Whether `w` may still join a set in `universe`.
    #[inline]
    pub(super) fn available(&self, universe: Universe, w: u32) -> bool {
        let w = w as usize;
        match universe {
            Universe::Context { id } => self.cells[w].ctx == id && self.cells[w].region < id,
            Universe::Removal { region, .. } => self.cells[w].region == region,
            Universe::Unsolved { dominion } => {
                !self.shared.solved[w] && self.cells[w].region != dominion
            }
        }
    }

    /// Whether `w` is in `universe` at all (joined or not).
    #[inline]
    pub(super) fn inside(&self, universe: Universe, w: u32) -> bool {
        let w = w as usize;
        match universe {
            Universe::Context { id } => self.cells[w].ctx == id,
            Universe::Removal { region, removed } => {
                self.cells[w].region == region || self.cells[w].region == removed
            }
            Universe::Unsolved { .. } => !self.shared.solved[w],
        }
    }

    /// Adds `x` to the set `zone` with move `mv`, queues it, and touches the tangles it is
    /// an escape of. Most vertices escape no tangle: that case stays inline, the touching
    /// is a call of its own.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn join(
        &mut self,
        universe: Universe,
        zone: u32,
        player: u8,
        stamp: u32,
        x: u32,
        mv: u32,
        queue: &mut Vec<u32>,
    ) {
        self.cells[x as usize].region = zone;
        self.moves[x as usize] = mv;
        queue.push(x);
        if !self.shared.tangles.index[x as usize].is_empty() {
            self.touch_tangles(universe, player, stamp, x);
        }
    }

    /// Counts down the attraction counters of the tangles `x` is an escape of, now that it
    /// joined a set of `player` in `universe` (the running attractor's `stamp`), and drops
    /// dead tangles from its index; queues the tangles left without escapes in `pending`.
    #[inline(never)]
    fn touch_tangles(&mut self, universe: Universe, player: u8, stamp: u32, x: u32) {
        let mut list = std::mem::take(&mut self.shared.tangles.index[x as usize]);
        self.work += list.len() as u64;
        // Nested contexts (recursive mode) overwrite counters, and other universes do not
        // join every vertex through here: there the first touch counts the open escapes.
        let flat = self.mode == Mode::Flat && matches!(universe, Universe::Context { .. });
        let mut kept = 0;
        for k in 0..list.len() {
            let t = list[k];
            let state = self.shared.tangles.state[t as usize];
            if !state.alive {
                continue;
            }
            list[kept] = t;
            kept += 1;
            if t as usize >= self.counters.len() {
                self.counters
                    .resize(self.shared.tangles.len(), Counter::default());
            }
            let counter = self.counters[t as usize];
            if state.player != player {
                // An escape in a set of the other player: the opponent vertex with that edge
                // joins the set too (or is not available), so `t` cannot be attracted
                // anywhere in this universe any more.
                self.counters[t as usize] = Counter { stamp, count: 0 };
                continue;
            }
            let left = if counter.stamp != stamp && flat {
                // A flat decomposition's context is the unsolved game and every escape
                // joins through here, so the first touch is by the first escape to join:
                // the others are all open.
                self.shared.tangles.unsolved_escapes[t as usize] - 1
            } else if counter.stamp != stamp {
                let escapes = self.shared.tangles.escapes(t);
                let open = escapes
                    .iter()
                    .filter(|&&w| self.available(universe, w))
                    .count();
                self.work += escapes.len() as u64;
                open as u32
            } else if counter.count > 0 {
                counter.count - 1
            } else {
                continue;
            };
            self.counters[t as usize] = Counter { stamp, count: left };
            if left == 0 {
                self.pending.push(t);
            }
        }
        list.truncate(kept);
        self.shared.tangles.index[x as usize] = list;
    }

    /// Closes the set `zone` of `player` under attraction in `universe`: processes
    /// `queue[from..]` and everything that joins, and the tangles that become attractable.
    /// `Err` when the run must end for good ([`Search::poll`]; the set is then partial).
    pub(super) fn attract(
        &mut self,
        universe: Universe,
        zone: u32,
        player: u8,
        stamp: u32,
        queue: &mut Vec<u32>,
        mut from: usize,
    ) -> Result<(), Stop> {
        let game = self.game;
        loop {
            while from < queue.len() {
                self.poll()?;
                let v = queue[from];
                from += 1;
                let preds = game.predecessors(v);
                self.work += preds.len() as u64;
                for &x in preds {
                    let xi = x as usize;
                    if self.cells[xi].region == zone {
                        // A head of the player that had no move into the set yet.
                        if game.owner_of(x) == player && self.moves[xi] == NO_MOVE {
                            self.moves[xi] = v;
                        }
                        continue;
                    }
                    if !self.available(universe, x) {
                        continue;
                    }
                    if game.owner_of(x) == player {
                        self.join(universe, zone, player, stamp, x, v, queue);
                        continue;
                    }
                    if self.cells[xi].count_stamp != stamp {
                        self.cells[xi].count_stamp = stamp;
                        let succ = game.successors(x);
                        let inside = succ.iter().filter(|&&w| self.inside(universe, w)).count();
                        self.work += succ.len() as u64;
                        self.cells[xi].count = inside as u32;
                    }
                    self.cells[xi].count -= 1;
                    if self.cells[xi].count == 0 {
                        self.join(universe, zone, player, stamp, x, NO_MOVE, queue);
                    }
                }
            }
            let Some(t) = self.pending.pop() else {
                return Ok(());
            };
            self.attract_tangle(universe, zone, player, stamp, t, queue);
        }
    }

    /// Attracts tangle `t` (whose escapes are all gone) when all its vertices are in the
    /// set or may join it, and at least one is not in yet.
    pub(super) fn attract_tangle(
        &mut self,
        universe: Universe,
        zone: u32,
        player: u8,
        stamp: u32,
        t: u32,
        queue: &mut Vec<u32>,
    ) {
        if !self.shared.tangles.state[t as usize].alive {
            return;
        }
        let range = self.shared.tangles.member_range(t);
        self.work += range.len() as u64;
        let mut new = false;
        for i in range.clone() {
            let (v, _) = self.shared.tangles.member(i);
            if self.shared.solved[v as usize] {
                self.shared.tangles.state[t as usize].alive = false;
                return;
            }
            if self.cells[v as usize].region == zone {
                continue;
            }
            if !self.available(universe, v) {
                return;
            }
            new = true;
        }
        if !new {
            return;
        }
        for i in range {
            let (v, mv) = self.shared.tangles.member(i);
            if self.cells[v as usize].region != zone {
                self.join(universe, zone, player, stamp, v, mv, queue);
            }
        }
    }

    /// `player` wins `seed` (vertices in set `zone`, with moves): solves its attractor in
    /// the unsolved game (tangles included). `Err` as [`Search::attract`] says.
    pub(super) fn solve_dominion(
        &mut self,
        seed: &mut Vec<u32>,
        zone: u32,
        player: u8,
    ) -> Result<(), Stop> {
        self.shared.stats.dominions += 1;
        self.shared.dominions += 1;
        self.shared.dirty = true;
        let stamp = self.fresh();
        let universe = Universe::Unsolved { dominion: zone };
        for &v in seed.iter() {
            self.cells[v as usize].region = zone;
        }
        self.pending.clear();
        self.attract(universe, zone, player, stamp, seed, 0)?;
        for &v in seed.iter() {
            let vi = v as usize;
            for &t in &self.shared.tangles.index[vi] {
                let open = &mut self.shared.tangles.unsolved_escapes[t as usize];
                *open = open.saturating_sub(1);
            }
            self.shared.solved[vi] = true;
            self.shared.winner[vi] = player;
            self.shared.strategy[vi] = if self.game.owner_of(v) == player {
                self.moves[vi]
            } else {
                NO_MOVE
            };
        }
        Ok(())
    }

    /// Takes as solved what was solved before the search started (the portfolio's
    /// winner-controlled cycles and their attractors, `super::super::controlled`): a set
    /// closed under both players' attractors in the whole game, so nothing more is
    /// attracted here. `dominions` is how many dominions that was, for the counts.
    pub fn adopt(&mut self, presolved: &Presolved) {
        if presolved.count == 0 {
            // Nothing solved (and the arrays left empty).
            return;
        }
        self.shared.solved.clone_from(&presolved.solved);
        self.shared.winner.clone_from(&presolved.winner);
        self.shared.strategy.clone_from(&presolved.strategy);
        self.shared.stats.dominions += presolved.dominions;
        self.shared.dominions += presolved.dominions;
        let solved = &self.shared.solved;
        self.shared.unsolved.retain(|&v| !solved[v as usize]);
    }
}
