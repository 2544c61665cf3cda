//! Priority classes of parity games: the distinct priorities with their vertex counts,
//! counted in parallel (the reduction of [`super::parity`] needs nothing more), and the
//! weight each priority gets.

use rayon::prelude::*;

/// The weight of `priority` in the table of [`super::parity::reduce_parity`] (which holds
/// every priority of the game).
#[inline]
pub(crate) fn weight_of_priority(weights_by_priority: &[(u64, i64)], priority: u64) -> i64 {
    let i = weights_by_priority
        .binary_search_by_key(&priority, |&(q, _)| q)
        .expect("every priority has its class");
    weights_by_priority[i].1
}

/// The largest weight magnitude of the table (what the storage width must hold).
pub(crate) fn widest(weights_by_priority: &[(u64, i64)]) -> u64 {
    weights_by_priority
        .iter()
        .map(|&(_, w)| w.unsigned_abs())
        .max()
        .unwrap_or(0)
}

/// The distinct priorities and how many vertices have each, ascending, counted in parallel.
pub(crate) fn priority_classes(priorities: &[u64]) -> Vec<(u64, u64)> {
    priorities
        .par_chunks(1 << 16)
        .map(count_classes)
        .reduce(Vec::new, merge_classes)
}

/// The classes of one piece: a short sorted list with the last class cached (games have
/// few priorities, and neighbouring vertices often share one); sorting past 256 classes.
fn count_classes(priorities: &[u64]) -> Vec<(u64, u64)> {
    let mut classes: Vec<(u64, u64)> = Vec::new();
    let mut last = usize::MAX;
    for &p in priorities {
        if last != usize::MAX && classes[last].0 == p {
            classes[last].1 += 1;
            continue;
        }
        match classes.binary_search_by_key(&p, |&(q, _)| q) {
            Ok(i) => {
                classes[i].1 += 1;
                last = i;
            }
            Err(i) if classes.len() < 256 => {
                classes.insert(i, (p, 1));
                last = i;
            }
            Err(_) => {
                let mut sorted = priorities.to_vec();
                sorted.sort_unstable();
                let mut classes: Vec<(u64, u64)> = Vec::new();
                for p in sorted {
                    match classes.last_mut() {
                        Some((q, count)) if *q == p => *count += 1,
                        _ => classes.push((p, 1)),
                    }
                }
                return classes;
            }
        }
    }
    classes
}

/// Two ascending class lists merged, counts of equal priorities added.
fn merge_classes(a: Vec<(u64, u64)>, b: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_counted_like_a_sort() {
        let mut priorities: Vec<u64> = (0..200_000u64).map(|i| (i * 7919) % 5).collect();
        priorities.extend((0..70_000u64).map(|i| i * 3));
        let mut sorted = priorities.clone();
        sorted.sort_unstable();
        let mut expected: Vec<(u64, u64)> = Vec::new();
        for p in sorted {
            match expected.last_mut() {
                Some((q, c)) if *q == p => *c += 1,
                _ => expected.push((p, 1)),
            }
        }
        assert_eq!(priority_classes(&priorities), expected);
    }
}
