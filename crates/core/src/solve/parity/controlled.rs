//! Winner-controlled winning cycles and their attractors: the dominions a player wins
//! without the opponent ever choosing, solved before the portfolio's searches start (Oink
//! does the same before every solver; on random games nothing is left for the searches).
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
//! whose components break up quickly.
//!
//! **[`presolve`]** runs this per player side by side, each on a compact copy
//! ([`super::induced`]) of what a parallel trim leaves (vertices with a way in and a way
//! out among the candidates), then each player's attractor in parallel rounds. While what
//! is left is small it repeats on it, where an opponent's vertex with one way left counts
//! as the player's: its other edges lead into what the attractors gave the player (an
//! edge of the opponent's into the opponent's region would have put it there), so
//! leaving the cycle loses too; one such vertex looping on itself is Oink's losing
//! self-loop. On a random game of 10^6 vertices and 100 priorities this answers every
//! vertex in 70–95 ms on 16 cores (Oink's preprocessor: 0.34–0.49 s on one).

use super::attractor::{self, HeadsCall, Rounds, State};
use super::graph::Graph;
use super::induced::Induced;
use crate::arena::VertexId;
use crate::graph::tarjan::SccFinder;
use crate::solve::chunked;
use crate::solve::{Control, Interrupted, NO_MOVE};

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

#[cfg(test)]
/// Finds the winner-controlled winning cycles of `game` (see the module docs), with moves;
/// the two players' searches run on two threads of the installed pool when `parallel`.
pub fn find(game: Graph<'_>, parallel: bool) -> Controlled {
    find_in(game, None, false, parallel, &Control::new())
}

/// [`find`] among the vertices `state` has not solved (region [`attractor::FREE`]). With
/// `forced`, an opponent's vertex with one way left in that game (one unsolved successor,
/// perhaps through parallel edges) may lie on a player's cycle too: its other edges lead
/// into what the attractors gave the player, so leaving the cycle there loses as well.
/// Once `control` is cancelled the searches stop at their next step and what they found is
/// partial (the caller checks `control`).
fn find_in(
    game: Graph<'_>,
    state: Option<&State>,
    forced: bool,
    parallel: bool,
    control: &Control,
) -> Controlled {
    // No state yet: nothing is solved.
    let free = |v: VertexId| state.is_none_or(|state| state.region(v) == attractor::FREE);
    let candidate = |v: VertexId, player: u8| {
        if !free(v) {
            return false;
        }
        if game.owner_of(v) == player {
            return true;
        }
        let mut left = game.successors(v).iter().copied().filter(|&u| free(u));
        if forced {
            let first = left.next();
            first.is_some() && left.all(|u| Some(u) == first)
        } else {
            // The opponent's vertices with no move but to themselves: cycles too.
            game.successors(v).iter().all(|&u| u == v)
        }
    };
    // Each player's steps in parallel too only where the pool has threads beyond the two
    // the players' searches take: on two, splitting them only adds wake-ups and steals
    // (build VM, counter-rr 20000: this step's median 5.3–8.4 → 4.3–5.9 ms; a random game
    // of 10^6 vertices and 100 priorities, whole process 1,144 → 1,100 ms).
    let inner = parallel && rayon::current_num_threads() > 2;
    let search = |player: u8| {
        let n = game.vertex_count();
        let candidates = vertices_where(n, inner, |v| candidate(v, player));
        let clock = std::time::Instant::now();
        let count = candidates.len();
        if control.is_cancelled() {
            return Vec::new();
        }
        let kept = trim(game, candidates, inner);
        let trim_ms = clock.elapsed().as_secs_f64() * 1e3;
        if control.is_cancelled() {
            return Vec::new();
        }
        let sub = Induced::new(game, kept, inner);
        let induce_ms = clock.elapsed().as_secs_f64() * 1e3 - trim_ms;
        let mut refinement = Refinement {
            finder: SccFinder::new(sub.len()),
            set: vec![0; sub.len()],
            next_set: 0,
            sub: &sub,
        };
        let mut out = Vec::new();
        refinement.dominions(player, &mut out, control);
        tracing::debug!(
            player,
            candidates = count,
            kept = sub.len(),
            found = out.len(),
            trim_ms,
            induce_ms,
            search_ms = clock.elapsed().as_secs_f64() * 1e3 - trim_ms - induce_ms,
            "parity: winner-controlled cycles of one player"
        );
        out
    };
    let (even, odd) = if parallel {
        chunked::join(|| search(0), || search(1))
    } else {
        (search(0), search(1))
    };
    Controlled { even, odd }
}

/// What the winner-controlled cycles and their attractors solved, before any search: per
/// vertex, whether it is solved, its winner and the winner's move ([`NO_MOVE`] where the
/// loser owns it). The three arrays are empty when nothing was solved.
#[derive(Debug)]
pub struct Presolved {
    /// Whether each vertex is solved (empty when none is).
    pub solved: Vec<bool>,
    /// Each solved vertex's winner.
    pub winner: Vec<u8>,
    /// Each solved vertex's winning move, or [`NO_MOVE`].
    pub strategy: Vec<u32>,
    /// The number of solved vertices.
    pub count: usize,
    /// Dominions solved (each player's cycles of one round count as one), for the
    /// searches' counts.
    pub dominions: u64,
    /// Rounds that found cycles.
    pub rounds: usize,
}

impl Presolved {
    /// Whether vertex `v` is solved.
    pub fn is_solved(&self, v: VertexId) -> bool {
        self.solved.get(v as usize).copied().unwrap_or(false)
    }
}

/// The most rounds of [`presolve`].
const MAX_ROUNDS: usize = 8;

/// The winner-controlled winning cycles of `game` and each player's attractor to them in
/// the whole game ([`find`], then [`attractor::attract_own`] in parallel rounds as `rounds`
/// allow), repeated on what is left while that is small (at most a sixteenth of the game,
/// [`MAX_ROUNDS`] rounds), where an opponent's vertex with one way left counts as forced
/// ([`find_in`]). In each round the two players' attractors are disjoint (what one can
/// force, the other cannot), so each runs on the unsolved game, one after the other; and
/// the unsolved game stays a trap for both, so the dominions of a later round are
/// dominions of the whole game.
///
/// A cancel of `control` is seen between the steps of the component searches (a few
/// milliseconds on games of millions of vertices) and between attractors: the race's CPU
/// side that lost to the GPU on BRP went on for 170–330 ms on the H200 host when nothing
/// here looked (session 53).
pub fn presolve(
    game: Graph<'_>,
    rounds: Rounds,
    control: &Control,
) -> Result<Presolved, Interrupted> {
    let n = game.vertex_count();
    // Made when the first cycles are found: on games with none (counter-rr 20000: 80,000
    // vertices) the state's 16 bytes a vertex and the answer's 6 were a fifth of the
    // presolve's fresh memory, each page a fault.
    let mut state: Option<State> = None;
    let mut dominions = 0;
    let mut call = 0;
    let mut rounds_run = 0;
    for round in 0..MAX_ROUNDS {
        let clock = std::time::Instant::now();
        let found = find_in(game, state.as_ref(), round > 0, rounds.parallel, control);
        control.checkpoint()?;
        let find_ms = clock.elapsed().as_secs_f64() * 1e3;
        if found.len() == 0 {
            break;
        }
        let state = &*state.get_or_insert_with(|| State::new(game.owner));
        rounds_run += 1;
        for player in [0u8, 1] {
            let seeds = found.of(player);
            if seeds.is_empty() {
                continue;
            }
            dominions += 1;
            call += 1;
            let mut set: Vec<VertexId> = Vec::with_capacity(seeds.len());
            // This round's region: above the earlier rounds', so the attractor's game
            // (regions from it up) is what they left.
            let id = round as u32 + 1;
            for &(v, mv) in seeds {
                state.settle(v, id, player, mv);
                set.push(v);
            }
            let at = HeadsCall {
                call,
                valid_from: call,
                // The first round's game is every vertex: ways out are out-degrees.
                whole_game: round == 0,
                id,
                player,
            };
            attractor::attract_own(&game, state, &rounds, at, &mut set, 0);
            control.checkpoint()?;
        }
        let left = vertices_where(n, rounds.parallel, |v| state.region(v) == attractor::FREE).len();
        tracing::debug!(
            round,
            found = found.len(),
            left,
            find_ms,
            attract_ms = clock.elapsed().as_secs_f64() * 1e3 - find_ms,
            "parity: winner-controlled cycles"
        );
        if left == 0 || left > n / 16 {
            break;
        }
    }
    let Some(state) = state else {
        return Ok(Presolved {
            solved: Vec::new(),
            winner: Vec::new(),
            strategy: Vec::new(),
            count: 0,
            dominions,
            rounds: rounds_run,
        });
    };
    // Per vertex: solved, winner, the winner's move.
    let answer = |v: VertexId| {
        if state.region(v) == attractor::FREE {
            return (false, 0, NO_MOVE);
        }
        let won_by = state.winner(v);
        let mv = if game.owner_of(v) == won_by {
            state.strategy(v)
        } else {
            NO_MOVE
        };
        (true, won_by, mv)
    };
    let (solved, (winner, strategy)): (Vec<bool>, (Vec<u8>, Vec<u32>)) = if rounds.parallel {
        let (solved, pairs): (Vec<bool>, Vec<(u8, u32)>) = chunked::map_pairs(n, |v| {
            let (s, w, m) = answer(v as VertexId);
            (s, (w, m))
        });
        (solved, pairs.into_iter().unzip())
    } else {
        (0..n as VertexId)
            .map(|v| {
                let (s, w, m) = answer(v);
                (s, (w, m))
            })
            .unzip()
    };
    let count = solved.iter().filter(|&&s| s).count();
    Ok(Presolved {
        solved,
        winner,
        strategy,
        count,
        dominions,
        rounds: rounds_run,
    })
}

/// The vertices where `keep` holds, ascending; in parallel when asked, each task scanning
/// a chunk of ids in a plain loop (for the reason `threads::positions_where` gives; on
/// counter-rr 20000 with two threads, 0.31–0.37 ms per player in 3 of 4 runs against
/// 0.59–0.60 for a parallel `filter` over the ids, of a presolve of 3–4 ms; session 53).
fn vertices_where(
    n: usize,
    parallel: bool,
    keep: impl Fn(VertexId) -> bool + Sync + Send,
) -> Vec<VertexId> {
    if parallel {
        chunked::positions(n, |v| keep(v as VertexId))
    } else {
        (0..n as VertexId).filter(|&v| keep(v)).collect()
    }
}

/// `candidates` (ascending) less the vertices that cannot lie on a cycle among them: those
/// with no successor or no predecessor left among them, dropped until none is left (the
/// classic trim of parallel SCC searches). Each candidate counts its ways in and out among
/// the candidates once; a dropped vertex takes one off each neighbour's count, and whoever
/// takes a count to zero drops that neighbour next, so the work is one pass over the
/// candidates' edges plus the dropped vertices' edges. In parallel rounds when asked;
/// what is left keeps its order. On random games it leaves a fifth of the candidates, and
/// the component search then runs on those alone.
fn trim(game: Graph<'_>, candidates: Vec<VertexId>, parallel: bool) -> Vec<VertexId> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    /// One way out, in the high half of a count word (ways in: the low half).
    const OUT: u64 = 1 << 32;
    let n = game.vertex_count();
    let mut inside = vec![false; n];
    for &v in &candidates {
        inside[v as usize] = true;
    }
    let inside = &inside[..];
    let counts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let counts = &counts[..];
    let among = |list: &[VertexId]| list.iter().filter(|&&u| inside[u as usize]).count() as u64;
    let dead = |word: u64| word >> 32 == 0 || word & (OUT - 1) == 0;
    let count = |v: VertexId| -> Option<VertexId> {
        let word = among(game.successors(v)) * OUT + among(game.predecessors(v));
        counts[v as usize].store(word, Relaxed);
        dead(word).then_some(v)
    };
    // A dropped vertex: one way in less for its successors, one way out less for its
    // predecessors; the neighbours whose count this takes to zero are dropped next.
    let drop = |v: VertexId, next: &mut Vec<VertexId>| {
        for (list, step) in [(game.successors(v), 1), (game.predecessors(v), OUT)] {
            for &u in list {
                if inside[u as usize] {
                    let before = counts[u as usize].fetch_sub(step, Relaxed);
                    if !dead(before) && dead(before - step) {
                        next.push(u);
                    }
                }
            }
        }
    };
    let mut dropped: Vec<VertexId> = if parallel {
        chunked::filter_map(candidates.len(), |i| count(candidates[i]))
    } else {
        candidates.iter().filter_map(|&v| count(v)).collect()
    };
    while !dropped.is_empty() {
        dropped = if parallel {
            chunked::concatenated(chunked::values_of_chunks(
                dropped.len(),
                chunked::chunk_len(dropped.len()).max(512),
                |_, chunk| {
                    let mut next = Vec::new();
                    for &v in &dropped[chunk] {
                        drop(v, &mut next);
                    }
                    next
                },
            ))
        } else {
            let mut next = Vec::new();
            for &v in &dropped {
                drop(v, &mut next);
            }
            next
        };
    }
    candidates
        .into_iter()
        .filter(|&v| !dead(counts[v as usize].load(Relaxed)))
        .collect()
}

/// The refinement's working state: the candidates' induced subgraph, a Tarjan search with
/// reused arrays, and each (local) vertex's current set (the candidates of one search
/// share a fresh number).
struct Refinement<'s> {
    sub: &'s Induced,
    finder: SccFinder,
    set: Vec<u32>,
    next_set: u32,
}

impl Refinement<'_> {
    /// Appends to `out` every winning cycle of `player` in the subgraph, with moves (the
    /// game's ids); stops early, with part of them, once `control` is cancelled.
    fn dominions(&mut self, player: u8, out: &mut Vec<(VertexId, VertexId)>, control: &Control) {
        let game = self.sub;
        let mut pending = vec![(0..game.len() as u32).collect::<Vec<_>>()];
        while let Some(candidates) = pending.pop() {
            if control.is_cancelled() {
                return;
            }
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
        let game = self.sub;
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
                out.push((game.global[v as usize], game.global[next as usize]));
                self.set[v as usize] = reached;
                frontier.push(v);
            }
        }
        while let Some(u) = frontier.pop() {
            for &v in game.predecessors(u) {
                if self.set[v as usize] == inside {
                    self.set[v as usize] = reached;
                    out.push((game.global[v as usize], game.global[u as usize]));
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
fn self_loop(game: &Induced, v: u32) -> bool {
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
        let found = find(Graph::new(&arena, &priority), false);
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
        let found = find(Graph::new(&arena, &priority), false);
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
        let mut even = find(Graph::new(&arena, &priority), false).even;
        even.sort_unstable();
        assert_eq!(even, vec![(0, 1), (1, 0)]);
    }

    #[test]
    fn a_cancelled_presolve_stops_with_nothing_solved() {
        let arena = game(&[0, 0, 0], &[(0, 1), (1, 0), (2, 0)]);
        let priority = [2, 2, 1];
        let graph = Graph::new(&arena, &priority);
        let found = presolve(graph, Rounds::SEQUENTIAL, &Control::new()).expect("runs");
        assert_eq!(found.count, 3, "the cycle 0 <-> 1 and its attractor");
        let cancelled = Control::new();
        cancelled.cancel();
        let stopped = presolve(graph, Rounds::SEQUENTIAL, &cancelled);
        assert!(matches!(stopped, Err(Interrupted::Cancelled)));
    }

    /// On random games, every vertex found is won by its owner as Zielonka says, and its
    /// move stays inside what was found.
    #[test]
    fn what_is_found_is_won_as_zielonka_says() {
        use crate::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
        for seed in [21u64, 22, 3] {
            let game = crate::generate::random_parity(10_000, 80, 3, seed).to_game();
            let view = game.parity.as_ref().expect("parity").view();
            let found = find(Graph::new(&game.arena, view.priorities), false);
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

    /// What the first step solves (cycles, their attractors, and the later rounds with
    /// forced vertices) is won as Zielonka says, and is closed: a solved vertex of its
    /// winner moves to a vertex its winner won, one of the loser has every successor won by
    /// the winner. On one thread and on pools of two and four, fixed seeds and a fresh
    /// one; games of degree 1..=2 have many forced vertices, so later rounds run.
    #[test]
    fn what_is_presolved_is_won_and_closed() {
        use crate::solve::parity::{ParityAlgorithm, ParityOptions, solve_with};
        let fresh: u64 = rand::random();
        eprintln!("fresh seed {fresh}");
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool")
        };
        // Two threads: the players side by side; four: each player's steps split too.
        let (two, four) = (pool(2), pool(4));
        let mut solved_any = 0;
        let mut most_rounds = 0;
        for (seed, degree) in [
            (21u64, 3),
            (5, 2),
            (6, 2),
            (7, 4),
            (fresh, 2),
            (fresh ^ 1, 3),
        ] {
            let game = crate::generate::random_parity(5_000, 40, degree, seed).to_game();
            let view = game.parity.as_ref().expect("parity").view();
            let graph = Graph::new(&game.arena, view.priorities);
            let options = ParityOptions::of(ParityAlgorithm::Zielonka, 1);
            let zielonka = solve_with(&game.arena, view.priorities, &options, &Control::new())
                .expect("solves");
            for (parallel, pool) in [(false, &two), (true, &two), (true, &four)] {
                let rounds = Rounds {
                    parallel,
                    parallel_from: 64,
                };
                let pre = pool
                    .install(|| presolve(graph, rounds, &Control::new()))
                    .expect("not cancelled");
                let threads = pool.current_num_threads();
                let what =
                    format!("seed {seed}, degree {degree}, parallel {parallel}, {threads} threads");
                assert_eq!(
                    pre.count,
                    (0..graph.vertex_count() as VertexId)
                        .filter(|&v| pre.is_solved(v))
                        .count(),
                    "{what}"
                );
                solved_any += pre.count;
                most_rounds = most_rounds.max(pre.rounds);
                for v in 0..graph.vertex_count() as VertexId {
                    let vi = v as usize;
                    if !pre.is_solved(v) {
                        continue;
                    }
                    let w = pre.winner[vi];
                    assert_eq!(zielonka.winner(v).index(), w, "{what}: vertex {v}");
                    let won = |u: VertexId| pre.is_solved(u) && pre.winner[u as usize] == w;
                    if graph.owner_of(v) == w {
                        let mv = pre.strategy[vi];
                        assert!(graph.successors(v).contains(&mv), "{what}: {v} -> {mv}");
                        assert!(won(mv), "{what}: {v} -> {mv} leaves the region");
                    } else {
                        assert_eq!(pre.strategy[vi], NO_MOVE, "{what}: {v}");
                        assert!(
                            graph.successors(v).iter().all(|&u| won(u)),
                            "{what}: the loser escapes from {v}"
                        );
                    }
                }
            }
        }
        assert!(solved_any > 0, "the games have winner-controlled cycles");
        assert!(
            most_rounds > 1,
            "a later round (forced vertices) found cycles"
        );
    }
}
