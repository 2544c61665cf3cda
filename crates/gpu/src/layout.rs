//! The game as the host hands it to the device: CSR successors and the CSC's offsets (the
//! device builds the predecessors' sources and weights from the successors, so the upload
//! carries each edge once), in one of two vertex orders ([`VertexOrder`]): renumbered so
//! that player-0 vertices come first (the paper's layout: a warp lifting consecutive
//! vertices takes only minima or only maxima), or
//! the input's own order with each vertex's player in a byte array (nothing to renumber:
//! the arena's arrays upload as they are; the default, since the host-side renumbering cost
//! more end to end than the layout saved on the device). Also the memory a game needs.
//!
//! Weights keep the arena's storage width (16, 32 or 64 bits) and energies are 32 bits
//! wide when the bound allows ([`value_bits`]): the kernels are instantiated for each pair,
//! so a round moves as few bytes as the game needs.
//!
//! Outputs speak input ids: [`DeviceLayout::to_input_order`] undoes the renumbering.

use std::borrow::Cow;

use rayon::prelude::*;

use egsolve_core::arena::{Arena, Player, Weight, Width};
use egsolve_core::solve::VertexOrder;

/// One weight column (successor order) at the arena's storage width.
#[derive(Debug, Clone)]
pub enum WeightColumn<'a> {
    I16(Cow<'a, [i16]>),
    I32(Cow<'a, [i32]>),
    I64(Cow<'a, [i64]>),
}

impl WeightColumn<'_> {
    /// Bits per weight.
    pub fn bits(&self) -> u32 {
        match self {
            WeightColumn::I16(_) => 16,
            WeightColumn::I32(_) => 32,
            WeightColumn::I64(_) => 64,
        }
    }

    /// The column as `i64`.
    pub fn widened(self) -> Self {
        match self {
            WeightColumn::I16(w) => WeightColumn::I64(w.par_iter().map(|x| x.widen()).collect()),
            WeightColumn::I32(w) => WeightColumn::I64(w.par_iter().map(|x| x.widen()).collect()),
            wide @ WeightColumn::I64(_) => wide,
        }
    }

    /// Bytes of the column.
    pub fn bytes(&self) -> usize {
        let len = match self {
            WeightColumn::I16(w) => w.len(),
            WeightColumn::I32(w) => w.len(),
            WeightColumn::I64(w) => w.len(),
        };
        len * self.bits() as usize / 8
    }

    /// Weight `k` as `i64`.
    pub fn get(&self, k: usize) -> i64 {
        match self {
            WeightColumn::I16(w) => w[k].widen(),
            WeightColumn::I32(w) => w[k].widen(),
            WeightColumn::I64(w) => w[k],
        }
    }
}

/// Bits per energy on the device for a game with bound `bound`: 32 when every finite
/// value and ⊤ fit (`bound < u32::MAX`, ⊤ = `u32::MAX`), else 64.
pub fn value_bits(bound: u64) -> u32 {
    if bound < u32::MAX as u64 { 32 } else { 64 }
}

/// A renumbering of the vertices, both ways.
#[derive(Debug, Clone)]
pub struct Numbering {
    /// `new_of_old[v]`: the device id of input vertex `v`.
    pub new_of_old: Vec<u32>,
    /// `old_of_new[d]`: the input id of device vertex `d`.
    pub old_of_new: Vec<u32>,
}

/// Host-side arrays in device order, ready to upload: borrowed from the arena when the
/// device order is the input's, renumbered copies (built in parallel) otherwise.
pub struct DeviceLayout<'a> {
    /// Vertices.
    pub n: u32,
    /// Edges.
    pub m: u32,
    /// Player-0 vertices (with [`VertexOrder::PlayersFirst`] the device ids `0..n0`).
    pub n0: u32,
    /// The renumbering; `None` when device ids are input ids.
    pub numbering: Option<Numbering>,
    /// Each vertex's player (0 or 1) when the order is the input's: the kernels' `owners`.
    pub owners: Option<Vec<u8>>,
    /// CSR offsets (`n + 1`).
    pub succ_offsets: Cow<'a, [u32]>,
    /// CSR targets (`m`).
    pub succ_targets: Cow<'a, [u32]>,
    /// CSR weights (`m`). (The device lists the predecessors, offsets included, itself.)
    pub succ_weights: WeightColumn<'a>,
}

/// Bytes of device memory a game of `n` vertices and `m` edges needs, with weights and
/// energies of the given widths: both adjacency copies, credits, two frontiers, stamps, the
/// topping record, the players' bytes (input order), the predecessors' cursors (while the
/// device lists them) and the round state.
pub fn device_bytes(n: u64, m: u64, weight_bits: u32, value_bits: u32) -> u64 {
    let adjacency = 2 * (4 * (n + 1) + m * (4 + weight_bits as u64 / 8));
    let per_vertex = n * (value_bits as u64 / 8 + 4 + 4 + 4 + 4 + 4 + 1);
    adjacency + per_vertex + 64
}

/// Lanes per vertex for a given average out-degree (measured on an H200: degree 4.5 → 4,
/// 16.5 → 8, 129 → 32; see GPU.md).
pub fn lanes_for_degree(average_degree: f64) -> u32 {
    let target = if average_degree < 8.0 {
        average_degree
    } else {
        average_degree / 2.0
    };
    let mut h = 1u32;
    while h < 32 && (h * 2) as f64 <= target {
        h *= 2;
    }
    h
}

impl<'a> DeviceLayout<'a> {
    /// Lays `arena` out in `order`; the arena guarantees `m < u32::MAX`. `wide`: weights
    /// as `i64` whatever the arena's storage width.
    pub fn new(arena: &'a Arena, wide: bool, order: VertexOrder) -> DeviceLayout<'a> {
        let n = arena.vertex_count();
        let m = arena.edge_count();
        let (n0, new_of_old, old_of_new) = match order {
            VertexOrder::PlayersFirst => {
                let (n0, numbering) = Numbering::player_zero_first(arena.owners());
                (n0, numbering.new_of_old, numbering.old_of_new)
            }
            VertexOrder::Input => {
                let n0 = arena
                    .owners()
                    .par_iter()
                    .filter(|&&p| p == Player::Zero)
                    .count();
                (n0 as u32, Vec::new(), Vec::new())
            }
        };
        let identity = order == VertexOrder::Input
            || old_of_new
                .par_iter()
                .enumerate()
                .all(|(d, &v)| d as u32 == v);
        let succ_offsets = if identity {
            Cow::Borrowed(arena.succ_offsets())
        } else {
            Cow::Owned(permute_offsets(&old_of_new, arena.succ_offsets()))
        };
        let succ = Adjacency {
            old_offsets: arena.succ_offsets(),
            new_offsets: &succ_offsets,
            neighbours: arena.succ_targets(),
        };
        let renumber = Renumber {
            identity,
            old_of_new: &old_of_new,
            new_of_old: &new_of_old,
        };
        let (succ_targets, succ_weights) = match arena.weight_width() {
            Width::I16 => {
                let (s, _) = arena
                    .typed_weights::<i16>()
                    .expect("dispatched on the width");
                let (targets, weights) = renumber.column(&succ, s);
                (targets, WeightColumn::I16(weights))
            }
            Width::I32 => {
                let (s, _) = arena
                    .typed_weights::<i32>()
                    .expect("dispatched on the width");
                let (targets, weights) = renumber.column(&succ, s);
                (targets, WeightColumn::I32(weights))
            }
            Width::I64 => {
                let (s, _) = arena
                    .typed_weights::<i64>()
                    .expect("dispatched on the width");
                let (targets, weights) = renumber.column(&succ, s);
                (targets, WeightColumn::I64(weights))
            }
        };
        let succ_weights = if wide {
            succ_weights.widened()
        } else {
            succ_weights
        };
        let owners = (order == VertexOrder::Input)
            .then(|| arena.owners().par_iter().map(|&p| p as u8).collect());
        DeviceLayout {
            n: n as u32,
            m: m as u32,
            n0,
            numbering: (!identity).then_some(Numbering {
                new_of_old,
                old_of_new,
            }),
            owners,
            succ_offsets,
            succ_targets,
            succ_weights,
        }
    }

    /// Device-ordered values back in input order.
    pub fn to_input_order(&self, device_values: Vec<u64>) -> Vec<u64> {
        Numbering::to_input_order(self.numbering.as_ref(), device_values)
    }

    /// Input-ordered values in device order.
    pub fn to_device_order(&self, input_values: &[u64]) -> Vec<u64> {
        Numbering::to_device_order(self.numbering.as_ref(), input_values)
    }

    /// Bytes of the largest array to upload (offsets, targets or a weight column): whether
    /// the upload goes through the staging buffers.
    pub fn largest_array_bytes(&self) -> usize {
        (self.succ_offsets.len() * 4)
            .max(self.succ_targets.len() * 4)
            .max(self.succ_weights.bytes())
    }

    /// Average out-degree.
    pub fn average_degree(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.m as f64 / self.n as f64
        }
    }
}

/// `values[index[i]]` for every `i`, in parallel.
pub fn gather(index: &[u32], values: &[u64]) -> Vec<u64> {
    index.par_iter().map(|&i| values[i as usize]).collect()
}

/// Vertices per parallel task when renumbering.
const CHUNK: usize = 1 << 14;

impl Numbering {
    /// Device-ordered values in input order (`None`: the orders are the same).
    pub fn to_input_order(numbering: Option<&Numbering>, device_values: Vec<u64>) -> Vec<u64> {
        match numbering {
            Some(numbering) => gather(&numbering.new_of_old, &device_values),
            None => device_values,
        }
    }

    /// Input-ordered values in device order (`None`: the orders are the same).
    pub fn to_device_order(numbering: Option<&Numbering>, input_values: &[u64]) -> Vec<u64> {
        match numbering {
            Some(numbering) => gather(&numbering.old_of_new, input_values),
            None => input_values.to_vec(),
        }
    }

    /// Player-0 vertices first, each player's in input order; also their count. Built in
    /// parallel over chunks of input ids: each chunk counts its player-0 vertices, a prefix
    /// sum over the chunks gives each chunk's first new id per player, and every chunk then
    /// writes its own slice of `new_of_old` and its two runs of `old_of_new`.
    fn player_zero_first(owners: &[Player]) -> (u32, Numbering) {
        let n = owners.len();
        let zeros: Vec<u32> = owners
            .par_chunks(CHUNK)
            .map(|c| c.iter().filter(|&&p| p == Player::Zero).count() as u32)
            .collect();
        let n0: u32 = zeros.iter().sum();
        let mut firsts = Vec::with_capacity(zeros.len());
        let (mut zero_at, mut one_at) = (0u32, n0);
        for (c, &z) in zeros.iter().enumerate() {
            firsts.push((zero_at, one_at));
            zero_at += z;
            one_at += (CHUNK.min(n - c * CHUNK)) as u32 - z;
        }
        let mut new_of_old = vec![0u32; n];
        new_of_old
            .par_chunks_mut(CHUNK)
            .zip(owners.par_chunks(CHUNK))
            .zip(firsts.par_iter())
            .for_each(|((ids, owners), &(mut zero_at, mut one_at))| {
                for (id, &owner) in ids.iter_mut().zip(owners) {
                    let next = if owner == Player::Zero {
                        &mut zero_at
                    } else {
                        &mut one_at
                    };
                    *id = *next;
                    *next += 1;
                }
            });
        let mut old_of_new = vec![0u32; n];
        {
            // Every chunk's vertices land in two runs of `old_of_new`, one per player; the
            // runs of different chunks are disjoint, so hand each chunk its two slices.
            let (mut zero_rest, mut one_rest) = old_of_new.split_at_mut(n0 as usize);
            let mut tasks = Vec::with_capacity(zeros.len());
            for (c, &z) in zeros.iter().enumerate() {
                let ones = CHUNK.min(n - c * CHUNK) - z as usize;
                let (zero_run, zero_tail) = std::mem::take(&mut zero_rest).split_at_mut(z as usize);
                let (one_run, one_tail) = std::mem::take(&mut one_rest).split_at_mut(ones);
                zero_rest = zero_tail;
                one_rest = one_tail;
                tasks.push((c, zero_run, one_run));
            }
            tasks.into_par_iter().for_each(|(c, zero_run, one_run)| {
                let first = c * CHUNK;
                let owners = &owners[first..(first + CHUNK).min(n)];
                let (mut z, mut o) = (0, 0);
                for (i, &owner) in owners.iter().enumerate() {
                    let v = (first + i) as u32;
                    if owner == Player::Zero {
                        zero_run[z] = v;
                        z += 1;
                    } else {
                        one_run[o] = v;
                        o += 1;
                    }
                }
            });
        }
        (
            n0,
            Numbering {
                new_of_old,
                old_of_new,
            },
        )
    }
}

/// The successors before and after renumbering.
struct Adjacency<'a, 'o> {
    old_offsets: &'a [u32],
    new_offsets: &'o [u32],
    neighbours: &'a [u32],
}

/// Applies a numbering to per-edge columns.
struct Renumber<'x> {
    identity: bool,
    old_of_new: &'x [u32],
    new_of_old: &'x [u32],
}

impl Renumber<'_> {
    /// An adjacency's neighbours (renumbered) and its weights, with the vertices in
    /// device order: borrowed when the numbering is the identity, else filled in one
    /// parallel pass over chunks of new ids, cut where the new offsets say.
    fn column<'a, W: Copy + Default + Send + Sync>(
        &self,
        adjacency: &Adjacency<'a, '_>,
        weights: &'a [W],
    ) -> (Cow<'a, [u32]>, Cow<'a, [W]>) {
        if self.identity {
            return (Cow::Borrowed(adjacency.neighbours), Cow::Borrowed(weights));
        }
        let m = adjacency.neighbours.len();
        let mut ids = vec![0u32; m];
        let mut ws = vec![W::default(); m];
        let mut tasks = Vec::with_capacity(self.old_of_new.len() / CHUNK + 1);
        let (mut ids_rest, mut ws_rest) = (&mut ids[..], &mut ws[..]);
        for (c, vertices) in self.old_of_new.chunks(CHUNK).enumerate() {
            let first = c * CHUNK;
            let len = (adjacency.new_offsets[first + vertices.len()] - adjacency.new_offsets[first])
                as usize;
            let (ids_run, ids_tail) = std::mem::take(&mut ids_rest).split_at_mut(len);
            let (ws_run, ws_tail) = std::mem::take(&mut ws_rest).split_at_mut(len);
            ids_rest = ids_tail;
            ws_rest = ws_tail;
            tasks.push((vertices, ids_run, ws_run));
        }
        let old_offsets = adjacency.old_offsets;
        let (neighbours, new_of_old) = (adjacency.neighbours, self.new_of_old);
        tasks
            .into_par_iter()
            .for_each(|(vertices, ids_run, ws_run)| {
                let mut at = 0;
                for &v in vertices {
                    let range =
                        old_offsets[v as usize] as usize..old_offsets[v as usize + 1] as usize;
                    let next = at + range.len();
                    for (slot, &u) in ids_run[at..next].iter_mut().zip(&neighbours[range.clone()]) {
                        *slot = new_of_old[u as usize];
                    }
                    ws_run[at..next].copy_from_slice(&weights[range]);
                    at = next;
                }
            });
        (Cow::Owned(ids), Cow::Owned(ws))
    }
}

/// Offsets of an adjacency whose vertices are listed in `old_of_new` order: the degrees in
/// parallel, then a prefix sum (per chunk in parallel, after one pass over chunk totals).
fn permute_offsets(old_of_new: &[u32], offsets: &[u32]) -> Vec<u32> {
    let mut new_offsets = vec![0u32; old_of_new.len() + 1];
    let totals: Vec<u32> = old_of_new
        .par_chunks(CHUNK)
        .zip(new_offsets[1..].par_chunks_mut(CHUNK))
        .map(|(vertices, out)| {
            let mut total = 0u32;
            for (slot, &v) in out.iter_mut().zip(vertices) {
                total += offsets[v as usize + 1] - offsets[v as usize];
                *slot = total;
            }
            total
        })
        .collect();
    let mut base = 0u32;
    let bases: Vec<u32> = totals
        .iter()
        .map(|&t| {
            let b = base;
            base += t;
            b
        })
        .collect();
    new_offsets[1..]
        .par_chunks_mut(CHUNK)
        .zip(bases.par_iter())
        .for_each(|(out, &b)| out.iter_mut().for_each(|x| *x += b));
    new_offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_puts_player_zero_first_and_round_trips() {
        use egsolve_core::arena::EdgeList;
        let owners = vec![Player::One, Player::Zero, Player::One, Player::Zero];
        let mut edges = EdgeList::default();
        for (s, t, w) in [
            (0, 1, -1),
            (0, 3, 2),
            (1, 2, 5),
            (2, 0, -7),
            (3, 3, 0),
            (3, 0, 4),
        ] {
            edges.push(s, t, w);
        }
        let arena = Arena::from_edges(owners, edges, None).unwrap();
        let wide = DeviceLayout::new(&arena, true, VertexOrder::PlayersFirst);
        assert_eq!(wide.succ_weights.bits(), 64);
        let layout = DeviceLayout::new(&arena, false, VertexOrder::PlayersFirst);
        assert_eq!(layout.n0, 2);
        assert!(
            layout.owners.is_none(),
            "the kernels tell players apart by id"
        );
        assert_eq!(
            layout.succ_weights.bits(),
            16,
            "the arena's storage width is kept"
        );
        for k in 0..6 {
            assert_eq!(wide.succ_weights.get(k), layout.succ_weights.get(k));
        }
        let old_of_new = &layout.numbering.as_ref().expect("renumbered").old_of_new;
        assert_eq!(old_of_new, &vec![1, 3, 0, 2]);
        for d in 0..4u32 {
            let v = old_of_new[d as usize];
            assert_eq!(d < layout.n0, arena.owner(v) == Player::Zero);
            let range = layout.succ_offsets[d as usize] as usize
                ..layout.succ_offsets[d as usize + 1] as usize;
            let got: Vec<(u32, i64)> = range
                .map(|k| {
                    (
                        old_of_new[layout.succ_targets[k] as usize],
                        layout.succ_weights.get(k),
                    )
                })
                .collect();
            assert_eq!(got, arena.successors(v).collect::<Vec<_>>());
        }
        let values = vec![10, 11, 12, 13];
        assert_eq!(
            layout.to_input_order(layout.to_device_order(&values)),
            values
        );
        assert_eq!(layout.to_device_order(&values), vec![11, 13, 10, 12]);

        let input = DeviceLayout::new(&arena, false, VertexOrder::Input);
        assert!(input.numbering.is_none());
        assert_eq!(input.n0, 2);
        assert_eq!(input.owners.as_deref(), Some(&[1u8, 0, 1, 0][..]));
        assert!(
            matches!(input.succ_targets, Cow::Borrowed(_)),
            "nothing is copied"
        );
        assert_eq!(&input.succ_targets[..], arena.succ_targets());
        assert_eq!(&input.succ_offsets[..], arena.succ_offsets());
        assert_eq!(input.to_device_order(&values), values);
    }

    #[test]
    fn parallel_renumbering_matches_a_sequential_one_across_chunks() {
        // Several chunks of ids, players in runs and alone, so chunk boundaries split runs.
        let params = egsolve_core::generate::RandomParams {
            vertices: 3 * CHUNK as u32 + 77,
            player1_percent: 30,
            ..Default::default()
        };
        let arena = egsolve_core::generate::random(params, 9);
        let layout = DeviceLayout::new(&arena, false, VertexOrder::PlayersFirst);
        let numbering = layout.numbering.as_ref().expect("renumbered");
        let expected: Vec<u32> = (0..arena.vertex_count() as u32)
            .filter(|&v| arena.owner(v) == Player::Zero)
            .chain((0..arena.vertex_count() as u32).filter(|&v| arena.owner(v) == Player::One))
            .collect();
        assert_eq!(numbering.old_of_new, expected);
        for (d, &v) in numbering.old_of_new.iter().enumerate() {
            assert_eq!(numbering.new_of_old[v as usize], d as u32);
        }
        let mut k = 0usize;
        for &v in &numbering.old_of_new {
            for (target, weight) in arena.successors(v) {
                assert_eq!(
                    layout.succ_targets[k],
                    numbering.new_of_old[target as usize]
                );
                assert_eq!(layout.succ_weights.get(k), weight);
                k += 1;
            }
        }
        assert_eq!(k, arena.edge_count());
        assert_eq!(layout.succ_offsets.last(), Some(&(k as u32)));
    }

    #[test]
    fn energies_are_narrow_exactly_when_the_bound_and_top_fit_32_bits() {
        assert_eq!(value_bits(0), 32);
        assert_eq!(value_bits(u32::MAX as u64 - 1), 32);
        assert_eq!(value_bits(u32::MAX as u64), 64);
        assert_eq!(value_bits(u64::MAX - 1), 64);
        assert!(device_bytes(100, 1000, 16, 32) < device_bytes(100, 1000, 64, 64));
    }

    #[test]
    fn lanes_follow_the_measured_optima() {
        assert_eq!(lanes_for_degree(1.0), 1);
        assert_eq!(lanes_for_degree(2.5), 2);
        assert_eq!(lanes_for_degree(4.5), 4);
        assert_eq!(lanes_for_degree(16.5), 8);
        assert_eq!(lanes_for_degree(129.0), 32);
        assert_eq!(lanes_for_degree(873.0), 32);
    }
}
