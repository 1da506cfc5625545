/* gpuvet probe on the CPU oracle: the plain CPU route gives IEEE behaviour,
 * every emulation gives exactly its known fingerprint (expectations below are
 * read from src/dev/cpu/cpu.c, not from probe output), the tree recovery finds
 * known orders, and the fingerprint reader and diff work. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/backend.h"
#include "probe/probe.h"
#include "t.h"

/* ---------- tree recovery on known orders ---------- */

/* Sums computed for real in float, in a given order, FPRev-style values. */
enum order { SEQ, PAIRWISE, CHUNKS4 };
struct real {
    enum order o;
};

static float pair_sum(const float *v, int lo, int hi)
{
    if (hi - lo == 1)
        return v[lo];
    int mid = lo + (hi - lo) / 2;
    return pair_sum(v, lo, mid) + pair_sum(v, mid, hi);
}

static int real_fn(void *ctx, int n, int len, const int *qi, const int *qj, int *L,
                   struct gv_err *err)
{
    (void)err;
    const struct real *r = ctx;
    float v[256];
    for (int q = 0; q < len; q++) {
        for (int i = 0; i < n; i++)
            v[i] = i == qi[q] ? 0x1p30f : i == qj[q] ? -0x1p30f : 1.0f;
        float s = 0;
        if (r->o == SEQ)
            for (int i = 0; i < n; i++)
                s += v[i];
        else if (r->o == PAIRWISE)
            s = pair_sum(v, 0, n);
        else /* like cpu.c's sum_f with blocks of 4 */
            for (int b = 0; b < n; b += 4) {
                float part = 0;
                for (int i = b; i < b + 4 && i < n; i++)
                    part += v[i];
                s += part;
            }
        L[q] = n - (int)s;
    }
    return GV_OK;
}

/* A tree given by hand: L = size of the lowest common ancestor (a fused
 * chain: blocks of 4 leaves joined to the running sum in one node). */
static int fused_fn(void *ctx, int n, int len, const int *qi, const int *qj, int *L,
                    struct gv_err *err)
{
    (void)ctx;
    (void)err;
    for (int q = 0; q < len; q++) {
        int hi = qi[q] > qj[q] ? qi[q] : qj[q];
        int block = hi / 4; /* node of block b holds leaves 0..4b+3 */
        L[q] = 4 * block + 4 < n ? 4 * block + 4 : n;
    }
    return GV_OK;
}

/* Chunks of 4 products each summed in one rounding from zero, the chunk sums
 * then added one after the other. */
static int flat_chunks_fn(void *ctx, int n, int len, const int *qi, const int *qj, int *L,
                          struct gv_err *err)
{
    (void)ctx;
    (void)err;
    for (int q = 0; q < len; q++) {
        int ci = qi[q] / 4, cj = qj[q] / 4, hi = ci > cj ? ci : cj;
        L[q] = ci == cj ? 4 : (4 * hi + 4 < n ? 4 * hi + 4 : n);
    }
    return GV_OK;
}

static void tree_case(gv_swamp_fn fn, void *ctx, int n, const char *canon, const char *summary,
                      int fused)
{
    struct gv_tree t;
    struct gv_err e = {0};
    T_EQ_INT(gv_tree_recover(n, fn, ctx, &t, &e), GV_OK);
    T_EQ_STR(t.bad, "");
    char s[512];
    if (canon) {
        gv_tree_canon(&t, s, sizeof s);
        T_EQ_STR(s, canon);
    }
    gv_tree_summary(&t, s, sizeof s);
    T_EQ_STR(s, summary);
    T_EQ_INT(gv_tree_max_fused(&t), fused);
    gv_tree_free(&t);
}

static void test_tree(void)
{
    struct real seq = {SEQ}, pw = {PAIRWISE}, ch = {CHUNKS4};
    tree_case(real_fn, &seq, 5, "((((0 1) 2) 3) 4)", "sequential", 1);
    tree_case(real_fn, &seq, 64, NULL, "sequential", 1);
    tree_case(real_fn, &pw, 8, "(((0 1) (2 3)) ((4 5) (6 7)))", "pairwise", 1);
    tree_case(real_fn, &ch, 12, "(((((0 1) 2) 3) (((4 5) 6) 7)) (((8 9) 10) 11))",
              "chunks of 4 (sequential), combined sequentially", 1);
    tree_case(fused_fn, NULL, 12, "(((0 1 2 3) 4 5 6 7) 8 9 10 11)",
              "sequential, 4 terms per rounding", 4);
    /* a block that starts from zero is a node of all its leaves: K = 4 with a
     * block of 4 is one block of 4, not 3 terms joined to a partial sum */
    tree_case(fused_fn, NULL, 4, "(0 1 2 3)", "sequential, 4 terms per rounding", 4);
    tree_case(flat_chunks_fn, NULL, 12, "(((0 1 2 3) (4 5 6 7)) (8 9 10 11))",
              "chunks of 4 (sequential, 4 terms per rounding), combined sequentially", 4);
}

/* Answers that are no tree are reported, not guessed. */
static int liar_fn(void *ctx, int n, int len, const int *qi, const int *qj, int *L,
                   struct gv_err *err)
{
    (void)ctx;
    (void)err;
    for (int q = 0; q < len; q++)
        L[q] = (qi[q] + qj[q]) % 2 ? n : 2; /* pairs everywhere: impossible */
    return GV_OK;
}

static void test_tree_inconsistent(void)
{
    struct gv_tree t;
    struct gv_err e = {0};
    T_EQ_INT(gv_tree_recover(8, liar_fn, NULL, &t, &e), GV_OK);
    T_CHECK(t.bad[0] != 0);
    char s[64];
    gv_tree_summary(&t, s, sizeof s);
    T_EQ_STR(s, "undetermined");
    gv_tree_free(&t);
}

/* ---------- CPU fingerprints ---------- */

/* fit: the K of model.kN (probe --fit-k), NULL the default grid */
static json_t *probe(const char *spec, const char *fit)
{
    struct gv_probe_fit_ks ks;
    struct gv_err fe = {0};
    T_EQ_INT(gv_probe_fit_parse(fit, &ks, &fe), GV_OK);
    const struct gv_backend *be;
    struct gv_device *dev;
    char note[128];
    struct gv_err e = {0};
    if (gv_device_open(spec, &be, &dev, note, sizeof note, &e)) {
        fprintf(stderr, "open %s: %s\n", spec, e.msg);
        return NULL;
    }
    json_t *a = gv_probe_device(be, dev, GV_CALL_DEFAULT, NULL, 1, &ks);
    be->close(dev);
    return a;
}

static const char *value(const json_t *precs, const char *op, const char *prec, const char *prop)
{
    size_t i;
    json_t *p;
    json_array_foreach(precs, i, p)
        if (!strcmp(json_string_value(json_object_get(p, "op")), op) &&
            !strcmp(json_string_value(json_object_get(p, "precision")), prec))
            return json_string_value(json_object_get(
                json_object_get(json_object_get(p, "properties"), prop), "value"));
    return NULL;
}

struct expect {
    const char *op, *prec, *prop, *value;
};

/* The plain CPU route (cpu.c): IEEE round-to-nearest-even float/double
 * arithmetic, products rounded before the add (no FMA contraction on x86-64
 * without -mfma), each output element accumulated k = 0..K-1 in order, sums
 * in blocks of 256 then across blocks, subnormals kept, one thread per row. */
static const struct expect plain[] = {
    /* the CPU adds one product at a time, the sum rounded exactly once: its
     * kernel at every K (model.kN) */
    {"gemm", "f32", "model.k4096", "block 1, extra exact"},
    {"gemm", "bf16", "model.k255", "block 1, extra exact"},
    {"gemm", "f16acc16", "model.k1", "block 1, extra exact"},
    {"gemm", "f64", "input_subnormals", "kept"},
    {"gemm", "f64", "output_subnormals", "kept"},
    {"gemm", "f64", "input_mantissa_bits", "52"},
    {"gemm", "f64", "sum_mantissa_bits", "52"},
    {"gemm", "f64", "sum_rounding", "nearest-even"},
    {"gemm", "f64", "extra_bits", "0"},
    {"gemm", "f64", "product_rounding", "rounded"},
    {"gemm", "f32", "input_subnormals", "kept"},
    {"gemm", "f32", "output_subnormals", "kept"},
    {"gemm", "f32", "input_mantissa_bits", "23"},
    {"gemm", "f32", "input_rounding", "not applicable"},
    {"gemm", "f32", "sum_mantissa_bits", "23"},
    {"gemm", "f32", "sum_rounding", "nearest-even"},
    {"gemm", "f32", "combine_rounding", "nearest-even"},
    {"gemm", "f32", "product_alignment", "not applicable"},
    {"gemm", "f32", "extra_bits", "0"},
    {"gemm", "f32", "product_rounding", "rounded"},
    {"gemm", "f32", "fused_terms", "1"},
    {"gemm", "f32", "order.k16", "sequential"},
    {"gemm", "f32", "order.k64", "sequential"},
    {"gemm", "f32", "order.k256", "sequential"},
    {"gemm", "f32", "deterministic", "yes"},
    {"gemm", "f32", "batch_invariant", "yes"},
    /* TF32 compute: inputs rounded RNE to 10 fraction bits (gv_round_f32_to_tf32) */
    {"gemm", "tf32", "input_mantissa_bits", "10"},
    {"gemm", "tf32", "input_rounding", "nearest-even"},
    {"gemm", "tf32", "sum_mantissa_bits", "23"},
    {"gemm", "f16", "input_subnormals", "kept"},
    {"gemm", "f16", "input_mantissa_bits", "10"},
    {"gemm", "f16", "sum_mantissa_bits", "23"},
    {"gemm", "f16", "sum_rounding", "nearest-even"},
    {"gemm", "f16", "order.k256", "sequential"},
    /* fp16 output: fp32 sums, one RNE conversion at the end */
    {"gemm", "f16.out16", "output_subnormals", "kept"},
    {"gemm", "f16.out16", "sum_mantissa_bits", "10"},
    {"gemm", "f16.out16", "sum_rounding", "nearest-even"},
    /* an fp32 accumulator under an fp16 output: 13 bits beyond the 10 seen, every
     * test up to 8 exact */
    {"gemm", "f16.out16", "extra_bits", ">=8"},
    /* fp16 accumulation: c = round16(c + a*b), a*b exact in float: one rounding (FMA) */
    {"gemm", "f16acc16", "sum_mantissa_bits", "10"},
    {"gemm", "f16acc16", "sum_rounding", "nearest-even"},
    {"gemm", "f16acc16", "product_rounding", "fma"},
    {"gemm", "f16acc16", "order.k64", "sequential"},
    {"gemm", "bf16", "input_mantissa_bits", "7"},
    {"gemm", "bf16", "input_subnormals", "kept"},
    {"gemm", "bf16", "output_subnormals", "kept"},
    {"sum", "f32", "sum_rounding", "nearest-even"},
    {"sum", "f32", "order.k64", "sequential"},
    {"sum", "f32", "order.k512", "chunks of 256 (sequential), combined sequentially"},
    {"sum", "f64", "order.k512", "chunks of 256 (sequential), combined sequentially"},
    {"sum", "f32", "deterministic", "yes"},
};

/* What each emulation changes (cpu.c's mm_mode_of), and nothing else. */
struct emu_expect {
    const char *spec;
    struct expect changed[12];
};
static const struct emu_expect emus[] = {
    {"cpu:emulate=tf32",
     {{"gemm", "f32", "input_mantissa_bits", "10"},
      {"gemm", "f32", "input_rounding", "nearest-even"},
      {"gemm", "f32", "product_rounding", "not applicable"}}},
    {"cpu:emulate=tf32rz",
     {{"gemm", "f32", "input_mantissa_bits", "10"},
      {"gemm", "f32", "input_rounding", "toward-zero"},
      {"gemm", "f32", "product_rounding", "not applicable"}}},
    /* fp16 GEMM declaring fp32 accumulation sums in fp16 (10 fraction bits, FMA-like) */
    {"cpu:emulate=fp16acc",
     {{"gemm", "f16", "sum_mantissa_bits", "10"},
      {"gemm", "f16", "product_rounding", "fma"},
      {"gemm", "f16.out16", "extra_bits", "0"},
      {"gemm", "f16.out16", "product_rounding", "fma"}}},
    /* fp16/bf16 inputs flushed; fp16/bf16 outputs flushed (fp32 outputs are not) */
    {"cpu:emulate=ftz",
     {{"gemm", "f16", "input_subnormals", "flushed"},
      {"gemm", "f16.out16", "input_subnormals", "flushed"},
      {"gemm", "f16.out16", "output_subnormals", "flushed"},
      {"gemm", "f16acc16", "input_subnormals", "flushed"},
      {"gemm", "f16acc16", "output_subnormals", "flushed"},
      {"gemm", "bf16", "input_subnormals", "flushed"},
      {"gemm", "bf16.out16", "input_subnormals", "flushed"},
      {"gemm", "bf16.out16", "output_subnormals", "flushed"}}},
    /* RZ float arithmetic in GEMM (not fp64, not the final fp16 store, not sums) */
    {"cpu:emulate=trunc",
     {{"gemm", "f32", "sum_rounding", "toward-zero"},
      {"gemm", "tf32", "sum_rounding", "toward-zero"},
      {"gemm", "f16", "sum_rounding", "toward-zero"},
      {"gemm", "f16acc16", "sum_rounding", "toward-zero"},
      {"gemm", "bf16", "sum_rounding", "toward-zero"},
      /* every addition truncates: a later block's too */
      {"gemm", "f32", "combine_rounding", "toward-zero"},
      {"gemm", "tf32", "combine_rounding", "toward-zero"},
      {"gemm", "f16", "combine_rounding", "toward-zero"},
      {"gemm", "f16acc16", "combine_rounding", "toward-zero"},
      {"gemm", "bf16", "combine_rounding", "toward-zero"}}},
    {"cpu:emulate=bf16gemm",
     {{"gemm", "f16", "input_mantissa_bits", "7"},
      {"gemm", "f16", "input_rounding", "nearest-even"},
      {"gemm", "f16.out16", "input_mantissa_bits", "7"},
      {"gemm", "f16.out16", "input_rounding", "nearest-even"}}},
};

static json_t *plain_fp;

static void test_plain(void)
{
    plain_fp = probe("cpu", NULL);
    T_CHECK(plain_fp != NULL);
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        const char *v = value(plain_fp, plain[i].op, plain[i].prec, plain[i].prop);
        if (!v || strcmp(v, plain[i].value))
            fprintf(stderr, "  %s.%s %s\n", plain[i].op, plain[i].prec, plain[i].prop);
        T_EQ_STR(v, plain[i].value);
    }
    /* every property records how: a method and observations */
    size_t i, j;
    json_t *p, *q;
    const char *k;
    json_array_foreach(plain_fp, i, p) {
        if (strcmp(json_string_value(json_object_get(p, "status")), "probed"))
            continue;
        json_object_foreach(json_object_get(p, "properties"), k, q) {
            T_CHECK(json_is_string(json_object_get(q, "method")));
            T_CHECK(json_is_array(json_object_get(q, "observations")));
        }
        (void)j;
    }
}

static void test_emulations(void)
{
    for (size_t e = 0; e < sizeof emus / sizeof emus[0]; e++) {
        json_t *fp = probe(emus[e].spec, "none"); /* the targeted properties */
        T_CHECK(fp != NULL);
        if (!fp)
            continue;
        size_t i, nchanged = 0;
        json_t *p;
        json_array_foreach(fp, i, p) {
            const char *op = json_string_value(json_object_get(p, "op"));
            const char *prec = json_string_value(json_object_get(p, "precision"));
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(p, "properties"), k, v) {
                const char *now = json_string_value(json_object_get(v, "value"));
                const char *was = value(plain_fp, op, prec, k);
                const char *want = was;
                for (int c = 0; c < 12 && emus[e].changed[c].op; c++)
                    if (!strcmp(emus[e].changed[c].op, op) &&
                        !strcmp(emus[e].changed[c].prec, prec) &&
                        !strcmp(emus[e].changed[c].prop, k))
                        want = emus[e].changed[c].value;
                if (!now || !want || strcmp(now, want))
                    fprintf(stderr, "  %s: %s.%s %s = %s, expected %s\n", emus[e].spec, op, prec,
                            k, now ? now : "?", want ? want : "?");
                T_EQ_STR(now, want);
                nchanged += was && now && strcmp(was, now);
            }
        }
        size_t want_n = 0;
        while (want_n < 12 && emus[e].changed[want_n].op)
            want_n++;
        T_EQ_INT(nchanged, want_n);
        json_decref(fp);
    }
}

/* ---------- the document reader and the diff ---------- */

static json_t *doc_of(json_t *precs, const char *route)
{
    return json_pack("{s:s, s:i, s:s, s:[{s:s, s:s, s:O}]}", "schema", GV_PROBE_SCHEMA,
                     "schema_version", GV_PROBE_SCHEMA_VERSION, "device_spec", "cpu", "routes",
                     "route", route, "status", "probed", "precisions", precs);
}

static void test_reader_and_diff(void)
{
    json_t *tf = probe("cpu:emulate=tf32", NULL);
    json_t *da = doc_of(plain_fp, "cpu"), *db = doc_of(tf, "cpu");
    struct gv_fingerprint fa, fb;
    struct gv_err e = {0};
    T_EQ_INT(gv_fp_from_json(da, "a.json", &fa, &e), GV_OK);
    T_EQ_INT(gv_fp_from_json(db, "b.json", &fb, &e), GV_OK);
    struct gv_fp_change *ch = NULL;
    size_t n = gv_fp_diff(&fa, &fb, &ch);
    T_EQ_INT(n, 3);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= !strcmp(ch[i].prop, "input_mantissa_bits") &&
                 strstr(ch[i].text, "fp32 GEMM on cpu: inputs now rounded to 10 mantissa bits "
                                    "(was 23)") != NULL;
    T_CHECK(found);
    free(ch);
    gv_fp_free(&fa);
    gv_fp_free(&fb);
    /* a newer schema version is refused, naming the file */
    json_object_set_new(da, "schema_version", json_integer(GV_PROBE_SCHEMA_VERSION + 1));
    T_CHECK(gv_fp_from_json(da, "a.json", &fa, &e) != GV_OK);
    T_CHECK(strstr(e.msg, "a.json") != NULL);
    /* a property without a value names the field */
    const char *bad = "{\"schema\":\"gpuvet.probe\",\"schema_version\":1,\"routes\":[{\"route\":"
                      "\"cpu\",\"precisions\":[{\"op\":\"gemm\",\"precision\":\"f32\",\"status\":"
                      "\"probed\",\"properties\":{\"x\":{}}}]}]}";
    T_CHECK(gv_fp_parse(bad, strlen(bad), "c.json", &fa, &e) != GV_OK);
    T_CHECK(strstr(e.msg, "properties.x") != NULL);
    json_decref(da);
    json_decref(db);
    json_decref(tf);
}

/* ---------- determinism: a change only beyond chance ---------- */

static json_t *det_doc(const char *value, int runs, int differing)
{
    json_t *prop = json_pack("{s:s, s:s, s:[]}", "value", value, "method", "m", "observations");
    if (runs > 0) {
        json_object_set_new(prop, "runs", json_integer(runs));
        json_object_set_new(prop, "differing", json_integer(differing));
    }
    json_t *precs = json_pack("[{s:s, s:s, s:s, s:{s:o}}]", "op", "sum", "precision", "f32",
                              "status", "probed", "properties", "deterministic", prop);
    json_t *d = doc_of(precs, "kernel");
    json_decref(precs);
    return d;
}

static size_t det_changes(json_t *a, json_t *b, char *text, size_t n)
{
    struct gv_fingerprint fa, fb;
    struct gv_err e = {0};
    T_EQ_INT(gv_fp_from_json(a, "a.json", &fa, &e), GV_OK);
    T_EQ_INT(gv_fp_from_json(b, "b.json", &fb, &e), GV_OK);
    struct gv_fp_change *ch = NULL;
    size_t k = gv_fp_diff(&fa, &fb, &ch);
    if (k && text)
        snprintf(text, n, "%s", ch[0].text);
    free(ch);
    gv_fp_free(&fa);
    gv_fp_free(&fb);
    json_decref(a);
    json_decref(b);
    return k;
}

static void test_determinism_evidence(void)
{
    /* Fisher's exact test, two-sided, against values from its definition:
     * 0 of 10 vs 5 of 10: 2 * C(10,5)/C(20,5) = 504/15504 */
    T_CHECK(fabs(gv_fp_det_p(10, 0, 10, 5) - 504.0 / 15504.0) < 1e-12);
    T_CHECK(fabs(gv_fp_det_p(10, 0, 10, 10) - 2.0 / 184756.0) < 1e-15);
    T_CHECK(fabs(gv_fp_det_p(10, 3, 10, 3) - 1.0) < 1e-12);
    char text[400] = "";
    /* one odd run in ten against none: chance, not a change */
    T_EQ_INT(det_changes(det_doc("yes", 10, 0), det_doc("no", 10, 1), NULL, 0), 0);
    T_EQ_INT(det_changes(det_doc("no", 10, 2), det_doc("yes", 10, 0), NULL, 0), 0);
    /* older documents (yes/no over three runs) cannot show a change either */
    T_EQ_INT(det_changes(det_doc("yes", 0, 0), det_doc("no", 0, 0), NULL, 0), 0);
    /* a route that now changes its bits in most runs: a change, with the counts */
    T_EQ_INT(det_changes(det_doc("yes", 10, 0), det_doc("no", 10, 9), text, sizeof text), 1);
    T_CHECK(strstr(text, "fp32 sum on kernel: run-to-run bits now differ") != NULL);
    T_CHECK(strstr(text, "9 of 10 runs") != NULL && strstr(text, "was 0 of 10") != NULL);
    /* impossible counts are refused, naming the field */
    struct gv_fingerprint f;
    struct gv_err e = {0};
    json_t *bad = det_doc("no", 10, 10);
    T_CHECK(gv_fp_from_json(bad, "c.json", &f, &e) != GV_OK);
    T_CHECK(strstr(e.msg, "c.json") && strstr(e.msg, "deterministic"));
    json_decref(bad);
}

int main(void)
{
    T_RUN(test_determinism_evidence);
    T_RUN(test_tree);
    T_RUN(test_tree_inconsistent);
    T_RUN(test_plain);
    T_RUN(test_emulations);
    T_RUN(test_reader_and_diff);
    json_decref(plain_fp);
    return t_done();
}
