// Warp-level kernels for the 64-lane proof (docs/port.md, "What the emulation
// proves"): each 32-lane-assuming version next to its warpSize version, the
// bodies as CUDA code writes them (after hipify: the same calls). Included by
// emu_run.cpp (CPU emulation, tests/cli/port_emu.sh) and by check.hip (the
// fixture's real hipcc, tests/cli/port_check.sh) -- one text for both, so what
// compiles and what computes are the same kernels.
//
// Every kernel runs as one block of 256 threads; in[] holds 256 ints; out[]
// 256 ints, zeroed; the result the host reads is described per kernel.
#ifndef GV_PORT_EMU_KERNELS_H
#define GV_PORT_EMU_KERNELS_H

#if defined(GV_HIP_PRE_SYNC)
// HIP before 6.2 has no *_sync warp functions: the port's mask-free spelling.
#define __shfl_down_sync(m, v, d) __shfl_down(v, d)
#define __ballot_sync(m, p) __ballot(p)
#define __activemask() __ballot(1)
#endif

// The block's total from one partial sum per warp (thread 0 alone).
__device__ int add_partials(const int *partial, unsigned warps)
{
    int sum = 0;
    for (unsigned w = 0; w < warps; w++)
        sum += partial[w];
    return sum;
}

// 1. Block sum, 32 lanes assumed: full mask 0xffffffff, offsets from 16, lane
//    and warp ids by 32. out[0] = sum of in.
__global__ void reduce_w32(const int *in, int *out)
{
    __shared__ int partial[32];
    int v = in[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        out[0] = add_partials(partial, blockDim.x / 32);
}

// 1'. The same with warpSize and the active lanes' mask. out[0] = sum of in.
__global__ void reduce_ws(const int *in, int *out)
{
    __shared__ int partial[32];
    int v = in[threadIdx.x];
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(__activemask(), v, offset);
    if (threadIdx.x % warpSize == 0)
        partial[threadIdx.x / warpSize] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        out[0] = add_partials(partial, blockDim.x / warpSize);
}

// 2. Block sum with warp ids from warpSize and a correct mask, but the
//    shuffle offsets still start at 16 (a literal 32/2). out[0] = sum of in.
__global__ void reduce_off16(const int *in, int *out)
{
    __shared__ int partial[32];
    int v = in[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(__activemask(), v, offset);
    if (threadIdx.x % warpSize == 0)
        partial[threadIdx.x / warpSize] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        out[0] = add_partials(partial, blockDim.x / warpSize);
}

// 3. Count of positive inputs, the ballot kept in a 32-bit unsigned and
//    counted with __popc. out[w] = count of warp w (the host adds them).
__global__ void ballot_u32(const int *in, int *out)
{
    unsigned votes = __ballot_sync(__activemask(), in[threadIdx.x] > 0);
    if (threadIdx.x % warpSize == 0)
        out[threadIdx.x / warpSize] = __popc(votes);
}

// 3'. The same with the ballot's own 64-bit type. out[w] as above.
__global__ void ballot_u64(const int *in, int *out)
{
    unsigned long long votes = __ballot_sync(__activemask(), in[threadIdx.x] > 0);
    if (threadIdx.x % warpSize == 0)
        out[threadIdx.x / warpSize] = __popcll(votes);
}

#endif
