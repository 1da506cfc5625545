/* GPU backends run in a worker process.
 *
 * After an illegal address (CUDA_ERROR_ILLEGAL_ADDRESS and the other 700-range
 * errors) the CUDA driver leaves the whole process unusable: "the process must
 * be terminated and relaunched" (CUDA runtime API reference, cudaError_t);
 * cuDevicePrimaryCtxReset does not clear it (measured on an H200, driver 580:
 * cuDevicePrimaryCtxRetain keeps returning 700). HIP behaves the same way. A
 * hung kernel cannot be stopped either. So gv_backend_cuda and gv_backend_hip
 * are proxies: the real backend (gv_backend_cuda_inproc, gv_backend_hip_inproc)
 * runs in a child process started from /proc/self/exe, spoken to over a
 * socket pair; a fault, a timeout or a crash fails that case, the child is
 * killed, and the next case starts a fresh one. */
#ifndef GV_DEV_WORKER_H
#define GV_DEV_WORKER_H

#include "dev/backend.h"

extern const struct gv_backend gv_backend_cuda_inproc;
extern const struct gv_backend gv_backend_hip_inproc;

struct gv_worker;

int gv_worker_open(const char *backend, const char *spec, struct gv_worker **w,
                   struct gv_err *err);
void gv_worker_close(struct gv_worker *w);
json_t *gv_worker_describe(struct gv_worker *w);
int gv_worker_supports(struct gv_worker *w, const struct gv_case *c, struct gv_err *why);
int gv_worker_run(struct gv_worker *w, const struct gv_case *c, const struct gv_buffer *in,
                  int nin, struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err);

#endif
