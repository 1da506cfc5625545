/* Dense (no sparsity) peaks: docs/facts/bench-anchors.md §1,
 * which takes them from stas00/ml-engineering compute/accelerator/README.md
 * (TFLOPS and memory tables; vendors print sparse figures at 2x) and the
 * Hopper derivation 132 SMs x 1.83 GHz x 4096 bf16 FLOP/clk/SM = 989.5. The
 * fp64 column is left unknown: the anchors give none. */
#include <math.h>
#include <string.h>

#include "kb/gpu_peaks.h"

#define U NAN
/* order of enum gv_dtype: f64, f32, tf32, f16, bf16, f8e4m3, f8e5m2 */
static const struct kb_gpu_peak peaks[] = {
    {"H200", "NVIDIA H200 SXM", {U, 67, 494.5, 989, 989, 1979, 1979}, 4.8, 0,
     "docs/facts/bench-anchors.md §1: ml-engineering accelerator tables (H200 = H100 SXM compute, "
     "4.8 TB/s HBM3e)"},
    {"H100 80GB HBM3", "NVIDIA H100 SXM", {U, 67, 494.5, 989, 989, 1979, 1979}, 3.35, 0,
     "docs/facts/bench-anchors.md §1: ml-engineering accelerator tables (H100 SXM)"},
    {"MI300X", "AMD Instinct MI300X", {U, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9}, 5.3, 256,
     "docs/facts/bench-anchors.md §1: ml-engineering tables; triton PR #7175 specs.py (2614.9e12); "
     "256 MB Infinity Cache (docs/facts/bench-anchors.md §1, §3: rotate >= 512 MiB)"},
    {"MI325X", "AMD Instinct MI325X", {U, 163.4, 653.7, 1300, 1300, 2610, 2610}, 6.0, 0,
     "docs/facts/bench-anchors.md §1: ml-engineering accelerator tables (MI325X)"},
    /* HIP shows each of the MI250X's two GCDs as a device, and one GEMM runs on one:
     * half the package's figures. fp32 is left unknown: the table's 47.9 is the vector
     * rate, and rocBLAS's fp32 GEMM runs on the matrix cores (twice that). */
    {"MI250X", "AMD Instinct MI250X (one GCD)", {U, U, U, 191.5, 191.5, U, U}, 1.64, 0,
     "docs/facts/bench-anchors.md §1: ml-engineering accelerator tables (MI250X, 2 GCDs: 383 fp16/bf16, "
     "3.28 TB/s), halved per GCD (ml-engineering issue #76)"},
};
#undef U

/* The largest AMD Infinity Cache above (MI300X's 256 MB), for AMD devices without an entry. */
#define AMD_LLC_MAX_MB 256

double kb_gpu_cache_bytes(const struct kb_gpu_peak *p, double l2_bytes, int amd)
{
    double c = l2_bytes > 0 ? l2_bytes : 64.0 * (1 << 20);
    double llc = p ? p->llc_mb * 1e6 : amd ? AMD_LLC_MAX_MB * 1e6 : 0;
    return llc > c ? llc : c;
}

const struct kb_gpu_peak *kb_gpu_peak_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(name, peaks[i].match))
            return &peaks[i];
    return NULL;
}

double kb_gpu_peak_tflops(const struct kb_gpu_peak *p, enum gv_dtype t)
{
    if (!p || (int)t < 0 || t >= GV_DTYPE_COUNT)
        return NAN;
    return p->tflops[t];
}
