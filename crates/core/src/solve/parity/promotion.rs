//! Priority promotion (Benerecetti, Dell'Erba, Mogavero, "Solving parity games via priority
//! promotion", CAV 2016 / FMSD 2018), the basic algorithm (no region recovery, no delayed
//! promotion).
//!
//! Every unsolved vertex has a *region priority* `r(v) >= pr(v)`, initially its own
//! priority. The search works top down: at the current priority `p` (player `α = p mod 2`),
//! the region of `p` becomes `α`'s attractor to it in the subgame `H_p = {r <= p}`. If the
//! region is *open* there (an `α` vertex of it cannot stay in it, or an opponent vertex can
//! leave it into `H_p`), the search goes down to the highest region priority left below.
//! If it is *closed*, the opponent can only escape it to higher regions, which are `α`'s
//! (an opponent region above would have attracted an escaping vertex): without escapes it is
//! an `α` dominion; else it is *promoted* to the lowest region it escapes to — merged into
//! it — all regions below that one are reset to their vertices' own priorities, and the
//! search resumes there. A dominion's attractor is solved, and the search restarts on what
//! is left.
//!
//! Strategies: attracted `α` vertices move to the vertex that attracted them, region
//! members keep the move they had while it stays inside the region (a promoted region keeps
//! its own winning moves), and the rest get a move into the region. A play that stays in a
//! region forever either meets its top priority forever or ends in a promoted subregion,
//! which wins by induction.
//!
//! The priorities' vertices come from [`Buckets`] (the game is not renumbered).

use super::graph::{Buckets, Graph};
use super::pace::{Pacer, Stop};
use crate::arena::VertexId;
use crate::solve::NO_MOVE;

/// What a solve found: winners, the winners' moves ([`NO_MOVE`] where the loser owns the
/// vertex), and the number of dominions solved (the searches run).
#[derive(Debug)]
pub struct Solved {
    /// Each vertex's winner (0 or 1).
    pub winner: Vec<u8>,
    /// Each vertex's winning move ([`crate::solve::NO_MOVE`] where its owner loses).
    pub strategy: Vec<u32>,
    /// Dominions solved (searches run).
    pub dominions: u64,
}

/// Solves `game` by priority promotion.
pub fn solve(game: Graph<'_>, pacer: &mut Pacer<'_>) -> Result<Solved, Stop> {
    let buckets = Buckets::new(game.priority);
    let mut solver = Promotion::new(game, &buckets);
    solver.run(pacer)?;
    Ok(Solved {
        winner: solver.winner,
        strategy: solver.strategy,
        dominions: solver.dominions,
    })
}

struct Promotion<'a> {
    game: Graph<'a>,
    buckets: &'a Buckets,
    solved: Vec<bool>,
    winner: Vec<u8>,
    strategy: Vec<u32>,
    /// Region priority of each vertex.
    region: Vec<u32>,
    /// The members of region `q` with a lower own priority (promoted or attracted ones).
    raised: Vec<Vec<VertexId>>,
    /// Attractor counters and membership stamps.
    count_stamp: Vec<u32>,
    count: Vec<u32>,
    stamp: u32,
    /// Scratch: the region being computed.
    set: Vec<VertexId>,
    work: u64,
    total_work: u64,
    dominions: u64,
}

impl<'a> Promotion<'a> {
    fn new(game: Graph<'a>, buckets: &'a Buckets) -> Promotion<'a> {
        let n = game.vertex_count();
        Promotion {
            game,
            buckets,
            solved: vec![false; n],
            winner: vec![0; n],
            strategy: vec![NO_MOVE; n],
            region: game.priority.to_vec(),
            raised: vec![Vec::new(); buckets.levels()],
            count_stamp: vec![0; n],
            count: vec![0; n],
            stamp: 0,
            set: Vec::new(),
            work: 0,
            total_work: 0,
            dominions: 0,
        }
    }

    /// A fresh attractor stamp (the counters are cleared when the stamps run out).
    fn next_stamp(&mut self) {
        if self.stamp == u32::MAX {
            self.count_stamp.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
    }

    /// The highest priority below `p` with an unsolved vertex still in its own region
    /// (regions below the current one are always in their reset state).
    fn next_below(&self, p: u32) -> Option<u32> {
        (0..p).rev().find(|&q| {
            self.buckets
                .of(q)
                .iter()
                .any(|&v| !self.solved[v as usize] && self.region[v as usize] == q)
        })
    }

    /// Hands the work since the last call to the pacer.
    fn spend(&mut self, pacer: &mut Pacer<'_>) -> Result<(), Stop> {
        let work = std::mem::take(&mut self.work) + 1;
        self.total_work += work;
        pacer.spend(work)
    }

    fn run(&mut self, pacer: &mut Pacer<'_>) -> Result<(), Stop> {
        let mut top = self.buckets.top().map(|p| p + 1);
        let mut left = self.game.vertex_count() as u64;
        while let Some(limit) = top {
            let Some(p) = self.next_below(limit) else {
                break;
            };
            let (dominion, player) = self.search(p, pacer)?;
            left -= self.solve_dominion(dominion, player) as u64;
            self.dominions += 1;
            pacer.round(self.dominions, left, self.total_work)?;
            // Restart: every region back to its vertices' own priorities (only raised
            // vertices have another).
            for q in 0..self.raised.len() {
                let mut raised = std::mem::take(&mut self.raised[q]);
                for &v in &raised {
                    self.region[v as usize] = self.game.priority[v as usize];
                }
                raised.clear();
                self.raised[q] = raised;
            }
            top = Some(p + 1);
        }
        Ok(())
    }

    /// Searches from priority `p` (the highest unsolved one) until a dominion is found;
    /// returns it and its winner.
    fn search(&mut self, mut p: u32, pacer: &mut Pacer<'_>) -> Result<(Vec<VertexId>, u8), Stop> {
        let game = self.game;
        let buckets = self.buckets;
        loop {
            let player = (p % 2) as u8;
            self.attract_region(p);
            self.spend(pacer)?;
            let (open, escape) = self.closed_or_escape(p, player);
            if open {
                match self.next_below(p) {
                    Some(q) => {
                        p = q;
                        continue;
                    }
                    // The lowest region is closed: every vertex of it has a successor, and
                    // the opponent's leave only upwards.
                    None => return Err(Stop::Broken("the lowest region is closed")),
                }
            }
            let Some(target) = escape else {
                return Ok((std::mem::take(&mut self.set), player));
            };
            // Promote the region to `target` and reset everything below `target`.
            for q in 0..target {
                let raised = std::mem::take(&mut self.raised[q as usize]);
                for &v in &raised {
                    if self.region[v as usize] == q {
                        self.region[v as usize] = game.priority[v as usize];
                    }
                }
                self.raised[q as usize] = raised;
                self.raised[q as usize].clear();
                for &v in buckets.of(q) {
                    if self.region[v as usize] < target {
                        self.region[v as usize] = q;
                    }
                }
            }
            for i in 0..self.set.len() {
                let v = self.set[i];
                self.region[v as usize] = target;
                self.raised[target as usize].push(v);
            }
            p = target;
        }
    }

    /// Whether region `p` (in `set`) is open — a member of `player` with no move into the
    /// region, or an opponent member with an edge to a lower region (attracted vertices are
    /// never either) — and else the lowest region above it that the opponent escapes to.
    /// Members of `player` whose move left the region get one that stays.
    fn closed_or_escape(&mut self, p: u32, player: u8) -> (bool, Option<u32>) {
        let game = self.game;
        let mut escape: Option<u32> = None;
        self.work += self.set.len() as u64;
        for i in 0..self.set.len() {
            let v = self.set[i];
            let vi = v as usize;
            if game.owner_of(v) == player {
                let s = self.strategy[vi];
                if s == NO_MOVE || self.solved[s as usize] || self.region[s as usize] != p {
                    let stay = game
                        .successors(v)
                        .iter()
                        .copied()
                        .find(|&w| !self.solved[w as usize] && self.region[w as usize] == p);
                    match stay {
                        Some(w) => self.strategy[vi] = w,
                        None => return (true, None),
                    }
                }
            } else {
                for &w in game.successors(v) {
                    let wi = w as usize;
                    if self.solved[wi] {
                        continue;
                    }
                    let r = self.region[wi];
                    if r < p {
                        return (true, None);
                    }
                    if r > p {
                        escape = Some(escape.map_or(r, |e| e.min(r)));
                    }
                }
            }
        }
        (false, escape)
    }

    /// Makes region `p` its player's attractor to it in `{r <= p}`; leaves its members in
    /// `set` (the region's earlier members first).
    fn attract_region(&mut self, p: u32) {
        let game = self.game;
        let player = (p % 2) as u8;
        self.next_stamp();
        let stamp = self.stamp;
        self.set.clear();
        for &v in self.buckets.of(p) {
            if !self.solved[v as usize] && self.region[v as usize] == p {
                self.set.push(v);
            }
        }
        let raised = std::mem::take(&mut self.raised[p as usize]);
        self.set.extend_from_slice(&raised);
        self.raised[p as usize] = raised;
        let mut next = 0;
        while next < self.set.len() {
            let u = self.set[next];
            next += 1;
            let preds = game.predecessors(u);
            self.work += preds.len() as u64;
            for &x in preds {
                let xi = x as usize;
                if self.solved[xi] || self.region[xi] >= p {
                    continue;
                }
                if game.owner_of(x) != player {
                    if self.count_stamp[xi] != stamp {
                        self.count_stamp[xi] = stamp;
                        let succ = game.successors(x);
                        self.work += succ.len() as u64;
                        self.count[xi] = succ
                            .iter()
                            .filter(|&&w| !self.solved[w as usize] && self.region[w as usize] <= p)
                            .count() as u32;
                    }
                    self.count[xi] -= 1;
                    if self.count[xi] > 0 {
                        continue;
                    }
                    self.strategy[xi] = NO_MOVE;
                } else {
                    self.strategy[xi] = u;
                }
                self.region[xi] = p;
                self.raised[p as usize].push(x);
                self.set.push(x);
            }
        }
    }

    /// Solves `player`'s attractor to the dominion `seed` in the unsolved game; returns the
    /// number of vertices solved.
    fn solve_dominion(&mut self, mut seed: Vec<VertexId>, player: u8) -> usize {
        let game = self.game;
        self.next_stamp();
        let stamp = self.stamp;
        // Membership: count_stamp == stamp and count == u32::MAX.
        for &v in &seed {
            self.count_stamp[v as usize] = stamp;
            self.count[v as usize] = u32::MAX;
        }
        let in_set = |s: &Self, w: VertexId| {
            s.count_stamp[w as usize] == stamp && s.count[w as usize] == u32::MAX
        };
        let mut next = 0;
        while next < seed.len() {
            let u = seed[next];
            next += 1;
            for &x in game.predecessors(u) {
                let xi = x as usize;
                if self.solved[xi] || in_set(self, x) {
                    continue;
                }
                if game.owner_of(x) != player {
                    if self.count_stamp[xi] != stamp {
                        self.count_stamp[xi] = stamp;
                        self.count[xi] = game
                            .successors(x)
                            .iter()
                            .filter(|&&w| !self.solved[w as usize])
                            .count() as u32;
                    }
                    self.count[xi] -= 1;
                    if self.count[xi] > 0 {
                        continue;
                    }
                    self.strategy[xi] = NO_MOVE;
                } else {
                    self.strategy[xi] = u;
                }
                self.count_stamp[xi] = stamp;
                self.count[xi] = u32::MAX;
                seed.push(x);
            }
        }
        for &v in &seed {
            let vi = v as usize;
            self.solved[vi] = true;
            self.winner[vi] = player;
            if game.owner_of(v) != player {
                self.strategy[vi] = NO_MOVE;
            }
        }
        self.work += seed.len() as u64;
        seed.len()
    }
}
