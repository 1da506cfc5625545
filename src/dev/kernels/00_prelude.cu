// gpuvet kernels: one source for NVRTC (CUDA) and hipRTC (HIP). All kernels
// read and write fp32 (inputs in other formats are converted first by the
// conversion kernels in convert.cu) and accumulate in fp32. Reductions use a
// fixed block of GV_BLOCK threads: each thread sums a fixed strided subset in
// index order, then a fixed shared-memory tree, so results are deterministic.
#if defined(__HIPCC_RTC__) || defined(__HIP__)
#define GV_BITS(f) __builtin_bit_cast(unsigned int, (f))
#define GV_FLOAT(u) __builtin_bit_cast(float, (unsigned int)(u))
#else
#define GV_BITS(f) __float_as_uint(f)
#define GV_FLOAT(u) __uint_as_float(u)
#endif
#define GV_KERNEL extern "C" __global__ void
#define GV_BLOCK 256

typedef unsigned int gv_u32;
typedef unsigned short gv_u16;
typedef unsigned char gv_u8;
typedef long long gv_i64;

__device__ __forceinline__ gv_i64 gv_tid(void)
{
    return (gv_i64)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ gv_i64 gv_stride(void) { return (gv_i64)gridDim.x * blockDim.x; }

// Fixed-order block sum of one value per thread (blockDim.x == GV_BLOCK).
__device__ float gv_block_sum(float v, float *sh)
{
    unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned s = GV_BLOCK / 2; s > 0; s >>= 1) {
        if (t < s)
            sh[t] = sh[t] + sh[t + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__device__ float gv_block_max(float v, float *sh)
{
    unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned s = GV_BLOCK / 2; s > 0; s >>= 1) {
        if (t < s)
            sh[t] = fmaxf(sh[t], sh[t + s]);
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}
