// Warp and block sum reductions written for 32-lane warps (NVIDIA).
#include <cuda_runtime.h>

#define WARP_SIZE 32
#define FULL_MASK 0xffffffff

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

__device__ float warp_sum_wide_mask(float v)
{
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffull, v, offset, 32);
    return v;
}

__global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float partial[1024 / 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x / 32;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = threadIdx.x < blockDim.x / 32 ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0)
            atomicAdd(out, v);
    }
}
