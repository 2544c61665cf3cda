//! Members of each component grouped contiguously, in id order on any number of threads:
//! counts per component through a direct-mapped cache of counters per chunk, per-chunk
//! cursors for large components.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::arena::VertexId;
use crate::graph::scc::NO_COMPONENT;
use crate::solve::chunked;
use crate::solve::threads::{Threads, filled_in_parallel};

use super::*;

/// Members of each component, contiguous, and each member's position in its component.
pub(super) struct Groups {
    pub(super) offsets: Vec<u32>,
    pub(super) members: Vec<VertexId>,
    pub(super) local: Vec<u32>,
}

impl Groups {
    /// The members of components `0..count` but `skip` (which gets none); vertices of
    /// higher numbers (or none) are in no group.
    pub(super) fn new(
        component: &[u32],
        count: u32,
        skip: Option<u32>,
        threads: &Threads,
    ) -> Groups {
        let n = component.len();
        let skip = skip.unwrap_or(NO_COMPONENT);
        if threads.parallel(n) {
            return threads.install(|| {
                let offsets = Groups::offsets_parallel(component, count, skip);
                Groups::fill_parallel(component, offsets, skip)
            });
        }
        let mut offsets = vec![0u32; count as usize + 1];
        for &c in component.iter().filter(|&&c| c < count && c != skip) {
            offsets[c as usize + 1] += 1;
        }
        for i in 0..count as usize {
            offsets[i + 1] += offsets[i];
        }
        let total = offsets[count as usize] as usize;
        let mut fill = offsets.clone();
        let mut members = vec![0; total];
        let mut local = vec![0; n];
        for (v, &c) in component.iter().enumerate() {
            if c < count && c != skip {
                let slot = &mut fill[c as usize];
                members[*slot as usize] = v as VertexId;
                local[v] = *slot - offsets[c as usize];
                *slot += 1;
            }
        }
        Groups {
            offsets,
            members,
            local,
        }
    }

    /// Where each component's members start (`count + 1` offsets; `skip` has none), on the
    /// pool's threads. Each chunk of vertices counts into a small direct-mapped cache of
    /// components and adds an entry to the shared counter when it is evicted, so a large
    /// component's counter takes an atomic add per chunk and eviction rather than per member
    /// (one counter of most vertices would contend on every core), and the many singletons
    /// of random games an uncontended add each.
    pub(super) fn offsets_parallel(component: &[u32], count: u32, skip: u32) -> Vec<u32> {
        const WAYS: usize = 64;
        const BLOCK: usize = 1 << 16;
        let limit = count;
        let count = count as usize;
        let sizes: Vec<AtomicU32> = chunked::map(count, |_| AtomicU32::new(0));
        chunked::for_each_chunk_of(component.len(), GROUP_CHUNK, |_, chunk| {
            let mut cache = [(NO_COMPONENT, 0u32); WAYS];
            for &c in &component[chunk] {
                if c >= limit || c == skip {
                    continue;
                }
                let entry = &mut cache[c as usize % WAYS];
                if entry.0 != c {
                    if entry.0 != NO_COMPONENT {
                        sizes[entry.0 as usize].fetch_add(entry.1, Relaxed);
                    }
                    *entry = (c, 0);
                }
                entry.1 += 1;
            }
            for (c, members) in cache.into_iter().filter(|e| e.0 != NO_COMPONENT) {
                sizes[c as usize].fetch_add(members, Relaxed);
            }
        });
        let sizes: Vec<u32> = chunked::into_values(sizes);
        // An inclusive prefix sum by blocks: each block's total, their exclusive prefix
        // (few), then each block from its start.
        let totals: Vec<u32> =
            chunked::values_of_chunks(count, BLOCK, |_, b| sizes[b].iter().sum());
        let starts: Vec<u32> = totals
            .iter()
            .scan(0u32, |at, &t| {
                let start = *at;
                *at += t;
                Some(start)
            })
            .collect();
        let mut offsets = vec![0u32; count + 1];
        chunked::values_of_chunks_mut(&mut offsets[1..], BLOCK, |k, out| {
            let mut at = starts[k];
            for (o, &size) in out.iter_mut().zip(&sizes[k * BLOCK..]) {
                at += size;
                *o = at;
            }
        });
        offsets
    }

    /// The members in id order within each component, on the pool's threads, without a
    /// shared counter for the large components (one component of most vertices, each
    /// claiming its slot on one atomic counter, contends on every core): the vertices are
    /// taken in chunks of [`GROUP_CHUNK`]; a component of that many members or more gets
    /// a cursor per chunk from per-chunk counts, so each chunk writes its members of it in
    /// id order at their own place; a smaller one's members claim slots on its counter
    /// (few of them), and its slice is sorted afterwards.
    pub(super) fn fill_parallel(component: &[u32], offsets: Vec<u32>, skip: u32) -> Groups {
        const NOT_LARGE: u32 = u32::MAX;
        let n = component.len();
        let count = offsets.len() - 1;
        let total = offsets[count] as usize;
        let size = |c: usize| (offsets[c + 1] - offsets[c]) as usize;
        let large_ids: Vec<u32> = chunked::positions(count, |c| size(c) >= GROUP_CHUNK);
        let large = large_ids.len();
        let mut large_index = filled_in_parallel(count, NOT_LARGE);
        for (i, &c) in large_ids.iter().enumerate() {
            large_index[c as usize] = i as u32;
        }
        let large_of = |c: u32| {
            if c as usize >= count {
                NOT_LARGE
            } else {
                large_index[c as usize]
            }
        };
        // Per chunk, its members of each large component; then, per large component, an
        // exclusive prefix over the chunks from the component's offset.
        let mut cursor: Vec<u32> = if large == 0 {
            Vec::new()
        } else {
            chunked::concatenated(chunked::values_of_chunks(n, GROUP_CHUNK, |_, chunk| {
                let mut counts = vec![0u32; large];
                for &c in &component[chunk] {
                    let i = large_of(c);
                    if i != NOT_LARGE {
                        counts[i as usize] += 1;
                    }
                }
                counts
            }))
        };
        for (i, &c) in large_ids.iter().enumerate() {
            let mut at = offsets[c as usize];
            for row in cursor.chunks_mut(large) {
                let here = row[i];
                row[i] = at;
                at += here;
            }
        }
        // Members of large components get their slot and position here; the others a slot
        // in any order, then their position once their slice is sorted.
        let fill: Vec<AtomicU32> = chunked::map(count, |c| AtomicU32::new(offsets[c]));
        let slots: Vec<AtomicU32> = chunked::map(total, |_| AtomicU32::new(0));
        let local: Vec<AtomicU32> = chunked::map(n, |_| AtomicU32::new(0));
        chunked::for_each_chunk_of(n, GROUP_CHUNK, |k, chunk| {
            let mut mine = cursor[k * large..(k + 1) * large].to_vec();
            for v in chunk {
                let c = component[v];
                if c as usize >= count || c == skip {
                    continue;
                }
                let i = large_of(c);
                let slot = if i == NOT_LARGE {
                    fill[c as usize].fetch_add(1, Relaxed)
                } else {
                    let at = mine[i as usize];
                    mine[i as usize] += 1;
                    local[v].store(at - offsets[c as usize], Relaxed);
                    at
                };
                slots[slot as usize].store(v as VertexId, Relaxed);
            }
        });
        // Each small component of several members: its slice sorted, its positions set (a
        // singleton's position is 0 already).
        chunked::for_each(count, |c| {
            if size(c) <= 1 || large_index[c] != NOT_LARGE {
                return;
            }
            let slice = &slots[offsets[c] as usize..offsets[c + 1] as usize];
            let mut sorted: Vec<VertexId> = slice.iter().map(|v| v.load(Relaxed)).collect();
            sorted.sort_unstable();
            for (j, (&v, slot)) in sorted.iter().zip(slice).enumerate() {
                slot.store(v, Relaxed);
                local[v as usize].store(j as u32, Relaxed);
            }
        });
        Groups {
            offsets,
            members: chunked::into_values(slots),
            local: chunked::into_values(local),
        }
    }

    pub(super) fn members(&self, c: usize) -> &[VertexId] {
        &self.members[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }
}
