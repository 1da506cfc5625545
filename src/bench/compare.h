/* Comparing two gpuvet.bench documents (gpuvet compare A B, gpuvet ab --bench):
 * result by result, a change beyond the measured noise with the sample ranges
 * apart is a regression or an improvement; status changes; ids on one side
 * only; and the likely causes of the regressions from the two documents'
 * snapshots, devices, conditions and collectives, ranked by evidence.
 * See docs/bench-compare.md. Nothing here prints. */
#ifndef GV_BENCH_COMPARE_H
#define GV_BENCH_COMPARE_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "check/compare.h"

/* The floor of the noise: a change of 2% or less is never a regression. */
#define GV_BCMP_NOISE_FLOOR 0.02
/* Higher floors where the host's scheduling and memory decide the figure, which then
 * varies far more between runs than within one (a run's spread is no guide):
 * - launch latencies: p5-p95 about 15% on the H200 (docs/facts/bench-anchors.md,
 *   section 7); two quick runs on an unchanged H200 (2026-12-02) put back-to-back
 *   launches 5% apart with 0.3% spreads, and the cost of issuing one 12% apart;
 * - pageable copies (the host's page cache and its memcpy): the same two runs put
 *   them 31% and 34% apart with spreads under 10%. */
#define GV_BCMP_NOISE_LATENCY 0.15
#define GV_BCMP_NOISE_PAGEABLE 0.40
/* The floor for one result: GV_BCMP_NOISE_LATENCY for the "latency" group,
 * GV_BCMP_NOISE_PAGEABLE for an id with ".pageable.", else GV_BCMP_NOISE_FLOOR. */
double gv_bcmp_noise_floor(const char *group, const char *id);

enum gv_bcmp_change {
    GV_BC_REGRESSED,      /* both ok, B worse beyond the noise, sample ranges apart */
    GV_BC_NEWLY_FAILING,  /* ok in A, not ok in B (failed: B's result is wrong) */
    GV_BC_IMPROVED,       /* both ok, B better beyond the noise, ranges apart */
    GV_BC_NEWLY_OK,       /* not ok in A, ok in B */
    GV_BC_WITHIN_NOISE,   /* both ok, no clear change */
    GV_BC_NOT_COMPARABLE, /* same id, different parameters or a zero value */
    GV_BC_NOT_RUN,        /* not ok on both sides */
    GV_BC_ONLY_A,         /* id only in A */
    GV_BC_ONLY_B,         /* id only in B */
    GV_BC_COUNT
};

const char *gv_bcmp_change_name(enum gv_bcmp_change c);
/* Regressed and newly failing: what makes gpuvet compare exit 1. */
int gv_bcmp_flagged(enum gv_bcmp_change c);

struct gv_bcmp_case {
    const char *id, *group, *name, *unit; /* point into the documents */
    const json_t *a, *b;                  /* the results; NULL when absent */
    const char *status_a, *status_b;      /* NULL when absent */
    enum gv_bcmp_change change;
    int lower_better;
    double va, vb;      /* medians (NAN when not ok) */
    double ratio;       /* > 1: B is better (B/A higher-is-better, A/B lower) */
    double noise;       /* max(spread A, spread B, gv_bcmp_noise_floor()) */
    int apart;          /* the [min, max] ranges do not overlap */
    char why[320];      /* status changes, not comparable: in words */
};

struct gv_bench_compare {
    size_t n;
    struct gv_bcmp_case *cases; /* A's order, then B's new ids */
    size_t count[GV_BC_COUNT];
    int flagged;
    size_t ncauses;
    struct gv_cmp_cause *causes; /* ranked: rank 0 touches every flagged result */
    size_t nnotes;
    char notes[8][320];          /* different devices, modes, ... */
    const char *device_a, *device_b, *mode_a, *mode_b, *created_a, *created_b;
};

/* a, b: documents that passed gv_bench_validate (path_a/path_b name them in
 * messages). They must outlive *out. */
int gv_bench_compare_docs(const json_t *a, const json_t *b, struct gv_bench_compare *out,
                          struct gv_err *err);
void gv_bench_compare_free(struct gv_bench_compare *c);

/* The comparison as a gpuvet.compare document with "kind": "bench"
 * (docs/bench-compare.md). */
json_t *gv_bench_compare_json(const struct gv_bench_compare *c, const char *path_a,
                              const char *path_b);

/* Whether the file starts like a gpuvet.bench document (its first bytes name
 * the schema); a truncated one still does, so it is reported as such. */
int gv_bench_is_bench_file(const char *path);

/* Reads and validates a bench document (at most 256 MiB). */
int gv_bench_load(const char *path, json_t **doc, struct gv_err *err);
/* The same from memory (name: for messages). */
int gv_bench_parse(const char *data, size_t n, const char *name, json_t **doc, struct gv_err *err);

#endif
