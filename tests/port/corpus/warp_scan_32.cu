// Inclusive warp scans and a per-lane staging buffer, 32 lanes assumed.
__device__ int warp_scan(int v)
{
    int lane = threadIdx.x % 32;
    for (int d = 1; d < 32; d *= 2) {
        int t = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += t;
    }
    return v;
}

__device__ int warp_scan_legacy(int v)
{
    int lane = threadIdx.x & 31;
    for (int d = 1; d <= 16; d <<= 1) {
        int t = __shfl_up(v, d, 32);
        if (lane >= d)
            v += t;
    }
    return v;
}

__global__ void stage(int *out)
{
    __shared__ int staging[8][32];
    __shared__ int lane_val[32];
    int lane = threadIdx.x % warpSize; // correct lane id
    lane_val[lane] = warp_scan(lane);
    staging[threadIdx.x / warpSize][lane] = lane_val[lane];
    out[threadIdx.x] = staging[0][lane];
}
