// The same reductions written for any wavefront size: zero findings.
#include <hip/hip_runtime.h>

__device__ float warp_sum(float v)
{
    // a 32-lane version would start at 16 and use 0xffffffff; this one does not
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down(v, offset);
    return v;
}

__device__ float warp_sum_sync(float v)
{
    const auto mask = __activemask();
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(mask, v, offset);
    return v;
}

__global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float partial[64]; /* one slot per warp: at most 1024 / 16 warps */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = threadIdx.x < (blockDim.x + warpSize - 1) / warpSize ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0)
            atomicAdd(out, v);
    }
}
