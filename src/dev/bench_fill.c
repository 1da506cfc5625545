/* The GEMM operands of gpuvet bench, element by element on the host: the same
 * bits the fill kernel (src/dev/kernels/bench.cu, gv_bench_fill) writes. */
#include <math.h>

#include "dev/bench_dev.h"

unsigned long long gv_bench_hash(unsigned long long seed, unsigned long long i)
{
    unsigned long long z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void gv_bench_format(enum gv_dtype storage, int *width, int *man, int *ebits)
{
    switch (storage) {
    case GV_F64: *width = 8, *man = 52, *ebits = 11; break;
    case GV_F16: *width = 2, *man = 10, *ebits = 5; break;
    case GV_BF16: *width = 2, *man = 7, *ebits = 8; break;
    case GV_F8E4M3: *width = 1, *man = 3, *ebits = 4; break;
    case GV_F8E5M2: *width = 1, *man = 2, *ebits = 5; break;
    default: *width = 4, *man = 23, *ebits = 8; break; /* f32, tf32 storage */
    }
}

/* A random sign, magnitude 2^-1 or 2^-2 times (1 + mantissa / 2^man). */
double gv_bench_value(enum gv_dtype storage, unsigned long long seed, unsigned long long i)
{
    int width, man, ebits;
    gv_bench_format(storage, &width, &man, &ebits);
    unsigned long long h = gv_bench_hash(seed, i);
    int e = -1 - (int)((h >> 61) & 1);
    unsigned long long m = h & ((1ull << man) - 1);
    double v = ldexp(1.0 + ldexp((double)m, -man), e);
    return (h >> 63) ? -v : v;
}
