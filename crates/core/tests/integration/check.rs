//! `check` accepts the reference solver's solutions and rejects mutated ones: a credit
//! lowered by one, a strategy edge redirected to a successor that breaks the edge condition
//! (or leaves `W1`), a `W1` vertex given a finite credit, a `W0` vertex flipped to ⊤.

use egsolve_core::arena::{Arena, Player};
use egsolve_core::check::{Claim, check};
use egsolve_core::generate::{RandomParams, random};
use egsolve_core::solve::energy::{bound, minus};
use egsolve_core::solve::{Control, Solution, TOP, reference};

fn solved(seed: u64) -> (Arena, Solution) {
    let params = RandomParams {
        vertices: 60,
        min_degree: 1,
        max_degree: 4,
        min_weight: -6,
        max_weight: 5,
        player1_percent: 50,
    };
    let arena = random(params, seed);
    let solution = reference::solve(&arena, &Control::new()).unwrap();
    (arena, solution)
}

fn passes(arena: &Arena, credit: &[u64], strategy: &[u32]) -> bool {
    check(arena, Claim { credit, strategy }).unwrap().passed()
}

#[test]
fn accepts_reference_solutions_and_rejects_mutations() {
    let (mut lowered, mut redirected, mut flipped_w1, mut flipped_w0) = (0, 0, 0, 0);
    for seed in 0..300 {
        let (arena, s) = solved(seed);
        assert!(
            passes(&arena, &s.credit, &s.strategy),
            "seed {seed}: reference solution rejected"
        );
        let m = bound(&arena).unwrap();
        for v in 0..arena.vertex_count() {
            let c = s.credit[v];
            if c != TOP && c > 0 {
                let mut credit = s.credit.clone();
                credit[v] -= 1;
                assert!(
                    !passes(&arena, &credit, &s.strategy),
                    "seed {seed}: lowered credit at {v} accepted"
                );
                lowered += 1;
            }
            if c == TOP {
                let mut credit = s.credit.clone();
                credit[v] = 0;
                assert!(
                    !passes(&arena, &credit, &s.strategy),
                    "seed {seed}: W1 vertex {v} flipped accepted"
                );
                flipped_w1 += 1;
            } else {
                let mut credit = s.credit.clone();
                credit[v] = TOP;
                assert!(
                    !passes(&arena, &credit, &s.strategy),
                    "seed {seed}: W0 vertex {v} flipped accepted"
                );
                flipped_w0 += 1;
            }
            // Redirect the winner's move to a successor that does not work for it.
            let owner = arena.owner(v as u32);
            let wins = if c == TOP { Player::One } else { Player::Zero };
            if owner != wins {
                continue;
            }
            let bad = arena.successors(v as u32).find(|&(u, _)| {
                arena
                    .successors(v as u32)
                    .filter(|&(x, _)| x == u)
                    .all(|(_, w)| match wins {
                        Player::Zero => c < minus(s.credit[u as usize], w, m),
                        Player::One => s.credit[u as usize] != TOP,
                    })
            });
            if let Some((u, _)) = bad {
                let mut strategy = s.strategy.clone();
                strategy[v] = u;
                assert!(
                    !passes(&arena, &s.credit, &strategy),
                    "seed {seed}: redirected move at {v} accepted"
                );
                redirected += 1;
            }
        }
    }
    assert!(lowered > 100 && redirected > 100 && flipped_w1 > 100 && flipped_w0 > 100);
}

#[test]
fn rejects_player1_strategy_that_allows_a_nonnegative_cycle() {
    // 0 (player 1): to 1 (weight 0) or to 2 (weight −1); 1 (player 0): back to 0 (weight 0);
    // 2 (player 1): self-loop −1. Player 1 wins everywhere but must go to 2 from 0.
    let mut e = egsolve_core::arena::EdgeList::default();
    e.push(0, 1, 0);
    e.push(0, 2, -1);
    e.push(1, 0, 0);
    e.push(2, 2, -1);
    let arena = Arena::from_edges(vec![Player::One, Player::Zero, Player::One], e, None).unwrap();
    let s = reference::solve(&arena, &Control::new()).unwrap();
    assert_eq!(s.credit, vec![TOP; 3]);
    assert_eq!(s.strategy[0], 2);
    assert!(passes(&arena, &s.credit, &s.strategy));
    let mut strategy = s.strategy.clone();
    strategy[0] = 1;
    let report = check(
        &arena,
        Claim {
            credit: &s.credit,
            strategy: &strategy,
        },
    )
    .unwrap();
    assert!(
        report
            .violations
            .iter()
            .any(|v| v.what.contains("cycle of weight >= 0")),
        "{report:?}"
    );
}
