/* Collective benchmarks through NCCL (RCCL on HIP; loaded at run time like the
 * other vendor libraries): all-reduce (sum), all-gather, reduce-scatter,
 * broadcast (root 0) and all-to-all over a size sweep, one process driving
 * every GPU (ncclCommInitAll), each timed iteration checked for the exact
 * answer. This is the method; the device half is src/dev/coll.h's.
 *
 * Sizes and bandwidths are counted as nccl-tests counts them (NVIDIA/nccl-tests
 * src/<op>.cu GetCollByteCount and GetBw, doc/PERFORMANCE.md):
 *   count   the count argument of the call: size/4 for all-reduce and
 *           broadcast; for all-gather, reduce-scatter and all-to-all the
 *           per-rank part, (size/4/n) rounded down to a multiple of 4 elements
 *           (16 bytes);
 *   bytes   max(send, receive) bytes of one rank: count*4 for all-reduce and
 *           broadcast, count*4*n for the others (nccl-tests' "size" column);
 *   algbw   bytes / time, GB/s with GB = 1e9;
 *   busbw   algbw * 2(n-1)/n (all-reduce), (n-1)/n (all-gather,
 *           reduce-scatter, all-to-all), 1 (broadcast). */
#ifndef GV_BENCH_COLL_H
#define GV_BENCH_COLL_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "dev/coll.h" /* enum gv_coll_op, struct gv_coll_size */

struct gv_coll_opts {
    int ndev;            /* GPUs to use, the first ndev visible ones; 0: all */
    size_t min_bytes;    /* sweep from (0: 8) */
    size_t max_bytes;    /* to (0: 128 MiB), inclusive */
    int factor;          /* each size is the last one times factor (0: 2) */
    int iters;           /* timed iterations per size (0: 20) */
    int warmup;          /* untimed iterations per size first (0: 5; <0: none) */
    const char *only;    /* fnmatch(3) pattern on the result id; NULL: all */
    unsigned ops;        /* bit (1u << enum gv_coll_op) per op; 0: all */
    const char *kind;    /* device kind: "cuda" or NULL (NCCL), "hip" (RCCL) */
};

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all" */
const char *gv_coll_op_name(enum gv_coll_op op);
/* -1 when name is none of them */
int gv_coll_op_from_name(const char *name);

/* nccl-tests' counting for a nominal size of `size` bytes of elements of `elt`
 * bytes over nranks ranks (see above). count may be 0 (too small to split). */
void gv_coll_size(enum gv_coll_op op, size_t size, size_t elt, int nranks, struct gv_coll_size *s);
double gv_coll_busbw_factor(enum gv_coll_op op, int nranks);
/* algbw and busbw in GB/s (1e9 bytes) of one call of `bytes` (gv_coll_size's
 * bytes) taking sec seconds. */
void gv_coll_bw(enum gv_coll_op op, size_t bytes, int nranks, double sec, double *algbw,
                double *busbw);
/* The sweep min, min*factor, ... <= max into out (at most cap entries);
 * returns how many sizes there are (may exceed cap), 0 for a bad range. */
size_t gv_coll_sweep(size_t min, size_t max, int factor, size_t *out, size_t cap);

/* Runs the sweep; each result is appended to `results` as an object of the
 * bench schema (id "coll.<op>.f32.<size>B", group "collective", unit "GB/s",
 * value = median busbw, samples, spread, params, check, impl). *info gets
 * {library, version, nranks, devices, env (every NCCL_* / RCCL_* variable in
 * force), nvls_disabled_by_gpuvet, method}; on failure it still describes what
 * was found when it can (else NULL). NCCL_NVLS_ENABLE=0 is set in the process
 * environment when unset (NVLink multicast stays off).
 * Errors: GV_E_LIB (no NCCL / RCCL or NVRTC: names what was tried), GV_E_NOTFOUND (no
 * NVIDIA GPU or driver), GV_E_USAGE (bad options), GV_E_TIMEOUT (a collective
 * still running after GPUVET_CASE_TIMEOUT: the communicators are aborted),
 * GV_E_DEVICE (a CUDA or NCCL error: names the call and NCCL's message),
 * GV_E_UNSUPPORTED (kind "hip" with RCCL present: HIP ranks not written yet).
 * Results measured before an error stay in `results`.
 * Test hook: GPUVET_TEST_COLL_CORRUPT=1 changes one output element after one
 * timed collective of every result (each must then fail its check);
 * GPUVET_TEST_COLL_HANG=1 (2 or more GPUs) enqueues one more collective on rank
 * 0 alone, which waits for its peers until the timeout aborts it. */
int gv_coll_bench(const struct gv_coll_opts *o, json_t *results, json_t **info,
                  struct gv_err *err);

#endif
