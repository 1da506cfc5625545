/* Collective benchmarks through NCCL (see coll.h). One process drives every
 * GPU: libcuda's primary contexts, one non-blocking stream per GPU,
 * ncclCommInitAll, gpuvet's helper kernels (src/dev/kernels/coll.cu) compiled
 * with NVRTC.
 *
 * Method. Every size of an op is first run `warmup` times untimed. Then, per
 * size: a gate kernel holds each stream; each timed iteration is a start event,
 * the collective on every rank (one NCCL group), an end event and the check
 * kernel, which compares the output with the exact answer and counts mismatches
 * per iteration; the output region starts as NaN, and the check writes NaN
 * again where a later iteration will write (so no iteration can pass on an
 * earlier one's answer); the host then opens the
 * gate, so the events time the GPUs and not the host's enqueueing. An
 * iteration's time is the slowest rank's event interval. As nccl-tests does,
 * iteration i works on the buffers at offset (i mod (buffer/size)) * size so
 * that small sizes do not run from the cache. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/globs.h"
#include "bench/coll.h"
#include "dev/gpu.h"
#include "dev/vendor.h"

extern char **environ;

#define MAXDEV 64
#define MAXITERS 10000
#define MAXSIZES 64
#define MAXARCH 4
#define BLOCK 256u

static const char *const op_names[GV_COLL_NOPS] = {"all_reduce", "all_gather", "reduce_scatter",
                                                   "broadcast", "all_to_all"};

const char *gv_coll_op_name(enum gv_coll_op op)
{
    return (unsigned)op < GV_COLL_NOPS ? op_names[op] : "?";
}

int gv_coll_op_from_name(const char *name)
{
    for (int i = 0; name && i < GV_COLL_NOPS; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

/* ---- nccl-tests' counting (pure) ---- */

void gv_coll_size(enum gv_coll_op op, size_t size, size_t elt, int nranks, struct gv_coll_size *s)
{
    size_t n = nranks > 0 ? (size_t)nranks : 1;
    size_t count = elt ? size / elt : 0;
    size_t align = elt && elt < 16 ? 16 / elt : 1; /* nccl-tests: & ~(16/eltSize - 1) */
    memset(s, 0, sizeof *s);
    switch (op) {
    case GV_COLL_ALL_REDUCE:
    case GV_COLL_BROADCAST:
        s->count = s->send_count = s->recv_count = count;
        break;
    case GV_COLL_ALL_GATHER:
        s->count = s->send_count = (count / n) & ~(align - 1);
        s->recv_count = s->count * n;
        break;
    case GV_COLL_REDUCE_SCATTER:
        s->count = s->recv_count = (count / n) & ~(align - 1);
        s->send_count = s->count * n;
        break;
    case GV_COLL_ALL_TO_ALL:
        s->count = (count / n) & ~(align - 1);
        s->send_count = s->recv_count = s->count * n;
        break;
    default:
        return;
    }
    size_t mx = s->send_count > s->recv_count ? s->send_count : s->recv_count;
    s->bytes = mx * elt;
}

double gv_coll_busbw_factor(enum gv_coll_op op, int nranks)
{
    double n = nranks > 0 ? nranks : 1;
    switch (op) {
    case GV_COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case GV_COLL_ALL_GATHER:
    case GV_COLL_REDUCE_SCATTER:
    case GV_COLL_ALL_TO_ALL:
        return (n - 1) / n;
    case GV_COLL_BROADCAST:
        return 1.0;
    default:
        return 0.0;
    }
}

void gv_coll_bw(enum gv_coll_op op, size_t bytes, int nranks, double sec, double *algbw,
                double *busbw)
{
    double a = sec > 0 ? (double)bytes / 1.0e9 / sec : 0.0;
    *algbw = a;
    *busbw = a * gv_coll_busbw_factor(op, nranks);
}

size_t gv_coll_sweep(size_t min, size_t max, int factor, size_t *out, size_t cap)
{
    if (min == 0 || max < min || factor < 2)
        return 0;
    size_t n = 0;
    for (size_t s = min; s <= max; s *= (size_t)factor) {
        if (n < cap)
            out[n] = s;
        n++;
        if (s > SIZE_MAX / (size_t)factor)
            break;
    }
    return n;
}

/* ---- the run ---- */

struct rank {
    CUdevice dev;
    CUcontext ctx;
    int retained;
    CUstream stream;
    CUmodule mod;
    CUfunction fill, check, poke, gate;
    CUdeviceptr send, recv, bad, flag;
    CUevent *ev; /* 2 per timed iteration */
    int nev;
    ncclComm_t comm;
    char name[256], bus[32], arch[16];
    int ccmaj, ccmin;
};

struct coll {
    struct gv_coll_opts o;
    struct gv_vlib culib, rtclib, nclib;
    struct gv_api_cuda cu;
    struct gv_api_nvrtc rtc;
    struct gv_api_nccl nc;
    int n;
    struct rank r[MAXDEV];
    struct gv_rtc_out code[MAXARCH];
    char code_arch[MAXARCH][16];
    int ncode;
    size_t alloc;            /* bytes of each rank's send and receive buffers */
    volatile unsigned *flag; /* the gate, host memory mapped into every GPU */
    double timeout;
    int comms_up, broken, corrupt, hang;
    char version[32];
    char nccl_err[1024]; /* why NCCL could not be opened */
    const char *alltoall_call;
};

static int cu_fail(struct coll *c, CUresult r, int rank, const char *call, struct gv_err *err)
{
    const char *name = NULL, *str = NULL;
    if (c->cu.cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (c->cu.cuGetErrorString(r, &str) != CUDA_SUCCESS)
        str = NULL;
    if (r >= 700 && r < 800) /* the context is unusable (see cuda.c) */
        c->broken = 1;
    return gv_err_set(err, GV_E_DEVICE, "cuda:%d %s: %s (%d)%s%s", rank, call,
                      name ? name : "CUDA error", (int)r, str ? ": " : "", str ? str : "");
}

#define CUC(c, rank, call, err)                                                              \
    do {                                                                                     \
        CUresult r_ = (c)->cu.call;                                                          \
        if (r_ != CUDA_SUCCESS)                                                              \
            return cu_fail((c), r_, (rank), #call, (err));                                   \
    } while (0)

static int nc_fail(struct coll *c, ncclResult_t r, const char *call, struct gv_err *err)
{
    const char *s = c->nc.ncclGetErrorString(r);
    const char *last = c->nc.ncclGetLastError ? c->nc.ncclGetLastError(NULL) : NULL;
    return gv_err_set(err, GV_E_DEVICE, "%s: %s (%d)%s%s", call, s ? s : "NCCL error", (int)r,
                      last && *last ? ": " : "", last && *last ? last : "");
}

#define NCC(c, call, err)                                                                    \
    do {                                                                                     \
        ncclResult_t r_ = (c)->nc.call;                                                      \
        if (r_ != ncclSuccess)                                                               \
            return nc_fail((c), r_, #call, (err));                                           \
    } while (0)

static int setcur(struct coll *c, int i, struct gv_err *err)
{
    CUC(c, i, cuCtxSetCurrent(c->r[i].ctx), err);
    return GV_OK;
}

static void nap(double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

static void abort_comms(struct coll *c)
{
    for (int i = 0; i < c->n; i++)
        if (c->r[i].comm) {
            c->nc.ncclCommAbort(c->r[i].comm);
            c->r[i].comm = NULL;
        }
    c->comms_up = 0;
    c->broken = 1;
}

/* Waits for every stream under the timeout, watching NCCL's asynchronous
 * errors; a hang or an NCCL error aborts the communicators. */
static int wait_all(struct coll *c, const char *what, struct gv_err *err)
{
    double t0 = gv_now(), wait = 20e-6;
    for (;;) {
        int busy = 0;
        for (int i = 0; i < c->n; i++) {
            CUresult r = c->cu.cuStreamQuery(c->r[i].stream);
            if (r == CUDA_ERROR_NOT_READY) {
                busy = 1;
            } else if (r != CUDA_SUCCESS) {
                cu_fail(c, r, i, "cuStreamQuery", err);
                abort_comms(c);
                return gv_err_prefix(err, "%s", what);
            }
        }
        for (int i = 0; i < c->n && c->comms_up; i++) {
            ncclResult_t ae = ncclSuccess;
            ncclResult_t r = c->nc.ncclCommGetAsyncError(c->r[i].comm, &ae);
            if (r == ncclSuccess && ae != ncclSuccess && ae != ncclInProgress) {
                nc_fail(c, ae, "ncclCommGetAsyncError", err);
                abort_comms(c);
                return gv_err_prefix(err, "%s: rank %d", what, i);
            }
        }
        if (!busy)
            return GV_OK;
        if (gv_now() - t0 > c->timeout) {
            abort_comms(c);
            return gv_err_set(err, GV_E_TIMEOUT,
                              "%s: still running after %.0f s (GPUVET_CASE_TIMEOUT); the NCCL "
                              "communicators were aborted (ncclCommAbort)", what, c->timeout);
        }
        nap(wait);
        if (wait < 1e-3)
            wait *= 2;
    }
}

/* ---- set-up ---- */

static int open_nccl(struct coll *c, struct gv_err *err)
{
    int rc = gv_vlib_open(GV_LIB_NCCL, &c->nclib, &c->nc, err);
    if (rc) {
        gv_err_prefix(err, "the collective benchmarks need NCCL (libnccl.so.2)");
        snprintf(c->nccl_err, sizeof c->nccl_err, "%s", err ? err->msg : "not found");
        return rc;
    }
    int v = 0;
    if (c->nc.ncclGetVersion(&v) != ncclSuccess)
        v = 0;
    /* nccl.h NCCL_VERSION: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after */
    if (v >= 10000)
        snprintf(c->version, sizeof c->version, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(c->version, sizeof c->version, "%d.%d.%d", v / 1000, v / 100 % 10, v % 100);
    snprintf(c->nclib.version, sizeof c->nclib.version, "%s", c->version);
    c->alltoall_call = c->nc.ncclAlltoAll ? "ncclAlltoAll" : "ncclSend/ncclRecv";
    return GV_OK;
}

static int open_driver(struct coll *c, struct gv_err *err)
{
    struct gv_err e = {0};
    if (gv_vlib_open(GV_LIB_CUDA, &c->culib, &c->cu, &e) != GV_OK)
        return gv_err_set(err, GV_E_NOTFOUND, "no NVIDIA GPU driver: %s", e.msg);
    CUresult r = c->cu.cuInit(0);
    if (r == CUDA_ERROR_STUB_LIBRARY || (r != CUDA_SUCCESS && strstr(c->culib.path, "/stubs/")))
        return gv_err_set(err, GV_E_NOTFOUND, "no NVIDIA GPU driver: %s is the CUDA toolkit's "
                          "link-time stub (cuInit: %d)", c->culib.path, (int)r);
    if (r == CUDA_ERROR_NO_DEVICE)
        return gv_err_set(err, GV_E_NOTFOUND, "no NVIDIA GPU (cuInit: CUDA_ERROR_NO_DEVICE, %s)",
                          c->culib.path);
    if (r != CUDA_SUCCESS)
        return cu_fail(c, r, 0, "cuInit", err);
    int count = 0;
    CUC(c, 0, cuDeviceGetCount(&count), err);
    if (count <= 0)
        return gv_err_set(err, GV_E_NOTFOUND, "no NVIDIA GPU (cuDeviceGetCount: 0)");
    if (c->o.ndev > count)
        return gv_err_set(err, GV_E_USAGE, "%d GPUs asked for, %d visible", c->o.ndev, count);
    c->n = c->o.ndev ? c->o.ndev : count;
    if (c->n > MAXDEV)
        c->n = MAXDEV;
    if (!c->cu.cuEventCreate || !c->cu.cuEventRecord || !c->cu.cuEventElapsedTime ||
        !c->cu.cuEventDestroy || !c->cu.cuMemsetD32Async)
        return gv_err_set(err, GV_E_LIB, "%s lacks cuEventCreate/cuEventRecord/"
                          "cuEventElapsedTime/cuEventDestroy/cuMemsetD32Async", c->culib.path);
    int dv = 0;
    c->cu.cuDriverGetVersion(&dv);
    snprintf(c->culib.version, sizeof c->culib.version, "%d.%d", dv / 1000, dv % 1000 / 10);
    int rc = gv_vlib_open(GV_LIB_NVRTC, &c->rtclib, &c->rtc, err);
    if (rc)
        return gv_err_prefix(err, "NVRTC compiles gpuvet's check kernels and is required");
    return GV_OK;
}

static const struct gv_rtc_out *code_for(struct coll *c, const char *arch, struct gv_err *err)
{
    for (int i = 0; i < c->ncode; i++)
        if (strcmp(c->code_arch[i], arch) == 0)
            return &c->code[i];
    if (c->ncode == MAXARCH) {
        gv_err_set(err, GV_E_UNSUPPORTED, "more than %d GPU architectures", MAXARCH);
        return NULL;
    }
    if (gv_nvrtc_compile(&c->rtc, arch, &c->code[c->ncode], err) != GV_OK)
        return NULL;
    snprintf(c->code_arch[c->ncode], sizeof c->code_arch[0], "%s", arch);
    return &c->code[c->ncode++];
}

static int load_funcs(struct coll *c, int i, struct gv_err *err)
{
    struct rank *k = &c->r[i];
    const struct gv_rtc_out *code = code_for(c, k->arch, err);
    if (!code)
        return err->code ? err->code : GV_E_DEVICE;
    CUC(c, i, cuModuleLoadData(&k->mod, code->code), err);
    CUC(c, i, cuModuleGetFunction(&k->fill, k->mod, "gv_coll_fill"), err);
    CUC(c, i, cuModuleGetFunction(&k->check, k->mod, "gv_coll_check"), err);
    CUC(c, i, cuModuleGetFunction(&k->poke, k->mod, "gv_coll_poke"), err);
    CUC(c, i, cuModuleGetFunction(&k->gate, k->mod, "gv_coll_gate"), err);
    return GV_OK;
}

static int setup_rank(struct coll *c, int i, struct gv_err *err)
{
    struct rank *k = &c->r[i];
    CUC(c, i, cuDeviceGet(&k->dev, i), err);
    CUC(c, i, cuDeviceGetName(k->name, sizeof k->name - 1, k->dev), err);
    CUC(c, i, cuDeviceGetAttribute(&k->ccmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, k->dev),
        err);
    CUC(c, i, cuDeviceGetAttribute(&k->ccmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, k->dev),
        err);
    snprintf(k->arch, sizeof k->arch, "sm_%d%d", k->ccmaj, k->ccmin);
    if (c->cu.cuDeviceGetPCIBusId)
        c->cu.cuDeviceGetPCIBusId(k->bus, sizeof k->bus - 1, k->dev);
    CUC(c, i, cuDevicePrimaryCtxRetain(&k->ctx, k->dev), err);
    k->retained = 1;
    CUC(c, i, cuCtxSetCurrent(k->ctx), err);
    CUC(c, i, cuStreamCreate(&k->stream, CU_STREAM_NON_BLOCKING), err);
    int rc = load_funcs(c, i, err);
    if (rc)
        return rc;
    CUC(c, i, cuMemAlloc(&k->send, c->alloc), err);
    CUC(c, i, cuMemAlloc(&k->recv, c->alloc), err);
    CUC(c, i, cuMemAlloc(&k->bad, (size_t)c->o.iters * 8), err);
    k->nev = 2 * c->o.iters;
    k->ev = calloc((size_t)k->nev, sizeof *k->ev);
    if (!k->ev)
        return gv_err_set(err, GV_E_NOMEM, "%d events", k->nev);
    for (int e = 0; e < k->nev; e++)
        CUC(c, i, cuEventCreate(&k->ev[e], CU_EVENT_DEFAULT), err);
    return GV_OK;
}

static unsigned grid_for(size_t n, unsigned cap)
{
    size_t g = (n + BLOCK - 1) / BLOCK;
    return g == 0 ? 1 : g > cap ? cap : (unsigned)g;
}

static int launch(struct coll *c, int i, CUfunction f, unsigned grid, void **args, const char *name,
                  struct gv_err *err)
{
    CUresult r = c->cu.cuLaunchKernel(f, grid, 1, 1, grid > 1 ? BLOCK : 1, 1, 1, 0,
                                      c->r[i].stream, args, NULL);
    if (r != CUDA_SUCCESS)
        return cu_fail(c, r, i, name, err);
    return GV_OK;
}

/* Every rank's send buffer gets its pattern once (the collectives are out of
 * place and never write it). */
static int fill_send(struct coll *c, struct gv_err *err)
{
    for (int i = 0; i < c->n; i++) {
        int rc = setcur(c, i, err);
        if (rc)
            return rc;
        long long n = (long long)(c->alloc / 4);
        int rank = i;
        void *args[] = {&c->r[i].send, &n, &rank};
        if ((rc = launch(c, i, c->r[i].fill, grid_for((size_t)n, 4096), args, "gv_coll_fill", err)))
            return rc;
    }
    return wait_all(c, "filling the send buffers", err);
}

/* The gate: one word of host memory every GPU reads (NULL when the driver
 * cannot map host memory: the timing then runs ungated). */
static void setup_gate(struct coll *c)
{
    void *h = NULL;
    if (!c->cu.cuMemHostAlloc || !c->cu.cuMemHostGetDevicePointer ||
        c->cu.cuMemHostAlloc(&h, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) !=
            CUDA_SUCCESS)
        return;
    for (int i = 0; i < c->n; i++) {
        c->cu.cuCtxSetCurrent(c->r[i].ctx);
        if (c->cu.cuMemHostGetDevicePointer(&c->r[i].flag, h, 0) != CUDA_SUCCESS) {
            c->cu.cuMemFreeHost(h);
            return;
        }
    }
    c->flag = h;
    *c->flag = 1;
}

static int setup(struct coll *c, struct gv_err *err)
{
    for (int i = 0; i < c->n; i++) {
        int rc = setup_rank(c, i, err);
        if (rc)
            return rc;
    }
    setup_gate(c);
    int rc = fill_send(c, err);
    if (rc)
        return rc;
    /* The GPU machines' rule: NVLink multicast (NVLS) stays off. */
    if (!getenv("NCCL_NVLS_ENABLE"))
        setenv("NCCL_NVLS_ENABLE", "0", 1);
    ncclComm_t comms[MAXDEV];
    int devs[MAXDEV];
    for (int i = 0; i < c->n; i++)
        devs[i] = i;
    NCC(c, ncclCommInitAll(comms, c->n, devs), err);
    for (int i = 0; i < c->n; i++)
        c->r[i].comm = comms[i];
    c->comms_up = 1;
    return GV_OK;
}

static void teardown(struct coll *c)
{
    if (c->broken) /* a hung or faulted GPU: leave its resources to the process exit */
        return;
    if (c->comms_up)
        for (int i = 0; i < c->n; i++)
            if (c->r[i].comm)
                c->nc.ncclCommDestroy(c->r[i].comm);
    for (int i = 0; i < c->n; i++) {
        struct rank *k = &c->r[i];
        if (!k->retained)
            continue;
        c->cu.cuCtxSetCurrent(k->ctx);
        if (k->stream)
            c->cu.cuStreamSynchronize(k->stream);
        for (int e = 0; k->ev && e < k->nev; e++)
            if (k->ev[e])
                c->cu.cuEventDestroy(k->ev[e]);
        if (k->send)
            c->cu.cuMemFree(k->send);
        if (k->recv)
            c->cu.cuMemFree(k->recv);
        if (k->bad)
            c->cu.cuMemFree(k->bad);
        if (k->mod)
            c->cu.cuModuleUnload(k->mod);
        if (k->stream)
            c->cu.cuStreamDestroy(k->stream);
    }
    if (c->flag)
        c->cu.cuMemFreeHost((void *)c->flag);
    for (int i = 0; i < c->n; i++)
        if (c->r[i].retained)
            c->cu.cuDevicePrimaryCtxRelease(c->r[i].dev);
}

/* ---- one size ---- */

/* Enqueues op on every rank (one NCCL group) at byte offset shift. */
static int enqueue(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s, size_t shift,
                   struct gv_err *err)
{
    NCC(c, ncclGroupStart(), err);
    int rc = GV_OK;
    for (int i = 0; i < c->n && !rc; i++) {
        struct rank *k = &c->r[i];
        const void *sb = (const void *)(uintptr_t)(k->send + shift);
        void *rb = (void *)(uintptr_t)(k->recv + shift);
        void *st = (void *)k->stream;
        ncclResult_t r = ncclSuccess;
        const char *call = "";
        switch (op) {
        case GV_COLL_ALL_REDUCE:
            call = "ncclAllReduce";
            r = c->nc.ncclAllReduce(sb, rb, s->count, ncclFloat32, ncclSum, k->comm, st);
            break;
        case GV_COLL_ALL_GATHER:
            call = "ncclAllGather";
            r = c->nc.ncclAllGather(sb, rb, s->count, ncclFloat32, k->comm, st);
            break;
        case GV_COLL_REDUCE_SCATTER:
            call = "ncclReduceScatter";
            r = c->nc.ncclReduceScatter(sb, rb, s->count, ncclFloat32, ncclSum, k->comm, st);
            break;
        case GV_COLL_BROADCAST:
            call = "ncclBroadcast";
            r = c->nc.ncclBroadcast(sb, rb, s->count, ncclFloat32, 0, k->comm, st);
            break;
        default:
            if (c->nc.ncclAlltoAll) {
                call = "ncclAlltoAll";
                r = c->nc.ncclAlltoAll(sb, rb, s->count, ncclFloat32, k->comm, st);
                break;
            }
            for (int p = 0; p < c->n && r == ncclSuccess; p++) {
                size_t off = (size_t)p * s->count * 4;
                call = "ncclSend";
                r = c->nc.ncclSend((const char *)sb + off, s->count, ncclFloat32, p, k->comm, st);
                if (r == ncclSuccess) {
                    call = "ncclRecv";
                    r = c->nc.ncclRecv((char *)rb + off, s->count, ncclFloat32, p, k->comm, st);
                }
            }
        }
        if (r != ncclSuccess) {
            nc_fail(c, r, call, err);
            rc = gv_err_prefix(err, "rank %d", i);
        }
    }
    ncclResult_t r = c->nc.ncclGroupEnd();
    if (rc)
        return rc;
    if (r != ncclSuccess)
        return nc_fail(c, r, "ncclGroupEnd", err);
    return GV_OK;
}

static int warm(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s, const char *id,
                struct gv_err *err)
{
    for (int w = 0; w < c->o.warmup; w++) {
        int rc = enqueue(c, op, s, 0, err);
        if (rc)
            return gv_err_prefix(err, "%s warm-up", id);
    }
    return GV_OK;
}

static int check_launch(struct coll *c, int i, enum gv_coll_op op, const struct gv_coll_size *s,
                        size_t shift, int it, int poison, struct gv_err *err)
{
    struct rank *k = &c->r[i];
    CUdeviceptr out = k->recv + shift, bad = k->bad + (CUdeviceptr)it * 8;
    long long n = (long long)s->recv_count, soff = (long long)(shift / 4);
    long long cnt = (long long)s->count;
    int opi = op, rank = i, nr = c->n;
    void *args[] = {&out, &n, &opi, &rank, &nr, &soff, &cnt, &bad, &poison};
    return launch(c, i, k->check, grid_for(s->recv_count, 4096), args, "gv_coll_check", err);
}

/* Timed iterations, all queued behind the gate. When every iteration has an
 * output place of its own (steps >= iters) the checks of all of them follow
 * the last one, so that nothing runs between two timed collectives (NCCL may
 * overlap one kernel's start with the previous one's end, as it does in
 * nccl-tests' back-to-back loop); otherwise each check follows its iteration. */
static int timed(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s, size_t steps,
                 struct gv_err *err)
{
    int rc = GV_OK, defer = steps >= (size_t)c->o.iters;
    for (int it = 0; it < c->o.iters && !rc; it++) {
        size_t shift = s->bytes * ((size_t)it % steps);
        for (int i = 0; i < c->n && !rc; i++)
            if (!(rc = setcur(c, i, err)))
                CUC(c, i, cuEventRecord(c->r[i].ev[2 * it], c->r[i].stream), err);
        if (!rc)
            rc = enqueue(c, op, s, shift, err);
        for (int i = 0; i < c->n && !rc; i++)
            if (!(rc = setcur(c, i, err)))
                CUC(c, i, cuEventRecord(c->r[i].ev[2 * it + 1], c->r[i].stream), err);
        if (!rc && c->corrupt && it == c->o.iters / 2) {
            int last = c->n - 1;
            CUdeviceptr p = c->r[last].recv + shift;
            void *args[] = {&p};
            if (!(rc = setcur(c, last, err)))
                rc = launch(c, last, c->r[last].poke, 1, args, "gv_coll_poke", err);
        }
        for (int i = 0; i < c->n && !rc && !defer; i++)
            if (!(rc = setcur(c, i, err)))
                rc = check_launch(c, i, op, s, shift, it, (size_t)it + steps < (size_t)c->o.iters,
                                  err);
    }
    for (int it = 0; it < c->o.iters && !rc && defer; it++)
        for (int i = 0; i < c->n && !rc; i++)
            if (!(rc = setcur(c, i, err)))
                rc = check_launch(c, i, op, s, s->bytes * (size_t)it, it, 0, err);
    return rc;
}

static int gate_close(struct coll *c, struct gv_err *err)
{
    if (!c->flag)
        return GV_OK;
    *c->flag = 0;
    __sync_synchronize();
    long long max_ns = (long long)(c->timeout * 0.5e9);
    for (int i = 0; i < c->n; i++) {
        int rc = setcur(c, i, err);
        void *args[] = {&c->r[i].flag, &max_ns};
        if (!rc)
            rc = launch(c, i, c->r[i].gate, 1, args, "gv_coll_gate", err);
        if (rc) {
            *c->flag = 1;
            return rc;
        }
    }
    return GV_OK;
}

/* Poisons the output region and zeroes the mismatch counters. */
static int prepare(struct coll *c, size_t region, struct gv_err *err)
{
    for (int i = 0; i < c->n; i++) {
        int rc = setcur(c, i, err);
        if (rc)
            return rc;
        CUC(c, i, cuMemsetD32Async(c->r[i].recv, 0xffffffffu, region / 4, c->r[i].stream), err);
        CUC(c, i, cuMemsetD32Async(c->r[i].bad, 0, (size_t)c->o.iters * 2, c->r[i].stream), err);
    }
    return GV_OK;
}

struct measured {
    double batch;               /* first start to last end / iters, the slowest rank's */
    int deferred;               /* the checks followed the last iteration (see timed) */
    double *sec;                /* per iteration, the slowest rank's */
    unsigned long long *miss;   /* per iteration, summed over ranks */
};

static int collect(struct coll *c, struct measured *m, struct gv_err *err)
{
    unsigned long long *b = calloc((size_t)c->o.iters, sizeof *b);
    if (!b)
        return GV_E_NOMEM;
    int rc = GV_OK;
    for (int i = 0; i < c->n && !rc; i++) {
        if ((rc = setcur(c, i, err)))
            break;
        CUresult r = c->cu.cuMemcpyDtoH(b, c->r[i].bad, (size_t)c->o.iters * 8);
        if (r != CUDA_SUCCESS) {
            rc = cu_fail(c, r, i, "cuMemcpyDtoH", err);
            break;
        }
        for (int it = 0; it < c->o.iters; it++) {
            float ms = 0;
            r = c->cu.cuEventElapsedTime(&ms, c->r[i].ev[2 * it], c->r[i].ev[2 * it + 1]);
            if (r != CUDA_SUCCESS) {
                rc = cu_fail(c, r, i, "cuEventElapsedTime", err);
                break;
            }
            if (ms * 1e-3 > m->sec[it])
                m->sec[it] = ms * 1e-3;
            m->miss[it] += b[it];
        }
        float all = 0;
        r = rc ? CUDA_SUCCESS
               : c->cu.cuEventElapsedTime(&all, c->r[i].ev[0], c->r[i].ev[2 * c->o.iters - 1]);
        if (r != CUDA_SUCCESS)
            rc = cu_fail(c, r, i, "cuEventElapsedTime", err);
        else if (all * 1e-3 / c->o.iters > m->batch)
            m->batch = all * 1e-3 / c->o.iters;
    }
    free(b);
    return rc;
}

/* ---- results ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s || n <= 0) {
        free(s);
        return 0;
    }
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

static void human(size_t b, char *out, size_t outsz)
{
    if (b >= (1u << 30) && b % (1u << 30) == 0)
        snprintf(out, outsz, "%zu GiB", b >> 30);
    else if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(out, outsz, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(out, outsz, "%zu KiB", b >> 10);
    else
        snprintf(out, outsz, "%zu B", b);
}

static json_t *new_result(struct coll *c, enum gv_coll_op op, size_t nominal,
                          const struct gv_coll_size *s, const char *id)
{
    char hs[32], name[64];
    human(nominal, hs, sizeof hs);
    snprintf(name, sizeof name, "%s %s", op_names[op], hs);
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "group", json_string("collective"));
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "unit", json_string("GB/s"));
    json_object_set_new(o, "better", json_string("higher"));
    json_t *p = json_object();
    json_object_set_new(p, "op", json_string(op_names[op]));
    json_object_set_new(p, "bytes", json_integer((json_int_t)s->bytes));
    json_object_set_new(p, "nominal_bytes", json_integer((json_int_t)nominal));
    json_object_set_new(p, "count", json_integer((json_int_t)s->count));
    json_object_set_new(p, "nranks", json_integer(c->n));
    json_object_set_new(p, "dtype", json_string("f32"));
    if (op == GV_COLL_ALL_REDUCE || op == GV_COLL_REDUCE_SCATTER)
        json_object_set_new(p, "redop", json_string("sum"));
    if (op == GV_COLL_BROADCAST)
        json_object_set_new(p, "root", json_integer(0));
    json_object_set_new(p, "in_place", json_false());
    if (op == GV_COLL_ALL_TO_ALL)
        json_object_set_new(p, "call", json_string(c->alltoall_call));
    json_object_set_new(p, "iters", json_integer(c->o.iters));
    json_object_set_new(p, "warmup", json_integer(c->o.warmup));
    json_object_set_new(p, "gated", json_boolean(c->flag != NULL));
    json_object_set_new(o, "params", p);
    json_object_set_new(o, "impl", json_sprintf("NCCL %s", c->version));
    return o;
}

static void score(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s,
                  const struct measured *m, json_t *o)
{
    int n = c->o.iters;
    double *bus = malloc((size_t)n * sizeof *bus);
    json_t *samples = json_array(), *p = json_object_get(o, "params");
    double lo = 0, hi = 0;
    /* one GPU: the bus bandwidth is 0 by nccl-tests' definition (nothing crosses
     * a link); the value is then the algorithm bandwidth, and says so */
    int alg_value = gv_coll_busbw_factor(op, c->n) == 0;
    for (int i = 0; bus && i < n; i++) {
        double a, b;
        gv_coll_bw(op, s->bytes, c->n, m->sec[i], &a, &b);
        b = alg_value ? a : b;
        bus[i] = b;
        lo = i == 0 || b < lo ? b : lo;
        hi = i == 0 || b > hi ? b : hi;
        json_array_append_new(samples, json_real(b));
    }
    double t = median(m->sec, n), val = bus ? median(bus, n) : 0, alg, busm;
    gv_coll_bw(op, s->bytes, c->n, t, &alg, &busm);
    json_object_set_new(o, "value", json_real(val));
    json_object_set_new(o, "min", json_real(lo));
    json_object_set_new(o, "max", json_real(hi));
    json_object_set_new(o, "samples", samples);
    json_object_set_new(o, "spread", json_real(val > 0 ? (hi - lo) / val : 0.0));
    json_object_set_new(p, "algbw_gbps", json_real(alg));
    json_object_set_new(p, "busbw_gbps", json_real(busm));
    json_object_set_new(p, "busbw_factor", json_real(gv_coll_busbw_factor(op, c->n)));
    json_object_set_new(p, "value_is", json_string(alg_value ? "algbw (busbw is 0 on one GPU)"
                                                             : "busbw"));
    json_object_set_new(p, "time_us", json_real(t * 1e6));
    json_object_set_new(p, "checks", json_string(m->deferred ? "after the last iteration"
                                                            : "after each iteration"));
    if (m->deferred) { /* nccl-tests' figure: the whole run over the number of iterations */
        gv_coll_bw(op, s->bytes, c->n, m->batch, &alg, &busm);
        json_object_set_new(p, "batch_time_us", json_real(m->batch * 1e6));
        json_object_set_new(p, "batch_busbw_gbps", json_real(busm));
        json_object_set_new(p, "batch_algbw_gbps", json_real(alg));
    }
    free(bus);
}

static const char *const check_what = "every timed iteration compared with the exact result on "
                                      "the device (inputs are small integers, so every sum is "
                                      "exact in any order), outside the timing events";

static void judge(struct coll *c, const struct measured *m, json_t *o, int *failed)
{
    unsigned long long total = 0;
    json_t *bad_it = json_array();
    int first = -1, nbad = 0;
    for (int it = 0; it < c->o.iters; it++)
        if (m->miss[it]) {
            total += m->miss[it];
            nbad++;
            if (first < 0)
                first = it;
            json_array_append_new(bad_it, json_integer(it));
        }
    json_t *ck = json_object();
    json_object_set_new(ck, "ok", json_boolean(total == 0));
    json_object_set_new(ck, "what", json_string(check_what));
    json_object_set_new(ck, "mismatches", json_integer((json_int_t)total));
    json_object_set_new(ck, "failed_iterations", bad_it);
    json_object_set_new(o, "check", ck);
    *failed = total != 0;
    if (*failed) {
        json_object_set_new(o, "status", json_string("failed"));
        json_object_set_new(o, "reason",
                            json_sprintf("%llu wrong elements in %d of %d timed iterations "
                                         "(first: iteration %d); a wrong result has no score",
                                         total, nbad, c->o.iters, first));
    } else {
        json_object_set_new(o, "status", json_string("ok"));
    }
}

static int measure(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s, json_t *o,
                   const char *id, struct gv_err *err)
{
    size_t steps = c->alloc / s->bytes;
    if (steps < 1)
        steps = 1;
    size_t used = (steps < (size_t)c->o.iters ? steps : (size_t)c->o.iters) * s->bytes;
    struct measured m = {0, steps >= (size_t)c->o.iters, calloc((size_t)c->o.iters, sizeof(double)),
                         calloc((size_t)c->o.iters, sizeof(unsigned long long))};
    int rc = m.sec && m.miss ? GV_OK : gv_err_set(err, GV_E_NOMEM, "%s", id);
    if (!rc)
        rc = prepare(c, used, err);
    if (!rc)
        rc = gate_close(c, err);
    if (!rc)
        rc = timed(c, op, s, steps, err);
    if (!rc && c->hang && c->n > 1) { /* test hook: rank 0 alone waits for its peers */
        int n = c->n;
        c->n = 1;
        rc = enqueue(c, op, s, 0, err);
        c->n = n;
    }
    if (c->flag) { /* open the gate whatever happened */
        *c->flag = 1;
        __sync_synchronize();
    }
    if (!rc)
        rc = wait_all(c, id, err);
    if (!rc)
        rc = collect(c, &m, err);
    if (!rc) {
        int failed = 0;
        judge(c, &m, o, &failed);
        if (!failed)
            score(c, op, s, &m, o);
    }
    free(m.sec);
    free(m.miss);
    return rc;
}

/* ---- the sweep ---- */


struct plan {
    size_t nominal[MAXSIZES];
    struct gv_coll_size size[MAXSIZES];
    char id[MAXSIZES][80];
    int n;
};

static void plan_op(const struct coll *c, enum gv_coll_op op, const size_t *sweep, size_t nsw,
                    int nranks, struct plan *pl)
{
    pl->n = 0;
    for (size_t i = 0; i < nsw && pl->n < MAXSIZES; i++) {
        struct gv_coll_size s;
        gv_coll_size(op, sweep[i], 4, nranks, &s);
        char id[80];
        snprintf(id, sizeof id, "coll.%s.f32.%zuB", op_names[op], sweep[i]);
        if (s.count == 0 || !gv_globs_match(c->o.only, id))
            continue; /* too small to split over the ranks, or not asked for */
        pl->nominal[pl->n] = sweep[i];
        pl->size[pl->n] = s;
        snprintf(pl->id[pl->n], sizeof pl->id[0], "%s", id);
        pl->n++;
    }
}

static void error_result(json_t *o, const struct gv_err *err)
{
    json_object_set_new(o, "status", json_string("error"));
    json_object_set_new(o, "reason", json_string(err->msg));
}

static int run_op(struct coll *c, enum gv_coll_op op, const struct plan *pl, json_t *results,
                  struct gv_err *err)
{
    if (pl->n == 0)
        return GV_OK;
    for (int i = 0; i < pl->n; i++) {
        int rc = warm(c, op, &pl->size[i], pl->id[i], err);
        if (rc)
            return rc;
    }
    char what[96];
    snprintf(what, sizeof what, "%s warm-up", op_names[op]);
    int rc = wait_all(c, what, err);
    if (rc)
        return rc;
    for (int i = 0; i < pl->n; i++) {
        json_t *o = new_result(c, op, pl->nominal[i], &pl->size[i], pl->id[i]);
        rc = measure(c, op, &pl->size[i], o, pl->id[i], err);
        if (rc)
            error_result(o, err);
        json_array_append_new(results, o);
        if (rc)
            return rc;
    }
    return GV_OK;
}

static int resolve_opts(const struct gv_coll_opts *in, struct gv_coll_opts *o, struct gv_err *err)
{
    *o = in ? *in : (struct gv_coll_opts){0};
    if (!o->min_bytes)
        o->min_bytes = 8;
    if (!o->max_bytes)
        o->max_bytes = (size_t)128 << 20;
    if (!o->factor)
        o->factor = 2;
    if (!o->iters)
        o->iters = 20;
    if (!o->warmup)
        o->warmup = 5;
    if (o->warmup < 0)
        o->warmup = 0;
    if (!o->ops)
        o->ops = (1u << GV_COLL_NOPS) - 1;
    if (o->ndev < 0 || o->ndev > MAXDEV)
        return gv_err_set(err, GV_E_USAGE, "ndev %d: expected 0 (all) to %d", o->ndev, MAXDEV);
    if (o->iters < 1 || o->iters > MAXITERS)
        return gv_err_set(err, GV_E_USAGE, "iters %d: expected 1 to %d", o->iters, MAXITERS);
    if (o->factor < 2)
        return gv_err_set(err, GV_E_USAGE, "factor %d: expected 2 or more", o->factor);
    if (o->max_bytes < o->min_bytes)
        return gv_err_set(err, GV_E_USAGE, "sizes %zu to %zu bytes: the end is below the start",
                          o->min_bytes, o->max_bytes);
    if (o->max_bytes > ((size_t)1 << 40))
        return gv_err_set(err, GV_E_USAGE, "max_bytes %zu: more than 1 TiB", o->max_bytes);
    size_t tmp[1];
    if (gv_coll_sweep(o->min_bytes, o->max_bytes, o->factor, tmp, 1) > MAXSIZES)
        return gv_err_set(err, GV_E_USAGE, "more than %d sizes in the sweep", MAXSIZES);
    return GV_OK;
}

static json_t *env_vars(void)
{
    json_t *e = json_object();
    for (char **p = environ; p && *p; p++) {
        if (strncmp(*p, "NCCL_", 5) != 0 && strncmp(*p, "RCCL_", 5) != 0)
            continue;
        const char *eq = strchr(*p, '=');
        if (!eq || eq - *p >= 256)
            continue;
        char name[256];
        memcpy(name, *p, (size_t)(eq - *p));
        name[eq - *p] = '\0';
        json_object_set_new(e, name, json_string(eq + 1));
    }
    return e;
}

static json_t *describe(struct coll *c, int nvls_set)
{
    json_t *o = json_object();
    json_object_set_new(o, "library", gv_vlib_describe(&c->nclib, c->nccl_err));
    json_object_set_new(o, "version", json_string(c->version));
    json_object_set_new(o, "nranks", json_integer(c->n));
    json_t *devs = json_array();
    for (int i = 0; i < c->n && c->r[i].retained; i++) {
        json_t *d = json_object();
        json_object_set_new(d, "ordinal", json_integer(i));
        json_object_set_new(d, "name", json_string(c->r[i].name));
        json_object_set_new(d, "pci_bus_id", json_string(c->r[i].bus));
        json_object_set_new(d, "compute_capability",
                            json_sprintf("%d.%d", c->r[i].ccmaj, c->r[i].ccmin));
        json_array_append_new(devs, d);
    }
    json_object_set_new(o, "devices", devs);
    json_object_set_new(o, "env", env_vars());
    json_object_set_new(o, "nvls_disabled_by_gpuvet", json_boolean(nvls_set));
    if (c->culib.handle)
        json_object_set_new(o, "driver", gv_vlib_describe(&c->culib, NULL));
    if (c->ncode)
        json_object_set_new(o, "kernels", gv_rtc_out_describe(&c->code[0], c->code[0].is_ptx
                                                                               ? "ptx" : "cubin"));
    if (c->alltoall_call)
        json_object_set_new(o, "alltoall_call", json_string(c->alltoall_call));
    json_object_set_new(o, "method", json_string(
        "nccl-tests' sizes and algbw/busbw; out of place; per size: warm-up iterations, then "
        "timed iterations queued behind a gate kernel, each between CUDA events on every "
        "GPU's stream and followed (outside the events) by a check kernel; an iteration's time "
        "is the slowest rank's; value = median busbw (algbw where busbw is 0 by definition: one "
        "GPU); buffers at rotating offsets as in "
        "nccl-tests"));
    return o;
}

int gv_coll_bench(const struct gv_coll_opts *opts, json_t *results, json_t **info,
                  struct gv_err *err)
{
    if (info)
        *info = NULL;
    struct coll *c = calloc(1, sizeof *c);
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "collective benchmark");
    int rc = resolve_opts(opts, &c->o, err);
    const char *cv = getenv("GPUVET_TEST_COLL_CORRUPT");
    c->corrupt = cv && *cv && strcmp(cv, "0") != 0;
    const char *hv = getenv("GPUVET_TEST_COLL_HANG");
    c->hang = hv && *hv && strcmp(hv, "0") != 0;
    c->timeout = gv_gpu_case_timeout();
    int nvls_set = !getenv("NCCL_NVLS_ENABLE");
    if (!rc)
        rc = open_nccl(c, err);
    if (!rc)
        rc = open_driver(c, err);
    size_t sweep[MAXSIZES];
    size_t nsw = rc ? 0 : gv_coll_sweep(c->o.min_bytes, c->o.max_bytes, c->o.factor, sweep,
                                        MAXSIZES);
    struct plan *pl = calloc(GV_COLL_NOPS, sizeof *pl);
    if (!rc && !pl)
        rc = gv_err_set(err, GV_E_NOMEM, "collective benchmark plan");
    size_t need = 0;
    for (int op = 0; !rc && op < GV_COLL_NOPS; op++) {
        pl[op].n = 0;
        if (c->o.ops & (1u << op))
            plan_op(c, (enum gv_coll_op)op, sweep, nsw, c->n, &pl[op]);
        for (int i = 0; i < pl[op].n; i++)
            if (pl[op].size[i].bytes > need)
                need = pl[op].size[i].bytes;
    }
    c->alloc = need ? need : 64;
    if (!rc && need)
        rc = setup(c, err);
    for (int op = 0; !rc && need && op < GV_COLL_NOPS; op++)
        rc = run_op(c, (enum gv_coll_op)op, &pl[op], results, err);
    if (rc && c->comms_up) /* work may be left queued on some ranks only */
        abort_comms(c);
    nvls_set = nvls_set && getenv("NCCL_NVLS_ENABLE");
    if (info)
        *info = describe(c, nvls_set);
    teardown(c);
    for (int i = 0; i < c->ncode; i++)
        gv_rtc_out_free(&c->code[i]);
    free(pl);
    for (int i = 0; i < c->n; i++)
        free(c->r[i].ev);
    free(c);
    return rc;
}
