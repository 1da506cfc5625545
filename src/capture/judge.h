/* How two tensors of one op differ, in units of the op's format: shared by
 * the capture comparison and bisect. */
#ifndef GV_CAPTURE_JUDGE_H
#define GV_CAPTURE_JUDGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "capture/gvcap.h"

enum gv_judge_status {
    GV_JUDGE_IDENTICAL = 0, /* the same bits */
    GV_JUDGE_NOISE,         /* within GV_CAP_NOISE_UNITS units of roundoff (normwise) */
    GV_JUDGE_BEYOND_NOISE,  /* more than that, or any integer/bool element differs */
    GV_JUDGE_UNKNOWN,       /* digests differ, values not kept (--max-bytes) */
    GV_JUDGE_MISMATCH,      /* another dtype, shape or number of outputs */
};
const char *gv_judge_status_name(enum gv_judge_status s);

struct gv_tdiff {
    enum gv_judge_status status;
    double rel;       /* ||b - a|| / ||a|| (normwise), NAN for non-floating dtypes */
    double units;     /* rel / u of the format */
    uint64_t max_ulp; /* largest ULP distance (floating) */
    uint64_t ndiff, count;
};

/* Two buffers of one dtype (torch name) and size. */
void gv_judge_bytes(const char *dtype, const void *a, const void *b, size_t nbytes,
                    struct gv_tdiff *d);
/* The same against a float64 referee: normwise relative error of x. */
double gv_judge_error(const char *dtype, const void *x, const double *ref, size_t count);

/* Every tensor id ({"$t": id}) in an argument or output structure, in order. */
json_t *gv_judge_tensor_ids(const json_t *v);
/* The tensor ids an op reads: those in its args, then in its kwargs. */
json_t *gv_judge_input_ids(const json_t *op);

struct gv_judge_outputs {
    json_t *list;               /* per output tensor: {a, b, status, rel, units, ...} */
    enum gv_judge_status worst; /* IDENTICAL < NOISE < BEYOND_NOISE < UNKNOWN < MISMATCH */
    double units;               /* the largest units among them */
};
/* Compares the tensors of two output structures (of two captures). */
int gv_judge_outputs(const struct gv_cap *a, const json_t *outs_a, const struct gv_cap *b,
                     const json_t *outs_b, struct gv_judge_outputs *o, struct gv_err *err);

/* Puts this process's floating-point environment back to the default
 * (fesetenv(FE_DFL_ENV): a library loaded into gpuvet, LD_PRELOAD included, may
 * have set flush-to-zero or denormals-are-zero) and proves it: 1 when a float32
 * product below the normal range stays subnormal and a subnormal reads as
 * itself, 0 when not (nothing judged here could then be trusted). */
int gv_judge_fp_default(void);

/* What differs between the environments of two torch device descriptions
 * (capture headers' "device") that changes numerics by itself: today the
 * floating-point mode (fp_mode, kb/fpmode.h), as [{kind: "device", name:
 * "fp_mode", text: "B flushes subnormals to zero (FTZ/DAZ); A does not",
 * ftz_a, daz_a, ftz_b, daz_b, mechanism, source}]; [] when nothing. */
json_t *gv_judge_env_causes(const json_t *dev_a, const json_t *dev_b);

#endif
