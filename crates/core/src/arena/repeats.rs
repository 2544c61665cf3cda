//! Parallel edges counted: for each edge of a successor list, how many earlier edges of the
//! list lead to the same target (the `k` of the transpose's checks, [`super::parts`] and
//! [`super::fingerprint`]).

use rayon::prelude::*;

use super::VertexId;

/// Successor lists of this many edges or fewer count parallel edges by a quadratic scan.
pub(super) const SHORT_LIST: usize = 32;

/// For a long successor list, how many earlier entries equal each entry (`None` for a short
/// list, which the caller scans instead with [`earlier`]): a sort of (target, position)
/// pairs.
pub(super) fn occurrences(list: &[VertexId]) -> Option<Vec<u32>> {
    if list.len() <= SHORT_LIST {
        return None;
    }
    let mut order: Vec<(VertexId, u32)> = list
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, i as u32))
        .collect();
    if list.len() >= 1 << 16 {
        order.par_sort_unstable();
    } else {
        order.sort_unstable();
    }
    let mut k = vec![0u32; list.len()];
    for i in 1..order.len() {
        if order[i].0 == order[i - 1].0 {
            k[order[i].1 as usize] = k[order[i - 1].1 as usize] + 1;
        }
    }
    Some(k)
}

/// Entry `i`'s earlier equals: from `repeats` (what [`occurrences`] gave) or by a scan.
#[inline(always)]
pub(super) fn earlier(list: &[VertexId], repeats: &Option<Vec<u32>>, i: usize) -> u32 {
    match repeats {
        Some(r) => r[i],
        None => list[..i].iter().filter(|&&x| x == list[i]).count() as u32,
    }
}
