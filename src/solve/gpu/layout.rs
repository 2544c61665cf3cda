//! The game as the device holds it: vertices renumbered so that player-0 vertices come
//! first (a warp lifting consecutive vertices then takes only minima or only maxima), CSR
//! successors and CSC predecessors in the new numbering, and the memory that needs.
//!
//! Weights keep the arena's storage width (16, 32 or 64 bits) and energies are 32 bits
//! wide when the bound allows ([`value_bits`]): the kernels are instantiated for each pair,
//! so a round moves as few bytes as the game needs.
//!
//! Outputs speak input ids: [`DeviceLayout::to_input_order`] undoes the renumbering.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::arena::{Arena, Player, Weight, Width};

/// One weight column (successor or predecessor order) at the arena's storage width.
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

/// Host-side arrays in device order, ready to upload: borrowed from the arena when its
/// player-0 vertices already come first, renumbered copies (built in parallel) otherwise.
pub struct DeviceLayout<'a> {
    /// Vertices.
    pub n: u32,
    /// Edges.
    pub m: u32,
    /// Player-0 vertices: new ids `0..n0`.
    pub n0: u32,
    /// `new_of_old[v]`: the device id of input vertex `v`.
    pub new_of_old: Vec<u32>,
    /// `old_of_new[d]`: the input id of device vertex `d`.
    pub old_of_new: Vec<u32>,
    /// CSR offsets (`n + 1`).
    pub succ_offsets: Cow<'a, [u32]>,
    /// CSR targets (`m`).
    pub succ_targets: Cow<'a, [u32]>,
    /// CSR weights (`m`).
    pub succ_weights: WeightColumn<'a>,
    /// CSC offsets (`n + 1`).
    pub pred_offsets: Cow<'a, [u32]>,
    /// CSC sources (`m`).
    pub pred_sources: Cow<'a, [u32]>,
    /// CSC weights (`m`).
    pub pred_weights: WeightColumn<'a>,
}

/// Bytes of device memory a game of `n` vertices and `m` edges needs, with weights and
/// energies of the given widths: both adjacency copies, credits, two frontiers, stamps and
/// the round state.
pub fn device_bytes(n: u64, m: u64, weight_bits: u32, value_bits: u32) -> u64 {
    let adjacency = 2 * (4 * (n + 1) + m * (4 + weight_bits as u64 / 8));
    let per_vertex = n * (value_bits as u64 / 8 + 4 + 4 + 4);
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
    /// Renumbers `arena`; the arena guarantees `m < u32::MAX`. `wide`: weights as `i64`
    /// whatever the arena's storage width.
    pub fn new(arena: &'a Arena, wide: bool) -> DeviceLayout<'a> {
        let n = arena.vertex_count();
        let m = arena.edge_count();
        let owners = arena.owners();
        let mut old_of_new: Vec<u32> = Vec::with_capacity(n);
        old_of_new.extend((0..n as u32).filter(|&v| owners[v as usize] == Player::Zero));
        let n0 = old_of_new.len() as u32;
        old_of_new.extend((0..n as u32).filter(|&v| owners[v as usize] == Player::One));
        let identity = old_of_new.iter().enumerate().all(|(d, &v)| d as u32 == v);
        let mut new_of_old = vec![0u32; n];
        for (d, &v) in old_of_new.iter().enumerate() {
            new_of_old[v as usize] = d as u32;
        }
        let (succ_weights, pred_weights) = match arena.weight_width() {
            Width::I16 => {
                let (s, p) = weight_columns::<i16>(arena, identity, &old_of_new);
                (WeightColumn::I16(s), WeightColumn::I16(p))
            }
            Width::I32 => {
                let (s, p) = weight_columns::<i32>(arena, identity, &old_of_new);
                (WeightColumn::I32(s), WeightColumn::I32(p))
            }
            Width::I64 => {
                let (s, p) = weight_columns::<i64>(arena, identity, &old_of_new);
                (WeightColumn::I64(s), WeightColumn::I64(p))
            }
        };
        let (succ_weights, pred_weights) = if wide {
            (succ_weights.widened(), pred_weights.widened())
        } else {
            (succ_weights, pred_weights)
        };
        let (succ_offsets, succ_targets, pred_offsets, pred_sources) = if identity {
            (
                Cow::Borrowed(arena.succ_offsets()),
                Cow::Borrowed(arena.succ_targets()),
                Cow::Borrowed(arena.pred_offsets()),
                Cow::Borrowed(arena.pred_sources()),
            )
        } else {
            let (so, st) = permute_ids(
                &old_of_new,
                &new_of_old,
                arena.succ_offsets(),
                arena.succ_targets(),
            );
            let (po, ps) = permute_ids(
                &old_of_new,
                &new_of_old,
                arena.pred_offsets(),
                arena.pred_sources(),
            );
            (
                Cow::Owned(so),
                Cow::Owned(st),
                Cow::Owned(po),
                Cow::Owned(ps),
            )
        };
        DeviceLayout {
            n: n as u32,
            m: m as u32,
            n0,
            new_of_old,
            old_of_new,
            succ_offsets,
            succ_targets,
            succ_weights,
            pred_offsets,
            pred_sources,
            pred_weights,
        }
    }

    /// Device-ordered values back in input order.
    pub fn to_input_order(&self, device_values: &[u64]) -> Vec<u64> {
        gather(&self.new_of_old, device_values)
    }

    /// Input-ordered values in device order.
    pub fn to_device_order(&self, input_values: &[u64]) -> Vec<u64> {
        gather(&self.old_of_new, input_values)
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

/// Both weight columns of `arena` (stored as `W`) in device order: borrowed when the
/// numbering is the identity.
fn weight_columns<'a, W: Weight + Default>(
    arena: &'a Arena,
    identity: bool,
    old_of_new: &[u32],
) -> (Cow<'a, [W]>, Cow<'a, [W]>) {
    let (succ, pred) = arena
        .typed_weights::<W>()
        .expect("dispatched on the arena's weight width");
    if identity {
        return (Cow::Borrowed(succ), Cow::Borrowed(pred));
    }
    (
        Cow::Owned(permute_edges(old_of_new, arena.succ_offsets(), succ, |w| w)),
        Cow::Owned(permute_edges(old_of_new, arena.pred_offsets(), pred, |w| w)),
    )
}

/// One adjacency's offsets and neighbours in the new numbering.
fn permute_ids(
    old_of_new: &[u32],
    new_of_old: &[u32],
    offsets: &[u32],
    neighbours: &[u32],
) -> (Vec<u32>, Vec<u32>) {
    let new_offsets = permute_offsets(old_of_new, offsets);
    let new_neighbours = permute_edges(old_of_new, offsets, neighbours, |u| new_of_old[u as usize]);
    (new_offsets, new_neighbours)
}

/// Offsets of an adjacency whose vertices are listed in `old_of_new` order.
fn permute_offsets(old_of_new: &[u32], offsets: &[u32]) -> Vec<u32> {
    let mut new_offsets = Vec::with_capacity(offsets.len());
    new_offsets.push(0u32);
    let mut total = 0u32;
    for &v in old_of_new {
        total += offsets[v as usize + 1] - offsets[v as usize];
        new_offsets.push(total);
    }
    new_offsets
}

/// One per-edge column (`offsets` delimit each vertex's edges) with the vertices in
/// `old_of_new` order and every entry mapped by `map`, filled in parallel over chunks of
/// new vertex ids.
fn permute_edges<T: Copy + Send + Sync, U: Copy + Send + Sync + Default>(
    old_of_new: &[u32],
    offsets: &[u32],
    column: &[T],
    map: impl Fn(T) -> U + Sync,
) -> Vec<U> {
    let mut out = vec![U::default(); column.len()];
    // Cut the output at chunk boundaries so that every task owns its slice.
    let mut tasks = Vec::new();
    let mut rest = &mut out[..];
    for ids in old_of_new.chunks(CHUNK) {
        let len: usize = ids
            .iter()
            .map(|&v| (offsets[v as usize + 1] - offsets[v as usize]) as usize)
            .sum();
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(len);
        rest = tail;
        tasks.push((ids, mine));
    }
    tasks.into_par_iter().for_each(|(ids, mine)| {
        let mut at = 0;
        for &v in ids {
            let range = offsets[v as usize] as usize..offsets[v as usize + 1] as usize;
            let len = range.len();
            for (slot, &x) in mine[at..at + len].iter_mut().zip(&column[range]) {
                *slot = map(x);
            }
            at += len;
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_puts_player_zero_first_and_round_trips() {
        use crate::arena::EdgeList;
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
        let wide = DeviceLayout::new(&arena, true);
        assert_eq!(wide.succ_weights.bits(), 64);
        let layout = DeviceLayout::new(&arena, false);
        assert_eq!(layout.n0, 2);
        assert_eq!(
            layout.succ_weights.bits(),
            16,
            "the arena's storage width is kept"
        );
        assert_eq!(layout.pred_weights.bits(), 16);
        for k in 0..6 {
            assert_eq!(wide.succ_weights.get(k), layout.succ_weights.get(k));
            assert_eq!(wide.pred_weights.get(k), layout.pred_weights.get(k));
        }
        assert_eq!(layout.old_of_new, vec![1, 3, 0, 2]);
        for d in 0..4u32 {
            let v = layout.old_of_new[d as usize];
            assert_eq!(d < layout.n0, arena.owner(v) == Player::Zero);
            let range = layout.succ_offsets[d as usize] as usize
                ..layout.succ_offsets[d as usize + 1] as usize;
            let got: Vec<(u32, i64)> = range
                .map(|k| {
                    (
                        layout.old_of_new[layout.succ_targets[k] as usize],
                        layout.succ_weights.get(k),
                    )
                })
                .collect();
            assert_eq!(got, arena.successors(v).collect::<Vec<_>>());
            let range = layout.pred_offsets[d as usize] as usize
                ..layout.pred_offsets[d as usize + 1] as usize;
            let got: Vec<(u32, i64)> = range
                .map(|k| {
                    (
                        layout.old_of_new[layout.pred_sources[k] as usize],
                        layout.pred_weights.get(k),
                    )
                })
                .collect();
            assert_eq!(got, arena.predecessors(v).collect::<Vec<_>>());
        }
        let values = vec![10, 11, 12, 13];
        assert_eq!(
            layout.to_input_order(&layout.to_device_order(&values)),
            values
        );
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
