//! The game as the device holds it: vertices renumbered so that player-0 vertices come
//! first (a warp lifting consecutive vertices then takes only minima or only maxima), CSR
//! successors and CSC predecessors in the new numbering, and the memory that needs.
//!
//! Outputs speak input ids: [`DeviceLayout::to_input_order`] undoes the renumbering.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::arena::{Arena, Player};

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
    pub succ_weights: Cow<'a, [i64]>,
    /// CSC offsets (`n + 1`).
    pub pred_offsets: Cow<'a, [u32]>,
    /// CSC sources (`m`).
    pub pred_sources: Cow<'a, [u32]>,
    /// CSC weights (`m`).
    pub pred_weights: Cow<'a, [i64]>,
}

/// Bytes of device memory a game of `n` vertices and `m` edges needs: both adjacency
/// copies, credits, two frontiers, stamps and the round state.
pub fn device_bytes(n: u64, m: u64) -> u64 {
    let adjacency = 2 * (4 * (n + 1) + m * (4 + 8));
    let per_vertex = n * (8 + 4 + 4 + 4);
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
    /// Renumbers `arena`; the arena guarantees `m < u32::MAX`.
    pub fn new(arena: &'a Arena) -> DeviceLayout<'a> {
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
        if identity {
            return DeviceLayout {
                n: n as u32,
                m: m as u32,
                n0,
                new_of_old,
                old_of_new,
                succ_offsets: Cow::Borrowed(arena.succ_offsets()),
                succ_targets: Cow::Borrowed(arena.succ_targets()),
                succ_weights: arena.succ_weights().to_i64(),
                pred_offsets: Cow::Borrowed(arena.pred_offsets()),
                pred_sources: Cow::Borrowed(arena.pred_sources()),
                pred_weights: arena.pred_weights().to_i64(),
            };
        }
        let (succ_offsets, succ_targets, succ_weights) = permute(
            &old_of_new,
            &new_of_old,
            arena.succ_offsets(),
            arena.succ_targets(),
            &arena.succ_weights().to_i64(),
        );
        let (pred_offsets, pred_sources, pred_weights) = permute(
            &old_of_new,
            &new_of_old,
            arena.pred_offsets(),
            arena.pred_sources(),
            &arena.pred_weights().to_i64(),
        );
        DeviceLayout {
            n: n as u32,
            m: m as u32,
            n0,
            new_of_old,
            old_of_new,
            succ_offsets: Cow::Owned(succ_offsets),
            succ_targets: Cow::Owned(succ_targets),
            succ_weights: Cow::Owned(succ_weights),
            pred_offsets: Cow::Owned(pred_offsets),
            pred_sources: Cow::Owned(pred_sources),
            pred_weights: Cow::Owned(pred_weights),
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

/// One adjacency (offsets, neighbours, weights) in the new numbering, filled in parallel
/// over chunks of new vertex ids.
fn permute(
    old_of_new: &[u32],
    new_of_old: &[u32],
    offsets: &[u32],
    neighbours: &[u32],
    weights: &[i64],
) -> (Vec<u32>, Vec<u32>, Vec<i64>) {
    let mut new_offsets = Vec::with_capacity(offsets.len());
    new_offsets.push(0u32);
    let mut total = 0u32;
    for &v in old_of_new {
        total += offsets[v as usize + 1] - offsets[v as usize];
        new_offsets.push(total);
    }
    let mut new_neighbours = vec![0u32; neighbours.len()];
    let mut new_weights = vec![0i64; weights.len()];
    // Cut the outputs at chunk boundaries so that every task owns its slices.
    let mut tasks = Vec::new();
    let (mut rest_n, mut rest_w) = (&mut new_neighbours[..], &mut new_weights[..]);
    for (c, ids) in old_of_new.chunks(CHUNK).enumerate() {
        let first = c * CHUNK;
        let len = (new_offsets[first + ids.len()] - new_offsets[first]) as usize;
        let (out_n, tail_n) = std::mem::take(&mut rest_n).split_at_mut(len);
        let (out_w, tail_w) = std::mem::take(&mut rest_w).split_at_mut(len);
        (rest_n, rest_w) = (tail_n, tail_w);
        tasks.push((ids, out_n, out_w));
    }
    tasks.into_par_iter().for_each(|(ids, out_n, out_w)| {
        let mut at = 0;
        for &v in ids {
            let range = offsets[v as usize] as usize..offsets[v as usize + 1] as usize;
            let len = range.len();
            for (slot, &u) in out_n[at..at + len]
                .iter_mut()
                .zip(&neighbours[range.clone()])
            {
                *slot = new_of_old[u as usize];
            }
            out_w[at..at + len].copy_from_slice(&weights[range]);
            at += len;
        }
    });
    (new_offsets, new_neighbours, new_weights)
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
        let layout = DeviceLayout::new(&arena);
        assert_eq!(layout.n0, 2);
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
                        layout.succ_weights[k],
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
                        layout.pred_weights[k],
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
    fn lanes_follow_the_measured_optima() {
        assert_eq!(lanes_for_degree(1.0), 1);
        assert_eq!(lanes_for_degree(2.5), 2);
        assert_eq!(lanes_for_degree(4.5), 4);
        assert_eq!(lanes_for_degree(16.5), 8);
        assert_eq!(lanes_for_degree(129.0), 32);
        assert_eq!(lanes_for_degree(873.0), 32);
    }
}
