//! Player 1's attractors, in layers: a vertex joins the set when it is player 1's and some
//! successor has joined, or player 0's and every successor that counts has joined (a
//! counter per vertex). Layer `k + 1` is what layer `k` completes.
//!
//! The layers are the same however many threads compute them — one thread walks them with
//! a FIFO queue, several in frontier rounds with atomic counters — and so is the move
//! recorded for player 1: at a vertex of layer `L`, its first edge to a vertex of a lower
//! layer. Recorded moves lead strictly downwards, so they close no cycle.
//!
//! Two uses: [`attract_top`] (the part of lifting that only moves vertices to ⊤, done in
//! linear time; being lifts, these steps keep `f <= f*`), and the attractor to a player-1
//! trap in the strategy construction (`solve::strategy::player1`).

use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use super::frontier::next_frontier;
use crate::arena::{Arena, Player, VertexId};
use crate::solve::chunked;
use crate::solve::energy::{TOP, minus};
use crate::solve::engine::EngineAttracted;
use crate::solve::threads::{Threads, as_atomic, positions_where};

/// Not in the attractor (yet).
pub(crate) const NO_LAYER: u32 = u32::MAX;

/// The state of a layered attractor over the arena's vertices: each vertex's layer
/// ([`NO_LAYER`] outside) and, for player-0 vertices, how many counted successors have not
/// joined.
pub(crate) struct Layers {
    pub layer: Vec<u32>,
    pub open: Vec<u32>,
}

impl Layers {
    /// Grows the attractor from `frontier` (vertices that joined at layer `first`): returns
    /// every vertex that joined after them, in layer order, and the next free layer (one above
    /// the highest used).
    /// `counts(p, x, w)`: whether the edge `p → x` (weight `w`) counts, i.e. whether `x`
    /// joining pulls `p` (and was counted in `open[p]` for player 0); vertices whose
    /// `eligible(p)` is false never join.
    pub fn grow(
        &mut self,
        arena: &Arena,
        frontier: Vec<VertexId>,
        first: u32,
        counts: impl Fn(VertexId, VertexId, i64) -> bool + Sync,
        eligible: impl Fn(VertexId) -> bool + Sync,
        threads: &Threads,
    ) -> (Vec<VertexId>, u32) {
        if threads.parallel(arena.vertex_count() + arena.edge_count()) {
            threads.install(|| self.grow_parallel(arena, frontier, first, &counts, &eligible))
        } else {
            self.grow_sequential(arena, frontier, &counts, &eligible)
        }
    }

    fn grow_sequential(
        &mut self,
        arena: &Arena,
        frontier: Vec<VertexId>,
        counts: &impl Fn(VertexId, VertexId, i64) -> bool,
        eligible: &impl Fn(VertexId) -> bool,
    ) -> (Vec<VertexId>, u32) {
        let mut queue: VecDeque<VertexId> = frontier.into();
        let mut joined = Vec::new();
        let mut next_free = queue
            .iter()
            .map(|&x| self.layer[x as usize] + 1)
            .max()
            .unwrap_or(0);
        while let Some(x) = queue.pop_front() {
            let next = self.layer[x as usize] + 1;
            for (p, w) in arena.predecessors(x) {
                if self.layer[p as usize] != NO_LAYER || !eligible(p) || !counts(p, x, w) {
                    continue;
                }
                if arena.owner(p) == Player::Zero {
                    self.open[p as usize] -= 1;
                    if self.open[p as usize] != 0 {
                        continue;
                    }
                }
                self.layer[p as usize] = next;
                next_free = next_free.max(next + 1);
                joined.push(p);
                queue.push_back(p);
            }
        }
        (joined, next_free)
    }

    fn grow_parallel(
        &mut self,
        arena: &Arena,
        mut frontier: Vec<VertexId>,
        first: u32,
        counts: &(impl Fn(VertexId, VertexId, i64) -> bool + Sync),
        eligible: &(impl Fn(VertexId) -> bool + Sync),
    ) -> (Vec<VertexId>, u32) {
        let layer = as_atomic(&mut self.layer);
        let open = as_atomic(&mut self.open);
        let mut joined = Vec::new();
        let mut current = first;
        while !frontier.is_empty() {
            let next_layer = current + 1;
            let expand = |x: VertexId, next: &mut Vec<VertexId>| {
                for (p, w) in arena.predecessors(x) {
                    if layer[p as usize].load(Relaxed) != NO_LAYER
                        || !eligible(p)
                        || !counts(p, x, w)
                    {
                        continue;
                    }
                    if arena.owner(p) == Player::Zero && open[p as usize].fetch_sub(1, Relaxed) != 1
                    {
                        continue;
                    }
                    if layer[p as usize]
                        .compare_exchange(NO_LAYER, next_layer, Relaxed, Relaxed)
                        .is_ok()
                    {
                        next.push(p);
                    }
                }
            };
            frontier = next_frontier(&frontier, expand);
            joined.extend_from_slice(&frontier);
            current = next_layer;
        }
        (joined, current)
    }

    /// Player 1's move at `v` (of layer `L`): its first edge to a vertex of a lower layer.
    pub fn downward_edge(&self, arena: &Arena, v: VertexId) -> Option<usize> {
        let l = self.layer[v as usize];
        let targets = arena.succ_targets();
        arena
            .succ_range(v)
            .find(|&e| self.layer[targets[e] as usize] < l)
    }
}

/// Which vertices' values can make an edge into them give ⊤ (`f(u) ⊖ w = ⊤`), a bit per
/// vertex: the ⊤ ones, and the finite ones within the weights' largest magnitude of the
/// bound. The attractor's passes read every edge's target at random; these few hundred
/// kilobytes stay in cache where the 8-byte values (tens of megabytes) do not, and only an
/// edge into a vertex near the bound reads its value.
struct TopBits {
    top: Vec<u64>,
    near: Vec<u64>,
}

impl TopBits {
    /// The bits of `values` (weights of `weight_bits` bits).
    fn new(
        values: &[u64],
        bound: u64,
        weight_bits: u32,
        threads: &Threads,
        parallel: bool,
    ) -> TopBits {
        // Every weight lies in -2^(bits-1)..2^(bits-1), so `f ⊖ w <= f + 2^(bits-1)`
        // (64-bit weights: every finite value is near).
        let largest_drop = if weight_bits >= 64 {
            u64::MAX
        } else {
            1u64 << (weight_bits - 1)
        };
        let near_from = bound.saturating_sub(largest_drop);
        let word = |chunk: &[u64]| -> (u64, u64) {
            chunk
                .iter()
                .enumerate()
                .fold((0, 0), |(top, near), (i, &f)| {
                    if f == TOP {
                        (top | 1 << i, near)
                    } else if f >= near_from {
                        (top, near | 1 << i)
                    } else {
                        (top, near)
                    }
                })
        };
        let (top, near) = if parallel {
            threads.install(|| {
                chunked::map_pairs(values.len().div_ceil(64), |w| {
                    word(&values[w * 64..(w * 64 + 64).min(values.len())])
                })
            })
        } else {
            values.chunks(64).map(word).unzip()
        };
        TopBits { top, near }
    }

    /// Whether `f(u) ⊖ w = ⊤`.
    #[inline]
    fn gives_top(&self, values: &[u64], u: VertexId, w: i64, bound: u64) -> bool {
        let (word, bit) = (u as usize / 64, u % 64);
        self.top[word] >> bit & 1 != 0
            || (self.near[word] >> bit & 1 != 0 && minus(values[u as usize], w, bound) == TOP)
    }
}

/// What [`attract_top`] did.
pub struct Attracted {
    /// Vertices it moved to ⊤.
    pub moved: usize,
    /// Each vertex's layer: 0 at ⊤ before, [`NO_LAYER`] still finite (may be empty when
    /// nothing moved).
    pub layer: Vec<u32>,
    /// One above the highest layer (1 when nothing moved).
    pub top_layers: u32,
    /// Whether every vertex it moved joined through lower layers alone (a player-1 vertex
    /// with a successor in a lower layer, a player-0 vertex all of whose successors are in
    /// lower layers), none through a finite value that `⊖` takes above `M`: then every
    /// move from a moved vertex that the ranks rely on leads to a vertex at ⊤ before it
    /// (the accelerated solver's `ranks`).
    pub recorded: bool,
}

/// Sets to ⊤ every vertex that lifting would set to ⊤ from `values` by ⊤ alone: layer 0 is
/// ⊤ already, layer 1 what the values send to ⊤ (a player-1 edge with `f(u) ⊖ w = ⊤`, a
/// player-0 vertex all of whose edges give ⊤), and the layers above what they complete. At
/// each player-1 vertex of layer 2 or more, and of layer 1 with an edge to layer 0,
/// `sigma_edge` records the first edge to a lower layer.
pub fn attract_top(
    arena: &Arena,
    values: &mut [u64],
    bound: u64,
    sigma_edge: &mut [u32],
    threads: &Threads,
) -> Attracted {
    let n = arena.vertex_count();
    let parallel = threads.parallel(n + arena.edge_count());
    let start = Instant::now();
    let bits = TopBits::new(
        values,
        bound,
        arena.weight_width().bits(),
        threads,
        parallel,
    );
    let gives_top = |x: VertexId, w: i64| bits.gives_top(values, x, w, bound);
    let first = |v: usize| -> (u32, u32) {
        if values[v] == TOP {
            return (0, 0);
        }
        let mut edges = arena.successors(v as VertexId);
        match arena.owner(v as VertexId) {
            Player::Zero => {
                let open = edges.filter(|&(u, w)| !gives_top(u, w)).count() as u32;
                (if open == 0 { 1 } else { NO_LAYER }, open)
            }
            Player::One => (
                if edges.any(|(u, w)| gives_top(u, w)) {
                    1
                } else {
                    NO_LAYER
                },
                0,
            ),
        }
    };
    let (layer, open): (Vec<u32>, Vec<u32>) = if parallel {
        threads.install(|| chunked::map_pairs(n, first))
    } else {
        (0..n).map(first).unzip()
    };
    let mut layers = Layers { layer, open };
    let seeds: Vec<VertexId> = if parallel {
        threads.install(|| positions_where(&layers.layer, |&l| l == 1))
    } else {
        (0..n as VertexId)
            .filter(|&v| layers.layer[v as usize] == 1)
            .collect()
    };
    let seeded = start.elapsed().as_secs_f64();
    let moved_first = seeds.len();
    // An edge counts if it did not give ⊤ before (then it was counted open).
    let (joined, top_layers) = layers.grow(
        arena,
        seeds,
        1,
        |_, x, w| !gives_top(x, w),
        |_| true,
        threads,
    );
    let grown = start.elapsed().as_secs_f64();
    tracing::debug!(seeded, grown, "attractor to ⊤: seconds since its start");
    finish(
        arena,
        values,
        sigma_edge,
        layers.layer,
        top_layers,
        moved_first + joined.len(),
        threads,
    )
}

/// Applies the layers of player 1's attractor to ⊤ that an engine computed
/// ([`EngineSearches::attract_top`](crate::solve::engine::EngineSearches::attract_top)) as [`attract_top`] applies
/// its own: the same values, σ1's recorded edges and ranks' input.
pub fn apply_layers(
    arena: &Arena,
    values: &mut [u64],
    sigma_edge: &mut [u32],
    attracted: EngineAttracted,
    threads: &Threads,
) -> Attracted {
    let EngineAttracted {
        moved,
        top_layers,
        layer,
    } = attracted;
    finish(arena, values, sigma_edge, layer, top_layers, moved, threads)
}

/// The end of an attractor to ⊤ whose layers are `layer` (`moved` vertices in layers 1 to
/// `top_layers - 1`; `layer` may be empty when none moved): whether every moved vertex joined
/// through lower layers, σ1's edge at each moved player-1 vertex (its first to a lower layer),
/// and ⊤ at every moved vertex. Nothing to do when nothing moved.
fn finish(
    arena: &Arena,
    values: &mut [u64],
    sigma_edge: &mut [u32],
    layer: Vec<u32>,
    top_layers: u32,
    moved: usize,
    threads: &Threads,
) -> Attracted {
    if moved == 0 {
        // Layer 0 alone, however the layers were grown (the sequential growth counts no
        // layer at all where nothing joined, the parallel one and the device's count 1).
        return Attracted {
            moved,
            layer,
            top_layers: 1,
            recorded: true,
        };
    }
    let start = Instant::now();
    let n = arena.vertex_count();
    assert_eq!(layer.len(), n, "a layer per vertex");
    let parallel = threads.parallel(n + arena.edge_count());
    let layers = Layers {
        layer,
        open: Vec::new(),
    };
    // Every moved vertex must have joined through lower layers (layer 0: ⊤ before).
    let through_lower = |v: usize| {
        let l = layers.layer[v];
        if l == 0 || l == NO_LAYER {
            return true;
        }
        let mut below = arena.succ_targets()[arena.succ_range(v as VertexId)]
            .iter()
            .map(|&u| layers.layer[u as usize] < l);
        match arena.owner(v as VertexId) {
            Player::Zero => below.all(|b| b),
            Player::One => below.any(|b| b),
        }
    };
    let recorded = if parallel {
        threads.install(|| chunked::all(n, through_lower))
    } else {
        (0..n).all(through_lower)
    };
    let checked = start.elapsed().as_secs_f64();
    let record = |v: usize, sigma: &mut u32| {
        let l = layers.layer[v];
        if l != 0 && l != NO_LAYER && arena.owner(v as VertexId) == Player::One {
            if let Some(e) = layers.downward_edge(arena, v as VertexId) {
                *sigma = e as u32;
            }
        }
    };
    let apply = |(v, (value, sigma)): (usize, (&mut u64, &mut u32))| {
        record(v, sigma);
        if layers.layer[v] != NO_LAYER {
            *value = TOP;
        }
    };
    if parallel {
        threads.install(|| {
            chunked::for_each_mut2(values, sigma_edge, |v, value, sigma| {
                apply((v, (value, sigma)));
            });
        });
    } else {
        values
            .iter_mut()
            .zip(sigma_edge.iter_mut())
            .enumerate()
            .for_each(apply);
    }
    tracing::debug!(
        checked,
        applied = start.elapsed().as_secs_f64(),
        moved,
        layers = top_layers,
        "attractor to ⊤: its layers applied, seconds"
    );
    Attracted {
        moved,
        layer: layers.layer,
        top_layers,
        recorded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::EdgeList;

    /// Vertex 0 (player 1) is at ⊤; 1 (player 1) joins at layer 1 through it; 2 (player 0)
    /// joins at layer 2, its other edge to 3 counting as ⊤ only because `f(3) ⊖ -5 > M`
    /// while 3 stays finite. 2's moves then do not all lead down: not recorded.
    fn game(bound: u64) -> (Arena, Vec<u64>) {
        let mut edges = EdgeList::default();
        for (s, t, w) in [(0, 0, 0), (1, 0, 0), (2, 1, 0), (2, 3, -5), (3, 3, 1)] {
            edges.push(s, t, w);
        }
        let owners = vec![Player::One, Player::One, Player::Zero, Player::Zero];
        let arena = Arena::from_edges(owners, edges, None).expect("valid");
        (arena, vec![TOP, 0, 0, bound - 2])
    }

    #[test]
    fn a_player0_vertex_joined_past_the_bound_is_not_recorded() {
        for threads in [Threads::one(), Threads::new(2).with_parallel_from(0)] {
            let (arena, mut values) = game(100);
            let mut sigma = vec![u32::MAX; 4];
            let attracted = attract_top(&arena, &mut values, 100, &mut sigma, &threads);
            assert_eq!(attracted.layer, vec![0, 1, 2, NO_LAYER]);
            assert_eq!(values, vec![TOP, TOP, TOP, 98]);
            assert!(!attracted.recorded, "vertex 2 may still move to 3");
            assert_eq!(sigma[1], 1, "player 1's move at 1 leads down to 0");
        }
    }

    /// The bits answer `f(u) ⊖ w = ⊤` exactly as `minus` does, for values at ⊤, at and
    /// near the bound and far below it, every weight width's extremes, on one thread and
    /// several.
    #[test]
    fn top_bits_answer_as_minus() {
        use rand::{Rng, SeedableRng};
        let fresh: u64 = rand::random();
        eprintln!("fresh seed {fresh}");
        let cases = [
            (16, 1_000u64),
            (16, 40_000),
            (32, 1 << 33),
            (64, 1 << 40),
            (64, u64::MAX - 1),
        ];
        for (seed, (bits, bound)) in [0, 1, fresh]
            .into_iter()
            .flat_map(|seed| cases.map(|case| (seed, case)))
        {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let extreme = if bits == 64 {
                i64::MIN
            } else {
                -(1i64 << (bits - 1))
            };
            let values: Vec<u64> = (0..1000)
                .map(|i| match i % 5 {
                    0 => TOP,
                    1 => bound,
                    2 => bound.saturating_sub(rng.random_range(0..70_000)),
                    3 => rng.random_range(0..=bound.min(100)),
                    _ => rng.random_range(0..=bound),
                })
                .collect();
            let weights = [
                extreme,
                extreme + 1,
                -1,
                0,
                5,
                (-(bound.min(1 << 20) as i64)).max(extreme),
            ];
            for threads in [Threads::one(), Threads::new(2).with_parallel_from(0)] {
                let parallel = threads.parallel(values.len());
                let top_bits = TopBits::new(&values, bound, bits, &threads, parallel);
                for (u, &f) in values.iter().enumerate() {
                    for &w in &weights {
                        assert_eq!(
                            top_bits.gives_top(&values, u as VertexId, w, bound),
                            minus(f, w, bound) == TOP,
                            "seed {seed}, {bits} bits, bound {bound}: f {f} w {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn an_attractor_through_lower_layers_alone_is_recorded() {
        // With a bound far above f(3) + 5, the edge 2 → 3 stays open and 2 stays finite.
        let (arena, mut values) = game(1000);
        values[3] = 10;
        let mut sigma = vec![u32::MAX; 4];
        let attracted = attract_top(&arena, &mut values, 1000, &mut sigma, &Threads::one());
        assert_eq!(attracted.layer, vec![0, 1, NO_LAYER, NO_LAYER]);
        assert!(attracted.recorded);
    }
}
