/* gpuvet bench on the CPU (bench_dev.h): GEMM through OpenBLAS (the BLAS
 * gpuvet links for its references), STREAM loops over all online CPUs, the
 * host clock. Copies between host and device, launches and peers do not exist
 * here and say so. */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dev/backend.h"
#include "dev/bench_dev.h"

#define GEMM_SAMPLES 16
#define MAX_THREADS 64

struct gv_bdev {
    struct gv_device *cpu; /* the numerics backend, for describe() */
    int threads;
};

struct gv_bw {
    struct gv_bw_spec s;
    float *fa, *fw, *fc;
    double *da, *dw, *dc;
    float *x, *y, *z, *out;
    long long n;
    unsigned long long seed_a, seed_w;
    int threads;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int c_open(const char *spec, struct gv_bdev **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_bdev *b = calloc(1, sizeof *b);
    if (!b)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    int rc = gv_backend_cpu.open(spec ? spec : "", &b->cpu, err);
    if (rc) {
        free(b);
        return rc;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    b->threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
    *out = b;
    return GV_OK;
}

static void c_close(struct gv_bdev *b)
{
    if (!b)
        return;
    gv_backend_cpu.close(b->cpu);
    free(b);
}

static json_t *c_describe(struct gv_bdev *b)
{
    json_t *o = gv_backend_cpu.describe(b->cpu);
    json_object_set_new(o, "bench_timer", json_string("CLOCK_MONOTONIC around the repetitions"));
    json_object_set_new(o, "bench_gemm", json_sprintf("OpenBLAS %s", openblas_get_config()));
    json_object_set_new(o, "bench_threads", json_integer(b->threads));
    return o;
}

static json_t *c_conditions(struct gv_bdev *b)
{
    (void)b;
    json_t *o = json_object();
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "r");
    long khz = 0;
    if (f) {
        if (fscanf(f, "%ld", &khz) == 1 && khz > 0)
            json_object_set_new(o, "cpu0_mhz", json_integer(khz / 1000));
        fclose(f);
    }
    double load[1];
    if (getloadavg(load, 1) == 1)
        json_object_set_new(o, "loadavg_1min", json_real(load[0]));
    return o;
}

static int c_count(struct gv_bdev *b)
{
    (void)b;
    return 0;
}

static int c_peer_access(struct gv_bdev *b, int s, int d, char *why, size_t whysz)
{
    (void)b, (void)s, (void)d;
    snprintf(why, whysz, "no GPU on the CPU backend");
    return -1;
}

static int c_pci_address(struct gv_bdev *b, int i, char *buf, size_t bufsz)
{
    (void)b, (void)i, (void)buf, (void)bufsz;
    return -1;
}

/* ---- GEMM ---- */

static int gemm_prepare(struct gv_bw *w, char *impl, size_t implsz, struct gv_err *err)
{
    if (strcmp(w->s.route, "openblas") != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "route %s is not a CPU GEMM route", w->s.route);
    long long m = w->s.m, n = w->s.n, k = w->s.k;
    w->seed_a = 0xA11CE + (unsigned long long)w->s.dtype;
    w->seed_w = 0xB0B + (unsigned long long)w->s.dtype;
    if (w->s.dtype == GV_F32) {
        w->fa = malloc(sizeof(float) * (size_t)(m * k));
        w->fw = malloc(sizeof(float) * (size_t)(n * k));
        w->fc = malloc(sizeof(float) * (size_t)(m * n));
        if (!w->fa || !w->fw || !w->fc)
            return gv_err_set(err, GV_E_NOMEM, "GEMM %lldx%lldx%lld operands", m, n, k);
        for (long long i = 0; i < m * k; i++)
            w->fa[i] = (float)gv_bench_value(GV_F32, w->seed_a, (unsigned long long)i);
        for (long long i = 0; i < n * k; i++)
            w->fw[i] = (float)gv_bench_value(GV_F32, w->seed_w, (unsigned long long)i);
        snprintf(impl, implsz, "cblas_sgemm (OpenBLAS), row-major C = A.W^T");
    } else if (w->s.dtype == GV_F64) {
        w->da = malloc(sizeof(double) * (size_t)(m * k));
        w->dw = malloc(sizeof(double) * (size_t)(n * k));
        w->dc = malloc(sizeof(double) * (size_t)(m * n));
        if (!w->da || !w->dw || !w->dc)
            return gv_err_set(err, GV_E_NOMEM, "GEMM %lldx%lldx%lld operands", m, n, k);
        for (long long i = 0; i < m * k; i++)
            w->da[i] = gv_bench_value(GV_F64, w->seed_a, (unsigned long long)i);
        for (long long i = 0; i < n * k; i++)
            w->dw[i] = gv_bench_value(GV_F64, w->seed_w, (unsigned long long)i);
        snprintf(impl, implsz, "cblas_dgemm (OpenBLAS), row-major C = A.W^T");
    } else {
        return gv_err_set(err, GV_E_UNSUPPORTED, "OpenBLAS's CBLAS interface has no %s GEMM",
                          gv_dtype_name(w->s.dtype));
    }
    return GV_OK;
}

static void gemm_once(struct gv_bw *w)
{
    int m = (int)w->s.m, n = (int)w->s.n, k = (int)w->s.k;
    if (w->fa)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, w->fa, k, w->fw, k,
                    0.0f, w->fc, n);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, w->da, k, w->dw, k,
                    0.0, w->dc, n);
}

static void gemm_check(struct gv_bw *w, int *ok, char *what, size_t whatsz)
{
    double tol = w->fa ? 1e-5 : 1e-12, worst = 0;
    int bad = 0;
    for (int q = 0; q < GEMM_SAMPLES; q++) {
        unsigned long long h = gv_bench_hash(0xC4EC, (unsigned)q);
        long long i = q == 0 ? w->s.m - 1 : (long long)(h % (unsigned long long)w->s.m);
        long long j = q == 0 ? w->s.n - 1 : (long long)((h >> 32) % (unsigned long long)w->s.n);
        double ref = 0, scale = 0;
        for (long long t = 0; t < w->s.k; t++) {
            double a = gv_bench_value(w->s.dtype, w->seed_a, (unsigned long long)(i * w->s.k + t));
            double b = gv_bench_value(w->s.dtype, w->seed_w, (unsigned long long)(j * w->s.k + t));
            ref += a * b;
            scale += fabs(a * b);
        }
        double got = w->fc ? w->fc[i * w->s.n + j] : w->dc[i * w->s.n + j];
        double e = fabs(got - ref) / scale;
        if (!(e <= tol))
            bad++;
        if (e > worst || e != e)
            worst = e;
    }
    *ok = bad == 0;
    snprintf(what, whatsz, "%d sampled elements of the last product against an fp64 product of "
             "the same operands: %d beyond %.0e of sum|a*w| (worst %.2g)", GEMM_SAMPLES, bad, tol,
             worst);
}

/* ---- STREAM over threads ---- */

struct part {
    struct gv_bw *w;
    long long lo, hi;
    int t;
};

static void *stream_part(void *arg)
{
    struct part *p = arg;
    struct gv_bw *w = p->w;
    float *a = w->x, *b = w->y, *c = w->z, s = 3.0f, acc = 0.0f;
    switch (w->s.stream) {
    case GV_ST_COPY:
        for (long long i = p->lo; i < p->hi; i++)
            c[i] = a[i];
        break;
    case GV_ST_SCALE:
        for (long long i = p->lo; i < p->hi; i++)
            b[i] = s * c[i];
        break;
    case GV_ST_ADD:
        for (long long i = p->lo; i < p->hi; i++)
            c[i] = a[i] + b[i];
        break;
    case GV_ST_TRIAD:
        for (long long i = p->lo; i < p->hi; i++)
            a[i] = b[i] + s * c[i];
        break;
    case GV_ST_READ: {
        /* eight independent sums, so that the adds do not wait on each other */
        float part[8] = {0};
        long long i = p->lo;
        for (; i + 8 <= p->hi; i += 8)
            for (int j = 0; j < 8; j++)
                part[j] += a[i + j];
        for (; i < p->hi; i++)
            part[0] += a[i];
        for (int j = 0; j < 8; j++)
            acc += part[j];
        w->out[p->t] = acc;
        break;
    }
    }
    return NULL;
}

static void stream_once(struct gv_bw *w)
{
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    struct part parts[MAX_THREADS];
    int nt = w->threads;
    for (int t = 0; t < nt; t++)
        parts[t] = (struct part){w, w->n * t / nt, w->n * (t + 1) / nt, t};
    for (int t = 1; t < nt; t++)
        started[t] = pthread_create(&th[t], NULL, stream_part, &parts[t]) == 0;
    stream_part(&parts[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            stream_part(&parts[t]); /* no thread: the part still runs, here */
    }
}

static float f_of(long long i) { return (float)(i & 0xFFFFF); }

static int stream_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                          struct gv_err *err)
{
    w->n = (long long)(w->s.bytes / 4);
    if (w->n < 64)
        return gv_err_set(err, GV_E_USAGE, "a memory benchmark needs at least 256 bytes");
    w->threads = b->threads;
    w->x = malloc((size_t)w->n * 4);
    w->y = malloc((size_t)w->n * 4);
    w->z = malloc((size_t)w->n * 4);
    w->out = calloc(MAX_THREADS, sizeof(float));
    if (!w->x || !w->y || !w->z || !w->out)
        return gv_err_set(err, GV_E_NOMEM, "three arrays of %zu bytes", w->s.bytes);
    for (long long i = 0; i < w->n; i++) {
        w->x[i] = f_of(i) + 1.0f;
        w->y[i] = f_of(i) + 2.0f;
        w->z[i] = f_of(i) + 3.0f;
    }
    static const char *const names[] = {"copy c=a", "scale b=s*c", "add c=a+b", "triad a=b+s*c",
                                        "read sum(a)"};
    snprintf(impl, implsz, "C loop %s over %d thread(s)", names[w->s.stream], w->threads);
    return GV_OK;
}

static void stream_check(struct gv_bw *w, int *ok, char *what, size_t whatsz)
{
    int bad = 0, seen = 0;
    if (w->s.stream == GV_ST_READ) {
        for (int t = 0; t < w->threads; t++) {
            float part[8] = {0}, acc = 0.0f;
            long long lo = w->n * t / w->threads, hi = w->n * (t + 1) / w->threads, i = lo;
            for (; i + 8 <= hi; i += 8)
                for (int j = 0; j < 8; j++)
                    part[j] += f_of(i + j) + 1.0f;
            for (; i < hi; i++)
                part[0] += f_of(i) + 1.0f;
            for (int j = 0; j < 8; j++)
                acc += part[j];
            bad += w->out[t] != acc;
            seen++;
        }
    } else {
        const float *arr = w->s.stream == GV_ST_COPY || w->s.stream == GV_ST_ADD ? w->z
                           : w->s.stream == GV_ST_SCALE                         ? w->y
                                                                                : w->x;
        for (int q = 0; q < 4096; q++) {
            long long i = q == 0 ? w->n - 1
                                 : (long long)(gv_bench_hash(0x5EED, (unsigned)q) %
                                               (unsigned long long)w->n);
            float f = f_of(i), e;
            switch (w->s.stream) {
            case GV_ST_COPY: e = f + 1.0f; break;
            case GV_ST_SCALE: e = 3.0f * (f + 3.0f); break;
            case GV_ST_ADD: e = (f + 1.0f) + (f + 2.0f); break;
            default: e = (f + 2.0f) + 3.0f * (f + 3.0f); break;
            }
            bad += arr[i] != e;
            seen++;
        }
    }
    *ok = bad == 0;
    snprintf(what, whatsz, "%d sampled results compared exactly with the known values: %d wrong",
             seen, bad);
}

/* ---- the interface ---- */

static void c_release(struct gv_bdev *b, struct gv_bw *w)
{
    (void)b;
    if (!w)
        return;
    free(w->fa), free(w->fw), free(w->fc), free(w->da), free(w->dw), free(w->dc);
    free(w->x), free(w->y), free(w->z), free(w->out);
    free(w);
}

static int c_prepare(struct gv_bdev *b, const struct gv_bw_spec *s, struct gv_bw **out, char *impl,
                     size_t implsz, struct gv_err *err)
{
    *out = NULL;
    if (s->kind != GV_BW_GEMM && s->kind != GV_BW_STREAM)
        return gv_err_set(err, GV_E_UNSUPPORTED, "not on the CPU backend (no device memory)");
    struct gv_bw *w = calloc(1, sizeof *w);
    if (!w)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    w->s = *s;
    int rc = s->kind == GV_BW_GEMM ? gemm_prepare(w, impl, implsz, err)
                                   : stream_prepare(b, w, impl, implsz, err);
    if (rc) {
        c_release(b, w);
        return rc;
    }
    *out = w;
    return GV_OK;
}

static int c_time(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec, struct gv_err *err)
{
    (void)b, (void)err;
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        if (w->s.kind == GV_BW_GEMM)
            gemm_once(w);
        else
            stream_once(w);
    }
    *sec = now() - t0;
    return GV_OK;
}

/* Test-only: GPUVET_TEST_BENCH_CORRUPT=1 spoils the last element of the result
 * before the check (every check samples it), so a wrong result must fail. */
static void test_corrupt(struct gv_bw *w)
{
    const char *v = getenv("GPUVET_TEST_BENCH_CORRUPT");
    if (!v || strcmp(v, "1") != 0)
        return;
    if (w->fc)
        w->fc[w->s.m * w->s.n - 1] += 1.0f;
    else if (w->dc)
        w->dc[w->s.m * w->s.n - 1] += 1.0;
    else if (w->s.stream == GV_ST_READ)
        w->out[0] = -1.0f;
    else
        (w->s.stream == GV_ST_SCALE ? w->y : w->s.stream == GV_ST_TRIAD ? w->x : w->z)[w->n - 1] += 1.0f;
}

static int c_check(struct gv_bdev *b, struct gv_bw *w, int *ok, char *what, size_t whatsz,
                   struct gv_err *err)
{
    (void)b, (void)err;
    test_corrupt(w);
    if (w->s.kind == GV_BW_GEMM)
        gemm_check(w, ok, what, whatsz);
    else
        stream_check(w, ok, what, whatsz);
    return GV_OK;
}

const struct gv_bench_backend gv_bench_cpu = {
    "cpu", c_open, c_close, c_describe, c_conditions, c_prepare, c_time, c_check, c_release,
    c_count, c_peer_access, c_pci_address, NULL,
};
