/* The PyTorch device (--device torch:cuda:N, torch:cpu): the suite computed
 * by the user's own PyTorch, in the interpreter they choose, judged in C.
 *
 * A worker process runs the user's Python with gpuvet's worker script
 * (python/gpuvet_torch_worker.py, embedded in the binary and sent over the
 * socket, so nothing is written into the user's environment). One worker
 * serves the whole run; a crash, a hang past the case timeout, a device error
 * or a dead interpreter fails only the case it happened in, and the next case
 * starts a fresh worker. docs/torch.md describes the protocol.
 *
 * The interpreter: $GPUVET_PYTHON (a path, or a name looked up in PATH;
 * default python3); with $GPUVET_PYTHON_ROOT set, a path inside that root
 * filesystem (a chroot or an unpacked container image), which the worker
 * then runs in as its / (a private mount namespace with the host's /proc,
 * /sys and /dev, so the GPU is reachable; needs root or unprivileged user
 * namespaces). `gpuvet check --python/--python-root` set them. */
#ifndef GV_DEV_TORCH_H
#define GV_DEV_TORCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "dev/backend.h"
#include "dev/torch/torch_reply.h"

extern const struct gv_backend gv_backend_torch;

/* Requests beyond the suite (capture and replay, src/capture): one request to
 * the device's worker (started again when it is gone), and its replies one at
 * a time; a payload of any size up to max bytes is malloc'ed into *payload.
 * A worker that dies or stops answering within timeout_ms is killed
 * (GV_E_DEVICE / GV_E_TIMEOUT) and the next request starts a new one. */
int gv_torch_request(struct gv_device *dev, json_t *req, const struct gv_torch_part *parts,
                     int nparts, struct gv_err *err);
int gv_torch_reply_next(struct gv_device *dev, int timeout_ms, size_t max, void **payload,
                        size_t *len, struct gv_torch_reply *r, struct gv_err *err);

/* bisect's float64 referee (docs/capture.md, "The referee"): a worker of b's
 * interpreter (in b's root), started clean (gv_torch_proc_start_clean), on the
 * CPU with GV_TORCH_REFEREE_THREADS threads and flush-denormal off, trusted
 * only when its canary (float32 subnormals and subnormal products summed in
 * float64 by a multithreaded ATen op) gives the sums computed here exactly.
 * *ref is a torch device for gv_torch_request/gv_torch_reply_next (a worker
 * that dies is started again, canary and all), or NULL when it cannot be
 * trusted. *facts (owned): {trusted, why, interpreter, start, threads,
 * dropped_variables, canary, torch}. Fails only when out of memory. */
#define GV_TORCH_REFEREE_THREADS 4
int gv_torch_referee_open(const struct gv_device *b, struct gv_device **ref, json_t **facts,
                          struct gv_err *err);
void gv_torch_referee_close(struct gv_device *ref);

/* "libcublas.so.13.1.0.3" -> "13.1.0.3", "libtorch_cpu.so.2.6" -> "2.6"; "" when the
 * file name carries no version. */
void gv_torch_file_version(const char *filename, char *out, size_t n);

/* The libraries worth recording from the files a worker mapped (its
 * /proc/self/maps): GPU libraries gpuvet knows and PyTorch's own; an array
 * of {name, path, version}. */
json_t *gv_torch_libraries(const json_t *mapped_files);

#endif
