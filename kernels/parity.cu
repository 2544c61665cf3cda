// Fixpoint iteration with distractions and freezing (van Dijk, Rubbens, GandALF 2019) for
// parity games, the whole loop in one cooperative launch: crates/gpu/src/parity drives it,
// and crates/gpu/src/parity/host.rs runs the same passes on the CPU (the tests' mirror).
// Include-free and standalone (its own typedefs and grid barrier).
//
// Positions 0..n are the vertices sorted by compressed priority (order[pos] is the vertex;
// level p is positions level_start[p]..level_start[p + 1]). Per vertex one status byte:
// bit 0 the parity of its priority, bit 1 distraction (won by the other player), bit 2 its
// owner; the current winner is bit 0 ^ bit 1. frozen[pos] is the priority the vertex at
// pos is frozen at (0: not frozen), strategy[v] the successor that won v for its owner in
// its last evaluation.
//
// A pass evaluates every vertex of level p (a thread per vertex, grid-stride): a vertex not
// frozen and not yet a distraction becomes one when its owner's best one-step outcome (a
// successor currently won by the owner, else the opponent) differs from its parity. Every
// thread takes the same decisions from the same flag, read after the same grid barrier:
// - the pass made distractions: evaluate level p again (its new distractions may make
//   more; the lower levels' stale values only under-approximate the opponent's, so every
//   distraction found this way is one the paper's loop would find: monotonicity);
// - it made none, and level p gained distractions since it was last entered (p > 0):
//   freeze, thaw or reset every vertex below p (positions 0..level_start[p]), one more
//   barrier, and start again at level 0 (a restart);
// - otherwise go up to level p + 1. Past the top level the fixpoint is reached.
// A launch leaves after the pass that ends `max_ns` after it started (the leader reads the
// device clock before each barrier and publishes the verdict in one of two words, as
// kernels/lift.cu does), saving level, gained and the counters in `state`; the next launch
// resumes there.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define PARITY_BLOCK 512

#define ST_PARITY 1u
#define ST_DISTRACTION 2u
#define ST_OWNER 4u

// flags words: [0..3) rotating "a pass changed something" flags, [3] unused, [4] barrier
// arrivals, [5] barrier generation, [6], [7] the leader's time verdicts (by pass parity).
#define FL_BAR_COUNT 4
#define FL_BAR_GEN 5
#define FL_STOP 6
// state words (kept across launches): [0] level, [1] gained, [2] done, [3] restarts,
// [4] passes (both wrap at 2^32: progress figures only).
#define SV_LEVEL 0
#define SV_GAINED 1
#define SV_DONE 2
#define SV_RESTARTS 3
#define SV_PASSES 4

struct FixpointParams {
    const u32* succ_offsets;
    const u32* succ_targets;
    const u32* order;
    const u32* level_start;  // levels + 1
    u8* status;              // n
    u32* frozen;             // n, by position
    u32* strategy;           // n, by vertex
    u32* flags;              // 8 words, zeroed before every launch
    u32* state;              // 8 words
    u32 levels;
    u32 n;
    u64 max_ns;
};

__device__ __forceinline__ u64 parity_global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ u32 parity_load_volatile(const u32* p) {
    return *(const volatile u32*)p;
}

// A software grid barrier; the grid is co-resident (cooperative launch).
__device__ __forceinline__ void parity_grid_barrier(u32* flags) {
    __syncthreads();
    if (gridDim.x > 1 && threadIdx.x == 0) {
        u32 gen = parity_load_volatile(flags + FL_BAR_GEN);
        __threadfence();
        u32 arrived = atomicAdd(flags + FL_BAR_COUNT, 1u);
        if (arrived == gridDim.x - 1) {
            atomicExch(flags + FL_BAR_COUNT, 0u);
            __threadfence();
            atomicAdd(flags + FL_BAR_GEN, 1u);
        } else {
            while (parity_load_volatile(flags + FL_BAR_GEN) == gen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// Ends pass `pass` on the whole grid: whether any thread's `changed` was set, and (in
// `stop`) whether the launch's time is up. Slot pass % 3 is written during the pass and
// read after its barrier; the leader clears slot (pass + 1) % 3 before that barrier, which
// every block read after barrier pass - 2 and before arriving at barrier pass - 1.
__device__ __forceinline__ bool pass_end(const FixpointParams& p, u32& pass, bool changed,
                                         u64 started, bool& stop) {
    const u32 slot = pass % 3;
    if (__syncthreads_or(changed) && threadIdx.x == 0) atomicExch(p.flags + slot, 1u);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        atomicExch(p.flags + (pass + 1) % 3, 0u);
        const bool late = p.max_ns != 0 && parity_global_ns() - started >= p.max_ns;
        atomicExch(p.flags + FL_STOP + (pass & 1), late ? 1u : 0u);
    }
    parity_grid_barrier(p.flags);
    stop = parity_load_volatile(p.flags + FL_STOP + (pass & 1)) != 0;
    const bool any = parity_load_volatile(p.flags + slot) != 0;
    pass++;
    return any;
}

__device__ __forceinline__ u32 winner_of(u32 status) {
    return (status ^ (status >> 1)) & 1u;
}

// Evaluates the vertex at `pos`; whether it became a distraction.
__device__ __forceinline__ bool evaluate(const FixpointParams& p, u32 pos) {
    if (__ldcg(p.frozen + pos) != 0) return false;
    const u32 v = __ldg(p.order + pos);
    const u32 s = __ldcg(p.status + v);
    if (s & ST_DISTRACTION) return false;
    const u32 owner = (s & ST_OWNER) ? 1u : 0u;
    u32 one_step = owner ^ 1u;
    const u32 end = __ldg(p.succ_offsets + v + 1);
    for (u32 e = __ldg(p.succ_offsets + v); e < end; e++) {
        const u32 w = __ldg(p.succ_targets + e);
        if (winner_of(__ldcg(p.status + w)) == owner) {
            p.strategy[v] = w;
            one_step = owner;
            break;
        }
    }
    if (one_step == (s & ST_PARITY)) return false;
    p.status[v] = (u8)(s | ST_DISTRACTION);
    return true;
}

// After level `level` (> 0) gained distractions: freezes, thaws or resets the vertex at
// `pos` below it (src/solve/parity/fixpoint.rs freeze_thaw_reset).
__device__ __forceinline__ void freeze_thaw_reset(const FixpointParams& p, u32 pos, u32 level) {
    const u32 f = __ldcg(p.frozen + pos);
    if (f >= level) return;
    const u32 player = level & 1u;
    const u32 v = __ldg(p.order + pos);
    const u32 s = __ldcg(p.status + v);
    if (f != 0) {
        if ((f & 1u) == player) {
            p.frozen[pos] = level;
        } else {
            p.frozen[pos] = 0;
            p.status[v] = (u8)(s & ~ST_DISTRACTION);
        }
    } else if (s & ST_DISTRACTION) {
        if ((s & ST_PARITY) == player) {
            p.frozen[pos] = level;
        } else {
            p.status[v] = (u8)(s & ~ST_DISTRACTION);
        }
    } else if ((s & ST_PARITY) != player) {
        p.frozen[pos] = level;
    }
}

extern "C" __global__ void __launch_bounds__(PARITY_BLOCK) fixpoint_iteration(FixpointParams p) {
    const u64 started = parity_global_ns();
    const u32 stride = gridDim.x * blockDim.x;
    const u32 first = blockIdx.x * blockDim.x + threadIdx.x;
    u32 level = parity_load_volatile(p.state + SV_LEVEL);
    bool gained = parity_load_volatile(p.state + SV_GAINED) != 0;
    u32 restarts = parity_load_volatile(p.state + SV_RESTARTS);
    u32 pass = 0;
    bool stop = false;
    while (level < p.levels && !stop) {
        const u32 begin = __ldg(p.level_start + level);
        const u32 end = __ldg(p.level_start + level + 1);
        bool changed = false;
        for (u32 pos = begin + first; pos < end; pos += stride) changed |= evaluate(p, pos);
        if (pass_end(p, pass, changed, started, stop)) {
            gained = true;
        } else if (gained && level > 0) {
            for (u32 pos = first; pos < begin; pos += stride) freeze_thaw_reset(p, pos, level);
            pass_end(p, pass, false, started, stop);
            restarts++;
            level = 0;
            gained = false;
        } else {
            level++;
            gained = false;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        p.state[SV_LEVEL] = level;
        p.state[SV_GAINED] = gained ? 1u : 0u;
        p.state[SV_DONE] = level >= p.levels ? 1u : 0u;
        p.state[SV_RESTARTS] = restarts;
        p.state[SV_PASSES] += pass;
    }
}
