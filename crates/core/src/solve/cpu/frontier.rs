//! Frontier-based lifting: each round lifts the vertices whose condition is broken, and the
//! next round's frontier holds the predecessors whose condition the raised values broke
//! (player-0 predecessors only once no satisfied edge is left, tracked by counters).
//!
//! Two kinds of round share one state (see `state`), chosen per round by its size:
//! - **sequential** (small frontiers, or one thread): Algorithm 1 cut into rounds — vertices
//!   are lifted in order against the latest values, a vertex still waiting in the current
//!   round is not queued again. With one thread this is the reference worklist exactly.
//! - **parallel** (large frontiers), in two phases separated by a join:
//!   1. every frontier vertex is lifted against the live values (chaotic, Gauss–Seidel like
//!      the sequential rounds, so values climb as fast) and its new value published at once;
//!      a player-0 vertex also recounts its satisfied edges against the values it read; the
//!      old value goes to a side buffer;
//!   2. every raised vertex scans its predecessors against the final values: a player-1
//!      predecessor with a broken edge is queued; a player-0 predecessor whose edge went
//!      from satisfied (old value) to broken (new value) has its counter decremented, and
//!      the thread taking it to zero queues it. Queuing is deduplicated by an atomic flag
//!      bit; threads collect vertices in cache-sized batches and append them with one
//!      `fetch_add` each, so no lock is taken.
//!
//! **Counters may only undercount.** A player-0 vertex lifted in phase 1 may read a
//! successor's value before or after that successor's own raise in the same round. Before:
//! the phase-2 decrement is exact. After: the edge was already counted against the new
//! value, and a phase-2 decrement removes it a second time. So a counter is never above the
//! true number of satisfied edges — a vertex whose edges are all broken is always queued —
//! and an undercount only costs a lift that changes nothing (it then recounts exactly).
//! Decrements saturate at zero, and a decrement that finds 0 or 1 queues the vertex.
//!
//! Both kinds keep the same invariant at round boundaries — every broken vertex is in the
//! next frontier, every player-0 counter is at most its satisfied edges — so they mix
//! freely, and the result is the unique least fixpoint whatever the schedule.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::state::{Collector, LiftState, Lifter, current_bit, next_bit};
use super::values::Value;
use crate::arena::{Player, Weight};
use crate::solve::control::{Budget, Control, Interrupted};
use crate::solve::engine::FrontierTail;

/// Frontier vertices per parallel task.
const CHUNK: usize = 512;
/// Edges a sequential round visits between two checkpoints (~1 ms of work).
const CHECK_EVERY_EDGES: usize = 1 << 18;

/// Counters of a run.
pub(super) struct FrontierRun {
    pub rounds: u64,
    pub lifts: u64,
    /// Whether the frontier emptied (the least fixpoint), not the budget ran out.
    pub finished: bool,
    /// Bytes of the parallel rounds' side buffer (one value per vertex of the largest such
    /// round).
    pub side_buffer_bytes: usize,
    /// The frontier when the run stopped unfinished, against the one a few round
    /// boundaries earlier.
    pub tail: Option<FrontierTail>,
}

/// Round boundaries back that [`FrontierRun::tail`] compares with (one round alone is noisy).
const TAIL_BOUNDARIES: usize = 4;

/// Lifts `state` to the least fixpoint, or until the first round boundary after `budget`
/// runs out (its lifts, or its time: sequential rounds read the clock once per 1,024 lifts). `pool` is `None` for one thread.
pub(super) fn run<W: Weight, V: Value>(
    state: &mut LiftState<'_, W, V>,
    pool: Option<&rayon::ThreadPool>,
    sequential_below_edges: usize,
    budget: Budget,
    control: &Control,
) -> Result<FrontierRun, Interrupted> {
    control.checkpoint()?;
    initial_frontier(state, pool, control)?;
    state.advance();
    // Side buffer of parallel rounds: grown to the largest parallel frontier seen.
    let mut side: Vec<V::Cell> = Vec::new();
    let (mut rounds, mut lifts) = (0u64, 0u64);
    // (rounds, frontier) at the last few boundaries this loop saw, oldest first.
    let mut seen: std::collections::VecDeque<(u64, usize)> =
        std::collections::VecDeque::with_capacity(TAIL_BOUNDARIES);
    // A round is worth a fork/join when its frontier times the game's average
    // successor-plus-predecessor degree reaches the limit: an estimate in O(1) (counting
    // the frontier's true degrees every round cost a tenth of IEEE1394's 5,730 tiny rounds).
    // Any answer is correct; only the speed depends on it.
    let degree = (2 * state.arena.edge_count() / state.arena.vertex_count().max(1)).max(1);
    let large = |len: usize| pool.is_some() && len.saturating_mul(degree) >= sequential_below_edges;
    while state.queue.current_len() > 0 && lifts < budget.lifts && !budget.expired() {
        let len = state.queue.current_len();
        if seen.len() == TAIL_BOUNDARIES {
            seen.pop_front();
        }
        seen.push_back((rounds, len));
        control.progress().publish(rounds, len as u64, lifts);
        match pool {
            Some(pool) if large(len) => {
                control.checkpoint()?;
                if side.len() < len {
                    side.resize_with(len, || V::cell(0));
                }
                lifts += parallel_round(state, &side[..len], rounds, pool, control)?;
                rounds += 1;
                state.advance();
            }
            _ => {
                let run = sequential_rounds(state, rounds, lifts, budget, large, control)?;
                rounds += run.rounds;
                lifts += run.lifts;
                state.queue.set_current(run.head, run.len);
            }
        }
    }
    let left = state.queue.current_len();
    control.progress().publish(rounds, left as u64, lifts);
    let tail = seen
        .front()
        .filter(|&&(at, _)| left > 0 && rounds > at)
        .map(|&(at, earlier)| FrontierTail {
            now: left as u64,
            earlier: earlier as u64,
            rounds: rounds - at,
        });
    Ok(FrontierRun {
        rounds,
        lifts,
        tail,
        finished: left == 0,
        side_buffer_bytes: side.capacity() * V::BYTES,
    })
}

/// Queues every vertex whose condition is broken by the start values into the next
/// frontier (flag bit of round 0), and sets the player-0 counters.
fn initial_frontier<W: Weight, V: Value>(
    state: &LiftState<'_, W, V>,
    pool: Option<&rayon::ThreadPool>,
    control: &Control,
) -> Result<(), Interrupted> {
    let bit = current_bit(0);
    let k = state.lifter();
    let visit = |collector: &mut Collector<'_>, first: usize, count: usize| {
        for v in first as u32..(first + count) as u32 {
            let (broken, satisfied) = k.broken(v);
            k.count(v).store(satisfied, Relaxed);
            if broken {
                k.flag(v).store(bit, Relaxed);
                collector.push(v);
            }
        }
    };
    let n = state.arena.vertex_count();
    match pool {
        None => {
            let mut collector = Collector::new(&state.queue);
            for first in (0..n).step_by(CHUNK * 64) {
                control.checkpoint()?;
                visit(&mut collector, first, (n - first).min(CHUNK * 64));
            }
            Ok(())
        }
        Some(pool) => {
            let stop = Stop::default();
            crate::solve::threads::install_erased(pool, || {
                (0..n.div_ceil(CHUNK)).into_par_iter().for_each_init(
                    || Collector::new(&state.queue),
                    |collector, chunk| {
                        if stop.should_stop(control) {
                            return;
                        }
                        let first = chunk * CHUNK;
                        visit(collector, first, (n - first).min(CHUNK));
                    },
                );
            });
            stop.result()
        }
    }
}

/// Where a run of sequential rounds stopped.
struct SequentialRun {
    rounds: u64,
    lifts: u64,
    /// The frontier left: ring index of its first vertex and its length (0: fixpoint).
    head: usize,
    len: usize,
}

/// Sequential rounds (Gauss–Seidel: lifts see the latest values) from round `round` on,
/// back to back, until the frontier empties, a round ends with a frontier that `large`
/// calls large (parallel rounds take over), or a round ends with `budget` spent (its lifts,
/// `lifts_before` of them before this call, or its time, read once per 1,024 lifts). The ring is one FIFO worklist: each
/// round's frontier is the stretch appended while the previous round was lifted, so a
/// round boundary is just a position, and with one thread this is the reference worklist
/// exactly, without a call per round.
fn sequential_rounds<W: Weight, V: Value>(
    state: &LiftState<'_, W, V>,
    round: u64,
    lifts_before: u64,
    budget: Budget,
    large: impl Fn(usize) -> bool,
    control: &Control,
) -> Result<SequentialRun, Interrupted> {
    let k = state.lifter();
    let (slots, head, len) = state.queue.ring();
    let n = slots.len();
    let step = |i: usize| if i + 1 == n { 0 } else { i + 1 };
    // Ring indices: the next vertex to lift and the next free slot.
    let mut read = head;
    let mut write = if head + len >= n {
        head + len - n
    } else {
        head + len
    };
    // Left to lift in this round; queued for the next.
    let (mut remaining, mut queued) = (len, 0usize);
    let (mut rounds, mut lifts) = (0u64, 0u64);
    let (mut current, mut next) = (current_bit(round), next_bit(round));
    let mut edges_since_check = 0;
    // Rounds here can be a handful of lifts: the clock is read once per this many lifts.
    const LIFTS_PER_CLOCK_READ: u64 = 1 << 10;
    let mut next_clock_read = 0u64;
    loop {
        if remaining == 0 {
            // A round boundary: what was queued is the next round's frontier, and it
            // starts at `read` (it was appended right behind this round's).
            rounds += 1;
            remaining = std::mem::take(&mut queued);
            (current, next) = (next, current);
            if remaining == 0
                || large(remaining)
                || lifts_before + lifts >= budget.lifts
                || (lifts >= next_clock_read && {
                    next_clock_read = lifts + LIFTS_PER_CLOCK_READ;
                    budget.expired()
                })
            {
                return Ok(SequentialRun {
                    rounds,
                    lifts,
                    head: read,
                    len: remaining,
                });
            }
            if rounds % 64 == 0 {
                control.checkpoint()?;
                control
                    .progress()
                    .publish(round + rounds, remaining as u64, lifts_before + lifts);
            }
        }
        let v = slots[read].load(Relaxed);
        read = step(read);
        remaining -= 1;
        lifts += 1;
        let flag = k.flag(v);
        flag.store(flag.load(Relaxed) & !current, Relaxed);
        let old = k.value(v);
        let (new, scanned) = k.lift_scanning(v, old);
        edges_since_check += scanned;
        if new != old {
            k.set_value(v, new);
            let mut enqueue = |p: u32| {
                let flag = k.flag(p);
                let bits = flag.load(Relaxed);
                // Not again while it waits in this round (the sequential rule of `queue`).
                if bits & (current | next) == 0 {
                    flag.store(bits | next, Relaxed);
                    slots[write].store(p, Relaxed);
                    write = step(write);
                    queued += 1;
                }
            };
            edges_since_check += k.for_broken_predecessors(v, old, new, |p, owner| match owner {
                Player::Zero => {
                    let count = k.count(p);
                    let left = count.load(Relaxed);
                    count.store(left.saturating_sub(1), Relaxed);
                    if left <= 1 {
                        enqueue(p);
                    }
                }
                Player::One => enqueue(p),
            });
        }
        // (`new == old`: an undercounted vertex, see the module docs, that turned out
        // unbroken; its recount read the same values as its lift, so it is at least 1.)
        if edges_since_check >= CHECK_EVERY_EDGES {
            edges_since_check = 0;
            control.checkpoint()?;
            control.progress().publish(
                round + rounds,
                (remaining + queued) as u64,
                lifts_before + lifts,
            );
        }
    }
}

/// One parallel round in two phases; `side` has one slot per frontier vertex. Returns its
/// lifts.
fn parallel_round<W: Weight, V: Value>(
    state: &LiftState<'_, W, V>,
    side: &[V::Cell],
    round: u64,
    pool: &rayon::ThreadPool,
    control: &Control,
) -> Result<u64, Interrupted> {
    let (current, next) = (current_bit(round), next_bit(round));
    let queue = &state.queue;
    let lifter = state.lifter();
    let len = queue.current_len();
    let side = &side[..len];
    let stop = Stop::default();
    crate::solve::threads::install_erased(pool, || {
        // Phase 1: lift against the live values, publish at once, keep the old values.
        side.par_chunks(CHUNK).enumerate().for_each_init(
            || Collector::new(queue),
            |collector, (chunk, before)| {
                if stop.should_stop(control) {
                    return;
                }
                for (k, before) in before.iter().enumerate() {
                    let v = queue.current(chunk * CHUNK + k);
                    let flag = lifter.flag(v);
                    flag.store(flag.load(Relaxed) & !current, Relaxed);
                    let old = lifter.value(v);
                    V::store(before, old);
                    let new = lifter.lift(v, old);
                    if new != old {
                        lifter.set_value(v, new);
                    } else if lifter.owner(v) == Player::Zero
                        && lifter.count(v).load(Relaxed) == 0
                        && claim(flag, next)
                    {
                        // Unbroken at its lift, broken by the time of its recount (other
                        // threads raised successors in between): lift it again next round.
                        collector.push(v);
                    }
                }
            },
        );
        if stop.is_set() {
            return;
        }
        // Phase 2: predecessors of raised vertices, against the final values.
        side.par_chunks(CHUNK).enumerate().for_each_init(
            || Collector::new(queue),
            |collector, (chunk, before)| {
                if stop.should_stop(control) {
                    return;
                }
                for (k, before) in before.iter().enumerate() {
                    let v = queue.current(chunk * CHUNK + k);
                    let (old, new) = (V::load(before), lifter.value(v));
                    if new != old {
                        queue_broken_predecessors(lifter, v, old, new, next, collector);
                    }
                }
            },
        );
    });
    stop.result()?;
    Ok(len as u64)
}

/// Phase 2 for one vertex `v` raised from `old` to `new`.
#[inline]
fn queue_broken_predecessors<W: Weight, V: Value>(
    k: Lifter<'_, W, V>,
    v: u32,
    old: u64,
    new: u64,
    next: u8,
    collector: &mut Collector<'_>,
) {
    k.for_broken_predecessors(v, old, new, |p, owner| {
        let queue = match owner {
            Player::Zero => decrement(k.count(p)) <= 1,
            Player::One => true,
        };
        if queue && claim(k.flag(p), next) {
            collector.push(p);
        }
    });
}

/// Decrements a counter, saturating at zero; returns its previous value.
#[inline]
fn decrement(count: &AtomicU32) -> u32 {
    match count.fetch_update(Relaxed, Relaxed, |c| Some(c.saturating_sub(1))) {
        Ok(previous) | Err(previous) => previous,
    }
}

/// Sets `bit` in `flag`; true for the one caller that set it.
#[inline]
fn claim(flag: &AtomicU8, bit: u8) -> bool {
    flag.load(Relaxed) & bit == 0 && flag.fetch_or(bit, Relaxed) & bit == 0
}

/// The "stop" every task of a parallel loop checks: the first task to see the cancel flag
/// or the deadline sets it, the rest skip their work.
#[derive(Default)]
pub(super) struct Stop {
    set: AtomicBool,
    /// 0: running; 1: cancelled; 2: timed out.
    why: AtomicU8,
}

impl Stop {
    /// Whether this task should skip its work (checks `control` too).
    #[inline]
    pub fn should_stop(&self, control: &Control) -> bool {
        if self.set.load(Relaxed) {
            return true;
        }
        match control.checkpoint() {
            Ok(()) => false,
            Err(why) => {
                let code = match why {
                    Interrupted::Cancelled => 1,
                    Interrupted::TimedOut => 2,
                };
                self.why.store(code, Relaxed);
                self.set.store(true, Relaxed);
                true
            }
        }
    }

    /// Whether some task stopped.
    pub fn is_set(&self) -> bool {
        self.set.load(Relaxed)
    }

    /// `Err` if some task stopped.
    pub fn result(&self) -> Result<(), Interrupted> {
        match self.why.load(Relaxed) {
            0 => Ok(()),
            1 => Err(Interrupted::Cancelled),
            _ => Err(Interrupted::TimedOut),
        }
    }
}
