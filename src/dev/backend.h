/* The device room's one interface. A backend computes a case on its device,
 * in the case's declared precision, from inputs the runner has already
 * generated and rounded to the input format; the runner judges the output
 * against an fp64 reference. Backends never print: they fill struct gv_err.
 *
 * Implementations: cpu (src/dev/cpu/cpu.c, reference precision plus emulated
 * behaviours), cuda (src/dev/cuda/), hip (src/dev/hip/), torch (src/dev/torch/);
 * each is one kind's record's numerics backend (kind.h). */
#ifndef GV_DEV_BACKEND_H
#define GV_DEV_BACKEND_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "num/types.h"

/* Per-run facts a backend reports for the result file. */
struct gv_run_info {
    double seconds;       /* device time of the operation, or wall time */
    char impl[512];       /* what computed it: "cublasGemmEx algo=-1", "cpu naive", "nvrtc:softmax_f32" */
};

struct gv_device; /* backend-private */

struct gv_backend {
    const char *name; /* "cpu", "cuda", "hip" */
    /* spec is what follows "name:" in --device, e.g. "0" or "0,emulate=tf32".
     * GV_E_LIB: vendor library missing; GV_E_NOTFOUND: no such device. */
    int (*open)(const char *spec, struct gv_device **dev, struct gv_err *err);
    void (*close)(struct gv_device *dev);
    /* Device and stack facts: name, arch, memory, driver/runtime versions,
     * every vendor library loaded with its path and version, options. */
    json_t *(*describe)(struct gv_device *dev);
    /* 0 when the case can run; otherwise GV_E_UNSUPPORTED and why. */
    int (*supports)(struct gv_device *dev, const struct gv_case *c, struct gv_err *why);
    /* in[0..nin): the op's inputs in the order the catalog documents
     * (GEMM: A, B; CONV2D: x, w; LAYERNORM: x, gamma, beta; RMSNORM: x, gamma;
     * SDPA: Q, K, V; others: x). out is allocated by the caller with
     * out->dtype == c->out_dtype and the right count. A device fault, a
     * timeout or an out-of-memory fails only this case (GV_E_DEVICE,
     * GV_E_TIMEOUT) and leaves the device usable for the next one. */
    int (*run)(struct gv_device *dev, const struct gv_case *c, const struct gv_buffer *in,
               int nin, struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err);
};

extern const struct gv_backend gv_backend_cpu;
/* CUDA and HIP behind their worker process (gpu_proxy.c) */
extern const struct gv_backend gv_backend_cuda, gv_backend_hip;
/* Opens a device from a --device value ("cpu", "cuda:0", "hip:0", "cpu:emulate=tf32"),
 * through the list of kinds (kind.h, src/dev/registry.c). NULL spec: the first
 * GPU kind that opens, else the CPU (note says which and why; note may be NULL).
 * An unknown kind is GV_E_USAGE with the list of kinds. */
int gv_device_open(const char *spec, const struct gv_backend **be, struct gv_device **dev,
                   char *note, size_t notesz, struct gv_err *err);

#endif
