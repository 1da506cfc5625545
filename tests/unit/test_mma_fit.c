/* A kernel's structure in the block-FMA model (src/num/mma.c): the partial K
 * tile summed first, the structure as text and back, and gv_mma_fit finding
 * a structure planted in "device" outputs that a hidden model computed
 * (the probe's model.kN, docs/probe.md). The expected values are the
 * planted ones and compositions of gv_mma_dot_acc, never the fit's output. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "num/fp.h"
#include "num/mma.h"
#include "t.h"

/* fp16 inputs, fp32 accumulator, blocks truncated with 2 extra bits: the
 * Hopper-like base the fits start from. */
static struct gv_mma_model base16(void)
{
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F16, GV_F32, GV_F32);
    m.block = 16;
    m.extra_bits = 2;
    m.prod_round = 0;
    m.acc_round = GV_MMA_RZ;
    m.chunk_round = GV_MMA_RZ;
    m.align_nominal = 1;
    return m;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* sign * (1 + u) * 2^e, e in [-r, r), rounded to t. */
static double draw(uint64_t *s, int r, enum gv_dtype t)
{
    double u = (double)lcg(s) / 9007199254740992.0;
    int e = (int)(lcg(s) % (uint64_t)(2 * r)) - r;
    return gv_fp_round((lcg(s) & 1 ? -1 : 1) * ldexp(1.0 + u, e), t, GV_RNE);
}

/* The partial tile first: the same as the first K mod tile products summed
 * alone, then the rest continuing from that accumulator. */
static void test_tile_is_partial_first(void)
{
    struct gv_mma_model m = base16(), plain = base16();
    m.block = 4;
    plain.block = 4;
    m.tile = 8;
    uint64_t s = 7;
    int differs = 0;
    for (int trial = 0; trial < 200; trial++) {
        double a[11], b[11];
        for (int i = 0; i < 11; i++) {
            a[i] = draw(&s, 6, GV_F16);
            b[i] = draw(&s, 6, GV_F16);
        }
        float first = gv_mma_dot(&plain, a, b, 3); /* 11 mod 8 */
        float want = gv_mma_dot_acc(&plain, first, a + 3, b + 3, 8);
        T_CHECK(gv_mma_dot(&m, a, b, 11) == want);
        differs |= gv_mma_dot(&plain, a, b, 11) != want;
    }
    T_CHECK(differs); /* the tile changes results: the check above can fail */
    /* a K that is a whole number of tiles: no partial part */
    double a[16], b[16];
    for (int i = 0; i < 16; i++) {
        a[i] = draw(&s, 6, GV_F16);
        b[i] = draw(&s, 6, GV_F16);
    }
    T_CHECK(gv_mma_dot(&m, a, b, 16) == gv_mma_dot(&plain, a, b, 16));
    struct gv_err err = {0};
    m.tile = -1;
    T_EQ_INT(gv_mma_model_check(&m, &err), GV_E_USAGE);
    T_CHECK(strstr(err.msg, "tile") != NULL);
}

static void test_structure_text(void)
{
    struct gv_mma_model m = base16(), r;
    char s[96];
    gv_mma_structure_str(&m, s, sizeof s);
    T_EQ_STR(s, "block 16, extra 2, exponent aligned");
    m.tile = 128;
    m.chunk = 320;
    m.chunk_round = GV_MMA_RNE;
    gv_mma_structure_str(&m, s, sizeof s);
    T_EQ_STR(s, "block 16, extra 2, exponent aligned, tile 128, chunks 320 nearest-even");
    r = base16();
    T_EQ_INT(gv_mma_structure_parse(s, &r), 0);
    T_EQ_INT(r.tile, 128);
    T_EQ_INT(r.chunk, 320);
    T_EQ_INT(r.chunk_round, GV_MMA_RNE);
    T_EQ_INT(r.block, 16);
    r = base16();
    T_EQ_INT(gv_mma_structure_parse("block 8, extra exact, tile 64", &r), 0);
    T_EQ_INT(r.block, 8);
    T_EQ_INT(r.extra_bits, -1);
    T_EQ_INT(r.tile, 64);
    T_EQ_INT(r.chunk, 0);
    T_EQ_INT(r.align_nominal, 0); /* not named: by the leading bit */
    /* the fp32 datapath: whole inputs, fused multiply-adds, nearest-even */
    struct gv_mma_model tf = base16();
    tf.in = GV_F32;
    tf.in_frac_bits = 10;
    r = tf;
    T_EQ_INT(gv_mma_structure_parse("fp32 fma, chunks 200 nearest-even", &r), 0);
    T_EQ_INT(r.in_frac_bits, -1);
    T_EQ_INT(r.block, 1);
    T_EQ_INT(r.acc_round, GV_MMA_RNE);
    T_EQ_INT(r.prod_round, 0);
    T_EQ_INT(r.chunk, 200);
    gv_mma_structure_str(&r, s, sizeof s);
    T_EQ_STR(s, "fp32 fma, chunks 200 nearest-even");
    /* not structures: m is left as it was */
    static const char *const bad[] = {"",
                                      "block 0",
                                      "block 16,, tile 8",
                                      "block 16, tile x",
                                      "block 16, tile -4",
                                      "block 16, chunks 64 sideways",
                                      "block 16, chunks 64",
                                      "block 16, promoted",
                                      "tile 16, block 16",
                                      "block 99999999999",
                                      "block 16, extra 41",
                                      "fp32 fma; rm -rf /",
                                      "block 16, tile 8, ",
                                      ("block 16, tile 8, tile 8 tile 8 tile 8 tile 8 tile 8 "
                                       "tile 8 tile 8 tile")};
    /* the fp32 datapath for fp16 inputs is not a structure of them */
    r = base16();
    T_EQ_INT(gv_mma_structure_parse("fp32 fma", &r), -1);
    struct gv_mma_model before = base16();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = before;
        if (gv_mma_structure_parse(bad[i], &r) != -1)
            printf("accepted: \"%s\"\n", bad[i]);
        T_CHECK(!memcmp(&r, &before, sizeof r));
    }
}

struct gemm {
    struct gv_buffer a, b, c;
};

static void gemm_free(struct gemm *g)
{
    free(g->a.data);
    free(g->b.data);
    free(g->c.data);
}

/* A random 64 x 64 x K GEMM as the hidden model computes it. */
static void gemm_by(const struct gv_mma_model *hidden, enum gv_dtype store, int k, uint64_t seed,
                    struct gemm *g)
{
    const int M = 64, N = 64;
    g->a = (struct gv_buffer){store, (size_t)M * k, calloc((size_t)M * k, 4)};
    g->b = (struct gv_buffer){store, (size_t)k * N, calloc((size_t)k * N, 4)};
    g->c = (struct gv_buffer){hidden->out, (size_t)M * N, calloc((size_t)M * N, 4)};
    T_CHECK(g->a.data && g->b.data && g->c.data);
    uint64_t s = seed;
    for (size_t i = 0; i < g->a.count; i++)
        gv_fp_store(g->a.data, store, i, draw(&s, 4, store));
    for (size_t i = 0; i < g->b.count; i++)
        gv_fp_store(g->b.data, store, i, draw(&s, 4, store));
    struct gv_err err = {0};
    T_EQ_INT(gv_mma_gemm(hidden, &g->a, &g->b, &g->c, 1, M, N, k, 2, &err), GV_OK);
}

/* The fit from base on two GEMMs the hidden model computed: the structure
 * text it finds, or "none". */
static void fit_text(const struct gv_mma_model *base, const struct gv_mma_model *hidden,
                     enum gv_dtype store, int k, int hint, char *out, size_t n)
{
    struct gemm g[2];
    gemm_by(hidden, store, k, 11, &g[0]);
    gemm_by(hidden, store, k, 12, &g[1]);
    struct gv_mma_fit_gemm fg[2] = {{&g[0].a, &g[0].b, &g[0].c, 64, 64, k},
                                    {&g[1].a, &g[1].b, &g[1].c, 64, 64, k}};
    struct gv_mma_fit f;
    struct gv_err err = {0};
    struct gv_mma_model h = *base;
    h.tile = hint;
    T_EQ_INT(gv_mma_fit(base, 0, hint ? &h : NULL, fg, 2, &f, &err), GV_OK);
    T_EQ_INT(f.outputs, 1024);
    if (f.found)
        gv_mma_structure_str(&f.m, out, n);
    else
        snprintf(out, n, "none (%ld of %ld)", f.leading, f.outputs);
    gemm_free(&g[0]);
    gemm_free(&g[1]);
}

static void plant(const char *text, const struct gv_mma_model *base, enum gv_dtype store, int k,
                  const char *want)
{
    struct gv_mma_model hidden = *base;
    T_EQ_INT(gv_mma_structure_parse(text, &hidden), 0);
    char got[96];
    fit_text(base, &hidden, store, k, 0, got, sizeof got);
    T_EQ_STR(got, want);
}

static void test_fit_finds_planted(void)
{
    struct gv_mma_model b = base16();
    plant("block 16, extra 2, exponent aligned", &b, GV_F16, 64, "block 16, extra 2, exponent aligned");
    plant("block 8, extra 2, exponent aligned", &b, GV_F16, 17, "block 8, extra 2, exponent aligned");
    plant("block 16, extra 2, exponent aligned, tile 128", &b, GV_F16, 255, "block 16, extra 2, exponent aligned, tile 128");
    plant("block 16, extra 2, exponent aligned, chunks 320 nearest-even", &b, GV_F16, 2048,
          "block 16, extra 2, exponent aligned, chunks 320 nearest-even");
    plant("block 16, extra 2, exponent aligned, chunks 16 toward-zero", &b, GV_F16, 64,
          "block 16, extra 2, exponent aligned, chunks 16 toward-zero");
    /* TF32 inputs, but a kernel that keeps fp32 whole (cuBLASLt at K = 1) */
    struct gv_mma_model tf = b;
    tf.in = GV_F32;
    tf.in_frac_bits = 10;
    tf.block = 8;
    plant("fp32 fma", &tf, GV_F32, 3, "fp32 fma");
    plant("block 8, extra 2, exponent aligned", &tf, GV_F32, 3,
          "block 8, extra 2, exponent aligned");
    /* aligned by the leading bit where the base says exponent sum */
    plant("block 16, extra 2", &b, GV_F16, 33, "block 16, extra 2");
    /* fp8 on Hopper: a 13-bit accumulator in blocks of 32, promoted into
     * fp32 every 128 products */
    struct gv_mma_model f8 = b;
    f8.in = GV_F8E4M3;
    f8.acc_frac_bits = 13;
    f8.block = 32;
    f8.extra_bits = 0;
    plant("block 32, extra 0, exponent aligned, chunks 128 toward-zero, promoted", &f8,
          GV_F8E4M3, 512, "block 32, extra 0, exponent aligned, chunks 128 toward-zero, promoted");
}

static void test_fit_hint_and_misses(void)
{
    struct gv_mma_model b = base16(), hidden = base16();
    hidden.tile = 128;
    char got[96];
    /* K = 64 cannot show a tile of 128: the hint is kept, else none */
    fit_text(&b, &hidden, GV_F16, 64, 128, got, sizeof got);
    T_EQ_STR(got, "block 16, extra 2, exponent aligned, tile 128");
    fit_text(&b, &hidden, GV_F16, 64, 0, got, sizeof got);
    T_EQ_STR(got, "block 16, extra 2, exponent aligned");
    /* outside the family: outputs rounded toward zero: no model, and how far
     * the closest went */
    hidden = base16();
    hidden.out_round = GV_MMA_RZ;
    hidden.acc_round = GV_MMA_RNE;
    fit_text(&b, &hidden, GV_F16, 33, 0, got, sizeof got);
    T_CHECK(!strncmp(got, "none (", 6));
    /* bad arguments */
    struct gv_mma_fit f;
    struct gv_err err = {0};
    T_EQ_INT(gv_mma_fit(&b, 0, NULL, NULL, 0, &f, &err), GV_E_USAGE);
    struct gemm g;
    gemm_by(&b, GV_F16, 16, 3, &g);
    struct gv_mma_fit_gemm fg[2] = {{&g.a, &g.b, &g.c, 64, 64, 16}, {&g.a, &g.b, &g.c, 64, 64, 17}};
    T_EQ_INT(gv_mma_fit(&b, 0, NULL, fg, 2, &f, &err), GV_E_USAGE);
    T_CHECK(strstr(err.msg, "different K") != NULL);
    fg[0].M = 65;
    T_EQ_INT(gv_mma_fit(&b, 0, NULL, fg, 1, &f, &err), GV_E_USAGE);
    gemm_free(&g);
}

int main(void)
{
    T_RUN(test_tile_is_partial_first);
    T_RUN(test_structure_text);
    T_RUN(test_fit_finds_planted);
    T_RUN(test_fit_hint_and_misses);
    return t_done();
}
