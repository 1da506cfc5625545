/* Does a fingerprint predict? (issue 35 part 3, docs/probe.md "Emulating a
 * fingerprint"). Random GEMMs of many shapes (K from 1 to 4096, four input
 * distributions) run on a device's route and on `cpu:emulate=FP.json,route=R`
 * with FP that device's own fingerprint; the share of bit-identical outputs is
 * printed per route and precision, with every shape that is not 100%.
 *
 * On the CPU (always, on a shorter list of shapes to stay quick in the
 * sanitizer build): the CPU's own fingerprint must predict the CPU bit for bit
 * at every shape (its GEMMs add one product after the other, which the model
 * knows).
 * With GV_EMULATE_DEVICE=cuda:0 (the lead's GPU runs): the same measurement
 * on that device's routes, printed (a measurement, not a verdict).
 * GV_EMULATE_FP=FILE takes that device's fingerprint from FILE (made by
 * `gpuvet probe` before) instead of probing it; GV_EMULATE_ROUTE=NAME
 * measures that route alone;
 * GV_EMULATE_DUMP=DIR keeps the device's outputs and fingerprint in DIR;
 * GV_EMULATE_REPLAY=DIR (with GV_EMULATE_DEVICE) reads them back instead of
 * running the device, so a model can be refined on the CPU against one GPU
 * run; with GV_EMULATE_REFIT=1 the fingerprint's model.kN are fitted again
 * first (gv_mma_fit as the probe does, on the dump's normal and wide GEMMs
 * at the fitted K), so that a change to the fit is measured too. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "dev/backend.h"
#include "num/fp.h"
#include "num/mma.h"
#include "probe/probe.h"
#include "t.h"

/* K: the first 12 on the CPU, all on a GPU. Those the probe fits model.kN at
 * (its default grid, probe/fit.c) are counted apart from the others, whose
 * model is the nearest fitted K's: a prediction. */
static const int ks[] = {1,   2,   3,   7,   16,  17,  64,  65,  256,  257,  1000, 1024,
                         4,   5,   8,   9,   15,  31,  32,  33,  63,   127,  128,  129,
                         255, 511, 512, 2048, 4096, 100, 300, 700, 1500, 3000};
#define NK (int)(sizeof ks / sizeof ks[0])
static const int fitted[] = {1,  2,  3,   4,   7,   8,   15,  16,  31,   32,   63,
                             64, 127, 128, 255, 256, 511, 512, 1024, 2048, 4096};

static int is_fitted(int k)
{
    for (size_t i = 0; i < sizeof fitted / sizeof fitted[0]; i++)
        if (fitted[i] == k)
            return 1;
    return 0;
}
static const char *const dists[] = {"uniform", "normal", "positive", "wide"};
#define ND 4

struct prec {
    const char *name;
    enum gv_dtype in, compute, out;
};
static const struct prec precs[] = {
    {"f32", GV_F32, GV_F32, GV_F32},   {"tf32", GV_F32, GV_TF32, GV_F32},
    {"f16", GV_F16, GV_F32, GV_F32},   {"bf16", GV_BF16, GV_F32, GV_F32},
    {"f16acc16", GV_F16, GV_F16, GV_F16},
    {"f8e4m3", GV_F8E4M3, GV_F32, GV_F32}, {"f8e5m2", GV_F8E5M2, GV_F32, GV_F32},
};
#define NP (int)(sizeof precs / sizeof precs[0])

static double rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static double draw(int dist, uint64_t *s)
{
    double u = rnd(s);
    switch (dist) {
    case 0: return 2 * u - 1;
    case 1: return (rnd(s) + rnd(s) + rnd(s) + u - 2) * 1.7;
    case 2: return u;
    default: return (u < 0.5 ? -1 : 1) * ldexp(1.0 + rnd(s), (int)(rnd(s) * 16) - 8);
    }
}

static void fill(struct gv_buffer *b, int dist, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < b->count; i++)
        gv_fp_store(b->data, b->dtype, i, gv_fp_round(draw(dist, &s), b->dtype, GV_RNE));
}

/* DIR/ROUTE.PREC.kK.dD.bin: one shape's device output, for GV_EMULATE_DUMP
 * and GV_EMULATE_REPLAY */
static const char *dump_dir, *replay_dir;

static void shape_file(char *path, size_t sz, const char *dir, const char *rname,
                       const struct prec *p, int k, int dist)
{
    snprintf(path, sz, "%s/%s.%s.k%d.d%d.bin", dir, rname, p->name, k, dist);
}

static int dump_out(const struct gv_buffer *o, size_t w, const char *rname, const struct prec *p,
                    int k, int dist)
{
    char path[512];
    shape_file(path, sizeof path, dump_dir, rname, p, k, dist);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(o->data, w, o->count, f) == o->count;
    if (f && fclose(f))
        ok = 0;
    return ok ? 0 : -1;
}

static int replay_out(struct gv_buffer *o, size_t w, const char *rname, const struct prec *p,
                      int k, int dist, char *why, size_t whysz)
{
    char path[512];
    shape_file(path, sizeof path, replay_dir, rname, p, k, dist);
    FILE *f = fopen(path, "rb");
    int ok = f && fread(o->data, w, o->count, f) == o->count;
    if (f)
        fclose(f);
    if (!ok)
        snprintf(why, whysz, "%s: not in the dump", path);
    return ok ? 0 : -1;
}

/* One shape on both devices: 1 when every output bit matches. -1 when either
 * could not run it (said in why). */
static int one(const struct gv_backend *be, struct gv_device *dev, const struct gv_backend *ee,
               struct gv_device *emu, const char *rname, const struct prec *p, int k, int dist,
               long *same, long *total, char *why, size_t whysz)
{
    const int M = 64, N = 64;
    struct gv_case c = {.id = "share", .op = GV_OP_GEMM, .in_dtype = p->in,
                        .compute_dtype = p->compute, .out_dtype = p->out, .batch = 1, .m = M,
                        .n = N, .k = k};
    struct gv_buffer in[2] = {{p->in, (size_t)M * k, NULL}, {p->in, (size_t)k * N, NULL}};
    struct gv_buffer o1 = {p->out, (size_t)M * N, NULL}, o2 = o1;
    size_t w = gv_dtype_size(p->out);
    in[0].data = calloc(in[0].count, gv_dtype_size(p->in));
    in[1].data = calloc(in[1].count, gv_dtype_size(p->in));
    o1.data = calloc(o1.count, w);
    o2.data = calloc(o2.count, w);
    int rc = -1;
    if (in[0].data && in[1].data && o1.data && o2.data) {
        fill(&in[0], dist, (uint64_t)k * 8 + (uint64_t)dist);
        fill(&in[1], dist, (uint64_t)k * 8 + (uint64_t)dist + 4);
        struct gv_err e = {0};
        struct gv_run_info info;
        int got = replay_dir ? replay_out(&o1, w, rname, p, k, dist, why, whysz)
                             : be->run(dev, &c, in, 2, &o1, &info, &e);
        if (!got && dump_dir && dump_out(&o1, w, rname, p, k, dist))
            snprintf(why, whysz, "cannot write into %s", dump_dir), got = -1;
        if (!got && ee->run(emu, &c, in, 2, &o2, &info, &e))
            got = -1;
        if (got && !why[0])
            snprintf(why, whysz, "%s", e.msg);
        else if (!got) {
            long s = 0;
            for (size_t i = 0; i < o1.count; i++)
                s += !memcmp((char *)o1.data + i * w, (char *)o2.data + i * w, w);
            *same += s;
            *total += (long)o1.count;
            rc = s == (long)o1.count;
        }
    }
    free(in[0].data);
    free(in[1].data);
    free(o1.data);
    free(o2.data);
    return rc;
}

/* Writes the device's fingerprint to path; the route names of the device. */
static int fingerprint(const char *device, const char *path)
{
    struct gv_probe_opts o = {0};
    o.device = device;
    o.dtype = "gemm";
    json_t *doc = NULL;
    struct gv_err e = {0};
    if (gv_probe_run(&o, &doc, &e)) {
        fprintf(stderr, "probe %s: %s\n", device, e.msg);
        return -1;
    }
    int rc = json_dump_file(doc, path, 0);
    json_decref(doc);
    return rc;
}

/* Every precision of one route on nk shapes x nd distributions: shares printed;
 * exact: every output must match. */
static void route(const char *device, const char *blas, const char *rname, const char *fp,
                  int exact, int nk, int nd)
{
    if (blas)
        setenv("GPUVET_BLAS", blas, 1);
    const struct gv_backend *be, *ee;
    struct gv_device *dev, *emu;
    char note[256], spec[512];
    struct gv_err e = {0};
    snprintf(spec, sizeof spec, "cpu:emulate=%s,route=%s", fp, rname);
    be = NULL, dev = NULL;
    if (!replay_dir && gv_device_open(device, &be, &dev, note, sizeof note, &e)) {
        printf("%s: cannot open: %s\n", device, e.msg);
        T_CHECK(0);
        return;
    }
    if (gv_device_open(spec, &ee, &emu, note, sizeof note, &e)) {
        printf("%s: cannot open: %s\n", spec, e.msg);
        if (be)
            be->close(dev);
        T_CHECK(0);
        return;
    }
    for (int p = 0; p < NP; p++) {
        long same = 0, total = 0, same_small = 0, total_small = 0, same_fit = 0, total_fit = 0;
        char odd[4096] = "", why[300] = "";
        size_t used = 0;
        int ran = 0;
        for (int i = 0; i < nk; i++)
            for (int d = 0; d < nd; d++) {
                long s0 = same, t0 = total;
                why[0] = 0;
                int r = one(be, dev, ee, emu, rname, &precs[p], ks[i], d, &same, &total, why,
                            sizeof why);
                if (r < 0)
                    continue;
                ran = 1;
                same_small += same - s0;
                total_small += total - t0;
                if (is_fitted(ks[i])) {
                    same_fit += same - s0;
                    total_fit += total - t0;
                }
                if (!r && used + 40 < sizeof odd)
                    used += (size_t)snprintf(odd + used, sizeof odd - used, " K=%d/%s:%.0f%%",
                                             ks[i], dists[d],
                                             100.0 * (double)(same - s0) / (double)(total - t0));
            }
        if (!ran) {
            printf("%-10s %-8s not run: %s\n", rname, precs[p].name, why);
            continue;
        }
        printf("%-10s %-8s %6.2f%% bit-identical (%ld of %ld outputs, 64x64xK, %d K x %d "
               "distributions); fitted K %.2f%%, other K %.2f%%\n",
               rname, precs[p].name, 100.0 * (double)same / (double)total, same, total, nk, nd,
               total_fit ? 100.0 * (double)same_fit / (double)total_fit : 0.0,
               total > total_fit ? 100.0 * (double)(same - same_fit) / (double)(total - total_fit)
                                 : 0.0);
        if (odd[0])
            printf("           not 100%%:%s\n", odd);
        if (exact)
            T_EQ_INT(same_small, total_small);
    }
    ee->close(emu);
    if (be)
        be->close(dev);
    unsetenv("GPUVET_BLAS");
}

/* The dump's GEMM of one shape as a fit sees it; 0 when it is there. */
static int dumped(const char *rname, const struct prec *p, int k, int dist,
                  struct gv_buffer g[3])
{
    g[0] = (struct gv_buffer){p->in, (size_t)64 * k, calloc((size_t)64 * k, 4)};
    g[1] = (struct gv_buffer){p->in, (size_t)64 * k, calloc((size_t)64 * k, 4)};
    g[2] = (struct gv_buffer){p->out, 4096, calloc(4096, 4)};
    char why[300] = "";
    if (!g[0].data || !g[1].data || !g[2].data ||
        replay_out(&g[2], gv_dtype_size(p->out), rname, p, k, dist, why, sizeof why))
        return -1;
    fill(&g[0], dist, (uint64_t)k * 8 + (uint64_t)dist);
    fill(&g[1], dist, (uint64_t)k * 8 + (uint64_t)dist + 4);
    return 0;
}

/* model.kN of one precision fitted again on the dump, largest K first. */
static void refit_prec(json_t *props, const char *rname, const struct prec *p)
{
    struct gv_mma_model base, hint;
    struct gv_err e = {0};
    int bound, have = 0;
    if (gv_probe_fit_base(props, p->in, p->compute, p->out, &base, &bound))
        return;
    for (int i = (int)(sizeof fitted / sizeof fitted[0]) - 1; i >= 0; i--) {
        int k = fitted[i];
        struct gv_buffer n[3] = {{0}}, w[3] = {{0}};
        struct gv_mma_fit f = {0};
        if (!dumped(rname, p, k, 1, n) && !dumped(rname, p, k, 3, w)) {
            struct gv_mma_fit_gemm g[2] = {{&n[0], &n[1], &n[2], 64, 64, k},
                                           {&w[0], &w[1], &w[2], 64, 64, k}};
            gv_mma_fit(&base, bound, have ? &hint : NULL, g, 2, &f, &e);
        }
        for (int j = 0; j < 3; j++) {
            free(n[j].data);
            free(w[j].data);
        }
        char name[32], text[128];
        snprintf(name, sizeof name, "model.k%d", k);
        gv_mma_structure_str(&f.m, text, sizeof text);
        json_object_set_new(props, name,
                            json_pack("{s:s, s:s, s:[]}", "value", f.found ? text : "undetermined",
                                      "method", "refit on the dump", "observations"));
        if (f.found) {
            hint = f.m;
            have = 1;
        }
    }
}

/* The fingerprint at fp with every GEMM precision's model.kN fitted again on
 * the dump, written to out. */
static int refit(const char *fp, const char *out)
{
    json_error_t je;
    json_t *doc = json_load_file(fp, 0, &je);
    if (!doc)
        return -1;
    size_t i, j;
    json_t *r, *pr;
    json_array_foreach(json_object_get(doc, "routes"), i, r) {
        const char *rname = json_string_value(json_object_get(r, "route"));
        json_array_foreach(json_object_get(r, "precisions"), j, pr) {
            const char *name = json_string_value(json_object_get(pr, "precision"));
            for (int p = 0; p < NP && rname && name; p++)
                if (!strcmp(precs[p].name, name))
                    refit_prec(json_object_get(pr, "properties"), rname, &precs[p]);
        }
    }
    int rc = json_dump_file(doc, out, 0);
    json_decref(doc);
    return rc;
}

static void test_cpu_predicts_itself(void)
{
    const char *fp = "emulate_share.cpu.json";
    T_EQ_INT(fingerprint("cpu", fp), 0);
    route("cpu", NULL, "cpu", fp, 1, 12, 2);
    remove(fp);
}

static void test_device(void)
{
    const char *dev = getenv("GV_EMULATE_DEVICE");
    if (!dev || !*dev)
        return;
    char fp[512] = "emulate_share.device.json";
    dump_dir = getenv("GV_EMULATE_DUMP");
    replay_dir = getenv("GV_EMULATE_REPLAY");
    const char *given = getenv("GV_EMULATE_FP"); /* a fingerprint of dev made before */
    if (replay_dir)
        snprintf(fp, sizeof fp, "%s/fingerprint.json", replay_dir);
    else if (given)
        snprintf(fp, sizeof fp, "%s", given);
    else if (dump_dir)
        snprintf(fp, sizeof fp, "%s/fingerprint.json", dump_dir);
    if (!replay_dir && !given && fingerprint(dev, fp)) {
        T_CHECK(0);
        return;
    }
    if (replay_dir && getenv("GV_EMULATE_REFIT")) {
        T_EQ_INT(refit(fp, "emulate_share.refit.json"), 0);
        snprintf(fp, sizeof fp, "emulate_share.refit.json");
    }
    struct gv_probe_route r[8];
    size_t n = gv_probe_routes(dev, r, 8);
    const char *only = getenv("GV_EMULATE_ROUTE"); /* one route (NULL: all) */
    for (size_t i = 0; i < n; i++)
        if (!only || !strcmp(only, r[i].name))
            route(dev, r[i].blas[0] ? r[i].blas : NULL, r[i].name, fp, 0, NK, ND);
}

int main(void)
{
    T_RUN(test_cpu_predicts_itself);
    T_RUN(test_device);
    return t_done();
}
