/* The suite runner: for each case, generate the inputs, digest them, run the
 * case on a backend, compute (or fetch) the fp64 reference, measure, judge,
 * and optionally check run-to-run determinism. Never prints: progress goes
 * through a callback, errors into each case's result. */
#ifndef GV_NUM_RUNNER_H
#define GV_NUM_RUNNER_H

#include <stddef.h>

#include "base/err.h"
#include "dev/backend.h"
#include "num/catalog.h"
#include "num/metrics.h"

struct gv_case_result {
    const struct gv_catalog_entry *entry;
    enum gv_verdict verdict;
    int status;                 /* GV_OK, or the backend/reference status */
    char error[1024];           /* when status != 0 */
    char input_digest[65];
    struct gv_metrics m;        /* valid when the case ran and was measured */
    int measured;
    double bound_max;           /* max_i bound_i (absolute) */
    double bound_rel;           /* max_i bound_i / scale_i: the bound in units of the scale */
    double seconds;             /* backend time */
    double ref_seconds;         /* reference time (0 on a cache hit) */
    int ref_cache_hit;
    char impl[512];
    int det_checked;            /* the case was run twice */
    int det_identical;          /* ... and both outputs were bit-identical */
    struct gv_buffer output;    /* kept when opts.keep_outputs (free with gv_run_results_free) */
};

enum gv_det_mode { GV_DET_NONE = 0, GV_DET_QUICK = 1, GV_DET_ALL = 2 };

/* Progress: called before a case starts (r == NULL) and after it ends. */
typedef void (*gv_progress_fn)(void *ud, size_t index, size_t total,
                               const struct gv_catalog_entry *e, const struct gv_case_result *r);

struct gv_run_opts {
    const struct gv_backend *be;
    struct gv_device *dev;
    enum gv_det_mode determinism; /* QUICK: cases of the quick suite are run twice */
    int keep_outputs;
    gv_progress_fn progress;
    void *progress_ud;
};

/* Runs cases[0..n) into results[0..n) (zeroed by the caller or not: every
 * field is set). A failing case is recorded and the rest still run; the
 * return value is GV_OK unless the run itself could not proceed. */
int gv_run_cases(const struct gv_catalog_entry *const *cases, size_t n,
                 const struct gv_run_opts *opts, struct gv_case_result *results,
                 struct gv_err *err);
void gv_run_results_free(struct gv_case_result *results, size_t n);

/* The input digest: sha256 over a description of the case's semantics
 * (op, dtypes, shape, eps, function, distribution, seed, input rules) and
 * the bytes of every input. */
void gv_input_digest(const struct gv_case *c, const struct gv_buffer *in, int nin,
                     char out[65]);

/* Generates the inputs of c (allocates in[i].data; free with gv_inputs_free). */
int gv_make_inputs(const struct gv_case *c, struct gv_buffer in[4], int *nin,
                   struct gv_err *err);
void gv_inputs_free(struct gv_buffer in[4], int nin);

#endif
