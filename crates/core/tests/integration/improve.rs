//! Player 1's strategy improvement (`accel::improve`) on its own, from 0 and from lifting's
//! partial values: the shared games small enough for it (energy games against their credits
//! files, parity games' reductions against Oink's winners) and random parity reductions with
//! many priorities, where lifting climbs (against the reference worklist); and `auto` on
//! the latter, which runs it in place of evaluations.

use crate::accel_support;

use egsolve_core::arena::Arena;
use egsolve_core::generate::climbing as families;
use egsolve_core::solve::accel::improve::{IMPROVE_UP_TO, improve};
use egsolve_core::solve::{Backend, Control, TOP, reference, solve};

/// Strategy improvement from `start` with no limit: it must reach `f*`.
fn improved(arena: &Arena, start: Vec<u64>, context: &str) -> Vec<u64> {
    let bound = egsolve_core::solve::energy::bound(arena).expect("fits");
    let mut values = start;
    let out = improve(
        arena,
        &mut values,
        bound,
        &mut Vec::new(),
        u64::MAX,
        &Control::new(),
    )
    .expect("not interrupted");
    assert!(out.solved, "{context}: {out:?}");
    values
}

#[test]
fn shared_games_small_enough_match_their_answers() {
    let mut compared = 0;
    for (name, path, answer) in accel_support::shared_games() {
        let (arena, expected) = accel_support::load(&path, &answer);
        if arena.vertex_count() + arena.edge_count() > IMPROVE_UP_TO {
            continue;
        }
        let values = improved(&arena, vec![0; arena.vertex_count()], &name);
        match expected {
            accel_support::Expected::Credits(credits) => assert_eq!(values, credits, "{name}"),
            accel_support::Expected::Winners(w0) => {
                let wrong = (0..w0.len())
                    .filter(|&v| (values[v] != TOP) != w0[v])
                    .count();
                assert_eq!(wrong, 0, "{name}: {wrong} vertices with the wrong winner");
            }
        }
        compared += 1;
    }
    assert!(compared >= 8, "{compared} shared games compared");
}

#[test]
fn random_parity_reductions_match_the_reference() {
    let fresh: u64 = rand::random();
    eprintln!("fresh seed {fresh}");
    for seed in (0..40u64).chain([fresh]) {
        let priorities = 3 + (seed % 3) as u32;
        let n = 20 + (seed % 5) as u32 * 20;
        let Some(arena) = families::random_parity(n, 3, priorities, seed) else {
            continue;
        };
        let context = format!("random_parity({n}, 3, {priorities}, seed {seed})");
        let expected = reference::solve(&arena, &Control::new())
            .expect("solves")
            .credit;
        assert_eq!(
            improved(&arena, vec![0; arena.vertex_count()], &context),
            expected,
            "{context}"
        );
        let auto = solve(&arena, Backend::Auto, &Control::new()).expect("solves");
        assert_eq!(auto.credit, expected, "{context}: auto");
    }
}
