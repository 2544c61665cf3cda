//! The game as the device holds it: vertices renumbered so that player-0 vertices come
//! first (a warp lifting consecutive vertices then takes only minima or only maxima), CSR
//! successors and CSC predecessors in the new numbering, and the memory that needs.
//!
//! Outputs speak input ids: [`DeviceLayout::to_input_order`] undoes the renumbering.

use crate::arena::{Arena, Player};

/// Host-side arrays in device order, ready to upload.
pub struct DeviceLayout {
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
    pub succ_offsets: Vec<u32>,
    /// CSR targets (`m`).
    pub succ_targets: Vec<u32>,
    /// CSR weights (`m`).
    pub succ_weights: Vec<i64>,
    /// CSC offsets (`n + 1`).
    pub pred_offsets: Vec<u32>,
    /// CSC sources (`m`).
    pub pred_sources: Vec<u32>,
    /// CSC weights (`m`).
    pub pred_weights: Vec<i64>,
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

impl DeviceLayout {
    /// Renumbers `arena`; the arena guarantees `m < u32::MAX`.
    pub fn new(arena: &Arena) -> DeviceLayout {
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
                succ_offsets: arena.succ_offsets().to_vec(),
                succ_targets: arena.succ_targets().to_vec(),
                succ_weights: arena.succ_weights().to_vec(),
                pred_offsets: arena.pred_offsets().to_vec(),
                pred_sources: arena.pred_sources().to_vec(),
                pred_weights: arena.pred_weights().to_vec(),
            };
        }
        let (succ_offsets, succ_targets, succ_weights) = permute(
            &old_of_new,
            &new_of_old,
            arena.succ_offsets(),
            arena.succ_targets(),
            arena.succ_weights(),
        );
        let (pred_offsets, pred_sources, pred_weights) = permute(
            &old_of_new,
            &new_of_old,
            arena.pred_offsets(),
            arena.pred_sources(),
            arena.pred_weights(),
        );
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
        self.new_of_old
            .iter()
            .map(|&d| device_values[d as usize])
            .collect()
    }

    /// Input-ordered values in device order.
    pub fn to_device_order(&self, input_values: &[u64]) -> Vec<u64> {
        self.old_of_new
            .iter()
            .map(|&v| input_values[v as usize])
            .collect()
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

/// One adjacency (offsets, neighbours, weights) in the new numbering.
fn permute(
    old_of_new: &[u32],
    new_of_old: &[u32],
    offsets: &[u32],
    neighbours: &[u32],
    weights: &[i64],
) -> (Vec<u32>, Vec<u32>, Vec<i64>) {
    let mut new_offsets = Vec::with_capacity(offsets.len());
    let mut new_neighbours = Vec::with_capacity(neighbours.len());
    let mut new_weights = Vec::with_capacity(weights.len());
    new_offsets.push(0u32);
    for &v in old_of_new {
        let range = offsets[v as usize] as usize..offsets[v as usize + 1] as usize;
        new_neighbours.extend(
            neighbours[range.clone()]
                .iter()
                .map(|&u| new_of_old[u as usize]),
        );
        new_weights.extend_from_slice(&weights[range]);
        new_offsets.push(new_neighbours.len() as u32);
    }
    (new_offsets, new_neighbours, new_weights)
}

#[cfg(test)]
mod tests {
    use super::*;

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
