/* The device side of gpuvet bench: timed work a backend prepares, runs and
 * checks. The method (warm-up, samples, statistics, verdicts) lives in
 * src/bench; a backend only says how long `iters` repetitions of one piece of
 * work took and whether its result is right. Implementations: CPU
 * (src/dev/cpu/cpu_bench.c: OpenBLAS, plain loops, the host clock), CUDA
 * (src/dev/cuda/cuda_bench.c: cuBLAS/cuBLASLt) and HIP (src/dev/hip/hip_bench.c:
 * rocBLAS/hipBLASLt), which share gpuvet's kernels, the timing loops (device
 * events behind a spin kernel) and the checks in src/dev/bench_gpu.c, over each
 * runtime's timing primitives (gpu.h). Nothing here prints. */
#ifndef GV_DEV_BENCH_DEV_H
#define GV_DEV_BENCH_DEV_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "num/types.h"

enum gv_bw_kind {
    GV_BW_GEMM,     /* C[m][n] = A[m][k] . W[n][k]^T (PyTorch's linear layout) */
    GV_BW_STREAM,   /* one STREAM kernel over three arrays of `bytes` each */
    GV_BW_D2D,      /* the runtime's device-to-device copy of `bytes` */
    GV_BW_H2D,      /* host to device, pinned or pageable */
    GV_BW_D2H,      /* device to host */
    GV_BW_LAUNCH,   /* an empty kernel */
    GV_BW_PEER,     /* device `peer_src` to device `peer_dst` */
};

enum gv_bw_stream { GV_ST_COPY, GV_ST_SCALE, GV_ST_ADD, GV_ST_TRIAD, GV_ST_READ };

/* How a launch is timed: back to back on the device (events, gated), one
 * launch and its completion on the host clock, or the host's cost of issuing. */
enum gv_bw_launch { GV_LAUNCH_BACK_TO_BACK, GV_LAUNCH_SYNC, GV_LAUNCH_ENQUEUE };

struct gv_bw_spec {
    enum gv_bw_kind kind;
    /* GEMM: route "cublas", "cublaslt", "rocblas", "hipblaslt", "openblas"; dtype of A
     * and W (GV_TF32:
     * fp32 storage, TF32 compute); C is in the input format (bf16 for fp8,
     * f32 for tf32), as PyTorch returns it */
    const char *route;
    enum gv_dtype dtype;
    long long m, n, k;
    double rotate_bytes; /* cycle through operand copies of at least this many bytes (0: one set) */
    enum gv_bw_stream stream;
    size_t bytes;
    int pinned;
    enum gv_bw_launch launch;
    int peer_src, peer_dst;
};

struct gv_bdev; /* a device opened for benchmarks (backend-private) */
struct gv_bw;   /* one prepared piece of work (backend-private) */

struct gv_bench_backend {
    const char *name; /* "cpu", "cuda", "hip", "torch" */
    /* spec: what follows "name:" in --device ("0"). */
    int (*open)(const char *spec, struct gv_bdev **d, struct gv_err *err);
    void (*close)(struct gv_bdev *d);
    /* The device, its libraries and the timer: as the numerics backends describe. */
    json_t *(*describe)(struct gv_bdev *d);
    /* Clocks, power, temperature, throttle reasons now ({} when not readable). */
    json_t *(*conditions)(struct gv_bdev *d);
    /* GV_E_UNSUPPORTED with the reason when the device or library cannot do it;
     * impl names what will run ("cublasLtMatmul COMPUTE_32F bf16 ..."). */
    int (*prepare)(struct gv_bdev *d, const struct gv_bw_spec *s, struct gv_bw **w, char *impl,
                   size_t implsz, struct gv_err *err);
    /* Runs the work iters times, back to back; *seconds: the time they took by
     * this backend's clock (*clock names it). A fault or a hang (beyond the case
     * timeout) is GV_E_DEVICE / GV_E_TIMEOUT. */
    int (*time)(struct gv_bdev *d, struct gv_bw *w, int iters, double *seconds, struct gv_err *err);
    /* After a time(): checks the results it left (every operand set's last
     * product on sampled elements; copies element by element on a sample).
     * *ok: 1 right, 0 wrong; what: what was compared, and the worst error. */
    int (*check)(struct gv_bdev *d, struct gv_bw *w, int *ok, char *what, size_t whatsz,
                 struct gv_err *err);
    void (*release)(struct gv_bdev *d, struct gv_bw *w);
    /* Number of devices of this kind visible (for the pair benchmarks). */
    int (*count)(struct gv_bdev *d);
    /* Whether src can access dst's memory directly: 1, 0, or -1 unknown; why. */
    int (*peer_access)(struct gv_bdev *d, int src, int dst, char *why, size_t whysz);
    /* PCI address of device i ("0000:17:00.0", lower case) into buf; -1 when unknown. */
    int (*pci_address)(struct gv_bdev *d, int i, char *buf, size_t bufsz);
    /* May be NULL, or return NULL: what prepare chose and why (a GEMM's algorithm
     * trial), as an object merged into the result's params. */
    json_t *(*facts)(struct gv_bdev *d, struct gv_bw *w);
};

extern const struct gv_bench_backend gv_bench_cpu;
extern const struct gv_bench_backend gv_bench_cuda;
extern const struct gv_bench_backend gv_bench_hip;
extern const struct gv_bench_backend gv_bench_torch; /* GEMMs through the user's PyTorch */

/* The element bits the GEMM operands hold: the same on the host and in the
 * fill kernel (src/dev/kernels/bench.cu), so any product can be recomputed. */
unsigned long long gv_bench_hash(unsigned long long seed, unsigned long long i);
/* Element i of an operand of dtype (storage format) filled with seed, as a double. */
double gv_bench_value(enum gv_dtype storage, unsigned long long seed, unsigned long long i);
/* The storage format's (width in bytes, mantissa bits, exponent bits). */
void gv_bench_format(enum gv_dtype storage, int *width, int *man, int *ebits);

#endif
