/* The CPU backend: computes every case in its DECLARED precision, so that a
 * correct stack has something to be compared with and the suite can run
 * anywhere:
 *   - GEMM/CONV2D: inputs decoded from their storage format; fp32
 *     accumulation in float (products and sums rounded to fp32, k in order);
 *     TF32 compute rounds the inputs to 10 fraction bits (RNE) first; fp16
 *     accumulation (f16acc16) rounds every partial sum to fp16; fp64 in double;
 *   - softmax, norms, sdpa, sum/mean, unary: computed in float (double for f64)
 *     from decoded inputs, outputs rounded RNE to the output format;
 *   - convert: one RNE conversion to the target format.
 * Every output element is computed by one thread in a fixed order, so
 * results are bit-identical whatever the thread count.
 *
 * TESTING AID: "cpu:emulate=A+B" makes the backend misbehave the way some
 * GPU stacks do, so that detection (check) and attribution (compare) can be
 * tested without a GPU:
 *   tf32      fp32 GEMM/conv inputs rounded to TF32 (RNE), as cuBLAS/hipBLASLt
 *             with TF32 allowed;  tf32rz: the same with truncation
 *   fp16acc   fp16 accumulation inside fp16 GEMMs that declare fp32 accumulation
 *   ftz       subnormal fp16/bf16 GEMM/conv inputs and outputs flushed to zero
 *             (MI200 FP16/BF16 MFMA)
 *   trunc     round-toward-zero products and accumulation in GEMM/conv
 *             (fp32 and fp16 accumulators)
 *   bf16gemm  fp16 GEMM inputs rounded to bf16 inside the multiply
 *             (ROCBLAS_INTERNAL_FP16_ALT_IMPL)
 * Options: "threads=N" (default: all online CPUs). Options are separated by
 * commas: "cpu:threads=1,emulate=tf32+ftz".
 *
 * "cpu:emulate=FILE.json[,route=NAME]" (a value with a '/' or ending in
 * .json): GEMMs computed by the block-FMA model (num/mma.h) that a probe
 * fingerprint describes (fpmodel.h; docs/probe.md, "Emulating a
 * fingerprint"); GEMMs of formats it has no model for are unsupported,
 * convolutions too; the other operations are computed as above.
 *
 * TESTING AID (fleet tests): GPUVET_TEST_FLIP=CASE_GLOB flips the lowest
 * mantissa bit of output element 0 of every case matching the glob on every
 * second pass of the process (gv_cpu_test_pass: passes 2, 4, ...), like a
 * device with an intermittent fault. The description says so (testing_aid,
 * test_flip): it never passes unnoticed.
 *
 * TESTING AID (probe tests): GPUVET_TEST_RACY_SUM=SEED makes long row sums
 * (4096 terms or more) behave like a reduction with a race: on about one
 * call in eight (which calls: a hash of SEED and the call's number in the
 * process) the lowest mantissa bit of output element 0 differs. Described as
 * test_racy_sum. */
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/globs.h"
#include "base/json.h"
#include "dev/cpu/cpu.h"
#include "dev/cpu/fpmodel.h"
#include "dev/backend.h"
#include "num/fp.h"
#include "num/mma.h"
#include "num/op.h"

enum {
    EMU_TF32 = 1 << 0,
    EMU_TF32RZ = 1 << 1,
    EMU_FP16ACC = 1 << 2,
    EMU_FTZ = 1 << 3,
    EMU_TRUNC = 1 << 4,
    EMU_BF16GEMM = 1 << 5,
};

static const struct {
    const char *name;
    unsigned flag;
    const char *what;
} emulations[] = {
    {"tf32", EMU_TF32, "fp32 GEMM/conv inputs rounded to TF32 (RNE)"},
    {"tf32rz", EMU_TF32RZ, "fp32 GEMM/conv inputs truncated to TF32"},
    {"fp16acc", EMU_FP16ACC, "fp16 accumulation in fp16 GEMMs declaring fp32 accumulation"},
    {"ftz", EMU_FTZ, "fp16/bf16 GEMM/conv subnormal inputs and outputs flushed to zero"},
    {"trunc", EMU_TRUNC, "round-toward-zero products and accumulation in GEMM/conv"},
    {"bf16gemm", EMU_BF16GEMM, "fp16 GEMM inputs rounded to bf16 inside the multiply"},
};
#define N_EMU (sizeof emulations / sizeof emulations[0])

struct gv_device {
    unsigned emu;
    int nthreads;
    char cpu_model[128];
    char fp_file[400];  /* emulate=FILE.json: the fingerprint emulated */
    char fp_route[64];  /* route=NAME */
    struct gv_fpmodel *fp;
};

/* ---------- options ---------- */

static int parse_emulate(const char *v, unsigned *emu, struct gv_err *err)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf)
        return gv_err_set(err, GV_E_USAGE, "--device cpu: emulate=%s is too long", v);
    char *save = NULL;
    for (char *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
        size_t i;
        for (i = 0; i < N_EMU; i++)
            if (!strcmp(t, emulations[i].name))
                break;
        if (i == N_EMU)
            return gv_err_set(err, GV_E_USAGE,
                              "--device cpu: unknown emulation '%s' (known: tf32, tf32rz, "
                              "fp16acc, ftz, trunc, bf16gemm)",
                              t);
        *emu |= emulations[i].flag;
    }
    if (!*emu)
        return gv_err_set(err, GV_E_USAGE, "--device cpu: emulate= needs a value");
    return GV_OK;
}

/* emulate=VALUE names a fingerprint file rather than emulations. */
static int names_file(const char *v)
{
    size_t n = strlen(v);
    return strchr(v, '/') || (n > 5 && !strcmp(v + n - 5, ".json"));
}

static int load_fingerprint(struct gv_device *d, struct gv_err *err)
{
    d->fp = calloc(1, sizeof *d->fp);
    if (!d->fp)
        return gv_err_set(err, GV_E_NOMEM, "cpu backend: out of memory");
    int rc = gv_fpmodel_load(d->fp_file, d->fp_route[0] ? d->fp_route : NULL, d->fp, err);
    if (rc)
        gv_err_prefix(err, "--device cpu:emulate");
    return rc;
}

static int parse_spec(const char *spec, struct gv_device *d, struct gv_err *err)
{
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", spec ? spec : "") >= (int)sizeof buf)
        return gv_err_set(err, GV_E_USAGE, "--device cpu:%s: too long", spec);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "0"))
            continue; /* "cpu:0": the one CPU device */
        if (!strncmp(t, "emulate=", 8) && names_file(t + 8)) {
            if (snprintf(d->fp_file, sizeof d->fp_file, "%s", t + 8) >= (int)sizeof d->fp_file)
                return gv_err_set(err, GV_E_USAGE, "--device cpu: emulate=%s is too long", t + 8);
        } else if (!strncmp(t, "emulate=", 8)) {
            int rc = parse_emulate(t + 8, &d->emu, err);
            if (rc)
                return rc;
        } else if (!strncmp(t, "route=", 6)) {
            if (!t[6] || snprintf(d->fp_route, sizeof d->fp_route, "%s", t + 6) >=
                             (int)sizeof d->fp_route)
                return gv_err_set(err, GV_E_USAGE, "--device cpu: route=%s is empty or too long",
                                  t + 6);
        } else if (!strncmp(t, "threads=", 8)) {
            char *end;
            long n = strtol(t + 8, &end, 10);
            if (*end || n < 1 || n > 64)
                return gv_err_set(err, GV_E_USAGE, "--device cpu: threads=%s is not 1..64",
                                  t + 8);
            d->nthreads = (int)n;
        } else {
            return gv_err_set(err, GV_E_USAGE,
                              "--device cpu: unknown option '%s' (emulate=..., threads=N, "
                              "route=NAME)",
                              t);
        }
    }
    if (d->fp_route[0] && !d->fp_file[0])
        return gv_err_set(err, GV_E_USAGE,
                          "--device cpu: route= goes with emulate=FINGERPRINT.json");
    if (d->fp_file[0] && d->emu)
        return gv_err_set(err, GV_E_USAGE,
                          "--device cpu: emulate=%s is a fingerprint; it does not combine with "
                          "the named emulations",
                          d->fp_file);
    if ((d->emu & EMU_TF32) && (d->emu & EMU_TF32RZ))
        return gv_err_set(err, GV_E_USAGE, "--device cpu: tf32 and tf32rz exclude each other");
    return GV_OK;
}

static void read_cpu_model(char *out, size_t outsz)
{
    snprintf(out, outsz, "unknown");
    char *data;
    size_t len;
    struct gv_err e = {0};
    if (gv_read_file("/proc/cpuinfo", (size_t)4 << 20, &data, &len, &e))
        return;
    char *p = strstr(data, "model name");
    if (p && (p = strchr(p, ':'))) {
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\n");
        snprintf(out, outsz, "%.*s", (int)n, p);
    }
    free(data);
}

static int open_dev(const char *spec, struct gv_device **dev, struct gv_err *err)
{
    *dev = NULL;
    struct gv_device *d = calloc(1, sizeof *d);
    if (!d)
        return gv_err_set(err, GV_E_NOMEM, "cpu backend: out of memory");
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    d->nthreads = n > 0 ? (int)(n > 64 ? 64 : n) : 1;
    int rc = parse_spec(spec, d, err);
    if (!rc && d->fp_file[0])
        rc = load_fingerprint(d, err);
    if (rc) {
        free(d->fp);
        free(d);
        return rc;
    }
    read_cpu_model(d->cpu_model, sizeof d->cpu_model);
    *dev = d;
    return GV_OK;
}

static void close_dev(struct gv_device *dev)
{
    if (dev)
        free(dev->fp);
    free(dev);
}

/* ---------- GPUVET_TEST_FLIP (a testing aid) ---------- */

static int flip_pass = 1;

void gv_cpu_test_pass(int pass) { flip_pass = pass; }

static const char *flip_glob(void)
{
    const char *g = getenv("GPUVET_TEST_FLIP");
    return g && *g ? g : NULL;
}

/* Element 0's lowest mantissa bit: bit 0 of its storage (every format the
 * backend writes stores the mantissa in its low bits, little-endian). */
static void flip_maybe(const struct gv_case *c, struct gv_buffer *out)
{
    const char *g = flip_glob();
    if (g && flip_pass % 2 == 0 && out->count && gv_globs_match(g, c->id))
        ((unsigned char *)out->data)[0] ^= 1u;
}

/* ---------- GPUVET_TEST_RACY_SUM (a testing aid) ---------- */

static unsigned long racy_seed(void)
{
    const char *v = getenv("GPUVET_TEST_RACY_SUM");
    return v && *v ? strtoul(v, NULL, 10) : 0;
}

static void racy_maybe(const struct gv_case *c, struct gv_buffer *out)
{
    static unsigned long calls;
    unsigned long seed = racy_seed();
    if (!seed || (c->op != GV_OP_SUM && c->op != GV_OP_MEAN) || c->len < 4096 || !out->count)
        return;
    unsigned long long h = seed * 0x9e3779b97f4a7c15ull + __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finalizer */
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    if (h % 8 == 0)
        ((unsigned char *)out->data)[0] ^= 1u;
}

static json_t *describe(struct gv_device *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "backend", json_string("cpu"));
    char name[200];
    snprintf(name, sizeof name, "CPU (%s)", d->cpu_model);
    gv_json_set_str(o, "name", name);
    gv_json_set_str(o, "cpu_model", d->cpu_model);
    json_object_set_new(o, "threads", json_integer(d->nthreads));
    json_t *emu = json_array();
    for (size_t i = 0; i < N_EMU; i++)
        if (d->emu & emulations[i].flag)
            json_array_append_new(emu, json_string(emulations[i].name));
    json_object_set_new(o, "emulate", emu);
    if (d->fp)
        json_object_set_new(o, "emulate_fingerprint", gv_fpmodel_json(d->fp, d->fp_file));
    json_object_set_new(o, "testing_aid",
                        json_boolean(d->emu != 0 || d->fp || flip_glob() || racy_seed()));
    if (flip_glob())
        gv_json_set_str(o, "test_flip", flip_glob());
    if (racy_seed())
        json_object_set_new(o, "test_racy_sum", json_integer((json_int_t)racy_seed()));
    json_object_set_new(o, "impl", json_string("gpuvet reference-precision CPU kernels"));
    return o;
}

/* ---------- threads ---------- */

typedef void (*range_fn)(void *ctx, long lo, long hi);

struct worker {
    range_fn fn;
    void *ctx;
    long lo, hi;
    int rz;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int old = fegetround();
    if (w->rz)
        fesetround(FE_TOWARDZERO);
    w->fn(w->ctx, w->lo, w->hi);
    fesetround(old);
    return NULL;
}

/* Runs fn over [0, n) split into contiguous ranges, one per thread. rz: run
 * the floating-point work with round-toward-zero (EMU_TRUNC). */
static void parallel_for(const struct gv_device *d, long n, int rz, range_fn fn, void *ctx)
{
    int t = d->nthreads > 64 ? 64 : d->nthreads;
    if (t > n)
        t = (int)(n > 0 ? n : 1);
    struct worker w[64];
    pthread_t th[64];
    int started[64] = {0};
    for (int i = 0; i < t; i++)
        w[i] = (struct worker){fn, ctx, n * i / t, n * (i + 1) / t, rz};
    for (int i = 1; i < t; i++)
        started[i] = pthread_create(&th[i], NULL, worker_main, &w[i]) == 0;
    worker_main(&w[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            worker_main(&w[i]); /* could not start a thread: do its share here */
    }
}

/* ---------- format helpers ---------- */

static int is_sub16(uint16_t h) { return (h & 0x7c00) == 0 && (h & 0x3ff) != 0; }
static int is_subbf16(uint16_t h) { return (h & 0x7f80) == 0 && (h & 0x7f) != 0; }

/* Element i of a 16/32-bit float storage buffer as float, with FTZ applied to
 * fp16/bf16 when asked. */
static float load_f(const struct gv_buffer *b, size_t i, int ftz)
{
    switch (b->dtype) {
    case GV_F32:
        return ((const float *)b->data)[i];
    case GV_F16: {
        uint16_t h = ((const uint16_t *)b->data)[i];
        if (ftz && is_sub16(h))
            h &= 0x8000;
        return gv_f16_to_f32(h);
    }
    case GV_BF16: {
        uint16_t h = ((const uint16_t *)b->data)[i];
        if (ftz && is_subbf16(h))
            h &= 0x8000;
        return gv_bf16_to_f32(h);
    }
    default:
        return (float)gv_fp_load(b->data, b->dtype, i);
    }
}

static void store_f(struct gv_buffer *b, size_t i, float x, int ftz)
{
    switch (b->dtype) {
    case GV_F32:
        ((float *)b->data)[i] = x;
        break;
    case GV_F16: {
        uint16_t h = gv_f32_to_f16(x, GV_RNE);
        if (ftz && is_sub16(h))
            h &= 0x8000;
        ((uint16_t *)b->data)[i] = h;
        break;
    }
    case GV_BF16: {
        uint16_t h = gv_f32_to_bf16(x, GV_RNE);
        if (ftz && is_subbf16(h))
            h &= 0x8000;
        ((uint16_t *)b->data)[i] = h;
        break;
    }
    default:
        gv_fp_store(b->data, b->dtype, i, (double)x);
        break;
    }
}

/* ---------- GEMM and CONV2D (matrix-unit work, where emulations apply) ---------- */

struct mm_mode {
    int ftz;        /* fp16/bf16 subnormals flushed */
    int tf32;       /* 0 none, 1 RNE, 2 truncation */
    int bf16;       /* fp16 inputs rounded to bf16 */
    int acc16;      /* accumulate in fp16 */
    int rz;         /* round-toward-zero arithmetic */
};

static struct mm_mode mm_mode_of(const struct gv_device *d, const struct gv_case *c)
{
    struct mm_mode m = {0};
    int half = c->in_dtype == GV_F16 || c->in_dtype == GV_BF16;
    m.ftz = half && (d->emu & EMU_FTZ);
    if (c->compute_dtype == GV_TF32)
        m.tf32 = 1;
    if (c->in_dtype == GV_F32 && c->compute_dtype == GV_F32)
        m.tf32 = (d->emu & EMU_TF32) ? 1 : (d->emu & EMU_TF32RZ) ? 2 : 0;
    if (c->op == GV_OP_GEMM && c->in_dtype == GV_F16 && c->compute_dtype == GV_F32) {
        m.bf16 = (d->emu & EMU_BF16GEMM) != 0;
        m.acc16 = (d->emu & EMU_FP16ACC) != 0;
    }
    if (c->compute_dtype == GV_F16)
        m.acc16 = 1;
    m.rz = c->compute_dtype != GV_F64 && (d->emu & EMU_TRUNC);
    return m;
}

/* Decode an input to floats with the mode's input transformations. */
static float *decode_inputs(const struct gv_buffer *b, const struct mm_mode *m)
{
    float *f = malloc((b->count ? b->count : 1) * sizeof *f);
    if (!f)
        return NULL;
    for (size_t i = 0; i < b->count; i++) {
        float x = load_f(b, i, m->ftz);
        if (m->tf32)
            x = gv_round_f32_to_tf32(x, m->tf32 == 2 ? GV_RTZ : GV_RNE);
        if (m->bf16)
            x = gv_bf16_to_f32(gv_f32_to_bf16(x, GV_RNE));
        f[i] = x;
    }
    return f;
}

struct gemm_job {
    const float *a, *b;
    float *c;
    long m, n, k;
    int acc16, rz;
};

#define KB 128
#define JB 256

/* c[j] += a * b[j] for four rows at once (one load of b[j] feeds four
 * accumulators); each element still adds its products in k order. */
static void axpy4(float *restrict c0, float *restrict c1, float *restrict c2,
                  float *restrict c3, const float *restrict b, float a0, float a1, float a2,
                  float a3, long n)
{
    for (long j = 0; j < n; j++) {
        float bj = b[j];
        c0[j] += a0 * bj;
        c1[j] += a1 * bj;
        c2[j] += a2 * bj;
        c3[j] += a3 * bj;
    }
}

static void axpy1(float *restrict c, const float *restrict b, float a, long n)
{
    for (long j = 0; j < n; j++)
        c[j] += a * b[j];
}

/* fp16 accumulation: c + a*b rounded once to fp16. The sum is formed in
 * double, where it is exact or off only far below fp16's rounding point (a
 * product of fp16 values has 22 bits); a float sum rounded again to fp16
 * could land on a tie that the exact sum is not on (double rounding). */
static void axpy16(float *restrict c, const float *restrict b, float a, long n, int rz)
{
    enum gv_round r = rz ? GV_RTZ : GV_RNE;
    for (long j = 0; j < n; j++)
        c[j] = gv_f16_to_f32((uint16_t)gv_fp_encode((double)c[j] + (double)a * b[j], GV_F16, r));
}

/* Rows [lo, hi) of one GEMM in float: c[i][j] = sum over k in order. Blocked
 * over j and k; each element still accumulates k = 0..K-1 in sequence. */
static void gemm_rows(void *ctx, long lo, long hi)
{
    const struct gemm_job *g = ctx;
    const long K = g->k, N = g->n;
    for (long i = lo; i < hi; i++)
        memset(g->c + i * N, 0, (size_t)N * sizeof(float));
    for (long j0 = 0; j0 < N; j0 += JB) {
        long jn = N - j0 < JB ? N - j0 : JB;
        for (long k0 = 0; k0 < K; k0 += KB) {
            long kn = K - k0 < KB ? K - k0 : KB;
            long i = lo;
            for (; !g->acc16 && i + 4 <= hi; i += 4) {
                float *c = g->c + i * N + j0;
                const float *a = g->a + i * K;
                for (long k = k0; k < k0 + kn; k++)
                    axpy4(c, c + N, c + 2 * N, c + 3 * N, g->b + k * N + j0, a[k], a[K + k],
                          a[2 * K + k], a[3 * K + k], jn);
            }
            for (; i < hi; i++) {
                float *c = g->c + i * N + j0;
                const float *a = g->a + i * K;
                for (long k = k0; k < k0 + kn; k++) {
                    if (g->acc16)
                        axpy16(c, g->b + k * N + j0, a[k], jn, g->rz);
                    else
                        axpy1(c, g->b + k * N + j0, a[k], jn);
                }
            }
        }
    }
}

struct dgemm_job {
    const double *a, *b;
    double *c;
    long m, n, k;
};

static void dgemm_rows(void *ctx, long lo, long hi)
{
    const struct dgemm_job *g = ctx;
    for (long i = lo; i < hi; i++)
        memset(g->c + i * g->n, 0, (size_t)g->n * sizeof(double));
    for (long j0 = 0; j0 < g->n; j0 += JB) {
        long jn = g->n - j0 < JB ? g->n - j0 : JB;
        for (long k0 = 0; k0 < g->k; k0 += KB) {
            long kn = g->k - k0 < KB ? g->k - k0 : KB;
            for (long i = lo; i < hi; i++) {
                double *c = g->c + i * g->n + j0;
                for (long k = k0; k < k0 + kn; k++) {
                    const double a = g->a[i * g->k + k];
                    const double *b = g->b + k * g->n + j0;
                    for (long j = 0; j < jn; j++)
                        c[j] += a * b[j];
                }
            }
        }
    }
}

static int run_gemm_f64(const struct gv_device *d, const struct gv_case *c,
                        const struct gv_buffer *in, struct gv_buffer *out)
{
    long batch = c->batch > 0 ? c->batch : 1;
    for (long bi = 0; bi < batch; bi++) {
        struct dgemm_job g = {(const double *)in[0].data + bi * c->m * c->k,
                              (const double *)in[1].data + bi * c->k * c->n,
                              (double *)out->data + bi * c->m * c->n, c->m, c->n, c->k};
        parallel_for(d, c->m, 0, dgemm_rows, &g);
    }
    return GV_OK;
}

static int run_gemm(const struct gv_device *d, const struct gv_case *c,
                    const struct gv_buffer *in, struct gv_buffer *out, struct gv_err *err)
{
    if (d->fp) {
        const struct gv_fpmodel_entry *e =
            gv_fpmodel_find(d->fp, c->in_dtype, c->compute_dtype, c->out_dtype);
        long batch = c->batch > 0 ? c->batch : 1;
        int rc = gv_mma_gemm(gv_fpmodel_model_for(e, c->k), &in[0], &in[1], out, batch, c->m,
                             c->n, c->k, d->nthreads, err);
        return rc ? gv_err_prefix(err, "%s", c->id) : GV_OK;
    }
    if (c->in_dtype == GV_F64)
        return run_gemm_f64(d, c, in, out);
    struct mm_mode m = mm_mode_of(d, c);
    long batch = c->batch > 0 ? c->batch : 1;
    float *a = decode_inputs(&in[0], &m), *b = decode_inputs(&in[1], &m);
    size_t nacc = (size_t)(batch * c->m * c->n);
    float *acc = malloc((nacc ? nacc : 1) * sizeof(float));
    if (!a || !b || !acc) {
        free(a);
        free(b);
        free(acc);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", c->id);
    }
    for (long bi = 0; bi < batch; bi++) {
        struct gemm_job g = {a + bi * c->m * c->k, b + bi * c->k * c->n,
                             acc + bi * c->m * c->n, c->m, c->n, c->k, m.acc16, m.rz};
        parallel_for(d, c->m, m.rz, gemm_rows, &g);
    }
    for (size_t i = 0; i < out->count; i++)
        store_f(out, i, acc[i], m.ftz);
    free(a);
    free(b);
    free(acc);
    return GV_OK;
}

struct conv_job {
    const struct gv_case *c;
    const float *x, *w;
    float *y;
    long p, q;
    int rz;
};

/* Output planes [lo, hi) of (n, k): y[n][k] = sum over c, r, s in that order. */
static void conv_planes(void *ctx, long lo, long hi)
{
    const struct conv_job *j = ctx;
    const struct gv_case *c = j->c;
    for (long nk = lo; nk < hi; nk++) {
        long n = nk / c->k, k = nk % c->k;
        float *y = j->y + nk * j->p * j->q;
        memset(y, 0, (size_t)(j->p * j->q) * sizeof(float));
        for (long ch = 0; ch < c->c; ch++)
            for (long r = 0; r < c->r; r++)
                for (long s = 0; s < c->s; s++) {
                    float wv = j->w[((k * c->c + ch) * c->r + r) * c->s + s];
                    const float *x = j->x + (n * c->c + ch) * c->h * c->w;
                    for (long p = 0; p < j->p; p++) {
                        long h = p * c->stride + r - c->pad;
                        if (h < 0 || h >= c->h)
                            continue;
                        for (long q = 0; q < j->q; q++) {
                            long w = q * c->stride + s - c->pad;
                            if (w >= 0 && w < c->w)
                                y[p * j->q + q] += wv * x[h * c->w + w];
                        }
                    }
                }
    }
}

static int run_conv(const struct gv_device *d, const struct gv_case *c,
                    const struct gv_buffer *in, struct gv_buffer *out, struct gv_err *err)
{
    struct mm_mode m = mm_mode_of(d, c);
    long p = (c->h + 2 * c->pad - c->r) / c->stride + 1;
    long q = (c->w + 2 * c->pad - c->s) / c->stride + 1;
    float *x = decode_inputs(&in[0], &m), *w = decode_inputs(&in[1], &m);
    float *y = malloc((out->count ? out->count : 1) * sizeof(float));
    if (!x || !w || !y) {
        free(x);
        free(w);
        free(y);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", c->id);
    }
    struct conv_job j = {c, x, w, y, p, q, m.rz};
    parallel_for(d, c->n * c->k, m.rz, conv_planes, &j);
    for (size_t i = 0; i < out->count; i++)
        store_f(out, i, y[i], m.ftz);
    free(x);
    free(w);
    free(y);
    return GV_OK;
}

/* ---------- row-wise operations (float compute, double for f64) ---------- */

struct rows_job {
    const struct gv_case *c;
    const struct gv_buffer *in;
    struct gv_buffer *out;
    volatile int oom; /* a worker could not allocate its row buffers */
};

/* Sum of n values in blocks of 256 (each summed in order), then the block
 * sums in order: the usual GPU-style blocked reduction. */
static float sum_f(const float *v, long n)
{
    float total = 0.0f;
    for (long b = 0; b < n; b += 256) {
        float part = 0.0f;
        long e = b + 256 < n ? b + 256 : n;
        for (long i = b; i < e; i++)
            part += v[i];
        total += part;
    }
    return total;
}

static double sum_d(const double *v, long n)
{
    double total = 0.0;
    for (long b = 0; b < n; b += 256) {
        double part = 0.0;
        long e = b + 256 < n ? b + 256 : n;
        for (long i = b; i < e; i++)
            part += v[i];
        total += part;
    }
    return total;
}

static void load_row(const struct gv_buffer *b, size_t off, long n, float *v)
{
    for (long i = 0; i < n; i++)
        v[i] = load_f(b, off + (size_t)i, 0);
}

static void softmax_row(const float *x, float *y, long n)
{
    float mx = -INFINITY;
    for (long i = 0; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    for (long i = 0; i < n; i++)
        y[i] = expf(x[i] - mx);
    float s = sum_f(y, n);
    for (long i = 0; i < n; i++)
        y[i] = y[i] / s;
}

static void norm_row(const struct gv_case *c, const float *x, const float *gamma,
                     const float *beta, float *y, long n)
{
    if (c->op == GV_OP_LAYERNORM) {
        float mean = sum_f(x, n) / (float)n;
        for (long i = 0; i < n; i++)
            y[i] = (x[i] - mean) * (x[i] - mean);
        float var = sum_f(y, n) / (float)n;
        float inv = 1.0f / sqrtf(var + (float)c->eps);
        for (long i = 0; i < n; i++)
            y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
    } else {
        for (long i = 0; i < n; i++)
            y[i] = x[i] * x[i];
        float ms = sum_f(y, n) / (float)n;
        float inv = 1.0f / sqrtf(ms + (float)c->eps);
        for (long i = 0; i < n; i++)
            y[i] = x[i] * inv * gamma[i];
    }
}

static void rows_f32(void *ctx, long lo, long hi)
{
    const struct rows_job *j = ctx;
    const struct gv_case *c = j->c;
    long n = c->len;
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    float *g = NULL, *be = NULL;
    if (c->op == GV_OP_LAYERNORM || c->op == GV_OP_RMSNORM) {
        g = malloc((size_t)n * sizeof(float));
        be = calloc((size_t)n, sizeof(float));
        if (g && be) {
            load_row(&j->in[1], 0, n, g);
            if (c->op == GV_OP_LAYERNORM)
                load_row(&j->in[2], 0, n, be);
        }
    }
    if (!x || !y || ((c->op == GV_OP_LAYERNORM || c->op == GV_OP_RMSNORM) && (!g || !be))) {
        ((struct rows_job *)ctx)->oom = 1;
        goto out;
    }
    for (long r = lo; r < hi; r++) {
        load_row(&j->in[0], (size_t)(r * n), n, x);
        if (c->op == GV_OP_SUM || c->op == GV_OP_MEAN) {
            float s = sum_f(x, n);
            store_f(j->out, (size_t)r, c->op == GV_OP_MEAN ? s / (float)n : s, 0);
            continue;
        }
        if (c->op == GV_OP_SOFTMAX)
            softmax_row(x, y, n);
        else
            norm_row(c, x, g, be, y, n);
        for (long i = 0; i < n; i++)
            store_f(j->out, (size_t)(r * n + i), y[i], 0);
    }
out:
    free(x);
    free(y);
    free(g);
    free(be);
}

/* fp64 versions (only sum/mean are in the catalog, but all are supported). */
static void rows_f64(void *ctx, long lo, long hi)
{
    const struct rows_job *j = ctx;
    const struct gv_case *c = j->c;
    long n = c->len;
    const double *x0 = j->in[0].data;
    double *y = j->out->data;
    for (long r = lo; r < hi; r++) {
        const double *x = x0 + r * n;
        if (c->op == GV_OP_SUM || c->op == GV_OP_MEAN) {
            double s = sum_d(x, n);
            y[r] = c->op == GV_OP_MEAN ? s / (double)n : s;
        } else if (c->op == GV_OP_SOFTMAX) {
            double mx = -INFINITY, s = 0.0;
            for (long i = 0; i < n; i++)
                mx = x[i] > mx ? x[i] : mx;
            for (long i = 0; i < n; i++)
                s += (y[r * n + i] = exp(x[i] - mx));
            for (long i = 0; i < n; i++)
                y[r * n + i] /= s;
        } else {
            const double *g = j->in[1].data;
            const double *be = c->op == GV_OP_LAYERNORM ? j->in[2].data : NULL;
            double mean = c->op == GV_OP_LAYERNORM ? sum_d(x, n) / (double)n : 0.0, v = 0.0;
            for (long i = 0; i < n; i++)
                v += (x[i] - mean) * (x[i] - mean);
            double inv = 1.0 / sqrt(v / (double)n + c->eps);
            for (long i = 0; i < n; i++)
                y[r * n + i] = (x[i] - mean) * inv * g[i] + (be ? be[i] : 0.0);
        }
    }
}

static int run_rows(const struct gv_device *d, const struct gv_case *c,
                    const struct gv_buffer *in, struct gv_buffer *out, struct gv_err *err)
{
    struct rows_job j = {c, in, out, 0};
    parallel_for(d, c->rows, 0, c->in_dtype == GV_F64 ? rows_f64 : rows_f32, &j);
    if (j.oom)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", c->id);
    return GV_OK;
}

/* ---------- SDPA ---------- */

struct sdpa_job {
    const struct gv_case *c;
    const float *q, *k, *v;
    struct gv_buffer *out;
    volatile int oom;
};

/* Query rows [lo, hi) over all heads: row = head * seq + i. */
static void sdpa_rows(void *ctx, long lo, long hi)
{
    const struct sdpa_job *j = ctx;
    const struct gv_case *c = j->c;
    long s = c->seq, dh = c->d;
    float scale = 1.0f / sqrtf((float)dh);
    float *p = malloc((size_t)s * sizeof(float)), *o = malloc((size_t)dh * sizeof(float));
    if (!p || !o) {
        ((struct sdpa_job *)ctx)->oom = 1;
        goto out;
    }
    for (long row = lo; row < hi; row++) {
        long h = row / s, i = row % s, len = c->causal ? i + 1 : s;
        const float *q = j->q + row * dh;
        for (long t = 0; t < len; t++) {
            const float *k = j->k + (h * s + t) * dh;
            float dot = 0.0f;
            for (long e = 0; e < dh; e++)
                dot += q[e] * k[e];
            p[t] = dot * scale;
        }
        softmax_row(p, p, len);
        memset(o, 0, (size_t)dh * sizeof(float));
        for (long t = 0; t < len; t++) {
            const float *v = j->v + (h * s + t) * dh;
            for (long e = 0; e < dh; e++)
                o[e] += p[t] * v[e];
        }
        for (long e = 0; e < dh; e++)
            store_f(j->out, (size_t)(row * dh + e), o[e], 0);
    }
out:
    free(p);
    free(o);
}

static int run_sdpa(const struct gv_device *d, const struct gv_case *c,
                    const struct gv_buffer *in, struct gv_buffer *out, struct gv_err *err)
{
    struct mm_mode none = {0};
    float *q = decode_inputs(&in[0], &none), *k = decode_inputs(&in[1], &none),
          *v = decode_inputs(&in[2], &none);
    int rc = GV_OK;
    if (!q || !k || !v) {
        rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", c->id);
    } else {
        struct sdpa_job j = {c, q, k, v, out, 0};
        parallel_for(d, c->bh * c->seq, 0, sdpa_rows, &j);
        if (j.oom)
            rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", c->id);
    }
    free(q);
    free(k);
    free(v);
    return rc;
}

/* ---------- unary and convert ---------- */

/* 1/(1+e^-x) without overflow: for x < 0, e^x/(1+e^x) keeps the tiny
 * (subnormal) results that the naive form flushes to 0. */
static float sigmoid_f(float x)
{
    if (x >= 0)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static double sigmoid_d(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static float unary_f(enum gv_unary u, float x)
{
    switch (u) {
    case GV_UN_EXP: return expf(x);
    case GV_UN_LOG: return logf(x);
    case GV_UN_TANH: return tanhf(x);
    case GV_UN_ERF: return erff(x);
    case GV_UN_GELU: return x * 0.5f * (1.0f + erff(x * (float)M_SQRT1_2));
    case GV_UN_SILU: return x * sigmoid_f(x);
    case GV_UN_SIGMOID: return sigmoid_f(x);
    case GV_UN_RSQRT: return 1.0f / sqrtf(x);
    default: return NAN;
    }
}

static double unary_d(enum gv_unary u, double x)
{
    switch (u) {
    case GV_UN_EXP: return exp(x);
    case GV_UN_LOG: return log(x);
    case GV_UN_TANH: return tanh(x);
    case GV_UN_ERF: return erf(x);
    case GV_UN_GELU: return x * 0.5 * (1.0 + erf(x * M_SQRT1_2));
    case GV_UN_SILU: return x * sigmoid_d(x);
    case GV_UN_SIGMOID: return sigmoid_d(x);
    case GV_UN_RSQRT: return 1.0 / sqrt(x);
    default: return NAN;
    }
}

static void run_unary(const struct gv_case *c, const struct gv_buffer *in,
                      struct gv_buffer *out)
{
    for (size_t i = 0; i < out->count; i++) {
        if (c->in_dtype == GV_F64)
            ((double *)out->data)[i] = unary_d(c->unary, ((const double *)in->data)[i]);
        else
            store_f(out, i, unary_f(c->unary, load_f(in, i, 0)), 0);
    }
}

static void run_convert(const struct gv_buffer *in, struct gv_buffer *out)
{
    for (size_t i = 0; i < out->count; i++) {
        uint32_t bits = gv_fp_encode(gv_fp_load(in->data, in->dtype, i), out->dtype, GV_RNE);
        switch (gv_dtype_size(out->dtype)) {
        case 1: ((uint8_t *)out->data)[i] = (uint8_t)bits; break;
        case 2: ((uint16_t *)out->data)[i] = (uint16_t)bits; break;
        case 4: memcpy((uint32_t *)out->data + i, &bits, 4); break;
        default: gv_fp_store(out->data, out->dtype, i, gv_fp_decode(bits, out->dtype)); break;
        }
    }
}

/* ---------- interface ---------- */

static int storage_ok(enum gv_dtype t)
{
    return t == GV_F64 || t == GV_F32 || t == GV_F16 || t == GV_BF16;
}

/* Under emulate=FINGERPRINT: GEMMs only where the fingerprint has a model. */
static int fp_supports(const struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    if (c->op == GV_OP_CONV2D)
        return gv_err_set(why, GV_E_UNSUPPORTED,
                          "%s: the fingerprint %s models GEMMs, not convolutions", c->id,
                          d->fp_file);
    if (c->op != GV_OP_GEMM ||
        gv_fpmodel_find(d->fp, c->in_dtype, c->compute_dtype, c->out_dtype))
        return GV_OK;
    char have[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < d->fp->n && used < sizeof have; i++)
        used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "",
                                 d->fp->e[i].precision);
    return gv_err_set(why, GV_E_UNSUPPORTED,
                      "%s: the fingerprint %s (route %s) has no probed GEMM precision "
                      "%s->%s->%s (it models %s%s%s)",
                      c->id, d->fp_file, d->fp->route, gv_dtype_name(c->in_dtype),
                      gv_dtype_name(c->compute_dtype), gv_dtype_name(c->out_dtype), have,
                      d->fp->skipped[0] ? "; not modelled: " : "", d->fp->skipped);
}

static int supports(struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    if ((unsigned)c->op >= GV_OP_COUNT)
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: unknown operation", c->id);
    if ((gv_op_desc(c->op)->flags & GV_OPF_TORCH_ONLY) || c->call != GV_CALL_DEFAULT)
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: a PyTorch case (--device torch:...)", c->id);
    int fp8 = c->in_dtype == GV_F8E4M3 || c->in_dtype == GV_F8E5M2;
    if (!storage_ok(c->in_dtype) && !(fp8 && d->fp && c->op == GV_OP_GEMM))
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: the cpu backend has no %s input kernels%s",
                          c->id, gv_dtype_name(c->in_dtype),
                          fp8 ? " (an emulated fingerprint's GEMMs have)" : "");
    if (c->op != GV_OP_CONVERT && !storage_ok(c->out_dtype))
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: the cpu backend has no %s output kernels",
                          c->id, gv_dtype_name(c->out_dtype));
    if (c->op == GV_OP_UNARY && (c->unary <= GV_UN_NONE || c->unary >= GV_UN_COUNT))
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: unknown unary function", c->id);
    if (c->op == GV_OP_CONV2D && (c->stride < 1 || c->pad < 0 || c->h + 2 * c->pad < c->r ||
                                  c->w + 2 * c->pad < c->s))
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: invalid convolution geometry", c->id);
    return d->fp ? fp_supports(d, c, why) : GV_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void impl_name(const struct gv_device *d, const struct gv_case *c, char *out, size_t n)
{
    int k = snprintf(out, n, "cpu %s %s->%s->%s, %d threads", gv_op_name(c->op),
                     gv_dtype_name(c->in_dtype), gv_dtype_name(c->compute_dtype),
                     gv_dtype_name(c->out_dtype), d->nthreads);
    for (size_t i = 0; i < N_EMU && k > 0 && (size_t)k < n; i++)
        if (d->emu & emulations[i].flag)
            k += snprintf(out + k, n - (size_t)k, ", emulate %s", emulations[i].name);
    const struct gv_fpmodel_entry *e =
        d->fp && c->op == GV_OP_GEMM
            ? gv_fpmodel_find(d->fp, c->in_dtype, c->compute_dtype, c->out_dtype)
            : NULL;
    if (e && k > 0 && (size_t)k < n)
        snprintf(out + k, n - (size_t)k, ", mma model of fingerprint %.12s route %s %s",
                 d->fp->sha256, d->fp->route, e->precision);
}

static int run(struct gv_device *d, const struct gv_case *c, const struct gv_buffer *in, int nin,
               struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    int rc = supports(d, c, err);
    if (rc)
        return rc;
    int need = gv_op_desc(c->op)->nin;
    if (nin < need)
        return gv_err_set(err, GV_E_USAGE, "%s: %d inputs given, %s needs %d", c->id, nin,
                          gv_op_name(c->op), need);
    if (out->dtype != c->out_dtype)
        return gv_err_set(err, GV_E_USAGE, "%s: output buffer is %s, the case declares %s",
                          c->id, gv_dtype_name(out->dtype), gv_dtype_name(c->out_dtype));
    double t0 = now_s();
    switch (c->op) {
    case GV_OP_GEMM: rc = run_gemm(d, c, in, out, err); break;
    case GV_OP_CONV2D: rc = run_conv(d, c, in, out, err); break;
    case GV_OP_SOFTMAX:
    case GV_OP_LAYERNORM:
    case GV_OP_RMSNORM:
    case GV_OP_SUM:
    case GV_OP_MEAN: rc = run_rows(d, c, in, out, err); break;
    case GV_OP_SDPA: rc = run_sdpa(d, c, in, out, err); break;
    case GV_OP_UNARY: run_unary(c, in, out); break;
    case GV_OP_CONVERT: run_convert(in, out); break;
    default: rc = gv_err_set(err, GV_E_UNSUPPORTED, "%s: unknown operation", c->id); break;
    }
    if (!rc) {
        flip_maybe(c, out);
        racy_maybe(c, out);
    }
    if (info) {
        info->seconds = now_s() - t0;
        impl_name(d, c, info->impl, sizeof info->impl);
    }
    return rc;
}

const struct gv_backend gv_backend_cpu = {"cpu", open_dev, close_dev, describe, supports, run};

size_t gv_cpu_emulations(const char **names, const char **whats, size_t max)
{
    size_t i;
    for (i = 0; i < N_EMU && i < max; i++) {
        names[i] = emulations[i].name;
        whats[i] = emulations[i].what;
    }
    return i;
}
