/* What the CUDA and HIP backends share: run-time compilation of the embedded
 * kernels, and the plan that turns one case into uploads, conversions, a
 * vendor-library call or kernel launches, and a download. Each backend
 * supplies the few device primitives (struct gv_gpu_ops). */
#ifndef GV_DEV_GPU_H
#define GV_DEV_GPU_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "dev/backend.h"
#include "dev/vendor.h"
#include "num/types.h"

typedef unsigned long long gv_dptr;

/* Every kernel entry point the embedded sources define (extern "C" names). */
extern const char *const gv_kernel_entries[];
extern const int gv_kernel_entry_count;

/* All embedded kernel files joined into one translation unit, each preceded
 * by a #line naming its file. Caller frees. NULL when out of memory. */
char *gv_kernels_joined(void);

/* The result of one run-time compilation. */
struct gv_rtc_out {
    char *code;         /* PTX text, CUBIN or AMD code object; caller frees */
    size_t size;
    int is_ptx;         /* NVRTC: 1 when code is PTX text */
    char *log;          /* compiler log (may be empty); caller frees */
    char compiler[64];  /* "nvrtc 13.0", "hiprtc 6.4" */
    char options[256];  /* the options passed, space-separated */
};
void gv_rtc_out_free(struct gv_rtc_out *o);
/* {compiler, options, [output], bytes, log} for describe(); output may be NULL. */
json_t *gv_rtc_out_describe(const struct gv_rtc_out *o, const char *output);

/* arch: "sm_90" (CUBIN when the loaded NVRTC can make it, else PTX) or
 * "compute_90" (PTX). On a compile error the log is kept in out->log and the
 * message carries its first lines. */
int gv_nvrtc_compile(const struct gv_api_nvrtc *api, const char *arch, struct gv_rtc_out *out,
                     struct gv_err *err);
/* arch: "gfx90a", "gfx942:sramecc+:xnack-" ... -> an AMD code object. */
int gv_hiprtc_compile(const struct gv_api_hiprtc *api, const char *arch, struct gv_rtc_out *out,
                      struct gv_err *err);

struct gv_gpu_timing;

/* Device primitives a backend supplies to gv_gpu_run(). Every call returns 0
 * or a status with err naming the vendor call. */
struct gv_gpu_ops {
    int (*alloc)(void *ctx, size_t bytes, gv_dptr *p, struct gv_err *err);
    void (*release)(void *ctx, gv_dptr p);
    int (*upload)(void *ctx, gv_dptr dst, const void *src, size_t bytes, struct gv_err *err);
    int (*download)(void *ctx, void *dst, gv_dptr src, size_t bytes, struct gv_err *err);
    /* 1-D launch of a kernel by name on the backend's stream (asynchronous). */
    int (*launch)(void *ctx, const char *kernel, unsigned grid, unsigned block, unsigned shmem,
                  void **args, struct gv_err *err);
    /* Waits for the stream under the case timeout: GV_E_TIMEOUT, GV_E_DEVICE. */
    int (*finish)(void *ctx, struct gv_err *err);
    /* Vendor-BLAS GEMM of the case on raw inputs a, b (c->in_dtype) into c_out
     * of dtype cdt (chosen by gv_gpu_run: F16 for fp16 accumulation, F64 for
     * fp64, else F32). GV_E_UNSUPPORTED: use the fallback kernel. */
    int (*gemm)(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr c_out,
                enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err);
    /* Vendor convolution on fp32 buffers; NULL or GV_E_UNSUPPORTED: the kernel. */
    int (*conv)(void *ctx, const struct gv_case *c, gv_dptr x, gv_dptr w, gv_dptr y, char *impl,
                size_t implsz, struct gv_err *err);
    unsigned max_shmem; /* bytes of dynamic shared memory a block may use */
    /* Optional (NULL: not offered). Vendor convolution on the inputs as stored
     * (c->in_dtype) into y, which holds the output in c->in_dtype; tried before
     * the fp32 path above. GV_E_UNSUPPORTED: err says why, and the case goes on
     * through conv / the kernel with that reason in its impl; any other status
     * fails the case. */
    int (*conv_raw)(void *ctx, const struct gv_case *c, gv_dptr x, gv_dptr w, gv_dptr y,
                    char *impl, size_t implsz, struct gv_err *err);
    /* Optional. fp8 GEMM (c->in_dtype e4m3/e5m2) with B given transposed (bt:
     * n x k per batch) and k a multiple of 16, gv_gpu_run having packed the
     * operands so (zeros pad k): the layout the vendors' fp8 matmuls take. Into
     * c_out of dtype cdt (F32). GV_E_UNSUPPORTED: the fallback kernel, err's
     * reason in its impl. */
    int (*gemm_tn)(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr bt, gv_dptr c_out,
                   enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err);
    /* Optional: the timing primitives gpuvet bench's loops use (bench_gpu.c). */
    const struct gv_gpu_timing *timing;
};

/* The copies a benchmark times. */
enum gv_copy { GV_COPY_H2D, GV_COPY_D2H, GV_COPY_D2D };

/* Timing primitives, thin wrappers over the runtime's calls (cuda.c, hip.c),
 * on the same ctx as struct gv_gpu_ops. Events and streams are the runtime's
 * handles; stream NULL is the backend's own stream; device -1 is the
 * backend's own device. Every call returns 0 or a status with err naming the
 * vendor call. */
struct gv_gpu_timing {
    const char *prefix;   /* "cu", "hip": the calls' prefix, for impl texts */
    const char *pinned;   /* "cuMemHostAlloc": the pinned host allocator's name */
    const char *launcher; /* "cuLaunchKernel of an empty NVRTC kernel" */
    const char *unusable; /* the message once the device faulted */
    /* 1 after a sticky fault or a timeout: nothing more may run */
    int (*broken)(void *ctx);
    /* 0 when gpuvet's module has the kernel (loading it), else why not */
    int (*kernel)(void *ctx, const char *name, struct gv_err *err);
    int (*event_create)(void *ctx, void **ev, struct gv_err *err);
    void (*event_destroy)(void *ctx, void *ev);
    int (*event_record)(void *ctx, void *ev, void *stream, struct gv_err *err);
    /* seconds between two recorded events */
    int (*event_elapsed)(void *ctx, void *e0, void *e1, double *sec, struct gv_err *err);
    int (*stream_create)(void *ctx, void **stream, struct gv_err *err);
    void (*stream_destroy)(void *ctx, void *stream);
    int (*stream_sync)(void *ctx, void *stream, struct gv_err *err);
    /* One copy of bytes: H2D dst <- host, D2H host <- src, D2D dst <- src.
     * async: on the own stream; else blocking (the host clock's copies; CUDA's
     * H2D also waits for the context). */
    int (*copy)(void *ctx, enum gv_copy kind, int async, gv_dptr dst, gv_dptr src, void *host,
                size_t bytes, struct gv_err *err);
    int (*host_alloc)(void *ctx, size_t bytes, void **p, struct gv_err *err); /* pinned */
    void (*host_free)(void *ctx, void *p);
    int (*mem_free)(void *ctx, size_t *free_bytes, struct gv_err *err);
    /* Fills bytes with 0xFF on the own stream; a no-op where the runtime lacks it. */
    int (*memset_ff)(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err);
    int (*device_count)(void *ctx);
    /* 1, 0, or -1 unknown; why says which call answered */
    int (*peer_access)(void *ctx, int src, int dst, char *why, size_t whysz);
    /* PCI address of device dev as sysfs spells it; -1 when unknown */
    int (*pci_address)(void *ctx, int dev, char *buf, size_t bufsz);
    /* Holds device dev for use_device (GV_E_UNSUPPORTED when the runtime has
     * no peer copies); each successful hold is let go with peer_release. */
    int (*peer_hold)(void *ctx, int dev, struct gv_err *err);
    void (*peer_release)(void *ctx, int dev);
    /* Makes dev (held, or -1) the device that alloc, events and streams use. */
    int (*use_device)(void *ctx, int dev, struct gv_err *err);
    /* From the current device, direct access to dst's memory. */
    int (*peer_enable)(void *ctx, int dst, struct gv_err *err);
    int (*peer_copy)(void *ctx, gv_dptr dst, int dst_dev, gv_dptr src, int src_dev, size_t bytes,
                     void *stream, struct gv_err *err);
};

/* The format a vendor GEMM writes for case c: F64 for fp64, F16 for fp16
 * accumulation, else F32 (converted to the output format afterwards). */
enum gv_dtype gv_gpu_gemm_out_dtype(const struct gv_case *c);

/* 0 when the plan can compute the case; GV_E_UNSUPPORTED and why otherwise.
 * blas: the backend has a vendor BLAS for GEMM. */
int gv_gpu_supports(const struct gv_gpu_ops *ops, int blas, const struct gv_case *c,
                    struct gv_err *why);
int gv_gpu_run(const struct gv_gpu_ops *ops, void *ctx, const struct gv_case *c,
               const struct gv_buffer *in, int nin, struct gv_buffer *out,
               struct gv_run_info *info, struct gv_err *err);

/* Test-only: GPUVET_TEST_FAULT=fault|spin makes gv_gpu_run launch the
 * faulting / spinning test kernel, and =oom ask the device for 1 PiB, for
 * cases whose id contains GPUVET_TEST_FAULT_CASE (default: every case). */
int gv_gpu_test_hook(const struct gv_gpu_ops *ops, void *ctx, const struct gv_case *c,
                     struct gv_err *err);

/* A runtime's PCI bus id ("00000000:17:00.0" from CUDA, "0000:c1:00.0" from
 * HIP) as sysfs spells it: a 4-digit domain, lower case. Inline: the numerics
 * backends are also built alone (tests/cli/hip_fixture.sh). */
static inline void gv_gpu_pci_address(const char *id, char *buf, size_t bufsz)
{
    const char *colon = strchr(id, ':');
    long dom = strtol(id, NULL, 16);
    snprintf(buf, bufsz, "%04lx%s", dom, colon ? colon : "");
    for (char *p = buf; *p; p++)
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
}

/* Case timeout in seconds: GPUVET_CASE_TIMEOUT, default 60. */
double gv_gpu_case_timeout(void);
double gv_now(void);

#endif
