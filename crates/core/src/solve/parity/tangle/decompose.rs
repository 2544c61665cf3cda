//! The region decomposition that both tangle learners run, on an explicit stack of
//! contexts so that it can stop at any region and resume (the portfolio's time slices) and
//! nest as deep as it needs (recursive tangle learning on games of 10^5 priorities).
//!
//! A *context* is a set of vertices decomposed top down: the highest priority left and the
//! lower priorities of its parity down to the next vertex of the other parity are the
//! heads of a region, the region is their attractor in what is left (tangles included),
//! and so on until nothing is left. A region is *closed* when its player's heads can stay
//! in it and the opponent's heads cannot leave it into what is left; from a closed region,
//! every strongly connected part of the graph restricted to the player's moves is a tangle
//! (all its cycles meet a head, or lie in an attracted tangle), and a tangle with no
//! escapes is a dominion. Flat tangle learning decomposes the unsolved game only;
//! recursive tangle learning also decomposes, inside every region, what is left after
//! removing its open heads (or, when it is closed, its top head) with the opponent's
//! attractor, and learns the tangles of those subgames too.

use super::{Mode, Search, Universe};
use crate::solve::NO_MOVE;
use crate::solve::parity::pace::{Pacer, Stop};

/// What a decomposition found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A dominion, now solved (the unsolved list must be rebuilt).
    Dominion,
    /// New tangles and no dominion.
    Learned,
    /// Nothing new.
    Nothing,
}

/// Why [`Search::analyze`] ended a decomposition.
enum Ended {
    /// A dominion was solved.
    Dominion,
    /// The run must end for good ([`Search::poll`]).
    Halted(Stop),
}

impl From<Stop> for Ended {
    fn from(stop: Stop) -> Ended {
        Ended::Halted(stop)
    }
}

/// One open context of a decomposition (a frame of the recursion).
#[derive(Debug)]
pub(super) struct Frame {
    /// The context id (see the parent module's doc).
    id: u32,
    depth: u32,
    /// The context's vertices by decreasing priority, and the next one to look at.
    members: Vec<u32>,
    cursor: usize,
    /// Whether the next region of each player is its first (at depth 0 only).
    first: [bool; 2],
    /// Whether this context or a nested one learned a tangle.
    learned: bool,
    /// The current region: its id, player, vertices and heads.
    zone: u32,
    player: u8,
    zone_list: Vec<u32>,
    heads: Vec<u32>,
    /// Whether the current region is computed and waits to be analyzed.
    analyze: bool,
}

impl Search<'_> {
    /// One decomposition of the unsolved game in `mode`. Stopped by the pacer (a time
    /// slice, a cancel), it keeps its place: the next call resumes it, unless a dominion
    /// was solved meanwhile (by another search on the same shared state), which voids it.
    /// A suspended decomposition resumes only in its own mode.
    /// A search halted inside a step (a cancel, the deadline, a lost race: see
    /// [`crate::solve::parity::pace`]) is never run again.
    pub fn iterate(&mut self, mode: Mode, pacer: &mut Pacer<'_>) -> Result<(), Stop> {
        if self.halted {
            return Err(Stop::Broken(
                "a search halted inside a step is not run again",
            ));
        }
        self.halt = pacer.halt();
        if !self.frames.is_empty() && self.epoch != self.shared.dominions {
            self.abandon();
        }
        if !self.frames.is_empty() && self.tangles_seen != self.shared.tangles.len() {
            // Another search learned tangles while this decomposition was suspended; it
            // may now find only tangles that are known.
            self.foreign = true;
        }
        if self.frames.is_empty() {
            self.epoch = self.shared.dominions;
            self.foreign = false;
            if self.next_id > u32::MAX / 2 {
                self.reset_ids();
            }
            self.mode = mode;
            self.shared.stats.iterations += 1;
            let mut members = self.buffer();
            members.extend_from_slice(&self.shared.unsolved);
            self.open_context(members, 0);
        }
        if self.mode != mode {
            return Err(Stop::Broken("a cut decomposition resumes in its own mode"));
        }
        let outcome = self.decompose(pacer);
        self.tangles_seen = self.shared.tangles.len();
        let outcome = outcome?;
        if self.shared.dirty {
            self.shared.dirty = false;
            let solved = &self.shared.solved;
            self.shared.unsolved.retain(|&v| !solved[v as usize]);
        }
        match outcome {
            Outcome::Dominion | Outcome::Learned => Ok(()),
            Outcome::Nothing if self.foreign => Ok(()),
            // The lowest region of the game is closed and has a cycle, so every full
            // decomposition of the game learns a tangle or finds a dominion.
            Outcome::Nothing => Err(Stop::Broken(
                "every full decomposition learns a tangle or solves a dominion",
            )),
        }
    }

    /// Drops the running decomposition (its buffers go back to the pool).
    fn abandon(&mut self) {
        while let Some(frame) = self.frames.pop() {
            self.close(frame);
        }
    }

    /// Starts a context on `members` (in decreasing order of priority) at `depth`.
    fn open_context(&mut self, members: Vec<u32>, depth: u32) {
        let id = self.fresh();
        for &v in &members {
            self.cells[v as usize].ctx = id;
        }
        // Setting the context up, and the scans for the next head.
        self.work += 2 * members.len() as u64;
        let frame = Frame {
            id,
            // The first region of each player in the unsolved game: when closed, it is a
            // dominion (the opponent's escapes could only lead to the opponent's own
            // regions above, whose attractors would have taken the escaping vertices).
            first: [depth == 0; 2],
            depth,
            members,
            cursor: 0,
            learned: false,
            zone: 0,
            player: 0,
            zone_list: self.buffer(),
            heads: self.buffer(),
            analyze: false,
        };
        self.frames.push(frame);
    }

    /// Runs the open contexts (innermost first) until the outermost one is done, a dominion
    /// is solved, or the pacer stops it (then the frames keep their place), or a step
    /// halts (then they are dropped).
    fn decompose(&mut self, pacer: &mut Pacer<'_>) -> Result<Outcome, Stop> {
        loop {
            let Some(mut frame) = self.frames.pop() else {
                return Err(Stop::Broken("a running decomposition has an open context"));
            };
            if !frame.analyze {
                let found = match self.next_region(&mut frame) {
                    Ok(found) => found,
                    Err(stop) => return Err(self.halted_in(frame, stop)),
                };
                if !found {
                    let outcome = if frame.learned {
                        Outcome::Learned
                    } else {
                        Outcome::Nothing
                    };
                    self.close(frame);
                    match self.frames.last_mut() {
                        None => return Ok(outcome),
                        Some(parent) => parent.learned |= outcome == Outcome::Learned,
                    }
                    continue;
                }
                frame.analyze = true;
                let work = self.take_work();
                self.shared.stats.work += work;
                let spent = pacer.spend(work);
                let ids_left = self.ids_left();
                self.frames.push(frame);
                spent?;
                if !ids_left {
                    self.abandon();
                    return Err(Stop::Exhausted("region ids in one decomposition"));
                }
                continue;
            }
            frame.analyze = false;
            let child = match self.analyze(&mut frame) {
                Ok(child) => child,
                Err(Ended::Dominion) => {
                    self.close(frame);
                    self.abandon();
                    return Ok(Outcome::Dominion);
                }
                Err(Ended::Halted(stop)) => return Err(self.halted_in(frame, stop)),
            };
            let depth = frame.depth;
            self.frames.push(frame);
            if let Some(rest) = child {
                self.open_context(rest, depth + 1);
            }
        }
    }

    /// A step of `frame` halted with `stop`: the work done so far is counted, and the
    /// decomposition dropped (the search is not run again).
    fn halted_in(&mut self, frame: Frame, stop: Stop) -> Stop {
        let work = self.take_work();
        self.shared.stats.work += work;
        self.close(frame);
        self.abandon();
        stop
    }

    /// Gives a finished context's buffers back.
    fn close(&mut self, frame: Frame) {
        self.give_back(frame.members);
        self.give_back(frame.zone_list);
        self.give_back(frame.heads);
    }

    /// Computes the next region of `frame`'s context (its heads' attractor, tangles
    /// included); false when nothing is left. `Err` when the run must end for good.
    fn next_region(&mut self, frame: &mut Frame) -> Result<bool, Stop> {
        let game = self.game;
        let id = frame.id;
        let members = &frame.members;
        while frame.cursor < members.len()
            && self.cells[members[frame.cursor] as usize].region >= id
        {
            frame.cursor += 1;
        }
        let Some(&top) = members.get(frame.cursor) else {
            return Ok(false);
        };
        self.shared.stats.regions += 1;
        let universe = Universe::Context { id };
        let player = game.parity(top);
        let zone = self.fresh();
        frame.zone = zone;
        frame.player = player;
        frame.zone_list.clear();
        frame.heads.clear();
        while let Some(&v) = members.get(frame.cursor) {
            if self.cells[v as usize].region >= id {
                frame.cursor += 1;
                continue;
            }
            if game.parity(v) != player {
                break;
            }
            frame.heads.push(v);
            let from = frame.zone_list.len();
            self.join(universe, zone, player, id, v, NO_MOVE, &mut frame.zone_list);
            self.attract(universe, zone, player, id, &mut frame.zone_list, from)?;
            frame.cursor += 1;
        }
        // The region's own bookkeeping (ids, buffers, the checks after it) besides the
        // attractor's edge scans.
        self.work += 2 * frame.zone_list.len() as u64 + 16;
        Ok(true)
    }

    /// After `frame`'s region is computed: checks whether it is closed; solves it or
    /// learns its tangles; in recursive mode, returns the rest of the region (without its
    /// open heads, or its top head, and what the opponent attracts to them) to decompose
    /// next. `Err` when a dominion was solved, or the run must end for good.
    fn analyze(&mut self, frame: &mut Frame) -> Result<Option<Vec<u32>>, Ended> {
        let game = self.game;
        let universe = Universe::Context { id: frame.id };
        let (zone, player) = (frame.zone, frame.player);
        let lowest = frame.cursor == frame.members.len();
        let mut open = self.buffer();
        if !lowest {
            for &h in &frame.heads {
                let leaks = if game.owner_of(h) == player {
                    self.moves[h as usize] == NO_MOVE
                } else {
                    game.successors(h)
                        .iter()
                        .any(|&w| self.available(universe, w))
                };
                if leaks {
                    open.push(h);
                }
            }
        }
        let was_first = std::mem::replace(&mut frame.first[player as usize], false);
        if open.is_empty() {
            if was_first {
                self.give_back(open);
                self.solve_dominion(&mut frame.zone_list, zone, player)?;
                return Err(Ended::Dominion);
            }
            let mut dominion = self.buffer();
            frame.learned |= self.extract(&frame.heads, zone, player, &mut dominion)?;
            if let Some(&first) = dominion.first() {
                let dominion_zone = self.cells[first as usize].region;
                self.solve_dominion(&mut dominion, dominion_zone, player)?;
                self.give_back(dominion);
                self.give_back(open);
                return Err(Ended::Dominion);
            }
            self.give_back(dominion);
            if self.mode == Mode::Recursive {
                open.extend(frame.heads.first());
            }
        }
        if self.mode != Mode::Recursive || open.is_empty() {
            self.give_back(open);
            return Ok(None);
        }
        let removed = self.fresh();
        let removal = Universe::Removal {
            region: zone,
            removed,
        };
        let stamp = self.fresh();
        for &h in &open {
            self.cells[h as usize].region = removed;
        }
        self.attract(removal, removed, 1 - player, stamp, &mut open, 0)?;
        self.give_back(open);
        let mut rest = self.buffer();
        rest.extend(
            frame
                .zone_list
                .iter()
                .copied()
                .filter(|&v| self.cells[v as usize].region == zone),
        );
        if rest.is_empty() {
            self.give_back(rest);
            return Ok(None);
        }
        self.work += 2 * rest.len() as u64;
        rest.sort_unstable_by_key(|&v| std::cmp::Reverse((game.priority[v as usize], v)));
        Ok(Some(rest))
    }
}
