// Kernels of gpuvet bench (src/dev/bench_gpu.c): the gate that keeps the GPU
// busy while timed work is enqueued, the fill of GEMM operands with
// deterministic high-entropy values (the host recomputes any element to check
// a product: gv_bench_value_bits in src/bench/bench.h uses the same hash), the
// STREAM-style memory kernels, and the empty kernel for launch latency.

// splitmix64 of (seed, index): the same 64 bits on the host (src/dev/bench_fill.c).
__device__ __forceinline__ unsigned long long gv_bench_hash(unsigned long long seed,
                                                            unsigned long long i)
{
    unsigned long long z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Holds the stream for about ns nanoseconds, so that the work and the start
// event behind it are all enqueued before the GPU reaches them.
#if defined(__HIPCC_RTC__) || defined(__HIP__)
GV_KERNEL gv_bench_spin(float *p, gv_i64 ns)
{
    volatile float *v = p;
    for (gv_i64 i = 0; i < ns; i++)
        if (v[1] == 12345.0f)
            break;
}
#else
GV_KERNEL gv_bench_spin(float *p, gv_i64 ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < (unsigned long long)ns);
    if (p && threadIdx.x == 0 && p[1] == 12345.0f)
        p[0] = 1.0f;
}
#endif

// Operands as bit patterns of the element format: a random sign, an exponent
// giving magnitudes in [0.25, 1), a random mantissa. width: 1, 2, 4 or 8 bytes;
// man: mantissa bits; ebits: exponent bits. No zeros, no rounding needed.
GV_KERNEL gv_bench_fill(void *p, gv_i64 n, int width, int man, int ebits, unsigned long long seed)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride()) {
        unsigned long long h = gv_bench_hash(seed, (unsigned long long)i);
        unsigned long long bias = (1ull << (ebits - 1)) - 1;
        unsigned long long e = bias - 1 - ((h >> 61) & 1);
        unsigned long long m = h & ((1ull << man) - 1);
        unsigned long long s = h >> 63;
        unsigned long long bits = (s << (man + ebits)) | (e << man) | m;
        if (width == 1)
            ((gv_u8 *)p)[i] = (gv_u8)bits;
        else if (width == 2)
            ((gv_u16 *)p)[i] = (gv_u16)bits;
        else if (width == 4)
            ((gv_u32 *)p)[i] = (gv_u32)bits;
        else
            ((unsigned long long *)p)[i] = bits;
    }
}

// Four floats moved as one 16-byte access (the vector types of the CUDA and
// HIP headers are not assumed to be there under run-time compilation).
struct alignas(16) gv_f4 {
    float x, y, z, w;
};

// STREAM kernels on 16-byte vectors (n4 = elements / 4): copy c=a, scale b=s*c,
// add c=a+b, triad a=b+s*c, launched with a thread per vector (the loop then runs
// once; on an H200 that reached the runtime's own copy, where one wave of blocks
// looping over the arrays stayed about 7 % below it); read: each thread of one
// wave sums its part, one store per thread so the reads cannot be optimised away.
GV_KERNEL gv_bench_copy(const gv_f4 *__restrict__ a, gv_f4 *__restrict__ c, gv_i64 n4)
{
    for (gv_i64 i = gv_tid(); i < n4; i += gv_stride())
        c[i] = a[i];
}

GV_KERNEL gv_bench_scale(gv_f4 *__restrict__ b, const gv_f4 *__restrict__ c, float s, gv_i64 n4)
{
    for (gv_i64 i = gv_tid(); i < n4; i += gv_stride()) {
        gv_f4 v = c[i];
        b[i] = {s * v.x, s * v.y, s * v.z, s * v.w};
    }
}

GV_KERNEL gv_bench_add(const gv_f4 *__restrict__ a, const gv_f4 *__restrict__ b,
                       gv_f4 *__restrict__ c, gv_i64 n4)
{
    for (gv_i64 i = gv_tid(); i < n4; i += gv_stride()) {
        gv_f4 x = a[i], y = b[i];
        c[i] = {x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w};
    }
}

GV_KERNEL gv_bench_triad(gv_f4 *__restrict__ a, const gv_f4 *__restrict__ b,
                         const gv_f4 *__restrict__ c, float s, gv_i64 n4)
{
    for (gv_i64 i = gv_tid(); i < n4; i += gv_stride()) {
        gv_f4 x = b[i], y = c[i];
        a[i] = {x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w};
    }
}

GV_KERNEL gv_bench_read(const gv_f4 *a, float *out, gv_i64 n4)
{
    float acc = 0.0f;
    for (gv_i64 i = gv_tid(); i < n4; i += gv_stride()) {
        gv_f4 v = a[i];
        acc += v.x + v.y + v.z + v.w;
    }
    out[gv_tid()] = acc;
}

// Fills n floats with i (exact up to 2^24) for the copy checks.
GV_KERNEL gv_bench_iota(float *p, gv_i64 n, float base)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        p[i] = base + (float)(i & 0xFFFFF);
}

GV_KERNEL gv_bench_empty(void) {}
