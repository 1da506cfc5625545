// A CPU emulation of one thread block of GPU lanes grouped into wavefronts of
// WAVE lanes (32: NVIDIA warps, RDNA wave32; 64: CDNA/GCN wavefronts), for the
// 64-lane proof of `gpuvet port` (docs/port.md, "What the emulation proves").
//
// Every lane runs the kernel body as ordinary scalar C++ on its own stack
// (ucontext coroutines, one OS thread, deterministic order). A lane that
// reaches a cross-lane operation (__shfl*_sync, __ballot_sync, __any_sync,
// __all_sync, __activemask) or __syncthreads() stops there; when every lane
// still running in its wavefront (or block, for __syncthreads) has stopped,
// the operation is computed for all of them at once -- lockstep, as the
// hardware does it. Semantics follow HIP's (amd_warp_functions.h and
// amd_warp_sync_functions.h): masks and ballots are 64-bit, widths default to
// warpSize, an out-of-range or non-participating source lane gives the
// caller's own value (on hardware it is undefined; no test relies on it).
//
// Kernel bodies are pasted unchanged between GV_KERNEL_BEGIN/END:
//     GV_KERNEL(reduce32, const float *in, float *out) { ... CUDA body ... }
// and launched for one block: gvemu::launch(WAVE, BLOCK, reduce32, in, out).
// threadIdx.x, blockDim.x, blockIdx.x (always 0), warpSize and __shared__
// (a static array, one block at a time) mean what they mean in CUDA/HIP.
#ifndef GV_PORT_EMU_WAVE_HPP
#define GV_PORT_EMU_WAVE_HPP

#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace gvemu {

struct dim { unsigned x, y, z; };

enum class op { none, shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all, active, sync };

struct lane {
    ucontext_t ctx;
    std::vector<char> stack;
    bool done = false;
    op waiting = op::none;
    uint64_t mask = 0;    // the mask the lane passed
    int64_t arg = 0;      // source lane, delta or lane mask
    int width = 0;
    int64_t value = 0;    // the lane's value (bits), or predicate
    int64_t result = 0;
};

struct block {
    int wave = 32, nlanes = 0, current = 0;
    std::vector<lane> lanes;
    ucontext_t sched;
    std::function<void()> body;
};

inline block *&cur() { static block *b = nullptr; return b; }

// Calls whose mask leaves out the calling lane: undefined in CUDA ("each
// calling thread must have its own bit set in the mask", CUDA C++ Programming
// Guide, Warp Shuffle Functions) and a failed __hip_assert in HIP's _sync
// functions. Counted, and the call computed without the caller.
inline int &violations() { static int n = 0; return n; }

} // namespace gvemu

// What a kernel body sees.
inline gvemu::dim threadIdx, blockDim, blockIdx, gridDim;
inline int warpSize;
#define __shared__ static
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__

namespace gvemu {

inline void set_lane_vars(block *b)
{
    threadIdx = {unsigned(b->current), 0, 0};
}

// Stop the current lane at op until the scheduler computes it; returns the result.
inline int64_t stop_at(op o, uint64_t mask, int64_t value, int64_t arg, int width)
{
    block *b = cur();
    lane &l = b->lanes[b->current];
    l.waiting = o;
    l.mask = mask;
    l.value = value;
    l.arg = arg;
    l.width = width;
    swapcontext(&l.ctx, &b->sched);
    return l.result;
}

inline void trampoline()
{
    block *b = cur();
    b->body();
    b->lanes[b->current].done = true;
    b->lanes[b->current].waiting = op::none;
    swapcontext(&b->lanes[b->current].ctx, &b->sched);
}

// The source lane of a shuffle, HIP's arithmetic (amd_warp_functions.h).
inline int shfl_source(op o, int self, int64_t arg, int width)
{
    int in_wave = self, seg = in_wave & ~(width - 1), pos = in_wave & (width - 1);
    switch (o) {
    case op::shfl: return seg + int(arg % width);
    case op::shfl_up: return pos - arg < 0 ? self : self - int(arg);
    case op::shfl_down: return pos + arg >= width ? self : self + int(arg);
    case op::shfl_xor: {
        int idx = self ^ int(arg);
        return idx >= ((self + width) & ~(width - 1)) ? self : idx;
    }
    default: return self;
    }
}

// Computes the operation the waiting lanes of one wavefront stopped at.
inline void resolve_wave(block *b, int first)
{
    int w = b->wave;
    uint64_t arrived = 0, pred = 0;
    for (int i = 0; i < w && first + i < b->nlanes; i++) {
        lane &l = b->lanes[first + i];
        if (!l.done && l.waiting != op::none && l.waiting != op::sync) {
            arrived |= uint64_t(1) << i;
            if (l.value)
                pred |= uint64_t(1) << i;
        }
    }
    for (int i = 0; i < w && first + i < b->nlanes; i++) {
        lane &l = b->lanes[first + i];
        if (!(arrived >> i & 1))
            continue;
        uint64_t part = arrived & l.mask;
        if (l.waiting != op::active && !(l.mask >> i & 1))
            violations()++;
        switch (l.waiting) {
        case op::ballot: l.result = int64_t(pred & part); break;
        case op::any: l.result = (pred & part) != 0; break;
        case op::all: l.result = (pred & part) == part; break;
        case op::active: l.result = int64_t(arrived); break;
        default: {
            int src = shfl_source(l.waiting, i, l.arg, l.width);
            bool ok = src >= 0 && src < w && (part >> src & 1);
            l.result = ok ? b->lanes[first + src].value : l.value;
        }
        }
    }
    for (int i = 0; i < w && first + i < b->nlanes; i++)
        if (arrived >> i & 1)
            b->lanes[first + i].waiting = op::none;
}

inline void run(block *b)
{
    for (;;) {
        bool any_running = false;
        for (int i = 0; i < b->nlanes; i++) {
            lane &l = b->lanes[i];
            if (l.done || l.waiting != op::none)
                continue;
            b->current = i;
            set_lane_vars(b);
            swapcontext(&b->sched, &l.ctx);
            any_running = true;
        }
        // Every lane has finished or stopped: warp operations first, per wavefront.
        bool progressed = any_running;
        for (int first = 0; first < b->nlanes; first += b->wave) {
            bool some = false;
            for (int i = first; i < first + b->wave && i < b->nlanes; i++)
                some |= !b->lanes[i].done && b->lanes[i].waiting != op::none &&
                        b->lanes[i].waiting != op::sync;
            if (some) {
                resolve_wave(b, first);
                progressed = true;
            }
        }
        if (progressed)
            continue;
        // Only barriers left (or nothing): release __syncthreads.
        bool waiting = false;
        for (lane &l : b->lanes)
            if (!l.done && l.waiting == op::sync) {
                l.waiting = op::none;
                waiting = true;
            }
        if (!waiting)
            return;
    }
}

// Run body (a callable taking no arguments) for one block of nthreads lanes,
// wavefronts of wave lanes.
template <typename F> void launch_body(int wave, int nthreads, F body)
{
    if (wave != 32 && wave != 64) {
        std::fprintf(stderr, "wave must be 32 or 64\n");
        std::exit(2);
    }
    block b;
    b.wave = wave;
    b.nlanes = nthreads;
    b.lanes.resize(nthreads);
    b.body = body;
    warpSize = wave;
    blockDim = {unsigned(nthreads), 1, 1};
    blockIdx = {0, 0, 0};
    gridDim = {1, 1, 1};
    cur() = &b;
    for (lane &l : b.lanes) {
        l.stack.resize(256 * 1024);
        getcontext(&l.ctx);
        l.ctx.uc_stack.ss_sp = l.stack.data();
        l.ctx.uc_stack.ss_size = l.stack.size();
        l.ctx.uc_link = nullptr;
        makecontext(&l.ctx, trampoline, 0);
    }
    run(&b);
    cur() = nullptr;
}

template <typename K, typename... A> void launch(int wave, int nthreads, K kernel, A... args)
{
    launch_body(wave, nthreads, [=] { kernel(args...); });
}

template <typename T> int64_t bits_of(T v)
{
    int64_t r = 0;
    static_assert(sizeof(T) <= sizeof r, "at most 64-bit values");
    std::memcpy(&r, &v, sizeof v);
    return r;
}
template <typename T> T from_bits(int64_t r)
{
    T v;
    std::memcpy(&v, &r, sizeof v);
    return v;
}

} // namespace gvemu

// The cross-lane operations, HIP's signatures: 64-bit masks and ballots.
template <typename T> T __shfl_sync(uint64_t m, T v, int src, int width = warpSize)
{
    return gvemu::from_bits<T>(gvemu::stop_at(gvemu::op::shfl, m, gvemu::bits_of(v), src, width));
}
template <typename T> T __shfl_up_sync(uint64_t m, T v, unsigned d, int width = warpSize)
{
    return gvemu::from_bits<T>(gvemu::stop_at(gvemu::op::shfl_up, m, gvemu::bits_of(v), d, width));
}
template <typename T> T __shfl_down_sync(uint64_t m, T v, unsigned d, int width = warpSize)
{
    return gvemu::from_bits<T>(
        gvemu::stop_at(gvemu::op::shfl_down, m, gvemu::bits_of(v), d, width));
}
template <typename T> T __shfl_xor_sync(uint64_t m, T v, int lm, int width = warpSize)
{
    return gvemu::from_bits<T>(gvemu::stop_at(gvemu::op::shfl_xor, m, gvemu::bits_of(v), lm, width));
}
inline unsigned long long __ballot_sync(uint64_t m, int p)
{
    return (unsigned long long)gvemu::stop_at(gvemu::op::ballot, m, p != 0, 0, 0);
}
inline int __any_sync(uint64_t m, int p) { return int(gvemu::stop_at(gvemu::op::any, m, p != 0, 0, 0)); }
inline int __all_sync(uint64_t m, int p) { return int(gvemu::stop_at(gvemu::op::all, m, p != 0, 0, 0)); }
inline unsigned long long __activemask()
{
    return (unsigned long long)gvemu::stop_at(gvemu::op::active, ~uint64_t(0), 0, 0, 0);
}
inline void __syncthreads() { gvemu::stop_at(gvemu::op::sync, 0, 0, 0, 0); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }

#endif
