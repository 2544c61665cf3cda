//! The certificate of a parity game answer, read directly off the priorities (no energies,
//! so it also certifies answers of the parity solver, which has no credits):
//!
//! 1. **Strategies stay**: every vertex won by its owner has a move, along an edge, to a
//!    vertex the owner also wins; a vertex won by the other player has no move, and all its
//!    successors are won by that player too (its owner cannot escape). So each player's
//!    winning region is closed under the plays its strategy allows.
//! 2. **Cycles are won**: in the graph of `W_p` where player `p` follows its strategy and
//!    the opponent moves freely, every cycle's highest priority has `p`'s parity. Checked
//!    per strongly connected component: a cyclic component whose highest priority has the
//!    opponent's parity holds a cycle through that vertex (a violation); one whose highest
//!    priority is `p`'s is fine for every cycle through it, and the rest of the component
//!    without that priority is checked again the same way.
//!
//! Together: every play from `W_p` consistent with `p`'s strategy stays in `W_p` and ends in
//! one component where the highest priority seen infinitely often is the top of some cycle,
//! hence `p`'s: `p` wins from every vertex of `W_p` with that strategy, for both `p`, which
//! also makes the winners the true ones. Cost: O(n + m) for 1, and for 2 O(n + m) per
//! priority level peeled (at most the number of distinct priorities, usually a few).

use super::scc::Components;
use super::{CheckError, Report};
use crate::arena::{Arena, VertexId};
use crate::solve::NO_MOVE;

/// A claimed parity answer: the winner (0 or 1) and the strategy successor
/// ([`NO_MOVE`] for none) of every vertex.
#[derive(Debug, Clone, Copy)]
pub struct ParityClaim<'a> {
    /// Winner per vertex.
    pub winner: &'a [u8],
    /// Strategy successor per vertex.
    pub strategy: &'a [VertexId],
}

/// Checks `claim` against the parity game `arena` with `priorities` (one per vertex, as
/// read); see the module docs for what is certified.
pub fn check_parity(
    arena: &Arena,
    priorities: &[u64],
    claim: ParityClaim<'_>,
) -> Result<Report, CheckError> {
    let n = arena.vertex_count();
    for len in [priorities.len(), claim.winner.len(), claim.strategy.len()] {
        if len != n {
            return Err(CheckError::WrongSize {
                claimed: len,
                actual: n,
            });
        }
    }
    let mut report = Report::default();
    check_moves(arena, claim, &mut report);
    if report.passed() {
        // The cycle check needs closed regions and valid moves.
        for player in [0u8, 1] {
            check_cycles(arena, priorities, claim, player, &mut report);
        }
    }
    Ok(report)
}

/// Check 1 at every vertex.
fn check_moves(arena: &Arena, claim: ParityClaim<'_>, report: &mut Report) {
    for v in 0..arena.vertex_count() as VertexId {
        let winner = claim.winner[v as usize];
        if winner > 1 {
            report.fail(v, format!("winner {winner} is not 0 or 1"));
            continue;
        }
        let owner = arena.owner(v).index();
        let choice = claim.strategy[v as usize];
        if owner == winner {
            if choice == NO_MOVE {
                report.fail(
                    v,
                    format!("player {owner} wins here but no strategy move is given"),
                );
            } else if !arena.successors(v).any(|(u, _)| u == choice) {
                report.fail(v, format!("strategy move to {choice} is not an edge"));
            } else if claim.winner[choice as usize] != winner {
                report.fail(
                    v,
                    format!(
                        "player {winner}'s strategy moves to {choice}, which player {} wins",
                        1 - winner
                    ),
                );
            }
        } else {
            if choice != NO_MOVE {
                report.fail(
                    v,
                    "a strategy move is given, but the owner does not win here".to_string(),
                );
            }
            if let Some((u, _)) = arena
                .successors(v)
                .find(|&(u, _)| claim.winner[u as usize] != winner)
            {
                report.fail(
                    v,
                    format!(
                        "W{winner} is not closed: player {owner} owns this vertex and can move \
                         to {u}, which it wins"
                    ),
                );
            }
        }
    }
}

/// Check 2 for `player`: peels the components of its region under its strategy.
fn check_cycles(
    arena: &Arena,
    priorities: &[u64],
    claim: ParityClaim<'_>,
    player: u8,
    report: &mut Report,
) {
    let n = arena.vertex_count();
    let targets = arena.succ_targets();
    let successors = |v: VertexId| -> &[VertexId] {
        if arena.owner(v).index() == player {
            std::slice::from_ref(&claim.strategy[v as usize])
        } else {
            &targets[arena.succ_range(v)]
        }
    };
    // `member[v] == set` while `v` is in the set being examined.
    let mut member = vec![u32::MAX; n];
    let mut finder = Components::new(n);
    let region: Vec<VertexId> = (0..n as VertexId)
        .filter(|&v| claim.winner[v as usize] == player)
        .collect();
    let mut pending: Vec<Vec<VertexId>> = vec![region];
    let mut set = 0u32;
    while let Some(vertices) = pending.pop() {
        for &v in &vertices {
            member[v as usize] = set;
        }
        let mut found: Vec<(VertexId, String)> = Vec::new();
        finder.each(
            vertices.iter().copied(),
            successors,
            |u| member[u as usize] == set,
            |component, cyclic| {
                if !cyclic {
                    return;
                }
                let &top = component
                    .iter()
                    .max_by_key(|&&v| priorities[v as usize])
                    .expect("components are not empty");
                let highest = priorities[top as usize];
                if (highest % 2) as u8 != player {
                    found.push((
                        top,
                        format!(
                            "in W{player} under player {player}'s strategy, a cycle through this \
                             vertex has highest priority {highest}, which is {} (component of {} \
                             vertices)",
                            if highest % 2 == 0 { "even" } else { "odd" },
                            component.len()
                        ),
                    ));
                    return;
                }
                let rest: Vec<VertexId> = component
                    .iter()
                    .copied()
                    .filter(|&v| priorities[v as usize] != highest)
                    .collect();
                if !rest.is_empty() {
                    pending.push(rest);
                }
            },
        );
        for (v, what) in found {
            report.fail(v, what);
        }
        set += 1;
        if report.truncated {
            return;
        }
    }
}
