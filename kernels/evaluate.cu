// Backward reachability, player 1's attractor to ⊤ and the least credits to pinned vertices
// in an evaluation's graph H = G_σ1 restricted to a vertex subset, on the device: the GPU
// backend's counterparts of src/solve/accel/reach.rs, src/solve/accel/attractor.rs
// (attract_top) and src/solve/accel/relax.rs (src/solve/gpu/evaluation.rs drives them).
// compile.rs appends this file after components.cu: it uses the keep words (KEEP_NONE,
// KEEP_ALL), FOR_EACH_VERTEX and sweep_end_on from there, grid_barrier, energy_minus and the
// module's widths (LIFT_W weights, LIFT_V energies) from lift.cu, and the arena's CSR and CSC
// already on the device.
//
// An arena edge w -> v is in H iff keep[w] is KEEP_ALL, or keep[w] is v and the edge's
// weight is that of w's σ1 edge (its identical twins stay, as on the host: reachability
// ignores weights, Bellman–Ford takes the same minimum over twins), and keep[v] is not
// KEEP_NONE (every vertex these kernels reach or relax from lies in the subset).
//
// Both are frontier fixpoints in cooperative sweeps (a thread per vertex, grid-stride, a grid
// barrier after each): stamp[v] is the sweep whose frontier v is in, and a sweep expands the
// vertices stamped with its number. A vertex pushed again before its sweep reached it is
// expanded one sweep later, from its newer value: both fixpoints are unique whatever the
// order (a closure; the greatest fixpoint below the start of a monotone relaxation), so the
// answers equal the host's. More than max_sweeps sweeps: state[EV_FAILED] = 1, and the host
// computes the answer itself.

#define EV_FAILED 8
#define EV_SWEEPS 9
// The attractor's vertices moved to ⊤.
#define EV_MOVED 10
// Not in the attractor (src/solve/accel/attractor.rs NO_LAYER).
#define NO_LAYER 0xffffffffu

// The relaxation's vertex classes (src/solve/accel/relax.rs CLOSED, OPEN, PINNED).
#define CLASS_OPEN 1
#define CLASS_PINNED 2

struct EvaluationParams {
    const u32* pred_offsets;
    const u32* pred_sources;
    const LIFT_W* pred_weights;
    const LIFT_W* succ_weights;
    const u32* keep;
    const u32* sigma_edge;  // σ1's edge at every OPEN vertex (Bellman–Ford only)
    unsigned char* flag;    // reachability: 1 at the sources in, 1 where reached out;
                            // Bellman–Ford: each vertex's class (read only); the
                            // attractor: reachability's output (read only)
    u64* credit;            // Bellman–Ford's values (n)
    u32* stamp;             // the sweep whose frontier each vertex is in (the attractor:
                            // its layer)
    u32* state;  // [0..3) sweep flags, [4], [5] the grid barrier, [8] failed, [9] sweeps,
                 // [10] the attractor's vertices moved
    u64 bound;
    u32 n;
    u32 max_sweeps;
    // The attractor's: the CSR, the values the last lifting run left (V[n]), each vertex's
    // player (or null: v < n0 is player 0's) and player 0's open successors (n).
    const u32* succ_offsets;
    const u32* succ_targets;
    const LIFT_V* values;
    const unsigned char* owners;
    u32* open;
    u32 n0;
};

// Leaves the sweep loop for good when out of sweeps (the same decision in every thread:
// `sweep` is the grid's).
__device__ __forceinline__ bool out_of_sweeps(const EvaluationParams& p, u32 sweep) {
    if (sweep < p.max_sweeps) return false;
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(p.state + EV_FAILED, 1u);
    return true;
}

// Every vertex with a path in H to a source (flag[v] = 1 in; sources lie in the subset):
// flag[v] = 1 out. Sweep s expands the vertices reached in sweep s - 1.
extern "C" __global__ void __launch_bounds__(BLOCK) reach_sources(EvaluationParams p) {
    u32 sweep = 0;
    FOR_EACH_VERTEX(v) { p.stamp[v] = p.flag[v] ? 1u : 0u; }
    sweep_end_on(p.state, sweep, false);
    for (;;) {
        if (out_of_sweeps(p, sweep)) break;
        bool changed = false;
        FOR_EACH_VERTEX(v) {
            if (__ldcg(p.stamp + v) != sweep) continue;
            const u32 end = __ldg(p.pred_offsets + v + 1);
            for (u32 k = __ldg(p.pred_offsets + v); k < end; k++) {
                const u32 w = __ldg(p.pred_sources + k);
                const u32 kw = __ldg(p.keep + w);
                if (kw == KEEP_NONE || (kw != KEEP_ALL && kw != v) || __ldcg(p.flag + w)) continue;
                p.flag[w] = 1;
                p.stamp[w] = sweep + 1;
                changed = true;
            }
        }
        if (!sweep_end_on(p.state, sweep, changed)) break;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(p.state + EV_SWEEPS, sweep);
}

// Bellman–Ford from above (relax.rs): credit = 0 at PINNED vertices, ⊤ elsewhere; then
// credit[w] := min(credit[w], credit[u] ⊖ weight) over H's edges w -> u into a vertex
// whose credit fell in the last sweep, at OPEN vertices w only, until nothing falls.
extern "C" __global__ void __launch_bounds__(BLOCK) credits_to_pinned(EvaluationParams p) {
    u32 sweep = 0;
    FOR_EACH_VERTEX(v) {
        const bool pinned = p.flag[v] == CLASS_PINNED;
        p.credit[v] = pinned ? 0ULL : top<u64>();
        p.stamp[v] = pinned ? 1u : 0u;
    }
    sweep_end_on(p.state, sweep, false);
    for (;;) {
        if (out_of_sweeps(p, sweep)) break;
        bool changed = false;
        FOR_EACH_VERTEX(u) {
            if (__ldcg(p.stamp + u) != sweep) continue;
            const u64 gu = __ldcg(p.credit + u);
            const u32 end = __ldg(p.pred_offsets + u + 1);
            for (u32 k = __ldg(p.pred_offsets + u); k < end; k++) {
                const u32 w = __ldg(p.pred_sources + k);
                if (__ldg(p.flag + w) != CLASS_OPEN) continue;
                const u32 kw = __ldg(p.keep + w);
                const i64 weight = (i64)__ldg(p.pred_weights + k);
                if (kw != KEEP_ALL &&
                    (kw != u || weight != (i64)__ldg(p.succ_weights + __ldg(p.sigma_edge + w)))) {
                    continue;
                }
                const u64 candidate = energy_minus<u64>(gu, weight, p.bound);
                if (candidate < atomicMin(p.credit + w, candidate)) {
                    p.stamp[w] = sweep + 1;
                    changed = true;
                }
            }
        }
        if (!sweep_end_on(p.state, sweep, changed)) break;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(p.state + EV_SWEEPS, sweep);
}

// Player 1's attractor to ⊤ after an evaluation's first step (attractor.rs attract_top, the
// same layers): the values are those the last lifting run left on the device, with every
// vertex that the reachability launch just before did not reach set to ⊤ (flag[u] = 0: at ⊤
// before, or topped by the evaluation; flag[u] = 1 only at finite vertices). An edge into u
// "gives ⊤" when u is at ⊤ there or f(u) ⊖ w is. Layer 0: at ⊤; layer 1: a player-1
// vertex with an edge that gives ⊤, a player-0 vertex all of whose edges do; sweep L >= 1
// expands layer L through the CSC: a player-1 predecessor joins layer L + 1 through an edge
// that did not give ⊤, a player-0 one when the last such edge's target joined (open[]
// counts them). Every layer-L vertex is expanded in sweep L, after the grid barrier that
// ends sweep L - 1, so the layers are those of the host's frontier rounds whatever the order
// within a sweep. Output: stamp[v] = v's layer (NO_LAYER: still finite), state[EV_MOVED] the
// vertices of layers >= 1, state[EV_SWEEPS] one above the highest layer (2 or more) when
// any moved; more than max_sweeps layers: state[EV_FAILED] = 1.
__device__ __forceinline__ bool gives_top(const EvaluationParams& p, u32 u, i64 w) {
    return !__ldg(p.flag + u) ||
           energy_minus<LIFT_V>(__ldg(p.values + u), w, p.bound) == top<LIFT_V>();
}

extern "C" __global__ void __launch_bounds__(BLOCK) attract_top(EvaluationParams p) {
    u32 moved = 0;
    FOR_EACH_VERTEX(v) {
        u32 layer = 0, open = 0;
        if (__ldg(p.flag + v)) {
            const bool is_min = p.owners == nullptr ? v < p.n0 : __ldg(p.owners + v) == 0;
            bool any = false;
            const u32 end = __ldg(p.succ_offsets + v + 1);
            for (u32 e = __ldg(p.succ_offsets + v); e < end; e++) {
                if (gives_top(p, __ldg(p.succ_targets + e), (i64)__ldg(p.succ_weights + e))) {
                    any = true;
                    if (!is_min) break;
                } else {
                    open++;
                }
            }
            layer = (is_min ? open == 0 : any) ? 1u : NO_LAYER;
            moved += layer == 1u;
        }
        p.stamp[v] = layer;
        p.open[v] = open;
    }
    u32 sweep = 0;
    sweep_end_on(p.state, sweep, false);
    for (;;) {
        if (out_of_sweeps(p, sweep)) break;
        bool changed = false;
        FOR_EACH_VERTEX(x) {
            if (__ldcg(p.stamp + x) != sweep) continue;
            const u32 end = __ldg(p.pred_offsets + x + 1);
            for (u32 k = __ldg(p.pred_offsets + x); k < end; k++) {
                const u32 w = __ldg(p.pred_sources + k);
                if (__ldcg(p.stamp + w) != NO_LAYER ||
                    gives_top(p, x, (i64)__ldg(p.pred_weights + k))) {
                    continue;
                }
                const bool is_min = p.owners == nullptr ? w < p.n0 : __ldg(p.owners + w) == 0;
                if (is_min && atomicSub(p.open + w, 1u) != 1u) continue;
                if (atomicCAS(p.stamp + w, NO_LAYER, sweep + 1) == NO_LAYER) {
                    moved++;
                    changed = true;
                }
            }
        }
        if (!sweep_end_on(p.state, sweep, changed)) break;
    }
    moved = __reduce_add_sync(0xffffffffu, moved);
    if ((threadIdx.x & 31) == 0 && moved != 0) atomicAdd(p.state + EV_MOVED, moved);
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(p.state + EV_SWEEPS, sweep);
}
