/* gpuvet bench: the method. Which benchmarks a device gets, warm-up, samples,
 * statistics, checks, the fp16/bf16 verdict and the document (schema
 * gpuvet.bench, docs/bench.md). The device work itself is src/dev/bench_dev.h;
 * collectives are src/bench/coll.h. Nothing here prints. */
#ifndef GV_BENCH_BENCH_H
#define GV_BENCH_BENCH_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

#define GV_BENCH_SCHEMA "gpuvet.bench"
#define GV_BENCH_SCHEMA_VERSION 1

enum gv_bench_mode { GV_BENCH_QUICK, GV_BENCH_DEFAULT, GV_BENCH_FULL };

/* Called before each benchmark (may be NULL): its id, how many are done, of how many. */
typedef void (*gv_bench_progress_fn)(void *ctx, const char *id, int done, int total);

struct gv_bench_opts {
    const char *device;        /* "cpu", "cuda:0"; NULL: as check chooses (gv_device_open) */
    const char *only;          /* comma-separated fnmatch patterns on result ids; NULL: all */
    enum gv_bench_mode mode;
    gv_bench_progress_fn progress;
    void *progress_ctx;
    int first_route;           /* GEMMs on the kind's first route only (fleet's short bench) */
    int gemm_only;             /* no collectives, no topology (fleet's short bench) */
};

/* Runs the benchmarks; *doc is the gpuvet.bench document without the embedded
 * snapshot (the caller adds it). A device that cannot be opened is an error;
 * a benchmark that cannot run on it is a result with status "unsupported" and
 * its reason; one whose result is wrong has status "failed" and no value. */
int gv_bench_run(const struct gv_bench_opts *o, json_t **doc, struct gv_err *err);

/* gpuvet fleet run --bench (docs/fleet.md): a short GEMM bench on device (NULL:
 * as check chooses), quick mode, every precision the device has; where budget
 * (seconds, 0: none) is under 120, the kind's first route only. *figures is
 * [{"id", "unit", "median", "spread"}] of the results that ran and were
 * right: TFLOP/s on a GPU, GFLOP/s on the host. A device that cannot be
 * opened is an error. Its signature is gv_fleet_bench_fn's (fleet_run.h). */
int gv_bench_figures(const char *device, double budget, json_t **figures, struct gv_err *err);

/* Statistics of n samples (sorted in place): median, min, max; spread =
 * (max - min) / median. */
struct gv_bench_stats {
    double median, min, max, spread;
    int n;
};
void gv_bench_stats_of(double *v, int n, struct gv_bench_stats *s);

/* The verdict of an interleaved comparison of two arms (higher is better):
 * ratio of medians b/a, and whether the difference is clear: the two sample
 * ranges do not overlap and the ratio differs from 1 by more than both arms'
 * spreads. */
struct gv_bench_ab {
    double ratio;
    int clear;
};
void gv_bench_compare_arms(const double *a, int na, const double *b, int nb, struct gv_bench_ab *r);

/* Whether id matches one of the comma-separated patterns (NULL or "": all). */
int gv_bench_selected(const char *only, const char *id);

/* Checks a parsed bench document: schema name and version, results an array
 * of objects with id, status and (when ok) a finite value. GV_E_FORMAT /
 * GV_E_SCHEMA naming the field. */
int gv_bench_validate(const json_t *doc, const char *path, struct gv_err *err);

#endif
