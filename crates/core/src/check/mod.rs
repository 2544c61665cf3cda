//! Certificates: checking a claimed solution against the arena, independently of how it was
//! computed. Used by `egsolve check` and by every backend's tests. This module certifies
//! energy answers (credits); [`parity`] certifies parity game answers (winners and
//! strategies) directly on the priorities, which is all there is to check for an answer
//! of the parity solver.
//!
//! # What is certified
//! 1. **Range**: every finite credit is at most `M` (the least measure never exceeds it).
//! 2. **Credits suffice** (O(m)): `f` is an energy progress measure — at every player-0 vertex
//!    of `W0` the strategy edge meets `f(v) >= f(u) ⊖ w(v,u)`, and at every player-1 vertex of
//!    `W0` all edges meet it. Hence from `v ∈ W0`, player 0 playing the strategy never needs
//!    more than `f(v)`: every credit is sufficient and every `W0` vertex is won by player 0.
//! 3. **`W1` is won by player 1**: `W1` is closed (player-0 vertices of `W1` have all their
//!    successors in `W1`, player 1's strategy stays in `W1`) and in the graph where player 1
//!    follows its strategy, every cycle inside `W1` is negative (checked per strongly
//!    connected component, see [`cycles`]). Then every play from `W1` under that strategy has
//!    energy tending to −∞, so no finite credit suffices.
//! 4. **Fixpoint**: every value equals the lifting operator applied to it (`f(v) = min`
//!    (player 0) / `max` (player 1) over edges of `f(u) ⊖ w`), ⊤ included: no finite value
//!    could be lowered locally.
//!
//! # What is not certified
//! That each finite credit is the *least* one: a larger fixpoint passes 1–4 (e.g. raising
//! both vertices of a zero-weight cycle by the same amount). Least-ness would need a
//! player-1 counter-strategy per `W0` vertex; only the solvers' agreement with the reference
//! and the brute-force oracle backs it.
//!
//! # Cost
//! Checks 1, 2 and 4 and the closure part of 3 are O(n + m). The cycle check runs Tarjan's
//! SCC algorithm (O(n + m)) and then, per component, a queue-based Bellman–Ford search for
//! a nonnegative cycle: O(n_c · m_c) in the worst case per component, close to linear when
//! every cycle is clearly negative (the usual case).

pub mod cycles;
pub mod parity;
mod scc;

use crate::arena::{Arena, Player, VertexId};
use crate::solve::energy::{TOP, minus};
use crate::solve::{BoundOverflow, NO_MOVE, energy};
pub use parity::{ParityClaim, check_parity};

/// One failed condition, at one vertex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The vertex where it failed.
    pub vertex: VertexId,
    /// What failed, in words.
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vertex {}: {}", self.vertex, self.what)
    }
}

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Every violation found, up to [`MAX_VIOLATIONS`].
    pub violations: Vec<Violation>,
    /// More violations than listed were found.
    pub truncated: bool,
}

/// How many violations a report lists at most.
pub const MAX_VIOLATIONS: usize = 100;

impl Report {
    /// Whether the solution passed every check.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    fn fail(&mut self, vertex: VertexId, what: String) {
        if self.violations.len() < MAX_VIOLATIONS {
            self.violations.push(Violation { vertex, what });
        } else {
            self.truncated = true;
        }
    }
}

/// A claimed solution: credits ([`TOP`] for ⊤) and strategies ([`NO_MOVE`] for none).
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    /// Credit per vertex.
    pub credit: &'a [u64],
    /// Strategy successor per vertex.
    pub strategy: &'a [VertexId],
}

/// Why a claim cannot be checked at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The claim does not have one entry per vertex.
    #[error("the solution has {claimed} vertices but the arena has {actual}")]
    WrongSize {
        /// Entries in the claim.
        claimed: usize,
        /// Vertices of the arena.
        actual: usize,
    },
    /// `M` overflows.
    #[error(transparent)]
    Bound(#[from] BoundOverflow),
}

/// Checks `claim` against `arena`; see the module docs for what is certified.
pub fn check(arena: &Arena, claim: Claim<'_>) -> Result<Report, CheckError> {
    let n = arena.vertex_count();
    for len in [claim.credit.len(), claim.strategy.len()] {
        if len != n {
            return Err(CheckError::WrongSize {
                claimed: len,
                actual: n,
            });
        }
    }
    let bound = energy::bound(arena)?;
    let mut report = Report::default();
    check_local(arena, claim, bound, &mut report);
    if report.passed() {
        for (vertex, what) in cycles::nonnegative_cycles_in_w1(arena, claim) {
            report.fail(vertex, what);
        }
    }
    Ok(report)
}

/// Checks 1, 2, 4 and the closure of `W1` at every vertex.
fn check_local(arena: &Arena, claim: Claim<'_>, bound: u64, report: &mut Report) {
    let f = claim.credit;
    for v in 0..arena.vertex_count() as VertexId {
        let fv = f[v as usize];
        if fv != TOP && fv > bound {
            report.fail(v, format!("credit {fv} is above the bound M = {bound}"));
            continue;
        }
        let owner = arena.owner(v);
        let choice = claim.strategy[v as usize];
        let wins = if fv == TOP { Player::One } else { Player::Zero };
        if owner == wins {
            match arena.successors(v).filter(|&(u, _)| u == choice).map(|(_, w)| w).max() {
                None if choice == NO_MOVE => {
                    report.fail(v, format!("player {} wins here but no strategy move is given", owner.index()));
                }
                None => report.fail(v, format!("strategy move to {choice} is not an edge")),
                Some(w) if wins == Player::Zero && fv < minus(f[choice as usize], w, bound) => report.fail(
                    v,
                    format!(
                        "strategy edge to {choice} (weight {w}) needs credit {} but the credit is {fv}",
                        energy::display(minus(f[choice as usize], w, bound))
                    ),
                ),
                Some(_) if wins == Player::One && f[choice as usize] != TOP => {
                    report.fail(v, format!("player 1's strategy leaves W1 to {choice}"));
                }
                Some(_) => {}
            }
        } else if choice != NO_MOVE {
            report.fail(
                v,
                "a strategy move is given, but the owner does not win here".to_string(),
            );
        }
        let mut lifted: Option<u64> = None;
        for (u, w) in arena.successors(v) {
            let need = minus(f[u as usize], w, bound);
            if owner == Player::One && fv != TOP && fv < need {
                report.fail(
                    v,
                    format!(
                        "edge to {u} (weight {w}) needs credit {} but the credit is {fv}",
                        energy::display(need)
                    ),
                );
            }
            if owner == Player::Zero && fv == TOP && f[u as usize] != TOP {
                report.fail(
                    v,
                    format!("W1 is not closed: player 0 can move to {u}, which is in W0"),
                );
            }
            lifted = Some(match (lifted, owner) {
                (None, _) => need,
                (Some(x), Player::Zero) => x.min(need),
                (Some(x), Player::One) => x.max(need),
            });
        }
        let lifted = lifted.expect("every vertex has a successor");
        if lifted != fv {
            report.fail(
                v,
                format!(
                    "not a fixpoint: the credit is {} but lifting gives {}",
                    energy::display(fv),
                    energy::display(lifted)
                ),
            );
        }
    }
}
