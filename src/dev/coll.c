/* The device half of the collective benchmarks (coll.h): NCCL or RCCL
 * (loaded at run time like the other vendor libraries), the CUDA driver's
 * primary contexts, one non-blocking stream per GPU, ncclCommInitAll, gpuvet's
 * helper kernels (src/dev/kernels/coll.cu) compiled with NVRTC.
 *
 * Timing. Per size: a gate kernel holds each stream; each timed iteration is a
 * start event, the collective on every rank (one group), an end event and the
 * check kernel, which compares the output with the exact answer and counts
 * mismatches per iteration; the output region starts as NaN, and the check
 * writes NaN again where a later iteration will write (so no iteration can pass
 * on an earlier one's answer); the host then opens the gate, so the events time
 * the GPUs and not the host's enqueueing. An iteration's time is the slowest
 * rank's event interval. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/coll.h"
#include "dev/gpu.h"
#include "dev/vendor.h"

extern char **environ;

#define MAXDEV GV_COLL_MAXDEV
#define MAXARCH 4
#define BLOCK 256u

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

struct gv_coll_dev {
    int ndev, iters;         /* asked for (0: all GPUs); timed iterations per size */
    int rccl;                /* 1: RCCL (librccl.so.1), 0: NCCL */
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
    int comms_up, broken;
    char version[32];
    char nccl_err[1024]; /* why NCCL / RCCL could not be opened */
    const char *alltoall_call;
};

static int cu_fail(struct gv_coll_dev *c, CUresult r, int rank, const char *call, struct gv_err *err)
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

static int nc_fail(struct gv_coll_dev *c, ncclResult_t r, const char *call, struct gv_err *err)
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

static int setcur(struct gv_coll_dev *c, int i, struct gv_err *err)
{
    CUC(c, i, cuCtxSetCurrent(c->r[i].ctx), err);
    return GV_OK;
}

static void nap(double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

static void abort_comms(struct gv_coll_dev *c)
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
static int wait_all(struct gv_coll_dev *c, const char *what, struct gv_err *err)
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

static int open_nccl(struct gv_coll_dev *c, struct gv_err *err)
{
    int rc = gv_vlib_open(c->rccl ? GV_LIB_RCCL : GV_LIB_NCCL, &c->nclib, &c->nc, err);
    if (rc) {
        gv_err_prefix(err, "the collective benchmarks need %s", c->rccl ? "RCCL (librccl.so.1)"
                                                                        : "NCCL (libnccl.so.2)");
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
    c->alltoall_call = !c->nc.ncclAlltoAll ? "ncclSend/ncclRecv"
                       : c->rccl         ? "ncclAllToAll"
                                         : "ncclAlltoAll";
    return GV_OK;
}

static int open_driver(struct gv_coll_dev *c, struct gv_err *err)
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
    if (c->ndev > count)
        return gv_err_set(err, GV_E_USAGE, "%d GPUs asked for, %d visible", c->ndev, count);
    c->n = c->ndev ? c->ndev : count;
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

static const struct gv_rtc_out *code_for(struct gv_coll_dev *c, const char *arch, struct gv_err *err)
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

static int load_funcs(struct gv_coll_dev *c, int i, struct gv_err *err)
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

static int setup_rank(struct gv_coll_dev *c, int i, struct gv_err *err)
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
    CUC(c, i, cuMemAlloc(&k->bad, (size_t)c->iters * 8), err);
    k->nev = 2 * c->iters;
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

static int launch(struct gv_coll_dev *c, int i, CUfunction f, unsigned grid, void **args, const char *name,
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
static int fill_send(struct gv_coll_dev *c, struct gv_err *err)
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
static void setup_gate(struct gv_coll_dev *c)
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

int gv_coll_dev_setup(struct gv_coll_dev *c, size_t bytes, struct gv_err *err)
{
    c->alloc = bytes;
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

static void teardown(struct gv_coll_dev *c)
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

int gv_coll_dev_enqueue(struct gv_coll_dev *c, enum gv_coll_op op, const struct gv_coll_size *s,
                        size_t shift, int nranks, struct gv_err *err)
{
    NCC(c, ncclGroupStart(), err);
    int rc = GV_OK;
    for (int i = 0; i < nranks && i < c->n && !rc; i++) {
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

static int check_launch(struct gv_coll_dev *c, int i, enum gv_coll_op op, const struct gv_coll_size *s,
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
int gv_coll_dev_timed(struct gv_coll_dev *c, enum gv_coll_op op, const struct gv_coll_size *s,
                      size_t steps, int corrupt, struct gv_err *err)
{
    int rc = GV_OK, defer = steps >= (size_t)c->iters;
    for (int it = 0; it < c->iters && !rc; it++) {
        size_t shift = s->bytes * ((size_t)it % steps);
        for (int i = 0; i < c->n && !rc; i++)
            if (!(rc = setcur(c, i, err)))
                CUC(c, i, cuEventRecord(c->r[i].ev[2 * it], c->r[i].stream), err);
        if (!rc)
            rc = gv_coll_dev_enqueue(c, op, s, shift, c->n, err);
        for (int i = 0; i < c->n && !rc; i++)
            if (!(rc = setcur(c, i, err)))
                CUC(c, i, cuEventRecord(c->r[i].ev[2 * it + 1], c->r[i].stream), err);
        if (!rc && corrupt && it == c->iters / 2) {
            int last = c->n - 1;
            CUdeviceptr p = c->r[last].recv + shift;
            void *args[] = {&p};
            if (!(rc = setcur(c, last, err)))
                rc = launch(c, last, c->r[last].poke, 1, args, "gv_coll_poke", err);
        }
        for (int i = 0; i < c->n && !rc && !defer; i++)
            if (!(rc = setcur(c, i, err)))
                rc = check_launch(c, i, op, s, shift, it, (size_t)it + steps < (size_t)c->iters,
                                  err);
    }
    for (int it = 0; it < c->iters && !rc && defer; it++)
        for (int i = 0; i < c->n && !rc; i++)
            if (!(rc = setcur(c, i, err)))
                rc = check_launch(c, i, op, s, s->bytes * (size_t)it, it, 0, err);
    return rc;
}

int gv_coll_dev_gate_close(struct gv_coll_dev *c, struct gv_err *err)
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

void gv_coll_dev_gate_open(struct gv_coll_dev *c)
{
    if (c->flag) {
        *c->flag = 1;
        __sync_synchronize();
    }
}

int gv_coll_dev_poison(struct gv_coll_dev *c, size_t region, struct gv_err *err)
{
    for (int i = 0; i < c->n; i++) {
        int rc = setcur(c, i, err);
        if (rc)
            return rc;
        CUC(c, i, cuMemsetD32Async(c->r[i].recv, 0xffffffffu, region / 4, c->r[i].stream), err);
        CUC(c, i, cuMemsetD32Async(c->r[i].bad, 0, (size_t)c->iters * 2, c->r[i].stream), err);
    }
    return GV_OK;
}

int gv_coll_dev_collect(struct gv_coll_dev *c, struct gv_coll_times *m, struct gv_err *err)
{
    unsigned long long *b = calloc((size_t)c->iters, sizeof *b);
    if (!b)
        return GV_E_NOMEM;
    int rc = GV_OK;
    for (int i = 0; i < c->n && !rc; i++) {
        if ((rc = setcur(c, i, err)))
            break;
        CUresult r = c->cu.cuMemcpyDtoH(b, c->r[i].bad, (size_t)c->iters * 8);
        if (r != CUDA_SUCCESS) {
            rc = cu_fail(c, r, i, "cuMemcpyDtoH", err);
            break;
        }
        for (int it = 0; it < c->iters; it++) {
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
               : c->cu.cuEventElapsedTime(&all, c->r[i].ev[0], c->r[i].ev[2 * c->iters - 1]);
        if (r != CUDA_SUCCESS)
            rc = cu_fail(c, r, i, "cuEventElapsedTime", err);
        else if (all * 1e-3 / c->iters > m->batch)
            m->batch = all * 1e-3 / c->iters;
    }
    free(b);
    return rc;
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


/* ---- the public calls ---- */

int gv_coll_dev_open(const char *kind, int ndev, int iters, double timeout,
                     struct gv_coll_dev **out, struct gv_err *err)
{
    struct gv_coll_dev *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "collective benchmark");
    c->ndev = ndev, c->iters = iters, c->timeout = timeout;
    c->rccl = kind && strcmp(kind, "hip") == 0;
    int rc = open_nccl(c, err);
    if (!rc && c->rccl)
        return gv_err_set(err, GV_E_UNSUPPORTED, "collectives on HIP: %s (RCCL %s) loaded, but "
                          "gpuvet drives the ranks through the CUDA driver only so far",
                          c->nclib.path, c->version);
    return rc ? rc : open_driver(c, err);
}

void gv_coll_dev_close(struct gv_coll_dev *c)
{
    if (!c)
        return;
    teardown(c);
    for (int i = 0; i < c->ncode; i++)
        gv_rtc_out_free(&c->code[i]);
    for (int i = 0; i < c->n; i++)
        free(c->r[i].ev);
    free(c);
}

int gv_coll_dev_nranks(const struct gv_coll_dev *c) { return c->n; }
const char *gv_coll_dev_library(const struct gv_coll_dev *c) { return c->rccl ? "RCCL" : "NCCL"; }
const char *gv_coll_dev_version(const struct gv_coll_dev *c) { return c->version; }
const char *gv_coll_dev_alltoall_call(const struct gv_coll_dev *c) { return c->alltoall_call; }
int gv_coll_dev_gated(const struct gv_coll_dev *c) { return c->flag != NULL; }

int gv_coll_dev_wait(struct gv_coll_dev *c, const char *what, struct gv_err *err)
{
    return wait_all(c, what, err);
}

void gv_coll_dev_abort(struct gv_coll_dev *c)
{
    if (c->comms_up)
        abort_comms(c);
}

json_t *gv_coll_dev_describe(const struct gv_coll_dev *c, int nvls_set)
{
    static const struct gv_coll_dev unopened; /* options refused before opening anything */
    if (!c)
        c = &unopened;
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
    return o;
}
