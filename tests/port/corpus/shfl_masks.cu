// Shuffle masks in the forms code uses.
constexpr unsigned kFull = 0xffffffffu;
static const unsigned long long kWide = 0xffffffffULL;
constexpr int kWarpSize = 32;

__device__ float bcast(float v, int src)
{
    v = __shfl_sync(kFull, v, src);
    v = __shfl_sync(kWide, v, src, kWarpSize);
    v = __shfl_sync(0xffffffffffffffffull, v, src);
    return __shfl_sync(__activemask(), v, src, warpSize);
}
