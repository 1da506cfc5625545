/* The device half of gpuvet's collective benchmarks: one process drives every
 * GPU of a host (the driver's primary contexts, a non-blocking stream per GPU,
 * ncclCommInitAll), issues NCCL's or RCCL's collectives (one group per call,
 * all ranks), times them with events behind a gate kernel and checks every
 * timed iteration's output on the device (src/dev/kernels/coll.cu). What to
 * run (sizes, sweeps) and what a result means (bus bandwidth, verdicts) are
 * the method's, in src/bench/coll.c: the split nccl-tests itself makes between
 * its common harness and each op's counting. Nothing here prints. */
#ifndef GV_DEV_COLL_H
#define GV_DEV_COLL_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

#define GV_COLL_MAXDEV 64

enum gv_coll_op {
    GV_COLL_ALL_REDUCE = 0, /* the numbers match src/dev/kernels/coll.cu */
    GV_COLL_ALL_GATHER,
    GV_COLL_REDUCE_SCATTER,
    GV_COLL_BROADCAST,
    GV_COLL_ALL_TO_ALL,
    GV_COLL_NOPS
};

/* One call's element counts (src/bench/coll.c's gv_coll_size counts them as
 * nccl-tests does). */
struct gv_coll_size {
    size_t count;      /* the call's count argument */
    size_t send_count; /* elements each rank sends from */
    size_t recv_count; /* elements each rank receives into */
    size_t bytes;      /* max(send, recv) * elt */
};

struct gv_coll_dev; /* the ranks, their library and driver */

/* Opens the collective library for the device kind ("cuda" or NULL: NCCL,
 * libnccl.so.2; "hip": RCCL, librccl.so.1), then the driver; ranks: the first
 * ndev visible GPUs (0: all, at most GV_COLL_MAXDEV); iters: timed iterations
 * per call of gv_coll_dev_timed; timeout: seconds a wait may last. *out is set
 * even when opening fails (NULL only when out of memory), so that
 * gv_coll_dev_describe can say what was found; close it with gv_coll_dev_close.
 * GV_E_LIB (no NCCL / RCCL or NVRTC: names what was tried), GV_E_NOTFOUND (no
 * GPU or driver), GV_E_USAGE (more GPUs asked for than visible),
 * GV_E_UNSUPPORTED (RCCL found: gpuvet's HIP ranks are not written yet). */
int gv_coll_dev_open(const char *kind, int ndev, int iters, double timeout,
                     struct gv_coll_dev **out, struct gv_err *err);
void gv_coll_dev_close(struct gv_coll_dev *d);
int gv_coll_dev_nranks(const struct gv_coll_dev *d);
/* "NCCL" or "RCCL", and the library's version ("2.28.9") */
const char *gv_coll_dev_library(const struct gv_coll_dev *d);
const char *gv_coll_dev_version(const struct gv_coll_dev *d);
/* The all-to-all's call: "ncclAlltoAll", "ncclAllToAll" or "ncclSend/ncclRecv". */
const char *gv_coll_dev_alltoall_call(const struct gv_coll_dev *d);
/* 1 when the timed iterations wait behind a gate (host memory every GPU maps). */
int gv_coll_dev_gated(const struct gv_coll_dev *d);

/* Per rank: contexts, streams, the check kernels, send and receive buffers of
 * bytes each (send filled with the rank's pattern), events; the gate; then the
 * communicators. NCCL_NVLS_ENABLE=0 is set when unset (NVLink multicast off). */
int gv_coll_dev_setup(struct gv_coll_dev *d, size_t bytes, struct gv_err *err);
/* Enqueues op on the first nranks ranks (one group) at byte offset shift; the
 * ranks' count is gv_coll_dev_nranks (fewer only for the test hook's hang). */
int gv_coll_dev_enqueue(struct gv_coll_dev *d, enum gv_coll_op op, const struct gv_coll_size *s,
                        size_t shift, int nranks, struct gv_err *err);
/* Waits for every stream under the timeout, watching the library's
 * asynchronous errors; a hang or an error aborts the communicators. */
int gv_coll_dev_wait(struct gv_coll_dev *d, const char *what, struct gv_err *err);
/* Fills the first region bytes of every output with NaN and zeroes the
 * mismatch counters. */
int gv_coll_dev_poison(struct gv_coll_dev *d, size_t region, struct gv_err *err);
/* Closes the gate (a gate kernel on every stream); gv_coll_dev_gate_open lets
 * the queued work run. Without a gate, both do nothing. */
int gv_coll_dev_gate_close(struct gv_coll_dev *d, struct gv_err *err);
void gv_coll_dev_gate_open(struct gv_coll_dev *d);
/* The timed iterations, each between two events on every rank and checked on
 * the device (see coll.c); iteration i works at offset (i mod steps) * bytes.
 * corrupt (test hook): one output element is spoiled after the middle one. */
int gv_coll_dev_timed(struct gv_coll_dev *d, enum gv_coll_op op, const struct gv_coll_size *s,
                      size_t steps, int corrupt, struct gv_err *err);

/* What the timed iterations measured (arrays of iters, zeroed by the caller). */
struct gv_coll_times {
    double batch;             /* first start to last end / iters, the slowest rank's */
    double *sec;              /* per iteration, the slowest rank's */
    unsigned long long *miss; /* per iteration, wrong elements summed over ranks */
};
int gv_coll_dev_collect(struct gv_coll_dev *d, struct gv_coll_times *t, struct gv_err *err);
/* After an error with work perhaps queued on some ranks only. */
void gv_coll_dev_abort(struct gv_coll_dev *d);

/* {library, version, nranks, devices, env (every NCCL_* / RCCL_* variable in
 * force), nvls_disabled_by_gpuvet, driver, kernels, alltoall_call}: what was
 * found, also after a failed open. */
json_t *gv_coll_dev_describe(const struct gv_coll_dev *d, int nvls_set);

#endif
