//! A brute-force oracle for tiny games, independent of every solver: enumerate positional
//! strategies of both players (positional strategies suffice for both in energy games).
//! A pair of strategies makes the play from `v` a lasso; it needs credit
//! `max(0, −min prefix sum)` over the stem and one lap of the cycle, or ⊤ if the cycle is
//! negative. Then `credit(v) = min over σ0 of max over σ1`. Exponential: meant for arenas of
//! a handful of vertices, in tests.
//!
//! [`parity_winners`] does the same for parity games, on the priorities alone (positional
//! strategies suffice there too): player 0 wins `v` when some σ0 makes the highest priority
//! on the cycle of every lasso from `v` even.

use crate::arena::{Arena, Player, VertexId};
use crate::solve::TOP;

/// Least credits by exhaustive search. Returns `None` if the arena has more than
/// `max_profiles` strategy profiles (product of all out-degrees).
pub fn credits(arena: &Arena, max_profiles: u64) -> Option<Vec<u64>> {
    best_of_worst(arena, max_profiles, TOP, |full, v| {
        lasso_credit(arena, full, v)
    })
}

/// The winner (0 or 1) of every vertex of the parity game `arena` with `priorities`, by
/// exhaustive search; `None` past `max_profiles` strategy profiles.
pub fn parity_winners(arena: &Arena, priorities: &[u64], max_profiles: u64) -> Option<Vec<u8>> {
    let lost = |full: &[usize], v| lasso_top(arena, priorities, full, v) % 2;
    let best = best_of_worst(arena, max_profiles, 1, lost)?;
    Some(best.into_iter().map(|w| w as u8).collect())
}

/// For every vertex, the least over player 0's positional strategies of the greatest over
/// player 1's of `cost` (what the play from the vertex under both costs player 0; `worst`
/// is the greatest cost there is); `None` past `max_profiles` strategy profiles.
fn best_of_worst(
    arena: &Arena,
    max_profiles: u64,
    worst: u64,
    cost: impl Fn(&[usize], VertexId) -> u64,
) -> Option<Vec<u64>> {
    let n = arena.vertex_count();
    let degrees: Vec<usize> = (0..n as VertexId)
        .map(|v| arena.successors(v).len())
        .collect();
    let profiles = degrees
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))?;
    if profiles > max_profiles {
        return None;
    }
    let of = |p: Player| -> Vec<usize> {
        (0..n)
            .filter(|&v| arena.owner(v as VertexId) == p)
            .collect()
    };
    let (zero, one) = (of(Player::Zero), of(Player::One));
    let mut best = vec![worst; n];
    let mut choice = vec![0usize; n];
    for_each_choice(&zero, &degrees, &mut choice, &mut |choice| {
        let mut greatest = vec![0u64; n];
        let mut inner = choice.to_vec();
        for_each_choice(&one, &degrees, &mut inner, &mut |full| {
            for (v, greatest) in greatest.iter_mut().enumerate() {
                *greatest = (*greatest).max(cost(full, v as VertexId));
            }
        });
        for (best, greatest) in best.iter_mut().zip(&greatest) {
            *best = (*best).min(*greatest);
        }
    });
    Some(best)
}

/// The highest priority on the cycle of the lasso from `start` under `choice`.
fn lasso_top(arena: &Arena, priorities: &[u64], choice: &[usize], start: VertexId) -> u64 {
    let mut visit = vec![usize::MAX; arena.vertex_count()];
    let mut path = Vec::new();
    let mut v = start;
    while visit[v as usize] == usize::MAX {
        visit[v as usize] = path.len();
        path.push(v);
        v = arena
            .successors(v)
            .nth(choice[v as usize])
            .expect("choice within degree")
            .0;
    }
    path[visit[v as usize]..]
        .iter()
        .map(|&u| priorities[u as usize])
        .max()
        .expect("a cycle has a vertex")
}

/// Calls `f` with every assignment of successor indices to `vertices` (others unchanged).
fn for_each_choice(
    vertices: &[usize],
    degrees: &[usize],
    choice: &mut [usize],
    f: &mut dyn FnMut(&[usize]),
) {
    for &v in vertices {
        choice[v] = 0;
    }
    loop {
        f(choice);
        let mut i = 0;
        loop {
            if i == vertices.len() {
                return;
            }
            let v = vertices[i];
            choice[v] += 1;
            if choice[v] < degrees[v] {
                break;
            }
            choice[v] = 0;
            i += 1;
        }
    }
}

/// The credit the lasso from `start` needs when every vertex `v` takes its `choice[v]`-th edge.
fn lasso_credit(arena: &Arena, choice: &[usize], start: VertexId) -> u64 {
    let n = arena.vertex_count();
    let mut first_visit = vec![usize::MAX; n];
    let mut sums: Vec<i128> = vec![0];
    let mut v = start;
    loop {
        first_visit[v as usize] = sums.len() - 1;
        let (u, w) = arena
            .successors(v)
            .nth(choice[v as usize])
            .expect("choice within degree");
        sums.push(sums.last().unwrap() + w as i128);
        v = u;
        if first_visit[v as usize] != usize::MAX {
            break;
        }
    }
    let cycle = sums.last().unwrap() - sums[first_visit[v as usize]];
    if cycle < 0 {
        return TOP;
    }
    let lowest = *sums.iter().min().unwrap();
    (-lowest).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::EdgeList;

    #[test]
    fn small_cases_by_hand() {
        // 0 (player 0): to 1 with −3 or to itself with −1; 1 (player 1): self-loop 0.
        let mut e = EdgeList::default();
        e.push(0, 1, -3);
        e.push(0, 0, -1);
        e.push(1, 1, 0);
        let a = Arena::from_edges(vec![Player::Zero, Player::One], e, None).unwrap();
        assert_eq!(credits(&a, 100).unwrap(), vec![3, 0]);
        // Player 1 at 0 chooses between a zero loop and a negative loop.
        let mut e = EdgeList::default();
        e.push(0, 0, 0);
        e.push(0, 1, 2);
        e.push(1, 0, -3);
        let a = Arena::from_edges(vec![Player::One, Player::Zero], e, None).unwrap();
        assert_eq!(credits(&a, 100).unwrap(), vec![TOP, TOP]);
    }

    #[test]
    fn parity_winners_by_hand() {
        // 0 (player 0, priority 1) chooses between its own loop and 1 (player 1, priority 2),
        // whose only move is back to 0: the cycle 0 1 has top 2, player 0 wins both; vertex
        // 2 (priority 3) loops alone: player 1 wins it.
        let mut e = EdgeList::default();
        for (s, t) in [(0, 0), (0, 1), (1, 0), (2, 2)] {
            e.push(s, t, 0);
        }
        let a = Arena::from_edges(vec![Player::Zero, Player::One, Player::Zero], e, None).unwrap();
        assert_eq!(parity_winners(&a, &[1, 2, 3], 100).unwrap(), vec![0, 0, 1]);
    }
}
