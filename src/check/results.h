/* Result files (schema gpuvet.results, docs/results-schema.md): what one
 * `gpuvet check` run measured, with the device and an embedded snapshot, so
 * that `gpuvet compare` can judge change and attribute it. */
#ifndef GV_STORE_RESULTS_H
#define GV_STORE_RESULTS_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "check/runner.h"
#include "kb/numsig.h"

#define GV_RESULTS_SCHEMA "gpuvet.results"
#define GV_RESULTS_SCHEMA_VERSION 1

struct gv_results_meta {
    const char *suite;        /* "quick" ... */
    const char *only;         /* --only pattern or NULL */
    const char *device_spec;  /* --device value or NULL */
    const char *device_note;  /* why this device was chosen */
    json_t *device;           /* backend describe() (borrowed) */
    json_t *snapshot;         /* embedded snapshot (borrowed) */
    const char *outputs_file; /* --save-outputs path or NULL */
    json_t *probe;            /* check --probe: the fingerprint (borrowed) or NULL */
};

/* What a failing case's error looks like (kb/numsig.h), the run judged alone
 * against the fp64 reference: the case's measured bits against the bits a
 * correct implementation keeps in its compute and output formats
 * (kb_numsig_expected_bits, *expected), its bias and its NaN/Inf. Only for a
 * case that ran, was measured and failed; 0 (and *expected 0) otherwise.
 * Returns the count of signatures written to out (at most max), most specific
 * first. */
size_t gv_case_signatures(const struct gv_case_result *r, const struct kb_numsig **out,
                          size_t max, double *expected);

/* Builds the document (new reference). */
json_t *gv_results_build(const struct gv_results_meta *meta, const struct gv_case_result *r,
                         size_t n);

/* One case as read back. Strings are copies; absent optional fields are ""
 * or flags at 0. */
struct gv_result_case {
    char id[128];
    char op[16];
    char in_dtype[8], compute_dtype[8], out_dtype[8];
    char input_digest[65];
    char output_digest[65];   /* "" when the case produced no output */
    enum gv_verdict verdict;
    char error[512];
    int has_metrics;
    double err_over_bound, eff_bits, mean_signed, max_abs, max_rel, normwise;
    int has_bias;                     /* the two below were recorded */
    double mean_toward_zero, mean_abs;
    uint64_t nan_count, inf_count, count;
    int det_checked, det_identical;
    double seconds;
    char impl[512];
};

struct gv_results {
    json_t *doc;                 /* the whole document */
    const json_t *device;        /* doc.device.description (object) */
    const json_t *snapshot;      /* doc.snapshot (object, may be a not-collected section) */
    char suite[16];
    char created[32];
    char outputs_file[4096];     /* "" when outputs were not saved */
    size_t n;
    struct gv_result_case *cases;
};

/* Reads and validates a result file: schema and version, and every field the
 * readers use; errors name the file, the case (index and id) and the field. */
int gv_results_load(const char *path, struct gv_results *res, struct gv_err *err);
/* The same from memory (what names the source in messages). */
int gv_results_parse(const char *data, size_t len, const char *what, struct gv_results *res,
                     struct gv_err *err);
void gv_results_free(struct gv_results *res);
const struct gv_result_case *gv_results_find(const struct gv_results *res, const char *id);

/* "pass" | "fail" | "error" | "skipped" <-> enum; -1 when unknown. */
int gv_verdict_from_name(const char *name);

#endif
