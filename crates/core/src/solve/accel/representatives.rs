//! Components as an engine hands them back ([`EngineComponents`](crate::solve::engine::EngineComponents)): one word per
//! vertex, its component's representative (a member, the same for all members), with two
//! marks: [`LEFT_TO_HOST`] (the engine left that vertex's component to the host,
//! `super::remainder`) and [`ALONE`] (the vertex is a component of its own, as the device's
//! trims find most of them). [`numbered`] turns the words into component numbers, those of
//! the components alone last, so the cycle test can answer them without grouping them.
//!
//! [`LEFT_TO_HOST`]: crate::solve::engine::LEFT_TO_HOST

use crate::graph::scc::NO_COMPONENT;
use crate::solve::chunked;
use crate::solve::engine::{ALONE, ALONE_MARKS_BELOW};
use crate::solve::threads::Threads;

/// Vertices per parallel task of [`numbered`].
const NUMBER_CHUNK: usize = 1 << 16;

/// Components numbered from an engine's representatives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    /// Each vertex's component number ([`NO_COMPONENT`] outside).
    pub component: Vec<u32>,
    /// The number of components.
    pub count: u32,
    /// Components `alone_from..count` have one member each ([`ALONE`]), numbered in the
    /// order of their members' ids; `count` when none is marked.
    pub alone_from: u32,
}

/// Components numbered from each vertex's representative ([`NO_COMPONENT`] outside, no
/// [`LEFT_TO_HOST`](crate::solve::engine::LEFT_TO_HOST) left): first the components of several members (and those not marked
/// [`ALONE`]) in the order of their representatives' ids, then those marked alone in the
/// order of their ids. `None` when the input is not such a map (a representative out of
/// range, not its own representative, or one marked alone that another vertex names).
pub fn numbered(mut representative: Vec<u32>, threads: &Threads) -> Option<Numbered> {
    let n = representative.len();
    let alone_bit = if n < ALONE_MARKS_BELOW { ALONE } else { 0 };
    // Whether `v` represents its own component: 1 (of several members), 2 (alone), 0 not.
    let own = |v: usize, r: u32| -> u8 {
        if r == v as u32 {
            1
        } else if alone_bit != 0 && r == v as u32 | alone_bit {
            2
        } else {
            0
        }
    };
    let parallel = threads.parallel(n);
    let count_chunk = |(c, chunk): (usize, &[u32])| -> (u32, u32) {
        let base = c * NUMBER_CHUNK;
        chunk
            .iter()
            .enumerate()
            .fold((0, 0), |(several, alone), (i, &r)| match own(base + i, r) {
                1 => (several + 1, alone),
                2 => (several, alone + 1),
                _ => (several, alone),
            })
    };
    let counts: Vec<(u32, u32)> = if parallel {
        threads.install(|| {
            chunked::values_of_chunks(n, NUMBER_CHUNK, |c, range| {
                count_chunk((c, &representative[range]))
            })
        })
    } else {
        representative
            .chunks(NUMBER_CHUNK)
            .enumerate()
            .map(count_chunk)
            .collect()
    };
    // Each chunk's first number of either kind.
    let alone_from: u32 = counts.iter().map(|c| c.0).sum();
    let mut firsts = Vec::with_capacity(counts.len());
    let (mut several, mut alone) = (0, alone_from);
    for &(s, a) in &counts {
        firsts.push((several, alone));
        several += s;
        alone += a;
    }
    let count = alone;
    let mut number = threads.filled(n, NO_COMPONENT);
    let number_chunk = |(c, numbers): (usize, &mut [u32]), chunk: &[u32]| {
        let (base, (mut several, mut alone)) = (c * NUMBER_CHUNK, firsts[c]);
        for (i, &r) in chunk.iter().enumerate() {
            match own(base + i, r) {
                1 => {
                    numbers[i] = several;
                    several += 1;
                }
                2 => {
                    numbers[i] = alone;
                    alone += 1;
                }
                _ => {}
            }
        }
    };
    if parallel {
        threads.install(|| {
            chunked::values_of_chunks_mut(&mut number, NUMBER_CHUNK, |c, numbers| {
                let mine = c * NUMBER_CHUNK..c * NUMBER_CHUNK + numbers.len();
                number_chunk((c, numbers), &representative[mine]);
            });
        });
    } else {
        number
            .chunks_mut(NUMBER_CHUNK)
            .enumerate()
            .zip(representative.chunks(NUMBER_CHUNK))
            .for_each(|(numbers, chunk)| number_chunk(numbers, chunk));
    }
    let relabel = |(v, r): (usize, &mut u32)| -> bool {
        if *r == NO_COMPONENT {
            return true;
        }
        if alone_bit != 0 && *r & alone_bit != 0 {
            // Only a vertex alone names itself so.
            if *r != v as u32 | alone_bit {
                return false;
            }
            *r = number[v];
            return true;
        }
        match number.get(*r as usize) {
            Some(&k) if k < alone_from => {
                *r = k;
                true
            }
            _ => false,
        }
    };
    let valid = if parallel {
        threads.install(|| {
            let invalid = std::sync::atomic::AtomicBool::new(false);
            chunked::for_each_mut(&mut representative, |v, r| {
                if !relabel((v, r)) {
                    invalid.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            });
            !invalid.into_inner()
        })
    } else {
        representative.iter_mut().enumerate().all(relabel)
    };
    valid.then_some(Numbered {
        component: representative,
        count,
        alone_from,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{RandomParams, random};
    use crate::graph::scc::tests::graph_of;
    use crate::graph::scc::{canonical, tarjan};

    /// Representatives (each component's largest member, say; the components of one
    /// member marked [`ALONE`] or not) number into the same partition, the several-member
    /// ones in the representatives' order and the marked ones last in id order, on one
    /// thread and several; a map whose representative is not its own, or names a vertex
    /// marked alone, is refused.
    #[test]
    fn representatives_number_into_the_partition() {
        for (seed, mark_alone) in [(7, false), (8, true), (9, true)] {
            let arena = random(
                RandomParams {
                    vertices: 200_000,
                    min_degree: 1,
                    max_degree: 3,
                    ..RandomParams::default()
                },
                seed,
            );
            let n = arena.vertex_count();
            let active: Vec<bool> = (0..n).map(|v| v % 7 != 2).collect();
            let graph = graph_of(&arena, &active);
            let (component, count) = tarjan(&graph, &active);
            let mut largest = vec![0u32; count as usize];
            let mut size = vec![0u32; count as usize];
            for (v, &c) in component.iter().enumerate() {
                if c != NO_COMPONENT {
                    largest[c as usize] = largest[c as usize].max(v as u32);
                    size[c as usize] += 1;
                }
            }
            let is_alone = |c: u32| mark_alone && size[c as usize] == 1;
            let representative: Vec<u32> = component
                .iter()
                .map(|&c| match c {
                    NO_COMPONENT => c,
                    c if is_alone(c) => largest[c as usize] | ALONE,
                    c => largest[c as usize],
                })
                .collect();
            let alone = (0..count).filter(|&c| is_alone(c)).count() as u32;
            assert_eq!(alone > 0, mark_alone, "seed {seed}");
            for threads in [Threads::one(), Threads::new(3).with_parallel_from(0)] {
                let got = numbered(representative.clone(), &threads).expect("a representative map");
                assert_eq!(got.count, count, "seed {seed}");
                assert_eq!(got.alone_from, count - alone, "seed {seed}");
                assert_eq!(
                    canonical(&got.component),
                    canonical(&component),
                    "seed {seed}"
                );
                // The components alone last, in the order of their members.
                let alone_members: Vec<u32> = got
                    .component
                    .iter()
                    .filter(|&&k| k != NO_COMPONENT && k >= got.alone_from)
                    .copied()
                    .collect();
                assert_eq!(
                    alone_members,
                    (got.alone_from..count).collect::<Vec<_>>(),
                    "seed {seed}"
                );
                for (v, &k) in got.component.iter().enumerate() {
                    if k != NO_COMPONENT {
                        assert_eq!(k >= got.alone_from, is_alone(component[v]), "seed {seed}");
                    }
                }
                let members: Vec<usize> = (0..n)
                    .filter(|&v| representative[v] != NO_COMPONENT && representative[v] != v as u32)
                    .filter(|&v| representative[v] & ALONE == 0)
                    .take(2)
                    .collect();
                let mut bad = representative.clone();
                bad[members[0]] = members[1] as u32;
                assert!(
                    numbered(bad, &threads).is_none(),
                    "seed {seed}: a member as representative"
                );
                let mut bad = representative.clone();
                bad[members[0]] = n as u32;
                assert!(
                    numbered(bad, &threads).is_none(),
                    "seed {seed}: out of range"
                );
                if mark_alone {
                    let lone = (0..n)
                        .find(|&v| representative[v] == v as u32 | ALONE)
                        .expect("a vertex alone");
                    let mut bad = representative.clone();
                    bad[members[0]] = lone as u32;
                    assert!(
                        numbered(bad.clone(), &threads).is_none(),
                        "seed {seed}: a vertex alone named by another"
                    );
                    bad[members[0]] = lone as u32 | ALONE;
                    assert!(
                        numbered(bad, &threads).is_none(),
                        "seed {seed}: another's mark"
                    );
                }
            }
        }
    }
}
