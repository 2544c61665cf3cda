//! The known lower-bound families of parity games, at any size `n`: games built so that one
//! solver or another takes exponential (or, for the quasi-polynomial solvers, super-polynomial)
//! time on them, for tests and benchmarks.
//!
//! | [`Family`]            | function             | built against                                  | vertices          |
//! | :-------------------- | :------------------- | :--------------------------------------------- | :---------------- |
//! | `two-counters` (`tc`) | [`two_counters`]     | tangle learning, Zielonka, priority promotion  | `3n² + 5n`        |
//! | `counter-rr`          | [`counter_rr`]       | priority promotion RR                          | `4n`              |
//! | `counter-dp`          | [`counter_dp`]       | priority promotion with delayed promotion      | `4n + 4`          |
//! | `counter-core`        | [`counter_core`]     | divide-et-impera solvers (Benerecetti et al.)  | `6n + 3`          |
//! | `counter-ortl`        | [`counter_ortl`]     | one-sided recursive tangle learning            | `5n + 1`          |
//! | `counter-m`           | [`counter_m`]        | Gazda's modified small progress measures       | `3n + 3`          |
//! | `counter-qpt`         | [`counter_qpt`]      | the quasi-polynomial ordered progress measures | `2n`              |
//! | `counter-rob`         | [`counter_rob`]      | divide-et-impera solvers, SCC decomposition    | `3n² + 8n + 3`    |
//! | `counter-symsi`       | [`counter_symsi`]    | symmetric strategy improvement                 | `10n + 2`         |
//!
//! Each family is the one that Oink's generator tool of the same name (`tc`, `counter_rr`, ...)
//! writes for the same `n`. The structure was learned from those tools' output, not from their
//! source: each module's docs describe the gadget that repeats and how priorities grow with
//! `n`, and the tests (`crates/core/tests/integration/families.rs`) check every generated game against
//! Oink's files. Seven families come out vertex for vertex as Oink numbers them; `two-counters`
//! and `counter-ortl` are the same games up to the order of vertices of equal priority (Oink
//! sorts vertices by priority with an unstable sort, which shuffles ties): here equal
//! priorities keep the order in which the gadgets are built.
//!
//! `n` below 1 is taken as 1 (every family is a valid game from `n = 1`; Oink's files start
//! at 2). The games are max-parity games as [`ParityGame`] holds them: player 0 (Even) wins
//! a play whose highest priority seen infinitely often is even. The two families whose Oink
//! files name their vertices (`two-counters`, `counter-qpt`) carry the same names
//! ([`Family::generate_named`]), and `egsolve gen family` writes them into `.gm`.

mod progress;
mod promotion;
mod robust;
mod symmetric;
mod tangles;
mod two_counters;

pub use progress::{counter_m, counter_qpt};
pub use promotion::{counter_dp, counter_rr};
pub use robust::{counter_core, counter_rob};
pub use symmetric::counter_symsi;
pub use tangles::counter_ortl;
pub use two_counters::two_counters;

use super::ParityGame;
use crate::arena::{Player, VertexId};

/// A lower-bound family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// van Dijk's two binary counters ([`two_counters`]).
    TwoCounters,
    /// The counterexample to priority promotion RR ([`counter_rr`]).
    CounterRr,
    /// The counterexample to priority promotion with delayed promotion ([`counter_dp`]).
    CounterDp,
    /// Benerecetti, Dell'Erba and Mogavero's robust worst case ([`counter_core`]).
    CounterCore,
    /// The counterexample to one-sided recursive tangle learning ([`counter_ortl`]).
    CounterOrtl,
    /// Gazda's counterexample ([`counter_m`]).
    CounterM,
    /// Fearnley et al.'s counterexample to ordered progress measures ([`counter_qpt`]).
    CounterQpt,
    /// The robust worst case joined into one SCC ([`counter_rob`]).
    CounterRob,
    /// Maat's counterexample to symmetric strategy improvement ([`counter_symsi`]).
    CounterSymsi,
}

/// A generated game with the names of its vertices, where the family names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedGame {
    /// The game.
    pub game: ParityGame,
    /// One name per vertex (as Oink's tool writes them), or `None` for unnamed families.
    pub names: Option<Vec<String>>,
}

impl Family {
    /// Every family, in the order of the table above.
    pub const ALL: [Family; 9] = [
        Family::TwoCounters,
        Family::CounterRr,
        Family::CounterDp,
        Family::CounterCore,
        Family::CounterOrtl,
        Family::CounterM,
        Family::CounterQpt,
        Family::CounterRob,
        Family::CounterSymsi,
    ];

    /// The name `egsolve gen family` takes (`two-counters`, `counter-rr`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Family::TwoCounters => "two-counters",
            Family::CounterRr => "counter-rr",
            Family::CounterDp => "counter-dp",
            Family::CounterCore => "counter-core",
            Family::CounterOrtl => "counter-ortl",
            Family::CounterM => "counter-m",
            Family::CounterQpt => "counter-qpt",
            Family::CounterRob => "counter-rob",
            Family::CounterSymsi => "counter-symsi",
        }
    }

    /// The name of Oink's generator tool (and of its files, `<tool>_<n>.pg`).
    pub fn oink_tool(self) -> &'static str {
        match self {
            Family::TwoCounters => "tc",
            Family::CounterRr => "counter_rr",
            Family::CounterDp => "counter_dp",
            Family::CounterCore => "counter_core",
            Family::CounterOrtl => "counter_ortl",
            Family::CounterM => "counter_m",
            Family::CounterQpt => "counter_qpt",
            Family::CounterRob => "counter_rob",
            Family::CounterSymsi => "counter_symsi",
        }
    }

    /// The family called `name`: its [`Family::name`] or its [`Family::oink_tool`].
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL
            .into_iter()
            .find(|f| f.name() == name || f.oink_tool() == name)
    }

    /// The number of vertices of the game for `n` (after `n` is raised to 1); `u64::MAX`
    /// where it is that or more (a quadratic family at a large `n`).
    pub fn vertex_count(self, n: u32) -> u64 {
        let n = u64::from(n.max(1));
        match self {
            Family::TwoCounters => (n * n).saturating_mul(3).saturating_add(5 * n),
            Family::CounterRr => 4 * n,
            Family::CounterDp => 4 * n + 4,
            Family::CounterCore => 6 * n + 3,
            Family::CounterOrtl => 5 * n + 1,
            Family::CounterM => 3 * n + 3,
            Family::CounterQpt => 2 * n,
            Family::CounterRob => (n * n).saturating_mul(3).saturating_add(8 * n + 3),
            Family::CounterSymsi => 10 * n + 2,
        }
    }

    /// The number of edges of the game for `n` (after `n` is raised to 1); `u64::MAX` where it
    /// is that or more.
    pub fn edge_count(self, n: u32) -> u64 {
        let n = u64::from(n.max(1));
        match self {
            Family::TwoCounters => (n * n).saturating_mul(7).saturating_add(4 * n),
            Family::CounterRr => 8 * n,
            Family::CounterDp => 7 * n + 5,
            Family::CounterCore => 12 * n + 4,
            Family::CounterOrtl => 8 * n + 1,
            Family::CounterM => 6 * n + 3,
            Family::CounterQpt => 3 * n - 1,
            Family::CounterRob => (n * n).saturating_mul(10).saturating_add(18 * n + 4),
            Family::CounterSymsi => 22 * n + 4,
        }
    }

    /// The game for `n`.
    pub fn generate(self, n: u32) -> ParityGame {
        self.generate_named(n).game
    }

    /// The game for `n` with its vertex names, for the families whose Oink files have them.
    pub fn generate_named(self, n: u32) -> NamedGame {
        let unnamed = |game| NamedGame { game, names: None };
        match self {
            Family::TwoCounters => two_counters::named(n),
            Family::CounterRr => unnamed(counter_rr(n)),
            Family::CounterDp => unnamed(counter_dp(n)),
            Family::CounterCore => unnamed(counter_core(n)),
            Family::CounterOrtl => unnamed(counter_ortl(n)),
            Family::CounterM => unnamed(counter_m(n)),
            Family::CounterQpt => progress::counter_qpt_named(n),
            Family::CounterRob => unnamed(counter_rob(n)),
            Family::CounterSymsi => symmetric::named(n),
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Player 0 if `bit` is 0, player 1 otherwise: the families alternate owners with the
/// parity of a gadget's index.
fn player(bit: u32) -> Player {
    if bit % 2 == 0 {
        Player::Zero
    } else {
        Player::One
    }
}

/// Collects vertices in the order they are added.
struct Builder {
    game: ParityGame,
}

impl Builder {
    fn with_capacity(vertices: u64) -> Builder {
        let n = usize::try_from(vertices).expect("the game fits in memory");
        Builder {
            game: ParityGame {
                owners: Vec::with_capacity(n),
                priorities: Vec::with_capacity(n),
                successors: Vec::with_capacity(n),
            },
        }
    }

    /// Adds a vertex with its successors; returns its id.
    fn vertex(&mut self, priority: u64, owner: Player, successors: Vec<VertexId>) -> VertexId {
        let id = self.game.owners.len() as VertexId;
        self.game.priorities.push(priority);
        self.game.owners.push(owner);
        self.game.successors.push(successors);
        id
    }

    fn finish(self) -> ParityGame {
        debug_assert!(self.game.successors.iter().all(|s| !s.is_empty()));
        self.game
    }
}

/// Asserts `g`'s priorities, the successors of the vertices listed and the owners listed.
#[cfg(test)]
fn assert_game(
    g: &ParityGame,
    priorities: &[u64],
    successors: &[(usize, &[VertexId])],
    owners: &[(usize, Player)],
) {
    assert_eq!(g.priorities, priorities);
    for &(v, expected) in successors {
        assert_eq!(g.successors[v], expected, "the successors of vertex {v}");
    }
    for &(v, expected) in owners {
        assert_eq!(g.owners[v], expected, "the owner of vertex {v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_the_sizes_its_formulas_say_and_successors_in_range() {
        for family in Family::ALL {
            for n in [0, 1, 2, 3, 7, 10] {
                let g = family.generate(n);
                let v = g.owners.len();
                assert_eq!(v as u64, family.vertex_count(n), "{family} n={n}");
                assert_eq!(g.priorities.len(), v);
                let edges: usize = g.successors.iter().map(Vec::len).sum();
                assert_eq!(edges as u64, family.edge_count(n), "{family} n={n}");
                assert!(g.successors.iter().flatten().all(|&u| (u as usize) < v));
                assert!(g.successors.iter().all(|s| !s.is_empty()));
            }
            assert_eq!(Family::from_name(family.name()), Some(family));
            assert_eq!(Family::from_name(family.oink_tool()), Some(family));
        }
    }
}
