/* Error signatures: what the error of a degraded case looks like, and which
 * behaviour of the stack it is the mark of. Facts with sources
 * (docs/facts/numerics-methods.md, section and source number). */
#ifndef GV_KB_NUMSIG_H
#define GV_KB_NUMSIG_H

#include <stddef.h>

struct kb_numsig {
    const char *id;       /* "tf32-inputs" */
    const char *text;     /* one sentence */
    const char *source;
};

/* What a case's error looked like after (and before) the change. */
struct kb_numsig_case {
    const char *id, *op, *in, *compute, *out; /* as in the result file */
    double bits_before, bits_after;           /* effective bits */
    double mean_signed;                       /* after */
    int has_bias;                             /* the two below are known */
    double toward_zero, mean_abs;             /* after */
    int nonfinite_after;                      /* NaN/Inf where the reference is finite */
};

/* Every signature the case matches (at most max), most specific first;
 * returns the count. */
size_t kb_numsig_match(const struct kb_numsig_case *c, const struct kb_numsig **out, size_t max);

/* One run judged alone (gpuvet check, no before-file): the effective bits a
 * correct implementation keeps against the fp64 reference, to stand for
 * bits_before: the precision p of the narrower of the compute and output
 * formats (unit roundoff 2^-p; docs/facts/numerics-methods.md §6: the error of a correct
 * result is a few units of that roundoff). The inputs are exact in their own
 * format (the reference is computed from them), so the input format does not
 * lower it. 0 when a format is unknown. */
double kb_numsig_expected_bits(const char *compute, const char *out);

/* Whether a variable with a known numerics effect (check/compare.c's notes) can
 * have changed a case of this op and input format: TF32 switches act on fp32
 * GEMM/convolution, the fp16 alternate implementation on fp16 GEMM/conv, the
 * emulation switches on fp32 / fp64 GEMM; library choice, workspace and
 * loader variables on any case. */
int kb_numvar_touches(const char *name, const char *op, const char *in_dtype);

#endif
