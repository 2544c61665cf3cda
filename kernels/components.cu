// Strongly connected components of an evaluation's graph H = G_σ1 − K, restricted to a
// vertex subset, on the device: the GPU backend's counterpart of src/solve/accel/scc.rs
// (src/solve/gpu/components.rs drives it). compile.rs appends this file to lift.cu: it uses
// the arena's CSR and CSC already on the device, and grid_barrier / load_volatile from there.
//
// keep[v] says what v keeps (the words of src/solve/accel/graph.rs): KEEP_NONE (outside the
// subset), KEEP_ALL (an active player-0 vertex: every edge into the subset) or the target of
// its σ1 edge (an active player-1 vertex). An arena edge v -> u is in H iff keep[v] is
// KEEP_ALL or u, and keep[u] is not KEEP_NONE. Parallel edges do not matter here.
//
// Output: comp[v] = the id of a member of v's component (its representative: the same for
// every member; v | COMP_ALONE for a vertex the trims found alone), COMP_NONE outside the
// subset, COMP_PENDING where left to the host. Which member represents a component may depend
// on the timing of the sweeps; the partition does not.
//
// One cooperative launch does all of it: sweeps over the vertices (grid-stride, a thread per
// vertex) with a grid barrier after each; a sweep reads other vertices' state with __ldcg
// (L2, coherent across SMs), so a value written earlier in the same sweep may or may not be
// seen, and every step below is correct either way (each only ever moves towards its
// fixpoint). Every decision to leave a loop is taken by every thread from the same word read
// after the same barrier, so the whole grid leaves together.
//
// 1. Trim: a pending vertex with no pending H-predecessor or no pending H-successor other
//    than itself is a component of its own. Every finished vertex lies in a finished
//    component, so a pending vertex's component is among the pending ones: the rule is right
//    in any order. Repeated until a sweep trims nothing (at most TRIM_SWEEPS sweeps).
// 2. Forward-backward from a pivot (the pending vertex with the largest
//    (pending in-degree + 1) * (pending out-degree + 1)): F = what it reaches, B = what
//    reaches it, inside the pending vertices, both searches in the same sweeps; F ∩ B is its
//    component (the giant one of random games, found in about their diameter of sweeps).
//    A pivot can miss the giant component (a vertex between its upstream and its
//    downstream, a component of its own: in one of random p50's evaluations of session 20's
//    first device call, which then coloured for 624 sweeps): while the component found is
//    below 1/64 of what was pending, the trim runs and a fresh pivot is taken, at most
//    FB_TRIES searches in all.
// 3. Colouring (Orzan), until nothing is pending: colour[v] := v, then the maximum colour
//    flows forward to the fixpoint (each vertex pulls from its pending predecessors, so it is
//    the only writer of its colour): colour[v] = the largest id that reaches v. A root r
//    (colour[r] = r) is reached by no larger id, so its component is exactly the vertices of
//    colour r that reach r backward through vertices of colour r; every root's component is
//    finished at once, and the trim runs again.
//    Before colouring: if at most host_below vertices are pending, the kernel leaves them
//    (comp = COMP_PENDING, their count in state[CS_LEFT]) to the host, whose Tarjan finds
//    their components in a few milliseconds where colouring would take hundreds of sweeps
//    (src/solve/accel/remainder.rs). Only whole components are ever finished, so the pending
//    vertices are a union of components.
// More than max_sweeps sweeps in all (long chains, deep DAGs of components): the kernel stops
// with state[CS_FAILED] = 1, and the host computes the components itself.

#define KEEP_NONE 0xffffffffu
#define KEEP_ALL 0xfffffffeu
#define COMP_NONE 0xffffffffu
#define COMP_PENDING 0xfffffffeu
// Set in a trimmed vertex's representative (its own id): a component of its own, which the
// host's cycle test answers without grouping (ALONE of src/solve/accel/representatives.rs).
#define COMP_ALONE 0x80000000u

// Search marks.
#define MARK_F 1u    // reached forward from the pivot
#define MARK_FX 2u   // … and its successors marked
#define MARK_B 4u    // reaches the pivot
#define MARK_BX 8u   // … and its predecessors marked
#define MARK_R 16u   // reaches its colour's root inside the colour
#define MARK_RX 32u  // … and its predecessors marked

#define TRIM_SWEEPS 16
#define FB_TRIES 3

// state words: [0..3) "something changed" flags, rotating by sweep (sweep s writes word s % 3
// and clears (s + 1) % 3, which every thread read before passing sweep s - 1's barrier);
// [3] vertices in the subset; [4], [5] the grid barrier (ST_BAR_COUNT, ST_BAR_GEN of lift.cu);
// [6..8) the pivot key (u64); [8] failed; [9] sweeps run; [10] colouring rounds; [11] vertices
// trimmed; [12] the pivots' components' sizes (summed over the tries); [15] vertices left to
// the host; [16] forward-backward searches run. The host zeroes them before each launch.
#define CS_ACTIVE 3
#define CS_LEFT 15
#define CS_FAILED 8
#define CS_SWEEPS 9
#define CS_COLOURINGS 10
#define CS_TRIMMED 11
#define CS_GIANT 12
#define CS_PIVOT 6
#define CS_TRIES 16

struct ComponentParams {
    const u32* succ_offsets;
    const u32* succ_targets;
    const u32* pred_offsets;
    const u32* pred_sources;
    const u32* keep;
    u32* comp;
    u32* colour;
    u32* mark;
    u32* state;
    u32 n;
    u32 max_sweeps;
    u32 host_below;
};

__device__ __forceinline__ bool h_edge(const ComponentParams& p, u32 keep_v, u32 u) {
    return keep_v != KEEP_NONE && (keep_v == KEEP_ALL || keep_v == u) &&
           __ldg(p.keep + u) != KEEP_NONE;
}

__device__ __forceinline__ bool pending(const ComponentParams& p, u32 v) {
    return __ldcg(p.comp + v) == COMP_PENDING;
}

// Ends sweep `sweep` for the calling thread (`changed`: whether it changed anything) and
// returns whether any thread did; the whole grid calls it together. `state` holds the
// rotating flags in words [0..3) and the grid barrier in [4], [5] (evaluate.cu uses it too).
__device__ __forceinline__ bool sweep_end_on(u32* state, u32& sweep, bool changed) {
    const u32 slot = sweep % 3;
    if (__syncthreads_or(changed) && threadIdx.x == 0) atomicExch(state + slot, 1u);
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(state + (sweep + 1) % 3, 0u);
    grid_barrier(state);
    sweep++;
    return load_volatile(state + slot) != 0;
}

__device__ __forceinline__ bool sweep_end(const ComponentParams& p, u32& sweep, bool changed) {
    return sweep_end_on(p.state, sweep, changed);
}

#define FOR_EACH_VERTEX(v) \
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < p.n; v += gridDim.x * blockDim.x)

// Pending H-successors (other than v) of pending v: stops at the first when `first`.
__device__ __forceinline__ u32 pending_successors(const ComponentParams& p, u32 v, bool first) {
    const u32 kv = __ldg(p.keep + v);
    u32 count = 0;
    const u32 end = __ldg(p.succ_offsets + v + 1);
    for (u32 e = __ldg(p.succ_offsets + v); e < end; e++) {
        const u32 u = __ldg(p.succ_targets + e);
        if (u != v && h_edge(p, kv, u) && pending(p, u)) {
            count++;
            if (first) break;
        }
    }
    return count;
}

// Pending H-predecessors (other than v) of pending v: stops at the first when `first`.
__device__ __forceinline__ u32 pending_predecessors(const ComponentParams& p, u32 v, bool first) {
    u32 count = 0;
    const u32 end = __ldg(p.pred_offsets + v + 1);
    for (u32 k = __ldg(p.pred_offsets + v); k < end; k++) {
        const u32 w = __ldg(p.pred_sources + k);
        if (w != v && h_edge(p, __ldg(p.keep + w), v) && pending(p, w)) {
            count++;
            if (first) break;
        }
    }
    return count;
}

// Trim sweeps until one trims nothing (or TRIM_SWEEPS). False when out of sweeps.
__device__ bool trim(const ComponentParams& p, u32& sweep) {
    for (int t = 0; t < TRIM_SWEEPS; t++) {
        if (sweep >= p.max_sweeps) return false;
        bool changed = false;
        u32 trimmed = 0;
        FOR_EACH_VERTEX(v) {
            if (!pending(p, v)) continue;
            if (pending_successors(p, v, true) == 0 || pending_predecessors(p, v, true) == 0) {
                p.comp[v] = v | COMP_ALONE;
                changed = true;
                trimmed++;
            }
        }
        if (trimmed) atomicAdd(p.state + CS_TRIMMED, trimmed);
        if (!sweep_end(p, sweep, changed)) break;
    }
    return true;
}

// Forward-backward from the best pivot. False when out of sweeps.
__device__ bool forward_backward(const ComponentParams& p, u32& sweep) {
    if (sweep >= p.max_sweeps) return false;
    bool any = false;
    FOR_EACH_VERTEX(v) {
        if (!pending(p, v)) continue;
        u64 score = (u64)(pending_predecessors(p, v, false) + 1) *
                    (u64)(pending_successors(p, v, false) + 1);
        if (score > 0x7fffffffULL) score = 0x7fffffffULL;
        atomicMax((u64*)(p.state + CS_PIVOT), (score << 32) | v);
        any = true;
    }
    sweep_end(p, sweep, any);
    const u64 key = ((u64)load_volatile(p.state + CS_PIVOT + 1) << 32) |
                    load_volatile(p.state + CS_PIVOT);
    if (key == 0) return true;  // nothing pending
    const u32 pivot = (u32)key;
    // The pivot's thread treats it as marked (and marks it when expanding it).
    for (;;) {
        if (sweep >= p.max_sweeps) return false;
        bool changed = false;
        FOR_EACH_VERTEX(v) {
            u32 m = __ldcg(p.mark + v);
            if (v == pivot) m |= MARK_F | MARK_B;
            if (!(m & (MARK_F | MARK_B)) || !pending(p, v)) continue;
            if ((m & MARK_F) && !(m & MARK_FX)) {
                atomicOr(p.mark + v, MARK_F | MARK_FX);
                changed = true;
                const u32 kv = __ldg(p.keep + v);
                const u32 end = __ldg(p.succ_offsets + v + 1);
                for (u32 e = __ldg(p.succ_offsets + v); e < end; e++) {
                    const u32 u = __ldg(p.succ_targets + e);
                    if (h_edge(p, kv, u) && !(__ldcg(p.mark + u) & MARK_F) && pending(p, u)) {
                        atomicOr(p.mark + u, MARK_F);
                    }
                }
            }
            if ((m & MARK_B) && !(m & MARK_BX)) {
                atomicOr(p.mark + v, MARK_B | MARK_BX);
                changed = true;
                const u32 end = __ldg(p.pred_offsets + v + 1);
                for (u32 k = __ldg(p.pred_offsets + v); k < end; k++) {
                    const u32 w = __ldg(p.pred_sources + k);
                    if (h_edge(p, __ldg(p.keep + w), v) && !(__ldcg(p.mark + w) & MARK_B) &&
                        pending(p, w)) {
                        atomicOr(p.mark + w, MARK_B);
                    }
                }
            }
        }
        if (!sweep_end(p, sweep, changed)) break;
    }
    if (sweep >= p.max_sweeps) return false;
    u32 giant = 0;
    FOR_EACH_VERTEX(v) {
        const u32 m = __ldcg(p.mark + v);
        if ((m & MARK_F) && (m & MARK_B) && pending(p, v)) {
            p.comp[v] = pivot;
            giant++;
        }
    }
    if (giant) atomicAdd(p.state + CS_GIANT, giant);
    sweep_end(p, sweep, false);
    return true;
}

// Colouring rounds until nothing is pending. False when out of sweeps.
__device__ bool colouring(const ComponentParams& p, u32& sweep) {
    for (;;) {
        if (sweep >= p.max_sweeps) return false;
        bool any = false;
        FOR_EACH_VERTEX(v) {
            if (!pending(p, v)) continue;
            p.colour[v] = v;
            any = true;
        }
        if (!sweep_end(p, sweep, any)) return true;
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(p.state + CS_COLOURINGS, 1u);
        // The largest colour that reaches each vertex.
        for (;;) {
            if (sweep >= p.max_sweeps) return false;
            bool changed = false;
            FOR_EACH_VERTEX(v) {
                if (!pending(p, v)) continue;
                const u32 old = __ldcg(p.colour + v);
                u32 c = old;
                const u32 end = __ldg(p.pred_offsets + v + 1);
    for (u32 k = __ldg(p.pred_offsets + v); k < end; k++) {
                    const u32 w = __ldg(p.pred_sources + k);
                    if (h_edge(p, __ldg(p.keep + w), v) && pending(p, w)) {
                        const u32 cw = __ldcg(p.colour + w);
                        if (cw > c) c = cw;
                    }
                }
                if (c > old) {
                    p.colour[v] = c;
                    changed = true;
                }
            }
            if (!sweep_end(p, sweep, changed)) break;
        }
        // Each root's component: backward from the root inside its colour.
        for (;;) {
            if (sweep >= p.max_sweeps) return false;
            bool changed = false;
            FOR_EACH_VERTEX(v) {
                if (!pending(p, v)) continue;
                const u32 c = __ldcg(p.colour + v);
                const u32 m = __ldcg(p.mark + v);
                if (!(c == v || (m & MARK_R)) || (m & MARK_RX)) continue;
                atomicOr(p.mark + v, MARK_R | MARK_RX);
                changed = true;
                const u32 end = __ldg(p.pred_offsets + v + 1);
    for (u32 k = __ldg(p.pred_offsets + v); k < end; k++) {
                    const u32 w = __ldg(p.pred_sources + k);
                    if (h_edge(p, __ldg(p.keep + w), v) && !(__ldcg(p.mark + w) & MARK_R) &&
                        pending(p, w) && __ldcg(p.colour + w) == c) {
                        atomicOr(p.mark + w, MARK_R);
                    }
                }
            }
            if (!sweep_end(p, sweep, changed)) break;
        }
        if (sweep >= p.max_sweeps) return false;
        FOR_EACH_VERTEX(v) {
            if (pending(p, v) && (__ldcg(p.mark + v) & MARK_R)) p.comp[v] = __ldcg(p.colour + v);
        }
        sweep_end(p, sweep, false);
        if (!trim(p, sweep)) return false;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    strongly_connected_components(ComponentParams p) {
    u32 sweep = 0;
    u32 active = 0;
    FOR_EACH_VERTEX(v) {
        const bool inside = __ldg(p.keep + v) != KEEP_NONE;
        p.comp[v] = inside ? COMP_PENDING : COMP_NONE;
        active += inside;
    }
    if (active) atomicAdd(p.state + CS_ACTIVE, active);
    sweep_end(p, sweep, false);
    bool done = trim(p, sweep);
    for (u32 t = 0; done && t < FB_TRIES; t++) {
        // Every thread reads the same words after the last barrier.
        const u32 giant_before = load_volatile(p.state + CS_GIANT);
        const u32 pending_before = load_volatile(p.state + CS_ACTIVE) -
                                   load_volatile(p.state + CS_TRIMMED) - giant_before;
        if (t > 0) {
            // A fresh pivot and fresh search marks (every thread read the last key before
            // the barriers of that search).
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                atomicExch((unsigned long long*)(p.state + CS_PIVOT), 0ull);
            }
            FOR_EACH_VERTEX(v) {
                if (pending(p, v)) {
                    p.mark[v] = __ldcg(p.mark + v) & ~(MARK_F | MARK_FX | MARK_B | MARK_BX);
                }
            }
            sweep_end(p, sweep, false);
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(p.state + CS_TRIES, 1u);
        done = forward_backward(p, sweep) && trim(p, sweep);
        if (!done) break;
        const u32 found = load_volatile(p.state + CS_GIANT) - giant_before;
        const u32 pending_after = load_volatile(p.state + CS_ACTIVE) -
                                  load_volatile(p.state + CS_TRIMMED) -
                                  load_volatile(p.state + CS_GIANT);
        if ((u64)found * 64 >= pending_before || pending_after <= p.host_below) break;
    }
    if (done) {
        // Every count was added before the last barrier: the grid reads the same words.
        const u32 pending = load_volatile(p.state + CS_ACTIVE) -
                            load_volatile(p.state + CS_TRIMMED) - load_volatile(p.state + CS_GIANT);
        if (pending > p.host_below) {
            done = colouring(p, sweep);
        } else if (blockIdx.x == 0 && threadIdx.x == 0) {
            atomicExch(p.state + CS_LEFT, pending);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (!done) atomicExch(p.state + CS_FAILED, 1u);
        atomicExch(p.state + CS_SWEEPS, sweep);
    }
}

// ---------------------------------------------------------------------------------------
// The greedy witness of the giant component (the pivot's, step 2 above), launched after the
// components on the same stream: the cycle-sign test's first step (src/solve/accel/cycles.rs)
// for the one component that costs the host most. Every member points to its heaviest
// successor inside the component (the last of equal weights in successor order; a player-1
// member to its σ1 edge, sigma_edge[v]); the pointer graph is functional, so every member
// reaches a pointer cycle. If one has weight >= 0 the kernel reports a member of it
// (state[CS_WITNESS]); the host walks that cycle again from the arena and sums it exactly
// before it believes it (weights here are summed in saturating i64), so a wrong answer here
// can only cost the host its own test. All by pointer doubling, R = ceil(log2 n) + 1 rounds
// per step, each round reading one buffer and writing the other (so after r rounds a value
// spans exactly 2^r pointers):
// 1. jump[v] = ptr^(2^R)(v): on a cycle (every tail is shorter than n); those are marked;
//    on a cycle of length L, ptr^(2^R) is a bijection, so every cycle vertex is marked.
// 2. Each cycle's smallest id (the minimum over 2^R >= L pointers): its leader.
// 3. List ranking cut at each leader: sum[v] = the weight from v along the pointers to its
//    leader; the leader's own sum is its cycle's weight.
#define CS_WITNESS 13  // a member of a nonnegative pointer cycle + 1 (0: none found)
#define CS_ROUNDS 14   // R
#define NO_POINTER 0xffffffffu
#define MARK_CYCLE 64u

struct WitnessParams {
    const LIFT_W* succ_weights;
    const u32* sigma_edge;
    u32* pointer;
    u32* next[2];
    u32* least[2];
    i64* weight;
    i64* sum[2];
};

__device__ __forceinline__ i64 saturating_add(i64 a, i64 b) {
    const i64 s = (i64)((u64)a + (u64)b);
    if ((a >= 0) == (b >= 0) && (s >= 0) != (a >= 0)) {
        return a >= 0 ? (i64)0x7fffffffffffffffLL : (i64)0x8000000000000000ULL;
    }
    return s;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    giant_witness(ComponentParams p, WitnessParams w) {
    u32 sweep = 0;
    if (load_volatile(p.state + CS_FAILED) != 0 || load_volatile(p.state + CS_GIANT) == 0) return;
    const u32 giant = load_volatile(p.state + CS_PIVOT);
    u32 rounds = 1;
    while (rounds < 32 && (1u << (rounds - 1)) < p.n) rounds++;
    // Pointers.
    FOR_EACH_VERTEX(v) {
        u32 to = NO_POINTER;
        i64 best = 0;
        if (__ldcg(p.comp + v) == giant) {
            const u32 kv = __ldg(p.keep + v);
            if (kv != KEEP_ALL) {
                const u32 e = __ldg(w.sigma_edge + v);
                to = __ldg(p.succ_targets + e);
                best = (i64)__ldg(w.succ_weights + e);
            } else {
                const u32 end = __ldg(p.succ_offsets + v + 1);
                for (u32 e = __ldg(p.succ_offsets + v); e < end; e++) {
                    const u32 u = __ldg(p.succ_targets + e);
                    const i64 we = (i64)__ldg(w.succ_weights + e);
                    if (__ldcg(p.comp + u) == giant && (to == NO_POINTER || we >= best)) {
                        to = u;
                        best = we;
                    }
                }
            }
        }
        w.pointer[v] = to;
        w.weight[v] = best;
        w.next[0][v] = to;
    }
    sweep_end(p, sweep, false);
    // 1. Far along the pointers: on a cycle.
    u32 b = 0;
    for (u32 r = 0; r < rounds; r++, b ^= 1) {
        FOR_EACH_VERTEX(v) {
            const u32 x = __ldcg(w.next[b] + v);
            w.next[b ^ 1][v] = x == NO_POINTER ? NO_POINTER : __ldcg(w.next[b] + x);
        }
        sweep_end(p, sweep, false);
    }
    FOR_EACH_VERTEX(v) {
        const u32 x = __ldcg(w.next[b] + v);
        if (x != NO_POINTER) atomicOr(p.mark + x, MARK_CYCLE);
    }
    sweep_end(p, sweep, false);
    // 2. Each cycle's smallest id.
    FOR_EACH_VERTEX(v) {
        const bool on = (__ldcg(p.mark + v) & MARK_CYCLE) != 0;
        w.least[0][v] = on ? v : NO_POINTER;
        w.next[0][v] = on ? __ldcg(w.pointer + v) : NO_POINTER;
    }
    sweep_end(p, sweep, false);
    b = 0;
    for (u32 r = 0; r < rounds; r++, b ^= 1) {
        FOR_EACH_VERTEX(v) {
            const u32 x = __ldcg(w.next[b] + v);
            if (x == NO_POINTER) {
                w.least[b ^ 1][v] = __ldcg(w.least[b] + v);
                w.next[b ^ 1][v] = NO_POINTER;
                continue;
            }
            const u32 mine = __ldcg(w.least[b] + v);
            const u32 theirs = __ldcg(w.least[b] + x);
            w.least[b ^ 1][v] = mine < theirs ? mine : theirs;
            w.next[b ^ 1][v] = __ldcg(w.next[b] + x);
        }
        sweep_end(p, sweep, false);
    }
    const u32* leader = w.least[b];
    // 3. Sums to the leader, cut there.
    FOR_EACH_VERTEX(v) {
        const u32 l = __ldcg(leader + v);
        const u32 to = __ldcg(w.pointer + v);
        const bool on = l != NO_POINTER;
        w.sum[0][v] = on ? __ldcg(w.weight + v) : 0;
        w.next[0][v] = on && to != l ? to : NO_POINTER;
    }
    sweep_end(p, sweep, false);
    u32 s = 0;
    for (u32 r = 0; r < rounds; r++, s ^= 1) {
        FOR_EACH_VERTEX(v) {
            const u32 x = __ldcg(w.next[s] + v);
            const i64 mine = __ldcg(w.sum[s] + v);
            if (x == NO_POINTER) {
                w.sum[s ^ 1][v] = mine;
                w.next[s ^ 1][v] = NO_POINTER;
                continue;
            }
            w.sum[s ^ 1][v] =
                saturating_add(mine, __ldcg(w.sum[s] + x));
            w.next[s ^ 1][v] = __ldcg(w.next[s] + x);
        }
        sweep_end(p, sweep, false);
    }
    FOR_EACH_VERTEX(v) {
        if (__ldcg(leader + v) == v && __ldcg(w.sum[s] + v) >= 0) {
            atomicExch(p.state + CS_WITNESS, v + 1);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(p.state + CS_ROUNDS, rounds);
}
