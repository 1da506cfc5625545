/* Explanations read once (issue 35, part 4): after a stand-in cuBLAS loaded
 * through LD_LIBRARY_PATH with TF32 inside, flagged cases that share their
 * signature and causes form one group, route changes one cause per kind of
 * change, and the variable is the library change's mechanism, not a cause. The
 * result files are written here; what the explanation must say is stated here. */
#include "check/compare.h"
#include "t.h"

#define D(c) "\"" c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c \
    c c c c c c c c c c c c c c c c c c c c c c c c "\""

static void add_case(char *buf, size_t n, const char *id, const char *in, const char *out,
                     double bits, const char *impl)
{
    size_t l = strlen(buf);
    snprintf(buf + l, n - l,
             "%s{\"id\":\"%s\",\"op\":\"gemm\",\"in_dtype\":\"%s\",\"compute_dtype\":\"f32\","
             "\"out_dtype\":\"f32\",\"input_digest\":" D("a") ",\"output_digest\":%s,"
             "\"verdict\":\"pass\",\"impl\":\"%s\",\"metrics\":{\"err_over_bound\":0.1,"
             "\"effective_bits\":%.17g,\"mean_signed_error\":0,\"max_abs\":0,\"max_rel\":0,"
             "\"normwise\":0,\"count\":4,\"nan_count\":0,\"inf_count\":0}}",
             buf[l - 1] == '[' ? "" : ",", id, in, out, impl, bits);
}

static const char *head(const char *env, const char *lib)
{
    static char h[4096];
    snprintf(h, sizeof h,
             "{\"schema\":\"gpuvet.results\",\"schema_version\":1,\"suite\":\"quick\","
             "\"created\":\"x\",\"device\":{\"description\":{\"name\":\"x\"}},\"snapshot\":"
             "{\"environment\":{\"collected\":true,\"variables\":{%s}},\"libraries\":"
             "{\"collected\":true,\"items\":[{\"name\":\"cublas\",\"version\":\"13.0.0\","
             "\"path\":\"%s\",\"sha256\":\"%s\"}]}},\"cases\":[",
             env, lib, strstr(lib, "/tmp") ? "bb" : "aa");
    return h;
}

#define SIMT "aten::mm, kernels: ampere_sgemm_128x64_nn"
#define SIMT2 "aten::mm, kernels: cutlass_80_simt_sgemm_128x128_8x4_nn_align1"
#define TF32 "aten::mm, kernels: sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_kernel"
#define HALF_A "aten::mm, kernels: ampere_h16816gemm_256x128_ldg8_stages_32x3_nn"
#define HALF_B "aten::mm, kernels: ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_nn"

static void build(struct gv_results *ra, struct gv_results *rb)
{
    static char a[32768], b[32768];
    snprintf(a, sizeof a, "%s", head("\"PATH\":\"/usr/bin\"", "/usr/lib/x86_64-linux-gnu/libcublas.so.13"));
    snprintf(b, sizeof b, "%s",
             head("\"PATH\":\"/usr/local/bin:/usr/bin\",\"LD_LIBRARY_PATH\":\"/opt/none:/tmp/x\","
                  "\"NVIDIA_TF32_OVERRIDE\":\"1\"",
                  "/tmp/x/libcublas.so.13"));
    for (int i = 1; i <= 12; i++) { /* 12 fp32 GEMMs: SIMT -> TF32, 23 -> 11 bits */
        char id[32];
        snprintf(id, sizeof id, "gemm.f32.k%d", i);
        add_case(a, sizeof a, id, "f32", D("1"), 23, i % 2 ? SIMT : SIMT2);
        add_case(b, sizeof b, id, "f32", D("2"), 11, TF32);
    }
    /* two fp16 GEMMs: another fp16 tensor-op kernel, 3 bits lost; one unchanged */
    add_case(a, sizeof a, "gemm.f16.a", "f16", D("1"), 10, HALF_A);
    add_case(b, sizeof b, "gemm.f16.a", "f16", D("2"), 7, HALF_B);
    add_case(a, sizeof a, "gemm.f16.b", "f16", D("1"), 10, HALF_A);
    add_case(b, sizeof b, "gemm.f16.b", "f16", D("2"), 7, HALF_B);
    add_case(a, sizeof a, "gemm.f16.c", "f16", D("1"), 10, HALF_A);
    add_case(b, sizeof b, "gemm.f16.c", "f16", D("1"), 10, HALF_B);
    strcat(a, "]}");
    strcat(b, "]}");
    struct gv_err err = {0};
    T_EQ_INT(gv_results_parse(a, strlen(a), "a", ra, &err), 0);
    T_EQ_INT(gv_results_parse(b, strlen(b), "b", rb, &err), 0);
    if (err.msg[0])
        fprintf(stderr, "parse: %s\n", err.msg);
}

static const struct gv_cmp_cause *cause(const struct gv_compare *c, const char *kind,
                                        const char *name, size_t *at)
{
    for (size_t i = 0; i < c->ncauses; i++)
        if (!strcmp(c->causes[i].kind, kind) && !strcmp(c->causes[i].name, name)) {
            *at = i;
            return &c->causes[i];
        }
    return NULL;
}

static const struct gv_cmp_case *find(const struct gv_compare *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->cases[i].id, id))
            return &c->cases[i];
    return NULL;
}

static void test_grouped(void)
{
    struct gv_results ra, rb;
    build(&ra, &rb);
    struct gv_compare c;
    struct gv_err err = {0};
    T_EQ_INT(gv_compare_results(&ra, &rb, NULL, NULL, &c, &err), 0);
    T_EQ_INT(c.count[GV_CH_DEGRADED], 14);
    size_t at = 99;
    /* the loader variable is the library change's mechanism, not a cause */
    T_CHECK(cause(&c, "environment", "LD_LIBRARY_PATH", &at) == NULL);
    const struct gv_cmp_cause *lib = cause(&c, "library", "cublas", &at);
    T_CHECK(lib && at == 0);
    T_EQ_STR(lib ? lib->mechanism : NULL, "LD_LIBRARY_PATH");
    T_EQ_STR(lib ? lib->mech_after : NULL, "/opt/none:/tmp/x");
    T_EQ_STR(lib ? lib->mech_before : NULL, "");
    T_CHECK(lib && lib->rank == 0 && lib->touched == 14);
    T_CHECK(cause(&c, "environment", "PATH", &at) != NULL); /* not a loader variable */
    /* two route causes, one per kind of change, instead of 14 */
    size_t routes = 0;
    for (size_t i = 0; i < c.ncauses; i++)
        routes += !strcmp(c.causes[i].kind, "route");
    T_EQ_INT(routes, 2);
    const struct gv_cmp_cause *r = cause(&c, "route", "SIMT fp32 kernel -> TF32 tensor-op kernel", &at);
    T_CHECK(r && r->touched == 12 && r->rank == 1);
    T_EQ_STR(r ? r->from->id : NULL, "simt-fp32");
    T_EQ_STR(r ? r->to->id : NULL, "tf32-tensor-op");
    r = cause(&c, "route", "another fp16/bf16 tensor-op kernel", &at);
    T_CHECK(r && r->touched == 2);
    /* groups: the 12 fp32 GEMMs (TF32 signature; cuBLAS, the TF32 variable, the
     * first route), the 2 fp16 GEMMs (narrow accumulation; cuBLAS, the second route) */
    T_EQ_INT(c.ngroups, 2);
    const struct gv_cmp_case *x = find(&c, "gemm.f32.k1"), *y = find(&c, "gemm.f32.k12");
    T_CHECK(x && y && x->group == 1 && y->group == 1 && x->nsig == 1);
    T_EQ_STR(x && x->nsig ? x->sig[0]->id : NULL, "tf32-inputs");
    T_CHECK(find(&c, "gemm.f16.a")->group == 2 && find(&c, "gemm.f16.b")->group == 2);
    T_EQ_INT(find(&c, "gemm.f16.c")->group, 0);
    size_t n = 0;
    const char **ids = gv_cmp_ids(&c, NULL, 1, &n);
    T_EQ_INT(n, 12);
    char *t = ids ? gv_cmp_ids_text(&c, ids, n, 0) : NULL;
    T_EQ_STR(t, "gemm.f32.*");
    free(t);
    t = ids ? gv_cmp_ids_text(&c, ids, 6, 0) : NULL; /* not every gemm.f32. case */
    T_EQ_STR(t, "gemm.f32.k1, gemm.f32.k2, gemm.f32.k3 and 3 more");
    free(t);
    t = ids ? gv_cmp_ids_text(&c, ids, n, 1) : NULL; /* all: every id */
    T_CHECK(t && strstr(t, "gemm.f32.k1, gemm.f32.k2,") && strstr(t, ", gemm.f32.k12"));
    free(t);
    free(ids);
    ids = gv_cmp_ids(&c, NULL, 2, &n); /* gemm.f16.c is not flagged: no wildcard */
    t = ids ? gv_cmp_ids_text(&c, ids, n, 0) : NULL;
    T_EQ_STR(t, "gemm.f16.a, gemm.f16.b");
    free(t);
    free(ids);
    gv_compare_free(&c);
    gv_results_free(&ra);
    gv_results_free(&rb);
}

int main(void)
{
    T_RUN(test_grouped);
    return t_done();
}
