//! The counterexample to symmetric strategy improvement, as Oink's `counter_symsi` tool
//! writes it.
//!
//! Symmetric strategy improvement (Schewe, Trivedi, Varghese, ICALP 2015) improves both
//! players' strategies side by side; Oink's tool names the family "Matthew Maat's
//! counterexample" to it. For egsolve it is a benchmark family that none of its solvers
//! was tuned on: a chain of `n` gadgets of ten vertices whose priorities all differ.
//!
//! The shape below was read off Oink's instance files (`counter_symsi_<n>.pg`) and comes
//! out vertex for vertex in the same numbering.

use super::{Builder, NamedGame};
use crate::arena::{Player, VertexId};
use crate::generate::ParityGame;

/// Matthew Maat's counterexample: `n` gadgets of ten vertices and two sinks, `10n + 2`
/// vertices, `22n + 4` edges, priorities up to `18n + 14`.
///
/// Gadget `i` (`0 ≤ i < n`) is vertices `10i ..= 10i + 9`, named as in Oink's files
/// `a, d, c, e, m, f, g, k, h, l` (with `_{i+1}`); its priorities are offset by `o = 14i`,
/// and `a'`, `d'` are the next gadget's `a`, `d` (for the last gadget the sinks):
/// - `a` (player 0, priority `16n + 15 + 2i`) leads to `c`; `d` (player 1, one more) to `h`;
/// - `c` (player 0, `o + 1`) to `e`, `m` or the first `a`; `m` (player 0, `o + 3`) to `c`,
///   `f` or the first `a`;
/// - `e` (player 1, `o + 4`) to `a'` or `m`; `f` (player 1, `o + 6`) to `d'` or `c`;
/// - `g` (player 1, `o + 8`) to `h`, `k` or the first `d`; `h` (player 1, `o + 10`) to `l`,
///   `g` or the first `d`;
/// - `k` (player 0, `o + 11`) to `a'` or `h`; `l` (player 0, `o + 13`) to `d'` or `g`.
///
/// The sinks `a_{n+1}` (player 0, priority 1) and `d_{n+1}` (player 1, priority 2) loop on
/// themselves or lead to the first `a` and `d`. Player 0 wins every vertex.
pub fn counter_symsi(n: u32) -> ParityGame {
    let n = n.max(1);
    gadgets(n)
}

/// [`counter_symsi`] with Oink's vertex names (`a_1`, `d_1`, `c_1`, ..., `a_{n+1}`,
/// `d_{n+1}`).
pub(super) fn named(n: u32) -> NamedGame {
    let n = n.max(1);
    let mut names = Vec::with_capacity(10 * n as usize + 2);
    for i in 1..=n {
        for letter in ["a", "d", "c", "e", "m", "f", "g", "k", "h", "l"] {
            names.push(format!("{letter}_{i}"));
        }
    }
    names.push(format!("a_{}", n + 1));
    names.push(format!("d_{}", n + 1));
    NamedGame {
        game: gadgets(n),
        names: Some(names),
    }
}

/// The game for `n ≥ 1`.
fn gadgets(n: u32) -> ParityGame {
    let mut g = Builder::with_capacity(10 * u64::from(n) + 2);
    let (zero, one) = (Player::Zero, Player::One);
    let top = 16 * u64::from(n) + 15;
    for i in 0..n {
        let b: VertexId = 10 * i;
        let o = 14 * u64::from(i);
        let (next_a, next_d) = (b + 10, b + 11);
        g.vertex(top + 2 * u64::from(i), zero, vec![b + 2]);
        g.vertex(top + 2 * u64::from(i) + 1, one, vec![b + 8]);
        g.vertex(o + 1, zero, vec![b + 3, b + 4, 0]);
        g.vertex(o + 4, one, vec![next_a, b + 4]);
        g.vertex(o + 3, zero, vec![b + 2, b + 5, 0]);
        g.vertex(o + 6, one, vec![next_d, b + 2]);
        g.vertex(o + 8, one, vec![b + 8, b + 7, 1]);
        g.vertex(o + 11, zero, vec![next_a, b + 8]);
        g.vertex(o + 10, one, vec![b + 9, b + 6, 1]);
        g.vertex(o + 13, zero, vec![next_d, b + 6]);
    }
    let sink = 10 * n;
    g.vertex(1, zero, vec![sink, 0]);
    g.vertex(2, one, vec![sink + 1, 1]);
    g.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_symsi_at_one_is_oinks() {
        let g = counter_symsi(1);
        assert_eq!(g.priorities, [31, 32, 1, 4, 3, 6, 8, 11, 10, 13, 1, 2]);
        assert_eq!(g.successors[3], [10, 4]);
        assert_eq!(g.successors[8], [9, 6, 1]);
        assert_eq!(g.successors[11], [11, 1]);
        assert_eq!(g.owners[7], Player::Zero);
        let names = named(1).names.unwrap();
        assert_eq!((names[4].as_str(), names[11].as_str()), ("m_1", "d_2"));
    }
}
