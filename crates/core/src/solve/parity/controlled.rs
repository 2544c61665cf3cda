//! Winner-controlled winning cycles: the dominions a player wins without the opponent ever
//! moving, found before the portfolio's searches start (Oink does the same before every
//! solver; on random games it leaves the searches little or nothing).
//!
//! A cycle whose vertices all belong to player α and whose top priority has α's parity is
//! won by α from each of its vertices: α moves along it forever and sees that top priority
//! infinitely often. Such cycles are found per player α on the subgraph of α's vertices
//! (edges between them only), by strongly connected components refined by priority:
//! - a component with a cycle whose top priority `q` has α's parity is an α-dominion: α
//!   moves each vertex one step closer to a vertex of priority `q` (a backward search inside
//!   the component), and that vertex to any successor inside it, so every play stays inside,
//!   sees `q` infinitely often and nothing above it;
//! - in a component whose top priority is the opponent's, a winning cycle avoids the
//!   top-priority vertices, so the search goes on in the components of the rest.
//!
//! Each vertex takes part in at most one search per priority below its component's top, so
//! the work is at most the game's size times the number of priorities, and far less on games
//! whose components break up quickly. The dominions of the two players are disjoint (each
//! vertex has one owner), and neither player can attract the other's.

use super::graph::Graph;
use crate::arena::VertexId;
use crate::graph::tarjan::SccFinder;

/// The vertices of winner-controlled winning cycles, each with its winner's move (every
/// listed vertex belongs to the player that wins it).
#[derive(Debug, Default)]
pub struct Controlled {
    /// Player 0's dominion: (vertex, move).
    pub even: Vec<(VertexId, VertexId)>,
    /// Player 1's dominion: (vertex, move).
    pub odd: Vec<(VertexId, VertexId)>,
}

impl Controlled {
    /// The dominion of `player` (0 or 1).
    pub fn of(&self, player: u8) -> &[(VertexId, VertexId)] {
        if player == 0 { &self.even } else { &self.odd }
    }

    /// The number of vertices found.
    pub fn len(&self) -> usize {
        self.even.len() + self.odd.len()
    }
}

/// Finds the winner-controlled winning cycles of `game` (see the module docs), with moves.
pub fn find(game: Graph<'_>) -> Controlled {
    let n = game.vertex_count();
    let mut search = Refinement {
        game,
        finder: SccFinder::new(n),
        set: vec![0; n],
        next_set: 0,
    };
    let mut found = Controlled::default();
    for player in [0u8, 1] {
        let own: Vec<VertexId> = (0..n as VertexId)
            .filter(|&v| game.owner_of(v) == player)
            .collect();
        let out = if player == 0 {
            &mut found.even
        } else {
            &mut found.odd
        };
        search.dominions(own, player, out);
    }
    found
}

/// The refinement's working state: a Tarjan search with reused arrays, and each vertex's
/// current set (the candidates of one search share a fresh number).
struct Refinement<'g> {
    game: Graph<'g>,
    finder: SccFinder,
    set: Vec<u32>,
    next_set: u32,
}

impl Refinement<'_> {
    /// Appends to `out` every winning cycle of `player` inside `candidates` (vertices of
    /// `player`), with moves.
    fn dominions(
        &mut self,
        candidates: Vec<VertexId>,
        player: u8,
        out: &mut Vec<(VertexId, VertexId)>,
    ) {
        let game = self.game;
        let mut pending = vec![candidates];
        while let Some(candidates) = pending.pop() {
            self.next_set += 1;
            let id = self.next_set;
            for &v in &candidates {
                self.set[v as usize] = id;
            }
            let set = &self.set;
            let mut won = Vec::new();
            self.finder.run(
                candidates.iter().copied(),
                |v| game.successors(v),
                |v| set[v as usize] == id,
                |component, cyclic| {
                    if !cyclic {
                        return;
                    }
                    let top = component
                        .iter()
                        .map(|&v| game.priority[v as usize])
                        .max()
                        .expect("a component has a vertex");
                    if top % 2 == u32::from(player) {
                        won.push((component.to_vec(), top));
                    } else {
                        let rest: Vec<VertexId> = component
                            .iter()
                            .copied()
                            .filter(|&v| game.priority[v as usize] < top)
                            .collect();
                        if rest.len() > 1 || rest.iter().any(|&v| self_loop(game, v)) {
                            pending.push(rest);
                        }
                    }
                },
            );
            for (component, top) in won {
                self.moves_inside(&component, top, out);
            }
        }
    }

    /// Each vertex of `component` (strongly connected, its top priority `top` its owner's)
    /// with a move one step closer to a top-priority vertex, and those vertices with a move
    /// inside the component.
    fn moves_inside(
        &mut self,
        component: &[VertexId],
        top: u32,
        out: &mut Vec<(VertexId, VertexId)>,
    ) {
        let game = self.game;
        self.next_set += 1;
        let inside = self.next_set;
        for &v in component {
            self.set[v as usize] = inside;
        }
        // Backward search from the top vertices inside the component; a vertex reached is
        // marked with a second fresh number.
        self.next_set += 1;
        let reached = self.next_set;
        let mut frontier: Vec<VertexId> = Vec::new();
        for &v in component {
            if game.priority[v as usize] == top {
                let next = game
                    .successors(v)
                    .iter()
                    .copied()
                    .find(|&u| matches!(self.set[u as usize], s if s == inside || s == reached))
                    .expect("a vertex of a cyclic component has a successor inside");
                out.push((v, next));
                self.set[v as usize] = reached;
                frontier.push(v);
            }
        }
        while let Some(u) = frontier.pop() {
            for &v in game.predecessors(u) {
                if self.set[v as usize] == inside {
                    self.set[v as usize] = reached;
                    out.push((v, u));
                    frontier.push(v);
                }
            }
        }
        debug_assert!(
            component.iter().all(|&v| self.set[v as usize] == reached),
            "a strongly connected component reaches its top from every vertex"
        );
    }
}

/// Whether `v` has an edge to itself.
fn self_loop(game: Graph<'_>, v: VertexId) -> bool {
    game.successors(v).contains(&v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{Arena, EdgeList, Player};

    fn game(owners: &[u8], edges: &[(u32, u32)]) -> Arena {
        let owners = owners
            .iter()
            .map(|&o| if o == 0 { Player::Zero } else { Player::One })
            .collect();
        let mut list = EdgeList::default();
        for &(s, t) in edges {
            list.push(s, t, 0);
        }
        Arena::from_edges(owners, list, None).expect("valid")
    }

    /// A cycle of player 0's vertices whose top priority is even is found with moves
    /// along it; one whose top is odd is not, but its even sub-cycle below that top is.
    #[test]
    fn finds_the_cycles_their_owners_win() {
        // 0 <-> 1 (priorities 2, 1): player 0 wins. 2 -> 3 -> 4 -> 2 and 3 -> 2 (priorities
        // 5, 4, 1): every cycle passes 2, whose 5 is odd, so none is player 0's. Player 1's
        // vertex 5 loops on itself at priority 3: player 1 wins it.
        let arena = game(
            &[0, 0, 0, 0, 0, 1],
            &[
                (0, 1),
                (1, 0),
                (2, 3),
                (3, 4),
                (4, 2),
                (3, 2),
                (5, 5),
                (5, 0),
            ],
        );
        let priority = [2, 1, 5, 4, 1, 3];
        let found = find(Graph::new(&arena, &priority));
        let mut even = found.even.clone();
        even.sort_unstable();
        assert_eq!(even, vec![(0, 1), (1, 0)], "{found:?}");
        assert_eq!(found.odd, vec![(5, 5)], "{found:?}");
    }

    /// Below an odd top, the even cycle that avoids it is found.
    #[test]
    fn looks_below_the_opponents_top() {
        // 0 (priority 3) -> 1 (2) -> 2 (1) -> 1, and 2 -> 0: the component tops at 3 (odd);
        // without vertex 0, 1 <-> 2 tops at 2 (even).
        let arena = game(&[0, 0, 0], &[(0, 1), (1, 2), (2, 1), (2, 0)]);
        let priority = [3, 2, 1];
        let found = find(Graph::new(&arena, &priority));
        let mut even = found.even.clone();
        even.sort_unstable();
        assert_eq!(even, vec![(1, 2), (2, 1)], "{found:?}");
        assert!(found.odd.is_empty());
    }

    /// Several vertices at the top priority, each with its only move to another: each keeps
    /// that move (the first one marked must not hide itself from the next).
    #[test]
    fn top_vertices_may_move_to_each_other() {
        let arena = game(&[0, 0, 0], &[(0, 1), (1, 0), (2, 0)]);
        let priority = [2, 2, 1];
        let mut even = find(Graph::new(&arena, &priority)).even;
        even.sort_unstable();
        assert_eq!(even, vec![(0, 1), (1, 0)]);
    }

    /// On random games, every vertex found is won by its owner as Zielonka says, and its
    /// move stays inside what was found.
    #[test]
    fn what_is_found_is_won_as_zielonka_says() {
        use crate::solve::Control;
        use crate::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
        for seed in [21u64, 22, 3] {
            let game = crate::generate::random_parity(10_000, 80, 3, seed).to_game();
            let view = game.parity.as_ref().expect("parity").view();
            let found = find(Graph::new(&game.arena, view.priorities));
            let options = ParityOptions::of(ParityAlgorithm::Zielonka, 1);
            let zielonka = solve_with(&game.arena, view.priorities, &options, &Control::new())
                .expect("solves");
            for player in [0u8, 1] {
                let listed: std::collections::HashSet<u32> =
                    found.of(player).iter().map(|&(v, _)| v).collect();
                for &(v, mv) in found.of(player) {
                    assert_eq!(
                        zielonka.winner(v).index(),
                        player,
                        "seed {seed}: vertex {v} (priority {}) found for player {player}",
                        view.priorities[v as usize]
                    );
                    assert!(listed.contains(&mv), "seed {seed}: {v} -> {mv} leaves");
                    assert!(game.arena.successors(v).any(|(u, _)| u == mv));
                }
            }
        }
    }
}
