// Frontier lifting for energy games (the paper's Algorithm 3), with the round loop kept on
// the device. Include-free: NVRTC compiles this at start-up for the device's own arch.
//
// Layout: either renumbered on the host so that vertices [0, n0) belong to player 0 (min)
// and [n0, n) to player 1 (max), or in the input's order with owners[v] the player of v. CSR successors and CSC predecessors; weights at the arena's storage width
// W (16, 32 or 64 bits), energies V = u32 when the bound M < u32::MAX, else u64, with TOP
// = all ones; `energy_minus` is src/solve/energy.rs `minus`, bit for bit, at either width.
// Kernels: lift_rounds_h{H}_w{16,32,64}_v{32,64}, one per lane count,
// player0_moves_w.._v.. (player 0's strategy at the fixpoint), recorded_moves_w.._v..
// (player 1's recorded moves at the fixpoint, classified), player1_edges_w.._v..
// (player 1's strategy σ1 for an evaluation), predecessors_w.._v.. (the
// CSC's sources and weights from the CSR, once after the upload; count_in_degrees,
// scan_tiles and add_tile_offsets its offsets before) and deficits_w.._v.. (the bound M,
// for a game uploaded without it); one width pair per
// compilation (the LIFT_* macros at the end).
//
// One launch runs rounds until the frontier empties, leaves the size window
// [shrink_below, grow_above] that suits the launch's grid, or `max_rounds` pass. Every
// thread tracks the round number itself and takes every exit decision from the same
// counter read after the same barrier, so all threads leave together (a value written
// before round r's barrier is not written again until every block has read it: the
// frontier counts rotate through three words, the time verdict through two).
//
// Round r: count[r % 3] is the frontier's size; pushes count into count[(r + 1) % 3];
// count[(r + 2) % 3] (read as the frontier size at the start of round r - 1) is zeroed for
// round r + 1. stamp[v] holds the last round whose frontier v was pushed into.
//
// Two frontier forms, chosen per round from its size:
// - sparse: a duplicate-free list, frontier[r & 1][0 .. count); pushes claim the vertex
//   with an atomic exchange on its stamp and append it (one atomic add per warp);
// - dense (large frontiers): the frontier is {v : stamp[v] == r}; pushes just store the
//   stamp (idempotent), no list and no claim, and count with duplicates (an upper bound,
//   zero exactly when nothing was pushed). A round pushes densely when its own frontier is
//   at least `dense_above`; the next round is dense exactly when this one pushed densely.
// A vertex pushed into round r + 1 before a dense round r reached it is lifted in round
// r + 1 instead: lifting later, from newer values, is never wrong (lifts are monotone).
//
// Early exit (LIFT_EARLY_EXIT, on by default): a lift stops reading successors once the
// outcome is decided: a min vertex whose running minimum is already at most f(v) is not
// lifted, a max vertex that reached ⊤ goes to ⊤ (full rounds 7-15 % faster on three of
// four 10^7-edge games on an H100, session 4's benchmarks, in git history).
// Experiment knobs, set through EGSOLVE_NVRTC_EXTRA_OPTIONS: LIFT_EARLY_EXIT=0,
// LIFT_BATCH, LIFT_MIN_BLOCKS (scripts/gpu-session.sh `variants`, BENCHMARKS.md), and the
// test knob LIFT_SLOW_READER_NS.

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef int i32;
typedef short i16;

#define BLOCK 512

// Successors each thread reads per step of its gather loop (an experiment knob:
// EGSOLVE_NVRTC_EXTRA_OPTIONS=-DLIFT_BATCH=4).
#ifndef LIFT_BATCH
#define LIFT_BATCH 1
#endif

// Stop reading a vertex's successors once the result cannot lift it: a min vertex whose
// running minimum is at most its value, a max vertex that reached ⊤ (set to 0 to read
// every successor, e.g. to measure a full round's bytes).
#ifndef LIFT_EARLY_EXIT
#define LIFT_EARLY_EXIT 1
#endif

// Blocks per SM the compiler must fit (register cap); 0 leaves it to the compiler.
#ifndef LIFT_MIN_BLOCKS
#define LIFT_MIN_BLOCKS 0
#endif

// Test knob: the grid's last block sleeps this many nanoseconds after every barrier before
// reading the round's counters, so that the leader runs a round ahead of it (0: off). With
// it, a verdict the leader could overwrite before every block has read it turns from a rare
// hang into a likely one (scripts and logs: session 8's device logs, in git history under notes/gpu).
#ifndef LIFT_SLOW_READER_NS
#define LIFT_SLOW_READER_NS 0
#endif

struct LiftParams {
    const u32* succ_offsets;
    const u32* succ_targets;
    const void* succ_weights;  // W[m]
    const u32* pred_offsets;
    const u32* pred_sources;
    const void* pred_weights;  // W[m]
    void* credit;              // V[n]
    u32* frontier0;
    u32* frontier1;
    u32* stamp;
    u32* state;        // RoundState, see below
    u64 bound;
    u32 n;
    u32 n0;
    u32 dense_above;   // push densely from frontiers of at least this size
    u32 max_rounds;
    u32 shrink_below;  // leave when the next frontier is smaller (0: never)
    u32 grow_above;    // leave when the next frontier is larger
    u64 max_ns;        // leave after a round that ends this long after the launch (0: never)
    const unsigned char* owners;  // each vertex's player (input order), or null: v < n0
    u32* top_record;  // why a lift topped each vertex (record_top), or null: not recorded
};

// state words: [0..3) frontier counts, [3] round, [4] barrier arrivals, [5] barrier
// generation, [6..8) lifts (u64, little-endian words), [8] whether round `round`'s frontier
// is dense, [9..11) whether the launch's time is up after round r, in word 9 + (r & 1)
// (written by the leader before round r's barrier when max_ns != 0). Two words, because the
// leader may finish round r + 1 and write its verdict before a slow block has read round
// r's: with one word that block could leave a round early and the rest of the grid would
// wait for it at the next barrier for ever (the IEEE1394 hang of session 6's device logs, in git history under notes/gpu).
// The leader writes word 9 + (r & 1) again only before round r + 2's barrier, after every
// block has passed round r + 1's, so after reading it.
#define ST_COUNT 0
#define ST_ROUND 3
#define ST_BAR_COUNT 4
#define ST_BAR_GEN 5
#define ST_LIFTS 6
#define ST_DENSE 8
#define ST_STOP 9

// The device's nanosecond clock (the same on every SM).
__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// ⊤ at width V.
template <typename V>
__device__ __forceinline__ V top() {
    return (V)~(V)0;
}

// a ⊖ w at width V: for V = u32 the bound is below u32::MAX, so a finite result fits and
// differs from ⊤.
template <typename V>
__device__ __forceinline__ V energy_minus(V a, i64 w, u64 bound) {
    if (a == top<V>()) return top<V>();
    if (w >= 0) {
        u64 uw = (u64)w;
        return (u64)a > uw ? (V)((u64)a - uw) : (V)0;
    }
    u64 need = (u64)(-(w + 1)) + 1ULL;  // |w|, also for i64::MIN
    u64 sum = (u64)a + need;
    if (sum < (u64)a) return top<V>();  // wrapped: certainly above bound
    return sum > bound ? top<V>() : (V)sum;
}

template <typename V>
__device__ __forceinline__ V pick(bool is_min, V a, V b) {
    return is_min ? (a < b ? a : b) : (a > b ? a : b);
}

// Whether the successors read so far decide that v is not lifted (min: the minimum is
// already at most f(v)) or is lifted to ⊤ (max): either way the rest cannot change that.
// With several lanes per vertex, a lane that stops leaves a partial result that decides
// the group's the same way (the group's min is at most it; max with ⊤ is ⊤).
template <typename V>
__device__ __forceinline__ bool settled(bool is_min, V acc, V old) {
    return is_min ? acc <= old : acc == top<V>();
}

__device__ __forceinline__ u32 load_volatile(const u32* p) {
    return *(const volatile u32*)p;
}

// A software grid barrier; the grid is co-resident (cooperative launch).
__device__ __forceinline__ void grid_barrier(u32* state) {
    if (gridDim.x == 1) {
        __syncthreads();
        return;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 gen = load_volatile(state + ST_BAR_GEN);
        __threadfence();
        u32 arrived = atomicAdd(state + ST_BAR_COUNT, 1u);
        if (arrived == gridDim.x - 1) {
            atomicExch(state + ST_BAR_COUNT, 0u);
            __threadfence();
            atomicAdd(state + ST_BAR_GEN, 1u);
        } else {
            while (load_volatile(state + ST_BAR_GEN) == gen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// Appends `v` to `list` where `want`, one atomic per warp.
__device__ __forceinline__ void push(bool want, u32 v, u32* list, u32* count) {
    unsigned active = __activemask();
    unsigned ballot = __ballot_sync(active, want);
    if (ballot == 0) return;
    u32 lane = threadIdx.x & 31;
    int leader = __ffs(ballot) - 1;
    u32 base = 0;
    if ((int)lane == leader) base = atomicAdd(count, (u32)__popc(ballot));
    base = __shfl_sync(active, base, leader);
    if (want) list[base + __popc(ballot & ((1u << lane) - 1u))] = v;
}

// Records why v, about to be published at ⊤, got there (src/solve/accel/topping.rs
// `classify`, read again now), in one word: (the edge's position among v's successors << 2)
// | cause, cause 1 when player 1 has a successor at ⊤ (its first such edge) or player 0
// only such successors, else 2 (player 1's first edge whose need is ⊤); position 0 for
// player 0, all ones for none (a position past 2^30 - 2 is none too: the host then checks
// more, never less). 0: not topped by a lift. The fence orders these reads before the ⊤
// store, which the record's argument (a vertex topped by ⊤ successors read them before its
// own ⊤ was visible) needs.
#define TOP_NO_POSITION 0x3fffffffu
template <typename W, typename V>
__device__ __noinline__ void record_top(const LiftParams& p, u32 v, bool is_min, u32 begin, u32 end) {
    const V* credit = (const V*)p.credit;
    const W* succ_weights = (const W*)p.succ_weights;
    u32 cause = 1;
    u32 edge = end;
    if (is_min) {
        for (u32 k = begin; k < end; k++) {
            if (__ldcg(credit + __ldg(p.succ_targets + k)) != top<V>()) {
                cause = 2;
                break;
            }
        }
        edge = begin;
    } else {
        for (u32 k = begin; k < end && edge == end; k++) {
            if (__ldcg(credit + __ldg(p.succ_targets + k)) == top<V>()) edge = k;
        }
        if (edge == end) {
            cause = 2;
            for (u32 k = begin; k < end && edge == end; k++) {
                V c = __ldcg(credit + __ldg(p.succ_targets + k));
                if (energy_minus<V>(c, (i64)__ldg(succ_weights + k), p.bound) == top<V>()) edge = k;
            }
        }
    }
    u32 position = edge < end && edge - begin < TOP_NO_POSITION ? edge - begin : TOP_NO_POSITION;
    p.top_record[v] = position << 2 | cause;
    __threadfence();
}

// Lifts vertex v (all H lanes of its group together) and pushes the predecessors whose
// edge into v it breaks. Returns how many it pushed in dense mode (this lane's share).
template <int H, typename W, typename V>
__device__ __forceinline__ u32 lift_vertex(const LiftParams& p, u32 v, u32 sub, unsigned group_mask,
                                           u32 stamp, bool dense_push, u32* next, u32* next_count) {
    const bool is_min = p.owners == nullptr ? v < p.n0 : __ldg(p.owners + v) == 0;
    V* credit = (V*)p.credit;
    const W* succ_weights = (const W*)p.succ_weights;
    const W* pred_weights = (const W*)p.pred_weights;
    // Lane 0's view of f(v), shared with the group before the successors are read (the early
    // exit compares against it): a lane that read f(v) after lane 0 stored the new value
    // would wrongly see no change and skip its share of the predecessors.
    V old = __ldcg(credit + v);
    if (H > 1) old = __shfl_sync(group_mask, old, 0, H);
    const u32 begin = __ldg(p.succ_offsets + v);
    const u32 end = __ldg(p.succ_offsets + v + 1);
    V acc = is_min ? top<V>() : (V)0;
    u32 k = begin + sub;
#if LIFT_BATCH > 1
    // LIFT_BATCH successors at a time: their targets first, then their energies, so that
    // a thread has that many gathers in flight.
    for (; k + (LIFT_BATCH - 1) * H < end; k += LIFT_BATCH * H) {
        u32 t[LIFT_BATCH];
        i64 w[LIFT_BATCH];
#pragma unroll
        for (int j = 0; j < LIFT_BATCH; j++) {
            t[j] = __ldg(p.succ_targets + k + j * H);
            w[j] = (i64)__ldg(succ_weights + k + j * H);
        }
        V c[LIFT_BATCH];
#pragma unroll
        for (int j = 0; j < LIFT_BATCH; j++) c[j] = __ldcg(credit + t[j]);
#pragma unroll
        for (int j = 0; j < LIFT_BATCH; j++) acc = pick<V>(is_min, acc, energy_minus<V>(c[j], w[j], p.bound));
        if (LIFT_EARLY_EXIT && settled<V>(is_min, acc, old)) break;
    }
#endif
    for (; k < end; k += H) {
        V c = energy_minus<V>(__ldcg(credit + __ldg(p.succ_targets + k)), (i64)__ldg(succ_weights + k),
                              p.bound);
        acc = pick<V>(is_min, acc, c);
        if (LIFT_EARLY_EXIT && settled<V>(is_min, acc, old)) break;
    }
    if (H > 1) {
#pragma unroll
        for (int off = H / 2; off > 0; off >>= 1) {
            V other = __shfl_down_sync(group_mask, acc, off, H);
            acc = pick<V>(is_min, acc, other);
        }
        acc = __shfl_sync(group_mask, acc, 0, H);
    }
    if (acc <= old) return 0;
    if (sub == 0 && acc == top<V>() && p.top_record != nullptr) record_top<W, V>(p, v, is_min, begin, end);
    if (sub == 0) __stcg(credit + v, acc);
    const u32 pbegin = __ldg(p.pred_offsets + v);
    const u32 pend = __ldg(p.pred_offsets + v + 1);
    u32 pushed = 0;
    for (u32 k = pbegin + sub; k < pend; k += H) {
        const u32 u = __ldg(p.pred_sources + k);
        bool want = __ldcg(credit + u) < energy_minus<V>(acc, (i64)__ldg(pred_weights + k), p.bound) &&
                    __ldcg(p.stamp + u) != stamp;
        if (dense_push) {
            if (want) {
                __stcg(p.stamp + u, stamp);
                pushed += 1;
            }
        } else {
            want = want && atomicExch(p.stamp + u, stamp) != stamp;
            push(want, u, next, next_count);
        }
    }
    return pushed;
}

template <int H, typename W, typename V>
__device__ void run_rounds(const LiftParams& p) {
    const u32 lane = threadIdx.x & 31;
    const u32 sub = lane & (H - 1);
    const unsigned group_mask =
        H == 32 ? 0xffffffffu : (((1u << H) - 1u) << (lane & ~(u32)(H - 1)));
    const u32 group = (blockIdx.x * blockDim.x + threadIdx.x) / H;
    const u32 groups = gridDim.x * blockDim.x / H;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const u64 started = (leader && p.max_ns != 0) ? global_ns() : 0ULL;

    u32 round = load_volatile(p.state + ST_ROUND);
    bool dense = load_volatile(p.state + ST_DENSE) != 0;
    u64 lifts = 0;
    u32 done = 0;
    for (;;) {
        u32* count = p.state + ST_COUNT;
        const u32 size = load_volatile(count + round % 3);
        const u32* frontier = (round & 1) ? p.frontier1 : p.frontier0;
        u32* next = (round & 1) ? p.frontier0 : p.frontier1;
        u32* next_count = count + (round + 1) % 3;
        const u32 stamp = round + 1;
        const bool dense_push = size >= p.dense_above;
        if (leader) {
            count[(round + 2) % 3] = 0;
            if (!dense) lifts += size;  // dense rounds count their lifts exactly below
        }
        u32 pushed = 0;
        if (dense) {
            u32 lifted = 0;
            for (u32 v = group; v < p.n; v += groups) {
                // The group follows lane 0's reading of the stamp (a push may change it
                // between two lanes' reads; a split group would break the shuffles).
                u32 mark = __ldcg(p.stamp + v);
                if (H > 1) mark = __shfl_sync(group_mask, mark, 0, H);
                if (mark != round) continue;
                lifted += sub == 0;
                pushed += lift_vertex<H, W, V>(p, v, sub, group_mask, stamp, dense_push, next, next_count);
            }
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) lifted += __shfl_down_sync(0xffffffffu, lifted, off);
            if (lane == 0 && lifted != 0) {
                atomicAdd((unsigned long long*)(p.state + ST_LIFTS), (unsigned long long)lifted);
            }
        } else {
            for (u32 i = group; i < size; i += groups) {
                const u32 v = __ldcg(frontier + i);
                pushed += lift_vertex<H, W, V>(p, v, sub, group_mask, stamp, dense_push, next, next_count);
            }
        }
        if (dense_push) {
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) pushed += __shfl_down_sync(0xffffffffu, pushed, off);
            if (lane == 0 && pushed != 0) atomicAdd(next_count, pushed);
        }
        // The leader alone reads the clock; everyone reads its verdict after the barrier,
        // from this round's word of the two (see the state words above).
        u32* stop = p.state + ST_STOP + (round & 1);
        if (leader && p.max_ns != 0) *stop = global_ns() - started >= p.max_ns ? 1u : 0u;
        grid_barrier(p.state);
#if LIFT_SLOW_READER_NS > 0
        if (gridDim.x > 1 && blockIdx.x == gridDim.x - 1) __nanosleep(LIFT_SLOW_READER_NS);
#endif
        round += 1;
        done += 1;
        dense = dense_push;
        const u32 next_size = load_volatile(next_count);
        const bool time_up = p.max_ns != 0 && load_volatile(stop) != 0;
        const bool leave = next_size == 0 || next_size > p.grow_above ||
                           next_size < p.shrink_below || done >= p.max_rounds || time_up;
        if (leave) {
            if (leader) {
                p.state[ST_ROUND] = round;
                p.state[ST_DENSE] = dense ? 1u : 0u;
                atomicAdd((unsigned long long*)(p.state + ST_LIFTS), (unsigned long long)lifts);
                __threadfence();
            }
            return;
        }
    }
}

// Player 0's strategy at the least fixpoint, from the values the last launch left there
// (src/solve/strategy.rs `player0_from`, the same choice): at each player-0 vertex with a
// finite value, the first successor that needs at most f(v) (f(u) ⊖ w <= f(v): at the
// fixpoint, the first of least need), else the first of least need. Every other vertex
// gets ~0 (NO_MOVE). A warp per vertex, 32 successors per step, so that a hub's thousands
// of successors are not one thread's chain of loads; vertex ids and `moves` in device order.
template <typename W, typename V>
__device__ __forceinline__ void choose_player0_moves(const LiftParams& p, u32* moves) {
    const V* credit = (const V*)p.credit;
    const W* weights = (const W*)p.succ_weights;
    const u32 lane = threadIdx.x & 31;
    const u32 warps = (gridDim.x * blockDim.x) >> 5;
    for (u32 v = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; v < p.n; v += warps) {
        const bool is_min = p.owners == nullptr ? v < p.n0 : __ldg(p.owners + v) == 0;
        const V need = credit[v];
        u32 best = ~0u;
        if (is_min && need != top<V>()) {  // the same for the whole warp
            const u32 begin = __ldg(p.succ_offsets + v);
            const u32 end = __ldg(p.succ_offsets + v + 1);
            // This lane's first edge of least need so far, for when none needs <= f(v).
            V least = top<V>();
            u32 least_edge = ~0u;
            u32 chosen = ~0u;
            for (u32 base = begin; base < end; base += 32) {
                const u32 e = base + lane;
                bool enough = false;
                if (e < end) {
                    const V key =
                        energy_minus<V>(credit[__ldg(p.succ_targets + e)], (i64)__ldg(weights + e), p.bound);
                    enough = key <= need;
                    if (least_edge == ~0u || key < least) {
                        least = key;
                        least_edge = e;
                    }
                }
                const unsigned hits = __ballot_sync(0xffffffffu, enough);
                if (hits != 0) {
                    chosen = base + __ffs(hits) - 1;
                    break;
                }
            }
            if (chosen == ~0u) {
                for (int off = 16; off > 0; off >>= 1) {
                    const V other = __shfl_down_sync(0xffffffffu, least, off);
                    const u32 other_edge = __shfl_down_sync(0xffffffffu, least_edge, off);
                    if (other_edge != ~0u &&
                        (least_edge == ~0u || other < least || (other == least && other_edge < least_edge))) {
                        least = other;
                        least_edge = other_edge;
                    }
                }
                chosen = __shfl_sync(0xffffffffu, least_edge, 0);
            }
            best = chosen == ~0u ? ~0u : __ldg(p.succ_targets + chosen);  // ~0u: no edge
        }
        if (lane == 0) moves[v] = best;
    }
}

// The predecessors' sources and weights from the successors, so that the upload carries
// each edge once: the CSC's offsets come first (the prefix sums of the in-degrees, below), and
// groups of `lanes` threads (a power of two, at most 32) take vertices u in grid-stride
// order and append (u, w) to the list of each successor t at a slot claimed with an atomic
// add on cursor[t] (all zero on entry; each ends at t's in-degree). Within a list the order
// is the claims' order, which varies from run to run: lifting does not depend on it (it
// only decides which predecessors a lift pushes, and the pushes form a set).
// Safe on any successor arrays (`m` edges), so that it may run while the host still checks
// them (an early upload, src/engine/early.rs): it does nothing when count_in_degrees found
// the offsets unsound (*bad: not rising from 0 to m, where overlapping ranges could make
// its work unbounded); offsets are clamped to m, targets of n or more skipped, and a claim
// past t's list dropped. On checked arrays none of that happens.
template <typename W>
__device__ void list_predecessors(const LiftParams& p, u32* cursor, u32 lanes, u32 m, const u32* bad) {
    if (__ldg(bad) != 0u) return;
    u32* sources = (u32*)p.pred_sources;
    W* pred_weights = (W*)p.pred_weights;
    const W* succ_weights = (const W*)p.succ_weights;
    const u32 thread = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 sub = thread & (lanes - 1);
    const u32 groups = gridDim.x * blockDim.x / lanes;
    for (u32 u = thread / lanes; u < p.n; u += groups) {
        const u32 end = min(__ldg(p.succ_offsets + u + 1), m);
        for (u32 k = min(__ldg(p.succ_offsets + u), m) + sub; k < end; k += lanes) {
            const u32 t = __ldg(p.succ_targets + k);
            if (t >= p.n) continue;
            const u32 slot = __ldg(p.pred_offsets + t) + atomicAdd(cursor + t, 1u);
            if (slot >= __ldg(p.pred_offsets + t + 1)) continue;
            sources[slot] = u;
            pred_weights[slot] = __ldg(succ_weights + k);
        }
    }
}

// The CSC's offsets from the successors, so that the upload carries neither side's
// predecessor arrays: count_in_degrees adds 1 to count[t] for every edge into t (count
// holds n + 1 zeros; count[n] stays 0), and an exclusive prefix sum of count in place
// (scan_tiles, then the tiles' totals scanned the same way and added back by
// add_tile_offsets) turns it into the offsets, ending at m. Targets of n or more (unchecked
// arrays, see list_predecessors) are not counted, and *bad (zero on entry) is set unless the
// successor offsets rise from 0 to m without falling.
extern "C" __global__ void __launch_bounds__(BLOCK) count_in_degrees(
    const u32* targets, u32 m, u32* count, u32 n, const u32* offsets, u32* bad) {
    const u32 stride = gridDim.x * blockDim.x;
    const u32 first = blockIdx.x * blockDim.x + threadIdx.x;
    for (u32 k = first; k < m; k += stride) {
        const u32 t = __ldg(targets + k);
        if (t < n) atomicAdd(count + t, 1u);
    }
    for (u32 u = first; u < n; u += stride) {
        if (__ldg(offsets + u) > __ldg(offsets + u + 1)) atomicOr(bad, 1u);
    }
    if (first == 0 && (__ldg(offsets) != 0u || __ldg(offsets + n) != m)) atomicOr(bad, 1u);
}

#define SCAN_ITEMS 4
#define SCAN_TILE (BLOCK * SCAN_ITEMS)

// Exclusive prefix sums of data[0, len) within each tile of SCAN_TILE elements, in place;
// the tile's total goes to sums[tile]. One block per tile, SCAN_ITEMS consecutive elements
// per thread; sums fit in 32 bits (the callers' totals are at most m < 2^32).
extern "C" __global__ void __launch_bounds__(BLOCK) scan_tiles(u32* data, u32 len, u32* sums) {
    __shared__ u32 warp_before[BLOCK / 32];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 base = (u64)blockIdx.x * SCAN_TILE + (u64)threadIdx.x * SCAN_ITEMS;
    u32 before_item[SCAN_ITEMS];
    u32 own = 0;
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; i++) {
        before_item[i] = own;
        own += base + i < len ? data[base + i] : 0u;
    }
    // Inclusive sums of the threads' totals within the warp, then across the warps.
    u32 inclusive = own;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, inclusive, off);
        if (lane >= off) inclusive += y;
    }
    if (lane == 31) warp_before[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const u32 total = lane < BLOCK / 32 ? warp_before[lane] : 0u;
        u32 across = total;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const u32 y = __shfl_up_sync(0xffffffffu, across, off);
            if (lane >= off) across += y;
        }
        if (lane < BLOCK / 32) warp_before[lane] = across - total;
        if (lane == BLOCK / 32 - 1) sums[blockIdx.x] = across;
    }
    __syncthreads();
    const u32 before = warp_before[warp] + inclusive - own;
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; i++) {
        if (base + i < len) data[base + i] = before + before_item[i];
    }
}

// Adds the scanned tile totals back: sums[t] to every element of tile t >= 1 (block b takes
// tile b + 1).
extern "C" __global__ void __launch_bounds__(BLOCK) add_tile_offsets(u32* data, u32 len, const u32* sums) {
    const u32 tile = blockIdx.x + 1;
    const u32 add = __ldg(sums + tile);
    const u64 base = (u64)tile * SCAN_TILE + (u64)threadIdx.x * SCAN_ITEMS;
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; i++) {
        if (base + i < len) data[base + i] += add;
    }
}

// The bound M = sum over vertices u of max(0, -least weight leaving u) (src/solve/energy.rs
// `bound`), for a game uploaded without it: groups of `lanes` threads (as above) take the
// least of u's weights from 0, lane 0 adds -least to its own sum, and each block adds its
// threads' sums to *sum (zero on entry) with one atomic add. Only for 16- and 32-bit weights:
// then M <= n * 2^31 < 2^63, so no sum overflows. The sum does not depend on the order.
template <typename W>
__device__ void sum_deficits(const LiftParams& p, u64* sum, u32 lanes) {
    __shared__ u64 block_sum;
    if (threadIdx.x == 0) block_sum = 0;
    __syncthreads();
    const W* succ_weights = (const W*)p.succ_weights;
    const u32 thread = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 sub = thread & (lanes - 1);
    const u32 groups = gridDim.x * blockDim.x / lanes;
    const unsigned group_mask =
        (lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u)) << ((threadIdx.x & 31) & ~(lanes - 1));
    u64 mine = 0;
    for (u32 u = thread / lanes; u < p.n; u += groups) {
        i64 least = 0;
        const u32 end = __ldg(p.succ_offsets + u + 1);
        for (u32 k = __ldg(p.succ_offsets + u) + sub; k < end; k += lanes) {
            least = min(least, (i64)__ldg(succ_weights + k));
        }
        for (u32 off = lanes / 2; off > 0; off >>= 1) {
            least = min(least, (i64)__shfl_down_sync(group_mask, least, off, lanes));
        }
        if (sub == 0) mine += (u64)(-least);
    }
    for (int off = 16; off > 0; off >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, off);
    if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(&block_sum, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_sum != 0) atomicAdd(sum, block_sum);
}

// Player 1's strategy σ1 for an evaluation, from the values the last launch left there
// (src/solve/accel/evaluate.rs `choose_strategy`, the same choice): at each player-1 vertex
// with a finite value, the edge maximising (f(u) ⊖ w, −w), the first of equal keys. Every
// other vertex gets ~0u (the host keeps the edge it had). A warp per vertex, as above;
// edge indices into the device's CSR.
template <typename W, typename V>
__device__ __forceinline__ void choose_player1_edges(const LiftParams& p, u32* edges) {
    const V* credit = (const V*)p.credit;
    const W* weights = (const W*)p.succ_weights;
    const u32 lane = threadIdx.x & 31;
    const u32 warps = (gridDim.x * blockDim.x) >> 5;
    for (u32 v = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; v < p.n; v += warps) {
        const bool is_max = p.owners == nullptr ? v >= p.n0 : __ldg(p.owners + v) != 0;
        u32 best = ~0u;
        if (is_max && credit[v] != top<V>()) {  // the same for the whole warp
            const u32 begin = __ldg(p.succ_offsets + v);
            const u32 end = __ldg(p.succ_offsets + v + 1);
            // This lane's best edge so far (its edges in order: the first of equal keys).
            V key = 0;
            i64 lighter = 0;  // −w
            u32 edge = ~0u;
            for (u32 e = begin + lane; e < end; e += 32) {
                const i64 w = (i64)__ldg(weights + e);
                const V k = energy_minus<V>(credit[__ldg(p.succ_targets + e)], w, p.bound);
                if (edge == ~0u || k > key || (k == key && -w > lighter)) {
                    key = k;
                    lighter = -w;
                    edge = e;
                }
            }
            for (int off = 16; off > 0; off >>= 1) {
                const V other = __shfl_down_sync(0xffffffffu, key, off);
                const i64 other_lighter = __shfl_down_sync(0xffffffffu, lighter, off);
                const u32 other_edge = __shfl_down_sync(0xffffffffu, edge, off);
                if (other_edge != ~0u &&
                    (edge == ~0u || other > key || (other == key && other_lighter > lighter) ||
                     (other == key && other_lighter == lighter && other_edge < edge))) {
                    key = other;
                    lighter = other_lighter;
                    edge = other_edge;
                }
            }
            best = __shfl_sync(0xffffffffu, edge, 0);
        }
        if (lane == 0) edges[v] = best;
    }
}

// Player 1's recorded moves at the fixpoint and what their certificate needs, for a solve
// without evaluations (src/solve/strategy/lifted.rs `recorded_on_host` with no ranks and no
// seed, vertex for vertex), from the values and the topping record left here: at each
// vertex v at ⊤, topped by ⊤ successors (cause 1): player 1 moves along its recorded edge
// (broken without one), counts[2] += 1; else player 1's recorded edge (cause 2) must lead to ⊤ and player 0's
// successors must all be at ⊤, and v is a root (appended to roots, counts[0] their
// number), or else v is broken (counts[1] += 1). moves[v]: the move (an index into the
// CSR), ~0u at every other vertex and at broken ones. A thread per vertex, each warp's 32
// vertices side by side, so that a warp appends its roots with one atomic add.
template <typename V>
__device__ __forceinline__ void classify_recorded(const LiftParams& p, u32* moves, u32* roots, u32* counts) {
    const V* credit = (const V*)p.credit;
    const u32 lane = threadIdx.x & 31;
    const u32 stride = gridDim.x * blockDim.x;
    for (u32 first = (blockIdx.x * blockDim.x + threadIdx.x) & ~31u; first < p.n; first += stride) {
        const u32 v = first + lane;
        bool root = false, broken = false, lifted = false;
        if (v < p.n) {
            u32 move = ~0u;
            if (credit[v] == top<V>()) {
                const u32 word = p.top_record[v];
                const u32 cause = word & 3u;
                const bool is_max = p.owners == nullptr ? v >= p.n0 : __ldg(p.owners + v) != 0;
                const u32 begin = __ldg(p.succ_offsets + v);
                const u32 end = __ldg(p.succ_offsets + v + 1);
                const u32 recorded = is_max && (word >> 2) < end - begin ? begin + (word >> 2) : ~0u;
                if (cause == 1u) {
                    // (Player 1 without its recorded edge: past 2^30 - 2 successors.)
                    broken = is_max && recorded == ~0u;
                    lifted = !broken;
                    move = broken ? ~0u : recorded;
                } else if (is_max) {
                    if (cause == 2u && recorded != ~0u &&
                        credit[__ldg(p.succ_targets + recorded)] == top<V>()) {
                        move = recorded;
                        root = true;
                    } else {
                        broken = true;
                    }
                } else {
                    root = true;
                    for (u32 e = begin; e < end; e++) {
                        if (credit[__ldg(p.succ_targets + e)] != top<V>()) {
                            root = false;
                            broken = true;
                            break;
                        }
                    }
                }
            }
            moves[v] = move;
        }
        const unsigned rooted = __ballot_sync(0xffffffffu, root);
        if (rooted != 0) {
            const u32 leader = __ffs(rooted) - 1;
            u32 at = 0;
            if (lane == leader) at = atomicAdd(counts, (u32)__popc(rooted));
            at = __shfl_sync(0xffffffffu, at, leader);
            if (root) roots[at + __popc(rooted & ((1u << lane) - 1u))] = v;
        }
        const unsigned any_broken = __ballot_sync(0xffffffffu, broken);
        const unsigned any_lifted = __ballot_sync(0xffffffffu, lifted);
        if (lane == 0 && any_broken != 0) atomicAdd(counts + 1, (u32)__popc(any_broken));
        if (lane == 0 && any_lifted != 0) atomicAdd(counts + 2, (u32)__popc(any_lifted));
    }
}

#if LIFT_MIN_BLOCKS > 0
#define LIFT_BOUNDS __launch_bounds__(BLOCK, LIFT_MIN_BLOCKS)
#else
#define LIFT_BOUNDS __launch_bounds__(BLOCK)
#endif

#define LIFT_KERNEL(H, WB, W, VB, V)                                                   \
    extern "C" __global__ void LIFT_BOUNDS                                            \
        lift_rounds_h##H##_w##WB##_v##VB(LiftParams p) {                              \
        run_rounds<H, W, V>(p);                                                       \
    }

#define MOVES_KERNEL(WB, W, VB, V)                                                    \
    extern "C" __global__ void __launch_bounds__(BLOCK)                               \
        player0_moves_w##WB##_v##VB(LiftParams p, u32* moves) {                       \
        choose_player0_moves<W, V>(p, moves);                                         \
    }

#define SIGMA_KERNEL(WB, W, VB, V)                                                    \
    extern "C" __global__ void __launch_bounds__(BLOCK)                               \
        player1_edges_w##WB##_v##VB(LiftParams p, u32* edges) {                       \
        choose_player1_edges<W, V>(p, edges);                                         \
    }

#define RECORDED_KERNEL(WB, W, VB, V)                                                 \
    extern "C" __global__ void __launch_bounds__(BLOCK)                               \
        recorded_moves_w##WB##_v##VB(LiftParams p, u32* moves, u32* roots,            \
                                     u32* counts) {                                   \
        classify_recorded<V>(p, moves, roots, counts);                                \
    }

#define PREDECESSORS_KERNEL(WB, W, VB, V)                                             \
    extern "C" __global__ void __launch_bounds__(BLOCK)                               \
        predecessors_w##WB##_v##VB(LiftParams p, u32* cursor, u32 lanes, u32 m,      \
                                   const u32* bad) {                                  \
        list_predecessors<W>(p, cursor, lanes, m, bad);                               \
    }

#define DEFICITS_KERNEL(WB, W, VB, V)                                                 \
    extern "C" __global__ void __launch_bounds__(BLOCK)                               \
        deficits_w##WB##_v##VB(LiftParams p, u64* sum, u32 lanes) {                   \
        sum_deficits<W>(p, sum, lanes);                                               \
    }

#define LIFT_KERNELS(WB, W, VB, V)       \
    MOVES_KERNEL(WB, W, VB, V)           \
    SIGMA_KERNEL(WB, W, VB, V)           \
    RECORDED_KERNEL(WB, W, VB, V)        \
    PREDECESSORS_KERNEL(WB, W, VB, V)    \
    DEFICITS_KERNEL(WB, W, VB, V)        \
    LIFT_KERNEL(1, WB, W, VB, V)         \
    LIFT_KERNEL(2, WB, W, VB, V)         \
    LIFT_KERNEL(4, WB, W, VB, V)         \
    LIFT_KERNEL(8, WB, W, VB, V)         \
    LIFT_KERNEL(16, WB, W, VB, V)        \
    LIFT_KERNEL(32, WB, W, VB, V)

// The host defines the width pair to compile (src/solve/gpu/compile.rs `lift_source`);
// EXPAND_KERNELS expands those macros before LIFT_KERNELS pastes them into names.
#ifndef LIFT_WB
#error "define LIFT_WB, LIFT_W, LIFT_VB and LIFT_V (see lift_source in compile.rs)"
#endif
#define EXPAND_KERNELS(WB, W, VB, V) LIFT_KERNELS(WB, W, VB, V)
EXPAND_KERNELS(LIFT_WB, LIFT_W, LIFT_VB, LIFT_V)
