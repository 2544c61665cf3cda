//! Tangle extraction (van Dijk, CAV 2018, §4): the cyclic strongly connected parts of a
//! closed region, restricted to its player's moves, become tangles, or a dominion when
//! nothing escapes them. The components come from [`crate::graph::tarjan::SccFinder`]
//! (Tarjan's algorithm with arrays kept between calls, so one closed region costs what it
//! holds).

use super::Search;
use crate::solve::NO_MOVE;
use crate::solve::parity::pace::Stop;

impl Search<'_> {
    /// Extracts the tangles of the closed region `zone` of `player`: the cyclic strongly
    /// connected components reached from its heads. Components without escapes go to
    /// `dominion` (their vertices get a fresh region id); returns whether a tangle was
    /// learned. `Err` when the run must end for good (looked at between components; the
    /// component search itself runs whole).
    pub(super) fn extract(
        &mut self,
        heads: &[u32],
        zone: u32,
        player: u8,
        dominion: &mut Vec<u32>,
    ) -> Result<bool, Stop> {
        let game = self.game;
        self.components.vertices.clear();
        self.components.ends.clear();
        let mut visited = 0u64;
        {
            let (moves, cells, found) = (&self.moves, &self.cells, &mut self.components);
            // Within the region: the player's vertices follow their move, the opponent's
            // every edge.
            let edges = |v: u32| -> &[u32] {
                if game.owner_of(v) == player {
                    let chosen = &moves[v as usize];
                    if *chosen == NO_MOVE {
                        &[]
                    } else {
                        std::slice::from_ref(chosen)
                    }
                } else {
                    game.successors(v)
                }
            };
            let keep = |w: u32| cells[w as usize].region == zone;
            self.scc
                .run(heads.iter().copied(), edges, keep, |component, cyclic| {
                    visited += component.len() as u64;
                    if cyclic {
                        found.vertices.extend_from_slice(component);
                        found.ends.push(found.vertices.len() as u32);
                    }
                });
        }
        // Tarjan's visits: every visited vertex ends up in a component.
        self.work += 3 * visited;
        let dominion_zone = self.fresh();
        let mut learned = false;
        let components = std::mem::take(&mut self.components);
        let mut start = 0;
        for &end in &components.ends {
            if let Err(stop) = self.poll() {
                self.components = components;
                return Err(stop);
            }
            let component = &components.vertices[start..end as usize];
            start = end as usize;
            self.work += 4 * component.len() as u64 + 16;
            let inside = self.fresh();
            let seen = self.fresh();
            self.members.clear();
            self.escapes.clear();
            for &v in component {
                self.mark[v as usize] = inside;
                let mv = if game.owner_of(v) == player {
                    self.moves[v as usize]
                } else {
                    NO_MOVE
                };
                self.members.push((v, mv));
            }
            for &v in component {
                if game.owner_of(v) == player {
                    continue;
                }
                for &w in game.successors(v) {
                    let wi = w as usize;
                    if self.shared.solved[wi]
                        || self.mark[wi] == inside
                        || self.mark[wi] == seen
                        || self.cells[wi].region == dominion_zone
                    {
                        continue;
                    }
                    self.mark[wi] = seen;
                    self.escapes.push(w);
                }
            }
            if self.escapes.is_empty() {
                for &v in component {
                    self.cells[v as usize].region = dominion_zone;
                }
                dominion.extend_from_slice(component);
                continue;
            }
            let mark = &self.mark;
            if self
                .shared
                .tangles
                .add(player, &self.members, &self.escapes, |v| {
                    mark[v as usize] == inside
                })
            {
                self.shared.stats.tangles += 1;
                learned = true;
            }
        }
        self.components = components;
        Ok(learned)
    }
}
