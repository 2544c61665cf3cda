//! What the parity tests share (`egsolve-gpu`'s too): a solution's winners, and the parity
//! certificate checked on the priorities as read.

use egsolve_core::check::{ParityClaim, check_parity};
use egsolve_core::format::Game;
use egsolve_core::solve::Solution;

/// Each vertex's winner (0 or 1).
pub fn winners(solution: &Solution) -> Vec<u8> {
    (0..solution.credit.len() as u32)
        .map(|v| solution.winner(v).index())
        .collect()
}

/// Asserts that the parity certificate accepts `solution` on the priorities as read.
pub fn certify_parity(game: &Game, solution: &Solution, what: &str) {
    let parity = game.parity.as_ref().expect("a parity game");
    let claim = ParityClaim {
        winner: &winners(solution),
        strategy: &solution.strategy,
    };
    let report = check_parity(&game.arena, &parity.priorities, claim).unwrap();
    assert!(report.passed(), "{what}: {:?}", report.violations);
}
