/* Error signatures of degraded cases (numsig.h). */
#include "kb/numsig.h"

#include <math.h>
#include <string.h>

#include "num/fp.h"
#include "num/types.h"

enum { SIG_FTZ, SIG_TRUNC, SIG_DOWN, SIG_TF32, SIG_BF16, SIG_NARROW, SIG_NONFINITE, SIG_N };

static const struct kb_numsig sigs[SIG_N] = {
    [SIG_FTZ] = {"flush-to-zero",
                 "almost no correct bits on subnormal-heavy inputs: subnormal inputs or outputs "
                 "flushed to zero (as MI200 FP16/BF16 MFMA do)",
                 "docs/facts/numerics-methods.md §5 (MI200 FP16/BF16 MFMA flush, S11, S9)"},
    [SIG_TRUNC] = {"truncation",
                   "outputs biased toward zero: the mark of truncating (round-toward-zero) "
                   "products or accumulation",
                   "docs/facts/numerics-methods.md §2a (F5: RZ vs RNE, S2) and §6 (RZ doubles the "
                   "bound)"},
    [SIG_DOWN] = {"round-down",
                  "a negative bias that grows with K: the mark of round-down accumulation (as "
                  "MI300 XF32)",
                  "docs/facts/numerics-methods.md §4b (S10) and §6 (mean signed error)"},
    [SIG_TF32] = {"tf32-inputs",
                  "an fp32 GEMM left with about 11-12 effective bits: the signature of TF32 "
                  "inputs (fp32 rounded to 10 mantissa bits, unit roundoff 2^-11)",
                  "docs/facts/numerics-methods.md §5 (allow_tf32, NVIDIA_TF32_OVERRIDE) and §6 (unit "
                  "roundoff of TF32 inputs)"},
    [SIG_BF16] = {"bf16-inputs",
                  "an fp16 GEMM left with 8-9.5 effective bits: fp16 inputs rounded to bf16 "
                  "inside the multiply (as rocBLAS's fp16 alternate implementation), or sums "
                  "kept in fp16 at small K (gpuvet probe tells them apart)",
                  "docs/facts/numerics-methods.md §5 (ROCBLAS_INTERNAL_FP16_ALT_IMPL) and §6 (unit "
                  "roundoff of bf16)"},
    [SIG_NARROW] = {"narrow-accumulation",
                    "a half-precision GEMM losing bits beyond its inputs' rounding: sums kept "
                    "in a narrower format than fp32 (fp16 accumulation, reduced-precision "
                    "reduction)",
                    "docs/facts/numerics-methods.md §5 (allow_fp16_reduced_precision_reduction, "
                    "allow_fp16_accumulation)"},
    [SIG_NONFINITE] = {"overflow",
                       "NaN or Inf where the reference is finite: an intermediate overflowed a "
                       "narrower format",
                       "docs/facts/numerics-methods.md §5 (reduced-precision reductions: inf when the "
                       "result is representable)"},
};

static int is(const char *a, const char *b) { return a && !strcmp(a, b); }

size_t kb_numsig_match(const struct kb_numsig_case *c, const struct kb_numsig **out, size_t max)
{
    size_t n = 0;
#define ADD(k)                                                                               \
    do {                                                                                     \
        if (n < max)                                                                         \
            out[n++] = &sigs[k];                                                             \
    } while (0)
    int mm = is(c->op, "gemm") || is(c->op, "conv2d");
    if (c->nonfinite_after)
        ADD(SIG_NONFINITE);
    if (c->id && strstr(c->id, ".subnormal") && c->bits_after < 4 && c->bits_before >= 6)
        ADD(SIG_FTZ);
    if (mm && is(c->in, "f32") && is(c->compute, "f32") && c->bits_before >= 16 &&
        c->bits_after >= 9.5 && c->bits_after <= 13.5)
        ADD(SIG_TF32);
    if (mm && is(c->in, "f16") && is(c->compute, "f32") && c->bits_before >= 9.5 && c->bits_after >= 8 &&
        c->bits_after <= 9.4 && !n)
        ADD(SIG_BF16);
    else if (mm && (is(c->in, "f16") || is(c->in, "bf16")) && is(c->compute, "f32") &&
             c->bits_after < c->bits_before - 1 &&
             !n)
        ADD(SIG_NARROW);
    if (c->has_bias && c->mean_abs > 0 && c->toward_zero >= 0.5 * c->mean_abs)
        ADD(SIG_TRUNC);
    else if (c->has_bias && c->mean_abs > 0 && c->mean_signed <= -0.5 * c->mean_abs)
        ADD(SIG_DOWN);
#undef ADD
    return n;
}

static double format_bits(const char *name)
{
    int t = gv_dtype_from_name(name);
    return t < 0 ? 0 : -log2(gv_fp_unit_roundoff((enum gv_dtype)t));
}

double kb_numsig_expected_bits(const char *compute, const char *out)
{
    double c = format_bits(compute), o = format_bits(out);
    return c <= 0 || o <= 0 ? 0 : c < o ? c : o;
}

/* docs/facts/numerics-methods.md §5: each switch and the work it acts on. */
static const struct {
    const char *part;  /* a substring of the variable's name */
    const char *in;    /* input format it acts on */
    const char *source;
} var_scope[] = {
    {"TF32", "f32", "§5 NVIDIA_TF32_OVERRIDE, allow_tf32, HIPBLASLT_ALLOW_TF32, MIOPEN_TF32_OVERRIDE"},
    {"EMULATE_SINGLE", "f32", "§5 cuBLAS BF16x9 fp32 emulation (S12)"},
    {"FP16_ALT_IMPL", "f16", "§5 ROCBLAS_INTERNAL_FP16_ALT_IMPL (S11)"},
    {"EMULATE_DOUBLE", "f64", "§5 cuBLAS fp64 emulation (S12)"},
};

int kb_numvar_touches(const char *name, const char *op, const char *in_dtype)
{
    int mm = is(op, "gemm") || is(op, "conv2d");
    for (size_t i = 0; i < sizeof var_scope / sizeof var_scope[0]; i++)
        if (name && strstr(name, var_scope[i].part))
            return mm && is(in_dtype, var_scope[i].in);
    return 1;
}
