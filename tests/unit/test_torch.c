/* The C half of the PyTorch device that runs without an interpreter: the
 * worker's reply parser, which library files are worth recording, and the
 * fp64 reference and bound of the autocast cases, checked against finite
 * differences and against the network computed the way autocast computes it
 * (operands rounded to fp16/bf16, fp32 accumulation, results in fp16/bf16). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "dev/torch/torch.h"
#include "kb/kb.h"
#include "num/catalog.h"
#include "num/fp.h"
#include "num/ref.h"
#include "check/runner.h"
#include "t.h"

static int parse(const char *text, struct gv_torch_reply *r, struct gv_err *e)
{
    return gv_torch_reply_parse(text, strlen(text), r, e);
}

static void test_reply_parse(void)
{
    struct gv_torch_reply r;
    struct gv_err e = {0};
    T_EQ_INT(parse("{\"ok\":true,\"seconds\":0.5,\"impl\":\"torch.matmul, kernels: k\","
                   "\"nbytes\":4096,\"describe\":{\"name\":\"x\"}}", &r, &e), GV_OK);
    T_CHECK(r.ok && r.nbytes == 4096 && fabs(r.seconds - 0.5) < 1e-12);
    T_EQ_STR(r.impl, "torch.matmul, kernels: k");
    T_EQ_STR(json_string_value(json_object_get(r.describe, "name")), "x");
    gv_torch_reply_free(&r);
    T_CHECK(r.describe == NULL);
    T_EQ_INT(parse("{\"ok\":false,\"status\":\"unsupported\",\"error\":\"no rms_norm\"}", &r, &e),
             GV_OK);
    T_CHECK(!r.ok && r.nbytes == 0);
    T_EQ_STR(r.status, "unsupported");
    T_EQ_STR(r.error, "no rms_norm");
    gv_torch_reply_free(&r);
    T_EQ_INT(parse("{\"ok\":false}", &r, &e), GV_OK); /* a failure always has a status */
    T_EQ_STR(r.status, "error");
    gv_torch_reply_free(&r);
    static const char *const bad[] = {
        "", "{", "[1]", "\"ok\"", "{}", "{\"ok\":1}", "{\"ok\":\"true\"}",
        "{\"ok\":true,\"nbytes\":-1}", "{\"ok\":true,\"nbytes\":1.5}",
        "{\"ok\":true,\"nbytes\":99999999999999999}", "{\"ok\":true,\"seconds\":\"1\"}",
        "{\"ok\":true,\"describe\":[]}", "{\"ok\":false,\"status\":7}",
        "{\"ok\":false,\"error\":{}}", "{\"ok\":true,\"ok\":false}", "{\"ok\":true,\"impl\":[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e, 0, sizeof e);
        T_EQ_INT(parse(bad[i], &r, &e), GV_E_FORMAT);
        T_CHECK(strstr(e.msg, "torch worker reply") != NULL);
        T_CHECK(r.describe == NULL);
    }
    /* a long error string is cut, never overflows */
    char big[5000];
    snprintf(big, sizeof big, "{\"ok\":false,\"error\":\"%4000d\"}", 1);
    T_EQ_INT(parse(big, &r, &e), GV_OK);
    T_EQ_INT(strlen(r.error), sizeof r.error - 1);
    gv_torch_reply_free(&r);
}

static void test_libraries(void)
{
    static const struct {
        const char *file, *name;
    } cases[] = {
        {"libcudnn_ops.so.9", "libcudnn_ops"},   {"libcudnn.so.9.1.0", "libcudnn"},
        {"libcublasLt.so.13", "libcublasLt"},    {"libcublas.so.13.1.0.3", "libcublas"},
        {"libcuda.so.1", "libcuda"},             {"libtorch_cuda.so", "libtorch_cuda"},
        {"libc10_hip.so", "libc10_hip"},         {"libamdhip64.so.6", "libamdhip64"},
        {"libhipblaslt.so.0", "libhipblaslt"},   {"libMIOpen.so.1", "libMIOpen"},
        {"libblas.so.3", "libblas"},             {"libopenblasp-r0.3.21.so", "libopenblasp-r0.3.21"},
        {"libnvrtc-builtins.so.13.0", "libnvrtc-builtins"},
    };
    char name[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        T_CHECK(kb_framework_lib_name(cases[i].file, name, sizeof name));
        T_EQ_STR(name, cases[i].name);
    }
    static const char *const not_gpu[] = {"libcurl.so.4", "libcudart_static.a", "libpython3.11.so",
                                          "libcu.so", "libc.so.6", "libcudax", "libcublasXt.so"};
    for (size_t i = 0; i < sizeof not_gpu / sizeof not_gpu[0]; i++) {
        T_CHECK(!kb_framework_lib_name(not_gpu[i], name, sizeof name));
        T_EQ_STR(name, "");
    }
    char v[64];
    gv_torch_file_version("libcublas.so.13.1.0.3", v, sizeof v);
    T_EQ_STR(v, "13.1.0.3");
    gv_torch_file_version("libtorch_cuda.so", v, sizeof v);
    T_EQ_STR(v, "");
    json_t *maps = json_pack("[s,s,s,s]", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                             "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn_cnn.so.9",
                             "/venv/torch/lib/libtorch_cuda.so", "relative/libcuda.so.1");
    json_t *libs = gv_torch_libraries(maps);
    T_EQ_INT(json_array_size(libs), 2);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(libs, 0), "name")), "libcudnn_cnn");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(libs, 0), "version")), "9");
    T_CHECK(json_object_get(json_array_get(libs, 1), "version") == NULL);
    json_decref(libs);
    json_decref(maps);
}

/* ---------- the autocast reference ---------- */

struct net {
    struct gv_case c;
    struct gv_buffer in[4];
    int nin;
    size_t n;
    double *ref, *bound, *scale;
};

static int net_make(struct net *t, const char *id, int B, int D, int H, int O,
                    enum gv_dtype compute)
{
    memset(t, 0, sizeof *t);
    const struct gv_catalog_entry *e = gv_catalog_find(id);
    if (!e)
        return -1;
    t->c = e->c;
    t->c.m = B, t->c.k = D, t->c.n = H, t->c.d = O;
    t->c.compute_dtype = compute;
    struct gv_err err = {0};
    if (gv_make_inputs(&t->c, t->in, &t->nin, &err))
        return -1;
    t->n = gv_case_out_count(&t->c);
    t->ref = calloc(t->n, sizeof(double));
    t->bound = calloc(t->n, sizeof(double));
    t->scale = calloc(t->n, sizeof(double));
    return gv_ref_compute(&t->c, t->in, t->nin, t->ref, t->bound, t->scale, 1, &err);
}

static void net_free(struct net *t)
{
    gv_inputs_free(t->in, t->nin);
    free(t->ref);
    free(t->bound);
    free(t->scale);
}

static double loss_of(struct net *t)
{
    double r = 0, b = 0, s = 0;
    struct gv_err err = {0};
    double *ref = calloc(t->n, sizeof *ref), *bound = calloc(t->n, sizeof *bound),
           *scale = calloc(t->n, sizeof *scale);
    if (gv_ref_compute(&t->c, t->in, t->nin, ref, bound, scale, 1, &err) == GV_OK)
        r = ref[0], b = bound[0], s = scale[0];
    (void)b, (void)s;
    free(ref), free(bound), free(scale);
    return r;
}

/* dLoss/dW by central differences, for a few weights of W1e and W2e. */
static void test_mlp_gradients(void)
{
    struct net t;
    const int B = 6, D = 5, H = 7, O = 3;
    T_EQ_INT(net_make(&t, "autocast.f16.64x256x512x64.normal.s1", B, D, H, O, GV_F16), GV_OK);
    T_EQ_INT(t.n, 1 + B * O + H * D + H + O * H + O);
    size_t off_dw1 = 1 + (size_t)B * O, off_db1 = off_dw1 + (size_t)H * D;
    size_t off_dw2 = off_db1 + H, off_db2 = off_dw2 + (size_t)O * H;
    struct {
        int input, row, col;
        size_t out;
    } probes[] = {
        {1, 0, 0, off_dw1},           {1, 3, 4, off_dw1 + 3 * D + 4}, {1, 6, D, off_db1 + 6},
        {2, 0, 0, off_dw2},           {2, 2, 5, off_dw2 + 2 * H + 5}, {2, 1, H, off_db2 + 1},
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        int cols = probes[i].input == 1 ? D + 1 : H + 1;
        float *w = (float *)t.in[probes[i].input].data + probes[i].row * cols + probes[i].col;
        float w0 = *w, h = 1.0f / 1024;
        *w = w0 + h;
        double up = loss_of(&t);
        *w = w0 - h;
        double down = loss_of(&t);
        *w = w0;
        double fd = (up - down) / (2.0 * (double)h), an = t.ref[probes[i].out];
        T_CHECK(fabs(fd - an) <= 1e-6 * (fabs(an) + 1e-3));
        if (fabs(fd - an) > 1e-6 * (fabs(an) + 1e-3))
            fprintf(stderr, "  probe %zu: finite difference %.10g, reference %.10g\n", i, fd, an);
    }
    /* y: one element recomputed by hand */
    const float *x = t.in[0].data, *w1 = t.in[1].data, *w2 = t.in[2].data;
    double y = w2[1 * (H + 1) + H];
    for (int j = 0; j < H; j++) {
        double h = w1[j * (D + 1) + D];
        for (int k = 0; k < D; k++)
            h += (double)x[2 * D + k] * w1[j * (D + 1) + k];
        y += 0.5 * h * (1 + erf(h / sqrt(2.0))) * w2[1 * (H + 1) + j];
    }
    T_CHECK(fabs(y - t.ref[1 + 2 * O + 1]) < 1e-12 * (1 + fabs(y)));
    net_free(&t);
}

/* The network the way autocast runs it: every product's operands rounded to
 * T, accumulated in float, the result stored in T; GELU rounded to T; the
 * loss in float; dy in T (GradScaler's power of two changes nothing but the
 * underflow range, which these sizes do not reach). */
static float rt(double v, enum gv_dtype t) { return (float)gv_fp_round(v, t, GV_RNE); }

static void emulate(const struct net *t, enum gv_dtype T, double *out)
{
    const int B = (int)t->c.m, D = (int)t->c.k, H = (int)t->c.n, O = (int)t->c.d;
    const float *x = t->in[0].data, *w1 = t->in[1].data, *w2 = t->in[2].data, *tg = t->in[3].data;
    float *h = calloc((size_t)B * H, 4), *a = calloc((size_t)B * H, 4), *y = calloc((size_t)B * O, 4);
    float *dy = calloc((size_t)B * O, 4), *dh = calloc((size_t)B * H, 4);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            float s = rt(w1[j * (D + 1) + D], T);
            for (int k = 0; k < D; k++)
                s += rt(x[b * D + k], T) * rt(w1[j * (D + 1) + k], T);
            h[b * H + j] = rt(s, T);
            double hv = h[b * H + j];
            a[b * H + j] = rt(0.5 * hv * (1 + erf(hv / sqrt(2.0))), T);
        }
    float loss = 0;
    for (int b = 0; b < B; b++)
        for (int o = 0; o < O; o++) {
            float s = rt(w2[o * (H + 1) + H], T);
            for (int j = 0; j < H; j++)
                s += a[b * H + j] * rt(w2[o * (H + 1) + j], T);
            y[b * O + o] = rt(s, T);
            float r = y[b * O + o] - tg[b * O + o];
            loss += r * r;
            dy[b * O + o] = rt(2.0 * r / (B * O), T);
        }
    size_t at = 0;
    out[at++] = loss / (float)(B * O);
    for (int i = 0; i < B * O; i++)
        out[at++] = y[i];
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            float s = 0;
            for (int o = 0; o < O; o++)
                s += dy[b * O + o] * rt(w2[o * (H + 1) + j], T);
            double hv = h[b * H + j], d1 = 0.5 * (1 + erf(hv / sqrt(2.0))) +
                                            hv * exp(-0.5 * hv * hv) / sqrt(2 * M_PI);
            dh[b * H + j] = rt(rt(s, T) * d1, T);
        }
    for (int j = 0; j < H; j++)
        for (int k = 0; k < D; k++) {
            float s = 0;
            for (int b = 0; b < B; b++)
                s += dh[b * H + j] * rt(x[b * D + k], T);
            out[at++] = rt(s, T);
        }
    for (int j = 0; j < H; j++) {
        float s = 0;
        for (int b = 0; b < B; b++)
            s += dh[b * H + j];
        out[at++] = rt(s, T);
    }
    for (int o = 0; o < O; o++)
        for (int j = 0; j < H; j++) {
            float s = 0;
            for (int b = 0; b < B; b++)
                s += dy[b * O + o] * a[b * H + j];
            out[at++] = rt(s, T);
        }
    for (int o = 0; o < O; o++) {
        float s = 0;
        for (int b = 0; b < B; b++)
            s += dy[b * O + o];
        out[at++] = rt(s, T);
    }
    free(h), free(a), free(y), free(dy), free(dh);
}

static void test_mlp_bound(void)
{
    static const enum gv_dtype ts[] = {GV_F16, GV_BF16};
    double worst_f16 = 0;
    for (int i = 0; i < 2; i++) {
        struct net t;
        T_EQ_INT(net_make(&t, "autocast.bf16.64x256x512x64.normal.s1", 32, 96, 160, 24, ts[i]),
                 GV_OK);
        double *emu = calloc(t.n, sizeof *emu), worst = 0;
        emulate(&t, ts[i], emu);
        size_t bad = 0;
        for (size_t j = 0; j < t.n; j++) {
            T_CHECK(isfinite(t.bound[j]) && t.bound[j] > 0);
            double r = fabs(emu[j] - t.ref[j]) / t.bound[j];
            bad += r > 1;
            worst = r > worst ? r : worst;
        }
        printf("autocast %s emulated: worst error/bound %.3g over %zu values\n",
               gv_dtype_name(ts[i]), worst, t.n);
        {
            size_t B = 32, D = 96, H = 160, O = 24;
            size_t seg[7] = {0, 1, 1 + B * O, 1 + B * O + H * D, 1 + B * O + H * D + H,
                             1 + B * O + H * D + H + O * H, t.n};
            for (int sgi = 0; sgi < 6; sgi++) {
                double w = 0;
                for (size_t j = seg[sgi]; j < seg[sgi + 1]; j++)
                    w = fmax(w, fabs(emu[j] - t.ref[j]) / t.bound[j]);
                printf("  segment %d: worst %.3g\n", sgi, w);
            }
        }
        T_EQ_INT(bad, 0);          /* the bound holds for the computation it models */
        T_CHECK(worst > 0.01);     /* and is not so loose that nothing could fail it */
        if (i == 0)
            worst_f16 = worst;
        /* the bound is of T: f16 bounds are 8x tighter than bf16's on the same inputs */
        if (i == 1) {
            struct net f;
            T_EQ_INT(net_make(&f, "autocast.bf16.64x256x512x64.normal.s1", 32, 96, 160, 24, GV_F16),
                     GV_OK);
            size_t tighter = 0;
            for (size_t j = 0; j < t.n; j++)
                tighter += f.bound[j] < t.bound[j];
            T_CHECK(tighter > t.n * 9 / 10);
            /* fp16 arithmetic judged by the bf16 bound passes by a wide margin ... */
            double *e16 = calloc(t.n, sizeof *e16), w = 0;
            emulate(&t, GV_F16, e16);
            for (size_t j = 0; j < t.n; j++)
                w = fmax(w, fabs(e16[j] - t.ref[j]) / t.bound[j]);
            T_CHECK(w < worst_f16);
            /* ... and bf16 arithmetic judged by the fp16 bound fails */
            size_t over = 0;
            for (size_t j = 0; j < t.n; j++)
                over += fabs(emu[j] - f.ref[j]) > f.bound[j];
            T_CHECK(over > 0);
            free(e16);
            net_free(&f);
        }
        free(emu);
        net_free(&t);
    }
}

int main(void)
{
    T_RUN(test_reply_parse);
    T_RUN(test_libraries);
    T_RUN(test_mlp_gradients);
    T_RUN(test_mlp_bound);
    return t_done();
}
