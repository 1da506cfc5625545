/* What gpuvet bench's GPU backends (cuda_bench.c, hip_bench.c) share: the
 * timing loops (device events behind a spin kernel's gate, the host clock),
 * the memory, copy, launch and peer benchmarks whole, the GEMM operand sets
 * and their check against fp64, the test hook that spoils a result, the trial
 * of the Lt library's algorithms and its facts. Device access goes through the
 * numerics backend's primitives (struct gv_gpu_ops and its gv_gpu_timing), so
 * none of this names a vendor call; a backend adds only its GEMM libraries,
 * its conditions and how it opens. Nothing here prints. */
#ifndef GV_DEV_BENCH_GPU_H
#define GV_DEV_BENCH_GPU_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "dev/bench_dev.h"
#include "dev/gpu.h"
#include "dev/lt.h"

#define GV_BENCH_MAX_SETS 64

struct gv_bench_work;

/* A device as the shared code uses it: the primitives, their context, and the
 * grid of one wave (8 blocks of 256 per SM / CU) for fills and the read kernel;
 * after gv_bench_gpu_start, the gate's events and word. */
struct gv_bench_gpu {
    const struct gv_gpu_ops *ops;
    void *ctx;
    unsigned grid;
    const struct gv_gpu_timing *t; /* ops->timing */
    void *e0, *e1;                 /* the start and end events */
    gv_dptr gate;                  /* 16 bytes the spin kernel reads */
    double spin_unit_s;            /* seconds per unit of the spin kernel's count */
    int ndev;                      /* devices of this kind visible */
    /* The backend's GEMM: one product of operand set `set`, enqueued. */
    int (*gemm_once)(void *vendor, struct gv_bench_work *w, int set, struct gv_err *err);
    void *vendor;
};

/* A GEMM's operand sets: C[m][n] = A[m][k] . W[n][k]^T for each set. */
struct gv_bench_gemm {
    long long m, n, k;
    int nsets;
    enum gv_dtype in_store, out_store;
    gv_dptr a[GV_BENCH_MAX_SETS], w[GV_BENCH_MAX_SETS], c[GV_BENCH_MAX_SETS];
    unsigned long long seed_a, seed_w;
};

/* The buffers of a memory benchmark (STREAM, device, host and peer copies). */
struct gv_bench_mem {
    enum gv_bw_kind kind;
    enum gv_bw_stream stream;
    size_t bytes;
    gv_dptr x, y, z, out;
    float *host;
    unsigned grid; /* the read kernel's blocks of 256 */
};

/* One prepared piece of work: the part every GPU backend has (a backend's
 * struct gv_bw starts with it). */
struct gv_bench_work {
    struct gv_bw_spec s;
    double enq_per_iter;     /* host seconds to enqueue one repetition (measured) */
    int gated;               /* 1: the last sample's enqueueing fitted in its gate */
    struct gv_bench_gemm gm; /* GEMM operand sets */
    gv_dptr x, y, z, out;    /* memory, copies */
    void *host;
    int host_pinned;
    unsigned grid;           /* one wave: 8 blocks of 256 per SM (read, fills) */
    unsigned vgrid;          /* a thread per 16-byte vector (copy, scale, add, triad) */
    int held_src, held_dst;  /* peers: the devices held (gv_gpu_timing.peer_hold) */
    void *pstream, *pe0, *pe1;
};

/* Checks that ops has timing primitives, creates the gate's events and word on
 * the device (d->ops, ctx, grid, spin_unit_s, gemm_once and vendor set by the
 * caller). gv_bench_gpu_stop lets them go. */
int gv_bench_gpu_start(struct gv_bench_gpu *d, struct gv_err *err);
void gv_bench_gpu_stop(struct gv_bench_gpu *d);
/* Sets up w for spec s (the caller has zeroed it). */
void gv_bench_work_init(struct gv_bench_work *w, const struct gv_bw_spec *s);
/* The memory, copy, launch and peer benchmarks (any kind but GV_BW_GEMM):
 * buffers, patterns, events; impl names the calls. */
int gv_bench_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, char *impl, size_t implsz,
                     struct gv_err *err);
/* Allocates and fills a GEMM's operand sets (w->gm's m, n, k, stores set by
 * the caller) within the device's free memory. */
int gv_bench_gemm_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, struct gv_err *err);
/* Frees what gv_bench_prepare / gv_bench_gemm_prepare made (not w itself). */
void gv_bench_work_release(struct gv_bench_gpu *d, struct gv_bench_work *w);
/* bench_dev.h's time(): the host clock for pageable copies and launches
 * timed on the host, else device events behind the gate. */
int gv_bench_time(struct gv_bench_gpu *d, struct gv_bench_work *w, int iters, double *sec,
                  struct gv_err *err);
/* Device events behind the gate (gv_bench_gated_time) for w. */
int gv_bench_time_device(struct gv_bench_gpu *d, struct gv_bench_work *w, int iters, double *sec,
                         struct gv_err *err);
/* bench_dev.h's check(); tol: a GEMM's (gv_bench_gemm_check). */
int gv_bench_check(struct gv_bench_gpu *d, struct gv_bench_work *w, double tol, int *ok,
                   char *what, size_t whatsz, struct gv_err *err);

/* bench_dev.h's calls that are the same for every GPU backend, on a
 * backend's struct gv_bdev that starts with its struct gv_bench_gpu and a
 * struct gv_bw that starts with its struct gv_bench_work. */
int gv_bench_gpu_time(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec,
                      struct gv_err *err);
int gv_bench_gpu_count(struct gv_bdev *b);
int gv_bench_gpu_peer_access(struct gv_bdev *b, int src, int dst, char *why, size_t whysz);
int gv_bench_gpu_pci_address(struct gv_bdev *b, int i, char *buf, size_t bufsz);

/* Host seconds on CLOCK_MONOTONIC. */
double gv_bench_now(void);

/* How many operand sets of set_bytes each rotate through at least rotate
 * bytes within half of free_bytes (1 to GV_BENCH_MAX_SETS); 0 when even one
 * set does not fit. */
int gv_bench_gemm_sets(size_t set_bytes, size_t free_bytes, double rotate);
/* Allocates the operand sets of g (m, n, k, in_store and out_store set by the
 * caller; nsets and the seeds, from dt, set here) rotating through at least
 * rotate bytes within half of free_bytes, fills A and W with gv_bench_fill and
 * C with 0xFF bytes (NaN: a product never written cannot pass the check)
 * through memset_ff when given. GV_E_UNSUPPORTED when one set does not fit. */
int gv_bench_gemm_alloc(const struct gv_bench_gpu *d, struct gv_bench_gemm *g, enum gv_dtype dt,
                        size_t free_bytes, double rotate,
                        int (*memset_ff)(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err),
                        struct gv_err *err);
void gv_bench_gemm_free(const struct gv_bench_gpu *d, struct gv_bench_gemm *g);
/* Every set's last product on sampled elements against an fp64 product of the
 * same operands; tol: allowed |C - ref| / sum|a*w|. */
int gv_bench_gemm_check(const struct gv_bench_gpu *d, const struct gv_bench_gemm *g, double tol,
                        int *ok, char *what, size_t whatsz, struct gv_err *err);

/* Fills n floats at p with base + (i & 0xFFFFF) (gv_bench_iota). */
int gv_bench_iota(const struct gv_bench_gpu *d, gv_dptr p, long long n, float base,
                  struct gv_err *err);
/* The host buffer's pattern for H2D (5 + (i & 0xFFFFF)). */
void gv_bench_host_pattern(float *host, size_t bytes);
/* The result of a memory benchmark element by element on a spread sample
 * (the read kernel's sums on three threads); GV_BW_PEER checks y as a copy. */
int gv_bench_mem_check(const struct gv_bench_gpu *d, const struct gv_bench_mem *m, int *ok,
                       char *what, size_t whatsz, struct gv_err *err);

/* Test-only: GPUVET_TEST_BENCH_CORRUPT=1 spoils the last element of the
 * result before the check (every check samples it), so a wrong result must
 * fail. g or m may be NULL. */
int gv_bench_test_corrupt(const struct gv_bench_gpu *d, const struct gv_bench_gemm *g,
                          const struct gv_bench_mem *m, struct gv_err *err);

/* Device-timed work behind the gate (bench_gpu.c describes it), through the
 * backend's calls on ctx: spin holds the stream for about `seconds` (NULL: no
 * gate, as for peer copies on their own stream), mark records the start (end
 * 0) or end event, enqueue issues repetition i, wait waits for the stream and
 * elapsed reads the events. Retried with a longer gate when the host could not
 * enqueue everything before the gate opened; *enq_per_iter (host seconds per
 * repetition, the gate's estimate) is updated and *gated says whether the last
 * sample's enqueueing fitted in its gate. */
struct gv_bench_gate {
    void *ctx;
    int (*spin)(void *ctx, double seconds, struct gv_err *err);
    int (*mark)(void *ctx, int end, struct gv_err *err);
    int (*enqueue)(void *ctx, int i, struct gv_err *err);
    int (*wait)(void *ctx, struct gv_err *err);
    int (*elapsed)(void *ctx, double *sec, struct gv_err *err);
};
int gv_bench_gated_time(const struct gv_bench_gate *g, int iters, double *enq_per_iter,
                        int *gated, double *sec, struct gv_err *err);

/* The Lt library's algorithm trial (cuda_bench.c describes it): times each of
 * the plan's algorithms ALGO_TRIAL_ROUNDS times, round-robin, keeps each one's
 * best seconds per product in trial[] (0: it failed) and sets p->pick to the
 * fastest. time_fn runs the plan's p->pick iters times; broken says whether a
 * failure left the device unusable (then the trial stops). */
int gv_bench_pick_algo(struct gv_lt_plan *p, double trial[GV_LT_PLAN_ALGOS], const char *lib,
                       int (*time_fn)(void *ctx, int iters, double *sec, struct gv_err *err),
                       int (*broken)(void *ctx), void *ctx, struct gv_err *err);
/* {"algorithm": {heuristic_rank, tried, trial_tflops}} of a trial; NULL when none ran. */
json_t *gv_bench_algo_facts(const struct gv_bw_spec *s, const struct gv_lt_plan *p,
                            const double trial[GV_LT_PLAN_ALGOS]);

#endif
