//! Seeded game generators for tests and benchmarks: the same parameters and seed always give
//! the same arena (ChaCha8, independent of platform).
//!
//! Families:
//! - [`random`]: uniform random energy games (size, out-degree range, weight range, share of
//!   player-1 vertices); [`large::random_parallel`] / [`large::RandomPlan`]: the same
//!   family generated on all threads (chunks seeded on their own, so the game does not
//!   depend on the thread count) straight into an `egb` file's sections, what
//!   `egsolve gen random` writes (other games than [`random`]'s for a seed);
//! - [`ladder`]: a chain of rungs where player 1 can push play back down (long frontiers of
//!   width 2, many rounds);
//! - [`clique`]: complete graphs with ±1 weights like the paper's clique generator (dense);
//! - [`layered`]: random edges from each layer to the next (wide frontiers over as many
//!   rounds as layers: the parallel CPU backend's benchmark);
//! - [`climb`]: a negative cycle through player-1 vertices behind a large `M` (every
//!   vertex climbs to ⊤ one step at a time: the worst case of plain lifting);
//! - [`random_parity`]: random parity games (priorities, owners, successors) for the
//!   reduction in `format` and the parity solver; [`parity::clustered_parity`]: many
//!   priorities spread over small components (per-SCC compression makes them reducible);
//! - [`climbing`]: more families that make plain lifting climb (player 1's cycles behind a
//!   large `M`, player 0 circling before a costly escape, reduced parity games with many
//!   priorities), used by the accelerated solver's tests and benchmark;
//! - [`families`]: the known lower-bound families of parity games (van Dijk's two counters,
//!   the counterexamples to priority promotion, tangle learning and progress measures),
//!   the same games as Oink's generators write, at any size.

pub mod climbing;
pub mod families;
pub mod large;
pub mod parity;

pub use large::{RandomPlan, random_parallel};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::arena::{Arena, EdgeList, Player, VertexId};

/// Parameters of a uniform random energy game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomParams {
    /// Number of vertices (≥ 1).
    pub vertices: u32,
    /// Out-degree range, inclusive (min ≥ 1).
    pub min_degree: u32,
    /// Largest out-degree.
    pub max_degree: u32,
    /// Smallest weight.
    pub min_weight: i64,
    /// Largest weight.
    pub max_weight: i64,
    /// Percentage of vertices owned by player 1 (0..=100).
    pub player1_percent: u8,
}

impl Default for RandomParams {
    fn default() -> RandomParams {
        RandomParams {
            vertices: 1000,
            min_degree: 1,
            max_degree: 4,
            min_weight: -10,
            max_weight: 10,
            player1_percent: 50,
        }
    }
}

fn owner(rng: &mut ChaCha8Rng, player1_percent: u8) -> Player {
    if rng.random_range(0..100u8) < player1_percent {
        Player::One
    } else {
        Player::Zero
    }
}

/// A uniform random energy game.
pub fn random(params: RandomParams, seed: u64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = params.vertices.max(1);
    let (lo, hi) = (
        params.min_degree.max(1),
        params.max_degree.max(params.min_degree.max(1)),
    );
    let mut owners = Vec::with_capacity(n as usize);
    let mut edges = EdgeList::with_capacity(n as usize * ((lo + hi) / 2) as usize);
    for v in 0..n {
        owners.push(owner(&mut rng, params.player1_percent));
        for _ in 0..rng.random_range(lo..=hi) {
            let w = rng.random_range(params.min_weight..=params.max_weight.max(params.min_weight));
            edges.push(v, rng.random_range(0..n), w);
        }
    }
    Arena::from_edges(owners, edges, None).expect("every generated vertex has a successor")
}

/// A random energy game of `vertices` vertices whose shape (out-degrees, weight range,
/// player 1's share) varies with `seed`: [`random`] on parameters drawn from the seed, for
/// tests that want many kinds of game from one loop over seeds.
pub fn random_varied(seed: u64, vertices: u32) -> Arena {
    random(
        RandomParams {
            vertices,
            min_degree: 1,
            max_degree: 1 + (seed % 5) as u32,
            min_weight: -4,
            max_weight: 2 + (seed % 4) as i64 * 3,
            player1_percent: (20 + seed * 13 % 70) as u8,
        },
        seed,
    )
}

/// A ladder of `rungs` rungs: vertex pairs `(2i, 2i+1)`; player 0 climbs with weight
/// `+1`, player 1 can push down with weight `−2`; the top rung loops.
pub fn ladder(rungs: u32, seed: u64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rungs = rungs.max(1);
    let n = 2 * rungs;
    let mut owners = Vec::with_capacity(n as usize);
    let mut edges = EdgeList::default();
    for i in 0..rungs {
        let (a, b) = (2 * i, 2 * i + 1);
        owners.push(Player::Zero);
        owners.push(Player::One);
        let up = if i + 1 < rungs { 2 * (i + 1) } else { a };
        edges.push(a, b, rng.random_range(-1..=1));
        edges.push(a, up, 1);
        edges.push(b, a, 0);
        edges.push(b, if i > 0 { 2 * (i - 1) } else { a }, -2);
    }
    Arena::from_edges(owners, edges, None).expect("ladder vertices have successors")
}

/// `layers` layers of `width` vertices (ids layer by layer, 30 % player 1); each vertex of a
/// layer has `degree` random successors in the next layer, weights in −8..=4; the last
/// layer's vertices have a zero self-loop. No other cycle, so every credit is finite (at
/// most `8 · layers`), and lifting pushes raised credits back one layer per round: about
/// `layers` rounds whose frontiers span whole layers.
pub fn layered(width: u32, layers: u32, degree: u32, seed: u64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (width, layers, degree) = (width.max(1), layers.max(1), degree.max(1));
    let n = width * layers;
    let mut owners = Vec::with_capacity(n as usize);
    let mut edges = EdgeList::with_capacity(n as usize * degree as usize);
    for v in 0..n {
        owners.push(owner(&mut rng, 30));
        let next_layer = v / width + 1;
        if next_layer == layers {
            edges.push(v, v, 0);
            continue;
        }
        for _ in 0..degree {
            let u = next_layer * width + rng.random_range(0..width);
            edges.push(v, u, rng.random_range(-8..=4));
        }
    }
    Arena::from_edges(owners, edges, None).expect("every layered vertex has a successor")
}

/// A complete graph on `n` vertices (no self-loops unless `n == 1`) with weights ±1, owners
/// alternating, like the paper's clique benchmark.
pub fn clique(n: u32, seed: u64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = n.max(1);
    let owners = (0..n).map(|v| Player::one_if(v % 2 == 1)).collect();
    let mut edges = EdgeList::with_capacity((n as usize) * (n as usize));
    for v in 0..n {
        for u in (0..n).filter(|&u| u != v || n == 1) {
            edges.push(v, u, if rng.random_bool(0.5) { 1 } else { -1 });
        }
    }
    Arena::from_edges(owners, edges, None).expect("clique vertices have successors")
}

/// A cycle of `length` player-1 vertices with weight −1 per edge, each also offering an
/// exit of weight `−exit` to a player-0 sink with a zero self-loop: `M` is about
/// `length·exit`, and every cycle vertex must climb to ⊤ one step at a time.
pub fn climb(length: u32, exit: i64) -> Arena {
    let length = length.max(1);
    let sink = length;
    let mut owners = vec![Player::One; length as usize];
    owners.push(Player::Zero);
    let mut edges = EdgeList::default();
    for v in 0..length {
        edges.push(v, (v + 1) % length, -1);
        edges.push(v, sink, -exit.abs());
    }
    edges.push(sink, sink, 0);
    Arena::from_edges(owners, edges, None).expect("climb vertices have successors")
}

/// A random parity game: owners, priorities and successor lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityGame {
    /// Owner per vertex.
    pub owners: Vec<Player>,
    /// Priority per vertex.
    pub priorities: Vec<u64>,
    /// Successors per vertex (at least one each).
    pub successors: Vec<Vec<VertexId>>,
}

impl ParityGame {
    /// The game as the readers build it from `.gm` text: priorities compressed, reduced to
    /// an energy game where that fits ([`crate::format::parity_arena`]).
    pub fn to_game(&self) -> crate::format::Game {
        let mut edges = EdgeList::with_capacity(self.successors.iter().map(Vec::len).sum());
        for (v, successors) in self.successors.iter().enumerate() {
            for &u in successors {
                edges.push(v as VertexId, u, 0);
            }
        }
        let (arena, parity) =
            crate::format::parity_arena(self.owners.clone(), edges, None, self.priorities.clone())
                .expect("a generated parity game is a valid arena");
        crate::format::Game {
            arena,
            parity: Some(parity),
            initial: None,
        }
    }
}

/// A random parity game with `n` vertices, priorities `0..=max_priority` and out-degree
/// `1..=max_degree`.
pub fn random_parity(n: u32, max_priority: u64, max_degree: u32, seed: u64) -> ParityGame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = n.max(1);
    let mut game = ParityGame {
        owners: Vec::new(),
        priorities: Vec::new(),
        successors: Vec::new(),
    };
    for _ in 0..n {
        game.owners.push(owner(&mut rng, 50));
        game.priorities.push(rng.random_range(0..=max_priority));
        let degree = rng.random_range(1..=max_degree.max(1));
        game.successors
            .push((0..degree).map(|_| rng.random_range(0..n)).collect());
    }
    game
}

/// Writes `game` in PGSolver's `.gm` format (`parity N;` with N the highest id).
pub fn write_pgsolver(game: &ParityGame, out: &mut impl std::io::Write) -> std::io::Result<()> {
    write_pgsolver_named(game, None, out)
}

/// [`write_pgsolver`] with a name per vertex, written as PGSolver's quoted label (names must
/// not contain `"`).
pub fn write_pgsolver_named(
    game: &ParityGame,
    names: Option<&[String]>,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    writeln!(out, "parity {};", game.owners.len().saturating_sub(1))?;
    for (v, ((owner, priority), successors)) in game
        .owners
        .iter()
        .zip(&game.priorities)
        .zip(&game.successors)
        .enumerate()
    {
        let list: Vec<String> = successors.iter().map(u32::to_string).collect();
        write!(out, "{v} {priority} {} {}", owner.index(), list.join(","))?;
        match names.and_then(|names| names.get(v)) {
            Some(name) => {
                debug_assert!(!name.contains('"'));
                writeln!(out, " \"{name}\";")?;
            }
            None => writeln!(out, ";")?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_shaped_as_asked() {
        let p = RandomParams {
            vertices: 50,
            min_degree: 2,
            max_degree: 3,
            ..RandomParams::default()
        };
        assert_eq!(random(p, 7), random(p, 7));
        assert_ne!(random(p, 7), random(p, 8));
        let a = random(p, 7);
        assert!((0..50).all(|v| (2..=3).contains(&a.successors(v).len())));
        assert_eq!(clique(10, 1).edge_count(), 90);
        assert_eq!(ladder(5, 1).vertex_count(), 10);
        assert_eq!(climb(4, 100).vertex_count(), 5);
        let g = random_parity(20, 5, 3, 2);
        assert!(g.priorities.iter().all(|&p| p <= 5) && g.successors.iter().all(|s| !s.is_empty()));
    }
}
