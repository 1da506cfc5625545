/* Fingerprint documents read as block-FMA models (fpmodel.h). The property
 * names and values are the probe's (src/probe/props.c, docs/probe.md); the
 * schema name and version are probe.h's (GV_PROBE_SCHEMA, which this room may
 * not include). docs/probe.md, "Emulating a fingerprint", says how each
 * property maps to a parameter and which defaults are taken. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "dev/cpu/fpmodel.h"

#define FP_SCHEMA "gpuvet.probe"
#define FP_SCHEMA_VERSION 1
#define MAX_ROUTES 64
#define MAX_PRECS 64

/* ---------- small helpers ---------- */

static void note(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *buf, size_t n, const char *fmt, ...)
{
    if (!buf || !n)
        return;
    size_t used = strlen(buf);
    if (used + 3 >= n)
        return;
    if (used)
        used += (size_t)snprintf(buf + used, n - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
}

/* Printable ASCII, 1..max-1 characters: safe to echo in descriptions. */
static int text_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n >= max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

static int get_text(const json_t *o, const char *key, char *out, size_t n, const char *where,
                    struct gv_err *err)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s)
        return gv_err_set(err, GV_E_FORMAT, "%s.%s: missing or not a string", where, key);
    if (!text_ok(s, n))
        return gv_err_set(err, GV_E_FORMAT, "%s.%s: not 1..%zu printable ASCII characters",
                          where, key, n - 1);
    snprintf(out, n, "%s", s);
    return GV_OK;
}

/* ---------- property values ---------- */

/* props[name].value, checked to be a short printable string. */
static int prop_value(const json_t *props, const char *name, const char **v, const char *where,
                      struct gv_err *err)
{
    const json_t *p = json_object_get(props, name);
    if (!json_is_object(p))
        return gv_err_set(err, GV_E_FORMAT, "%s.%s: missing or not an object", where, name);
    *v = json_string_value(json_object_get(p, "value"));
    if (!*v || !text_ok(*v, 64))
        return gv_err_set(err, GV_E_FORMAT, "%s.%s.value: missing or not a short string", where,
                          name);
    return GV_OK;
}

static int undetermined(const char *v) { return !strcmp(v, "undetermined"); }

/* A decimal 0..max, or -1 for "undetermined"; anything else an error. */
static int prop_int(const json_t *props, const char *name, int max, int *out, const char *where,
                    struct gv_err *err)
{
    const char *v = NULL;
    int rc = prop_value(props, name, &v, where, err);
    if (rc)
        return rc;
    if (undetermined(v)) {
        *out = -1;
        return GV_OK;
    }
    long n = 0;
    size_t i = 0;
    for (; v[i] >= '0' && v[i] <= '9' && i < 8; i++)
        n = n * 10 + (v[i] - '0');
    if (i == 0 || v[i] || n > max)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s.%s.value: \"%s\" is not an integer 0..%d or \"undetermined\"", where,
                          name, v, max);
    *out = (int)n;
    return GV_OK;
}

/* A rounding mode; -1 for undetermined, -2 for "not applicable". */
static int prop_round(const json_t *props, const char *name, int *out, int *nearest_only,
                      const char *where, struct gv_err *err)
{
    static const struct {
        const char *name;
        int mode;
    } modes[] = {{"nearest-even", GV_MMA_RNE}, {"nearest-away", GV_MMA_RNA},
                 {"nearest", GV_MMA_RNE},      {"toward-zero", GV_MMA_RZ},
                 {"down", GV_MMA_DOWN},        {"up", GV_MMA_UP},
                 {"undetermined", -1},         {"not applicable", -2}};
    const char *v = NULL;
    int rc = prop_value(props, name, &v, where, err);
    if (rc)
        return rc;
    *nearest_only = !strcmp(v, "nearest");
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!strcmp(v, modes[i].name)) {
            *out = modes[i].mode;
            return GV_OK;
        }
    return gv_err_set(err, GV_E_FORMAT,
                      "%s.%s.value: \"%s\" is not nearest-even, nearest-away, nearest, "
                      "toward-zero, down, up, not applicable or undetermined",
                      where, name, v);
}

/* kept/flushed: 0/1; -1 undetermined; "not applicable" 0. */
static int prop_flush(const json_t *props, const char *name, int *out, const char *where,
                      struct gv_err *err)
{
    const char *v = NULL;
    int rc = prop_value(props, name, &v, where, err);
    if (rc)
        return rc;
    if (!strcmp(v, "kept") || !strcmp(v, "not applicable"))
        *out = 0;
    else if (!strcmp(v, "flushed"))
        *out = 1;
    else if (undetermined(v))
        *out = -1;
    else
        return gv_err_set(err, GV_E_FORMAT,
                          "%s.%s.value: \"%s\" is not kept, flushed, not applicable or "
                          "undetermined",
                          where, name, v);
    return GV_OK;
}

/* ---------- one precision ---------- */

static int frac_of(enum gv_dtype t)
{
    switch (t) {
    case GV_F32: return 23;
    case GV_TF32: return 10;
    case GV_F16: return 10;
    case GV_BF16: return 7;
    case GV_F8E4M3: return 3;
    case GV_F8E5M2: return 2;
    default: return -1;
    }
}

static int formats_ok(enum gv_dtype in, enum gv_dtype compute, enum gv_dtype out,
                      const char *where, struct gv_err *err)
{
    if (in == GV_F64 || in == GV_TF32 || frac_of(in) < 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s: %s inputs are not modelled", where,
                          gv_dtype_name(in));
    if (compute != GV_F32 && compute != GV_TF32 && compute != GV_F16)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s: %s compute is not modelled", where,
                          gv_dtype_name(compute));
    if (out != GV_F32 && out != GV_F16 && out != GV_BF16)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s: %s output is not modelled", where,
                          gv_dtype_name(out));
    return GV_OK;
}

/* extra_bits as the probe writes it: "0".."8" -> the number, ">=N" -> N,
 * "undetermined" -> -1; anything else -2. */
static int extra_of(const char *v)
{
    const char *d = !strncmp(v, ">=", 2) ? v + 2 : v;
    if (!strcmp(v, "undetermined"))
        return -1;
    if (d[0] < '0' || d[0] > '8' || d[1])
        return -2;
    return d[0] - '0';
}

struct measured {
    int in_bits, sum_bits, block, in_flush, out_flush, in_round, sum_round;
    int in_nearest, sum_nearest;
    const char *extra, *products;
};

static int read_props(const json_t *props, enum gv_dtype in, const char *where,
                      struct measured *ms, struct gv_err *err)
{
    if (!json_is_object(props))
        return gv_err_set(err, GV_E_FORMAT, "%s: missing or not an object", where);
    int rc = prop_int(props, "input_mantissa_bits", frac_of(in), &ms->in_bits, where, err);
    if (!rc)
        rc = prop_int(props, "sum_mantissa_bits", 23, &ms->sum_bits, where, err);
    if (!rc)
        rc = prop_int(props, "fused_terms", 1 << 20, &ms->block, where, err);
    if (!rc)
        rc = prop_flush(props, "input_subnormals", &ms->in_flush, where, err);
    if (!rc)
        rc = prop_flush(props, "output_subnormals", &ms->out_flush, where, err);
    if (!rc)
        rc = prop_round(props, "input_rounding", &ms->in_round, &ms->in_nearest, where, err);
    if (!rc)
        rc = prop_round(props, "sum_rounding", &ms->sum_round, &ms->sum_nearest, where, err);
    if (!rc)
        rc = prop_value(props, "extra_bits", &ms->extra, where, err);
    if (!rc)
        rc = prop_value(props, "product_rounding", &ms->products, where, err);
    if (rc)
        return rc;
    if (extra_of(ms->extra) < -1)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s.extra_bits.value: \"%s\" is not 0 to 8, >=N (N 0 to 8) or "
                          "undetermined",
                          where, ms->extra);
    static const char *const prods[] = {"exact", "rounded", "fma", "not applicable",
                                        "undetermined"};
    int ok = 0;
    for (size_t i = 0; i < 5; i++)
        ok |= !strcmp(ms->products, prods[i]);
    if (!ok)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s.product_rounding.value: \"%s\" is not exact, rounded, fma, not "
                          "applicable or undetermined",
                          where, ms->products);
    return GV_OK;
}

static void set_inputs(const struct measured *ms, enum gv_dtype in, enum gv_dtype compute,
                       struct gv_mma_model *m, char *as, size_t an)
{
    if (ms->in_bits < 0) {
        m->in_frac_bits = compute == GV_TF32 ? 10 : -1;
        note(as, an, "input_mantissa_bits undetermined: %d taken (the %s format's)",
             compute == GV_TF32 ? 10 : frac_of(in), compute == GV_TF32 ? "tf32" : "input");
    } else {
        m->in_frac_bits = ms->in_bits >= frac_of(in) ? -1 : ms->in_bits;
    }
    m->in_round = ms->in_round >= 0 ? (enum gv_mma_round)ms->in_round : GV_MMA_RNE;
    if (ms->in_round == -1 && m->in_frac_bits >= 0)
        note(as, an, "input_rounding undetermined: nearest-even taken");
    if (ms->in_nearest)
        note(as, an, "input_rounding \"nearest\" (ties not probed): ties to even taken");
    m->in_flush = ms->in_flush == 1;
    if (ms->in_flush < 0)
        note(as, an, "input_subnormals undetermined: kept taken");
}

/* The accumulator and the output conversion. sum_mantissa_bits and
 * sum_rounding are measured on the output as delivered: when the output is
 * narrower than the accumulator and keeps all its bits, they describe the
 * output conversion, not the accumulator. */
static void set_sums(const struct measured *ms, enum gv_dtype compute, enum gv_dtype out,
                     struct gv_mma_model *m, char *as, size_t an)
{
    int acc_frac = compute == GV_F16 ? 10 : 23;
    enum gv_dtype seen = compute == GV_F16 && out != GV_F16 ? GV_F16 : out;
    int seen_frac = frac_of(seen);
    m->acc = compute == GV_F16 ? GV_F16 : GV_F32;
    int through_output = seen_frac < acc_frac && ms->sum_bits == seen_frac;
    if (ms->sum_bits < 0) {
        m->acc_frac_bits = acc_frac;
        note(as, an, "sum_mantissa_bits undetermined: %d taken (the %s accumulator's)", acc_frac,
             gv_dtype_name(m->acc));
    } else if (ms->sum_bits >= seen_frac || ms->sum_bits == 0) {
        m->acc_frac_bits = acc_frac;
        if (through_output)
            note(as, an, "sum_mantissa_bits %d is the %s output's: the accumulator taken as "
                 "%d bits", ms->sum_bits, gv_dtype_name(out), acc_frac);
        else if (ms->sum_bits == 0)
            note(as, an, "sum_mantissa_bits 0 is not modelled: %d taken", acc_frac);
    } else {
        m->acc_frac_bits = ms->sum_bits;
    }
    enum gv_mma_round r = ms->sum_round >= 0 ? (enum gv_mma_round)ms->sum_round : GV_MMA_RNE;
    if (ms->sum_round < 0)
        note(as, an, "sum_rounding undetermined: nearest-even taken");
    if (ms->sum_nearest)
        note(as, an, "sum_rounding \"nearest\" (ties not probed): ties to even taken");
    m->acc_round = through_output ? GV_MMA_RNE : r;
    m->out_round = through_output ? r : GV_MMA_RNE;
    if (through_output)
        note(as, an, "sum_rounding was measured through the %s output: it is the output's, "
             "the accumulator taken as nearest-even", gv_dtype_name(out));
    m->out = out;
    m->out_flush = ms->out_flush == 1;
    if (ms->out_flush < 0)
        note(as, an, "output_subnormals undetermined: kept taken");
}

static void set_blocks(const struct measured *ms, struct gv_mma_model *m, char *as, size_t an)
{
    m->block = ms->block > 0 ? ms->block : 1;
    if (ms->block <= 0)
        note(as, an, "fused_terms %s: 1 taken", ms->block < 0 ? "undetermined" : "0");
    if (m->block == 1) {
        m->extra_bits = -1;
        note(as, an, "extra_bits %s not used: with one product per rounding each addition is "
             "taken as exact, rounded once", ms->extra);
    } else if (undetermined(ms->extra)) {
        m->extra_bits = -1;
        note(as, an, "extra_bits undetermined: exact alignment taken");
    } else {
        m->extra_bits = extra_of(ms->extra);
        if (ms->extra[0] == '>')
            note(as, an, "extra_bits \"%s\": %d taken", ms->extra, m->extra_bits);
    }
    m->prod_round = !strcmp(ms->products, "rounded");
    if (undetermined(ms->products))
        note(as, an, "product_rounding undetermined: exact products taken");
}

/* How chunk sums are added (combine_rounding, absent from older fingerprints):
 * the accumulator's rounding when it is not known. */
static int set_combine(const json_t *props, struct gv_mma_model *m, const char *where,
                       struct gv_err *err)
{
    int r = -1, nearest = 0;
    m->chunk_round = m->acc_round;
    if (json_object_get(props, "combine_rounding")) {
        int rc = prop_round(props, "combine_rounding", &r, &nearest, where, err);
        if (rc)
            return rc;
    }
    if (r >= 0)
        m->chunk_round = (enum gv_mma_round)r;
    /* product_alignment (absent from older fingerprints): "exponent sum" or the
     * leading bit (every other value) */
    const char *al = NULL;
    if (json_object_get(props, "product_alignment")) {
        int rc = prop_value(props, "product_alignment", &al, where, err);
        if (rc)
            return rc;
    }
    m->align_nominal = al && !strcmp(al, "exponent sum");
    return GV_OK; /* an unknown combine_rounding is noted by read_orders, where a tree has
                   * chunks */
}

int gv_mma_model_from_props(const json_t *props, enum gv_dtype in, enum gv_dtype compute,
                            enum gv_dtype out, struct gv_mma_model *m, char *assumed,
                            size_t assumed_size, const char *where, struct gv_err *err)
{
    memset(m, 0, sizeof *m);
    if (assumed && assumed_size)
        assumed[0] = 0;
    int rc = formats_ok(in, compute, out, where, err);
    struct measured ms;
    if (!rc)
        rc = read_props(props, in, where, &ms, err);
    if (rc)
        return rc;
    m->in = in;
    set_inputs(&ms, in, compute, m, assumed, assumed_size);
    set_sums(&ms, compute, out, m, assumed, assumed_size);
    set_blocks(&ms, m, assumed, assumed_size);
    rc = set_combine(props, m, where, err);
    return rc ? rc : gv_mma_model_check(m, err);
}

/* ---------- the document ---------- */

static int dtype_at(const json_t *p, const char *key, enum gv_dtype *t, const char *where,
                    struct gv_err *err)
{
    char name[16];
    int rc = get_text(p, key, name, sizeof name, where, err);
    if (rc)
        return rc;
    int d = gv_dtype_from_name(name);
    if (d < 0)
        return gv_err_set(err, GV_E_FORMAT, "%s.%s: \"%s\" is not a format", where, key, name);
    *t = (enum gv_dtype)d;
    return GV_OK;
}

/* The block and chunk of an order.kN summary (src/probe/tree.c): "sequential"
 * (1, 0), "sequential, B terms per rounding" (B, 0), "chunks of C (INNER),
 * combined sequentially" (INNER's block, C). 0 for any other tree. */
static int parse_order(const char *v, int *block, int *chunk)
{
    int c = 0, used = 0;
    *chunk = 0;
    if (sscanf(v, "chunks of %d (%n", &c, &used) == 1 && used > 0 && c > 0 && c <= (1 << 20)) {
        const char *tail = strstr(v, "), combined sequentially");
        if (!tail || tail[strlen("), combined sequentially")])
            return 0;
        char inner[96];
        size_t n = (size_t)(tail - (v + used));
        if (n >= sizeof inner)
            return 0;
        memcpy(inner, v + used, n);
        inner[n] = 0;
        *chunk = c;
        return parse_order(inner, block, &(int){0}) && strncmp(inner, "chunks", 6);
    }
    if (!strcmp(v, "sequential")) {
        *block = 1;
        return 1;
    }
    int b = 0;
    used = 0;
    if (sscanf(v, "sequential, %d terms per rounding%n", &b, &used) == 1 && !v[used] && b > 0 &&
        b <= (1 << 20)) {
        *block = b;
        return 1;
    }
    return 0;
}

/* The models at each K the probe fitted (model.kN, num/mma.h's structure
 * text); 1 when there is one. */
static int read_fits(const json_t *props, struct gv_fpmodel_entry *e)
{
    const char *key;
    const json_t *v;
    int any = 0;
    json_object_foreach((json_t *)props, key, v) {
        int k = 0, used = 0;
        const char *val = json_string_value(json_object_get(v, "value"));
        if (!val || sscanf(key, "model.k%d%n", &k, &used) != 1 || key[used] || k < 1 ||
            k > (1 << 20) || undetermined(val))
            continue;
        struct gv_mma_model m = e->m;
        if (!text_ok(val, 128) || gv_mma_structure_parse(val, &m)) {
            note(e->assumed, sizeof e->assumed, "%s \"%.60s\" not modelled", key,
                 text_ok(val, 128) ? val : "(not printable)");
            continue;
        }
        if (e->nbyk >= GV_FPMODEL_ORDERS)
            break;
        e->byk[e->nbyk++] = (struct gv_fpmodel_order){k, m};
        any = 1;
    }
    return any;
}

/* The models at each K whose tree the probe recovered (order.kN), where it
 * fitted none (fingerprints before model.kN). */
static void read_orders(const json_t *props, struct gv_fpmodel_entry *e)
{
    const char *key;
    const json_t *v;
    const char *extra = json_string_value(json_object_get(json_object_get(props, "extra_bits"),
                                                          "value"));
    int xb = extra ? extra_of(extra) : -1;
    json_object_foreach((json_t *)props, key, v) {
        int k = 0, used = 0, block, chunk;
        const char *val = json_string_value(json_object_get(v, "value"));
        if (e->nbyk >= GV_FPMODEL_ORDERS || !val || sscanf(key, "order.k%d%n", &k, &used) != 1 ||
            key[used] || k < 1 || k > (1 << 20))
            continue;
        if (!parse_order(val, &block, &chunk)) {
            note(e->assumed, sizeof e->assumed, "%s \"%.60s\" not modelled: fused_terms used "
                 "there", key, val);
            continue;
        }
        const char *cr = json_string_value(
            json_object_get(json_object_get(props, "combine_rounding"), "value"));
        if (chunk > 0 && chunk < k && (!cr || !strcmp(cr, "undetermined")) &&
            !strstr(e->assumed, "combine_rounding"))
            note(e->assumed, sizeof e->assumed, "combine_rounding %s: chunk sums added with "
                 "the accumulator's rounding", cr ? "undetermined" : "not probed");
        struct gv_fpmodel_order *o = &e->byk[e->nbyk++];
        o->k = k;
        o->m = e->m;
        o->m.block = block;
        o->m.chunk = chunk >= k ? 0 : chunk;
        o->m.extra_bits = block == 1 ? -1 : xb < -1 ? -1 : xb;
    }
}

/* The powers of two dividing k, up to 2^5: kernels for K not a multiple of
 * the K tile are another choice of the libraries. */
static int twos(long k)
{
    int n = 0;
    for (; n < 5 && k > 0 && !(k & 1); n++)
        k >>= 1;
    return n;
}

const struct gv_mma_model *gv_fpmodel_model_for(const struct gv_fpmodel_entry *e, long k)
{
    const struct gv_mma_model *best = &e->m;
    double d = 1e300, lk = log2((double)(k > 0 ? k : 1));
    int best_k = 0;
    for (int i = 0; i < e->nbyk; i++) {
        double di = fabs(log2((double)e->byk[i].k) - lk) + (twos(e->byk[i].k) != twos(k)) * 0.75;
        if (di < d || (di == d && e->byk[i].k < best_k)) {
            d = di;
            best_k = e->byk[i].k;
            best = &e->byk[i].m;
        }
    }
    return best;
}

/* One element of precisions[]: a model added when it is a probed GEMM. */
static int read_precision(const json_t *p, const char *where, struct gv_fpmodel *fm,
                          struct gv_err *err)
{
    if (!json_is_object(p))
        return gv_err_set(err, GV_E_FORMAT, "%s: not an object", where);
    char op[16], name[24], status[24];
    struct gv_fpmodel_entry e;
    memset(&e, 0, sizeof e);
    int rc = get_text(p, "op", op, sizeof op, where, err);
    if (!rc)
        rc = get_text(p, "precision", name, sizeof name, where, err);
    if (!rc)
        rc = get_text(p, "status", status, sizeof status, where, err);
    if (!rc)
        rc = dtype_at(p, "in", &e.in, where, err);
    if (!rc)
        rc = dtype_at(p, "compute", &e.compute, where, err);
    if (!rc)
        rc = dtype_at(p, "out", &e.out, where, err);
    if (rc || strcmp(op, "gemm"))
        return rc;
    if (strcmp(status, "probed")) {
        note(fm->skipped, sizeof fm->skipped, "%s: %s", name, status);
        return GV_OK;
    }
    char pw[160];
    snprintf(pw, sizeof pw, "%s.properties", where);
    snprintf(e.precision, sizeof e.precision, "%s", name);
    rc = gv_mma_model_from_props(json_object_get(p, "properties"), e.in, e.compute, e.out, &e.m,
                                 e.assumed, sizeof e.assumed, pw, err);
    if (rc == GV_E_UNSUPPORTED) {
        note(fm->skipped, sizeof fm->skipped, "%s: formats not modelled", name);
        return GV_OK;
    }
    if (rc)
        return rc;
    if (!read_fits(json_object_get(p, "properties"), &e))
        read_orders(json_object_get(p, "properties"), &e);
    if (gv_fpmodel_find(fm, e.in, e.compute, e.out))
        return gv_err_set(err, GV_E_FORMAT, "%s: a second precision %s->%s->%s", where,
                          gv_dtype_name(e.in), gv_dtype_name(e.compute), gv_dtype_name(e.out));
    if (fm->n >= GV_FPMODEL_MAX)
        return gv_err_set(err, GV_E_FORMAT, "%s: more than %d GEMM precisions", where,
                          GV_FPMODEL_MAX);
    fm->e[fm->n++] = e;
    return GV_OK;
}

static int read_route(const json_t *r, const char *where, struct gv_fpmodel *fm,
                      struct gv_err *err)
{
    char status[24];
    int rc = get_text(r, "route", fm->route, sizeof fm->route, where, err);
    if (!rc)
        rc = get_text(r, "status", status, sizeof status, where, err);
    if (rc)
        return rc;
    const json_t *ps = json_object_get(r, "precisions");
    if (!json_is_array(ps))
        return gv_err_set(err, GV_E_FORMAT, "%s.precisions: missing or not an array", where);
    if (json_array_size(ps) > MAX_PRECS)
        return gv_err_set(err, GV_E_FORMAT, "%s.precisions: more than %d entries", where,
                          MAX_PRECS);
    fm->n = 0;
    fm->skipped[0] = 0;
    for (size_t i = 0; i < json_array_size(ps) && !rc; i++) {
        char pw[128];
        snprintf(pw, sizeof pw, "%s.precisions[%zu]", where, i);
        rc = read_precision(json_array_get(ps, i), pw, fm, err);
    }
    return rc;
}

static int read_doc(const json_t *doc, const char *what, const char *route,
                    struct gv_fpmodel *fm, struct gv_err *err)
{
    int rc = gv_json_check_schema(doc, FP_SCHEMA, FP_SCHEMA_VERSION, what, err);
    if (rc)
        return rc;
    char where[300];
    snprintf(where, sizeof where, "%s", what);
    if ((rc = get_text(doc, "device_spec", fm->device_spec, sizeof fm->device_spec, where, err)))
        return rc;
    const char *dn = gv_json_path_str(doc, "device.name");
    if (dn && text_ok(dn, sizeof fm->device))
        snprintf(fm->device, sizeof fm->device, "%s", dn);
    const json_t *routes = json_object_get(doc, "routes");
    if (!json_is_array(routes) || json_array_size(routes) > MAX_ROUTES)
        return gv_err_set(err, GV_E_FORMAT, "%s: routes: missing, not an array or more than %d",
                          what, MAX_ROUTES);
    for (size_t i = 0; i < json_array_size(routes); i++) {
        const json_t *r = json_array_get(routes, i);
        snprintf(where, sizeof where, "%s: routes[%zu]", what, i);
        if (!json_is_object(r))
            return gv_err_set(err, GV_E_FORMAT, "%s: not an object", where);
        const char *name = json_string_value(json_object_get(r, "route"));
        if (route && (!name || strcmp(name, route)))
            continue;
        if ((rc = read_route(r, where, fm, err)))
            return rc;
        if (fm->n || route)
            break;
    }
    if (fm->n)
        return GV_OK;
    if (route)
        return gv_err_set(err, GV_E_NOTFOUND, "%s: route \"%s\" %s", what, route,
                          fm->route[0] ? "has no probed GEMM precision the model covers"
                                       : "is not in the fingerprint");
    return gv_err_set(err, GV_E_NOTFOUND, "%s: no route has a probed GEMM precision", what);
}

int gv_fpmodel_parse(const char *data, size_t len, const char *what, const char *route,
                     struct gv_fpmodel *fm, struct gv_err *err)
{
    memset(fm, 0, sizeof *fm);
    if (len > GV_FPMODEL_MAX_BYTES)
        return gv_err_set(err, GV_E_FORMAT, "%s: larger than %zu bytes", what,
                          GV_FPMODEL_MAX_BYTES);
    json_error_t je;
    json_t *doc;
    int rc = gv_json_parse(data, len, what, &doc, &je, err);
    if (rc == GV_E_NOMEM)
        return rc;
    if (!doc)
        return gv_err_set(err, GV_E_FORMAT, "%s: not JSON: %s (line %d, column %d)", what, je.text,
                          je.line, je.column);
    rc = read_doc(doc, what, route, fm, err);
    json_decref(doc);
    if (!rc)
        gv_sha256_buf_hex(data, len, fm->sha256);
    return rc;
}

int gv_fpmodel_load(const char *path, const char *route, struct gv_fpmodel *fm,
                    struct gv_err *err)
{
    char *data;
    size_t len;
    memset(fm, 0, sizeof *fm);
    int rc = gv_read_file(path, GV_FPMODEL_MAX_BYTES, &data, &len, err);
    if (rc)
        return rc;
    rc = gv_fpmodel_parse(data, len, path, route, fm, err);
    free(data);
    return rc;
}

const struct gv_fpmodel_entry *gv_fpmodel_find(const struct gv_fpmodel *fm, enum gv_dtype in,
                                               enum gv_dtype compute, enum gv_dtype out)
{
    for (size_t i = 0; i < fm->n; i++)
        if (fm->e[i].in == in && fm->e[i].compute == compute && fm->e[i].out == out)
            return &fm->e[i];
    return NULL;
}

/* ---------- descriptions ---------- */

json_t *gv_mma_model_json(const struct gv_mma_model *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "in", json_string(gv_dtype_name(m->in)));
    json_object_set_new(o, "in_frac_bits", json_integer(m->in_frac_bits));
    json_object_set_new(o, "in_round", json_string(gv_mma_round_name(m->in_round)));
    json_object_set_new(o, "in_subnormals", json_string(m->in_flush ? "flushed" : "kept"));
    json_object_set_new(o, "block", json_integer(m->block));
    json_object_set_new(o, "chunk", json_integer(m->chunk));
    json_object_set_new(o, "chunk_round", json_string(gv_mma_round_name(m->chunk_round)));
    json_object_set_new(o, "tile", json_integer(m->tile));
    json_object_set_new(o, "chunk_promote", json_boolean(m->chunk_promote));
    json_object_set_new(o, "extra_bits", json_integer(m->extra_bits));
    json_object_set_new(o, "align", json_string(m->align_nominal ? "exponent sum" : "leading bit"));
    json_object_set_new(o, "products", json_string(m->prod_round ? "rounded" : "exact"));
    json_object_set_new(o, "acc", json_string(gv_dtype_name(m->acc)));
    json_object_set_new(o, "acc_frac_bits", json_integer(m->acc_frac_bits));
    json_object_set_new(o, "acc_round", json_string(gv_mma_round_name(m->acc_round)));
    json_object_set_new(o, "acc_subnormals", json_string(m->acc_flush ? "flushed" : "kept"));
    json_object_set_new(o, "out", json_string(gv_dtype_name(m->out)));
    json_object_set_new(o, "out_round", json_string(gv_mma_round_name(m->out_round)));
    json_object_set_new(o, "out_subnormals", json_string(m->out_flush ? "flushed" : "kept"));
    return o;
}

/* "a; b; c" as ["a", "b", "c"]. */
static json_t *notes_json(const char *notes)
{
    json_t *a = json_array();
    for (const char *p = notes; *p;) {
        const char *end = strstr(p, "; ");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p += n + (end ? 2 : 0);
    }
    return a;
}

json_t *gv_fpmodel_json(const struct gv_fpmodel *fm, const char *file)
{
    json_t *o = json_object();
    gv_json_set_str(o, "file", file);
    json_object_set_new(o, "sha256", json_string(fm->sha256));
    json_object_set_new(o, "route", json_string(fm->route));
    json_object_set_new(o, "device_spec", json_string(fm->device_spec));
    json_object_set_new(o, "device", json_string(fm->device));
    json_t *ms = json_array();
    for (size_t i = 0; i < fm->n; i++) {
        const struct gv_fpmodel_entry *e = &fm->e[i];
        json_t *x = json_object();
        json_object_set_new(x, "precision", json_string(e->precision));
        json_object_set_new(x, "compute", json_string(gv_dtype_name(e->compute)));
        json_object_set_new(x, "parameters", gv_mma_model_json(&e->m));
        json_t *by = json_array();
        for (int j = 0; j < e->nbyk; j++) {
            json_t *bk = json_object();
            json_object_set_new(bk, "k", json_integer(e->byk[j].k));
            char st[128];
            gv_mma_structure_str(&e->byk[j].m, st, sizeof st);
            json_object_set_new(bk, "structure", json_string(st));
            json_object_set_new(bk, "block", json_integer(e->byk[j].m.block));
            json_object_set_new(bk, "chunk", json_integer(e->byk[j].m.chunk));
            json_object_set_new(bk, "extra_bits", json_integer(e->byk[j].m.extra_bits));
            json_array_append_new(by, bk);
        }
        json_object_set_new(x, "by_k", by);
        json_object_set_new(x, "assumptions", notes_json(e->assumed));
        json_array_append_new(ms, x);
    }
    json_object_set_new(o, "models", ms);
    json_object_set_new(o, "not_modelled", notes_json(fm->skipped));
    return o;
}
